package httpapi

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vulnd/vulnd/index"
)

// epssOrder are the sample's CVEs with an EPSS row of
// ../shared/data/epss, by score high to low (all scores differ).
var epssOrder = []string{"CVE-1999-0095", "CVE-2023-1234", "CVE-2023-20116", "CVE-2023-22466", "CVE-2023-20261",
	"CVE-2023-20266", "CVE-2023-20242", "CVE-2023-1236", "CVE-2023-1237", "CVE-2023-1235"}

// TestEPSSNDJSONAndLink: the EPSS filters and sort hold in the NDJSON
// export, in paging, and the Link header keeps them, as sent, after the
// other filters.
func TestEPSSNDJSONAndLink(t *testing.T) {
	ix := sampleEPSSIndex(t)
	srv := newTestServer(t, ix)
	var want strings.Builder
	for _, name := range epssOrder[:5] {
		b, _ := ix.CVE(name)
		want.Write(b)
		want.WriteByte('\n')
	}
	res, body := do(t, srv, "GET", "/cve?format=ndjson&sort=epss&epss_min=0.005", nil)
	if res.StatusCode != 200 || res.Header.Get("X-Total-Count") != "5" {
		t.Errorf("ndjson: %d, X-Total-Count %q", res.StatusCode, res.Header.Get("X-Total-Count"))
	}
	if diff := cmp.Diff(want.String(), string(body)); diff != "" {
		t.Errorf("ndjson (-want +got):\n%s", diff)
	}
	paged := httptest.NewServer(New(func() *index.Index { return ix }, Options{PageSize: 3}))
	defer paged.Close()
	res, body = do(t, paged, "GET", "/cve?sort=Risk&percentile_min=0.3&junk=1&epss_min=0&cvss=medium&page=2", nil)
	// Medium (4.0-6.9) among the ten: all but CVE-1999-0095 (10.0) and
	// CVE-2023-20266 (7.2); no KEV, so by EPSS score.
	medium := []string{"CVE-2023-1234", "CVE-2023-20116", "CVE-2023-22466", "CVE-2023-20261", "CVE-2023-20242", "CVE-2023-1236", "CVE-2023-1237", "CVE-2023-1235"}
	if diff := cmp.Diff(medium[3:6], names(t, body)); diff != "" {
		t.Errorf("page 2 (-want +got):\n%s", diff)
	}
	const q = "cvss=medium&epss_min=0&percentile_min=0.3&sort=risk&"
	const link = `</cve?` + q + `page=1>; rel="first", </cve?` + q + `page=1>; rel="prev", ` +
		`</cve?` + q + `page=3>; rel="next", </cve?` + q + `page=3>; rel="last"`
	if got := res.Header.Get("Link"); got != link {
		t.Errorf("Link\n%s\nwant\n%s", got, link)
	}
	// On a vendor's list too, the value as sent, encoded anew.
	res, _ = do(t, paged, "GET", "/vendors/cisco/cve?epss_min=.0050&sort=EPSS", nil)
	if got := res.Header.Get("Link"); res.StatusCode != 200 || !strings.Contains(got, `</vendors/cisco/cve?epss_min=.0050&sort=epss&page=1>; rel="first"`) {
		t.Errorf("vendor list: %d, Link %s", res.StatusCode, got)
	}
}

// TestParseEPSSMin: the numbers taken, in millionths, and those refused.
func TestParseEPSSMin(t *testing.T) {
	for v, want := range map[string]uint32{
		"0": 0, "1": 1_000_000, "1.0": 1_000_000, "1.": 1_000_000, "0.1": 100_000, ".5": 500_000, "00.25": 250_000,
		"0.16317": 163_170, "0.000001": 1, "0.0000001": 1, "0.0000000": 0, "0.1234564": 123_457, "1.000000000": 1_000_000,
	} {
		q := splitQuery("epss_min=" + v)
		got, sent, ok, err := q.parseEPSSMin(pEPSSMin, errBadEPSSMin)
		if err != nil || !ok || got != want || sent != v {
			t.Errorf("%q: %d %q %v %v, want %d", v, got, sent, ok, err, want)
		}
	}
	for _, v := range []string{"", ".", "-0", "+0.5", "1.0000001", "2", "1e-5", "0x1", "0.5 ", "0,5", "NaN", "inf", "0..5",
		"10%25", strings.Repeat("0", 33)} {
		q := splitQuery("epss_min=" + v)
		if _, _, _, err := q.parseEPSSMin(pEPSSMin, errBadEPSSMin); err != errBadEPSSMin {
			t.Errorf("%q: %v, want refused", v, err)
		}
	}
	q := splitQuery("x=1")
	if _, _, ok, err := q.parseEPSSMin(pEPSSMin, errBadEPSSMin); ok || err != nil {
		t.Errorf("absent: %v %v", ok, err)
	}
}
