package wire

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// listenerServer serves an echo handler through NewListener on a loopback
// port and returns its address. The handler answers with the request-target
// as net/http saw it, its escaped path and the body it read, so a test sees
// exactly what the rewriting did. Handlers whose target holds "sleep" take
// 150 ms, to let a test pipeline into a running handler.
func listenerServer(t *testing.T, configure func(*http.Server)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(r.RequestURI, "sleep") {
			time.Sleep(150 * time.Millisecond)
		}
		w.Header().Set("Content-Type", "text/echo")
		io.WriteString(w, r.Method+" uri="+r.RequestURI+" path="+r.URL.EscapedPath()+" body="+string(body))
	})}
	if configure != nil {
		configure(srv)
	}
	go srv.Serve(NewListener(l))
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String()
}

// rawConn dials addr with a deadline that keeps a broken test from hanging.
func rawConn(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(20 * time.Second))
	return c, bufio.NewReader(c)
}

type echoed struct {
	status int
	ctype  string
	body   string
}

func readEcho(t *testing.T, br *bufio.Reader) echoed {
	t.Helper()
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("read response: %v", err)
	}
	b, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return echoed{res.StatusCode, res.Header.Get("Content-Type"), string(b)}
}

// wantEcho checks a 200 from the echo handler with the given text.
func wantEcho(t *testing.T, got echoed, want string) {
	t.Helper()
	if got.status != 200 || got.ctype != "text/echo" || got.body != want {
		t.Fatalf("got %d %q %q, want 200 echo %q", got.status, got.ctype, got.body, want)
	}
}

func get(target string) string {
	return "GET " + target + " HTTP/1.1\r\nHost: x\r\nUser-Agent: t\r\n\r\n"
}

func TestListenerRewritesOnlyBadPathEscapes(t *testing.T) {
	addr := listenerServer(t, nil)
	for _, tc := range []struct{ target, want string }{
		{"/cve/CVE-2023-0001", "GET uri=/cve/CVE-2023-0001 path=/cve/CVE-2023-0001 body="},
		{"/cve/%ZZ", "GET uri=/.bad-escape path=/.bad-escape body="},
		{"/cve/%2", "GET uri=/.bad-escape path=/.bad-escape body="},
		{"/cve/%", "GET uri=/.bad-escape path=/.bad-escape body="},
		{"/cve/%zz", "GET uri=/.bad-escape path=/.bad-escape body="},
		{"/cve/%ZZ?page=2", "GET uri=/.bad-escape path=/.bad-escape body="},
		{"/vendors/a%2Fb/products/x%2by", "GET uri=/vendors/a%2Fb/products/x%2by path=/vendors/a%2Fb/products/x%2by body="},
		{"/cve?x=%ZZ", "GET uri=/cve?x=%ZZ path=/cve body="},
		{"/cve?x=%ZZ&y=%", "GET uri=/cve?x=%ZZ&y=% path=/cve body="},
		{"/cve?", "GET uri=/cve? path=/cve body="},
	} {
		t.Run(tc.target, func(t *testing.T) {
			c, br := rawConn(t, addr)
			if _, err := io.WriteString(c, get(tc.target)); err != nil {
				t.Fatal(err)
			}
			wantEcho(t, readEcho(t, br), tc.want)
		})
	}
}

func TestListenerKeepsMethodAndVersion(t *testing.T) {
	addr := listenerServer(t, nil)
	c, br := rawConn(t, addr)
	// HEAD, HTTP/1.0 with keep-alive, bare LF line ends.
	io.WriteString(c, "HEAD /a%G0 HTTP/1.0\nConnection: keep-alive\n\n")
	res, err := http.ReadResponse(br, &http.Request{Method: "HEAD"})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 || res.ProtoMinor != 0 {
		t.Fatalf("HEAD: %d %s", res.StatusCode, res.Proto)
	}
	io.WriteString(c, "OPTIONS /a%G0 HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
	wantEcho(t, readEcho(t, br), "OPTIONS uri=/.bad-escape path=/.bad-escape body=")
}

func TestListenerPipelined(t *testing.T) {
	stream := get("/one") + get("/two/%ZZ") + get("/three%2F")
	want := []string{
		"GET uri=/one path=/one body=",
		"GET uri=/.bad-escape path=/.bad-escape body=",
		"GET uri=/three%2F path=/three%2F body=",
	}
	addr := listenerServer(t, nil)
	t.Run("one write", func(t *testing.T) {
		c, br := rawConn(t, addr)
		io.WriteString(c, stream)
		for _, w := range want {
			wantEcho(t, readEcho(t, br), w)
		}
	})
	t.Run("byte by byte", func(t *testing.T) {
		c, br := rawConn(t, addr)
		go func() {
			for i := 0; i < len(stream); i++ {
				if _, err := c.Write([]byte{stream[i]}); err != nil {
					return
				}
				time.Sleep(200 * time.Microsecond)
			}
		}()
		for _, w := range want {
			wantEcho(t, readEcho(t, br), w)
		}
	})
	t.Run("into a running handler", func(t *testing.T) {
		// The second request line arrives in two parts while the first
		// handler runs, so net/http's background read meets it and is
		// then aborted by a deadline: the held-back part must survive.
		c, br := rawConn(t, addr)
		io.WriteString(c, get("/sleep")+"GET /cve/%Z")
		time.Sleep(50 * time.Millisecond)
		io.WriteString(c, "Z")
		time.Sleep(250 * time.Millisecond)
		io.WriteString(c, " HTTP/1.1\r\nHost: x\r\n\r\n")
		wantEcho(t, readEcho(t, br), "GET uri=/sleep path=/sleep body=")
		wantEcho(t, readEcho(t, br), "GET uri=/.bad-escape path=/.bad-escape body=")
	})
}

func TestListenerBodies(t *testing.T) {
	addr := listenerServer(t, nil)
	fake := "GET /%ZZ HTTP/1.1\r\nHost: x\r\n\r\n"
	t.Run("content-length", func(t *testing.T) {
		c, br := rawConn(t, addr)
		io.WriteString(c, "POST /p HTTP/1.1\r\nHost: x\r\ncontent-LENGTH: "+strconv.Itoa(len(fake))+"\r\n\r\n"+fake+get("/next%2F"))
		wantEcho(t, readEcho(t, br), "POST uri=/p path=/p body="+fake)
		wantEcho(t, readEcho(t, br), "GET uri=/next%2F path=/next%2F body=")
		// After a body the connection is passed through: net/http
		// rejects a bad escape itself.
		io.WriteString(c, get("/%ZZ"))
		if got := readEcho(t, br); got.status != 400 {
			t.Fatalf("got %+v, want 400", got)
		}
	})
	t.Run("chunked", func(t *testing.T) {
		c, br := rawConn(t, addr)
		io.WriteString(c, "POST /p HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"+
			strconv.FormatInt(int64(len(fake)), 16)+"\r\n"+fake+"\r\n0\r\n\r\n"+get("/next"))
		wantEcho(t, readEcho(t, br), "POST uri=/p path=/p body="+fake)
		wantEcho(t, readEcho(t, br), "GET uri=/next path=/next body=")
	})
	t.Run("zero length", func(t *testing.T) {
		// Content-Length: 0 is no body, so rewriting goes on; net/http
		// skips the CRLF some clients add after a POST, and so do we.
		c, br := rawConn(t, addr)
		io.WriteString(c, "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 00\r\n\r\n\r\n"+get("/%ZZ"))
		wantEcho(t, readEcho(t, br), "POST uri=/p path=/p body=")
		wantEcho(t, readEcho(t, br), "GET uri=/.bad-escape path=/.bad-escape body=")
	})
}

func TestListenerLongRequestLine(t *testing.T) {
	addr := listenerServer(t, nil)
	long := "/" + strings.Repeat("a", 10<<10)
	t.Run("bad escape", func(t *testing.T) {
		// Too long to hold back: the target is dropped for the marker,
		// and the length, the handler's first check, decides it.
		c, br := rawConn(t, addr)
		io.WriteString(c, get(long+"%ZZ"))
		wantEcho(t, readEcho(t, br), "GET uri=/.path-too-long path=/.path-too-long body=")
	})
	t.Run("valid", func(t *testing.T) {
		// The connection is still followed after an overlong line.
		c, br := rawConn(t, addr)
		io.WriteString(c, get(long)+get("/%ZZ"))
		wantEcho(t, readEcho(t, br), "GET uri=/.path-too-long path=/.path-too-long body=")
		wantEcho(t, readEcho(t, br), "GET uri=/.bad-escape path=/.bad-escape body=")
	})
	t.Run("query", func(t *testing.T) {
		c, br := rawConn(t, addr)
		io.WriteString(c, "HEAD /cve?"+strings.Repeat("page=1&", 2000)+" HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"+get("/ok"))
		res, err := http.ReadResponse(br, &http.Request{Method: "HEAD"})
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 || res.ProtoMinor != 0 {
			t.Fatalf("HEAD: %d %s", res.StatusCode, res.Proto)
		}
		wantEcho(t, readEcho(t, br), "GET uri=/ok path=/ok body=")
	})
	t.Run("1 MiB", func(t *testing.T) {
		c, br := rawConn(t, addr)
		go io.WriteString(c, get("/"+strings.Repeat("%", 1<<20))+get("/next"))
		wantEcho(t, readEcho(t, br), "GET uri=/.path-too-long path=/.path-too-long body=")
		wantEcho(t, readEcho(t, br), "GET uri=/next path=/next body=")
	})
	t.Run("header limit", func(t *testing.T) {
		// Rewritten, the line no longer counts against MaxHeaderBytes.
		addr := listenerServer(t, func(s *http.Server) { s.MaxHeaderBytes = 4 << 10 })
		c, br := rawConn(t, addr)
		io.WriteString(c, get(long))
		wantEcho(t, readEcho(t, br), "GET uri=/.path-too-long path=/.path-too-long body=")
	})
	t.Run("no version", func(t *testing.T) {
		// Without an HTTP/1.x version at its end the line stays one that
		// net/http refuses.
		for _, line := range []string{"GET " + long + "\r\n\r\n", "GET " + long + " HTTP/2.0\r\n\r\n", "GET " + long + " HTTP/1.1 \r\n\r\n"} {
			c, br := rawConn(t, addr)
			io.WriteString(c, line)
			if got := readEcho(t, br); got.status != 400 || got.ctype == "text/echo" {
				t.Fatalf("%.20q...: got %d %q", line, got.status, got.ctype)
			}
		}
	})
	t.Run("long method", func(t *testing.T) {
		// The first 8 KiB do not show a long target: passed on unchanged,
		// and net/http answers.
		addr := listenerServer(t, func(s *http.Server) { s.MaxHeaderBytes = 4 << 10 })
		c, br := rawConn(t, addr)
		io.WriteString(c, strings.Repeat("A", 9<<10)+" /x HTTP/1.1\r\nHost: x\r\n\r\n")
		if got := readEcho(t, br); got.status != http.StatusRequestHeaderFieldsTooLarge {
			t.Fatalf("got %d %q", got.status, got.ctype)
		}
	})
}

func TestListenerRefusedTargets(t *testing.T) {
	// Targets net/http would refuse, each rewritten to the marker of the
	// handler's first failing check; what net/http accepts stays.
	addr := listenerServer(t, nil)
	p3k := "/" + strings.Repeat("p", 3<<10)
	q5k := "?" + strings.Repeat("q", 5<<10)
	for _, tc := range []struct{ target, uri string }{
		{"/cve/\x00", "/.bad-escape"},
		{"/cve/a\x01b?page=1", "/.bad-escape"},
		{"/cve/\x7f", "/.bad-escape"},
		{"/cve/a\tb", "/.bad-escape"},
		{"/cve/a b", "/.bad-escape"},
		{"/cve/a  b", "/.bad-escape"},
		{"/cve?page=1 ", "/.bad-query"},
		{"/cve?page=\x00", "/.bad-query"},
		{"/cve?x=a b&page=1", "/.bad-query"},
		{"/cve/a b?x=\x01", "/.bad-escape"},
		{p3k + "%ZZ", "/.path-too-long"},
		{p3k + " " + q5k, "/.path-too-long"},
		{"/cve/%ZZ" + q5k, "/.query-too-long"},
		{"/cve" + q5k + "\x01", "/.query-too-long"},
		// accepted by net/http: left for the handler
		{p3k, p3k},
		{"/cve" + q5k, "/cve" + q5k},
		{"/cve/\x80\xff", "/cve/\x80\xff"},
		{"/cve?x=%ZZ", "/cve?x=%ZZ"},
	} {
		t.Run(fmt.Sprintf("%.40q", tc.target), func(t *testing.T) {
			c, br := rawConn(t, addr)
			io.WriteString(c, get(tc.target))
			got := readEcho(t, br)
			want := "GET uri=" + tc.uri + " "
			if got.status != 200 || !strings.HasPrefix(got.body, want) {
				t.Fatalf("got %d %.60q, want 200 %.60q", got.status, got.body, want)
			}
		})
	}
}

func TestListenerNotHTTP1(t *testing.T) {
	addr := listenerServer(t, nil)
	for _, s := range []string{
		"GET /%ZZ HTTP/2.0\r\nHost: x\r\n\r\n",
		"GET /%ZZ\r\n\r\n",
		"\x16\x03\x01\x00\xa5GET /%ZZ HTTP/1.1\r\n\r\n",
	} {
		c, br := rawConn(t, addr)
		io.WriteString(c, s)
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		res.Body.Close()
		if res.StatusCode/100 != 4 && res.StatusCode != 505 {
			t.Fatalf("%q: %d", s, res.StatusCode)
		}
	}
}

func TestListenerDeadlines(t *testing.T) {
	// A request line that never ends meets ReadHeaderTimeout: the
	// deadline reaches the connection and net/http hangs up.
	addr := listenerServer(t, func(s *http.Server) { s.ReadHeaderTimeout = 200 * time.Millisecond })
	c, _ := rawConn(t, addr)
	io.WriteString(c, "GET /cve/%Z")
	start := time.Now()
	if _, err := io.ReadAll(c); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
}

func TestListenerCloseWrite(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	ln := NewListener(l)
	go func() {
		c, err := net.Dial("tcp", l.Addr().String())
		if err == nil {
			defer c.Close()
			io.Copy(io.Discard, c)
		}
	}()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cw, ok := c.(interface{ CloseWrite() error })
	if !ok {
		t.Fatal("accepted TCP connection lost CloseWrite")
	}
	if err := cw.CloseWrite(); err != nil {
		t.Fatal(err)
	}
}

// chunkReader returns its data in pieces whose sizes come from sizes (cycled;
// 1 to 256 bytes), then errs.
type chunkReader struct {
	data  []byte
	sizes []byte
	i     int
	err   error
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, r.err
	}
	n := 1
	if len(r.sizes) > 0 {
		n = int(r.sizes[r.i%len(r.sizes)]) + 1
		r.i++
	}
	n = min(n, len(p), len(r.data))
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

// rewriteAll reads everything through a lineRewriter, src cut by sizes and
// reads of lengths from reads, and returns what came out.
// Whatever the input, the rewriter holds at most maxRequestLine bytes of a
// request line.
func rewriteAll(t testing.TB, in, sizes, reads []byte) ([]byte, int) {
	r := &lineRewriter{src: &chunkReader{data: in, sizes: sizes, err: io.EOF}}
	var out []byte
	p := make([]byte, 300)
	for i := 0; ; i++ {
		n := 300
		if len(reads) > 0 {
			n = int(reads[i%len(reads)]) + 1
		}
		m, err := r.Read(p[:n])
		if m < 0 || m > n {
			t.Fatalf("Read returned %d for %d bytes", m, n)
		}
		out = append(out, p[:m]...)
		if len(r.line) > maxRequestLine || len(r.rw) > maxRequestLine+len(" /.query-too-long HTTP/1.1\r\n") {
			t.Fatalf("holding %d bytes of a line, %d of a rewrite", len(r.line), len(r.rw))
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("Read: %v", err)
		}
		if i > 10*len(in)+100 {
			t.Fatal("no progress")
		}
	}
	return out, r.rewritten
}

func TestListenerReaderLongLine(t *testing.T) {
	// Lines around the limit, however the stream is cut: held back whole
	// up to it and left alone when net/http accepts them; beyond it, the
	// target is dropped for the marker. A long path with bad escapes gets
	// the same marker on both sides.
	for _, size := range []int{maxRequestLine - 2, maxRequestLine - 1, maxRequestLine, maxRequestLine + 1, 3 * maxRequestLine} {
		for _, fill := range []string{"a", "%"} {
			line := "GET /" + strings.Repeat(fill, size-len("GET / HTTP/1.1\r\n")) + " HTTP/1.1\r\n"
			if len(line) != size {
				t.Fatalf("line of %d bytes, want %d", len(line), size)
			}
			in := line + "\r\n" + get("/%ZZ")
			want := "GET /.path-too-long HTTP/1.1\r\n\r\n" + get("/.bad-escape")
			if size <= maxRequestLine && fill == "a" {
				want = line + "\r\n" + get("/.bad-escape")
			}
			for _, sizes := range [][]byte{nil, {0}, {255}, {100, 3}} {
				out, _ := rewriteAll(t, []byte(in), sizes, []byte{200, 0})
				if string(out) != want {
					t.Fatalf("line of %d bytes of %q, sizes %v: got %d bytes %.40q..., want %d bytes %.40q...", size, fill, sizes, len(out), out, len(want), want)
				}
			}
		}
	}
}

func TestListenerReaderOverlong(t *testing.T) {
	long := strings.Repeat("a", 9<<10)
	for _, tc := range []struct{ in, want string }{
		{"GET /" + long + " HTTP/1.0\n\n", "GET /.path-too-long HTTP/1.0\n\n"},
		{"GET /cve?" + long + " HTTP/1.1\r\n\r\n", "GET /.query-too-long HTTP/1.1\r\n\r\n"},
		{"GET /" + strings.Repeat("b", 3<<10) + "?" + long + " HTTP/1.1\r\n\r\n", "GET /.path-too-long HTTP/1.1\r\n\r\n"},
		// the version follows the last space
		{"GET /a b " + long + " c HTTP/1.1\r\n\r\n", "GET /.path-too-long HTTP/1.1\r\n\r\n"},
		{"GET /x HTTP/1.1 " + long + " HTTP/1.1\r\n\r\n", "GET /.path-too-long HTTP/1.1\r\n\r\n"},
		// no HTTP/1.x version at the end: a line net/http refuses
		{"GET /" + long + "\r\n\r\n", "GET /.path-too-long\r\n\r\n"},
		{"GET /" + long + " HTTP/2.0\r\n\r\n", "GET /.path-too-long\r\n\r\n"},
		{"GET /" + long + " HTTP/1.10\r\n\r\n", "GET /.path-too-long\r\n\r\n"},
		{"GET /" + long + " HTTP/1.1\r\r\n\r\n", "GET /.path-too-long\r\n\r\n"},
		{"GET /" + long + " HTTP/1.1 \r\n", "GET /.path-too-long\r\n"},
		// the stream ends inside the line: as far as it was rewritten
		{"GET /" + long, "GET /.path-too-long"},
		{"GET /" + long + " HTTP/1.", "GET /.path-too-long"},
		// the first 8 KiB show no long target: passed on
		{strings.Repeat("A", 7<<10) + " /" + long + " HTTP/1.1\r\n" + get("/%ZZ"), ""},
		{"GET /x " + long + " HTTP/1.1\r\n\r\n" + get("/%ZZ"), "GET /.path-too-long HTTP/1.1\r\n\r\n" + get("/.bad-escape")},
		{"CONNECT /" + long + " HTTP/1.1\r\n\r\n", ""},
		{"G(T /" + long + " HTTP/1.1\r\n\r\n", ""},
		{"/" + long, ""},
	} {
		want := tc.want
		if want == "" {
			want = tc.in
		}
		for _, sizes := range [][]byte{nil, {0}, {255}, {100, 3}} {
			out, _ := rewriteAll(t, []byte(tc.in), sizes, []byte{200, 0})
			if string(out) != want {
				t.Fatalf("%.30q..., sizes %v: got %d bytes %.60q, want %d bytes %.60q", tc.in, sizes, len(out), out, len(want), want)
			}
		}
	}
}

func TestListenerReaderHugeLine(t *testing.T) {
	// A 1 MiB target is dropped as it arrives: the rewriter never holds
	// more than maxRequestLine of it, and once its buffers exist it
	// allocates nothing however long the line.
	in := []byte(get("/"+strings.Repeat("a", 1<<20)+"?x") + get("/ok"))
	want := get("/.path-too-long") + get("/ok")
	src := &chunkReader{err: io.EOF}
	r := &lineRewriter{src: src}
	p := make([]byte, 4096)
	sizes := []byte{255, 17}
	var out []byte
	run := func() {
		src.data, src.sizes, out = in, sizes, out[:0]
		for {
			n, err := r.Read(p)
			out = append(out, p[:n]...)
			if len(r.line) > maxRequestLine || cap(r.line) > 2*maxRequestLine || cap(r.rw) > 1024 {
				t.Fatalf("holding %d bytes (capacity %d), rewrite capacity %d", len(r.line), cap(r.line), cap(r.rw))
			}
			if err != nil {
				break
			}
		}
		r.state = stLineStart
	}
	out = make([]byte, 0, len(want))
	run()
	if string(out) != want {
		t.Fatalf("got %.80q, want %q", out, want)
	}
	if a := testing.AllocsPerRun(5, run); a != 0 {
		t.Fatalf("%v allocations per 1 MiB line", a)
	}
}

func TestListenerReaderStream(t *testing.T) {
	in := "\r\n" + get("/a%2F") + get("/%zz?q") + "POST /x HTTP/1.1\r\nContent-Length:  0 \r\nX: 1\r\n\r\n" +
		get("/b%") + "PUT /c HTTP/1.1\r\nUpgrade: foo\r\n\r\n" + get("/%ZZ")
	want := "\r\n" + get("/a%2F") + get("/.bad-escape") + "POST /x HTTP/1.1\r\nContent-Length:  0 \r\nX: 1\r\n\r\n" +
		get("/.bad-escape") + "PUT /c HTTP/1.1\r\nUpgrade: foo\r\n\r\n" + get("/%ZZ")
	for _, sizes := range [][]byte{nil, {0}, {2, 0, 7}, {255}} {
		for _, reads := range [][]byte{nil, {0}, {4, 1}} {
			out, n := rewriteAll(t, []byte(in), sizes, reads)
			if string(out) != want || n != 2 {
				t.Fatalf("sizes %v reads %v: %d rewrites, got\n%q\nwant\n%q", sizes, reads, n, out, want)
			}
		}
	}
}

// timeoutErr is what a deadline gives.
type timeoutErr struct{}

func (timeoutErr) Error() string   { return "timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

// scriptReader returns its steps in turn: data, or an error when data is nil.
type scriptReader struct {
	steps [][]byte
	errs  []error
}

func (r *scriptReader) Read(p []byte) (int, error) {
	if len(r.steps) == 0 {
		return 0, io.EOF
	}
	d, err := r.steps[0], r.errs[0]
	r.steps, r.errs = r.steps[1:], r.errs[1:]
	return copy(p, d), err
}

func TestListenerReaderErrors(t *testing.T) {
	t.Run("timeout keeps the held-back line", func(t *testing.T) {
		src := &scriptReader{
			steps: [][]byte{[]byte("GET /%"), nil, []byte("ZZ HTTP/1.1\r\n\r\n")},
			errs:  []error{nil, timeoutErr{}, nil},
		}
		r := &lineRewriter{src: src}
		p := make([]byte, 100)
		n, err := r.Read(p)
		var ne net.Error
		if n != 0 || !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("got %d, %v; want the timeout", n, err)
		}
		out, err := io.ReadAll(r)
		if err != nil || string(out) != "GET /.bad-escape HTTP/1.1\r\n\r\n" {
			t.Fatalf("got %q, %v", out, err)
		}
	})
	t.Run("EOF hands on the held-back line", func(t *testing.T) {
		r := &lineRewriter{src: strings.NewReader("GET /%ZZ HTTP/1.1")}
		out, err := io.ReadAll(r)
		if err != nil || string(out) != "GET /%ZZ HTTP/1.1" {
			t.Fatalf("got %q, %v", out, err)
		}
	})
	t.Run("data with an error", func(t *testing.T) {
		boom := errors.New("boom")
		src := &scriptReader{steps: [][]byte{[]byte("GET /%ZZ HTTP/1.1\r\nHost")}, errs: []error{boom}}
		r := &lineRewriter{src: src}
		out, err := io.ReadAll(r)
		if err != boom || string(out) != "GET /.bad-escape HTTP/1.1\r\nHost" {
			t.Fatalf("got %q, %v", out, err)
		}
	})
	t.Run("deadline error type", func(t *testing.T) {
		if !isTimeout(os.ErrDeadlineExceeded) || isTimeout(io.EOF) {
			t.Fatal("isTimeout")
		}
	})
}

func TestListenerReaderAllocs(t *testing.T) {
	in := []byte(strings.Repeat(get("/cve/CVE-2023-0001?page=2"), 20))
	src := &chunkReader{err: io.EOF}
	r := &lineRewriter{src: src}
	p := make([]byte, 4096)
	sizes := []byte{40, 9, 200}
	run := func() {
		src.data, src.sizes = in, sizes
		for {
			if _, err := r.Read(p); err != nil {
				break
			}
		}
		r.state = stLineStart
	}
	run() // the per-connection buffers
	if a := testing.AllocsPerRun(50, run); a != 0 {
		t.Fatalf("%v allocations per 20 requests", a)
	}
}

func FuzzListenerRewrite(f *testing.F) {
	for _, s := range []string{
		get("/cve/%ZZ") + get("/ok"),
		"\r\n\n" + get("/a%2") + "POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nGET /%ZZ HTTP/1.1\r\n\r\n",
		"GET /%zz?x HTTP/1.0\nA: b\n\nGET /%41 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n",
		"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
		"CONNECT /%ZZ HTTP/1.1\r\n\r\n",
		"GET /x HTTP/1.1\r\n content-length: 5\r\n\r\nGET /%ZZ HTTP/1.1\r\n\r\n",
		get("/cve/a b") + get("/cve?x=\x00") + get("/"+strings.Repeat("p", 3000)+"%"),
		get("/"+strings.Repeat("a", maxRequestLine)) + get("/%ZZ"),
		"GET /cve?" + strings.Repeat("q", maxRequestLine) + " HTTP/1.0\n\n",
		"GET /" + strings.Repeat("a", maxRequestLine) + " HTTP/1.1 \r\n\r\n",
	} {
		f.Add([]byte(s), []byte{0}, []byte{})
		f.Add([]byte(s), []byte{200, 3}, []byte{0, 7})
	}
	f.Fuzz(func(t *testing.T, in, sizes, reads []byte) {
		out, n := rewriteAll(t, in, sizes, reads)
		if n == 0 && !bytes.Equal(out, in) {
			t.Fatalf("nothing rewritten but output differs:\n%q\n%q", in, out)
		}
		// However it is cut, the stream gives the same output.
		whole, m := rewriteAll(t, in, []byte{255}, nil)
		if m != n || !bytes.Equal(whole, out) {
			t.Fatalf("output depends on the cuts:\n%q\n%q", whole, out)
		}
		markers := 0
		for _, m := range []string{BadEscapeTarget, BadQueryTarget, PathTooLongTarget, QueryTooLongTarget} {
			markers += bytes.Count(out, []byte(" "+m))
		}
		if markers < n {
			t.Fatalf("%d rewrites but output %q", n, out)
		}
		if err := sameRequests(in, out); err != nil {
			t.Fatal(err)
		}
	})
}

// isMarker reports whether target is one of the listener's marker targets.
func isMarker(target string) bool {
	switch target {
	case BadEscapeTarget, BadQueryTarget, PathTooLongTarget, QueryTooLongTarget:
		return true
	}
	return false
}

// sameRequests reads in (what a client sent) and out (what the
// listener passed on) with http.ReadRequest, request by request, as
// net/http's server would, and returns an error unless they carry the same requests:
// as many, with the same methods, protocols, headers and bodies, each
// target the same or replaced by a marker. Where net/http cannot read an
// input request only for its request line (a target it refuses), the
// output's request must have a marker target, the line's method and
// version, and the headers that follow it in the input.
func sameRequests(in, out []byte) error {
	inR := bufio.NewReaderSize(bytes.NewReader(in), len(in)+16)
	outR := bufio.NewReaderSize(bytes.NewReader(out), len(out)+16)
	for i := 1; ; i++ {
		line, _ := inR.Peek(inR.Size()) // all that is left: the buffer holds the whole input
		if j := bytes.IndexByte(line, '\n'); j >= 0 {
			line = line[:j]
		}
		ireq, ierr := http.ReadRequest(inR)
		oreq, oerr := http.ReadRequest(outR)
		if oerr != nil {
			if ierr == nil {
				return fmt.Errorf("request %d: net/http reads the input (%s %s) but not the output: %v\nin  %q\nout %q", i, ireq.Method, ireq.RequestURI, oerr, in, out)
			}
			return nil // both streams end here, or go on as bytes net/http refuses alike
		}
		if ierr != nil {
			// The input's request line was refused: net/http read the
			// line and nothing after it.
			if !isMarker(oreq.RequestURI) {
				return fmt.Errorf("request %d: input refused (%v) but output target %q is no marker\nin  %q\nout %q", i, ierr, oreq.RequestURI, in, out)
			}
			l := strings.TrimSuffix(string(line), "\r")
			method, _, _ := strings.Cut(l, " ")
			proto := l[strings.LastIndexByte(l, ' ')+1:]
			if method != oreq.Method || proto != oreq.Proto {
				return fmt.Errorf("request %d: line %q became %s %s %s", i, l, oreq.Method, oreq.RequestURI, oreq.Proto)
			}
			hdr, err := textprotoHeader(inR)
			if err != nil {
				return fmt.Errorf("request %d: input headers unreadable (%v) but output's read", i, err)
			}
			// http.ReadRequest moves Host and Transfer-Encoding out of
			// the header.
			host := hdr.Get("Host")
			te := hdr.Values("Transfer-Encoding")
			hdr.Del("Host")
			hdr.Del("Transfer-Encoding")
			if len(te) > 0 {
				return nil // a body follows, which the listener passes through unfollowed
			}
			if d := cmp.Diff(hdr, oreq.Header); d != "" || host != oreq.Host {
				return fmt.Errorf("request %d: headers differ (-in +out):\n%s\nHost %q, %q", i, d, host, oreq.Host)
			}
			if oreq.ContentLength != 0 || len(oreq.TransferEncoding) > 0 {
				return nil // the listener passes the rest through; its body is not followed here
			}
			continue
		}
		if ireq.Method != oreq.Method || ireq.Proto != oreq.Proto {
			return fmt.Errorf("request %d: %s %s became %s %s", i, ireq.Method, ireq.Proto, oreq.Method, oreq.Proto)
		}
		if ireq.RequestURI != oreq.RequestURI && !isMarker(oreq.RequestURI) {
			return fmt.Errorf("request %d: target %q became %q, not a marker", i, ireq.RequestURI, oreq.RequestURI)
		}
		if d := cmp.Diff(ireq.Header, oreq.Header); d != "" || ireq.Host != oreq.Host {
			return fmt.Errorf("request %d: headers differ (-in +out):\n%s", i, d)
		}
		ib, ierr := io.ReadAll(ireq.Body)
		ob, oerr := io.ReadAll(oreq.Body)
		if !bytes.Equal(ib, ob) || (ierr == nil) != (oerr == nil) {
			return fmt.Errorf("request %d: body %q (%v) became %q (%v)", i, ib, ierr, ob, oerr)
		}
		if ierr != nil {
			return nil // a body cut short ends both streams
		}
	}
}

// textprotoHeader reads a MIME header block as http.ReadRequest does.
func textprotoHeader(r *bufio.Reader) (http.Header, error) {
	h, err := textproto.NewReader(r).ReadMIMEHeader()
	return http.Header(h), err
}

// TestListenerKeepsRequestBoundaries runs checkSameRequests on pipelined
// streams mixing requests net/http refuses with ones it reads, with
// headers and bodies, whole and cut at every size.
func TestListenerKeepsRequestBoundaries(t *testing.T) {
	long := "/" + strings.Repeat("a", maxRequestLine)
	for _, in := range []string{
		get("/cve/%ZZ") + get("/ok") + get("/cve?x=\x01") + get("/fine?q=1"),
		get("/a b") + "GET /x HTTP/1.1\r\nX-A: 1\r\nX-A: 2\r\n\r\n",
		get("/%ZZ") + "POST /p HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\nhello" + get("/%ZZ"),
		get("/"+strings.Repeat("p", 3000)) + get("/q?"+strings.Repeat("q", 5000)) + get("/last"),
		get(long) + get("/%ZZ") + get("/end"),
		"GET /%zz HTTP/1.0\nA: b\n\nGET /%41 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n",
	} {
		for _, cut := range []byte{1, 7, 255} {
			out, _ := rewriteAll(t, []byte(in), []byte{cut}, nil)
			if err := sameRequests([]byte(in), out); err != nil {
				t.Error(err)
			}
		}
	}
	// And the check itself sees what a broken rewrite would do.
	in := get("/%ZZ") + get("/ok") + "POST /p HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi"
	for name, out := range map[string]string{
		"target not a marker": get("/x") + get("/ok") + "POST /p HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi",
		"good target changed": get(BadEscapeTarget) + get("/ko") + "POST /p HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi",
		"header dropped":      "GET " + BadEscapeTarget + " HTTP/1.1\r\nHost: x\r\n\r\n" + get("/ok") + "POST /p HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi",
		"request dropped":     get(BadEscapeTarget) + "POST /p HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi",
		"method changed":      get(BadEscapeTarget) + get("/ok") + "PUT /p HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi",
		"body changed":        get(BadEscapeTarget) + get("/ok") + "POST /p HTTP/1.1\r\nContent-Length: 2\r\n\r\nho",
		"version changed":     strings.Replace(get(BadEscapeTarget), "HTTP/1.1", "HTTP/1.0", 1) + get("/ok") + "POST /p HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi",
	} {
		if sameRequests([]byte(in), []byte(out)) == nil {
			t.Errorf("%s: sameRequests found nothing wrong", name)
		}
	}
	if err := sameRequests([]byte(in), []byte(get(BadEscapeTarget)+get("/ok")+"POST /p HTTP/1.1\r\nContent-Length: 2\r\n\r\nhi")); err != nil {
		t.Errorf("the right rewrite: %v", err)
	}
}

// BenchmarkListenerRead reads keep-alive requests through a lineRewriter as
// net/http does (into a 4 KiB bufio.Reader), one request per read from
// the socket: per op, one request line and its headers passed on. "none"
// reads the same without the rewriter: the difference is its cost.
func BenchmarkListenerRead(b *testing.B) {
	for _, tc := range []struct{ name, req string }{
		{"wrk", "GET /vendors/acme/products/widget/cve?version=1.3 HTTP/1.1\r\nHost: 127.0.0.1:18480\r\n\r\n"},
		{"browser", "GET /cve?cvss=high&page=12 HTTP/1.1\r\nHost: vulnd.example.org\r\nUser-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0\r\n" +
			"Accept: application/json\r\nAccept-Language: en-US,en;q=0.5\r\nAccept-Encoding: gzip, deflate, br, zstd\r\nConnection: keep-alive\r\n\r\n"},
	} {
		for _, rewrite := range []bool{true, false} {
			name := tc.name + "/rewriter"
			if !rewrite {
				name = tc.name + "/none"
			}
			b.Run(name, func(b *testing.B) {
				src := &oneReader{req: []byte(tc.req)}
				var rd io.Reader = src
				if rewrite {
					rd = &lineRewriter{src: src}
				}
				br := bufio.NewReaderSize(rd, 4096)
				b.ReportAllocs()
				b.SetBytes(int64(len(tc.req)))
				for b.Loop() {
					src.left = true
					for {
						line, err := br.ReadSlice('\n')
						if err != nil {
							b.Fatal(err)
						}
						if len(line) <= 2 {
							break // the blank line that ends the headers
						}
					}
				}
			})
		}
	}
}

// oneReader returns req once each time left is set, like a socket that
// holds one request.
type oneReader struct {
	req  []byte
	left bool
}

func (r *oneReader) Read(p []byte) (int, error) {
	if !r.left {
		return 0, io.ErrNoProgress
	}
	r.left = false
	return copy(p, r.req), nil
}

// TestPlainEscapes: the eight-bytes-at-a-time checks agree with the plain
// byte loops for every byte at every position of a run.
func TestPlainEscapes(t *testing.T) {
	for n := 0; n <= 20; n++ {
		for pos := 0; pos < n; pos++ {
			for c := 0; c < 256; c++ {
				b := bytes.Repeat([]byte("a"), n)
				b[pos] = byte(c)
				if c == '%' && pos+2 < n {
					b[pos+1], b[pos+2] = '4', '1'
				}
				want := ValidEscapes(b)
				plain := true
				for _, x := range b {
					plain = plain && x > ' ' && x != 0x7f
				}
				if got := plainEscapes(b); got != (want && plain) {
					t.Fatalf("plainEscapes(%q) = %v, want %v", b, got, want && plain)
				}
				if got := plainBytes(b); got != plain {
					t.Fatalf("plainBytes(%q) = %v, want %v", b, got, plain)
				}
			}
		}
	}
}

// TestListenerReaderOneRead: a request that arrives in one read from the
// socket is passed on in one Read, its line (rewritten or not) and
// headers together, so net/http fills its buffer once per request; the
// next request is not read from the socket until it is asked for.
func TestListenerReaderOneRead(t *testing.T) {
	for _, req := range []string{get("/cve?page=2"), get("/cve/%ZZ")} {
		src := &oneReader{req: []byte(req), left: true}
		r := &lineRewriter{src: src}
		p := make([]byte, 4096)
		n, err := r.Read(p)
		want := strings.Replace(req, "/cve/%ZZ", BadEscapeTarget, 1)
		if err != nil || string(p[:n]) != want {
			t.Errorf("one Read gave %q, %v; want %q", p[:n], err, want)
		}
	}
}
