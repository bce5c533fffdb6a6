package loader

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vulnd/vulnd/index"
)

// sharedPath returns a file under ../shared/data, failing clearly when the
// shared data is missing: tests that need real records never skip.
func sharedPath(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join("..", "..", "shared", "data", rel)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("real test data missing: %v (the tests read NVD/CWE samples from ../shared/data beside the repository)", err)
	}
	return p
}

func TestParseCPE(t *testing.T) {
	for _, tc := range []struct {
		in                       string
		vendor, product, version string
		err                      string
	}{
		{in: "cpe:2.3:a:apache:log4j:2.14.1:*:*:*:*:*:*:*", vendor: "apache", product: "log4j", version: "2.14.1"},
		{in: `cpe:2.3:a:notepad-plus-plus:notepad\+\+:*:*:*:*:*:*:*:*`, vendor: "notepad-plus-plus", product: "notepad++", version: "*"},
		{in: `cpe:2.3:a:siemens:logo\!_soft_comfort:-:*:*:*:*:*:*:*`, vendor: "siemens", product: "logo!_soft_comfort", version: "-"},
		{in: `cpe:2.3:h:netapp:solidfire_\&_hci_storage_node:-:*:*:*:*:*:*:*`, vendor: "netapp", product: "solidfire_&_hci_storage_node", version: "-"},
		{in: `cpe:2.3:a:cisco:dna_spaces\:_connector:2.4\(1.249\):*:*:*:*:*:*:*`, vendor: "cisco", product: "dna_spaces:_connector", version: "2.4(1.249)"},
		{in: `cpe:2.3:a:a\\b:c:1:*:*:*:*:*:*:*`, vendor: `a\b`, product: "c", version: "1"},
		{in: "cpe:/a:apache:log4j:2.14.1", err: "does not start with cpe:2.3:"},
		{in: "cpe:2.3:a:apache:log4j:2.14.1:*:*:*:*:*:*", err: "12 components, want 13"},
		{in: "cpe:2.3:a:apache:log4j:2.14.1:*:*:*:*:*:*:*:*", err: "more than 13 components"},
		{in: `cpe:2.3:a:apache:log4j:2.14.1:*:*:*:*:*:*:\`, err: "ends inside an escape"},
		{in: "cpe:2.3:x:apache:log4j:2.14.1:*:*:*:*:*:*:*", err: `unknown part "x"`},
		{in: "cpe:2.3:a::log4j:2.14.1:*:*:*:*:*:*:*", err: "empty vendor or product"},
		{in: "", err: "does not start"},
	} {
		v, p, ver, err := parseCPE(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("parseCPE(%q) error %v, want one containing %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || v != tc.vendor || p != tc.product || ver != tc.version {
			t.Errorf("parseCPE(%q) = %q, %q, %q, %v; want %q, %q, %q", tc.in, v, p, ver, err, tc.vendor, tc.product, tc.version)
		}
	}
}

func FuzzParseCPE(f *testing.F) {
	for _, s := range []string{
		"cpe:2.3:a:apache:log4j:2.14.1:*:*:*:*:*:*:*",
		`cpe:2.3:a:notepad-plus-plus:notepad\+\+:*:*:*:*:*:*:*:*`,
		`cpe:2.3:a:cisco:dna_spaces\:_connector:2.4\(1.249\):*:*:*:*:*:*:*`,
		"cpe:2.3:", `\`, "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, p, ver, err := parseCPE(s)
		if err != nil {
			return
		}
		if v == "" || p == "" {
			t.Fatalf("parseCPE(%q) accepted an empty vendor or product", s)
		}
		// Escaping the components again and parsing gives them back.
		esc := func(c string) string {
			var b strings.Builder
			for i := 0; i < len(c); i++ {
				if c[i] == '\\' || c[i] == ':' {
					b.WriteByte('\\')
				}
				b.WriteByte(c[i])
			}
			return b.String()
		}
		again := "cpe:2.3:a:" + esc(v) + ":" + esc(p) + ":" + esc(ver) + ":*:*:*:*:*:*:*"
		v2, p2, ver2, err := parseCPE(again)
		if err != nil || v2 != v || p2 != p || ver2 != ver {
			t.Fatalf("round trip of %q via %q: %q %q %q %v", s, again, v2, p2, ver2, err)
		}
	})
}

func TestUpperSnake(t *testing.T) {
	for in, want := range map[string]string{
		"Vendor Advisory":         "VENDOR_ADVISORY",
		"Press/Media Coverage":    "PRESS_MEDIA_COVERAGE",
		"Third Party Advisory":    "THIRD_PARTY_ADVISORY",
		"US Government Resource":  "US_GOVERNMENT_RESOURCE",
		"Patch":                   "PATCH",
		"Issue Tracking":          "ISSUE_TRACKING",
		"a -- b":                  "A_B",
		"Exploit ":                "EXPLOIT_",
		"VDB Entry":               "VDB_ENTRY",
		"Mitigation, Patch":       "MITIGATION_PATCH",
		"x2y":                     "X2Y",
		"Product Release Notes 2": "PRODUCT_RELEASE_NOTES_2",
	} {
		if got := upperSnake(in); got != want {
			t.Errorf("upperSnake(%q) = %q, want %q", in, got, want)
		}
	}
}

// gzipFile writes a gzip file of s and returns its path.
func gzipFile(t *testing.T, dir, name, s string) string {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(s))
	zw.Close()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func feed(records ...string) string {
	return `{"resultsPerPage":1,"format":"NVD_CVE","version":"2.0","vulnerabilities":[` + strings.Join(records, ",") + `],"timestamp":"2026-11-22T00:00:00.000"}`
}

func record(id, modified, summary string) string {
	return `{"cve":{"id":"` + id + `","published":"2024-01-01T00:00:00.000","lastModified":"` + modified +
		`","descriptions":[{"lang":"en","value":"` + summary + `"}],"metrics":{},"references":[]}}`
}

func TestReadFeedsMerge(t *testing.T) {
	dir := t.TempDir()
	a := gzipFile(t, dir, "a.json.gz", feed(
		record("CVE-2024-0001", "2024-02-01T00:00:00.500", "a newer"),
		record("CVE-2024-0002", "2024-02-01T00:00:00.000", "a tie"),
		record("CVE-2024-0003", "2024-01-01T00:00:00.000", "a only"),
	))
	b := filepath.Join(dir, "b.json")
	os.WriteFile(b, []byte(feed(
		record("CVE-2024-0001", "2024-02-01T00:00:00.400", "b older by 100ms"),
		record("CVE-2024-0002", "2024-02-01T00:00:00.000", "b tie, named later"),
	)), 0o644)
	got, err := ReadFeeds([]string{a, b})
	if err != nil {
		t.Fatal(err)
	}
	summaries := map[string]string{}
	for _, c := range got {
		summaries[c.Name] = c.Summary
	}
	want := map[string]string{"CVE-2024-0001": "a newer", "CVE-2024-0002": "b tie, named later", "CVE-2024-0003": "a only"}
	if diff := cmp.Diff(want, summaries); diff != "" {
		t.Errorf("merge (-want +got):\n%s", diff)
	}
}

func TestFeedErrorsNameFileAndRecord(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, content, want string
	}{
		{"noid.json", feed(`{"cve":{"published":"2024-01-01T00:00:00","lastModified":"2024-01-01T00:00:00"}}`), "noid.json: record 1: record has no id"},
		{"badid.json", feed(record("CVE-24-1", "2024-01-01T00:00:00", "x")), `badid.json: CVE-24-1: malformed id`},
		{"badcpe.json", feed(record("CVE-2024-0001", "2024-01-01T00:00:00", "ok"),
			`{"cve":{"id":"CVE-2024-0002","published":"2024-01-01T00:00:00","lastModified":"2024-01-01T00:00:00","configurations":[{"nodes":[{"cpeMatch":[{"vulnerable":true,"criteria":"cpe:2.3:a:x"}]}]}]}}`),
			`badcpe.json: CVE-2024-0002: cpe "cpe:2.3:a:x"`},
		{"badtime.json", feed(record("CVE-2024-0001", "yesterday", "x")), `badtime.json: CVE-2024-0001: lastModified: bad timestamp "yesterday"`},
		{"badscore.json", feed(`{"cve":{"id":"CVE-2024-0001","published":"2024-01-01T00:00:00","lastModified":"2024-01-01T00:00:00","metrics":{"cvssMetricV31":[{"source":"s","type":"Primary","cvssData":{"baseScore":11}}]}}}`), "baseScore 11 out of range"},
		{"noscore.json", feed(`{"cve":{"id":"CVE-2024-0001","published":"2024-01-01T00:00:00","lastModified":"2024-01-01T00:00:00","metrics":{"cvssMetricV2":[{"source":"s","type":"Primary","cvssData":{}}]}}}`), "has no baseScore"},
		{"badcwe.json", feed(`{"cve":{"id":"CVE-2024-0001","published":"2024-01-01T00:00:00","lastModified":"2024-01-01T00:00:00","weaknesses":[{"description":[{"lang":"en","value":"XSS"}]}]}}`), `weakness "XSS" is not a CWE name`},
		{"nocve.json", feed(`{"foo":1}`), `record 1: no "cve" object`},
		{"truncated.json", feed(record("CVE-2024-0001", "2024-01-01T00:00:00", "x"))[:60], "truncated.json"},
		{"array.json", `[1,2]`, "not an NVD feed object"},
		{"novulns.json", `{"format":"NVD_CVE"}`, `no "vulnerabilities" array`},
		{"empty.json", ``, "empty.json"},
		{"garbage.json", "\x00\x01garbage", "garbage.json"},
	} {
		p := filepath.Join(dir, tc.name)
		os.WriteFile(p, []byte(tc.content), 0o644)
		_, err := ReadFeeds([]string{p})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
			t.Errorf("%s: error %v, want one naming %s and containing %q", tc.name, err, p, tc.want)
		}
	}
	if _, err := ReadFeeds([]string{filepath.Join(dir, "missing.json.gz")}); err == nil || !strings.Contains(err.Error(), "missing.json.gz") {
		t.Errorf("missing file: %v", err)
	}
}

func FuzzDecodeFeed(f *testing.F) {
	f.Add([]byte(feed(record("CVE-2024-0001", "2024-01-01T00:00:00.000", "x"))))
	f.Add([]byte(`{"vulnerabilities":[{"cve":{"id":"CVE-2024-0002","published":"2024-01-01T00:00:00","lastModified":"2024-01-01T00:00:00","metrics":{"cvssMetricV2":[{"source":"s","type":"Primary","cvssData":{"baseScore":5,"accessVector":"NETWORK"}}]},"configurations":[{"nodes":[{"cpeMatch":[{"vulnerable":true,"criteria":"cpe:2.3:a:x:y:1:*:*:*:*:*:*:*","versionEndExcluding":"2"}]}]}],"weaknesses":[{"description":[{"lang":"en","value":"CWE-79"},{"lang":"en","value":"NVD-CWE-noinfo"}]}],"references":[{"url":"u","source":"s","tags":["Patch"]}]}}]}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"vulnerabilities":[`))
	f.Fuzz(func(t *testing.T, data []byte) {
		n := 0
		err := decodeFeed(bytes.NewReader(data), "fuzz", func(fr *feedRecord) error {
			n++
			c := fr.cve
			if c.Name == "" || c.CreatedAt == "" || c.UpdatedAt == "" {
				t.Fatalf("accepted a record without id or times: %+v", c)
			}
			if c.CVSS.Score < 0 || c.CVSS.Score > 10 {
				t.Fatalf("score %v out of range", c.CVSS.Score)
			}
			return nil
		})
		if err != nil && !strings.HasPrefix(err.Error(), "loader: feed fuzz: ") {
			t.Fatalf("error %q does not name the feed", err)
		}
	})
}

func TestMapMetricsFallback(t *testing.T) {
	score := func(f float64) *float64 { return &f }
	m := func(source, typ string, s float64) nvdMetric {
		var x nvdMetric
		x.Source, x.Type, x.CVSSData.BaseScore = source, typ, score(s)
		return x
	}
	for _, tc := range []struct {
		name   string
		in     nvdMetrics
		source string
		score  float64
	}{
		{"v3.1 over v2; v2 Primary only for the v2 fields", nvdMetrics{V2: []nvdMetric{m("cna", "Secondary", 5), m("nvd", "Primary", 7.5)}, V31: []nvdMetric{m("nvd", "Primary", 9.8)}}, "nvd", 9.8},
		{"v4.0 before v3.1 and v3.0", nvdMetrics{V30: []nvdMetric{m("a", "Primary", 5)}, V31: []nvdMetric{m("b", "Secondary", 6)}, V40: []nvdMetric{m("c", "Primary", 7)}}, "c", 7},
		{"v3.1 before v3.0, a Secondary alone in its version", nvdMetrics{V30: []nvdMetric{m("a", "Primary", 5)}, V31: []nvdMetric{m("b", "Secondary", 6)}}, "b", 6},
		{"v3.0 before v2", nvdMetrics{V2: []nvdMetric{m("nvd", "Primary", 9.3)}, V30: []nvdMetric{m("a", "Secondary", 5)}}, "a", 5},
		{"v2 alone, Primary listed second", nvdMetrics{V2: []nvdMetric{m("cna", "Secondary", 5), m("nvd", "Primary", 7.5)}}, "nvd", 7.5},
		{"v4.0 alone", nvdMetrics{V40: []nvdMetric{m("c", "Secondary", 6.9), m("d", "Primary", 8.7)}}, "d", 8.7},
	} {
		got, all, err := mapMetrics(&tc.in)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got.Source == nil || *got.Source != tc.source || got.Score != tc.score {
			t.Errorf("%s: source %v score %v, want %s %v", tc.name, got.Source, got.Score, tc.source, tc.score)
		}
		n := len(tc.in.V2) + len(tc.in.V30) + len(tc.in.V31) + len(tc.in.V40)
		if len(all) != n {
			t.Errorf("%s: %d metrics kept, want %d", tc.name, len(all), n)
		}
	}
	// The six v2-shaped fields come from the v2 Primary even when a newer
	// metric gives the score, and are null without a v2 metric.
	v2 := m("nvd", "Primary", 7.5)
	av := "NETWORK"
	v2.CVSSData.AccessVector = &av
	got, _, _ := mapMetrics(&nvdMetrics{V2: []nvdMetric{m("cna", "Secondary", 5), v2}, V31: []nvdMetric{m("nvd", "Primary", 9.8)}})
	if got.AccessVector == nil || *got.AccessVector != "NETWORK" || got.Score != 9.8 {
		t.Errorf("v2 fields beside a v3.1 score: %+v", got)
	}
	got, _, _ = mapMetrics(&nvdMetrics{V31: []nvdMetric{m("nvd", "Primary", 9.8)}})
	if got.AccessVector != nil || got.AccessComplexity != nil || got.IntegrityImpact != nil {
		t.Errorf("no v2 metric: v2 fields %+v, want null", got)
	}
	got, all, err := mapMetrics(&nvdMetrics{})
	if err != nil || got != (index.CVSS{}) || len(all) != 0 {
		t.Errorf("no metrics: %+v %v %v, want six nulls, null source, score 0", got, all, err)
	}
}

func TestSampleFeedDecodes(t *testing.T) {
	cves, err := ReadFeeds([]string{sharedPath(t, "nvd/nvdcve-2.0-sample.json.gz")})
	if err != nil {
		t.Fatal(err)
	}
	if len(cves) != 186 {
		t.Fatalf("%d CVEs, want 186 (SOURCES.md)", len(cves))
	}
}
