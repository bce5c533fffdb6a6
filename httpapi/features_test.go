package httpapi

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/goccy/go-json"
	"github.com/google/go-cmp/cmp"

	"github.com/vulnd/vulnd/index"
)

// filterData is six CVEs written by hand so that every filter of the CVE
// lists selects a different set. In list order (updated_at newest first,
// ties by year then number, highest first):
//
//	name           created              updated              CPEs                    CWEs    score
//	CVE-2024-0001  2024-01-01 00:00:00  2024-03-01 00:00:00  acme/widget             CWE-79  9.8 high
//	CVE-2021-0006  2021-05-05 00:00:00  2024-03-01 00:00:00  beta/tool, acme/widget  CWE-20  8.0 high
//	CVE-2024-0005  2024-02-20 12:00:00  2024-02-20 12:00:00  none                    none    none
//	CVE-2024-0002  2024-02-01 00:00:00  2024-02-15 00:00:00  acme/gadget             CWE-20  5.0 medium
//	CVE-2023-0003  2023-06-01 00:00:00  2024-02-10 00:00:00  beta/tool               CWE-79  7.5 high
//	CVE-2022-0004  2022-01-01 00:00:00  2023-01-01 00:00:00  acme/widget             CWE-79  2.0 low
func filterData(t testing.TB) *index.Index {
	t.Helper()
	cwe := func(n string) index.CWE {
		return index.CWE{Name: n, Description: "d", Type: "Weakness Base", CreatedAt: "2006-07-19 00:00:00Z", UpdatedAt: "2024-02-29 00:00:00Z"}
	}
	cpe := func(vendor, product string) index.CPE {
		return index.CPE{ID: 1, URI: "cpe:2.3:a:" + vendor + ":" + product + ":1.0:*:*:*:*:*:*:*", Vendor: vendor, Product: product, Version: "1.0", Vulnerable: true}
	}
	cve := func(name, created, updated string, score float64, cwes []string, cpes ...index.CPE) index.CVE {
		return index.CVE{Name: name, Summary: "s " + name, CreatedAt: created + "Z", UpdatedAt: updated + "Z",
			CPEs: cpes, CWEs: cwes, CVSS: index.CVSS{Score: score}}
	}
	d := &index.Data{
		CWEs: []index.CWE{cwe("CWE-79"), cwe("CWE-20")},
		CVEs: []index.CVE{
			cve("CVE-2022-0004", "2022-01-01 00:00:00", "2023-01-01 00:00:00", 2.0, []string{"CWE-79"}, cpe("acme", "widget")),
			cve("CVE-2024-0002", "2024-02-01 00:00:00", "2024-02-15 00:00:00", 5.0, []string{"CWE-20"}, cpe("acme", "gadget")),
			cve("CVE-2024-0001", "2024-01-01 00:00:00", "2024-03-01 00:00:00", 9.8, []string{"CWE-79"}, cpe("acme", "widget")),
			cve("CVE-2024-0005", "2024-02-20 12:00:00", "2024-02-20 12:00:00", 0, nil),
			cve("CVE-2023-0003", "2023-06-01 00:00:00", "2024-02-10 00:00:00", 7.5, []string{"CWE-79"}, cpe("beta", "tool")),
			cve("CVE-2021-0006", "2021-05-05 00:00:00", "2024-03-01 00:00:00", 8.0, []string{"CWE-20"}, cpe("beta", "tool"), cpe("acme", "widget")),
		},
	}
	ix, err := index.Build(d, index.Meta{ID: "filters", BuiltAt: "2024-03-02 00:00:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// names returns the "name" of each object of a JSON array.
func names(t *testing.T, body []byte) []string {
	t.Helper()
	var items []struct{ Name string }
	if err := json.Unmarshal(body, &items); err != nil {
		t.Fatalf("not a JSON array: %v: %s", err, body)
	}
	out := []string{}
	for _, it := range items {
		out = append(out, it.Name)
	}
	return out
}

// wantNames GETs target and checks that it answers 200 with a list of
// exactly the objects named want; ok is false when the status is not 200.
func wantNames(t *testing.T, srv *httptest.Server, target string, want []string) (res *http.Response, ok bool) {
	t.Helper()
	res, body := do(t, srv, "GET", target, nil)
	if res.StatusCode != 200 {
		t.Errorf("%s: %d %s", target, res.StatusCode, body)
		return res, false
	}
	if diff := cmp.Diff(want, names(t, body)); diff != "" {
		t.Errorf("%s (-want +got):\n%s", target, diff)
	}
	return res, true
}

func TestCVEListFilters(t *testing.T) {
	srv := newTestServer(t, filterData(t))
	const (
		a = "CVE-2024-0001"
		b = "CVE-2024-0002"
		c = "CVE-2023-0003"
		d = "CVE-2022-0004"
		e = "CVE-2024-0005"
		f = "CVE-2021-0006"
	)
	for _, tc := range []struct {
		target string
		want   []string
	}{
		{"/cve", []string{a, f, e, b, c, d}},
		{"/cve?updated_since=2024-02-15+00:00:00Z", []string{a, f, e, b}}, // inclusive
		{"/cve?updated_since=2024-02-15%2000:00:00Z", []string{a, f, e, b}},
		{"/cve?updated_since=2024-02-15T00:00:01Z", []string{a, f, e}},
		{"/cve?updated_since=2024-02-15T01:00:00%2B01:00", []string{a, f, e, b}}, // = 00:00:00Z
		{"/cve?updated_since=2024-02-14T23:59:59.999Z", []string{a, f, e, b}},    // fractions dropped
		{"/cve?updated_since=2030-01-01T00:00:00Z", []string{}},
		{"/cve?updated_since=1970-01-01T00:00:00Z", []string{a, f, e, b, c, d}},
		{"/cve?published_since=2024-01-01T00:00:00Z", []string{a, e, b}},
		{"/cve?published_since=2024-02-20T13:00:00%2B01:00", []string{e}},
		{"/cve?published_since=2022-01-01T00:00:00Z&updated_since=2024-02-12T00:00:00Z", []string{a, e, b}},
		{"/cve?cwe=CWE-79", []string{a, c, d}},
		{"/cve?cwe=cwe-79&cvss=high", []string{a, c}},
		{"/cve?cvss=high", []string{a, f, c}},
		{"/cve?vendor=acme", []string{a, f, b, d}},
		{"/cve?vendor=acme&cwe=CWE-79&cvss=high", []string{a}},
		{"/cve?vendor=acme&product=gadget", []string{b}},
		{"/cve?vendor=acme&product=widget&cwe=CWE-20", []string{f}},
		{"/cve?vendor=beta&updated_since=2024-02-11T00:00:00Z", []string{f}},
		{"/cve?vendor=nope", []string{}},
		{"/cve?vendor=acme&product=nope", []string{}},
		{"/cve?cwe=CWE-999", []string{}},
		{"/cve?cvss=low&cwe=CWE-20", []string{}},
		{"/vendors/acme/cve?updated_since=2024-02-01T00:00:00Z", []string{a, f, b}},
		{"/vendors/acme/products/widget/cve?published_since=2022-01-01T00:00:00Z", []string{a, d}},
		{"/cwe/CWE-20/cve?updated_since=2024-03-01+00:00:00Z", []string{f}},
		{"/cwe/CWE-79/cve?published_since=2023-01-01T00:00:00Z&updated_since=2024-02-10T00:00:00Z", []string{a, c}},
	} {
		res, ok := wantNames(t, srv, tc.target, tc.want)
		if !ok {
			continue
		}
		if got := res.Header.Get("X-Total-Count"); got != strconv.Itoa(len(tc.want)) {
			t.Errorf("%s: X-Total-Count %s, want %d", tc.target, got, len(tc.want))
		}
	}
	for _, tc := range []struct{ target, msg string }{
		{"/cve?updated_since=yesterday", errBadUpdatedSince.message},
		{"/cve?updated_since=", errBadUpdatedSince.message},
		{"/cve?updated_since=2024-02-30T00:00:00Z", errBadUpdatedSince.message},
		{"/cve?published_since=2024-01-01", errBadPublishedSince.message},
		{"/vendors/acme/cve?published_since=x", errBadPublishedSince.message},
		{"/cve?product=widget", errProductNeedsVendor.message},
		{"/cve?format=xml", errBadFormat.message},
		{"/cve?cwe=%ZZ", "cwe is not valid percent-encoding"},
		{"/cve?cvss=severe&cwe=CWE-79", errBadCVSS.message},
		{"/cve?page=0&updated_since=2024-01-01T00:00:00Z", errBadPage.message},
		{"/vendors/nope/cve?updated_since=bad", errVendorNotFound.message},
		{"/vendors/nope/cve?page=x", errBadPage.message},
		// A raw "+" is a space: the message says how to send an offset.
		{"/cve?updated_since=2024-02-15T01:00:00+01:00", "updated_since must be a time like 2024-01-31 00:00:00Z or 2024-01-31T00:00:00Z (RFC 3339; send an offset's + as %2B)"},
		{"/cve?published_since=2024-02-15T01:00:00+01:00", "published_since must be a time like 2024-01-31 00:00:00Z or 2024-01-31T00:00:00Z (RFC 3339; send an offset's + as %2B)"},
	} {
		res, body := do(t, srv, "GET", tc.target, nil)
		want := `{"message":` + strconv.Quote(tc.msg) + `}`
		if string(body) != want {
			t.Errorf("%s: %d %s, want %s", tc.target, res.StatusCode, body, want)
		}
	}
}

func TestFilterLinks(t *testing.T) {
	ix := filterData(t)
	srv := httptest.NewServer(New(func() *index.Index { return ix }, Options{PageSize: 1}))
	defer srv.Close()
	for _, tc := range []struct{ target, link string }{
		{"/cve?cwe=CWE-79&cvss=HIGH&junk=1&updated_since=2024-01-01+00:00:00Z",
			`</cve?cvss=high&cwe=CWE-79&updated_since=2024-01-01+00%3A00%3A00Z&page=1>; rel="first", </cve?cvss=high&cwe=CWE-79&updated_since=2024-01-01+00%3A00%3A00Z&page=2>; rel="next", </cve?cvss=high&cwe=CWE-79&updated_since=2024-01-01+00%3A00%3A00Z&page=2>; rel="last"`},
		{"/vendors?q=a&page=2", `</vendors?q=a&page=1>; rel="first", </vendors?q=a&page=1>; rel="prev", </vendors?q=a&page=2>; rel="last"`},
		{"/cve?vendor=a%26b", `</cve?vendor=a%26b&page=1>; rel="first", </cve?vendor=a%26b&page=1>; rel="last"`},
	} {
		res, body := do(t, srv, "GET", tc.target, nil)
		if got := res.Header.Get("Link"); got != tc.link {
			t.Errorf("%s: %d %s\nLink %s\nwant %s", tc.target, res.StatusCode, body, got, tc.link)
		}
	}
}

// TestFilterLinksOrder: the links keep every parameter that selects the
// list, in the order docs/API.md gives (cvss, cwe, vendor, product,
// version, kev, updated_since, published_since), but not the names in
// the path, whatever order they were sent in.
func TestFilterLinksOrder(t *testing.T) {
	ix := filterData(t)
	srv := newTestServer(t, ix)
	for _, tc := range []struct{ target, first string }{
		{"/cve?published_since=2020-01-01T00:00:00Z&kev=FALSE&version=1.0&product=widget&vendor=acme&cwe=cwe-79&cvss=Low",
			`</cve?cvss=low&cwe=cwe-79&vendor=acme&product=widget&version=1.0&kev=false&published_since=2020-01-01T00%3A00%3A00Z&page=1>; rel="first"`},
		{"/vendors/acme/products/widget/cve?published_since=2020-01-01T00:00:00Z&updated_since=2020-01-01+00:00:00Z&kev=true&version=1.0",
			`</vendors/acme/products/widget/cve?version=1.0&kev=true&updated_since=2020-01-01+00%3A00%3A00Z&published_since=2020-01-01T00%3A00%3A00Z&page=1>; rel="first"`},
		{"/vendors/acme/cve?kev=false&format=json", `</vendors/acme/cve?kev=false&page=1>; rel="first"`},
		{"/cwe/CWE-79/cve?updated_since=2020-01-01+00:00:00Z", `</cwe/CWE-79/cve?updated_since=2020-01-01+00%3A00%3A00Z&page=1>; rel="first"`},
		{"/vendors?q=", `</vendors?q=&page=1>; rel="first"`},
	} {
		res, body := do(t, srv, "GET", tc.target, nil)
		if got := res.Header.Get("Link"); res.StatusCode != 200 || !strings.HasPrefix(got, tc.first+", ") {
			t.Errorf("%s: %d %.100s\nLink %s\nwant first %s", tc.target, res.StatusCode, body, got, tc.first)
		}
	}
}

func TestNDJSON(t *testing.T) {
	ix := filterData(t)
	srv := newTestServer(t, ix)
	full := func(name string) string {
		b, err := ix.CVE(name)
		if err != nil {
			t.Fatalf("no %s", name)
		}
		return string(b)
	}
	for _, tc := range []struct {
		target string
		want   []string
	}{
		{"/cve?format=ndjson&vendor=beta", []string{"CVE-2021-0006", "CVE-2023-0003"}},
		{"/cve?format=ndjson&page=2", []string{"CVE-2024-0001", "CVE-2021-0006", "CVE-2024-0005", "CVE-2024-0002", "CVE-2023-0003", "CVE-2022-0004"}},
		{"/cwe/CWE-79/cve?format=ndjson&updated_since=2024-02-01T00:00:00Z", []string{"CVE-2024-0001", "CVE-2023-0003"}},
		{"/vendors/acme/products/gadget/cve?format=ndjson", []string{"CVE-2024-0002"}},
		{"/vendors/acme/cve?format=ndjson&updated_since=2099-01-01T00:00:00Z", nil},
	} {
		res, body := do(t, srv, "GET", tc.target, nil)
		if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/x-ndjson" {
			t.Fatalf("%s: %d %q %s", tc.target, res.StatusCode, res.Header.Get("Content-Type"), body)
		}
		var want strings.Builder
		for _, n := range tc.want {
			want.WriteString(full(n) + "\n")
		}
		if string(body) != want.String() {
			t.Errorf("%s: body\n%s\nwant\n%s", tc.target, body, want.String())
		}
		if res.Header.Get("Content-Length") != strconv.Itoa(len(body)) || res.Header.Get("X-Total-Count") != strconv.Itoa(len(tc.want)) {
			t.Errorf("%s: Content-Length %q X-Total-Count %q for %d bytes", tc.target, res.Header.Get("Content-Length"), res.Header.Get("X-Total-Count"), len(body))
		}
		if res.Header.Get("ETag") != `"filters"` || res.Header.Get("Link") != "" {
			t.Errorf("%s: ETag %q Link %q", tc.target, res.Header.Get("ETag"), res.Header.Get("Link"))
		}
		head, headBody := do(t, srv, "HEAD", tc.target, nil)
		if head.Header.Get("Content-Length") != res.Header.Get("Content-Length") || len(headBody) != 0 {
			t.Errorf("%s: HEAD Content-Length %q", tc.target, head.Header.Get("Content-Length"))
		}
		if res, _ := do(t, srv, "GET", tc.target, map[string]string{"If-None-Match": `"filters"`}); res.StatusCode != 304 {
			t.Errorf("%s: If-None-Match: %d", tc.target, res.StatusCode)
		}
	}
}

// TestNDJSONLarge streams more than one write's worth.
func TestNDJSONLarge(t *testing.T) {
	d := &index.Data{}
	for i := 1; i <= 3000; i++ {
		d.CVEs = append(d.CVEs, index.CVE{Name: "CVE-2024-" + strconv.Itoa(10000+i), Summary: strings.Repeat("x", 200),
			CreatedAt: "2024-01-01 00:00:00Z", UpdatedAt: "2024-01-01 00:00:00Z"})
	}
	ix, err := index.Build(d, index.Meta{ID: "big"})
	if err != nil {
		t.Fatal(err)
	}
	srv := newTestServer(t, ix)
	res, body := do(t, srv, "GET", "/cve?format=ndjson", nil)
	lines := bytes.Split(bytes.TrimSuffix(body, []byte("\n")), []byte("\n"))
	if res.StatusCode != 200 || len(lines) != 3000 || len(body) < 2*streamChunk {
		t.Fatalf("%d, %d lines, %d bytes", res.StatusCode, len(lines), len(body))
	}
	if res.Header.Get("Content-Length") != strconv.Itoa(len(body)) {
		t.Errorf("Content-Length %s for %d bytes", res.Header.Get("Content-Length"), len(body))
	}
	for i, l := range lines {
		want, _ := ix.CVE("CVE-2024-" + strconv.Itoa(13000-i))
		if !bytes.Equal(l, want) {
			t.Fatalf("line %d: %.80s, want %.80s", i, l, want)
		}
	}
}

func TestBatch(t *testing.T) {
	ix := filterData(t)
	srv := newTestServer(t, ix)
	full := func(names ...string) string {
		var parts []string
		for _, n := range names {
			b, _ := ix.CVE(n)
			parts = append(parts, string(b))
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	post := func(body string) (*http.Response, []byte) {
		req, _ := http.NewRequest("POST", srv.URL+"/cve/batch", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept-Encoding", "identity")
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		return res, readAll(t, res)
	}
	for _, tc := range []struct {
		name, get, post, want string
	}{
		{name: "get", get: "/cve/batch?names=CVE-2024-0002,cve-2024-0001,CVE-2099-1,CVE-2024-0002",
			want: `{"cves":` + full("CVE-2024-0002", "CVE-2024-0001") + `,"missing":["CVE-2099-1"]}`},
		{name: "get spaces", get: "/cve/batch?names=+CVE-2022-0004+,,nope%2C", want: `{"cves":` + full("CVE-2022-0004") + `,"missing":["nope"]}`},
		{name: "post", post: `{"names":["CVE-2022-0004","nope","NOPE","CVE-2024-0005"]}`,
			want: `{"cves":` + full("CVE-2022-0004", "CVE-2024-0005") + `,"missing":["nope"]}`},
		{name: "post unknown member", post: `{"names":["CVE-2099-0001"],"x":1}`, want: `{"cves":[],"missing":["CVE-2099-0001"]}`},
		{name: "post html", post: `{"names":["<a&b>"]}`, want: `{"cves":[],"missing":["<a&b>"]}`},
	} {
		var (
			res  *http.Response
			body []byte
		)
		if tc.get != "" {
			res, body = do(t, srv, "GET", tc.get, nil)
		} else {
			res, body = post(tc.post)
		}
		if res.StatusCode != 200 || string(body) != tc.want {
			t.Errorf("%s: %d\n%s\nwant\n%s", tc.name, res.StatusCode, body, tc.want)
		}
		checkHeaders(t, res, body)
	}
	many := make([]string, 1001)
	for i := range many {
		many[i] = `"CVE-2024-0001"`
	}
	for _, tc := range []struct {
		body   string
		status int
		msg    string
	}{
		{`{"names":[]}`, 400, errBatchNames.message},
		{`{"names":[` + strings.Join(many, ",") + `]}`, 400, errBatchNames.message},
		{`{"names":[` + strings.Join(many[:1000], ",") + `]}`, 200, ""},
		{`{}`, 400, errBadBatchBody.message},
		{`{"names":"CVE-2024-0001"}`, 400, errBadBatchBody.message},
		{`["CVE-2024-0001"]`, 400, errBadBatchBody.message},
		{`{"names":["CVE-2024-0001"]} {}`, 400, errBadBatchBody.message},
		{`{"names":[1]}`, 400, errBadBatchBody.message},
		{`not json`, 400, errBadBatchBody.message},
		{``, 400, errBadBatchBody.message},
		{`{"names":["` + strings.Repeat("x", maxBatchBody) + `"]}`, 413, errBatchTooBig.message},
		// After the object: whitespace only, and within the limit.
		{`{"names":["CVE-2024-0001"]}` + " \t\r\n", 200, ""},
		{`{"names":["CVE-2024-0001"]}]`, 400, errBadBatchBody.message},
		{`{"names":["CVE-2024-0001"]}}`, 400, errBadBatchBody.message},
		{`{"names":["CVE-2024-0001"]} x`, 400, errBadBatchBody.message},
		{`{"names":["CVE-2024-0001"]}` + strings.Repeat(" ", maxBatchBody), 413, errBatchTooBig.message},
		{`{"names":["CVE-2024-0001"]}` + strings.Repeat(" ", maxBatchBody) + "]", 413, errBatchTooBig.message},
		{`{"names":["CVE-2024-0001"]}]` + strings.Repeat(" ", maxBatchBody), 400, errBadBatchBody.message},
	} {
		res, body := post(tc.body)
		if res.StatusCode != tc.status || (tc.msg != "" && string(body) != `{"message":`+strconv.Quote(tc.msg)+`}`) {
			t.Errorf("POST %.60s: %d %.200s, want %d %s", tc.body, res.StatusCode, body, tc.status, tc.msg)
		}
	}
	for _, target := range []string{"/cve/batch", "/cve/batch?names=", "/cve/batch?names=,,"} {
		if res, body := do(t, srv, "GET", target, nil); res.StatusCode != 400 || !strings.Contains(string(body), errBatchNames.message) {
			t.Errorf("GET %s: %d %s", target, res.StatusCode, body)
		}
	}
	res, _ := do(t, srv, "DELETE", "/cve/batch", nil)
	if res.StatusCode != 405 || res.Header.Get("Allow") != "GET, HEAD, POST" {
		t.Errorf("DELETE /cve/batch: %d Allow %q", res.StatusCode, res.Header.Get("Allow"))
	}
	for _, p := range []string{"/cve", "/cve/CVE-2024-0001", "/status"} {
		if res, _ := post2(t, srv, p); res.StatusCode != 405 || res.Header.Get("Allow") != "GET, HEAD" {
			t.Errorf("POST %s: %d Allow %q, want 405 GET, HEAD", p, res.StatusCode, res.Header.Get("Allow"))
		}
	}
}

func post2(t *testing.T, srv *httptest.Server, path string) (*http.Response, []byte) {
	return do(t, srv, "POST", path, nil)
}

func TestSearch(t *testing.T) {
	srv := newTestServer(t, filterData(t))
	for _, tc := range []struct {
		target string
		want   []string
	}{
		{"/vendors?q=CM", []string{"acme"}},
		{"/vendors?q=e", []string{"acme", "beta"}},
		{"/vendors?q=", []string{"acme", "beta"}},
		{"/vendors?q=zzz", []string{}},
		{"/vendors?q=acme%00", []string{}},
		{"/vendors/acme/products?q=WID", []string{"widget"}},
		{"/vendors/acme/products?q=g", []string{"gadget", "widget"}},
		{"/vendors/acme/products?q=tool", []string{}},
		{"/vendors/beta/products", []string{"tool"}},
	} {
		wantNames(t, srv, tc.target, tc.want)
	}
	if res, body := do(t, srv, "GET", "/vendors/nope/products?q=x", nil); res.StatusCode != 404 {
		t.Errorf("unknown vendor: %d %s", res.StatusCode, body)
	}
}

func TestStatus(t *testing.T) {
	srv := newTestServer(t, filterData(t))
	res, body := do(t, srv, "GET", "/status", nil)
	if res.StatusCode != 200 {
		t.Fatalf("%d %s", res.StatusCode, body)
	}
	// One CVE of six (CVE-2024-0005) has no CPE and no score.
	want := `{"snapshot_id":"filters","format_version":0,"built_at":"2024-03-02 00:00:00Z",
		"newest_last_modified":"2024-03-01 00:00:00Z","load_duration_ms":0,
		"counts":{"cves":6,"cwes":2,"vendors":2,"products":3,"reports":0,"alerts":0},
		"enrichment":{"cves_without_cpe":1,"cves_without_cvss":1,"share_without_cpe":0.167,"share_without_cvss":0.167,
			"cves_products_from_entries":0,"cves_without_product":1,"share_without_product":0.167},
		"inputs":[],"artifact":null,"input_dates":{"nvd":null,"cve5":null,"epss":null,"cwe":null},"stale":false}`
	var w, g any
	json.Unmarshal([]byte(want), &w)
	if err := json.Unmarshal(body, &g); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(w, g); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	checkHeaders(t, res, body)
}
