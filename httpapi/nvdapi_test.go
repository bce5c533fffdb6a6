package httpapi

import (
	"bytes"
	"compress/gzip"
	"context"
	stdjson "encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/vulnd/vulnd/index"
	"github.com/vulnd/vulnd/loader/loadertest"
)

// nvdSample is NVD's sample feed: each record as the feed holds it, and
// decoded, in the feed's order.
type nvdSample struct {
	raw  map[string]string
	recs []map[string]any
}

func readNVDSample(t *testing.T) nvdSample {
	t.Helper()
	s := nvdSample{raw: map[string]string{}}
	for _, rec := range loadertest.FeedRecords(t, sharedData(t, "nvd/nvdcve-2.0-sample.json.gz")) {
		var m map[string]any
		if err := stdjson.Unmarshal(rec, &m); err != nil {
			t.Fatal(err)
		}
		s.raw[m["id"].(string)] = string(rec)
		s.recs = append(s.recs, m)
	}
	return s
}

// nvdPage is NVD's envelope with each record as served.
type nvdPage struct {
	ResultsPerPage  int    `json:"resultsPerPage"`
	StartIndex      int    `json:"startIndex"`
	TotalResults    int    `json:"totalResults"`
	Format          string `json:"format"`
	Version         string `json:"version"`
	Timestamp       string `json:"timestamp"`
	Vulnerabilities []struct {
		CVE stdjson.RawMessage `json:"cve"`
	} `json:"vulnerabilities"`
}

func getNVD(t *testing.T, srv interface{ Close() }, do200 func(string) (*http.Response, []byte), query string) nvdPage {
	t.Helper()
	res, body := do200(query)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s?%s: %d %s", NVDPath, query, res.StatusCode, body)
	}
	// Exactly NVD's members, in NVD's order.
	var keys []string
	dec := stdjson.NewDecoder(bytes.NewReader(body))
	dec.Token()
	for dec.More() {
		k, _ := dec.Token()
		keys = append(keys, k.(string))
		var skip stdjson.RawMessage
		dec.Decode(&skip)
	}
	if want := []string{"resultsPerPage", "startIndex", "totalResults", "format", "version", "timestamp", "vulnerabilities"}; !slices.Equal(keys, want) {
		t.Fatalf("GET ?%s: members %q, want %q", query, keys, want)
	}
	var p nvdPage
	if err := stdjson.Unmarshal(body, &p); err != nil {
		t.Fatal(err)
	}
	if p.Format != "NVD_CVE" || p.Version != "2.0" || p.ResultsPerPage != len(p.Vulnerabilities) {
		t.Errorf("GET ?%s: format %q, version %q, resultsPerPage %d for %d records", query, p.Format, p.Version, p.ResultsPerPage, len(p.Vulnerabilities))
	}
	return p
}

// nvdIDs are the ids of a page's records.
func nvdIDs(t *testing.T, p nvdPage) []string {
	var ids []string
	for _, v := range p.Vulnerabilities {
		var c struct {
			ID string `json:"id"`
		}
		if err := stdjson.Unmarshal(v.CVE, &c); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	return ids
}

// TestNVDEnvelopeAndPaging: every NVD record of the snapshot (the JSON 5
// only CVEs have none) byte for byte as the feed held it, in NVD's
// envelope, published oldest first then by CVE number, paged by
// startIndex and resultsPerPage.
func TestNVDEnvelopeAndPaging(t *testing.T) {
	s := readNVDSample(t)
	srv := newTestServer(t, sampleCVE5Index(t))
	get := func(q string) (*http.Response, []byte) { return do(t, srv, "GET", NVDPath+"?"+q, nil) }
	all := getNVD(t, srv, get, "")
	if all.TotalResults != 186 || len(all.Vulnerabilities) != 186 || all.StartIndex != 0 {
		t.Fatalf("totalResults %d, %d records from %d; want the sample's 186 from 0", all.TotalResults, len(all.Vulnerabilities), all.StartIndex)
	}
	if all.Timestamp != "2026-11-22T00:00:00.000" {
		t.Errorf("timestamp %q, want the snapshot's build time in NVD's form 2026-11-22T00:00:00.000", all.Timestamp)
	}
	for _, v := range all.Vulnerabilities {
		var c struct {
			ID string `json:"id"`
		}
		stdjson.Unmarshal(v.CVE, &c)
		if string(v.CVE) != s.raw[c.ID] {
			t.Errorf("%s is not the feed's record byte for byte", c.ID)
		}
	}
	// The order: published, then CVE year and number.
	want := slices.Clone(s.recs)
	slices.SortStableFunc(want, func(a, b map[string]any) int {
		ta, _ := time.Parse("2006-01-02T15:04:05.000", a["published"].(string))
		tb, _ := time.Parse("2006-01-02T15:04:05.000", b["published"].(string))
		if c := ta.Compare(tb); c != 0 {
			return c
		}
		return cveOrder(a["id"].(string), b["id"].(string))
	})
	var wantIDs []string
	for _, r := range want {
		wantIDs = append(wantIDs, r["id"].(string))
	}
	ids := nvdIDs(t, all)
	if !slices.Equal(ids, wantIDs) {
		t.Errorf("order:\n%q\nwant\n%q", ids, wantIDs)
	}
	// Pages of 50 put together are the whole list; the last holds 36.
	var paged []string
	for start := 0; start < 186; start += 50 {
		p := getNVD(t, srv, get, "resultsPerPage=50&startIndex="+itoa(start))
		if p.StartIndex != start || p.TotalResults != 186 || p.ResultsPerPage != min(50, 186-start) {
			t.Errorf("page at %d: startIndex %d, totalResults %d, resultsPerPage %d", start, p.StartIndex, p.TotalResults, p.ResultsPerPage)
		}
		paged = append(paged, nvdIDs(t, p)...)
	}
	if !slices.Equal(paged, wantIDs) {
		t.Errorf("pages of 50 put together differ from the whole list")
	}
	if p := getNVD(t, srv, get, "startIndex=500"); p.ResultsPerPage != 0 || p.TotalResults != 186 || p.StartIndex != 500 {
		t.Errorf("past the end: %+v", p)
	}
	if p := getNVD(t, srv, get, "resultsPerPage=0"); p.ResultsPerPage != 0 || p.TotalResults != 186 {
		t.Errorf("resultsPerPage=0: %+v", p)
	}
	// HEAD, ETag and 304, compression with Content-Length.
	res, body := do(t, srv, "GET", NVDPath+"?resultsPerPage=3", nil)
	etag := res.Header.Get("ETag")
	if etag == "" || res.Header.Get("Content-Length") != itoa(len(body)) || res.Header.Get("Content-Type") != "application/json" {
		t.Errorf("GET: ETag %q, Content-Length %q for %d bytes, Content-Type %q", etag, res.Header.Get("Content-Length"), len(body), res.Header.Get("Content-Type"))
	}
	head, hbody := do(t, srv, "HEAD", NVDPath+"?resultsPerPage=3", nil)
	if head.StatusCode != 200 || len(hbody) != 0 || head.Header.Get("Content-Length") != itoa(len(body)) {
		t.Errorf("HEAD: %d, %d body bytes, Content-Length %q", head.StatusCode, len(hbody), head.Header.Get("Content-Length"))
	}
	if res, _ := do(t, srv, "GET", NVDPath+"?resultsPerPage=3", map[string]string{"If-None-Match": etag}); res.StatusCode != http.StatusNotModified {
		t.Errorf("If-None-Match: %d, want 304", res.StatusCode)
	}
	res, zbody := do(t, srv, "GET", NVDPath+"?resultsPerPage=3", map[string]string{"Accept-Encoding": "gzip"})
	if res.Header.Get("Content-Encoding") != "gzip" || res.Header.Get("Content-Length") != itoa(len(zbody)) {
		t.Fatalf("gzip: Content-Encoding %q, Content-Length %q for %d bytes", res.Header.Get("Content-Encoding"), res.Header.Get("Content-Length"), len(zbody))
	}
	zr, err := gzip.NewReader(bytes.NewReader(zbody))
	if err != nil {
		t.Fatal(err)
	}
	if plain, _ := io.ReadAll(zr); !bytes.Equal(plain, body) {
		t.Error("the gzip body does not decode to the plain one")
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// cveOrder compares CVE ids by year, then number.
func cveOrder(a, b string) int {
	pa, pb := strings.Split(a, "-"), strings.Split(b, "-")
	if pa[1] != pb[1] {
		return strings.Compare(pa[1], pb[1])
	}
	if len(pa[2]) != len(pb[2]) {
		return len(pa[2]) - len(pb[2])
	}
	return strings.Compare(pa[2], pb[2])
}

// The sample record's facts, read the plain way, for the expectations.

func mstr(m map[string]any, k string) string { s, _ := m[k].(string); return s }

func list(m map[string]any, k string) []any { l, _ := m[k].([]any); return l }

func obj(m any, k string) map[string]any {
	o, _ := m.(map[string]any)
	r, _ := o[k].(map[string]any)
	return r
}

func nvdTime(t *testing.T, s string) time.Time {
	for _, l := range []string{"2006-01-02T15:04:05.000", "2006-01-02T15:04:05.000Z07:00", "2006-01-02"} {
		if v, err := time.Parse(l, s); err == nil {
			return v
		}
	}
	t.Fatalf("bad time %q", s)
	return time.Time{}
}

// metricsOf are a record's CVSS metrics of the given lists.
func metricsOf(r map[string]any, keys ...string) (sev, vec []string) {
	for _, k := range keys {
		for _, m := range list(obj(r, "metrics"), k) {
			d := obj(m, "cvssData")
			s := mstr(d, "baseSeverity")
			if s == "" {
				s = mstr(m.(map[string]any), "baseSeverity")
			}
			sev = append(sev, s)
			vec = append(vec, mstr(d, "vectorString"))
		}
	}
	return sev, vec
}

func hasRef(r map[string]any, sub string) bool {
	for _, ref := range list(r, "references") {
		if strings.Contains(strings.ToLower(mstr(ref.(map[string]any), "url")), sub) {
			return true
		}
	}
	return false
}

func englishDescription(r map[string]any) string {
	for _, d := range list(r, "descriptions") {
		if mstr(d.(map[string]any), "lang") == "en" {
			return mstr(d.(map[string]any), "value")
		}
	}
	return ""
}

// TestNVDParameters: each of NVD's parameters, as NVD documents it
// (https://nvd.nist.gov/developers/vulnerabilities), against the sample's
// records read independently here; each answer is every matching record
// of the sample, in the order served.
func TestNVDParameters(t *testing.T) {
	s := readNVDSample(t)
	srv := newTestServer(t, sampleCVE5Index(t))
	get := func(q string) (*http.Response, []byte) { return do(t, srv, "GET", NVDPath+"?"+q, nil) }
	order := nvdIDs(t, getNVD(t, srv, get, ""))
	byID := map[string]map[string]any{}
	for _, r := range s.recs {
		byID[r["id"].(string)] = r
	}
	word := func(text, w string) bool {
		// A term starts a word: "circle" finds "circles", not "encircle".
		re := regexp.MustCompile(`(?i)(^|[^\p{L}\p{N}])` + regexp.QuoteMeta(w))
		return re.MatchString(text)
	}
	within := func(s string, from, to time.Time) bool {
		v := nvdTime(t, s)
		return !v.Before(from) && !v.After(to)
	}
	d := func(s string) time.Time { return nvdTime(t, s) }
	for _, tc := range []struct {
		query string
		match func(r map[string]any) bool
		n     int // the count, when the test knows it from the sample; -1 otherwise
	}{
		{"cveId=CVE-2021-44228", func(r map[string]any) bool { return r["id"] == "CVE-2021-44228" }, 1},
		{"cveId=cve-2021-44228", func(r map[string]any) bool { return r["id"] == "CVE-2021-44228" }, 1},
		{"cveId=CVE-1999-9999", func(map[string]any) bool { return false }, 0},
		{"lastModStartDate=2024-01-01T00:00:00.000&lastModEndDate=2024-12-31T23:59:59.999", func(r map[string]any) bool {
			return within(mstr(r, "lastModified"), d("2024-01-01T00:00:00.000"), d("2024-12-31T23:59:59.999"))
		}, -1},
		{"lastModStartDate=2024-01-01T00:00:00.000%2B01:00&lastModEndDate=2025-06-30T00:00:00.000Z", func(r map[string]any) bool {
			return within(mstr(r, "lastModified"), d("2023-12-31T23:00:00.000"), d("2025-06-30T00:00:00.000"))
		}, -1},
		{"pubStartDate=2021-01-01T00:00:00.000&pubEndDate=2021-12-31T23:59:59.999", func(r map[string]any) bool {
			return within(mstr(r, "published"), d("2021-01-01T00:00:00.000"), d("2021-12-31T23:59:59.999"))
		}, -1},
		// No 120-day limit.
		{"pubStartDate=1980-01-01T00:00:00.000&pubEndDate=2030-01-01T00:00:00.000", func(map[string]any) bool { return true }, 186},
		{"noRejected", func(r map[string]any) bool { return mstr(r, "vulnStatus") != "Rejected" }, 171},
		{"cweId=CWE-79", func(r map[string]any) bool {
			for _, w := range list(r, "weaknesses") {
				for _, dd := range list(w.(map[string]any), "description") {
					if mstr(dd.(map[string]any), "value") == "CWE-79" {
						return true
					}
				}
			}
			return false
		}, -1},
		{"cvssV2Severity=HIGH", func(r map[string]any) bool {
			sev, _ := metricsOf(r, "cvssMetricV2")
			return slices.Contains(sev, "HIGH")
		}, -1},
		{"cvssV3Severity=critical", func(r map[string]any) bool {
			sev, _ := metricsOf(r, "cvssMetricV30", "cvssMetricV31")
			return slices.Contains(sev, "CRITICAL")
		}, -1},
		{"cvssV4Severity=HIGH", func(r map[string]any) bool {
			sev, _ := metricsOf(r, "cvssMetricV40")
			return slices.Contains(sev, "HIGH")
		}, -1},
		{"hasKev", func(r map[string]any) bool { _, ok := r["cisaExploitAdd"]; return ok }, 8},
		{"kevStartDate=2021-12-01T00:00:00.000&kevEndDate=2022-12-31T00:00:00.000", func(r map[string]any) bool {
			k := mstr(r, "cisaExploitAdd")
			return k != "" && within(k, d("2021-12-01"), d("2022-12-31"))
		}, 3},
		{"keywordSearch=Sendmail", func(r map[string]any) bool { return word(englishDescription(r), "Sendmail") }, -1},
		// A term is the start of a word: "attack" finds "attackers",
		// "ttackers" finds nothing.
		{"keywordSearch=attack", func(r map[string]any) bool { return word(englishDescription(r), "attack") }, -1},
		{"keywordSearch=ttackers", func(map[string]any) bool { return false }, 0},
		{"keywordSearch=remote%20execute", func(r map[string]any) bool {
			return word(englishDescription(r), "remote") && word(englishDescription(r), "execute")
		}, -1},
		{"keywordSearch=remote%20attackers&keywordExactMatch", func(r map[string]any) bool {
			return regexp.MustCompile(`(?i)(^|[^\p{L}\p{N}])remote attackers($|[^\p{L}\p{N}])`).MatchString(englishDescription(r))
		}, -1},
		{"sourceIdentifier=cve@mitre.org", func(r map[string]any) bool { return mstr(r, "sourceIdentifier") == "cve@mitre.org" }, 38},
		{"cveTag=unsupported-when-assigned", func(r map[string]any) bool { return r["id"] == "CVE-2024-6647" }, 1},
		{"cvssV3Metrics=AV:N/AC:L/PR:N", func(r map[string]any) bool {
			_, vecs := metricsOf(r, "cvssMetricV30", "cvssMetricV31")
			for _, v := range vecs {
				parts := strings.Split(v, "/")
				if slices.Contains(parts, "AV:N") && slices.Contains(parts, "AC:L") && slices.Contains(parts, "PR:N") {
					return true
				}
			}
			return false
		}, -1},
		{"cvssV4Metrics=AV:N/AC:L", func(r map[string]any) bool {
			_, vecs := metricsOf(r, "cvssMetricV40")
			for _, v := range vecs {
				parts := strings.Split(v, "/")
				if slices.Contains(parts, "AV:N") && slices.Contains(parts, "AC:L") {
					return true
				}
			}
			return false
		}, -1},
		{"cvssV2Metrics=AV:N/AC:L/Au:N/C:C/I:C/A:C", func(r map[string]any) bool {
			_, vecs := metricsOf(r, "cvssMetricV2")
			return slices.Contains(vecs, "AV:N/AC:L/Au:N/C:C/I:C/A:C")
		}, -1},
		{"hasCertNotes", func(r map[string]any) bool { return hasRef(r, "kb.cert.org/vuls") }, 6},
		{"hasOval", func(r map[string]any) bool { return hasRef(r, "oval.mitre.org") || hasRef(r, "oval.cisecurity.org") }, -1},
		// US-CERT's technical alerts (TA05-292A, ...), at the addresses
		// US-CERT and then CISA gave them.
		{"hasCertAlerts", func(r map[string]any) bool {
			return hasRef(r, "us-cert.gov/cas/techalerts") || hasRef(r, "us-cert.gov/ncas/alerts") || hasRef(r, "cisa.gov/news-events/alerts") || hasRef(r, "cisa.gov/uscert/ncas/alerts")
		}, 4},
		{"noRejected&hasKev&cvssV3Severity=CRITICAL", func(r map[string]any) bool {
			_, kev := r["cisaExploitAdd"]
			sev, _ := metricsOf(r, "cvssMetricV30", "cvssMetricV31")
			return kev && mstr(r, "vulnStatus") != "Rejected" && slices.Contains(sev, "CRITICAL")
		}, -1},
	} {
		var want []string
		for _, id := range order {
			if tc.match(byID[id]) {
				want = append(want, id)
			}
		}
		p := getNVD(t, srv, get, tc.query)
		got := nvdIDs(t, p)
		if !slices.Equal(got, want) || p.TotalResults != len(want) {
			t.Errorf("?%s: %d records %q (totalResults %d), want %d %q", tc.query, len(got), got, p.TotalResults, len(want), want)
		}
		if tc.n >= 0 && len(want) != tc.n {
			t.Errorf("?%s: the sample has %d such records, the test expected %d", tc.query, len(want), tc.n)
		}
		if tc.n < 0 && (len(want) == 0 || len(want) == len(order)) {
			t.Errorf("?%s: %d of the sample's %d records match: a filter the sample does not exercise", tc.query, len(want), len(order))
		}
	}
}

// TestNVDCPEMatching: cpeName (with isVulnerable) and
// virtualMatchString (with a version range) against the configurations
// of the sample's records, in this API's version order; expectations
// read by hand from the records (CVE-2021-44228's log4j ranges
// 2.0.1-2.3.1, 2.4.0-2.12.2, 2.13.0-2.15.0 and 2.0 beta9/rc1/rc2; the
// log4j 1.x CVEs; the Linux kernel's ranges).
func TestNVDCPEMatching(t *testing.T) {
	srv := newTestServer(t, sampleCVE5Index(t))
	get := func(q string) (*http.Response, []byte) { return do(t, srv, "GET", NVDPath+"?"+q, nil) }
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"cpeName=cpe:2.3:a:apache:log4j:2.14.1:*:*:*:*:*:*:*", []string{"CVE-2021-44228"}},
		{"cpeName=cpe:2.3:a:apache:log4j:2.15.0:*:*:*:*:*:*:*", nil}, // every range ends before
		{"cpeName=cpe:2.3:a:apache:log4j:1.2.17:*:*:*:*:*:*:*", []string{"CVE-2022-23302", "CVE-2022-23305", "CVE-2022-23307", "CVE-2023-26464"}},
		// 2.0 beta9 is 2.0-beta9: named exactly by CVE-2021-44228, and
		// not before 2.0 (the 1.x CVEs end before 2.0), as npm reads it.
		{"cpeName=cpe:2.3:a:apache:log4j:2.0:beta9:*:*:*:*:*:*", []string{"CVE-2021-44228"}},
		{"cpeName=CPE:2.3:A:Apache:Log4j:2.14.1:*:*:*:*:*:*:*&isVulnerable", []string{"CVE-2021-44228"}},
		{"cpeName=cpe:2.3:o:linux:linux_kernel:5.15.100:*:*:*:*:*:*:*", []string{"CVE-2024-1086", "CVE-2024-26581", "CVE-2024-53104"}},
		{"cpeName=cpe:2.3:o:linux:linux_kernel:5.15.100:*:*:*:*:*:*:*&pubStartDate=2024-02-01T00:00:00.000&pubEndDate=2024-12-31T00:00:00.000", []string{"CVE-2024-26581", "CVE-2024-53104"}},
		// CVE-2019-8075 names the kernel without a version (-), not
		// vulnerable: the platform its product runs on.
		{"cpeName=cpe:2.3:o:linux:linux_kernel:-:*:*:*:*:*:*:*", []string{"CVE-2019-8075"}},
		{"cpeName=cpe:2.3:o:linux:linux_kernel:-:*:*:*:*:*:*:*&isVulnerable", nil},
		{"virtualMatchString=cpe:2.3:a:apache:log4j", []string{"CVE-2021-44228", "CVE-2022-23302", "CVE-2022-23305", "CVE-2022-23307", "CVE-2023-26464"}},
		{"virtualMatchString=cpe:2.3:a:apache:log4j&versionStart=2.0&versionStartType=including&versionEnd=2.1&versionEndType=excluding", []string{"CVE-2021-44228"}},
		{"virtualMatchString=cpe:2.3:a:apache:log4j&versionStart=1.2.17&versionStartType=excluding", []string{"CVE-2021-44228", "CVE-2022-23307", "CVE-2023-26464"}},
		{"virtualMatchString=cpe:2.3:o:linux:linux_kernel:6.8", []string{"CVE-2024-1086", "CVE-2024-53104"}},
		{"virtualMatchString=cpe:2.3:a:nobody:nothing", nil},
	} {
		got := nvdIDs(t, getNVD(t, srv, get, tc.query))
		if !slices.Equal(got, tc.want) {
			t.Errorf("?%s: %q, want %q", tc.query, got, tc.want)
		}
	}
}

// TestNVDBadParameters: a bad parameter is answered as NVD answers it,
// 404 with the reason in a "message" header; the body is this API's
// {"message"}.
func TestNVDBadParameters(t *testing.T) {
	srv := newTestServer(t, sampleCVE5Index(t))
	for _, tc := range nvdBadQueries {
		res, body := do(t, srv, "GET", NVDPath+"?"+tc.query, nil)
		if res.StatusCode != http.StatusNotFound || res.Header.Get("message") != tc.err.message || string(body) != string(tc.err.body) {
			t.Errorf("?%s: %d, message header %q, body %s; want 404, %q", tc.query, res.StatusCode, res.Header.Get("message"), body, tc.err.message)
		}
	}
	// Parameters NVD does not know are ignored, as everywhere.
	if res, _ := do(t, srv, "GET", NVDPath+"?"+url.Values{"nonsense": {"1"}}.Encode(), nil); res.StatusCode != 200 {
		t.Errorf("an unknown parameter: %d, want 200", res.StatusCode)
	}
}

// nvdBadQueries are queries NVD's API refuses, one for each reason, with
// the answer (TestOpenAPILiveResponses sends them too).
var nvdBadQueries = []struct {
	query string
	err   *apiError
}{
	{"startIndex=-1", errNVDStartIndex},
	{"startIndex=x", errNVDStartIndex},
	{"resultsPerPage=2001", errNVDResultsPerPage},
	{"cveId=CVE-21-1", errNVDCVEID},
	{"lastModStartDate=2024-01-01T00:00:00.000", errNVDLastModPair},
	{"pubEndDate=2024-01-01T00:00:00.000", errNVDPubPair},
	{"kevStartDate=2024-01-01T00:00:00.000", errNVDKEVPair},
	{"pubStartDate=yesterday&pubEndDate=2024-01-01T00:00:00.000", errNVDDate},
	{"pubStartDate=2024-02-01T00:00:00.000&pubEndDate=2024-01-01T00:00:00.000", errNVDDateOrder},
	{"noRejected=no", errNVDNoValue},
	{"cweId=XSS", errNVDCWE},
	{"cvssV2Severity=CRITICAL", errNVDSeverity2},
	{"cvssV3Severity=SEVERE", errNVDSeverity34},
	{"cvssV3Severity=HIGH&cvssV4Severity=HIGH", errNVDSeverityMany},
	{"cvssV3Metrics=AV", errNVDMetrics},
	{"cvssV2Metrics=AV:N&cvssV3Metrics=AV:N", errNVDMetricsMany},
	{"keywordSearch=%20", errNVDKeyword},
	{"keywordExactMatch", errNVDExactNoKeyword},
	{"sourceIdentifier=", errNVDSource},
	{"cveTag=other", errNVDTag},
	{"cpeName=cpe:2.3:a:apache:log4j", errNVDCPEName},
	{"virtualMatchString=apache:log4j", errNVDMatchString},
	{"cpeName=cpe:2.3:a:*:log4j:2.0:*:*:*:*:*:*:*", errNVDCPEVendor},
	{"cpeName=cpe:2.3:a:apache:log4j:2.0:*:*:*:*:*:*:*&virtualMatchString=cpe:2.3:a:apache:log4j", errNVDCPEBoth},
	{"isVulnerable", errNVDIsVulnerable},
	{"virtualMatchString=cpe:2.3:a:apache:log4j&isVulnerable", errNVDIsVulnerable},
	{"versionStart=2.0&versionStartType=including", errNVDVersionRange},
	{"virtualMatchString=cpe:2.3:a:apache:log4j&versionStart=2.0", errNVDVersionRange},
	{"virtualMatchString=cpe:2.3:a:apache:log4j&versionEnd=2.0&versionEndType=before", errNVDVersionRange},
	{"startIndex=%ZZ", errNVDBadQuery},
}

// FuzzNVDQuery sends arbitrary queries to NVD's CVE API on the sample:
// it never panics and never answers 5xx; a 200 is NVD's envelope, with
// no more records than resultsPerPage allows; a 404 carries its reason
// in the message header and the body.
func FuzzNVDQuery(f *testing.F) {
	for _, q := range []string{"", "cveId=CVE-2021-44228", "resultsPerPage=3&startIndex=184", "noRejected&hasKev",
		"lastModStartDate=2024-01-01T00:00:00.000%2B01:00&lastModEndDate=2024-12-31T23:59:59.999Z",
		"keywordSearch=remote%20attackers&keywordExactMatch", "cvssV3Metrics=AV:N/AC:L", "cweId=cwe-079",
		"cpeName=cpe:2.3:a:apache:log4j:2.0:beta9:*:*:*:*:*:*&isVulnerable",
		"virtualMatchString=cpe:2.3:o:linux:linux_kernel&versionStart=5&versionStartType=excluding&versionEnd=6.8&versionEndType=including",
		"cpeName=cpe:2.3:a:a\\:b:c:*:*:*:*:*:*:*:*", "startIndex=99999999999999999999", "cveTag=DISPUTED&sourceIdentifier=cve@mitre.org"} {
		f.Add(q)
	}
	ix := sampleCVE5Index(f)
	s := New(func() *index.Index { return ix }, Options{})
	f.Fuzz(func(t *testing.T, query string) {
		if strings.ContainsAny(query, " #") || !utf8.ValidString(query) {
			return // not a query a request line carries
		}
		if _, err := url.ParseRequestURI(NVDPath + "?" + query); err != nil {
			return
		}
		req := httptest.NewRequest(http.MethodGet, "http://x"+NVDPath+"?"+query, nil)
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		body := rec.Body.Bytes()
		switch rec.Code {
		case http.StatusOK:
			var p nvdPage
			if err := stdjson.Unmarshal(body, &p); err != nil || p.Format != "NVD_CVE" || p.ResultsPerPage != len(p.Vulnerabilities) || p.ResultsPerPage > 2000 {
				t.Fatalf("?%s: 200 body is not NVD's envelope (%v): %.300s", query, err, body)
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

// TestNVDBigPagesTakeTurns: pages of bigPageItems records or more are
// composed by as many requests at once as bigPageSlots has tokens; the
// others wait for a turn, smaller pages do not, and a request whose
// client goes while it waits gives its turn up.
func TestNVDBigPagesTakeTurns(t *testing.T) {
	srv := newTestServer(t, sampleCVE5Index(t))
	for range cap(bigPageSlots) { // every turn taken
		bigPageSlots <- struct{}{}
	}
	held := cap(bigPageSlots)
	defer func() {
		for ; held > 0; held-- {
			<-bigPageSlots
		}
	}()
	type answer struct {
		status, records int
		err             error
	}
	get := func(ctx context.Context, q string) answer {
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+NVDPath+"?"+q, nil)
		res, err := srv.Client().Do(req)
		if err != nil {
			return answer{err: err}
		}
		defer res.Body.Close()
		var p nvdPage
		err = stdjson.NewDecoder(res.Body).Decode(&p)
		return answer{res.StatusCode, len(p.Vulnerabilities), err}
	}
	// Small pages answer while every turn is taken: 10 records, and the
	// 86 left from startIndex 100 of the sample's 186.
	for q, want := range map[string]int{"resultsPerPage=10": 10, "startIndex=100": 186 - 100, "cveId=CVE-2024-47177": 1} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		a := get(ctx, q)
		cancel()
		if a.err != nil || a.status != http.StatusOK || a.records != want {
			t.Fatalf("%s while big pages wait: %d, %d records (%v), want 200 and %d", q, a.status, a.records, a.err, want)
		}
	}
	// A client that goes while it waits: its turn is not taken.
	ctx, cancel := context.WithCancel(context.Background())
	gone := make(chan answer, 1)
	go func() { gone <- get(ctx, "startIndex=0") }()
	time.Sleep(50 * time.Millisecond)
	cancel()
	if a := <-gone; a.err == nil {
		t.Fatalf("a cancelled big page answered %d with %d records", a.status, a.records)
	}
	// A big page waits for a turn, and is answered once one is free.
	got := make(chan answer, 1)
	go func() { got <- get(context.Background(), "resultsPerPage=2000") }()
	select {
	case a := <-got:
		t.Fatalf("a page of 186 records answered (%d, %d records, %v) while every turn was taken", a.status, a.records, a.err)
	case <-time.After(200 * time.Millisecond):
	}
	<-bigPageSlots
	held--
	if a := <-got; a.err != nil || a.status != http.StatusOK || a.records != 186 {
		t.Fatalf("the big page once a turn was free: %d, %d records, %v; want 200 and 186", a.status, a.records, a.err)
	}
	if n := len(bigPageSlots); n != held {
		t.Errorf("%d turns taken after the answers, want the test's %d: a request kept its turn", n, held)
	}
}
