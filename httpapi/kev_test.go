package httpapi

import (
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vulnd/vulnd/index"
)

// The 8 CVEs of the real sample with cisaExploitAdd, in list order
// (lastModified descending), by hand from the records, with the score
// of their newest metric and their vendors:
//
//	CVE-2021-44228 2026-06-17 10.0 apache, apple, ... (Log4Shell)
//	CVE-2024-53104 2025-11-03  7.8 linux (CWE-787)
//	CVE-2022-0847  2025-10-21  7.8 fedoraproject, linux, ... (CWE-665)
//	CVE-2017-0144  2025-10-21  8.8 microsoft, siemens
//	CVE-2024-1086  2024-06-27  7.8 fedoraproject, linux, redhat (CWE-416)
//	CVE-2023-41992 2023-11-07  7.8 apple
//	CVE-2021-41773 2023-11-07  7.5 apache, ... (CWE-22)
//	CVE-2023-4863  2023-10-28  8.8 debian, google, ... (CWE-787)
var sampleKEV = []string{"CVE-2021-44228", "CVE-2024-53104", "CVE-2022-0847", "CVE-2017-0144",
	"CVE-2024-1086", "CVE-2023-41992", "CVE-2021-41773", "CVE-2023-4863"}

// TestKEVFilter: kev=true|false on the four CVE lists, alone and with
// the other filters.
func TestKEVFilter(t *testing.T) {
	srv := newTestServer(t, sampleIndex(t))
	for _, tc := range []struct {
		target string
		want   []string
	}{
		{"/cve?kev=true&page=1", sampleKEV[:8]},
		{"/cve?kev=TRUE&cvss=critical", []string{"CVE-2021-44228"}},
		{"/cve?kev=true&cvss=high", sampleKEV},
		{"/cve?kev=true&cvss=medium", []string{}},
		{"/cve?kev=true&cwe=CWE-787", []string{"CVE-2024-53104", "CVE-2023-4863"}},
		{"/cve?kev=true&vendor=linux", []string{"CVE-2024-53104", "CVE-2022-0847", "CVE-2024-1086"}},
		{"/cve?kev=true&vendor=linux&product=linux_kernel&version=6.8-rc1", []string{"CVE-2024-53104", "CVE-2024-1086"}},
		{"/cve?kev=false&vendor=linux&product=linux_kernel&version=5.5", []string{"CVE-2024-26581"}},
		{"/cve?kev=true&updated_since=2025-01-01T00:00:00Z", []string{"CVE-2021-44228", "CVE-2024-53104", "CVE-2022-0847", "CVE-2017-0144"}},
		{"/cve?kev=true&published_since=2023-09-15T00:00:00Z", []string{"CVE-2024-53104", "CVE-2024-1086", "CVE-2023-41992"}},
		{"/cwe/CWE-416/cve?kev=true", []string{"CVE-2024-1086"}},
		{"/vendors/apple/cve?kev=True", []string{"CVE-2021-44228", "CVE-2023-41992"}}, // Log4Shell names apple too
		{"/vendors/linux/products/linux_kernel/cve?kev=true&version=5.5", []string{"CVE-2024-53104", "CVE-2024-1086"}},
	} {
		res, ok := wantNames(t, srv, tc.target, tc.want)
		if !ok {
			continue
		}
		if got := res.Header.Get("X-Total-Count"); got != strconv.Itoa(len(tc.want)) {
			t.Errorf("%s: X-Total-Count %s, want %d", tc.target, got, len(tc.want))
		}
	}
	// kev=false is every other CVE: 186 - 8.
	res, _ := do(t, srv, "GET", "/cve?kev=false", nil)
	if got := res.Header.Get("X-Total-Count"); got != "178" {
		t.Errorf("/cve?kev=false: X-Total-Count %s, want 178", got)
	}
	for _, target := range []string{"/cve?kev=yes", "/cve?kev=", "/cve?kev=1", "/cwe/CWE-79/cve?kev=no", "/vendors/linux/cve?kev=%20true",
		"/vendors/linux/products/linux_kernel/cve?kev=t"} {
		res, body := do(t, srv, "GET", target, nil)
		if res.StatusCode != 400 || string(body) != `{"message":"kev must be true or false"}` {
			t.Errorf("%s: %d %s, want 400 naming kev", target, res.StatusCode, body)
		}
	}
}

// TestKEVNDJSONAndLink: kev holds in the NDJSON export and the Link
// header keeps it.
func TestKEVNDJSONAndLink(t *testing.T) {
	ix := sampleIndex(t)
	srv := newTestServer(t, ix)
	var want strings.Builder
	for _, name := range sampleKEV {
		b, _ := ix.CVE(name)
		want.Write(b)
		want.WriteByte('\n')
	}
	res, body := do(t, srv, "GET", "/cve?format=ndjson&kev=true", nil)
	if res.StatusCode != 200 || res.Header.Get("X-Total-Count") != "8" {
		t.Errorf("ndjson: %d, X-Total-Count %q", res.StatusCode, res.Header.Get("X-Total-Count"))
	}
	if diff := cmp.Diff(want.String(), string(body)); diff != "" {
		t.Errorf("ndjson (-want +got):\n%s", diff)
	}
	paged := httptest.NewServer(New(func() *index.Index { return ix }, Options{PageSize: 3}))
	defer paged.Close()
	res, body = do(t, paged, "GET", "/cve?kev=TRUE&cvss=high&page=2", nil)
	if diff := cmp.Diff(sampleKEV[3:6], names(t, body)); diff != "" {
		t.Errorf("page 2 (-want +got):\n%s", diff)
	}
	const link = `</cve?cvss=high&kev=true&page=1>; rel="first", </cve?cvss=high&kev=true&page=1>; rel="prev", ` +
		`</cve?cvss=high&kev=true&page=3>; rel="next", </cve?cvss=high&kev=true&page=3>; rel="last"`
	if got := res.Header.Get("Link"); got != link {
		t.Errorf("Link\n%s\nwant\n%s", got, link)
	}
}

// TestDetailsRoute: /cve/{name}/details gets HEAD, ETag/304, 405 and
// compression like every route.
func TestDetailsRoute(t *testing.T) {
	srv := newTestServer(t, sampleIndex(t))
	res, body := do(t, srv, "GET", "/cve/CVE-2021-44228/details", nil)
	if res.StatusCode != 200 || len(body) < 1024 {
		t.Fatalf("GET: %d, %d bytes", res.StatusCode, len(body))
	}
	etag := res.Header.Get("ETag")
	head, hbody := do(t, srv, "HEAD", "/cve/CVE-2021-44228/details", nil)
	if head.StatusCode != 200 || len(hbody) != 0 || head.Header.Get("Content-Length") != strconv.Itoa(len(body)) || head.Header.Get("ETag") != etag {
		t.Errorf("HEAD: %d, %d body bytes, Content-Length %s, ETag %s", head.StatusCode, len(hbody), head.Header.Get("Content-Length"), head.Header.Get("ETag"))
	}
	res, _ = do(t, srv, "GET", "/cve/CVE-2021-44228/details", map[string]string{"If-None-Match": etag})
	if res.StatusCode != 304 {
		t.Errorf("If-None-Match: %d, want 304", res.StatusCode)
	}
	res, body = do(t, srv, "DELETE", "/cve/CVE-2021-44228/details", nil)
	if res.StatusCode != 405 || res.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("DELETE: %d Allow %q %s", res.StatusCode, res.Header.Get("Allow"), body)
	}
	res, _ = do(t, srv, "GET", "/cve/CVE-2021-44228/details", map[string]string{"Accept-Encoding": "gzip"})
	if res.Header.Get("Content-Encoding") != "gzip" {
		t.Errorf("Accept-Encoding gzip: Content-Encoding %q", res.Header.Get("Content-Encoding"))
	}
}
