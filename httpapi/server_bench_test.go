package httpapi

import (
	"net/http"
	"testing"

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
// included, for one single-item endpoint, one page and one error.
func BenchmarkServe(b *testing.B) {
	ix := handData(b)
	s := New(func() *index.Index { return ix }, Options{})
	for _, target := range []string{"/cve/CVE-2023-0001", "/vendors/acme/cve?page=2", "/cve/CVE-2099-0001"} {
		b.Run(target, func(b *testing.B) {
			req, err := http.NewRequest(http.MethodGet, "http://x"+target, nil)
			if err != nil {
				b.Fatal(err)
			}
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
