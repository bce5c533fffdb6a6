package bench

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/goccy/go-json"

	"github.com/vulnd/vulnd/httpapi"
	"github.com/vulnd/vulnd/index"
)

// biggest returns the name of the item of l (vendors or CWEs) whose CVE
// list, by cves, is longest.
func biggest(b *testing.B, l index.List, cves func(string) (index.CVEList, error)) (string, int) {
	b.Helper()
	best, n := "", -1
	for i := range l.Len() {
		var item struct{ Name string }
		// Summaries of these lists are whole objects.
		if err := json.Unmarshal(l.Item(i), &item); err != nil {
			b.Fatal(err)
		}
		if c, err := cves(item.Name); err == nil && c.Len() > n {
			best, n = item.Name, c.Len()
		}
	}
	return best, n
}

// BenchmarkQuery times the queries of the freshness, filter, search and
// batch features at full scale, each on its largest case: the vendor and
// the CWE with the most CVEs, since-filters that keep a day, a week or
// everything, and so on.
func BenchmarkQuery(b *testing.B) {
	_, ix := snapshot(b)
	s := httpapi.New(func() *index.Index { return ix }, httpapi.Options{})
	vendor, nv := biggest(b, ix.Vendors(), ix.VendorCVEs)
	cwe, nc := biggest(b, ix.CWEs(), ix.CWECVEs)
	st := ix.Status()
	newest := st.NewestUpdate          // "YYYY-MM-DD HH:MM:SSZ"
	day := newest[:8] + "01 00:00:00Z" // the newest month
	b.Logf("largest vendor %s (%d CVEs), largest CWE %s (%d CVEs); newest update %s", vendor, nv, cwe, nc, newest)
	var batch []string
	all := ix.CVEs(index.BandNone)
	for i := 0; i < 100; i++ {
		var c struct{ Name string }
		item := append([]byte(nil), all.Item(i*all.Len()/100)...)
		json.Unmarshal(append(item, '}'), &c)
		batch = append(batch, c.Name)
	}
	q := url.QueryEscape
	for _, tc := range []struct{ name, target, accept string }{
		{"cwe+vendor+cvss", "/cve?cwe=" + cwe + "&vendor=" + q(vendor) + "&cvss=high", ""},
		{"cwe+cvss", "/cve?cwe=" + cwe + "&cvss=high", ""},
		{"updated_since_month", "/cve?updated_since=" + q(day), ""},
		{"published_since_month", "/cve?published_since=" + q(day), ""},
		{"published_since_all", "/cve?published_since=1990-01-01T00:00:00Z", ""},
		{"vendor_updated_since_month", "/vendors/" + q(vendor) + "/cve?updated_since=" + q(day), ""},
		{"vendor_published_since_all_page_9", "/vendors/" + q(vendor) + "/cve?published_since=1990-01-01T00:00:00Z&page=9", ""},
		{"vendor_search", "/vendors?q=soft", ""},
		{"vendor_search_one_letter", "/vendors?q=a", ""},
		{"product_search", "/vendors/" + q(vendor) + "/products?q=a", ""},
		{"batch_100", "/cve/batch?names=" + strings.Join(batch, ","), ""},
		{"status", "/status", ""},
		{"cve_page_gzip", "/cve?page=2", "gzip"}, // compressed on every request
		{"cve_page_zstd", "/cve?page=2", "zstd"},
		{"cve_page_gzip_cached", "/cve?page=2", "gzip"},
		{"cve_page_zstd_cached", "/cve?page=2", "zstd"},
		{"cve_page_identity", "/cve?page=2", ""},
	} {
		b.Run(tc.name, func(b *testing.B) {
			req, err := http.NewRequest(http.MethodGet, "http://bench"+tc.target, nil)
			if err != nil {
				b.Fatal(err)
			}
			if tc.accept != "" {
				req.Header.Set("Accept-Encoding", tc.accept)
			}
			// A server request has its target as sent; with it, a
			// compressed body is cached (see httpapi's zcache).
			if strings.HasSuffix(tc.name, "_cached") {
				req.RequestURI = tc.target
			}
			w := &writer{hdr: http.Header{}}
			s.ServeHTTP(w, req)
			if w.status != http.StatusOK {
				b.Fatalf("GET %s: %d", tc.target, w.status)
			}
			b.SetBytes(int64(w.n))
			b.ReportAllocs()
			for b.Loop() {
				clear(w.hdr)
				s.ServeHTTP(w, req)
			}
		})
	}
}
