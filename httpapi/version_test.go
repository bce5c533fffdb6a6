package httpapi

import (
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vulnd/vulnd/index"
)

// The CVEs of the real sample (../shared/data/nvd/nvdcve-2.0-sample.json.gz)
// that the version tests name. Their CPEs, by hand from the records (every
// entry vulnerable), and what decides each answer below:
//
//	apache/log4j
//	  CVE-2022-23307 (updated 2026-06-17T04:29:50.500) * [1.2, 2.0)
//	  CVE-2022-23305 (2026-06-17T04:29:50.293)         * [1.2, 1.2.17]
//	  CVE-2021-44228 (2026-06-17T04:12:05)             * [2.0.1, 2.3.1), [2.4.0, 2.12.2), [2.13.0, 2.15.0);
//	                                                   2.0 with updates -, beta9, rc1, rc2
//	  CVE-2022-23302 (2025-07-07)                      * [1.0.1, 1.2.17]
//	  CVE-2023-26464 (2025-02-13)                      * [1.0.4, 2.0)
//	linux/linux_kernel
//	  CVE-2024-53104 (2025-11-03, published 2024-12-02, CWE-787) * [5.5, 5.10.230), [6.2, 6.6.61), [6.7, 6.11.8), ...
//	  CVE-2024-1086 (2024-06-27, published 2024-01-31, CWE-416)  * [3.15, 5.15.149), [6.2, 6.6.15), [6.7, 6.7.3);
//	                                                             6.8 with update rc1
//	  CVE-2024-26581 (2024-06-25, published 2024-02-20, no CWE)  * [5.5.0, 5.10.210), [6.2.0, 6.6.17), [6.7.0, 6.7.5), ...
//
// Scores: 44228 9.3 (v2) or 10.0 (v3.1); 53104, 1086 and 26581 7.8 (v3.1
// only): high whichever metric counts.
const (
	log4shell = "CVE-2021-44228"
	c23307    = "CVE-2022-23307"
	c23305    = "CVE-2022-23305"
	c23302    = "CVE-2022-23302"
	c26464    = "CVE-2023-26464"
	c53104    = "CVE-2024-53104"
	c1086     = "CVE-2024-1086"
	c26581    = "CVE-2024-26581"
)

// TestVersionLists: version on /cve (with vendor and product) and on a
// product's list, alone and with the other filters.
func TestVersionLists(t *testing.T) {
	srv := newTestServer(t, sampleIndex(t))
	const log4j, kernel = "vendor=apache&product=log4j", "vendor=linux&product=linux_kernel"
	for _, tc := range []struct {
		target string
		want   []string
	}{
		// Without version, every CVE naming log4j; with 2.14.1 only
		// Log4Shell's [2.13.0, 2.15.0): no log4j 1.x CVE.
		{"/cve?" + log4j, []string{c23307, c23305, log4shell, c23302, c26464}},
		{"/cve?" + log4j + "&version=2.14.1", []string{log4shell}},
		{"/cve?version=2.14.1&" + log4j, []string{log4shell}},
		// Pre-releases: 44228's 2.0:beta9 and 2.0:rc1 entries; against
		// 23307's and 26464's < 2.0 they count as 2.0.
		{"/cve?" + log4j + "&version=2.0-beta9", []string{log4shell}},
		{"/cve?" + log4j + "&version=2.0+beta9", []string{log4shell}}, // "2.0 beta9": a space separates too
		{"/vendors/apache/products/log4j/cve?version=2.0-beta9", []string{log4shell}},
		{"/vendors/apache/products/log4j/cve?version=2.0-rc1", []string{log4shell}},
		{"/cve?" + log4j + "&version=1.2.17", []string{c23307, c23305, c23302, c26464}},
		// The kernel: 6.8 is named only as 6.8-rc1 (1086); 5.5 is
		// 26581's 5.5.0.
		{"/cve?" + kernel + "&version=6.8", []string{c53104}},
		{"/cve?" + kernel + "&version=6.8-rc1", []string{c53104, c1086}},
		{"/vendors/linux/products/linux_kernel/cve?version=6.8", []string{c53104}},
		{"/vendors/linux/products/linux_kernel/cve?version=6.8-rc1", []string{c53104, c1086}},
		{"/cve?" + kernel + "&version=5.5", []string{c53104, c1086, c26581}},
		{"/vendors/linux/products/linux_kernel/cve?version=6.7", []string{c53104, c1086, c26581}},
		// With cvss, cwe and the since filters.
		{"/cve?" + kernel + "&version=5.5&cvss=high", []string{c53104, c1086, c26581}},
		{"/cve?" + kernel + "&version=5.5&cvss=medium", []string{}},
		{"/cve?cvss=HIGH&" + log4j + "&version=2.0-rc1", []string{log4shell}},
		{"/cve?" + log4j + "&version=2.0-rc1&cvss=low", []string{}},
		{"/cve?" + kernel + "&version=5.5&cwe=CWE-416", []string{c1086}},
		{"/cve?" + kernel + "&version=5.5&cwe=CWE-787&cvss=high", []string{c53104}},
		{"/cve?" + kernel + "&version=6.8&cwe=CWE-416", []string{}},
		{"/cve?" + kernel + "&version=5.5&updated_since=2024-06-26T00:00:00Z", []string{c53104, c1086}},
		{"/cve?" + kernel + "&version=5.5&published_since=2024-02-01+00:00:00Z", []string{c53104, c26581}},
		{"/cve?" + kernel + "&version=5.5&published_since=2024-02-01T00:00:00Z&updated_since=2024-06-26T00:00:00Z&cvss=high", []string{c53104}},
		// Names and versions that select nothing.
		{"/cve?vendor=apache&product=nothing&version=1.0", []string{}},
		{"/cve?vendor=nobody&product=log4j&version=1.0", []string{}},
		{"/cve?" + log4j + "&version=2.15.0", []string{}},
		{"/cve?" + log4j + "&version=*", []string{}},
	} {
		res, ok := wantNames(t, srv, tc.target, tc.want)
		if !ok {
			continue
		}
		if got := res.Header.Get("X-Total-Count"); got != strconv.Itoa(len(tc.want)) {
			t.Errorf("%s: X-Total-Count %s, want %d", tc.target, got, len(tc.want))
		}
	}
}

// TestVersionNDJSONAndPages: version holds in the NDJSON export and in
// every page, and the Link header keeps it.
func TestVersionNDJSONAndPages(t *testing.T) {
	ix := sampleIndex(t)
	srv := newTestServer(t, ix)
	var want strings.Builder
	for _, name := range []string{c53104, c1086} {
		b, err := ix.CVE(name)
		if err != nil {
			t.Fatalf("no %s", name)
		}
		want.Write(b)
		want.WriteByte('\n')
	}
	for _, target := range []string{
		"/cve?vendor=linux&product=linux_kernel&version=6.8-rc1&format=ndjson",
		"/cve?format=ndjson&version=6.8-rc1&product=linux_kernel&vendor=linux&cvss=high&page=7",
		"/vendors/linux/products/linux_kernel/cve?version=6.8-rc1&format=ndjson",
	} {
		res, body := do(t, srv, "GET", target, nil)
		if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/x-ndjson" || res.Header.Get("X-Total-Count") != "2" {
			t.Errorf("%s: %d %q X-Total-Count %q", target, res.StatusCode, res.Header.Get("Content-Type"), res.Header.Get("X-Total-Count"))
		}
		if diff := cmp.Diff(want.String(), string(body)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", target, diff)
		}
	}

	paged := httptest.NewServer(New(func() *index.Index { return ix }, Options{PageSize: 1}))
	defer paged.Close()
	for _, tc := range []struct {
		target string
		want   []string
		link   string
	}{
		{"/cve?version=5.5&product=linux_kernel&vendor=linux&cvss=High&page=2", []string{c1086},
			`</cve?cvss=high&vendor=linux&product=linux_kernel&version=5.5&page=1>; rel="first", ` +
				`</cve?cvss=high&vendor=linux&product=linux_kernel&version=5.5&page=1>; rel="prev", ` +
				`</cve?cvss=high&vendor=linux&product=linux_kernel&version=5.5&page=3>; rel="next", ` +
				`</cve?cvss=high&vendor=linux&product=linux_kernel&version=5.5&page=3>; rel="last"`},
		{"/cve?vendor=apache&product=log4j&version=2.0+beta9&updated_since=2026-01-01T00:00:00Z", []string{log4shell},
			`</cve?vendor=apache&product=log4j&version=2.0+beta9&updated_since=2026-01-01T00%3A00%3A00Z&page=1>; rel="first", ` +
				`</cve?vendor=apache&product=log4j&version=2.0+beta9&updated_since=2026-01-01T00%3A00%3A00Z&page=1>; rel="last"`},
	} {
		res, body := do(t, paged, "GET", tc.target, nil)
		if res.StatusCode != 200 {
			t.Errorf("%s: %d %s", tc.target, res.StatusCode, body)
			continue
		}
		if diff := cmp.Diff(tc.want, names(t, body)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.target, diff)
		}
		if got := res.Header.Get("Link"); got != tc.link {
			t.Errorf("%s: Link\n%s\nwant\n%s", tc.target, got, tc.link)
		}
	}
}

// TestVersionErrors: version without vendor and product, empty or too
// long, or on a list with no product: 400 naming the parameter, whatever
// else is right or wrong after it.
func TestVersionErrors(t *testing.T) {
	srv := newTestServer(t, sampleIndex(t))
	long := strings.Repeat("1", maxVersion+1)
	for _, tc := range []struct{ target, msg string }{
		{"/cve?version=2.0", errVersionNeedsProduct.message},
		{"/cve?version=", errVersionNeedsProduct.message},
		{"/cve?vendor=apache&version=2.0", errVersionNeedsProduct.message},
		{"/cve?vendor=apache&version=2.0&updated_since=bad", errVersionNeedsProduct.message},
		{"/cve?product=log4j&version=2.0", errProductNeedsVendor.message}, // product is checked first
		{"/cve?vendor=apache&product=log4j&version=", errBadVersion.message},
		{"/cve?vendor=apache&product=log4j&version=" + long, errBadVersion.message},
		{"/cve?vendor=apache&product=log4j&version=%ZZ", "version is not valid percent-encoding"},
		{"/cve?cvss=bad&vendor=apache&product=log4j&version=", errBadCVSS.message}, // cvss first
		{"/vendors/apache/products/log4j/cve?version=", errBadVersion.message},
		{"/vendors/apache/products/nothing/cve?version=", errBadVersion.message}, // before the names
		{"/cwe/CWE-79/cve?version=2.0", errVersionNotHere.message},
		{"/cwe/CWE-79/cve?version=", errVersionNotHere.message},
		{"/cwe/CWE-99999/cve?version=2.0", errVersionNotHere.message}, // before the name
		{"/cwe/CWE-79/cve?page=0&version=2.0", errBadPage.message},    // page first
		{"/vendors/apache/cve?version=2.0", errVersionNotHere.message},
		{"/vendors/nobody/cve?version=2.0&format=xml", errVersionNotHere.message},
		{"/vendors/apache/cve?version=%ZZ", "version is not valid percent-encoding"},
	} {
		res, body := do(t, srv, "GET", tc.target, nil)
		want := `{"message":` + strconv.Quote(tc.msg) + `}`
		if res.StatusCode != 400 || string(body) != want {
			t.Errorf("%s: %d %s, want 400 %s", tc.target, res.StatusCode, body, want)
		}
	}
	for _, e := range []*apiError{errVersionNeedsProduct, errVersionNotHere, errBadVersion} {
		if !strings.HasPrefix(e.message, "version ") {
			t.Errorf("%q does not name the parameter first", e.message)
		}
	}
}
