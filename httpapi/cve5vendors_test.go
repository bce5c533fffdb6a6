package httpapi

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vulnd/vulnd/index"
)

// TestCVE5VendorsAndVersions: on the real sample with the CVE JSON 5
// records of ../shared/data/cve5, the CVEs NVD has not analysed (no
// configurations in the sample's NVD records) are listed under the
// vendors and products of their JSON 5 entries, and ?version= follows the
// entries' statuses. Expectations by hand from the records:
//
//   - CVE-2024-47177 (vulnrichment): the CNA's OpenPrinting/cups-filters,
//     {"version": "<= 2.0.1", "status": "affected"}, no default; the
//     CISA-ADP's cpe:2.3:a:openprinting:cpdb-libs:*, {"version": "0",
//     "lessThanOrEqual": "2.0.1", "status": "affected"}, default unknown.
//     No other record names openprinting.
//   - CVE-2023-5631 (cvelistV5): Roundcube/Roundcubemail, default
//     unaffected: 1.6.0 <= X < 1.6.3, 1.5.0 <= X < 1.5.4, 1.4.0 <= X <
//     1.5.14 affected, then 1.6.4, 1.5.5, 1.5.15 unaffected. No alias
//     names it: roundcube/roundcubemail. 1.5.3: the second object;
//     1.5.10: the third (as the record says, though 1.5.5 is fixed);
//     1.6.4: no range holds it, the fourth object says unaffected.
//   - CVE-2025-1094 (cvelistV5): vendor n/a, product PostgreSQL, default
//     unaffected, 17 <= X < 17.3, 16 <= X < 16.7, 15 <= X < 15.11, 14 <=
//     X < 14.16, 0 <= X < 13.19: the default alias */postgresql gives
//     postgresql/postgresql; no vendor "n/a" or "n_a".
//
// None of the three is in the sample's KEV (NVD's records carry no
// cisaExploitAdd for them).
func TestCVE5VendorsAndVersions(t *testing.T) {
	ix := sampleCVE5Index(t)
	srv := newTestServer(t, ix)
	const (
		cups      = "CVE-2024-47177"
		roundcube = "CVE-2023-5631"
		pg        = "CVE-2025-1094"
	)
	for _, tc := range []struct {
		target string
		want   []string
	}{
		{"/vendors/openprinting/cve", []string{cups}},
		{"/vendors/openprinting/products/cups-filters/cve", []string{cups}},
		{"/vendors/openprinting/products/cpdb-libs/cve", []string{cups}},
		{"/vendors/openprinting/products/cups-filters/cve?version=2.0.1", []string{cups}},
		{"/vendors/openprinting/products/cups-filters/cve?version=1.28.17", []string{cups}},
		{"/vendors/openprinting/products/cups-filters/cve?version=2.0.1-rc1", []string{cups}},
		{"/vendors/openprinting/products/cups-filters/cve?version=2.0.2", []string{}},
		{"/vendors/openprinting/products/cpdb-libs/cve?version=0", []string{cups}},
		{"/vendors/openprinting/products/cpdb-libs/cve?version=2.0.1", []string{cups}},
		{"/vendors/openprinting/products/cpdb-libs/cve?version=2.0.2", []string{}},
		{"/vendors/roundcube/products/roundcubemail/cve", []string{roundcube}},
		{"/vendors/roundcube/products/roundcubemail/cve?version=1.5.3", []string{roundcube}},
		{"/vendors/roundcube/products/roundcubemail/cve?version=1.5.10", []string{roundcube}},
		{"/vendors/roundcube/products/roundcubemail/cve?version=1.6.2", []string{roundcube}},
		{"/vendors/roundcube/products/roundcubemail/cve?version=1.6.4", []string{}},
		{"/vendors/roundcube/products/roundcubemail/cve?version=1.3.9", []string{}},
		{"/vendors/postgresql/products/postgresql/cve?version=16.6", []string{pg}},
		{"/vendors/postgresql/products/postgresql/cve?version=13.5", []string{pg}},
		{"/vendors/postgresql/products/postgresql/cve?version=16.7", []string{}},
		{"/vendors/postgresql/products/postgresql/cve?version=17.3", []string{}},
		// The CVE lists with filters, and KEV, work alike.
		{"/cve?vendor=openprinting&product=cups-filters&version=2.0.1", []string{cups}},
		{"/cve?vendor=openprinting&product=cups-filters&version=2.0.2", []string{}},
		{"/cve?vendor=openprinting&product=cpdb-libs&version=1.0&kev=false", []string{cups}},
		{"/cve?vendor=openprinting&product=cpdb-libs&version=1.0&kev=true", []string{}},
		{"/cve?vendor=roundcube&product=roundcubemail&version=1.5.10", []string{roundcube}},
		{"/cve?vendor=roundcube", []string{roundcube}},
		{"/vendors/roundcube/products/roundcubemail/cve?version=1.5.3&kev=false", []string{roundcube}},
		{"/vendors/roundcube/products/roundcubemail/cve?version=1.5.3&kev=true", []string{}},
	} {
		wantNames(t, srv, tc.target, tc.want)
	}

	// The vendors, their products (no versions from entries) and search.
	for _, tc := range []struct{ target, want string }{
		{"/vendors/openprinting", `{"name":"openprinting","human_name":"Openprinting","products":["cpdb-libs","cups-filters"]}`},
		{"/vendors/openprinting/products/cups-filters", `{"name":"cups-filters","human_name":"Cups-filters","versions":[]}`},
		{"/vendors/roundcube/products", `[{"name":"roundcubemail","human_name":"Roundcubemail"}]`},
		{"/vendors?q=openprint", `[{"name":"openprinting","human_name":"Openprinting"}]`},
		{"/vendors/openprinting/products?q=cpdb", `[{"name":"cpdb-libs","human_name":"Cpdb-libs"}]`},
	} {
		res, body := do(t, srv, "GET", tc.target, nil)
		if res.StatusCode != 200 || string(body) != tc.want {
			t.Errorf("%s: %d\n%s\nwant\n%s", tc.target, res.StatusCode, body, tc.want)
		}
	}
	for _, target := range []string{"/vendors/n_a", "/vendors/n%2Fa", "/vendors/unknown"} {
		if res, body := do(t, srv, "GET", target, nil); res.StatusCode != 404 {
			t.Errorf("%s: %d %s, want 404", target, res.StatusCode, body)
		}
	}

	// NDJSON: the same CVE, as its body and a newline.
	b, _ := ix.CVE(cups)
	res, body := do(t, srv, "GET", "/cve?vendor=openprinting&product=cups-filters&version=2.0.1&format=ndjson", nil)
	if res.StatusCode != 200 || string(body) != string(b)+"\n" {
		t.Errorf("ndjson: %d %s, want %s", res.StatusCode, body, b)
	}
	// Batch: the record-listed CVE is served whole.
	res, body = do(t, srv, "GET", "/cve/batch?names="+cups+","+roundcube, nil)
	var batch struct {
		CVEs    []struct{ Name string }
		Missing []string
	}
	if err := json.Unmarshal(body, &batch); err != nil || res.StatusCode != 200 {
		t.Fatalf("batch: %d %s", res.StatusCode, body)
	}
	if got := []string{batch.CVEs[0].Name, batch.CVEs[1].Name}; !cmp.Equal(got, []string{cups, roundcube}) || len(batch.Missing) != 0 {
		t.Errorf("batch: %v, missing %v", got, batch.Missing)
	}
}

// TestStatusProductsFromEntries: /status counts, among the CVEs without
// any CPE, those with a vendor and product from their JSON 5 entries and
// those still without; share_without_cpe keeps counting every CVE
// without a CPE.
func TestStatusProductsFromEntries(t *testing.T) {
	vendor, product := "ACME", "Widget"
	entry := []index.AffectedEntry{{Source: "cna", Vendor: &vendor, Product: &product,
		Versions: []index.AffectedVersion{{Version: "1.0", Status: "affected"}}}}
	keys := []index.EntryKey{{Vendor: "acme", Product: "widget", Entries: []int{0}}}
	cve := func(name string) index.CVE {
		return index.CVE{Name: name, Summary: "s", CreatedAt: "2024-01-01 00:00:00Z", UpdatedAt: "2024-01-01 00:00:00Z", CVSS: index.CVSS{Score: 5}}
	}
	a, b, c, d := cve("CVE-2024-0001"), cve("CVE-2024-0002"), cve("CVE-2024-0003"), cve("CVE-2024-0004")
	a.CPEs = []index.CPE{{ID: 1, URI: "cpe:2.3:a:acme:widget:1.1:*:*:*:*:*:*:*", Vendor: "acme", Product: "widget", Version: "1.1", Vulnerable: true}}
	a.Affected = entry // NVD's CPEs supersede: no key
	b.Affected, b.EntryKeys = entry, keys
	c.Affected = entry // a CVE the build found no key for
	lessThan := "2.0"
	d.Affected, d.EntryKeys = []index.AffectedEntry{{Source: "cna", Vendor: &vendor, Product: &product,
		Versions: []index.AffectedVersion{{Version: "0", LessThan: &lessThan, Status: "affected"}}}}, keys
	ix, err := index.Build(&index.Data{CVEs: []index.CVE{a, b, c, d}}, index.Meta{ID: "entries", BuiltAt: "2024-03-02 00:00:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	srv := newTestServer(t, ix)
	res, body := do(t, srv, "GET", "/status", nil)
	var got struct{ Enrichment map[string]any }
	if err := json.Unmarshal(body, &got); err != nil || res.StatusCode != 200 {
		t.Fatalf("%d %s", res.StatusCode, body)
	}
	want := map[string]any{"cves_without_cpe": 3.0, "cves_without_cvss": 0.0, "share_without_cpe": 0.75, "share_without_cvss": 0.0,
		"cves_products_from_entries": 2.0, "cves_without_product": 1.0, "share_without_product": 0.25}
	if diff := cmp.Diff(want, got.Enrichment); diff != "" {
		t.Errorf("enrichment (-want +got):\n%s", diff)
	}
	// acme/widget mixes a CVE from NVD's CPEs (1.1) and two from entries
	// (1.0; 0 to < 2.0): the product's versions are NVD's.
	wantNames(t, srv, "/vendors/acme/products/widget/cve", []string{"CVE-2024-0004", "CVE-2024-0002", "CVE-2024-0001"})
	wantNames(t, srv, "/vendors/acme/products/widget/cve?version=1.0", []string{"CVE-2024-0004", "CVE-2024-0002"})
	wantNames(t, srv, "/vendors/acme/products/widget/cve?version=1.1", []string{"CVE-2024-0004", "CVE-2024-0001"})
	wantNames(t, srv, "/vendors/acme/products/widget/cve?version=2.0", []string{})
	if res, body := do(t, srv, "GET", "/vendors/acme/products/widget", nil); string(body) != `{"name":"widget","human_name":"Widget","versions":["1.1"]}` {
		t.Errorf("acme/widget: %d %s", res.StatusCode, body)
	}
	wantNames(t, srv, "/vendors/acme/cve", []string{"CVE-2024-0004", "CVE-2024-0002", "CVE-2024-0001"})
}

// TestCVE5Explain: explain, served from a build with the JSON 5 records,
// says which entry and version object matched, by the keys the build
// stored. Expectations worked out by hand from the records in
// ../shared/data/cve5: CVE-2023-5631's one CNA entry lists 1.6.0 to
// < 1.6.3, then 1.5.0 to < 1.5.4, then 1.4.0 to < 1.5.14, so 1.5.3 is
// decided by object 1 (not the third, wider one) and 1.5.10 by object 2;
// CVE-2024-47177's CNA entry (0) says "<= 2.0.1" for cups-filters, and
// CISA-ADP's entry (1, after the CNA's) 0 to lessThanOrEqual 2.0.1 for
// cpdb-libs.
func TestCVE5Explain(t *testing.T) {
	srv := newTestServer(t, sampleCVE5Index(t))
	for _, tc := range []struct{ target, want string }{
		{"/vendors/roundcube/products/roundcubemail/explain?version=1.5.3",
			`[{"name":"CVE-2023-5631","matched_by":[{"source":"cna","entry":0,"version_object":1,"rule":"range_less_than","change_at":null,"status":"affected"}]}]`},
		{"/vendors/roundcube/products/roundcubemail/explain?version=1.5.10",
			`[{"name":"CVE-2023-5631","matched_by":[{"source":"cna","entry":0,"version_object":2,"rule":"range_less_than","change_at":null,"status":"affected"}]}]`},
		{"/vendors/roundcube/products/roundcubemail/explain?version=1.6.4", `[]`},
		{"/vendors/openprinting/products/cups-filters/explain?version=2.0.1",
			`[{"name":"CVE-2024-47177","matched_by":[{"source":"cna","entry":0,"version_object":0,"rule":"comparisons","change_at":null,"status":"affected"}]}]`},
		{"/vendors/openprinting/products/cpdb-libs/explain?version=2.0.1",
			`[{"name":"CVE-2024-47177","matched_by":[{"source":"adp:CISA-ADP","entry":1,"version_object":0,"rule":"range_less_than_or_equal","change_at":null,"status":"affected"}]}]`},
	} {
		res, body := do(t, srv, "GET", tc.target, nil)
		if res.StatusCode != 200 || string(body) != tc.want {
			t.Errorf("%s: %d\n%s\nwant\n%s", tc.target, res.StatusCode, body, tc.want)
		}
	}
}

// TestExplainANDServed: the server explains an AND-ed NVD configuration
// from the record it keeps. CVE-2019-8075 (the sample's NVD record): its
// configuration 3 is chrome `*` < 87.0.4280.66 AND (linux_kernel or
// windows, not vulnerable), its configuration 4 chrome `*` <
// 87.0.4280.67 AND macos; so 87.0.4280.66 is matched by configuration 4
// alone, on macOS.
func TestExplainANDServed(t *testing.T) {
	srv := newTestServer(t, sampleCVE5Index(t))
	res, body := do(t, srv, "GET", "/vendors/google/products/chrome/explain?version=87.0.4280.66", nil)
	var got []struct {
		Name      string
		MatchedBy []struct {
			Configuration, Node *int
			Operator            string
			EndExcluding        string   `json:"version_end_excluding"`
			Platforms           []string `json:"platforms"`
		} `json:"matched_by"`
	}
	if err := json.Unmarshal(body, &got); res.StatusCode != 200 || err != nil {
		t.Fatalf("%d %v %s", res.StatusCode, err, body)
	}
	for _, c := range got {
		if c.Name != "CVE-2019-8075" {
			continue
		}
		if len(c.MatchedBy) != 1 {
			t.Fatalf("CVE-2019-8075 matched by %d entries, want 1: %s", len(c.MatchedBy), body)
		}
		m := c.MatchedBy[0]
		if m.Configuration == nil || *m.Configuration != 4 || m.Node == nil || *m.Node != 0 || m.Operator != "OR" ||
			m.EndExcluding != "87.0.4280.67" || !slices.Equal(m.Platforms, []string{"cpe:2.3:o:apple:macos:-:*:*:*:*:*:*:*"}) {
			t.Errorf("CVE-2019-8075 matched by %s", body)
		}
		return
	}
	t.Errorf("CVE-2019-8075 not listed: %s", body)
}
