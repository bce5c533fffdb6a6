package bench

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/goccy/go-json"

	"github.com/vulnd/vulnd/httpapi"
	"github.com/vulnd/vulnd/index"
)

// fakeVulnd answers PickPaths' questions from canned bodies; nvdTotal is
// the number of NVD records.
func fakeVulnd(nvdTotal int) Getter {
	return func(target string, v any) error {
		var body string
		switch {
		case strings.HasPrefix(target, "/cve?page="):
			n, _ := strconv.Atoi(strings.TrimPrefix(target, "/cve?page="))
			body = fmt.Sprintf(`[{"name":"CVE-2024-%04d"},{"name":"CVE-2024-%04d"}]`, 2*n, 2*n+1)
		case strings.HasPrefix(target, "/cve/"):
			body = `{"cpes":[{"vendor":"acme","product":"widget","version":"1.0"}]}`
		case target == "/cwe":
			body = `[{"name":"CWE-79"}]`
		case target == "/reports":
			body = `[{"id":"r1"}]`
		case target == "/reports/r1/alerts":
			body = `[{"id":1}]`
		case target == httpapi.NVDPath+"?resultsPerPage=0":
			body = fmt.Sprintf(`{"resultsPerPage":0,"startIndex":0,"totalResults":%d,"vulnerabilities":[]}`, nvdTotal)
		default:
			return fmt.Errorf("GET %s: status 404", target)
		}
		return json.Unmarshal([]byte(body), v)
	}
}

// TestPickPathsNVD: make bench-load's two classes of NVD's CVE API are
// pages of 2,000 records at startIndex 0, 2000, ... within the records,
// and one record by cveId of the CVEs drawn; a snapshot without NVD
// records is an error that says so.
func TestPickPathsNVD(t *testing.T) {
	const total = 5001 // 3 pages
	classes, err := PickPaths(fakeVulnd(total), index.Counts{CVEs: 100, Vendors: 1, CWEs: 1, Reports: 1}, 300)
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string][]string{}
	var names []string
	for _, c := range classes {
		byName[c.Name] = c.Paths
		names = append(names, c.Name)
	}
	pages, ids := byName["a page of 2,000 records"], byName["one record by cveId"]
	if len(pages) != 300 || len(ids) != 300 {
		t.Fatalf("classes %q: %d pages, %d records by cveId; want 300 each", names, len(pages), len(ids))
	}
	starts := map[int]bool{}
	for _, p := range pages {
		path, query, _ := strings.Cut(p, "?")
		q, err := url.ParseQuery(query)
		start, serr := strconv.Atoi(q.Get("startIndex"))
		if path != httpapi.NVDPath || err != nil || len(q) != 2 || q.Get("resultsPerPage") != "2000" || serr != nil ||
			start%2000 != 0 || start < 0 || start >= total {
			t.Fatalf("page path %q", p)
		}
		starts[start] = true
	}
	if len(starts) != 3 {
		t.Errorf("pages drawn from startIndex %v, want 0, 2000 and 4000", starts)
	}
	for _, p := range ids {
		id, ok := strings.CutPrefix(p, httpapi.NVDPath+"?cveId=")
		if !ok || !strings.HasPrefix(id, "CVE-2024-") {
			t.Fatalf("record path %q", p)
		}
	}
	if _, err := PickPaths(fakeVulnd(0), index.Counts{CVEs: 100, Vendors: 1, CWEs: 1, Reports: 1}, 10); err == nil || !strings.Contains(err.Error(), "no NVD records") {
		t.Errorf("a snapshot without NVD records: %v", err)
	}
}
