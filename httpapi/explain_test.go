package httpapi

import (
	"compress/gzip"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/goccy/go-json"
	"github.com/google/go-cmp/cmp"

	"github.com/vulnd/vulnd/index"
	"github.com/vulnd/vulnd/loader"
)

// TestExplainPagesAndLinks serves the NVD sample with its configurations
// as the explain source, two items a page. google/chrome at
// 3.0.193.2-beta is covered by six CVEs, in list order CVE-2019-8075,
// CVE-2023-4863, CVE-2023-1234, CVE-2023-1235, CVE-2023-1236 (ranges
// ending at 87.x, 116.x, 111.x) and CVE-2009-3456 (<= 3.0.195.21, and
// its 3.0.193.2:beta); page 2 holds 1234, Chrome on Android only, and
// 1235, with no platform.
func TestExplainPagesAndLinks(t *testing.T) {
	feed := sharedData(t, "nvd/nvdcve-2.0-sample.json.gz")
	cves, err := loader.ReadFeeds([]string{feed})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := index.Build(&index.Data{CVEs: cves}, index.Meta{ID: "sample"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(feed)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Vulnerabilities []struct {
			CVE json.RawMessage `json:"cve"`
		} `json:"vulnerabilities"`
	}
	if err := json.NewDecoder(z).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	cfgs := map[string][]index.Configuration{}
	for _, v := range doc.Vulnerabilities {
		var id struct{ ID string }
		if err := json.Unmarshal(v.CVE, &id); err != nil {
			t.Fatal(err)
		}
		if cfgs[id.ID], err = index.DecodeConfigurations(v.CVE); err != nil {
			t.Fatal(err)
		}
	}
	ix.SetExplainSources(index.ExplainSources{Configurations: func(name string) ([]index.Configuration, bool) {
		c, ok := cfgs[name]
		return c, ok
	}})
	srv := httptest.NewServer(New(func() *index.Index { return ix }, Options{PageSize: 2}))
	t.Cleanup(srv.Close)

	const path = "/vendors/google/products/chrome/explain"
	res, body := do(t, srv, http.MethodGet, path+"?version=3.0.193.2-beta&page=2", nil)
	if res.StatusCode != 200 {
		t.Fatalf("status %d: %s", res.StatusCode, body)
	}
	if got := res.Header.Get("X-Total-Count"); got != "6" {
		t.Errorf("X-Total-Count %q, want 6", got)
	}
	wantLink := `<` + path + `?version=3.0.193.2-beta&page=1>; rel="first", <` + path + `?version=3.0.193.2-beta&page=1>; rel="prev", <` +
		path + `?version=3.0.193.2-beta&page=3>; rel="next", <` + path + `?version=3.0.193.2-beta&page=3>; rel="last"`
	if got := res.Header.Get("Link"); got != wantLink {
		t.Errorf("Link\n%s\nwant\n%s", got, wantLink)
	}
	type match struct {
		Configuration int      `json:"configuration"`
		Rule          string   `json:"rule"`
		EndExcluding  string   `json:"version_end_excluding"`
		Platforms     []string `json:"platforms"`
	}
	type item struct {
		Name      string  `json:"name"`
		MatchedBy []match `json:"matched_by"`
	}
	var got []item
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	want := []item{
		{"CVE-2023-1234", []match{{0, "range", "111.0.5563.64", []string{"cpe:2.3:o:google:android:-:*:*:*:*:*:*:*"}}}},
		{"CVE-2023-1235", []match{{0, "range", "111.0.5563.64", []string{}}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("page 2 (-want +got):\n%s", diff)
	}

	for target, msg := range map[string]string{
		path:               "version is required",
		path + "?page=0":   "page must be a whole number from 1 to 1000000",
		path + "?version=": "version must be 1 to 256 bytes",
		"/vendors/google/products/x/explain?version=1": "product not found",
		"/vendors/x/products/chrome/explain?version=1": "vendor not found",
	} {
		_, body := do(t, srv, http.MethodGet, target, nil)
		var e struct{ Message string }
		if err := json.Unmarshal(body, &e); err != nil || e.Message != msg {
			t.Errorf("%s: %s, want message %q", target, body, msg)
		}
	}
}
