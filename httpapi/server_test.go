package httpapi

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"weak"

	"github.com/goccy/go-json"

	"github.com/vulnd/vulnd/httpapi/wire"
	"github.com/vulnd/vulnd/index"
)

func TestLimits(t *testing.T) {
	srv := newTestServer(t, handData(t))
	const (
		pathMsg  = `{"message":"path is longer than 2048 bytes"}`
		queryMsg = `{"message":"query is longer than 4096 bytes"}`
	)
	cve := func(n int) string { return "/cve/" + strings.Repeat("A", n-len("/cve/")) }  // a path of n bytes
	query := func(n int) string { return "/cve?x=" + strings.Repeat("q", n-len("x=")) } // a query of n bytes
	// post is the status of a POST: the limits come before the method.
	for _, tc := range []struct {
		name, path   string
		status, post int
		want         string
	}{
		{"path of 2048 bytes", cve(2048), 404, 405, `{"message":"CVE not found"}`},
		{"path of 2049 bytes", cve(2049), 414, 414, pathMsg},
		{"escaped path of 2049 bytes", "/cve/" + strings.Repeat("%41", 2044/3+1), 414, 414, pathMsg},
		{"query of 4096 bytes", query(4096), 200, 405, ""},
		{"query of 4097 bytes", query(4097), 414, 414, queryMsg},
		{"1000 repeated parameters", "/cve?" + strings.Repeat("page=1&", 1000), 414, 414, queryMsg},
		{"500 repeated parameters", "/cve?" + strings.Repeat("page=1&", 500), 200, 405, ""},
		// the length checks come first (a bad escape in the path never
		// gets here: see TestListenerRefusedTargets)
		{"long path, long query", cve(3000) + "?" + strings.Repeat("q", 5000), 414, 414, pathMsg},
		{"long query, bad escape", "/cve?page=%ZZ&" + strings.Repeat("q", 5000), 414, 414, queryMsg},
		{"long query, bad page", "/cve?page=0&" + strings.Repeat("q", 5000), 414, 414, queryMsg},
		{"long path, unknown endpoint", "/" + strings.Repeat("x", 3000), 414, 414, pathMsg},
		// the listener's marker targets
		{"path marker", wire.PathTooLongTarget, 414, 414, pathMsg},
		{"query marker", wire.QueryTooLongTarget, 414, 414, queryMsg},
		{"bad escape marker", wire.BadEscapeTarget, 400, 400, `{"message":"path is not valid percent-encoding"}`},
		{"bad query marker", wire.BadQueryTarget, 400, 400, `{"message":"query is not valid percent-encoding"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, m := range []string{"GET", "HEAD", "POST"} {
				res, body := do(t, srv, m, tc.path, nil)
				status := tc.status
				if m == "POST" {
					status = tc.post
				}
				if res.StatusCode != status {
					t.Fatalf("%s: status %d, want %d; body %s", m, res.StatusCode, status, body)
				}
				if m == "HEAD" {
					continue
				}
				checkHeaders(t, res, body)
				if m == "GET" && tc.want != "" && string(body) != tc.want {
					t.Errorf("body %s, want %s", body, tc.want)
				}
			}
		})
	}
	for _, e := range []*apiError{errPathTooLong, errQueryTooLong} {
		if !strings.Contains(e.message, strconv.Itoa(maxPath)) && !strings.Contains(e.message, strconv.Itoa(maxQuery)) {
			t.Errorf("message %q names neither limit", e.message)
		}
	}
}

// lockedBuffer is a log destination safe for concurrent use.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// panicServer is a Server on handData with a test-only endpoint,
// /.panic/:what, whose handler panics with "boom <what>" (or with
// http.ErrAbortHandler for "abort"). Its log goes to the returned buffer.
func panicServer(t testing.TB) (*Server, *lockedBuffer) {
	t.Helper()
	ix := handData(t)
	logs := &lockedBuffer{}
	s := New(func() *index.Index { return ix }, Options{Log: slog.New(slog.NewTextHandler(logs, nil))})
	s.handle("/.panic/:what", func(c call, _ []byte) (result, error) {
		if c.param("what") == "abort" {
			panic(http.ErrAbortHandler)
		}
		panic("boom " + c.param("what"))
	}, false)
	return s, logs
}

// wantInternalError checks a 500 with the JSON body and every usual header.
func wantInternalError(t *testing.T, res *http.Response, body []byte, head bool) {
	t.Helper()
	if res.StatusCode != 500 {
		t.Fatalf("status %d, want 500; body %s", res.StatusCode, body)
	}
	if res.Header.Get("Content-Type") != "application/json" || res.Header.Get("Vary") != "Accept" || res.Header.Get("ETag") != "" {
		t.Errorf("headers %v", res.Header)
	}
	want := `{"message":"internal error"}`
	if res.Header.Get("Content-Length") != strconv.Itoa(len(want)) {
		t.Errorf("Content-Length %q", res.Header.Get("Content-Length"))
	}
	if !head && string(body) != want {
		t.Errorf("body %s, want %s", body, want)
	}
}

// wantPanicLog checks that logs holds exactly n lines, each a panic's.
func wantPanicLog(t *testing.T, logs string, n int, what ...string) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(logs, "\n"), "\n")
	if logs == "" {
		lines = nil
	}
	if len(lines) != n {
		t.Fatalf("%d log lines, want %d:\n%s", len(lines), n, logs)
	}
	for _, l := range lines {
		for _, w := range append([]string{"level=ERROR", `msg="panic serving request"`, "stack=", "server.go", "server_test.go"}, what...) {
			if !strings.Contains(l, w) {
				t.Errorf("log line lacks %q:\n%s", w, l)
			}
		}
	}
}

func TestRecover(t *testing.T) {
	s, logs := panicServer(t)
	serve := func(method, target string) (*http.Response, []byte) {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest(method, target, nil))
		return w.Result(), w.Body.Bytes()
	}
	res, body := serve("GET", "/.panic/one?page=2")
	wantInternalError(t, res, body, false)
	wantPanicLog(t, logs.String(), 1, `panic="boom one"`, "method=GET", "path=/.panic/one", `query="page=2"`, "wrote_header=false")

	res, body = serve("HEAD", "/.panic/two")
	wantInternalError(t, res, body, true)
	if len(body) != 0 {
		t.Errorf("HEAD: %d body bytes", len(body))
	}
	if res, body := serve("GET", "/cve/CVE-2023-0001"); res.StatusCode != 200 || res.Header.Get("ETag") == "" {
		t.Fatalf("after a panic: %d %s", res.StatusCode, body)
	}

	t.Run("abort", func(t *testing.T) {
		// A handler's own http.ErrAbortHandler is net/http's to handle.
		before := logs.String()
		defer func() {
			if v := recover(); v != http.ErrAbortHandler {
				t.Fatalf("recovered %v, want http.ErrAbortHandler", v)
			}
			if logs.String() != before {
				t.Errorf("logged %s", strings.TrimPrefix(logs.String(), before))
			}
		}()
		serve("GET", "/.panic/abort")
	})
}

// writePanicker is a ResponseWriter whose Write panics once the header is
// out; it counts the headers written.
type writePanicker struct {
	http.ResponseWriter
	headers int
}

func (w *writePanicker) WriteHeader(status int) {
	w.headers++
	w.ResponseWriter.WriteHeader(status)
}

func (w *writePanicker) Write(p []byte) (int, error) {
	if w.headers == 0 {
		w.WriteHeader(200)
	}
	panic("boom in Write")
}

func TestRecoverAfterHeader(t *testing.T) {
	s, logs := panicServer(t)
	rec := httptest.NewRecorder()
	w := &writePanicker{ResponseWriter: rec}
	func() {
		defer func() {
			if v := recover(); v != http.ErrAbortHandler {
				t.Fatalf("recovered %v, want http.ErrAbortHandler", v)
			}
		}()
		s.ServeHTTP(w, httptest.NewRequest("GET", "/cve/CVE-2023-0001", nil))
	}()
	if w.headers != 1 || rec.Code != 200 || strings.Contains(rec.Body.String(), "internal error") {
		t.Fatalf("%d headers written, status %d, body %q: want one header, 200, no error body", w.headers, rec.Code, rec.Body)
	}
	wantPanicLog(t, logs.String(), 1, `panic="boom in Write"`, "path=/cve/CVE-2023-0001", "wrote_header=true")
}

func TestRecoverThroughServer(t *testing.T) {
	s, logs := panicServer(t)
	// /.write-panic/ serves through a writer whose Write panics, so the
	// panic comes after the header.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p, ok := strings.CutPrefix(r.URL.Path, "/.write-panic"); ok {
			r.URL.Path, r.URL.RawPath = p, ""
			w = &writePanicker{ResponseWriter: w}
		}
		s.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	get := func(path string) (*http.Response, []byte, error) {
		res, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			return nil, nil, err
		}
		defer res.Body.Close()
		body, err := io.ReadAll(res.Body)
		return res, body, err
	}
	wantOK := func() {
		t.Helper()
		res, body, err := get("/vendors/acme/cve?page=2")
		if err != nil || res.StatusCode != 200 || !json.Valid(body) {
			t.Fatalf("normal request: %v %v %s", err, res, body)
		}
	}
	wantOK()
	var wg sync.WaitGroup
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			res, body, err := get("/.panic/" + strconv.Itoa(i))
			if err != nil {
				t.Errorf("panic %d: %v", i, err)
				return
			}
			wantInternalError(t, res, body, false)
		}(i)
	}
	wg.Wait()
	wantOK()
	wantPanicLog(t, logs.String(), 20, "method=GET")

	// After the header: the connection is cut, never answered twice. A
	// fresh connection, so that the client does not retry the GET.
	tr := &http.Transport{DisableKeepAlives: true}
	defer tr.CloseIdleConnections()
	if res, err := (&http.Client{Transport: tr}).Get(srv.URL + "/.write-panic/cve/CVE-2023-0001"); err == nil {
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err == nil {
			t.Fatalf("a response cut by a panic came through: %d %s", res.StatusCode, body)
		}
	}
	wantOK()
	if n := strings.Count(logs.String(), "wrote_header=true"); n != 1 {
		t.Fatalf("%d panics after the header logged, want 1:\n%s", n, logs.String())
	}
}

// TestPageHeaders checks Link (RFC 8288) and X-Total-Count on paged lists,
// from the fixture's sizes: 42 CVEs, 41 of them acme's, 20 to a page, so
// three pages each.
func TestPageHeaders(t *testing.T) {
	ix := handData(t)
	srv := httptest.NewServer(New(func() *index.Index { return ix }, Options{}))
	defer srv.Close()
	for _, tc := range []struct {
		target, total, link string
	}{
		{"/cve", "42", `</cve?page=1>; rel="first", </cve?page=2>; rel="next", </cve?page=3>; rel="last"`},
		{"/cve?page=2", "42", `</cve?page=1>; rel="first", </cve?page=1>; rel="prev", </cve?page=3>; rel="next", </cve?page=3>; rel="last"`},
		{"/cve?page=3", "42", `</cve?page=1>; rel="first", </cve?page=2>; rel="prev", </cve?page=3>; rel="last"`},
		{"/cve?page=9", "42", `</cve?page=1>; rel="first", </cve?page=3>; rel="prev", </cve?page=3>; rel="last"`},
		{"/vendors/acme/cve?page=2&x=%3E", "41", `</vendors/acme/cve?page=1>; rel="first", </vendors/acme/cve?page=1>; rel="prev", </vendors/acme/cve?page=3>; rel="next", </vendors/acme/cve?page=3>; rel="last"`},
		{"/vendors/a%2Fb/products/x%20y+z%25/cve", "1", `</vendors/a%2Fb/products/x%20y+z%25/cve?page=1>; rel="first", </vendors/a%2Fb/products/x%20y+z%25/cve?page=1>; rel="last"`},
		{"/cwe/CWE-404/cve", "0", ""}, // an unknown CWE: 404, no paging headers
		{"/vendors", "2", `</vendors?page=1>; rel="first", </vendors?page=1>; rel="last"`},
		{"/cve/CVE-2023-0001", "", ""},
		{"/vendors/acme/products", "", ""}, // not paged
		{"/cve?page=0", "", ""},
	} {
		res, err := http.Get(srv.URL + tc.target)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 200 {
			tc.total, tc.link = "", ""
		}
		if got := res.Header.Get("X-Total-Count"); got != tc.total {
			t.Errorf("%s: X-Total-Count %q, want %q", tc.target, got, tc.total)
		}
		if got := res.Header.Get("Link"); got != tc.link {
			t.Errorf("%s: Link\n%s\nwant\n%s", tc.target, got, tc.link)
		}
	}

	// On /cve the band is kept, in lower case, and unknown parameters are
	// dropped; the total is the band's.
	var n int
	for page := 1; ; page++ {
		res, err := http.Get(srv.URL + "/cve?cvss=HiGh&junk=1&page=" + strconv.Itoa(page))
		if err != nil {
			t.Fatal(err)
		}
		var items []json.RawMessage
		err = json.NewDecoder(res.Body).Decode(&items)
		res.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if page == 1 && !strings.HasPrefix(res.Header.Get("Link"), `</cve?cvss=high&page=1>; rel="first"`) {
			t.Errorf("band Link %q", res.Header.Get("Link"))
		}
		if len(items) == 0 {
			if total := res.Header.Get("X-Total-Count"); total != strconv.Itoa(n) {
				t.Errorf("band X-Total-Count %q, counted %d", total, n)
			}
			break
		}
		n += len(items)
	}
}

// TestReplacedIndexIsFreed: once the source returns a new index, the
// server must hold nothing of the old one, even before any request sees
// the new one, or a replica keeps two snapshots in memory after a reload.
func TestReplacedIndexIsFreed(t *testing.T) {
	var cur atomic.Pointer[index.Index]
	old := handData(t)
	cur.Store(old)
	s := New(cur.Load, Options{})
	req := httptest.NewRequest(http.MethodGet, "/cve/CVE-2023-0001", nil)
	s.ServeHTTP(httptest.NewRecorder(), req)
	gone := weak.Make(old)
	old = nil
	cur.Store(handData(t))
	for range 3 {
		runtime.GC()
	}
	if gone.Value() != nil {
		t.Fatal("the replaced index is still reachable from the server")
	}
	runtime.KeepAlive(s)
}
