package httpapi

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
)

// badEscapeTarget is the request-target that NewListener's connections put
// in place of a target whose path is not valid percent-encoding. net/http
// would reject the original request line itself (with a text/plain 400,
// before any handler runs); the handler answers this path with the JSON 400
// instead.
const badEscapeTarget = "/.bad-escape"

// maxRequestLine is the longest request line, terminator included, that a
// connection holds back to inspect. A longer line is passed on unchanged and
// the connection is left alone from then on.
const maxRequestLine = 8 << 10

// escapeReadSize is the size of a connection's read buffer while it is
// inspecting a request line or headers.
const escapeReadSize = 4 << 10

// NewListener returns a listener whose connections rewrite the request line
// of an HTTP/1.x request whose request-target path (the part before any
// "?") holds a "%" not followed by two hex digits: the target becomes
// "/.bad-escape", method and version stay. Nothing else is changed: headers,
// bodies and every other byte reach net/http as sent.
//
// A connection follows the requests it carries (keep-alive and pipelining)
// through their request lines and headers. Once it sees anything it does not
// follow for certain — a request with a body (Content-Length other than 0, or
// Transfer-Encoding), an Upgrade header, CONNECT, a folded header line, a
// request line over 8 KiB, or bytes that are not HTTP/1.x — it passes
// everything through unchanged for the rest of its life.
//
// The listener is for cleartext HTTP/1.x. Deadlines and Close reach the
// accepted connection; CloseWrite does too when the accepted connection has
// it (as *net.TCPConn does), so net/http can still close gracefully.
func NewListener(l net.Listener) net.Listener {
	return escapeListener{l}
}

type escapeListener struct {
	net.Listener
}

// closeWriter is the half-close net/http uses before closing a connection
// after an error response.
type closeWriter interface {
	CloseWrite() error
}

// Accept waits for the next connection and wraps it.
func (l escapeListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	ec := &escapeConn{Conn: c, r: lineRewriter{src: c}}
	if cw, ok := c.(closeWriter); ok {
		return &escapeCloseWriteConn{ec, cw}, nil
	}
	return ec, nil
}

// escapeConn is an accepted connection whose reads go through a
// lineRewriter. Everything else is the connection's own.
type escapeConn struct {
	net.Conn
	r lineRewriter
}

// Read reads from the connection, rewriting request lines as NewListener
// describes.
func (c *escapeConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// escapeCloseWriteConn is an escapeConn whose connection can half-close.
type escapeCloseWriteConn struct {
	*escapeConn
	cw closeWriter
}

// CloseWrite shuts down the writing side of the connection.
func (c *escapeCloseWriteConn) CloseWrite() error { return c.cw.CloseWrite() }

// Where a lineRewriter is in its stream.
const (
	stLineStart = iota // before a request line; CR and LF pass
	stLine             // inside a request line, holding it back
	stHeaders          // inside a header section
	stPass             // passing everything through, for good
)

// Where a lineRewriter is in a header line.
const (
	hdrStart   = iota // at the start of a line
	hdrCR             // after a CR at the start of a line
	hdrName           // in the field name
	hdrCLValue        // in a Content-Length value, all zeros so far
	hdrSkip           // in the rest of a line that does not matter
)

// hdrNameMax is the longest field name a lineRewriter looks at
// (len("transfer-encoding")); longer names are not interesting.
const hdrNameMax = 17

// lineRewriter is the reading side of an escapeConn: a reader over src that
// rewrites request lines as NewListener describes. It holds bytes back only
// while it is inside a request line; everything else is passed on as soon
// as it is read, and it reads from src only when it has nothing to return.
// It is not safe for concurrent use (nor is a connection's reading side).
type lineRewriter struct {
	src   io.Reader
	state int

	buf  []byte // read buffer, allocated on first use
	in   []byte // read but not yet looked at; a suffix of buf
	out  []byte // ready to be returned; in buf, line or rw
	line []byte // the start of a request line split across reads
	rw   []byte // a rewritten request line
	err  error  // src's error, returned once in and out are drained

	rewritten int // request lines rewritten so far (for tests)

	hdr      int              // header-line state
	name     [hdrNameMax]byte // lower-cased field name so far
	nameLen  int              // bytes of the name seen; > hdrNameMax: too long
	passNext bool             // pass through once this header section ends
}

// Read implements io.Reader.
func (r *lineRewriter) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		if len(r.out) > 0 {
			n := copy(p, r.out)
			r.out = r.out[n:]
			return n, nil
		}
		if len(r.in) > 0 {
			r.step()
			continue
		}
		if r.err != nil {
			err := r.err
			if !isTimeout(err) {
				// The stream is over: a request line held back can
				// never end, so hand it on as it is.
				r.state = stPass
				if len(r.line) > 0 {
					r.out, r.line = r.line, r.line[:0]
					continue
				}
			}
			// A timeout leaves the state as it is: net/http aborts
			// its background read with a deadline and reads on.
			r.err = nil
			return 0, err
		}
		if r.state == stPass {
			return r.src.Read(p)
		}
		if r.buf == nil {
			r.buf = make([]byte, escapeReadSize)
		}
		n, err := r.src.Read(r.buf)
		if n < 0 || n > len(r.buf) {
			n = 0 // a broken reader; do not panic on it
		}
		r.in = r.buf[:n]
		if err != nil && !(n > 0 && isTimeout(err)) {
			// With data, a timeout is dropped: the next read meets
			// the deadline again if it still holds.
			r.err = err
		}
		if n == 0 && err == nil {
			return 0, nil
		}
	}
}

// isTimeout reports whether err is a deadline's (without allocating, unlike
// errors.As).
func isTimeout(err error) bool {
	if te, ok := err.(interface{ Timeout() bool }); ok {
		return te.Timeout()
	}
	return errors.Is(err, os.ErrDeadlineExceeded)
}

// step moves a prefix of r.in on: to r.out, or into r.line. It is called
// only when r.out is empty and r.in is not.
func (r *lineRewriter) step() {
	switch r.state {
	case stLineStart:
		i := 0
		for i < len(r.in) && (r.in[i] == '\r' || r.in[i] == '\n') {
			i++
		}
		if i > 0 {
			r.out, r.in = r.in[:i], r.in[i:]
			return
		}
		if !isTokenByte(r.in[0]) {
			r.state = stPass // not an HTTP/1.x request line
			return
		}
		r.state = stLine
		r.line = r.line[:0]
	case stLine:
		r.stepLine()
	case stHeaders:
		r.stepHeaders()
	default:
		r.out, r.in = r.in, nil
	}
}

// stepLine takes in the request line, or as much of it as has arrived.
func (r *lineRewriter) stepLine() {
	i := bytes.IndexByte(r.in, '\n')
	if i < 0 {
		if len(r.line)+len(r.in) >= maxRequestLine {
			// Too long to hold back: hand on what we have.
			r.line = append(r.line, r.in...)
			r.out, r.in, r.line = r.line, nil, r.line[:0]
			r.state = stPass
			return
		}
		if r.line == nil {
			r.line = make([]byte, 0, 512)
		}
		r.line = append(r.line, r.in...)
		r.in = nil
		return
	}
	full := r.in[:i+1]
	if len(r.line) > 0 {
		r.line = append(r.line, full...)
		full = r.line
	}
	r.in = r.in[i+1:]
	r.line = r.line[:0] // full may still alias it; nothing appends before it is returned
	if len(full) > maxRequestLine {
		r.out, r.state = full, stPass
		return
	}
	r.out = r.requestLine(full)
}

// requestLine returns what to pass on for the request line full (its
// terminator included) and sets the state that follows it. It splits the
// line the way net/http does.
func (r *lineRewriter) requestLine(full []byte) []byte {
	content := full[:len(full)-1]
	if len(content) > 0 && content[len(content)-1] == '\r' {
		content = content[:len(content)-1]
	}
	r.state = stPass
	sp1 := bytes.IndexByte(content, ' ')
	if sp1 < 0 {
		return full
	}
	method, rest := content[:sp1], content[sp1+1:]
	sp2 := bytes.IndexByte(rest, ' ')
	if sp2 < 0 {
		return full
	}
	target, proto := rest[:sp2], rest[sp2+1:]
	if !isHTTP1(proto) || !isToken(method) || string(method) == "CONNECT" {
		return full
	}
	r.state, r.hdr, r.passNext = stHeaders, hdrStart, false
	path := target
	if q := bytes.IndexByte(target, '?'); q >= 0 {
		path = target[:q]
	}
	if validEscapes(path) {
		return full
	}
	rw := append(r.rw[:0], method...)
	rw = append(rw, ' ')
	rw = append(rw, badEscapeTarget...)
	rw = append(rw, ' ')
	rw = append(rw, proto...)
	rw = append(rw, full[len(content):]...)
	r.rw = rw
	r.rewritten++
	return rw
}

// stepHeaders passes on header bytes up to and including the end of the
// header section or of r.in, noting whether the request has a body.
func (r *lineRewriter) stepHeaders() {
	in := r.in
	for i := 0; i < len(in); i++ {
		c := in[i]
		switch r.hdr {
		case hdrStart:
			switch c {
			case '\n':
				r.endHeaders(i + 1)
				return
			case '\r':
				r.hdr = hdrCR
			case ' ', '\t':
				// A folded line: net/http joins it to the field
				// before; do not try to follow that.
				r.passNext = true
				r.hdr = hdrSkip
			default:
				r.hdr, r.nameLen = hdrName, 0
				r.nameByte(c)
			}
		case hdrCR:
			if c == '\n' {
				r.endHeaders(i + 1)
				return
			}
			r.hdr = hdrSkip // malformed; net/http will reject it
		case hdrName:
			switch c {
			case ':':
				r.hdr = hdrSkip
				if r.nameLen <= hdrNameMax {
					switch string(r.name[:r.nameLen]) {
					case "content-length":
						r.hdr = hdrCLValue
					case "transfer-encoding", "upgrade":
						r.passNext = true
					}
				}
			case '\n':
				r.hdr = hdrStart // malformed; net/http will reject it
			default:
				r.nameByte(c)
			}
		case hdrCLValue:
			switch c {
			case '\n':
				r.hdr = hdrStart
			case ' ', '\t', '\r', '0':
			default:
				r.passNext = true // a body, or a length net/http rejects
				r.hdr = hdrSkip
			}
		default: // hdrSkip
			j := bytes.IndexByte(in[i:], '\n')
			if j < 0 {
				i = len(in)
				break
			}
			i += j
			r.hdr = hdrStart
		}
	}
	r.out, r.in = in, nil
}

// nameByte adds c to the field name being read.
func (r *lineRewriter) nameByte(c byte) {
	if r.nameLen < hdrNameMax {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		r.name[r.nameLen] = c
	}
	if r.nameLen <= hdrNameMax {
		r.nameLen++ // stops at hdrNameMax+1: too long
	}
}

// endHeaders passes on r.in[:n], which ends the header section, and sets
// the state for what follows it.
func (r *lineRewriter) endHeaders(n int) {
	r.out, r.in = r.in[:n], r.in[n:]
	if r.passNext {
		r.state = stPass
	} else {
		r.state = stLineStart
	}
}

// isHTTP1 reports whether net/http reads proto as HTTP/1.x.
func isHTTP1(proto []byte) bool {
	return len(proto) == len("HTTP/1.1") && string(proto[:len("HTTP/1.")]) == "HTTP/1." &&
		'0' <= proto[7] && proto[7] <= '9'
}

// isToken reports whether s is a non-empty RFC 7230 token, as net/http
// requires of a method.
func isToken(s []byte) bool {
	if len(s) == 0 {
		return false
	}
	for _, c := range s {
		if !isTokenByte(c) {
			return false
		}
	}
	return true
}

func isTokenByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}
