// Package wire is the HTTP/1 wire shim in front of vulnd's API server: a
// listener whose connections rewrite the request line of a request that
// net/http would refuse before any handler runs (with its own text/plain
// 400), or that is too long to hold back, to one of a few marker targets.
// The handler behind it answers each marker with its own JSON error, so
// every answer the API gives is the API's.
//
// Its API is NewListener, the marker targets, and the limits MaxPath and
// MaxQuery that decide between a length marker and the others. The
// package knows HTTP/1.x request lines and headers only; it knows nothing
// of the API's routes or bodies.
package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// The marker targets: the request-targets that NewListener's connections
// put in place of a target net/http would refuse (with a text/plain 400,
// before any handler runs) or that is too long to hold back. The handler
// is to answer each with its JSON error instead:
//
//   - BadEscapeTarget: the path is not valid percent-encoding, or holds a
//     control byte or a space (400);
//   - BadQueryTarget: the query holds a control byte or a space (400);
//   - PathTooLongTarget: the path is longer than MaxPath (414);
//   - QueryTooLongTarget: the query is longer than MaxQuery (414).
const (
	BadEscapeTarget    = "/.bad-escape"
	BadQueryTarget     = "/.bad-query"
	PathTooLongTarget  = "/.path-too-long"
	QueryTooLongTarget = "/.query-too-long"
)

// MaxPath and MaxQuery are the longest escaped path and raw query (the part
// after "?") that the handler behind NewListener serves; it answers longer
// ones with 414. NewListener's connections replace a target that is too
// long by these limits with PathTooLongTarget or QueryTooLongTarget, the
// path checked first, as the handler checks it first.
const (
	MaxPath  = 2048
	MaxQuery = 4096
)

// maxRequestLine is the longest request line, terminator included, that a
// connection holds back to inspect. Of a longer line only the first
// maxRequestLine bytes are held; see NewListener.
const maxRequestLine = 8 << 10

// escapeReadSize is the size of a connection's read buffer while it is
// inspecting a request line or headers.
const escapeReadSize = 4 << 10

// NewListener returns a listener whose connections rewrite two kinds of
// HTTP/1.x request line, so that the handler, not net/http, answers them.
// Method and version always stay; only the request-target changes.
//
//   - A line that net/http would refuse for its target: the path (the part
//     before any "?") holds a "%" not followed by two hex digits, or the
//     path or query holds a control byte, or the target holds a space (the
//     target is taken to run from the first space to the last one, and the
//     version after it must be HTTP/1.x). The target becomes
//     BadEscapeTarget (path) or BadQueryTarget (query); but when the path
//     is longer than MaxPath bytes or the query longer than MaxQuery, it
//     becomes PathTooLongTarget or QueryTooLongTarget, as the handler's
//     length checks come first.
//   - A line longer than 8 KiB whose first 8 KiB hold a token method (not
//     CONNECT) and a target whose path or query is already too long: the
//     target becomes PathTooLongTarget or QueryTooLongTarget. The rest of
//     the target is read and dropped, never held, so memory stays bounded
//     whatever the length. If the line does not end in a space and an
//     HTTP/1.x version, it is passed on as method and marker alone, which
//     net/http refuses.
//
// Nothing else is changed: headers, bodies and every other byte reach
// net/http as sent.
//
// A connection follows the requests it carries (keep-alive and pipelining)
// through their request lines and headers. Once it sees anything it does not
// follow for certain — a request with a body (Content-Length other than 0, or
// Transfer-Encoding), an Upgrade header, CONNECT, a folded header line, any
// other request line over 8 KiB, or bytes that are not HTTP/1.x — it passes
// everything through unchanged for the rest of its life.
//
// The listener is for cleartext HTTP/1.x. Close reaches the accepted
// connection; CloseWrite does too when the accepted connection has it (as
// *net.TCPConn does), so net/http can still close gracefully. Deadlines
// are coarse (see SweepPeriod): a deadline at least SweepPeriod ahead is
// only noted, and the listener's sweeper sets it on the accepted
// connection once it has passed, at most SweepPeriod late; a zero deadline
// cancels it, and a deadline that has passed or is nearer is set on the
// connection at once, so an aborted read ends at once. net/http moves a
// connection's read and write deadlines several times a request, and each
// move of a real one re-arms a runtime timer. The listener is safe for
// concurrent use as l is; each connection is read by one goroutine at a
// time, as net/http reads it.
func NewListener(l net.Listener) net.Listener {
	return &escapeListener{Listener: l, sw: &sweeper{conns: map[*escapeConn]struct{}{}}}
}

// SweepPeriod is how often a listener made by NewListener looks for
// deadlines of its connections that have passed: a deadline that far
// ahead or farther takes effect up to SweepPeriod after it passes.
const SweepPeriod = 250 * time.Millisecond

type escapeListener struct {
	net.Listener
	sw *sweeper
}

// closeWriter is the half-close net/http uses before closing a connection
// after an error response.
type closeWriter interface {
	CloseWrite() error
}

// Accept waits for the next connection and wraps it.
func (l *escapeListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	ec := &escapeConn{Conn: c, r: lineRewriter{src: c}, sw: l.sw}
	l.sw.add(ec)
	if cw, ok := c.(closeWriter); ok {
		return &escapeCloseWriteConn{ec, cw}, nil
	}
	return ec, nil
}

// escapeConn is an accepted connection whose reads go through a
// lineRewriter and whose deadlines are coarse. Everything else is the
// connection's own.
type escapeConn struct {
	net.Conn
	r      lineRewriter
	sw     *sweeper
	rd, wd deadline // the read and write deadlines
}

// Close closes the connection; its deadlines are no longer swept.
func (c *escapeConn) Close() error {
	c.sw.remove(c)
	return c.Conn.Close()
}

// SetDeadline sets the read and write deadlines, coarsely (see
// NewListener).
func (c *escapeConn) SetDeadline(t time.Time) error {
	err := c.SetReadDeadline(t)
	if werr := c.SetWriteDeadline(t); err == nil {
		err = werr
	}
	return err
}

// SetReadDeadline sets the read deadline, coarsely (see NewListener).
func (c *escapeConn) SetReadDeadline(t time.Time) error {
	return c.rd.set(t, c.sw.now.Load(), c.Conn.SetReadDeadline)
}

// SetWriteDeadline sets the write deadline, coarsely (see NewListener).
func (c *escapeConn) SetWriteDeadline(t time.Time) error {
	return c.wd.set(t, c.sw.now.Load(), c.Conn.SetWriteDeadline)
}

// deadline is one of an escapeConn's deadlines: the one asked for, and
// whether the connection's own deadline is set.
//
// The connection's own deadline is changed only with mu held. A setter
// that only notes a far deadline (want) reads applied after storing want,
// and a sweep sets applied before reading want: one of them sees the
// other's store, so a sweep never sets a deadline that a setter has
// moved unseen (it sees the new one), or else the setter sees applied and
// clears what the sweep set.
type deadline struct {
	mu      sync.Mutex
	want    atomic.Int64 // Unix nanoseconds; 0: none
	applied atomic.Bool  // the connection's own deadline may be set
}

// set asks for the deadline t, now being the sweeper's clock; apply sets
// the connection's own.
func (d *deadline) set(t time.Time, now int64, apply func(time.Time) error) error {
	n := unixNano(t)
	if n != 0 && n-now < int64(SweepPeriod) {
		// Passed, or too near for a sweep: set it at once, exactly.
		d.mu.Lock()
		defer d.mu.Unlock()
		d.want.Store(n)
		d.applied.Store(true)
		return apply(t)
	}
	d.want.Store(n)
	if !d.applied.Load() {
		return nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.applied.Load() {
		return nil
	}
	if w := d.want.Load(); w != 0 && w-now < int64(SweepPeriod) {
		return nil // a nearer one came meanwhile, and was set
	}
	d.applied.Store(false)
	return apply(time.Time{})
}

// sweep sets the connection's own deadline to the one asked for if that
// has passed by now and is not set yet.
func (d *deadline) sweep(now int64, apply func(time.Time) error) {
	if w := d.want.Load(); w == 0 || w > now || d.applied.Load() {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.applied.Store(true)
	if w := d.want.Load(); w != 0 && w <= now {
		apply(time.Unix(0, w))
		return
	}
	d.applied.Store(false)
}

// unixNano is t in Unix nanoseconds, 0 for the zero time; times beyond
// int64's range are clamped to it, and others not after 1970 are 1: all
// past.
func unixNano(t time.Time) int64 {
	switch {
	case t.IsZero():
		return 0
	case t.Unix() <= 0:
		return 1
	case t.Unix() >= math.MaxInt64/int64(time.Second):
		return math.MaxInt64
	}
	return t.UnixNano()
}

// sweeper applies the deadlines of a listener's connections that have
// passed, every SweepPeriod, from a goroutine that runs while the
// listener has connections open.
type sweeper struct {
	now     atomic.Int64 // Unix nanoseconds at the last sweep: the clock setters go by
	mu      sync.Mutex
	conns   map[*escapeConn]struct{}
	running bool
}

// add starts sweeping c's deadlines.
func (s *sweeper) add(c *escapeConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conns[c] = struct{}{}
	if !s.running {
		s.running = true
		s.now.Store(time.Now().UnixNano())
		go s.run()
	}
}

// remove stops sweeping c's deadlines.
func (s *sweeper) remove(c *escapeConn) {
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// run sweeps every SweepPeriod until there is no connection left.
func (s *sweeper) run() {
	t := time.NewTicker(SweepPeriod)
	defer t.Stop()
	var conns []*escapeConn
	for range t.C {
		now := time.Now().UnixNano()
		s.now.Store(now)
		s.mu.Lock()
		if len(s.conns) == 0 {
			s.running = false
			s.mu.Unlock()
			return
		}
		conns = conns[:0]
		for c := range s.conns {
			conns = append(conns, c)
		}
		s.mu.Unlock()
		for i, c := range conns {
			c.rd.sweep(now, c.Conn.SetReadDeadline)
			c.wd.sweep(now, c.Conn.SetWriteDeadline)
			conns[i] = nil
		}
	}
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
	stLong             // inside an overlong request line, dropping its target
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

	// In stLong, rw holds the method, a space and the marker, and these
	// follow what comes after the line's last space (its version).
	sawSpace bool                    // a space since the target began
	proto    [len("HTTP/1.1\r")]byte // the bytes after the last space
	protoLen int                     // their number; > len(proto): too many
}

// Read implements io.Reader.
func (r *lineRewriter) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	// n bytes of p are filled: it takes what r.in holds (a request line
	// and its headers, as one read from src brings them) before Read
	// returns, so net/http reads a request in one call, but src is read
	// only when nothing is filled.
	n := 0
	for {
		if len(r.out) > 0 {
			m := copy(p[n:], r.out)
			r.out = r.out[m:]
			if n += m; n == len(p) {
				return n, nil
			}
			continue
		}
		if len(r.in) > 0 {
			r.step()
			continue
		}
		if n > 0 {
			return n, nil
		}
		if r.err != nil {
			err := r.err
			if !isTimeout(err) {
				// The stream is over: a request line held back can
				// never end, so hand it on as it is (an overlong one
				// as far as it was rewritten).
				held := r.line
				if r.state == stLong {
					held = r.rw
				}
				r.state = stPass
				if len(held) > 0 {
					r.out, r.line = held, r.line[:0]
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
	case stLong:
		r.stepLong()
	default:
		r.out, r.in = r.in, nil
	}
}

// stepLine takes in the request line, or as much of it as has arrived. A
// line longer than maxRequestLine (terminator included) goes to overlong
// with exactly its first maxRequestLine bytes held.
func (r *lineRewriter) stepLine() {
	n := len(r.in) // bytes of r.in that belong to the line
	i := bytes.IndexByte(r.in, '\n')
	if i >= 0 {
		n = i + 1
	}
	if len(r.line)+n > maxRequestLine {
		k := maxRequestLine - len(r.line)
		r.line = append(r.line, r.in[:k]...)
		r.in = r.in[k:]
		r.overlong()
		return
	}
	if i < 0 {
		if r.line == nil {
			r.line = make([]byte, 0, 512)
		}
		r.line = append(r.line, r.in...)
		r.in = nil
		return
	}
	full := r.in[:n]
	if len(r.line) > 0 {
		r.line = append(r.line, full...)
		full = r.line
	}
	r.in = r.in[n:]
	r.line = r.line[:0] // full may still alias it; nothing appends before it is returned
	r.out = r.requestLine(full)
}

// overlong handles a request line longer than maxRequestLine, of which
// r.line holds the first maxRequestLine bytes (no LF among them). If they
// show a token method other than CONNECT and a target whose path or query
// is already too long, the line is rewritten: r.rw starts as method and
// marker, and the rest of the target is dropped in stLong. Otherwise the
// bytes are passed on, and the connection with them.
func (r *lineRewriter) overlong() {
	p := r.line
	r.line = r.line[:0] // p may still alias it; nothing appends before it is returned
	sp := bytes.IndexByte(p, ' ')
	marker := ""
	if sp > 0 && isToken(p[:sp]) && string(p[:sp]) != "CONNECT" {
		marker = lengthMarker(p[sp+1:])
	}
	if marker == "" {
		r.out, r.state = p, stPass
		return
	}
	rw := append(r.rw[:0], p[:sp+1]...)
	r.rw = append(rw, marker...)
	r.state, r.sawSpace, r.protoLen = stLong, false, 0
	r.longBytes(p[sp+1:])
	r.rewritten++
}

// stepLong drops the bytes of an overlong request line up to its LF, noting
// what follows the last space, then ends the line.
func (r *lineRewriter) stepLong() {
	i := bytes.IndexByte(r.in, '\n')
	if i < 0 {
		r.longBytes(r.in)
		r.in = nil
		return
	}
	r.longBytes(r.in[:i])
	r.in = r.in[i+1:]
	r.endLong()
}

// longBytes notes b, the next bytes of an overlong line (no LF among them):
// only what follows the last space so far is kept, and only up to
// len(r.proto) bytes of it.
func (r *lineRewriter) longBytes(b []byte) {
	if j := bytes.LastIndexByte(b, ' '); j >= 0 {
		r.sawSpace, r.protoLen, b = true, 0, b[j+1:]
	}
	if !r.sawSpace {
		return
	}
	if r.protoLen < len(r.proto) {
		copy(r.proto[r.protoLen:], b)
	}
	r.protoLen = min(r.protoLen+len(b), len(r.proto)+1)
}

// endLong passes on the rewritten overlong line. If it ended in a space and
// an HTTP/1.x version, that version and the line's own terminator follow
// the marker and the header section is followed as usual. Otherwise the
// line is method and marker alone, which net/http refuses, and the
// connection is passed through.
func (r *lineRewriter) endLong() {
	v, end := r.proto[:min(r.protoLen, len(r.proto))], "\n"
	if len(v) > 0 && v[len(v)-1] == '\r' {
		v, end = v[:len(v)-1], "\r\n"
	}
	if r.sawSpace && r.protoLen <= len(r.proto) && isHTTP1(v) {
		rw := append(r.rw, ' ')
		rw = append(rw, v...)
		r.rw = append(rw, end...)
		r.state, r.hdr, r.passNext = stHeaders, hdrStart, false
	} else {
		r.rw = append(r.rw, "\r\n"...)
		r.state = stPass
	}
	r.out = r.rw
}

// requestLine returns what to pass on for the request line full (its
// terminator included) and sets the state that follows it. It splits the
// line at its first and last spaces: for a line net/http accepts, those are
// the two spaces it splits at; a line with more spaces, net/http refuses.
func (r *lineRewriter) requestLine(full []byte) []byte {
	content := full[:len(full)-1]
	if len(content) > 0 && content[len(content)-1] == '\r' {
		content = content[:len(content)-1]
	}
	r.state = stPass
	sp1 := bytes.IndexByte(content, ' ')
	sp2 := bytes.LastIndexByte(content, ' ')
	if sp1 < 0 || sp2 == sp1 {
		return full
	}
	method, target, proto := content[:sp1], content[sp1+1:sp2], content[sp2+1:]
	if !isHTTP1(proto) || !isToken(method) || string(method) == "CONNECT" {
		return full
	}
	r.state, r.hdr, r.passNext = stHeaders, hdrStart, false
	marker := targetMarker(target)
	if marker == "" {
		return full
	}
	rw := append(r.rw[:0], method...)
	rw = append(rw, ' ')
	rw = append(rw, marker...)
	rw = append(rw, ' ')
	rw = append(rw, proto...)
	rw = append(rw, full[len(content):]...)
	r.rw = rw
	r.rewritten++
	return rw
}

// targetMarker returns the marker target for a request-target that net/http
// would refuse: its path is not valid percent-encoding, or its path or query
// holds a byte that must be escaped (a control byte or a space). The first
// of the handler's checks that fails picks the marker. It returns "" for a
// target net/http accepts.
func targetMarker(target []byte) string {
	path, query := splitTarget(target)
	pathOK := plainEscapes(path)
	if pathOK && plainBytes(query) {
		return ""
	}
	if m := lengthMarker(target); m != "" {
		return m
	}
	if !pathOK {
		return BadEscapeTarget
	}
	return BadQueryTarget
}

// lengthMarker returns the marker target for a request-target (or the start
// of one) whose path or query is longer than the handler serves, or "".
func lengthMarker(target []byte) string {
	path, query := splitTarget(target)
	switch {
	case len(path) > MaxPath:
		return PathTooLongTarget
	case len(query) > MaxQuery:
		return QueryTooLongTarget
	}
	return ""
}

// splitTarget splits a request-target at its first "?".
func splitTarget(target []byte) (path, query []byte) {
	if q := bytes.IndexByte(target, '?'); q >= 0 {
		return target[:q], target[q+1:]
	}
	return target, nil
}

// ValidEscapes reports whether every % in s starts a two-hex-digit escape:
// the rule the listener marks a request line by and httpapi checks a
// path and a query by.
func ValidEscapes[T string | []byte](s T) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' {
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return false
			}
			i += 2
		}
	}
	return true
}

// plainEscapes is ValidEscapes(path) && plainBytes(path) in one pass,
// eight bytes at a time where none of them needs a look.
func plainEscapes(path []byte) bool {
	for i := 0; i < len(path); i++ {
		for i+8 <= len(path) && !special8(binary.LittleEndian.Uint64(path[i:])) {
			i += 8
		}
		if i == len(path) {
			break
		}
		switch c := path[i]; {
		case c <= ' ' || c == 0x7f:
			return false
		case c == '%':
			if i+2 >= len(path) || !isHex(path[i+1]) || !isHex(path[i+2]) {
				return false
			}
			i += 2
		}
	}
	return true
}

// special8 reports whether one of the eight bytes in x is a control byte,
// a space, DEL or "%" (the bytes plainEscapes and plainBytes look at; it
// may say so of "%" to plainBytes, which then looks byte by byte). The
// tests are the exact ones of "Bit Twiddling Hacks": a byte below 0x21,
// and a byte equal to 0x7f or 0x25.
func special8(x uint64) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	hasZero := func(v uint64) uint64 { return (v - ones) & ^v & highs }
	below := (x - 0x21*ones) & ^x & highs
	return below|hasZero(x^(0x7f*ones))|hasZero(x^('%'*ones)) != 0
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// plainBytes reports whether b holds no control byte and no space: net/http
// refuses a request-target holding a control byte, and a space ends it.
func plainBytes(b []byte) bool {
	for len(b) >= 8 && !special8(binary.LittleEndian.Uint64(b)) {
		b = b[8:]
	}
	for _, c := range b {
		if c <= ' ' || c == 0x7f {
			return false
		}
	}
	return true
}

// stepHeaders passes on header bytes up to and including the end of the
// header section or of r.in, noting whether the request has a body.
func (r *lineRewriter) stepHeaders() {
	in := r.in
	i := 0
	// Whole lines, as a read from src mostly brings them, are taken a
	// line at a time; a line cut by the end of r.in goes byte by byte
	// below, which follows it across reads. Both note the same things.
	for r.hdr == hdrStart && i < len(in) {
		j := bytes.IndexByte(in[i:], '\n')
		if j < 0 {
			break
		}
		line := in[i : i+j]
		switch {
		case j == 0 || j == 1 && line[0] == '\r':
			r.endHeaders(i + j + 1)
			return
		case line[0] == ' ' || line[0] == '\t':
			r.passNext = true // a folded line
		case line[0] != '\r': // a line of a CR and more is malformed: net/http rejects it
			r.headerLine(line)
		}
		i += j + 1
	}
	for ; i < len(in); i++ {
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

// headerLine notes a whole header line (without its LF) that starts with
// a field name, as stepHeaders does byte by byte: the field name runs to
// the first colon (a line without one is malformed: nothing to note).
func (r *lineRewriter) headerLine(line []byte) {
	c := bytes.IndexByte(line, ':')
	if c < 0 {
		return
	}
	switch name := line[:c]; {
	case equalLower(name, "content-length"):
		for _, b := range line[c+1:] {
			if b != ' ' && b != '\t' && b != '\r' && b != '0' {
				r.passNext = true // a body, or a length net/http rejects
				return
			}
		}
	case equalLower(name, "transfer-encoding"), equalLower(name, "upgrade"):
		r.passNext = true
	}
}

// equalLower reports whether b, with A-Z lowered, is lower.
func equalLower(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
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
