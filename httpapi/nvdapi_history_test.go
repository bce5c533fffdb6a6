package httpapi

import (
	"bytes"
	"compress/gzip"
	stdjson "encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/vulnd/vulnd/index"
)

// historyIndex is a snapshot with three reports whose alerts cover every
// event type, built by hand (the expectations below are worked out from
// these events):
//
//	20240101T000000Z (2024-01-01 00:00:00Z): alert 1 CVE-2024-0001 new
//	  (CPE, CVSS, CWE and reference added); alert 2 CVE-2024-10000 new;
//	  alert 3 CVE-2024-0002 new, with an EPSS move.
//	20240102T000000Z (2024-01-02 00:00:00Z): alert 4 CVE-2024-0001
//	  (summary, CPEs, CVSS, CWEs, references); alert 5 CVE-2024-0002,
//	  only an EPSS move: no change of NVD's record.
//	20240102T000000Z-2 (the same time, a later build): alert 7
//	  CVE-2024-0002 (CVSS removed, an affected entry added); alert 8
//	  CVE-2024-0003 new, and missing from the snapshot since; alert 9
//	  CVE-2024-0001 (a CWE added).
//
// Only CVE-2024-0001 has an NVD record (sourceIdentifier
// cna@example.org). The snapshot was built 2024-03-03.
func historyIndex(t testing.TB) *index.Index {
	t.Helper()
	ev := func(typ, details string) index.Event {
		return index.Event{Type: typ, Details: stdjson.RawMessage(details)}
	}
	alert := func(id int64, cve, at string, events ...index.Event) index.Alert {
		for i := range events {
			events[i].CreatedAt = at
		}
		return index.Alert{ID: id, CVE: cve, CreatedAt: at, Events: events}
	}
	const t1, t2 = "2024-01-01 00:00:00Z", "2024-01-02 00:00:00Z"
	const epss = `{"old_score":null,"new_score":0.5,"old_percentile":null,"new_percentile":0.9}`
	cpe := func(v string) string {
		return `{"cpe_id":1,"product":"widget","uri":"cpe:2.3:a:acme:widget:` + v + `:*:*:*:*:*:*:*","vendor":"acme","version":"` + v + `"}`
	}
	d := &index.Data{
		CVEs: []index.CVE{
			{Name: "CVE-2024-0001", Summary: "Now summary", CreatedAt: t1, UpdatedAt: t2},
			{Name: "CVE-2024-0002", Summary: "Second", CreatedAt: t1, UpdatedAt: t2},
			{Name: "CVE-2024-10000", Summary: "Big number", CreatedAt: t1, UpdatedAt: t1},
		},
		Reports: []index.Report{
			{ID: "20240101T000000Z", CreatedAt: t1, Alerts: []index.Alert{
				alert(1, "CVE-2024-0001", t1,
					ev(index.EventNewCVE, `{}`),
					ev(index.EventCPEsChanged, `{"added":[`+cpe("1.0")+`],"removed":[]}`),
					ev(index.EventCVSSChanged, `{"action":"added","id":11,"new_score":"7.5","old_score":""}`),
					ev(index.EventCWEsChanged, `{"added":["CWE-79"],"removed":[]}`),
					ev(index.EventReferencesChanged, `{"added":[{"description":"","link":"https://example.org/a","source":"s","type":"UNKNOWN"},{"description":"Patch","link":"https://example.org/b","source":"s","type":"PATCH"}],"changed":[],"removed":[]}`)),
				alert(2, "CVE-2024-10000", t1, ev(index.EventNewCVE, `{}`)),
				alert(3, "CVE-2024-0002", t1, ev(index.EventNewCVE, `{}`), ev(index.EventEPSSChanged, epss)),
			}},
			{ID: "20240102T000000Z", CreatedAt: t2, Alerts: []index.Alert{
				alert(4, "CVE-2024-0001", t2,
					ev(index.EventSummaryChanged, `{"old":"First summary","new":"Now summary"}`),
					ev(index.EventCPEsChanged, `{"added":[`+cpe("2.0")+`],"removed":[`+cpe("1.0")+`]}`),
					ev(index.EventCVSSChanged, `{"action":"changed","id":11,"new_score":"9.8","old_score":"7.5"}`),
					ev(index.EventCWEsChanged, `{"added":["CWE-787"],"removed":["CWE-79"]}`),
					ev(index.EventReferencesChanged, `{"added":[],"changed":[`+
						`{"id":21,"key":"type","link":"https://example.org/a","new_value":"EXPLOIT","old_value":"UNKNOWN"},`+
						`{"id":21,"key":"source","link":"https://example.org/a","new_value":"t","old_value":"s"},`+
						`{"id":21,"key":"description","link":"https://example.org/a","new_value":"Exploit, Third Party Advisory","old_value":""}],`+
						`"removed":[{"description":"Patch","link":"https://example.org/b","source":"s","type":"PATCH"}]}`)),
				alert(5, "CVE-2024-0002", t2, ev(index.EventEPSSChanged, epss)),
			}},
			{ID: "20240102T000000Z-2", CreatedAt: t2, Alerts: []index.Alert{
				alert(7, "CVE-2024-0002", t2,
					ev(index.EventCVSSChanged, `{"action":"removed","id":12,"new_score":"","old_score":"5.0"}`),
					ev(index.EventAffectedChanged, `{"added":[{"vendor":"acme","product":"gadget"}],"removed":[]}`)),
				alert(8, "CVE-2024-0003", t2, ev(index.EventNewCVE, `{}`)),
				alert(9, "CVE-2024-0001", t2, ev(index.EventCWEsChanged, `{"added":["CWE-20"],"removed":[]}`)),
			}},
		},
		NVD: []index.NVDRecord{{Raw: []byte(`{"id":"CVE-2024-0001"}`), Facts: index.NVDFacts{ID: "CVE-2024-0001",
			Published: "2024-01-01T00:00:00.000", LastModified: "2024-01-02T00:00:00.000", Source: "cna@example.org"}}},
	}
	ix, err := index.Build(d, index.Meta{ID: "hist", BuiltAt: "2024-03-03 00:00:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// historyChanges are historyIndex's changes in the order served, written
// by hand from its events.
var historyChanges = []string{
	// 2024-01-01: the three new CVEs, by CVE number (10000 last).
	`{"change":{"cveId":"CVE-2024-0001","eventName":"New CVE Received","cveChangeId":"00000000-0000-8000-8000-000000000001","sourceIdentifier":"cna@example.org","created":"2024-01-01T00:00:00.000","details":[` +
		`{"action":"Added","type":"Description","newValue":"First summary"},` +
		`{"action":"Added","type":"CPE Configuration","newValue":"cpe:2.3:a:acme:widget:1.0:*:*:*:*:*:*:*"},` +
		`{"action":"Added","type":"CVSS","newValue":"7.5"},` +
		`{"action":"Added","type":"CWE","newValue":"CWE-79"},` +
		`{"action":"Added","type":"Reference","newValue":"https://example.org/a"},` +
		`{"action":"Added","type":"Reference","newValue":"https://example.org/b"}]}}`,
	`{"change":{"cveId":"CVE-2024-0002","eventName":"New CVE Received","cveChangeId":"00000000-0000-8000-8000-000000000003","sourceIdentifier":"","created":"2024-01-01T00:00:00.000","details":[` +
		`{"action":"Added","type":"Description","newValue":"Second"}]}}`,
	`{"change":{"cveId":"CVE-2024-10000","eventName":"New CVE Received","cveChangeId":"00000000-0000-8000-8000-000000000002","sourceIdentifier":"","created":"2024-01-01T00:00:00.000","details":[` +
		`{"action":"Added","type":"Description","newValue":"Big number"}]}}`,
	// 2024-01-02: by CVE number, then alert id (alert 5 is EPSS only).
	`{"change":{"cveId":"CVE-2024-0001","eventName":"CVE Modified","cveChangeId":"00000000-0000-8000-8000-000000000004","sourceIdentifier":"cna@example.org","created":"2024-01-02T00:00:00.000","details":[` +
		`{"action":"Changed","type":"Description","oldValue":"First summary","newValue":"Now summary"},` +
		`{"action":"Added","type":"CPE Configuration","newValue":"cpe:2.3:a:acme:widget:2.0:*:*:*:*:*:*:*"},` +
		`{"action":"Removed","type":"CPE Configuration","oldValue":"cpe:2.3:a:acme:widget:1.0:*:*:*:*:*:*:*"},` +
		`{"action":"Changed","type":"CVSS","oldValue":"7.5","newValue":"9.8"},` +
		`{"action":"Added","type":"CWE","newValue":"CWE-787"},` +
		`{"action":"Removed","type":"CWE","oldValue":"CWE-79"},` +
		`{"action":"Removed","type":"Reference","oldValue":"https://example.org/b"},` +
		`{"action":"Changed","type":"Reference Source","oldValue":"https://example.org/a s","newValue":"https://example.org/a t"},` +
		`{"action":"Changed","type":"Reference Type","oldValue":"https://example.org/a No Types Assigned","newValue":"https://example.org/a Exploit, Third Party Advisory"}]}}`,
	`{"change":{"cveId":"CVE-2024-0001","eventName":"CVE Modified","cveChangeId":"00000000-0000-8000-8000-000000000009","sourceIdentifier":"cna@example.org","created":"2024-01-02T00:00:00.000","details":[` +
		`{"action":"Added","type":"CWE","newValue":"CWE-20"}]}}`,
	`{"change":{"cveId":"CVE-2024-0002","eventName":"CVE Modified","cveChangeId":"00000000-0000-8000-8000-000000000007","sourceIdentifier":"","created":"2024-01-02T00:00:00.000","details":[` +
		`{"action":"Removed","type":"CVSS","oldValue":"5.0"},` +
		`{"action":"Added","type":"Affected","newValue":"{\"vendor\":\"acme\",\"product\":\"gadget\"}"}]}}`,
	`{"change":{"cveId":"CVE-2024-0003","eventName":"New CVE Received","cveChangeId":"00000000-0000-8000-8000-000000000008","sourceIdentifier":"","created":"2024-01-02T00:00:00.000","details":[]}}`,
}

// historyBody is the envelope of historyIndex's answer holding changes
// (positions in historyChanges) of total.
func historyBody(start, total int, changes ...int) string {
	var items []string
	for _, c := range changes {
		items = append(items, historyChanges[c])
	}
	return `{"resultsPerPage":` + strconv.Itoa(len(changes)) + `,"startIndex":` + strconv.Itoa(start) + `,"totalResults":` + strconv.Itoa(total) +
		`,"format":"NVD_CVEHistory","version":"2.0","timestamp":"2024-03-03T00:00:00.000","cveChanges":[` + strings.Join(items, ",") + `]}`
}

// TestNVDHistoryGoldens: every parameter of the history API, on changes
// worked out by hand, byte for byte.
func TestNVDHistoryGoldens(t *testing.T) {
	srv := newTestServer(t, historyIndex(t))
	all := []int{0, 1, 2, 3, 4, 5, 6}
	for _, tc := range []struct {
		query string
		want  string
	}{
		{"", historyBody(0, 7, all...)},
		{"resultsPerPage=5000&startIndex=0", historyBody(0, 7, all...)},
		// Paging: three pages of 3, 3 and 1; past the end; none asked.
		{"resultsPerPage=3", historyBody(0, 7, 0, 1, 2)},
		{"resultsPerPage=3&startIndex=3", historyBody(3, 7, 3, 4, 5)},
		{"resultsPerPage=3&startIndex=6", historyBody(6, 7, 6)},
		{"startIndex=7", historyBody(7, 7)},
		{"startIndex=100", historyBody(100, 7)},
		{"resultsPerPage=0", historyBody(0, 7)},
		// cveId, any letter case; one with no change.
		{"cveId=cve-2024-0001", historyBody(0, 3, 0, 3, 4)},
		{"cveId=CVE-2024-10000", historyBody(0, 1, 2)},
		{"cveId=CVE-2024-1000", historyBody(0, 0)},
		{"cveId=CVE-2099-0001", historyBody(0, 0)},
		// eventName: NVD's documented and written names, any case.
		{"eventName=CVE%20Received", historyBody(0, 4, 0, 1, 2, 6)},
		{"eventName=New+CVE+Received", historyBody(0, 4, 0, 1, 2, 6)},
		{"eventName=cve%20modified", historyBody(0, 3, 3, 4, 5)},
		{"eventName=Initial%20Analysis", historyBody(0, 0)},
		{"eventName=CVE%20CISA%20KEV%20Update", historyBody(0, 0)},
		// Dates: both ends included, to the millisecond; zones.
		{"changeStartDate=2024-01-02T00:00:00.000&changeEndDate=2024-01-02T00:00:00.000", historyBody(0, 4, 3, 4, 5, 6)},
		{"changeStartDate=2024-01-01T00:00:00.000&changeEndDate=2024-01-01T00:00:00.000", historyBody(0, 3, 0, 1, 2)},
		{"changeStartDate=2024-01-01T00:00:00.001&changeEndDate=2024-01-01T23:59:59.999", historyBody(0, 0)},
		{"changeStartDate=2023-12-31T19:00:00.000-05:00&changeEndDate=2024-01-01T23:59:59.999Z", historyBody(0, 3, 0, 1, 2)},
		{"changeStartDate=2024-01-02T01:00:00%2B01:00&changeEndDate=2030-01-01T00:00:00", historyBody(0, 4, 3, 4, 5, 6)},
		{"changeStartDate=2024-01-02T01:00:00+01:00&changeEndDate=2030-01-01T00:00:00", historyBody(0, 4, 3, 4, 5, 6)},
		{"changeStartDate=2000-01-01T00:00:00.000&changeEndDate=2030-01-01T00:00:00.000", historyBody(0, 7, all...)}, // over 120 days
		{"changeStartDate=2024-01-03T00:00:00.000&changeEndDate=2030-01-01T00:00:00.000", historyBody(0, 0)},
		// Together, AND-ed, and paged.
		{"cveId=CVE-2024-0001&eventName=CVE%20Modified&changeStartDate=2024-01-02T00:00:00.000&changeEndDate=2024-01-02T00:00:00.000&resultsPerPage=1&startIndex=1", historyBody(1, 2, 4)},
		{"cveId=CVE-2024-0002&eventName=CVE%20Received", historyBody(0, 1, 1)},
		// Unknown parameters are ignored; of a repeated one the first counts.
		{"nonsense=%ZZ&cveId=CVE-2024-0003&cveId=CVE-2024-0001", historyBody(0, 1, 6)},
	} {
		res, body := do(t, srv, http.MethodGet, NVDHistoryPath+"?"+tc.query, nil)
		if res.StatusCode != 200 {
			t.Errorf("?%s: %d %s", tc.query, res.StatusCode, body)
			continue
		}
		if !stdjson.Valid(body) {
			t.Errorf("?%s: not JSON: %s", tc.query, body)
		}
		if string(body) != tc.want {
			t.Errorf("?%s:\n got %s\nwant %s", tc.query, body, tc.want)
		}
	}
}

// TestNVDHistoryPagesJoin: pages of every size join to the whole list,
// each change once, in the same order.
func TestNVDHistoryPagesJoin(t *testing.T) {
	srv := newTestServer(t, historyIndex(t))
	for size := 1; size <= 8; size++ {
		var got []string
		for start := 0; start < 7; start += size {
			_, body := do(t, srv, http.MethodGet, NVDHistoryPath+"?resultsPerPage="+strconv.Itoa(size)+"&startIndex="+strconv.Itoa(start), nil)
			var p struct {
				CVEChanges []stdjson.RawMessage `json:"cveChanges"`
			}
			if err := stdjson.Unmarshal(body, &p); err != nil {
				t.Fatal(err)
			}
			for _, c := range p.CVEChanges {
				got = append(got, string(c))
			}
		}
		if diff := cmp.Diff(historyChanges, got); diff != "" {
			t.Errorf("pages of %d (-want +got):\n%s", size, diff)
		}
	}
}

// nvdHistoryBadQueries are queries the history API refuses, one for each
// reason, with the answer (TestOpenAPILiveResponses sends them too).
var nvdHistoryBadQueries = []struct {
	query string
	err   *apiError
}{
	{"startIndex=-1", errNVDStartIndex},
	{"startIndex=", errNVDStartIndex},
	{"resultsPerPage=5001", errNVDHistoryResultsPerPage},
	{"resultsPerPage=x", errNVDHistoryResultsPerPage},
	{"cveId=CVE-21-1", errNVDCVEID},
	{"cveId=", errNVDCVEID},
	{"changeStartDate=2024-01-01T00:00:00.000", errNVDChangePair},
	{"changeEndDate=2024-01-01T00:00:00.000", errNVDChangePair},
	{"changeStartDate=yesterday&changeEndDate=2024-01-01T00:00:00.000", errNVDDate},
	{"changeStartDate=2024-01-01&changeEndDate=2024-01-02", errNVDDate},
	{"changeStartDate=2024-02-01T00:00:00.000&changeEndDate=2024-01-01T00:00:00.000", errNVDDateOrder},
	{"eventName=Bogus", errNVDEventName},
	{"eventName=", errNVDEventName},
	{"eventName=New%20CVE", errNVDEventName},
	{"eventName=%ZZ", errNVDBadQuery},
}

// TestNVDHistoryBadQueries: every bad value gets NVD's 404 with its
// reason in the message header and the body; HEAD the same without the
// body.
func TestNVDHistoryBadQueries(t *testing.T) {
	srv := newTestServer(t, historyIndex(t))
	for _, tc := range nvdHistoryBadQueries {
		for _, m := range []string{http.MethodGet, http.MethodHead} {
			res, body := do(t, srv, m, NVDHistoryPath+"?"+tc.query, nil)
			wantBody := string(tc.err.body)
			if m == http.MethodHead {
				wantBody = ""
			}
			if res.StatusCode != http.StatusNotFound || res.Header.Get("message") != tc.err.message || string(body) != wantBody {
				t.Errorf("%s ?%s: %d, message header %q, body %s; want 404, %q", m, tc.query, res.StatusCode, res.Header.Get("message"), body, tc.err.message)
			}
		}
	}
}

// TestNVDHistoryHTTP: HEAD, ETag and 304, compression with its
// Content-Length, as on every route; an index without reports has no
// change.
func TestNVDHistoryHTTP(t *testing.T) {
	srv := newTestServer(t, historyIndex(t))
	res, body := do(t, srv, http.MethodGet, NVDHistoryPath, nil)
	if res.StatusCode != 200 || res.Header.Get("ETag") != `"hist"` || res.Header.Get("Content-Length") != strconv.Itoa(len(body)) {
		t.Fatalf("GET: %d, ETag %q, Content-Length %q for %d bytes", res.StatusCode, res.Header.Get("ETag"), res.Header.Get("Content-Length"), len(body))
	}
	head, hb := do(t, srv, http.MethodHead, NVDHistoryPath, nil)
	if head.StatusCode != 200 || len(hb) != 0 || head.Header.Get("Content-Length") != res.Header.Get("Content-Length") {
		t.Errorf("HEAD: %d, %d bytes, Content-Length %q", head.StatusCode, len(hb), head.Header.Get("Content-Length"))
	}
	if nm, _ := do(t, srv, http.MethodGet, NVDHistoryPath, map[string]string{"If-None-Match": `"hist"`}); nm.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match: %d, want 304", nm.StatusCode)
	}
	gz, zb := do(t, srv, http.MethodGet, NVDHistoryPath, map[string]string{"Accept-Encoding": "gzip"})
	if gz.Header.Get("Content-Encoding") != "gzip" || gz.Header.Get("Content-Length") != strconv.Itoa(len(zb)) || string(gunzipBody(t, zb)) != string(body) {
		t.Errorf("gzip: Content-Encoding %q, Content-Length %q for %d bytes", gz.Header.Get("Content-Encoding"), gz.Header.Get("Content-Length"), len(zb))
	}
	if m, _ := do(t, srv, http.MethodPost, NVDHistoryPath, nil); m.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d, want 405", m.StatusCode)
	}

	empty, err := index.Build(&index.Data{}, index.Meta{ID: "empty", BuiltAt: "2024-03-03 00:00:00Z"})
	if err != nil {
		t.Fatal(err)
	}
	_, eb := do(t, newTestServer(t, empty), http.MethodGet, NVDHistoryPath+"?eventName=CVE%20Modified", nil)
	if want := historyBody(0, 0); string(eb) != want {
		t.Errorf("no reports: %s, want %s", eb, want)
	}
}

// TestNVDHistoryRealChanges: on the real before/after pair (see
// testdata/changes/NOTES.md), the history of a new CVE and of a changed
// one, worked out by hand from their events (testdata/changes/CVE-*.json);
// cveChangeId is the alert's, as the report lists it.
func TestNVDHistoryRealChanges(t *testing.T) {
	srv := newTestServer(t, changesIndex(t))
	_, rb := do(t, srv, http.MethodGet, "/reports/20261122T060000Z/alerts", nil)
	var alerts []struct {
		ID  int64  `json:"id"`
		CVE string `json:"cve"`
	}
	if err := stdjson.Unmarshal(rb, &alerts); err != nil {
		t.Fatal(err)
	}
	alertOf := map[string]int64{}
	for _, a := range alerts {
		alertOf[a.CVE] = a.ID
	}
	const env = `{"resultsPerPage":1,"startIndex":0,"totalResults":1,"format":"NVD_CVEHistory","version":"2.0","timestamp":"2026-11-22T06:00:00.000","cveChanges":[`
	for _, tc := range []struct{ cve, want string }{
		{"CVE-2024-6424", `{"change":{"cveId":"CVE-2024-6424","eventName":"New CVE Received","cveChangeId":"` + index.HistoryChangeID(alertOf["CVE-2024-6424"]) +
			`","sourceIdentifier":"cve-coordination@incibe.es","created":"2026-11-22T06:00:00.000","details":[` +
			`{"action":"Added","type":"Description","newValue":"External server-side request vulnerability in MESbook 20221021.03 version, which could allow a remote, unauthenticated attacker to exploit the endpoint \"/api/Proxy/Post?userName=\u0026password=\u0026uri=\u003cFILE|INTERNAL URL|IP/HOST\" or \"/api/Proxy/Get?userName=\u0026password=\u0026uri=\u003cARCHIVO|URL INTERNA|IP/HOST\" to read the source code of web files, read internal files or access network resources."},` +
			`{"action":"Added","type":"CVSS","newValue":"9.3"},` +
			`{"action":"Added","type":"CWE","newValue":"CWE-918"},` +
			`{"action":"Added","type":"Reference","newValue":"https://www.incibe.es/en/incibe-cert/notices/aviso-sci/multiple-vulnerabilities-mesbook"}]}}`},
		{"CVE-2023-6069", `{"change":{"cveId":"CVE-2023-6069","eventName":"CVE Modified","cveChangeId":"` + index.HistoryChangeID(alertOf["CVE-2023-6069"]) +
			`","sourceIdentifier":"security@huntr.dev","created":"2026-11-22T06:00:00.000","details":[` +
			`{"action":"Changed","type":"Description","oldValue":"Improper Input Validation in GitHub repository froxlor/froxlor prior to 2.1.0.","newValue":"Improper Link Resolution Before File Access in GitHub repository froxlor/froxlor prior to 2.1.0.\n\n"},` +
			`{"action":"Added","type":"CPE Configuration","newValue":"cpe:2.3:a:froxlor:froxlor:*:*:*:*:*:*:*:*"},` +
			`{"action":"Removed","type":"CVSS","oldValue":"9.9"},` +
			`{"action":"Added","type":"CVSS","newValue":"9.9"},` +
			`{"action":"Added","type":"CVSS","newValue":"8.8"},` +
			`{"action":"Added","type":"CWE","newValue":"CWE-59"},` +
			`{"action":"Removed","type":"CWE","oldValue":"CWE-20"},` +
			`{"action":"Added","type":"Reference","newValue":"https://github.com/froxlor/froxlor/commit/9e8f32f1e86016733b603b50c31b97f472e8dabc"},` +
			`{"action":"Added","type":"Reference","newValue":"https://huntr.com/bounties/aac0627e-e59d-476e-9385-edb7ff53758c"},` +
			`{"action":"Changed","type":"Reference Type","oldValue":"https://github.com/froxlor/froxlor/commit/9e8f32f1e86016733b603b50c31b97f472e8dabc No Types Assigned","newValue":"https://github.com/froxlor/froxlor/commit/9e8f32f1e86016733b603b50c31b97f472e8dabc Patch"},` +
			`{"action":"Changed","type":"Reference Type","oldValue":"https://huntr.com/bounties/aac0627e-e59d-476e-9385-edb7ff53758c No Types Assigned","newValue":"https://huntr.com/bounties/aac0627e-e59d-476e-9385-edb7ff53758c Exploit, Third Party Advisory"}]}}`},
	} {
		if alertOf[tc.cve] == 0 {
			t.Fatalf("%s has no alert", tc.cve)
		}
		_, body := do(t, srv, http.MethodGet, NVDHistoryPath+"?cveId="+tc.cve, nil)
		if want := env + tc.want + "]}"; string(body) != want {
			t.Errorf("%s:\n got %s\nwant %s", tc.cve, body, want)
		}
	}
	// The whole report: one change per alert (none is EPSS only), all of
	// its time, and the new ones are the three new CVEs.
	_, all := do(t, srv, http.MethodGet, NVDHistoryPath+"?changeStartDate=2026-11-22T06:00:00.000&changeEndDate=2026-11-22T06:00:00.000", nil)
	var p struct {
		TotalResults int `json:"totalResults"`
	}
	if err := stdjson.Unmarshal(all, &p); err != nil || p.TotalResults != len(alerts) {
		t.Errorf("changes at the report's time: %d (%v), want %d", p.TotalResults, err, len(alerts))
	}
	_, nb := do(t, srv, http.MethodGet, NVDHistoryPath+"?eventName=CVE%20Received", nil)
	var n struct {
		CVEChanges []struct {
			Change struct {
				CVEID string `json:"cveId"`
			} `json:"change"`
		} `json:"cveChanges"`
	}
	if err := stdjson.Unmarshal(nb, &n); err != nil {
		t.Fatal(err)
	}
	var news []string
	for _, c := range n.CVEChanges {
		news = append(news, c.Change.CVEID)
	}
	if diff := cmp.Diff([]string{"CVE-2013-1235", "CVE-2024-6424", "CVE-2024-6728"}, news); diff != "" {
		t.Errorf("new CVEs (-want +got):\n%s", diff)
	}
}

func gunzipBody(t *testing.T, z []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var changeIDPattern = regexp.MustCompile(`^[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}$`)

// FuzzNVDHistoryQuery sends arbitrary queries to the history API: it
// never panics and never answers 5xx; a 200 is NVD's envelope with no
// more changes than resultsPerPage allows, each with a UUID-shaped id; a
// 404 carries its reason in the message header and the body.
func FuzzNVDHistoryQuery(f *testing.F) {
	for _, q := range []string{"", "cveId=CVE-2024-0001", "resultsPerPage=3&startIndex=6", "eventName=CVE%20Modified",
		"changeStartDate=2024-01-02T01:00:00%2B01:00&changeEndDate=2030-01-01T00:00:00", "startIndex=99999999999999999999",
		"changeStartDate=2024-01-01&changeEndDate=2024-01-02", "eventName=%ZZ"} {
		f.Add(q)
	}
	ix := historyIndex(f)
	s := New(func() *index.Index { return ix }, Options{})
	f.Fuzz(func(t *testing.T, query string) {
		if strings.ContainsAny(query, " #") || !utf8.ValidString(query) {
			return // not a query a request line carries
		}
		if _, err := url.ParseRequestURI(NVDHistoryPath + "?" + query); err != nil {
			return
		}
		req := httptest.NewRequest(http.MethodGet, "http://x"+NVDHistoryPath+"?"+query, nil)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		body := rec.Body.Bytes()
		switch rec.Code {
		case http.StatusOK:
			var p struct {
				ResultsPerPage int    `json:"resultsPerPage"`
				Format         string `json:"format"`
				CVEChanges     []struct {
					Change struct {
						ID string `json:"cveChangeId"`
					} `json:"change"`
				} `json:"cveChanges"`
			}
			if err := stdjson.Unmarshal(body, &p); err != nil || p.Format != "NVD_CVEHistory" || p.ResultsPerPage != len(p.CVEChanges) || p.ResultsPerPage > 5000 {
				t.Fatalf("?%s: 200 body is not NVD's envelope (%v): %.300s", query, err, body)
			}
			for _, c := range p.CVEChanges {
				if !changeIDPattern.MatchString(c.Change.ID) {
					t.Fatalf("?%s: cveChangeId %q", query, c.Change.ID)
				}
			}
		case http.StatusNotFound, http.StatusBadRequest:
			var e struct{ Message string }
			if err := stdjson.Unmarshal(body, &e); err != nil || e.Message == "" {
				t.Fatalf("?%s: %d without a message: %s", query, rec.Code, body)
			}
			if rec.Code == http.StatusNotFound && rec.Header().Get("message") != e.Message {
				t.Fatalf("?%s: 404 message header %q, body %q", query, rec.Header().Get("message"), e.Message)
			}
		default:
			t.Fatalf("?%s: status %d: %s", query, rec.Code, body)
		}
	})
}
