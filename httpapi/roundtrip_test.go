package httpapi

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/goccy/go-json"
	"github.com/google/go-cmp/cmp"

	"github.com/vulnd/vulnd/index"
)

func str(s string) *string { return &s }

// handData is a small snapshot written by hand: names that need
// percent-encoding, a report with alerts, CVEs in every band, and exactly
// 41 CVEs for vendor "acme" so paging has a partial last page.
func handData(t testing.TB) *index.Index {
	t.Helper()
	d := &index.Data{
		CWEs: []index.CWE{
			{Name: "CWE-79", Description: "XSS", Type: "Weakness Base", CreatedAt: "2006-07-19 00:00:00Z", UpdatedAt: "2024-02-29 00:00:00Z"},
			{Name: "CWE-20", Description: "Input", Type: "Weakness Class", CreatedAt: "2006-07-19 00:00:00Z", UpdatedAt: "2024-02-29 00:00:00Z"},
		},
	}
	cpe := func(vendor, product, version string) index.CPE {
		esc := strings.NewReplacer(":", `\:`, "+", `\+`, "/", `\/`, "%", `\%`)
		return index.CPE{ID: 1, URI: "cpe:2.3:a:" + esc.Replace(vendor) + ":" + esc.Replace(product) + ":" + version + ":*:*:*:*:*:*:*",
			Vendor: vendor, Product: product, Version: version, Vulnerable: true}
	}
	for i := 1; i <= 41; i++ {
		c := index.CVE{
			Name: "CVE-2024-" + strconv.Itoa(1000+i), Summary: "acme bug " + strconv.Itoa(i),
			CreatedAt: "2024-01-01 00:00:00Z", UpdatedAt: "2024-02-01 00:00:00Z",
			CPEs:       []index.CPE{cpe("acme", "widget", "1."+strconv.Itoa(i))},
			CVSS:       index.CVSS{Score: float64(i%11) - 0.5*float64(i%2)},
			References: []index.Reference{},
		}
		if c.CVSS.Score < 0 {
			c.CVSS.Score = 0
		}
		d.CVEs = append(d.CVEs, c)
	}
	d.CVEs = append(d.CVEs, index.CVE{
		Name: "CVE-2023-0001", Summary: "slashed", CreatedAt: "2023-01-01 00:00:00Z", UpdatedAt: "2023-01-02 00:00:00Z",
		CPEs: []index.CPE{cpe("a/b", "x y+z%", "2.0"), cpe("a/b", "x y+z%", "10.0"), cpe("a/b", "x y+z%", "-")},
		CWEs: []string{"CWE-79", "CWE-1321"},
		CVSS: index.CVSS{AccessVector: str("NETWORK"), Source: str("nvd@nist.gov"), Score: 7.5},
	})
	details := func(s string) json.RawMessage { return json.RawMessage(s) }
	d.Reports = []index.Report{{
		ID: "20261122T000000Z", CreatedAt: "2026-11-22 00:00:00Z",
		Alerts: []index.Alert{
			{ID: 1, CVE: "CVE-2023-0001", CreatedAt: "2026-11-22 00:00:00Z",
				Handlers: index.Handlers{Products: []string{"x y+z%"}, Vendors: []string{"a/b"}},
				Events: []index.Event{
					{Type: index.EventCWEsChanged, CreatedAt: "2026-11-22 00:00:00Z", Details: details(`{"added":["CWE-79"],"removed":[]}`)},
					{Type: index.EventNewCVE, CreatedAt: "2026-11-22 00:00:00Z", Details: details(`{}`)},
				}},
			{ID: 2, CVE: "CVE-2024-1001", CreatedAt: "2026-11-22 00:00:00Z",
				Handlers: index.Handlers{Products: []string{"widget"}, Vendors: []string{"acme"}},
				Events:   []index.Event{{Type: index.EventSummaryChanged, CreatedAt: "2026-11-22 00:00:00Z", Details: details(`{"old":"a","new":"b"}`)}}},
		},
	}, {ID: "20261121T000000Z", CreatedAt: "2026-11-21 00:00:00Z", Alerts: []index.Alert{
		{ID: 3, CVE: "CVE-2024-1002", CreatedAt: "2026-11-21 00:00:00Z", Handlers: index.Handlers{}},
	}}}
	ix, err := index.Build(d, index.Meta{ID: "hand", BuiltAt: "2026-11-22 00:00:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

func TestRoundTrip(t *testing.T) {
	srv := newTestServer(t, handData(t))
	type check struct {
		path   string
		status int
		want   string // expected body, compared as JSON; "" to check only the status
	}
	cases := []check{
		// 1, 2, 3: CWEs
		{"/cwe", 200, `[{"name":"CWE-20","description":"Input","type":"Weakness Class","created_at":"2006-07-19 00:00:00Z","updated_at":"2024-02-29 00:00:00Z"},{"name":"CWE-79","description":"XSS","type":"Weakness Base","created_at":"2006-07-19 00:00:00Z","updated_at":"2024-02-29 00:00:00Z"}]`},
		{"/cwe?page=2", 200, `[]`},
		{"/cwe/cwe-79", 200, `{"name":"CWE-79","description":"XSS","type":"Weakness Base","created_at":"2006-07-19 00:00:00Z","updated_at":"2024-02-29 00:00:00Z"}`},
		{"/cwe/CWE-1321", 404, `{"message":"CWE not found"}`}, // cited, not in the catalog
		{"/cwe/79", 404, `{"message":"CWE not found"}`},
		{"/cwe/CWE-79/cve", 200, `[{"name":"CVE-2023-0001","summary":"slashed","created_at":"2023-01-01 00:00:00Z","updated_at":"2023-01-02 00:00:00Z"}]`},
		{"/cwe/CWE-20/cve", 200, `[]`},
		{"/cwe/CWE-1321/cve", 404, `{"message":"CWE not found"}`},
		{"/cwe/CWE-79/cve?page=x", 400, `{"message":"page must be a whole number from 1 to 1000000"}`},
		// 4, 5: CVEs
		{"/cve?cvss=HIGH&page=1", 200, ""},
		{"/cve?cvss=bogus", 400, `{"message":"cvss must be low, medium, high or critical"}`},
		{"/cve?cvss=", 400, `{"message":"cvss must be low, medium, high or critical"}`},
		{"/cve?page=0", 400, `{"message":"page must be a whole number from 1 to 1000000"}`},
		{"/cve?page=-1", 400, ""},
		{"/cve?page=", 400, ""},
		{"/cve?page=1000001", 400, ""},
		{"/cve?page=99999999999999999999", 400, ""},
		{"/cve?page=1000000", 200, `[]`},
		{"/cve?page=%ZZ", 400, `{"message":"page is not valid percent-encoding"}`},
		{"/cve?page=%32", 200, ""}, // page=2, escaped
		{"/cve?unknown=%ZZ&other=1", 200, ""},
		{"/cve/cve-2023-0001", 200, `{"name":"CVE-2023-0001","summary":"slashed","created_at":"2023-01-01 00:00:00Z","updated_at":"2023-01-02 00:00:00Z",
			"cpes":[{"cpe_id":1,"uri":"cpe:2.3:a:a\\/b:x y\\+z\\%:2.0:*:*:*:*:*:*:*","vendor":"a/b","product":"x y+z%","version":"2.0","vulnerable":true},
			        {"cpe_id":1,"uri":"cpe:2.3:a:a\\/b:x y\\+z\\%:10.0:*:*:*:*:*:*:*","vendor":"a/b","product":"x y+z%","version":"10.0","vulnerable":true},
			        {"cpe_id":1,"uri":"cpe:2.3:a:a\\/b:x y\\+z\\%:-:*:*:*:*:*:*:*","vendor":"a/b","product":"x y+z%","version":"-","vulnerable":true}],
			"cwes":["CWE-79","CWE-1321"],
			"cvss":{"access_complexity":null,"access_vector":"NETWORK","authentication":null,"availability_impact":null,"confidentiality_impact":null,"integrity_impact":null,"source":"nvd@nist.gov","score":7.5},
			"references":[]}`},
		{"/cve/CVE-2099-0001", 404, `{"message":"CVE not found"}`},
		{"/cve/%E2%82%AC", 404, `{"message":"CVE not found"}`},
		// 6-11: vendors and products, names percent-encoded
		{"/vendors", 200, `[{"name":"a/b","human_name":"A/b"},{"name":"acme","human_name":"Acme"}]`},
		{"/vendors?page=2", 200, `[]`},
		{"/vendors/a%2Fb", 200, `{"name":"a/b","human_name":"A/b","products":["x y+z%"]}`},
		{"/vendors/a%2fb", 200, `{"name":"a/b","human_name":"A/b","products":["x y+z%"]}`},
		{"/vendors/a/b", 404, `{"message":"endpoint not found"}`},
		{"/vendors/nobody", 404, `{"message":"vendor not found"}`},
		{"/vendors/Acme", 404, `{"message":"vendor not found"}`}, // vendor names are exact
		{"/vendors/a%2Fb/cve", 200, `[{"name":"CVE-2023-0001","summary":"slashed","created_at":"2023-01-01 00:00:00Z","updated_at":"2023-01-02 00:00:00Z"}]`},
		{"/vendors/nobody/cve", 404, `{"message":"vendor not found"}`},
		{"/vendors/a%2Fb/products", 200, `[{"name":"x y+z%","human_name":"X y+z%"}]`},
		{"/vendors/nobody/products", 404, `{"message":"vendor not found"}`},
		{"/vendors/a%2Fb/products/x%20y%2Bz%25", 200, `{"name":"x y+z%","human_name":"X y+z%","versions":["2.0","10.0"]}`},
		{"/vendors/a%2Fb/products/x%20y+z%25", 200, `{"name":"x y+z%","human_name":"X y+z%","versions":["2.0","10.0"]}`},
		{"/vendors/a%2Fb/products/nothing", 404, `{"message":"product not found"}`},
		{"/vendors/nobody/products/widget", 404, `{"message":"vendor not found"}`},
		{"/vendors/a%2Fb/products/x%20y%2Bz%25/cve", 200, `[{"name":"CVE-2023-0001","summary":"slashed","created_at":"2023-01-01 00:00:00Z","updated_at":"2023-01-02 00:00:00Z"}]`},
		{"/vendors/acme/products/nothing/cve", 404, `{"message":"product not found"}`},
		{"/vendors/acme/products/widget/cve?page=0", 400, ""},
		// 12-15: reports
		{"/reports", 200, `[{"id":"20261122T000000Z","created_at":"2026-11-22 00:00:00Z","handlers":["a/b","acme","widget","x y+z%"]},
			{"id":"20261121T000000Z","created_at":"2026-11-21 00:00:00Z","handlers":[]}]`},
		{"/reports?page=2", 200, `[]`},
		{"/reports/20261122T000000Z", 200, `{"id":"20261122T000000Z","created_at":"2026-11-22 00:00:00Z","handlers":["a/b","acme","widget","x y+z%"],"alerts":[
			{"id":2,"cve":"CVE-2024-1001","created_at":"2026-11-22 00:00:00Z","handlers":{"products":["widget"],"vendors":["acme"]}},
			{"id":1,"cve":"CVE-2023-0001","created_at":"2026-11-22 00:00:00Z","handlers":{"products":["x y+z%"],"vendors":["a/b"]}}]}`},
		{"/reports/nope", 404, `{"message":"report not found"}`},
		{"/reports/20261121T000000Z/alerts", 200, `[{"id":3,"cve":"CVE-2024-1002","created_at":"2026-11-21 00:00:00Z","handlers":{"products":[],"vendors":[]}}]`},
		{"/reports/nope/alerts", 404, `{"message":"report not found"}`},
		{"/reports/20261122T000000Z/alerts/1", 200, `[{"type":"New CVE","created_at":"2026-11-22 00:00:00Z","details":{}},
			{"type":"CWEs changed","created_at":"2026-11-22 00:00:00Z","details":{"added":["CWE-79"],"removed":[]}}]`},
		{"/reports/20261122T000000Z/alerts/3", 404, `{"message":"alert not found"}`}, // alert of another report
		{"/reports/20261122T000000Z/alerts/x", 404, `{"message":"alert not found"}`},
		{"/reports/nope/alerts/1", 404, `{"message":"report not found"}`},
		// unknown paths: no redirects, no case folding of the route
		{"/", 404, `{"message":"endpoint not found"}`},
		{"/cve/", 404, `{"message":"endpoint not found"}`},
		{"/CVE", 404, `{"message":"endpoint not found"}`},
		{"/cve/CVE-2023-0001/", 404, `{"message":"endpoint not found"}`},
		{"/vendors/acme/products/widget/cve/extra", 404, `{"message":"endpoint not found"}`},
	}
	for _, tc := range cases {
		t.Run(tc.path, func(t *testing.T) {
			res, body := do(t, srv, http.MethodGet, tc.path, nil)
			if res.StatusCode != tc.status {
				t.Fatalf("status %d, want %d; body %s", res.StatusCode, tc.status, body)
			}
			checkHeaders(t, res, body)
			if tc.want != "" {
				var want, got any
				if err := json.Unmarshal([]byte(tc.want), &want); err != nil {
					t.Fatalf("bad expectation: %v", err)
				}
				if err := json.Unmarshal(body, &got); err != nil {
					t.Fatalf("body is not JSON: %v: %s", err, body)
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("body mismatch (-want +got):\n%s", diff)
				}
			}
			if res.StatusCode >= 400 {
				var e map[string]any
				if err := json.Unmarshal(body, &e); err != nil || len(e) != 1 || e["message"] == "" {
					t.Errorf("error body %s is not {\"message\": ...}", body)
				}
			}
		})
	}
}

// checkHeaders asserts what every response carries.
func checkHeaders(t *testing.T, res *http.Response, body []byte) {
	t.Helper()
	if ct := res.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	// A body that could be compressed varies by Accept-Encoding too.
	wantVary := "Accept"
	if res.StatusCode == 200 && len(body) >= minCompress {
		wantVary = "Accept, Accept-Encoding"
	}
	if v := res.Header.Get("Vary"); v != wantVary {
		t.Errorf("Vary %q, want %q", v, wantVary)
	}
	if len(res.TransferEncoding) != 0 {
		t.Errorf("Transfer-Encoding %v: responses must not be chunked", res.TransferEncoding)
	}
	if cl := res.Header.Get("Content-Length"); cl != strconv.Itoa(len(body)) {
		t.Errorf("Content-Length %q, body has %d bytes", cl, len(body))
	}
	if res.StatusCode == 200 && res.Header.Get("ETag") == "" {
		t.Error("200 without ETag")
	}
}

func TestPaging(t *testing.T) {
	srv := newTestServer(t, handData(t))
	names := func(path string) []string {
		res, body := do(t, srv, http.MethodGet, path, nil)
		if res.StatusCode != 200 {
			t.Fatalf("%s: %d %s", path, res.StatusCode, body)
		}
		var items []struct{ Name string }
		if err := json.Unmarshal(body, &items); err != nil {
			t.Fatal(err)
		}
		out := make([]string, len(items))
		for i, it := range items {
			out[i] = it.Name
		}
		return out
	}
	// acme's 41 CVEs share updated_at, so they are ordered by number,
	// highest first: page 1 = 1041..1022, page 3 = 1001 alone.
	want := func(from, to int) []string {
		var s []string
		for n := from; n >= to; n-- {
			s = append(s, "CVE-2024-"+strconv.Itoa(n))
		}
		return s
	}
	for _, tc := range []struct {
		path string
		want []string
	}{
		{"/vendors/acme/cve", want(1041, 1022)},
		{"/vendors/acme/cve?page=1", want(1041, 1022)},
		{"/vendors/acme/cve?page=2", want(1021, 1002)},
		{"/vendors/acme/cve?page=3", want(1001, 1001)},
		{"/vendors/acme/cve?page=4", []string{}},
		{"/vendors/acme/products/widget/cve?page=3", want(1001, 1001)},
		// all 42: the 41 (updated 2024-02-01) before CVE-2023-0001 (2023-01-02)
		{"/cve?page=3", append(want(1001, 1001), "CVE-2023-0001")},
	} {
		if diff := cmp.Diff(tc.want, names(tc.path)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.path, diff)
		}
	}
}

func TestBands(t *testing.T) {
	srv := newTestServer(t, handData(t))
	// Scores of CVE-2024-(1000+i): i%11 - 0.5*(i%2), floored at 0. Band
	// membership is worked out from the decision's ranges.
	band := func(s float64) string {
		switch {
		case s >= 7:
			return "high"
		case s >= 4:
			return "medium"
		case s >= 0.1:
			return "low"
		}
		return ""
	}
	want := map[string]int{}
	for i := 1; i <= 41; i++ {
		s := float64(i%11) - 0.5*float64(i%2)
		if s < 0 {
			s = 0
		}
		want[band(s)]++
	}
	want["high"]++ // CVE-2023-0001, 7.5
	for _, b := range []string{"low", "medium", "high"} {
		total := 0
		for page := 1; ; page++ {
			res, body := do(t, srv, http.MethodGet, "/cve?cvss="+b+"&page="+strconv.Itoa(page), nil)
			if res.StatusCode != 200 {
				t.Fatalf("%d %s", res.StatusCode, body)
			}
			var items []any
			json.Unmarshal(body, &items)
			if len(items) == 0 {
				break
			}
			total += len(items)
		}
		if total != want[b] {
			t.Errorf("cvss=%s: %d CVEs, want %d", b, total, want[b])
		}
	}
}

func TestMethodsHeadAndConditional(t *testing.T) {
	ix := handData(t)
	srv := newTestServer(t, ix)
	for _, m := range []string{"POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "BREW"} {
		res, body := do(t, srv, m, "/cve/CVE-2023-0001", nil)
		if res.StatusCode != 405 || res.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("%s: status %d Allow %q, want 405 with Allow: GET, HEAD", m, res.StatusCode, res.Header.Get("Allow"))
		}
		if m != "HEAD" && !strings.Contains(string(body), `"message"`) {
			t.Errorf("%s: body %s", m, body)
		}
	}
	// An unknown path is 404 whatever the method.
	if res, _ := do(t, srv, "POST", "/nope", nil); res.StatusCode != 404 {
		t.Errorf("POST /nope: %d, want 404", res.StatusCode)
	}

	get, getBody := do(t, srv, "GET", "/vendors/acme/cve?page=2", nil)
	head, headBody := do(t, srv, "HEAD", "/vendors/acme/cve?page=2", nil)
	if head.StatusCode != 200 || len(headBody) != 0 {
		t.Errorf("HEAD: %d with %d body bytes", head.StatusCode, len(headBody))
	}
	for _, h := range []string{"Content-Type", "Vary", "ETag", "Content-Length"} {
		if get.Header.Get(h) != head.Header.Get(h) {
			t.Errorf("HEAD %s %q, GET has %q", h, head.Header.Get(h), get.Header.Get(h))
		}
	}
	if get.Header.Get("Content-Length") != strconv.Itoa(len(getBody)) {
		t.Error("GET Content-Length does not match its body")
	}
	if res, _ := do(t, srv, "HEAD", "/cve/CVE-2099-0001", nil); res.StatusCode != 404 {
		t.Errorf("HEAD missing CVE: %d", res.StatusCode)
	}

	etag := get.Header.Get("ETag")
	if etag != `"hand"` {
		t.Fatalf("ETag %q, want the snapshot id quoted", etag)
	}
	for _, inm := range []string{etag, "W/" + etag, `"other", ` + etag, "*"} {
		res, body := do(t, srv, "GET", "/cve/CVE-2023-0001", map[string]string{"If-None-Match": inm})
		if res.StatusCode != 304 || len(body) != 0 || res.Header.Get("ETag") != etag {
			t.Errorf("If-None-Match %s: %d, %d bytes, ETag %q; want 304, empty, same tag", inm, res.StatusCode, len(body), res.Header.Get("ETag"))
		}
	}
	for _, inm := range []string{`"other"`, `W/"hand2"`, `hand`} {
		if res, _ := do(t, srv, "GET", "/cve/CVE-2023-0001", map[string]string{"If-None-Match": inm}); res.StatusCode != 200 {
			t.Errorf("If-None-Match %s: %d, want 200", inm, res.StatusCode)
		}
	}
	// A tag never turns a 404 into a 304.
	if res, _ := do(t, srv, "GET", "/cve/CVE-2099-0001", map[string]string{"If-None-Match": etag}); res.StatusCode != 404 {
		t.Errorf("If-None-Match on a missing CVE: %d, want 404", res.StatusCode)
	}
}

func TestCPEIDsAreStable(t *testing.T) {
	srv := newTestServer(t, sampleIndex(t))
	byURI := map[string]float64{}
	byID := map[float64]string{}
	seen := 0
	for page := 1; ; page++ {
		_, body := do(t, srv, "GET", "/cve?page="+strconv.Itoa(page), nil)
		var items []struct{ Name string }
		if err := json.Unmarshal(body, &items); err != nil {
			t.Fatal(err)
		}
		if len(items) == 0 {
			break
		}
		for _, it := range items {
			seen++
			_, body := do(t, srv, "GET", "/cve/"+it.Name, nil)
			var c struct {
				CPEs []struct {
					ID  float64 `json:"cpe_id"`
					URI string  `json:"uri"`
				} `json:"cpes"`
			}
			if err := json.Unmarshal(body, &c); err != nil {
				t.Fatal(err)
			}
			for _, p := range c.CPEs {
				if p.ID < 1 {
					t.Errorf("%s: cpe_id %v for %s", it.Name, p.ID, p.URI)
				}
				if id, ok := byURI[p.URI]; ok && id != p.ID {
					t.Errorf("%s: %s has cpe_id %v here and %v elsewhere", it.Name, p.URI, p.ID, id)
				}
				if uri, ok := byID[p.ID]; ok && uri != p.URI {
					t.Errorf("cpe_id %v names both %s and %s", p.ID, uri, p.URI)
				}
				byURI[p.URI], byID[p.ID] = p.ID, p.URI
			}
		}
	}
	if seen != 186 {
		t.Errorf("walked %d CVEs through /cve pages, want 186", seen)
	}
	if len(byURI) < 100 {
		t.Errorf("only %d distinct CPE URIs seen", len(byURI))
	}
}
