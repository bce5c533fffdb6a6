package httpapi

import (
	"math/rand/v2"
	"net/http"
	"strconv"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vulnd/vulnd/index"
)

// benchWriter is a ResponseWriter that keeps nothing but the status and
// reuses its header map, so a benchmark measures the server alone.
type benchWriter struct {
	hdr    http.Header
	status int
	n      int
}

func (w *benchWriter) Header() http.Header { return w.hdr }

func (w *benchWriter) WriteHeader(status int) { w.status = status }

func (w *benchWriter) Write(p []byte) (int, error) {
	w.n += len(p)
	return len(p), nil
}

// BenchmarkServe measures ServeHTTP, recover wrapper and length checks
// included, for one single-item endpoint, one page, one page of a
// product's CVEs at a version (make bench-load's weakest class) and one
// error.
// With metrics=on the server counts and times every request as serve
// -admin-addr does, so the two runs show what metrics cost per request.
func BenchmarkServe(b *testing.B) {
	ix := handData(b)
	plain := New(func() *index.Index { return ix }, Options{})
	measured := New(func() *index.Index { return ix }, Options{Metrics: NewMetrics(prometheus.NewRegistry())})
	for _, target := range []string{"/cve/CVE-2023-0001", "/vendors/acme/cve?page=2", "/vendors/acme/products/widget/cve?version=1.3", "/cve/CVE-2099-0001"} {
		for _, s := range []*Server{plain, measured} {
			name := target + "/metrics=off"
			if s.metrics != nil {
				name = target + "/metrics=on"
			}
			b.Run(name, func(b *testing.B) {
				req, err := http.NewRequest(http.MethodGet, "http://x"+target, nil)
				if err != nil {
					b.Fatal(err)
				}
				req.RequestURI = target // as the server sets it
				w := &benchWriter{hdr: http.Header{}}
				b.ReportAllocs()
				for b.Loop() {
					w.n = 0
					s.ServeHTTP(w, req)
				}
				if w.status != 200 && w.status != 404 {
					b.Fatalf("status %d", w.status)
				}
				b.SetBytes(int64(w.n))
			})
		}
	}
}

// TestServeAllocs pins what a request costs in allocations once the
// pools are warm: httprouter's Params slice (Lookup makes one per call) on
// routes with path parameters, and nothing else. A page asked again comes
// from the page cache (pagecache.go), looked up before routing, with its
// Link and X-Total-Count values, which cost two allocations when it was
// composed (see pageHeaderValues): none at all. Content-Type, ETag and Content-Length are shared
// values, never made per request.
func TestServeAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts")
	}
	ix := handData(t)
	plain := New(func() *index.Index { return ix }, Options{})
	// Metrics and the cache header must not cost an allocation.
	measured := New(func() *index.Index { return ix }, Options{Metrics: NewMetrics(prometheus.NewRegistry()), CacheControl: "max-age=60"})
	for _, tc := range []struct {
		target string
		max    float64
	}{
		{"/cve?page=1", 0},
		{"/cve?cvss=high", 0},
		{"/vendors", 0},
		{"/cve/CVE-2023-0001", 1},
		{"/vendors/acme", 1},
		// A kept page is answered before routing: no Params either.
		{"/vendors/acme/cve?page=1", 0},
		{"/vendors/acme/products/widget/cve?version=1.3", 0},
		{"/cve/CVE-2099-0001", 1}, // a 404
	} {
		req, err := http.NewRequest(http.MethodGet, "http://x"+tc.target, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.RequestURI = tc.target // as the server sets it
		for _, s := range []*Server{plain, measured} {
			w := &benchWriter{hdr: http.Header{}}
			s.ServeHTTP(w, req) // warm the pools and header values
			if got := testing.AllocsPerRun(200, func() { s.ServeHTTP(w, req) }); got > tc.max {
				t.Errorf("%s (metrics %v): %.1f allocations per request, want at most %.0f", tc.target, s.metrics != nil, got, tc.max)
			}
		}
	}
}

// BenchmarkServeKeptPages answers 50,000 kept pages in turn, as make
// bench-load's classes ask thousands of targets at random: what the page
// cache's hits cost once their entries are out of the CPU's caches, as
// they are on a busy server.
func BenchmarkServeKeptPages(b *testing.B) {
	ix := handData(b)
	s := New(func() *index.Index { return ix }, Options{})
	const n = 50000
	reqs := make([]*http.Request, n)
	w := &benchWriter{hdr: http.Header{}}
	for i := range reqs {
		target := "/vendors/acme/cve?page=" + strconv.Itoa(i+1)
		req, err := http.NewRequest(http.MethodGet, "http://x"+target, nil)
		if err != nil {
			b.Fatal(err)
		}
		req.RequestURI = target
		reqs[i] = req
		s.ServeHTTP(w, req) // kept
	}
	// Their order in memory is not the order asked.
	rand.New(rand.NewPCG(1, 2)).Shuffle(n, func(i, j int) { reqs[i], reqs[j] = reqs[j], reqs[i] })
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		s.ServeHTTP(w, reqs[i])
		if i++; i == n {
			i = 0
		}
	}
	if w.status != 200 {
		b.Fatalf("status %d", w.status)
	}
}
