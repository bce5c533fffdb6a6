package httpapi

import (
	"bytes"
	"compress/gzip"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/vulnd/vulnd/index"
)

func TestChooseCoding(t *testing.T) {
	for _, tc := range []struct {
		accept []string
		want   coding
	}{
		{nil, identity},
		{[]string{""}, identity},
		{[]string{"identity"}, identity},
		{[]string{"gzip"}, codingGzip},
		{[]string{"x-gzip"}, codingGzip},
		{[]string{"GZIP"}, codingGzip},
		{[]string{"zstd"}, codingZstd},
		{[]string{"gzip, deflate, br, zstd"}, codingZstd}, // a browser's
		{[]string{"gzip, deflate"}, codingGzip},           // curl --compressed, Python requests
		{[]string{"gzip;q=1.0, zstd;q=0.5"}, codingGzip},
		{[]string{"gzip;q=0.5, zstd;q=0.5"}, codingZstd},
		{[]string{"zstd;q=0, gzip"}, codingGzip},
		{[]string{"zstd;q=0", "gzip;q=0"}, identity},
		{[]string{"*"}, codingZstd},
		{[]string{"*;q=0"}, identity},
		{[]string{"gzip;q=0, *"}, codingZstd},
		{[]string{"zstd;q=0, *;q=0.3"}, codingGzip},
		{[]string{"gzip;q=bad"}, identity},
		{[]string{"gzip;q=2"}, identity},
		{[]string{"br, deflate"}, identity},
		{[]string{"deflate", "gzip"}, codingGzip}, // several header lines
		{[]string{" gzip ; q=0.8 ,zstd;Q=0.9"}, codingZstd},
	} {
		if got := chooseCoding(tc.accept); got != tc.want {
			t.Errorf("Accept-Encoding %q: coding %d, want %d", tc.accept, got, tc.want)
		}
	}
}

// decode undoes a response's Content-Encoding.
func decode(t *testing.T, res *http.Response, body []byte) []byte {
	t.Helper()
	switch res.Header.Get("Content-Encoding") {
	case "":
		return body
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		out, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		return out
	case "zstd":
		zr, err := zstd.NewReader(nil)
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		out, err := zr.DecodeAll(body, nil)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	t.Fatalf("Content-Encoding %q", res.Header.Get("Content-Encoding"))
	return nil
}

func TestCompression(t *testing.T) {
	ix := handData(t)
	srv := newTestServer(t, ix)
	const big = "/vendors/acme/cve?page=2" // 20 summaries: over 1 KiB
	const small = "/cve/CVE-2023-0001"
	plain, plainBody := do(t, srv, "GET", big, nil)
	if len(plainBody) < minCompress {
		t.Fatalf("%s is %d bytes: pick a bigger page", big, len(plainBody))
	}
	for _, tc := range []struct {
		accept, want string
	}{
		{"gzip", "gzip"},
		{"gzip, deflate, br, zstd", "zstd"},
		{"zstd;q=0.1, gzip", "gzip"},
		{"br", ""},
		{"identity", ""},
	} {
		t.Run(tc.accept, func(t *testing.T) {
			hdr := map[string]string{"Accept-Encoding": tc.accept}
			res, body := do(t, srv, "GET", big, hdr)
			if res.StatusCode != 200 || res.Header.Get("Content-Encoding") != tc.want {
				t.Fatalf("status %d, Content-Encoding %q, want 200 %q", res.StatusCode, res.Header.Get("Content-Encoding"), tc.want)
			}
			if res.Header.Get("Content-Length") != strconv.Itoa(len(body)) || len(res.TransferEncoding) != 0 {
				t.Errorf("Content-Length %q for %d bytes, Transfer-Encoding %v", res.Header.Get("Content-Length"), len(body), res.TransferEncoding)
			}
			if v := res.Header.Get("Vary"); v != "Accept, Accept-Encoding" {
				t.Errorf("Vary %q", v)
			}
			if tc.want != "" && len(body) >= len(plainBody) {
				t.Errorf("%s body is %d bytes, plain %d", tc.want, len(body), len(plainBody))
			}
			if got := decode(t, res, body); !bytes.Equal(got, plainBody) {
				t.Errorf("decoded body differs from the plain one:\n%s\n%s", got, plainBody)
			}
			// The same page headers, and a tag weak exactly when compressed.
			for _, h := range []string{"Link", "X-Total-Count", "Content-Type", "Last-Modified", "X-Snapshot-Id"} {
				if res.Header.Get(h) != plain.Header.Get(h) {
					t.Errorf("%s %q, plain %q", h, res.Header.Get(h), plain.Header.Get(h))
				}
			}
			wantTag := `"hand"`
			if tc.want != "" {
				wantTag = `W/"hand"`
			}
			if res.Header.Get("ETag") != wantTag {
				t.Errorf("ETag %q, want %q", res.Header.Get("ETag"), wantTag)
			}
			// HEAD has the GET's headers, length included.
			head, headBody := do(t, srv, "HEAD", big, hdr)
			for _, h := range []string{"Content-Encoding", "Content-Length", "ETag", "Vary"} {
				if head.Header.Get(h) != res.Header.Get(h) {
					t.Errorf("HEAD %s %q, GET %q", h, head.Header.Get(h), res.Header.Get(h))
				}
			}
			if len(headBody) != 0 {
				t.Errorf("HEAD body of %d bytes", len(headBody))
			}
			// Either tag revalidates: 304, no body, the tag the 200 had.
			for _, inm := range []string{`"hand"`, `W/"hand"`} {
				hdr["If-None-Match"] = inm
				res, body := do(t, srv, "GET", big, hdr)
				if res.StatusCode != 304 || len(body) != 0 || res.Header.Get("ETag") != wantTag || res.Header.Get("Vary") != "Accept, Accept-Encoding" {
					t.Errorf("If-None-Match %s: %d, %d bytes, ETag %q, Vary %q", inm, res.StatusCode, len(body), res.Header.Get("ETag"), res.Header.Get("Vary"))
				}
			}
		})
	}
	// Small bodies and errors are never compressed and do not vary.
	for _, path := range []string{small, "/cve/CVE-2099-0001", "/nope"} {
		res, body := do(t, srv, "GET", path, map[string]string{"Accept-Encoding": "gzip, zstd"})
		if res.Header.Get("Content-Encoding") != "" || res.Header.Get("Vary") != "Accept" {
			t.Errorf("%s: Content-Encoding %q, Vary %q", path, res.Header.Get("Content-Encoding"), res.Header.Get("Vary"))
		}
		checkHeaders(t, res, body)
	}
}

func TestLastModifiedAndCacheControl(t *testing.T) {
	ix := handData(t) // built at 2026-11-22 00:00:00Z
	srv := httptest.NewServer(New(func() *index.Index { return ix }, Options{CacheControl: "public, max-age=60"}))
	t.Cleanup(srv.Close)
	const path = "/cve/CVE-2023-0001"
	res, _ := do(t, srv, "GET", path, nil)
	if lm := res.Header.Get("Last-Modified"); lm != "Sun, 22 Nov 2026 00:00:00 GMT" {
		t.Errorf("Last-Modified %q", lm)
	}
	if cc := res.Header.Get("Cache-Control"); cc != "public, max-age=60" {
		t.Errorf("Cache-Control %q", cc)
	}
	for _, tc := range []struct {
		hdr  map[string]string
		want int
	}{
		{map[string]string{"If-Modified-Since": "Sun, 22 Nov 2026 00:00:00 GMT"}, 304},
		{map[string]string{"If-Modified-Since": "Mon, 23 Nov 2026 00:00:00 GMT"}, 304},
		{map[string]string{"If-Modified-Since": "Sat, 21 Nov 2026 23:59:59 GMT"}, 200},
		{map[string]string{"If-Modified-Since": "Sunday, 22-Nov-26 00:00:00 GMT"}, 304}, // RFC 850 form
		{map[string]string{"If-Modified-Since": "yesterday"}, 200},
		// If-None-Match wins over If-Modified-Since (RFC 9110, 13.2.2).
		{map[string]string{"If-Modified-Since": "Mon, 23 Nov 2026 00:00:00 GMT", "If-None-Match": `"old"`}, 200},
		{map[string]string{"If-Modified-Since": "Sat, 21 Nov 2026 00:00:00 GMT", "If-None-Match": `"hand"`}, 304},
	} {
		res, body := do(t, srv, "GET", path, tc.hdr)
		if res.StatusCode != tc.want {
			t.Errorf("%v: %d, want %d", tc.hdr, res.StatusCode, tc.want)
		}
		if res.StatusCode == 304 && (len(body) != 0 || res.Header.Get("Cache-Control") == "" || res.Header.Get("ETag") == "") {
			t.Errorf("%v: 304 with %d bytes, headers %v", tc.hdr, len(body), res.Header)
		}
	}
	// Errors carry none of a success's cache headers, and a date never
	// turns an error into a 304.
	res, _ = do(t, srv, "GET", "/cve/CVE-2099-0001", map[string]string{"If-Modified-Since": "Mon, 23 Nov 2026 00:00:00 GMT"})
	if res.StatusCode != 404 {
		t.Errorf("missing CVE with If-Modified-Since: %d", res.StatusCode)
	}
	for _, h := range []string{"Last-Modified", "Cache-Control", "ETag"} {
		if res.Header.Get(h) != "" {
			t.Errorf("404 has %s %q", h, res.Header.Get(h))
		}
	}
}

func TestSnapshotIDHeader(t *testing.T) {
	ix := handData(t)
	srv := newTestServer(t, ix)
	for _, tc := range []struct{ method, path string }{
		{"GET", "/cve/CVE-2023-0001"}, {"GET", "/cve?page=2"}, {"HEAD", "/vendors"},
		{"GET", "/cve/CVE-2099-0001"}, {"GET", "/nope"}, {"POST", "/cve"}, {"GET", "/cve?page=0"},
		{"GET", "/" + strings.Repeat("a", maxPath+1)},
	} {
		res, _ := do(t, srv, tc.method, tc.path, nil)
		if id := res.Header.Get("X-Snapshot-Id"); id != "hand" {
			t.Errorf("%s %.40s: %d, X-Snapshot-Id %q, want hand", tc.method, tc.path, res.StatusCode, id)
		}
	}
	// No snapshot, no id.
	empty := httptest.NewServer(New(func() *index.Index { return nil }, Options{}))
	defer empty.Close()
	res, _ := do(t, empty, "GET", "/cve", nil)
	if res.StatusCode != 503 || res.Header.Get("X-Snapshot-Id") != "" {
		t.Errorf("no snapshot: %d, X-Snapshot-Id %q", res.StatusCode, res.Header.Get("X-Snapshot-Id"))
	}
}

func TestMetricsAndAccessLog(t *testing.T) {
	ix := handData(t)
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	logs := &lockedBuffer{}
	srv := httptest.NewServer(New(func() *index.Index { return ix }, Options{Metrics: m, AccessLog: slog.New(slog.NewTextHandler(logs, nil))}))
	t.Cleanup(srv.Close)
	// The pages asked again come from the page cache, counted under
	// their routes all the same.
	for _, p := range []string{"/cve/CVE-2023-0001", "/cve/CVE-2023-0001", "/cve/cve-2099-1", "/cve?page=x", "/nope", "/vendors/acme/cve",
		"/vendors/acme/cve", "/vendors/acme/cve", "/vendors/acme/products/widget/cve?version=1.3", "/vendors/acme/products/widget/cve?version=1.3"} {
		do(t, srv, "GET", p, nil)
	}
	do(t, srv, "DELETE", "/cve", nil)
	do(t, srv, "POST", "/cve/CVE-2023-0001", nil)
	for _, tc := range []struct {
		route, code string
		want        float64
	}{
		{"/cve/:name", "200", 2},
		{"/cve/:name", "404", 1},
		{"/cve", "400", 1},
		{"/vendors/:vendor/cve", "200", 3},
		{"/vendors/:vendor/products/:product/cve", "200", 2},
		{routeNone, "404", 1},
		// A 405 is counted under the route its path matched.
		{"/cve", "405", 1},
		{"/cve/:name", "405", 1},
		{routeNone, "405", 0},
		{"/cwe", "200", 0},
	} {
		if got := testutil.ToFloat64(m.requests.WithLabelValues(tc.route, tc.code)); got != tc.want {
			t.Errorf("requests{route=%q,code=%q} = %v, want %v", tc.route, tc.code, got, tc.want)
		}
	}
	if n := testutil.CollectAndCount(m.latency, "vulnd_http_request_duration_seconds"); n < 4 {
		t.Errorf("%d latency series, want one per route seen", n)
	}
	ch := make(chan prometheus.Metric, 100)
	m.latency.Collect(ch)
	close(ch)
	var count uint64
	for h := range ch {
		var pb dto.Metric
		if err := h.Write(&pb); err != nil {
			t.Fatal(err)
		}
		count += pb.GetHistogram().GetSampleCount()
	}
	if count != 12 {
		t.Errorf("latency histograms hold %d samples, want 12", count)
	}
	if got := m.inFlight.Load(); got != 0 {
		t.Errorf("in flight after all answered: %v", got)
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 12 {
		t.Fatalf("%d access log lines, want 12:\n%s", len(lines), logs)
	}
	for _, w := range []string{"msg=request", "method=GET", "path=/cve/CVE-2023-0001", "status=200", "bytes=", "duration=", "remote=127.0.0.1"} {
		if !strings.Contains(lines[0], w) {
			t.Errorf("access log line lacks %q: %s", w, lines[0])
		}
	}
	if !strings.Contains(lines[10], "method=DELETE") || !strings.Contains(lines[10], "status=405") {
		t.Errorf("DELETE line: %s", lines[10])
	}
	if !strings.Contains(lines[9], "path=/vendors/acme/products/widget/cve") || !strings.Contains(lines[9], `query="version=1.3"`) {
		t.Errorf("a kept page's line: %s", lines[9])
	}
}

// TestCompressedCache: a compressed body comes from the cache only for the
// same target of the same snapshot.
func TestCompressedCache(t *testing.T) {
	var cur atomic.Pointer[index.Index]
	cur.Store(handData(t))
	srv := httptest.NewServer(New(cur.Load, Options{}))
	defer srv.Close()
	check := func(target, accept string) {
		t.Helper()
		_, plain := do(t, srv, "GET", target, nil)
		for i := 0; i < 2; i++ { // the second is a cache hit
			res, body := do(t, srv, "GET", target, map[string]string{"Accept-Encoding": accept})
			if res.Header.Get("Content-Encoding") != accept {
				t.Fatalf("%s %s: not compressed (%d bytes): pick a bigger body", target, accept, len(plain))
			}
			if got := decode(t, res, body); !bytes.Equal(got, plain) {
				t.Fatalf("%s %s (try %d): decoded body differs from the plain one", target, accept, i)
			}
		}
	}
	for _, accept := range []string{"gzip", "zstd"} {
		check("/vendors/acme/cve?page=1", accept)
		check("/vendors/acme/cve?page=2", accept)
		check("/vendors/acme/cve", accept)
		check("/cve?page=1", accept)
	}
	// Another snapshot: other bodies, over 1 KiB, at the same targets.
	other := otherIndex(t)
	cur.Store(other)
	for _, accept := range []string{"gzip", "zstd"} {
		check("/cve?page=1", accept)
		check("/vendors/acme/cve?page=1", accept)
	}
}

// otherIndex is a snapshot other than handData's: 30 other CVEs of
// acme's widget, so its bodies at handData's list targets differ (and
// are over 1 KiB).
func otherIndex(t *testing.T) *index.Index {
	t.Helper()
	d := &index.Data{}
	for i := 1; i <= 30; i++ {
		d.CVEs = append(d.CVEs, index.CVE{Name: "CVE-2025-" + strconv.Itoa(1000+i), Summary: "other " + strconv.Itoa(i),
			CreatedAt: "2025-01-01 00:00:00Z", UpdatedAt: "2025-01-01 00:00:00Z",
			CPEs: []index.CPE{{ID: 1, URI: "cpe:2.3:a:acme:widget:1:*:*:*:*:*:*:*", Vendor: "acme", Product: "widget", Version: "1"}}})
	}
	other, err := index.Build(d, index.Meta{ID: "other"})
	if err != nil {
		t.Fatal(err)
	}
	return other
}

func TestZcacheBound(t *testing.T) {
	z := newZcache(`"x"`)
	big := make([]byte, zcacheMax/3)
	for i := 0; i < 2; i++ {
		if !z.put(codingGzip, "/t"+strconv.Itoa(i), big) {
			t.Fatalf("put %d refused", i)
		}
	}
	if z.put(codingZstd, "/t9", big) {
		t.Error("a put beyond zcacheMax was taken")
	}
	if b, ok := z.get(codingGzip, "/t1"); !ok || len(b) != len(big) {
		t.Error("a kept body is gone")
	}
	if _, ok := z.get(codingZstd, "/t1"); ok {
		t.Error("a body found under another coding")
	}
}
