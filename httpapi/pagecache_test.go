package httpapi

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"

	"github.com/vulnd/vulnd/index"
)

// pageAnswer is what a page answer says: its status, body and the
// headers a page has.
type pageAnswer struct {
	Status                          int
	Body                            string
	Total, Link, ETag, ContentType  string
	ContentLength, SnapshotID, Vary string
}

func getPage(t *testing.T, srv *httptest.Server, method, target string) pageAnswer {
	t.Helper()
	res, body := do(t, srv, method, target, nil)
	h := res.Header
	return pageAnswer{res.StatusCode, string(body), h.Get("X-Total-Count"), h.Get("Link"), h.Get("ETag"), h.Get("Content-Type"),
		h.Get("Content-Length"), h.Get("X-Snapshot-Id"), h.Get("Vary")}
}

// TestPageCache: a page asked again is answered from the page cache with
// the same body and headers as when it was composed, for its own target
// only; after a swap the same target answers from the new snapshot, as
// a server that never saw the old one does; HEAD, NDJSON exports and
// errors answer as without a cache.
func TestPageCache(t *testing.T) {
	var cur atomic.Pointer[index.Index]
	cur.Store(handData(t))
	s := New(cur.Load, Options{})
	srv := httptest.NewServer(s)
	defer srv.Close()
	targets := []string{"/cve?page=1", "/cve?page=2", "/cve", "/vendors/acme/cve?page=1", "/vendors/acme/cve?page=2",
		"/cve?cvss=high", "/vendors", "/cwe/CWE-79/cve"}
	first := map[string]pageAnswer{}
	for _, target := range targets {
		first[target] = getPage(t, srv, "GET", target)
		if first[target].Status != 200 || first[target].Total == "" {
			t.Fatalf("%s: %+v, want a page", target, first[target])
		}
	}
	if p := s.pcache.Load(); p == nil || len(p.m) != len(targets) {
		t.Fatalf("the cache holds %v, want the %d pages", p, len(targets))
	}
	for _, target := range targets {
		if diff := cmp.Diff(first[target], getPage(t, srv, "GET", target)); diff != "" {
			t.Errorf("%s from the cache (-composed +cached):\n%s", target, diff)
		}
		head := getPage(t, srv, "HEAD", target)
		want := first[target]
		want.Body = ""
		if diff := cmp.Diff(want, head); diff != "" {
			t.Errorf("HEAD %s (-want +got):\n%s", target, diff)
		}
	}
	if first["/cve?page=1"].Body == first["/cve?page=2"].Body || first["/cve?page=1"].Link == first["/cve?page=2"].Link {
		t.Error("pages 1 and 2 answer alike")
	}
	// An export and an error are never kept.
	for _, target := range []string{"/cve?format=ndjson", "/cve?page=0"} {
		a := getPage(t, srv, "GET", target)
		if b := getPage(t, srv, "GET", target); a.Body != b.Body || (a.Status == 200) == strings.HasSuffix(target, "=0") {
			t.Errorf("%s: %+v then %+v", target, a, b)
		}
		if _, ok := s.pcache.Load().get(target); ok {
			t.Errorf("%s was kept", target)
		}
	}

	// Another snapshot at the same targets answers as a fresh server.
	other := otherIndex(t)
	cur.Store(other)
	fresh := httptest.NewServer(New(func() *index.Index { return other }, Options{}))
	defer fresh.Close()
	for _, target := range targets {
		got, want := getPage(t, srv, "GET", target), getPage(t, fresh, "GET", target)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s after the swap (-fresh server +swapped):\n%s", target, diff)
		}
	}
}

func TestPcacheBound(t *testing.T) {
	p := newPcache(`"x"`)
	big := &result{body: make([]byte, pcacheMax/3), page: 1, total: 1}
	hdrs := &[2]string{"1", "</cve?page=1>"}
	for i := 0; i < 2; i++ {
		if !p.put("/t"+strconv.Itoa(i), big, hdrs, nil) {
			t.Fatalf("put %d refused", i)
		}
	}
	if p.put("/t9", big, hdrs, nil) {
		t.Error("a put beyond pcacheMax was taken")
	}
	if e, ok := p.get("/t1"); !ok || len(e.body) != len(big.body) || *e.headerValues() != *hdrs || e.vals[2] != strconv.Itoa(len(big.body)) {
		t.Error("a kept page is gone")
	}
}

// TestPageCacheBeforeRouting: a kept page, answered before routing, still
// says "Connection: close" while draining and answers If-None-Match with
// 304; other methods at its target are still refused by its route.
func TestPageCacheBeforeRouting(t *testing.T) {
	var draining atomic.Bool
	ix := handData(t)
	s := New(func() *index.Index { return ix }, Options{Draining: draining.Load})
	srv := httptest.NewServer(s)
	defer srv.Close()
	const target = "/vendors/acme/products/widget/cve?version=1.3"
	first, _ := do(t, srv, "GET", target, nil)
	if _, ok := s.pcache.Load().get(target); !ok || first.StatusCode != 200 {
		t.Fatalf("%s: %d, not kept", target, first.StatusCode)
	}
	draining.Store(true)
	res, _ := do(t, srv, "GET", target, nil)
	if !res.Close {
		t.Error("a kept page while draining: no Connection: close")
	}
	draining.Store(false)
	res, body := do(t, srv, "GET", target, map[string]string{"If-None-Match": first.Header.Get("ETag")})
	if res.StatusCode != 304 || len(body) != 0 {
		t.Errorf("If-None-Match on a kept page: %d, %d bytes", res.StatusCode, len(body))
	}
	res, _ = do(t, srv, "POST", target, nil)
	if res.StatusCode != 405 || res.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST on a kept page's target: %d, Allow %q", res.StatusCode, res.Header.Get("Allow"))
	}
}

// TestPageCacheSwaps: clients asking for pages, kept or not, while the
// snapshot is swapped back and forth get, every time, one snapshot's
// answer whole: the body, X-Total-Count, Link and Content-Length of the
// snapshot its ETag and X-Snapshot-Id name, never one kept for the other.
// Run with -race (make test), it also checks that the cache is safe for
// concurrent use.
func TestPageCacheSwaps(t *testing.T) {
	a, b := handData(t), otherIndex(t)
	targets := []string{"/cve?page=1", "/cve?page=2", "/vendors/acme/cve?page=1", "/vendors/acme/products/widget/cve?version=1",
		"/cve?cvss=high", "/vendors/acme/products/widget/cve"}
	// What each snapshot answers, from a server that never saw the other.
	want := map[string]pageAnswer{}
	for _, ix := range []*index.Index{a, b} {
		fresh := httptest.NewServer(New(func() *index.Index { return ix }, Options{}))
		for _, target := range targets {
			want[ix.ETag()+target] = getPage(t, fresh, "GET", target)
		}
		fresh.Close()
	}
	var cur atomic.Pointer[index.Index]
	cur.Store(a)
	srv := httptest.NewServer(New(cur.Load, Options{}))
	defer srv.Close()
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if i%2 == 0 {
				cur.Store(b)
			} else {
				cur.Store(a)
			}
			runtime.Gosched()
		}
	}()
	errs := make(chan string, 4)
	for c := 0; c < 4; c++ {
		go func() {
			for i := 0; i < 150; i++ {
				target := targets[(c+i)%len(targets)]
				got := getPage(t, srv, "GET", target)
				if diff := cmp.Diff(want[got.ETag+target], got); diff != "" {
					errs <- target + " (-that snapshot's answer +got):\n" + diff
					return
				}
			}
			errs <- ""
		}()
	}
	for c := 0; c < 4; c++ {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
	close(stop)
	<-done
}

// TestPageEntryLayout: a kept page's Content-Length and X-Total-Count
// values follow its target in the entry's one string, and Link comes
// last, so that a hit, whose map lookup has just read the target, finds
// the two short values on the same cache line (see pageEntry).
func TestPageEntryLayout(t *testing.T) {
	const target = "/vendors/acme/products/widget/cve?version=1.3"
	res := &result{body: make([]byte, 12345), page: 1, total: 27}
	hdrs := &[2]string{"27", `</vendors/acme/products/widget/cve?version=1.3&page=1>; rel="first", </vendors/acme/products/widget/cve?version=1.3&page=2>; rel="last"`}
	key, e := newPageEntry(target, res, hdrs, nil)
	if key != target || e.vals[2] != "12345" || *e.headerValues() != *hdrs {
		t.Fatalf("entry %q: %q", key, e.vals)
	}
	at := func(s string) uintptr { return uintptr(unsafe.Pointer(unsafe.StringData(s))) }
	next := at(key) + uintptr(len(key))
	for i, v := range []string{e.vals[2], e.vals[0], e.vals[1]} {
		if at(v) != next {
			t.Fatalf("value %d (%q) is not next in the entry's string after the target", i, v)
		}
		next += uintptr(len(v))
	}
}

// TestKeptPageTakesNoBuffer: a kept page sent as it is (no compression)
// takes no buffers from serve's pool; a page composed does.
func TestKeptPageTakesNoBuffer(t *testing.T) {
	ix := handData(t)
	s := New(func() *index.Index { return ix }, Options{})
	const target = "/vendors/acme/products/widget/cve?version=1.3"
	req := httptest.NewRequest("GET", target, nil)
	w := &benchWriter{hdr: http.Header{}}
	s.ServeHTTP(w, req) // composed and kept
	if _, ok := s.pcache.Load().get(target); !ok || w.status != 200 {
		t.Fatalf("%s: %d, not kept", target, w.status)
	}
	// An empty pool that counts what it makes: each Get finds it empty.
	saved := bufPool.New
	defer func() { bufPool.New = saved }()
	var made int
	bufPool.New = func() any { made++; return &buffers{} }
	runtime.GC()
	runtime.GC() // a pool is emptied over two collections
	for range 3 {
		w.hdr = http.Header{}
		s.ServeHTTP(w, req)
		if w.status != 200 {
			t.Fatalf("status %d", w.status)
		}
	}
	if made != 0 {
		t.Errorf("a kept page sent as it is took buffers from the pool (%d made)", made)
	}
	// A page composed does take them.
	s.ServeHTTP(w, httptest.NewRequest("GET", "/vendors/acme/cve?page=2", nil))
	if w.status != 200 || made != 1 {
		t.Errorf("a page composed: status %d, %d buffers made, want 1", w.status, made)
	}
}
