package wire

import (
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// deadlineCall is a deadline set on a recordConn.
type deadlineCall struct {
	write bool
	t     time.Time
}

// recordConn is a connection that records the deadlines set on it; it is
// never read or written.
type recordConn struct {
	net.Conn // nil: not to be used
	mu       sync.Mutex
	calls    []deadlineCall
}

func (c *recordConn) SetReadDeadline(t time.Time) error  { return c.record(false, t) }
func (c *recordConn) SetWriteDeadline(t time.Time) error { return c.record(true, t) }
func (c *recordConn) Close() error                       { return nil }

func (c *recordConn) SetDeadline(t time.Time) error {
	c.record(false, t)
	return c.record(true, t)
}

func (c *recordConn) record(write bool, t time.Time) error {
	c.mu.Lock()
	c.calls = append(c.calls, deadlineCall{write, t})
	c.mu.Unlock()
	return nil
}

// take returns the calls recorded since the last take.
func (c *recordConn) take() []deadlineCall {
	c.mu.Lock()
	defer c.mu.Unlock()
	calls := c.calls
	c.calls = nil
	return calls
}

// oneConnListener accepts c once, then fails.
type oneConnListener struct {
	net.Listener // nil: not to be used
	c            net.Conn
}

func (l *oneConnListener) Accept() (net.Conn, error) {
	if c := l.c; c != nil {
		l.c = nil
		return c, nil
	}
	return nil, errors.New("no more")
}

// TestListenerCoarseDeadlines: a deadline SweepPeriod ahead or farther
// does not reach the connection (net/http moves its deadlines several
// times a request, each a timer re-armed) until it has passed, then the
// sweeper sets it within about a period; a deadline that has passed (as
// net/http's aborting a background read) or is nearer, and a zero
// deadline after one that was set, reach it at once.
func TestListenerCoarseDeadlines(t *testing.T) {
	rc := &recordConn{}
	c, err := NewListener(&oneConnListener{c: rc}).Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	want := func(step string, calls ...deadlineCall) {
		t.Helper()
		got := rc.take()
		if len(got) != len(calls) {
			t.Fatalf("%s: the connection got %v, want %v", step, got, calls)
		}
		for i := range got {
			if got[i].write != calls[i].write || !got[i].t.Equal(calls[i].t) {
				t.Fatalf("%s: the connection got %v, want %v", step, got, calls)
			}
		}
	}

	far := time.Now().Add(time.Hour)
	c.SetReadDeadline(far)
	c.SetWriteDeadline(far)
	c.SetDeadline(far.Add(time.Minute))
	c.SetReadDeadline(time.Time{})
	c.SetWriteDeadline(time.Time{})
	want("far and zero deadlines")

	past := time.Unix(1, 0) // net/http's aLongTimeAgo
	c.SetReadDeadline(past)
	want("a passed read deadline", deadlineCall{false, past})
	c.SetReadDeadline(time.Time{})
	want("zero after it", deadlineCall{false, time.Time{}})
	c.SetReadDeadline(time.Time{})
	want("zero again")

	near := time.Now().Add(SweepPeriod / 10)
	c.SetDeadline(near)
	want("a near deadline", deadlineCall{false, near}, deadlineCall{true, near})
	c.SetDeadline(far)
	want("a far one after it", deadlineCall{false, time.Time{}}, deadlineCall{true, time.Time{}})

	// A deadline a period and a half ahead: set by a sweep once passed.
	soon := time.Now().Add(SweepPeriod * 3 / 2)
	c.SetWriteDeadline(soon)
	want("a deadline 1.5 periods ahead")
	var calls []deadlineCall
	for time.Now().Before(soon.Add(5 * SweepPeriod)) {
		if calls = rc.take(); len(calls) > 0 {
			break
		}
		time.Sleep(SweepPeriod / 25)
	}
	late := time.Since(soon)
	if len(calls) != 1 || !calls[0].write || !calls[0].t.Equal(soon) {
		t.Fatalf("once passed: the connection got %v, want the write deadline %v", calls, soon)
	}
	if late < 0 || late > SweepPeriod+SweepPeriod/2 {
		t.Errorf("the passed deadline was set %v after it passed, want at most about %v", late, SweepPeriod)
	}
	c.SetWriteDeadline(far)
	want("a far one after the sweep", deadlineCall{true, time.Time{}})

	// Times out of int64 nanoseconds' range: far, and past.
	c.SetReadDeadline(time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC))
	want("the year 3000")
	ancient := time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC)
	c.SetReadDeadline(ancient)
	want("the year 1", deadlineCall{false, ancient})
}

// TestListenerSweeperStops: the sweeper runs while the listener has
// connections open, and starts again with the next one.
func TestListenerSweeperStops(t *testing.T) {
	ln := NewListener(&oneConnListener{c: &recordConn{}}).(*escapeListener)
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	running := func() bool {
		ln.sw.mu.Lock()
		defer ln.sw.mu.Unlock()
		return ln.sw.running
	}
	if !running() {
		t.Fatal("no sweeper with a connection open")
	}
	c.Close()
	for start := time.Now(); running(); time.Sleep(SweepPeriod / 10) {
		if time.Since(start) > 10*SweepPeriod {
			t.Fatal("the sweeper still runs with no connection open")
		}
	}
	ln.Listener = &oneConnListener{c: &recordConn{}}
	c, err = ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if !running() {
		t.Fatal("no sweeper with a connection open again")
	}
}

// countingListener counts the deadlines set on its connections that are
// neither zero nor passed: those re-arm a runtime timer.
type countingListener struct {
	net.Listener
	armed atomic.Int64
}

type countingConn struct {
	net.Conn
	l *countingListener
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countingConn{c, l}, nil
}

func (c *countingConn) count(t time.Time) {
	if t.After(time.Now()) {
		c.l.armed.Add(1)
	}
}
func (c *countingConn) SetDeadline(t time.Time) error {
	c.count(t)
	return c.Conn.SetDeadline(t)
}
func (c *countingConn) SetReadDeadline(t time.Time) error {
	c.count(t)
	return c.Conn.SetReadDeadline(t)
}
func (c *countingConn) SetWriteDeadline(t time.Time) error {
	c.count(t)
	return c.Conn.SetWriteDeadline(t)
}

// timeoutServer serves h through NewListener over a counting listener on a
// loopback port with serve's four limits as given, and returns its
// address and the listener.
func timeoutServer(t *testing.T, header, read, write, idle time.Duration, h http.HandlerFunc) (string, *countingListener) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cl := &countingListener{Listener: l}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: header, ReadTimeout: read, WriteTimeout: write, IdleTimeout: idle}
	go srv.Serve(NewListener(cl))
	t.Cleanup(func() { srv.Close() })
	return l.Addr().String(), cl
}

func okHandler(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }

// TestListenerKeepAliveArmsNoTimers: 200 keep-alive requests with every
// limit of serve set re-arm no timer of the connection (net/http moves its
// deadlines five times a request), and each is answered at once: the
// passed deadline net/http aborts its background read with acts at once,
// not at a sweep.
func TestListenerKeepAliveArmsNoTimers(t *testing.T) {
	addr, cl := timeoutServer(t, 5*time.Second, 10*time.Second, 30*time.Second, 2*time.Minute, okHandler)
	c, br := rawConn(t, addr)
	const n = 200
	start := time.Now()
	for i := 0; i < n; i++ {
		io.WriteString(c, get("/x"))
		res, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := io.ReadAll(res.Body); string(b) != "ok" {
			t.Fatalf("request %d: %q", i, b)
		}
	}
	if d := time.Since(start); d > n*SweepPeriod/20 {
		t.Errorf("%d requests took %v: requests wait for sweeps", n, d)
	}
	if got := cl.armed.Load(); got > 1 {
		t.Errorf("%d requests armed the connection's deadline %d times", n, got)
	}
}

// cutWithin checks that d, how long a limit of lim took to cut a
// connection, is at least lim and at most lim, a sweep period and some
// slack for a loaded machine.
func cutWithin(t *testing.T, what string, d, lim time.Duration) {
	t.Helper()
	if d < lim-lim/10 || d > lim+SweepPeriod+time.Second {
		t.Errorf("%s: cut after %v, want %v to %v", what, d, lim, lim+SweepPeriod)
	} else {
		t.Logf("%s: cut after %v (limit %v)", what, d, lim)
	}
}

// TestListenerSlowHeaderCut: a client that sends half a request line is
// cut once ReadHeaderTimeout has passed, a sweep period late at most.
func TestListenerSlowHeaderCut(t *testing.T) {
	const lim = 300 * time.Millisecond
	addr, _ := timeoutServer(t, lim, 10*time.Second, 30*time.Second, 2*time.Minute, okHandler)
	c, _ := rawConn(t, addr)
	start := time.Now()
	io.WriteString(c, "GET /cve/CVE-2024")
	b, err := io.ReadAll(c)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 0 && !strings.HasPrefix(string(b), "HTTP/1.1 408") {
		t.Fatalf("answered %q", b)
	}
	cutWithin(t, "half a request line", time.Since(start), lim)
}

// TestListenerIdleCut: a keep-alive connection left idle is closed once
// IdleTimeout has passed, a sweep period late at most.
func TestListenerIdleCut(t *testing.T) {
	const lim = 300 * time.Millisecond
	addr, _ := timeoutServer(t, 5*time.Second, 10*time.Second, 30*time.Second, lim, okHandler)
	c, br := rawConn(t, addr)
	io.WriteString(c, get("/x"))
	res, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(res.Body)
	start := time.Now()
	if b, err := io.ReadAll(br); err != nil || len(b) > 0 {
		t.Fatalf("after the answer: %q, %v", b, err)
	}
	cutWithin(t, "an idle keep-alive connection", time.Since(start), lim)
}

// TestListenerSlowReaderCut: a client that never reads a large answer is
// cut once WriteTimeout has passed, a sweep period late at most: the
// handler's write fails then.
func TestListenerSlowReaderCut(t *testing.T) {
	const lim = 300 * time.Millisecond
	type outcome struct {
		d   time.Duration
		err error
	}
	done := make(chan outcome, 1)
	big := make([]byte, 64<<20) // far more than loopback's socket buffers
	addr, _ := timeoutServer(t, 5*time.Second, 10*time.Second, lim, 2*time.Minute, func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		_, err := w.Write(big)
		done <- outcome{time.Since(start), err}
	})
	c, _ := rawConn(t, addr)
	io.WriteString(c, get("/big"))
	select {
	case o := <-done:
		if o.err == nil {
			t.Fatal("the whole answer was written to a client that reads nothing")
		}
		cutWithin(t, "a client that never reads", o.d, lim)
	case <-time.After(20 * time.Second):
		t.Fatal("the write to a client that never reads was not cut")
	}
}

// BenchmarkDeadlineMoves makes the deadline moves net/http makes on a
// keep-alive connection with serve's four limits for each request (idle,
// header, whole request, write, then the background read's zero and
// abort), on a loopback TCP connection as accepted and through
// NewListener.
func BenchmarkDeadlineMoves(b *testing.B) {
	for _, wrapped := range []bool{false, true} {
		name := "tcp"
		if wrapped {
			name = "wire"
		}
		b.Run(name, func(b *testing.B) {
			l, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			var ln net.Listener = l
			if wrapped {
				ln = NewListener(l)
			}
			cc, err := net.Dial("tcp", l.Addr().String())
			if err != nil {
				b.Fatal(err)
			}
			defer cc.Close()
			c, err := ln.Accept()
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			past := time.Unix(1, 0)
			b.ReportAllocs()
			for b.Loop() {
				now := time.Now()
				c.SetWriteDeadline(time.Time{})
				c.SetReadDeadline(now.Add(2 * time.Minute))
				c.SetReadDeadline(now.Add(5 * time.Second))
				c.SetReadDeadline(now.Add(10 * time.Second))
				c.SetWriteDeadline(now.Add(30 * time.Second))
				c.SetReadDeadline(time.Time{})
				c.SetReadDeadline(past)
				c.SetReadDeadline(time.Time{})
			}
		})
	}
}
