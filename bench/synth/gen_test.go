package main

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vulnd/vulnd/loader/loadertest"
)

const testN = 300

// writeSet writes a data set of n records with seed into a new temp dir.
func writeSet(t *testing.T, n int, seed uint64) string {
	t.Helper()
	dir := t.TempDir()
	p, err := NewPlan(Config{CVEs: n, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.WriteAll(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

func TestDeterministic(t *testing.T) {
	a := readDir(t, writeSet(t, testN, 7))
	b := readDir(t, writeSet(t, testN, 7))
	if len(a) != numYears+2 { // the feeds, the catalog, the EPSS file
		t.Fatalf("got %d files, want %d", len(a), numYears+1)
	}
	for name, x := range a {
		if !bytes.Equal(x, b[name]) {
			t.Errorf("%s differs between two runs with the same flags", name)
		}
	}
	c := readDir(t, writeSet(t, testN, 8))
	if bytes.Equal(a[FeedName(2024)], c[FeedName(2024)]) {
		t.Errorf("seeds 7 and 8 wrote the same %s", FeedName(2024))
	}
}

// TestRecordPure checks that a record does not depend on which records
// a generator drew before it.
func TestRecordPure(t *testing.T) {
	p, err := NewPlan(Config{CVEs: testN, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	g1, g2 := p.Generator(), p.Generator()
	want := map[int][]byte{}
	for i := range testN {
		b, _ := json.Marshal(g1.Record(i))
		want[i] = b
	}
	for i := testN - 1; i >= 0; i -= 7 {
		b, _ := json.Marshal(g2.Record(i))
		if !bytes.Equal(b, want[i]) {
			t.Fatalf("record %d differs when drawn out of order", i)
		}
	}
}

// Small decoding structs: only what the checks need.
type tFeed struct {
	ResultsPerPage  int    `json:"resultsPerPage"`
	StartIndex      int    `json:"startIndex"`
	TotalResults    int    `json:"totalResults"`
	Format          string `json:"format"`
	Version         string `json:"version"`
	Timestamp       string `json:"timestamp"`
	Vulnerabilities []struct {
		CVE tCVE `json:"cve"`
	} `json:"vulnerabilities"`
}

type tCVE struct {
	ID               string           `json:"id"`
	SourceIdentifier string           `json:"sourceIdentifier"`
	Published        string           `json:"published"`
	LastModified     string           `json:"lastModified"`
	VulnStatus       string           `json:"vulnStatus"`
	CVETags          *json.RawMessage `json:"cveTags"`
	Descriptions     []tLang          `json:"descriptions"`
	Metrics          map[string][]struct {
		Source       string `json:"source"`
		Type         string `json:"type"`
		BaseSeverity string `json:"baseSeverity"`
		CVSSData     struct {
			Version      string   `json:"version"`
			VectorString string   `json:"vectorString"`
			BaseScore    *float64 `json:"baseScore"`
			BaseSeverity string   `json:"baseSeverity"`
		} `json:"cvssData"`
		ExploitabilityScore *float64 `json:"exploitabilityScore"`
		ImpactScore         *float64 `json:"impactScore"`
	} `json:"metrics"`
	Weaknesses *[]struct {
		Source      string  `json:"source"`
		Type        string  `json:"type"`
		Description []tLang `json:"description"`
	} `json:"weaknesses"`
	Configurations []struct {
		Operator string `json:"operator"`
		Nodes    []struct {
			Operator string  `json:"operator"`
			Negate   *bool   `json:"negate"`
			CPEMatch []tCPEM `json:"cpeMatch"`
		} `json:"nodes"`
	} `json:"configurations"`
	References []struct {
		URL    string   `json:"url"`
		Source string   `json:"source"`
		Tags   []string `json:"tags"`
	} `json:"references"`
}

type tLang struct {
	Lang  string `json:"lang"`
	Value string `json:"value"`
}

type tCPEM struct {
	Vulnerable            bool   `json:"vulnerable"`
	Criteria              string `json:"criteria"`
	MatchCriteriaID       string `json:"matchCriteriaId"`
	VersionStartIncluding string `json:"versionStartIncluding"`
	VersionStartExcluding string `json:"versionStartExcluding"`
	VersionEndIncluding   string `json:"versionEndIncluding"`
	VersionEndExcluding   string `json:"versionEndExcluding"`
}

func readFeed(t *testing.T, path string) tFeed {
	t.Helper()
	raw := loadertest.Gunzip(t, path)
	var feed tFeed
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&feed); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if dec.More() {
		t.Fatalf("%s: data after the JSON object", path)
	}
	return feed
}

// splitCPE splits a CPE 2.3 formatted string on its unescaped colons.
func splitCPE(s string) []string {
	var parts []string
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case ':':
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

var (
	reID       = regexp.MustCompile(`^CVE-(\d{4})-(\d{4,})$`)
	reCWE      = regexp.MustCompile(`^CWE-[1-9]\d*$`)
	reUUID     = regexp.MustCompile(`^[0-9A-F]{8}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{4}-[0-9A-F]{12}$`)
	reVendor   = regexp.MustCompile(`^[a-z0-9_.-]+$`)
	reTS       = regexp.MustCompile(`^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}$`)
	metricKeys = map[string]string{"cvssMetricV2": "2.0", "cvssMetricV30": "3.0", "cvssMetricV31": "3.1", "cvssMetricV40": "4.0"}
	statuses   = map[string]bool{"Analyzed": true, "Modified": true, "Awaiting Analysis": true, "Undergoing Analysis": true,
		"Received": true, "Rejected": true, "Deferred": true}
)

// checkFeeds checks every feed of dir and returns the CWE ids cited
// and counts of the features a realistic set must show.
func checkFeeds(t *testing.T, dir string, n int) (cited map[string]bool, seen map[string]int) {
	t.Helper()
	cited, seen = map[string]bool{}, map[string]int{}
	ids := map[string]bool{}
	limit := time.UnixMilli(limitMS).UTC()
	total := 0
	for y := firstYear; y <= lastYear; y++ {
		feed := readFeed(t, filepath.Join(dir, FeedName(y)))
		nv := len(feed.Vulnerabilities)
		if feed.ResultsPerPage != nv || feed.TotalResults != nv || feed.StartIndex != 0 ||
			feed.Format != "NVD_CVE" || feed.Version != "2.0" || feed.Timestamp != feedTimestamp {
			t.Errorf("%d: bad header %d/%d/%d %q %q %q for %d records", y, feed.ResultsPerPage, feed.TotalResults,
				feed.StartIndex, feed.Format, feed.Version, feed.Timestamp, nv)
		}
		total += nv
		for _, v := range feed.Vulnerabilities {
			c := v.CVE
			m := reID.FindStringSubmatch(c.ID)
			if m == nil || m[1] != strconv.Itoa(y) {
				t.Errorf("bad id %q in the %d feed", c.ID, y)
			}
			if ids[c.ID] {
				t.Errorf("duplicate id %s", c.ID)
			}
			ids[c.ID] = true
			checkCVE(t, c, limit, cited, seen)
		}
	}
	if total != n {
		t.Errorf("got %d records, want %d", total, n)
	}
	return cited, seen
}

func checkCVE(t *testing.T, c tCVE, limit time.Time, cited map[string]bool, seen map[string]int) {
	t.Helper()
	errf := func(format string, args ...any) { t.Errorf(c.ID+": "+format, args...) }
	pub, err1 := time.Parse(timeLayout, c.Published)
	mod, err2 := time.Parse(timeLayout, c.LastModified)
	if err1 != nil || err2 != nil || !reTS.MatchString(c.Published) || !reTS.MatchString(c.LastModified) {
		errf("bad timestamps %q %q", c.Published, c.LastModified)
	}
	if mod.Before(pub) || mod.After(limit) || pub.After(limit) {
		errf("published %s, lastModified %s out of order or after %s", pub, mod, limit)
	}
	if !statuses[c.VulnStatus] {
		errf("bad vulnStatus %q", c.VulnStatus)
	}
	seen["status "+c.VulnStatus]++
	if c.SourceIdentifier == "" {
		errf("no sourceIdentifier")
	}
	if len(c.Descriptions) == 0 || c.Descriptions[0].Lang != "en" || strings.TrimSpace(c.Descriptions[0].Value) == "" {
		errf("bad descriptions %+v", c.Descriptions)
	}
	if len(c.Descriptions) > 1 {
		seen["spanish"]++
	}
	if c.CVETags == nil {
		seen["no cveTags"]++
	}
	if c.VulnStatus == "Rejected" {
		if !strings.HasPrefix(c.Descriptions[0].Value, "** REJECT **") || len(c.Metrics) != 0 ||
			c.Configurations != nil || c.Weaknesses != nil || len(c.References) != 0 {
			errf("rejected record has content")
		}
		return
	}
	if n := len(c.References); n < 1 || n > 30 {
		errf("%d references", n)
	}
	for _, r := range c.References {
		if !strings.HasPrefix(r.URL, "http") || r.Source == "" {
			errf("bad reference %+v", r)
		}
		if r.Tags == nil {
			seen["untagged reference"]++
		}
	}
	if len(c.Metrics) == 0 {
		seen["no metrics"]++
	}
	for key, ms := range c.Metrics {
		ver, ok := metricKeys[key]
		if !ok || len(ms) == 0 {
			errf("bad metrics key %q (%d)", key, len(ms))
			continue
		}
		seen[key]++
		if len(ms) > 1 {
			seen["same version twice"]++
		}
		for _, m := range ms {
			d := m.CVSSData
			if d.Version != ver || d.BaseScore == nil || *d.BaseScore < 0 || *d.BaseScore > 10 ||
				(m.Type != "Primary" && m.Type != "Secondary") || m.Source == "" {
				errf("bad %s metric %+v", key, m)
				continue
			}
			sev := d.BaseSeverity
			if ver == "2.0" {
				sev = m.BaseSeverity
				if strings.HasPrefix(d.VectorString, "CVSS:") || m.ExploitabilityScore == nil {
					errf("bad v2 metric %+v", m)
				}
			} else if !strings.HasPrefix(d.VectorString, "CVSS:"+ver+"/") {
				errf("bad %s vector %q", key, d.VectorString)
			}
			if sev == "" {
				errf("no severity in %s", key)
			}
			for _, x := range []*float64{m.ExploitabilityScore, m.ImpactScore} {
				if x != nil && (*x < 0 || *x > 10) {
					errf("sub-score %v out of range", *x)
				}
			}
		}
	}
	if c.Weaknesses == nil {
		seen["no weaknesses"]++
	} else {
		for _, w := range *c.Weaknesses {
			if len(w.Description) == 0 || w.Source == "" {
				errf("bad weakness %+v", w)
			}
			if len(w.Description) > 1 {
				seen["several CWEs"]++
			}
			for _, d := range w.Description {
				switch {
				case d.Value == "NVD-CWE-Other" || d.Value == "NVD-CWE-noinfo":
					seen[d.Value]++
				case reCWE.MatchString(d.Value):
					cited[d.Value] = true
				default:
					errf("bad weakness value %q", d.Value)
				}
			}
		}
	}
	matches := 0
	for _, conf := range c.Configurations {
		if conf.Operator != "" && conf.Operator != "AND" || len(conf.Nodes) == 0 || conf.Operator == "" && len(conf.Nodes) != 1 {
			errf("bad configuration operator %q with %d nodes", conf.Operator, len(conf.Nodes))
		}
		if conf.Operator == "AND" {
			seen["AND configuration"]++
		}
		for _, node := range conf.Nodes {
			if node.Operator != "OR" || node.Negate == nil || len(node.CPEMatch) == 0 {
				errf("bad node %+v", node)
			}
			for _, m := range node.CPEMatch {
				if m.Vulnerable {
					matches++
				}
				checkCPEMatch(t, c.ID, m, seen)
			}
		}
	}
	switch {
	case matches > maxMatches+20:
		errf("%d vulnerable matches", matches)
	case matches > 30:
		seen["over 30 matches"]++
	}
}

func checkCPEMatch(t *testing.T, id string, m tCPEM, seen map[string]int) {
	t.Helper()
	parts := splitCPE(m.Criteria)
	if len(parts) != 13 || parts[0] != "cpe" || parts[1] != "2.3" || !strings.Contains("aoh", parts[2]) || len(parts[2]) != 1 {
		t.Errorf("%s: criteria %q has %d components", id, m.Criteria, len(parts))
		return
	}
	if !reVendor.MatchString(parts[3]) {
		t.Errorf("%s: bad vendor in %q", id, m.Criteria)
	}
	for _, p := range parts[3:] {
		if p == "" {
			t.Errorf("%s: empty component in %q", id, m.Criteria)
		}
	}
	if strings.Contains(m.Criteria, `\`) {
		seen["escaped criteria"]++
	}
	if !reUUID.MatchString(m.MatchCriteriaID) {
		t.Errorf("%s: bad matchCriteriaId %q", id, m.MatchCriteriaID)
	}
	ranged := m.VersionStartIncluding != "" || m.VersionStartExcluding != "" || m.VersionEndIncluding != "" || m.VersionEndExcluding != ""
	if ranged {
		seen["range"]++
		if parts[5] != "*" {
			t.Errorf("%s: range bounds on a fixed version: %+v", id, m)
		}
		if m.VersionStartIncluding != "" && m.VersionStartExcluding != "" || m.VersionEndIncluding != "" && m.VersionEndExcluding != "" {
			t.Errorf("%s: both bounds of one side: %+v", id, m)
		}
	}
	if !m.Vulnerable {
		seen["not vulnerable"]++
	}
}

func TestFeedShape(t *testing.T) {
	n := 1000
	dir := writeSet(t, n, 1)
	cited, seen := checkFeeds(t, dir, n)
	for _, want := range []string{"status Rejected", "status Analyzed", "status Modified", "status Awaiting Analysis",
		"cvssMetricV2", "cvssMetricV30", "cvssMetricV31", "cvssMetricV40", "same version twice", "no metrics",
		"no weaknesses", "several CWEs", "NVD-CWE-Other", "NVD-CWE-noinfo", "AND configuration", "not vulnerable",
		"escaped criteria", "range", "over 30 matches", "spanish", "no cveTags", "untagged reference"} {
		if seen[want] == 0 {
			t.Errorf("no record shows %q", want)
		}
	}
	if !cited["CWE-"+strconv.Itoa(MissingCWE)] {
		t.Errorf("CWE-%d is never cited", MissingCWE)
	}
	all := map[string]bool{}
	for _, id := range CitedCWEs() {
		all[id] = true
	}
	for id := range cited {
		if !all[id] {
			t.Errorf("%s cited but not in CitedCWEs", id)
		}
	}
	t.Logf("features: %v", seen)
}

// TestSmallShape checks the small sizes the other packages' tests use,
// down to fewer records than years.
func TestSmallShape(t *testing.T) {
	for _, n := range []int{1, 27, testN} {
		checkFeeds(t, writeSet(t, n, 5), n)
	}
}

type tCatalog struct {
	XMLName    xml.Name `xml:"http://cwe.mitre.org/cwe-7 Weakness_Catalog"`
	Name       string   `xml:"Name,attr"`
	Version    string   `xml:"Version,attr"`
	Date       string   `xml:"Date,attr"`
	Weaknesses []struct {
		tEntry
		Abstraction string `xml:"Abstraction,attr"`
		Structure   string `xml:"Structure,attr"`
		Description string `xml:"Description"`
	} `xml:"Weaknesses>Weakness"`
	Categories []struct {
		tEntry
		Summary string `xml:"Summary"`
	} `xml:"Categories>Category"`
	Views []struct {
		tEntry
		Type      string `xml:"Type,attr"`
		Objective string `xml:"Objective"`
	} `xml:"Views>View"`
}

type tEntry struct {
	ID          string   `xml:"ID,attr"`
	Name        string   `xml:"Name,attr"`
	Status      string   `xml:"Status,attr"`
	Submissions []string `xml:"Content_History>Submission>Submission_Date"`
	Mods        []string `xml:"Content_History>Modification>Modification_Date"`
}

func TestCatalog(t *testing.T) {
	dir := writeSet(t, testN, 1)
	raw, err := os.ReadFile(filepath.Join(dir, CatalogName))
	if err != nil {
		t.Fatal(err)
	}
	var cat tCatalog
	if err := xml.Unmarshal(raw, &cat); err != nil {
		t.Fatal(err)
	}
	if cat.Name != "CWE" || cat.Version != "synth" || cat.Date == "" {
		t.Errorf("bad catalog attributes %q %q %q", cat.Name, cat.Version, cat.Date)
	}
	have := map[string]bool{}
	abs := map[string]bool{}
	checkEntry := func(kind string, e tEntry, text string) {
		if have[e.ID] {
			t.Errorf("%s %s listed twice", kind, e.ID)
		}
		have[e.ID] = true
		if _, err := strconv.Atoi(e.ID); err != nil || e.Name == "" || e.Status == "" || strings.TrimSpace(text) == "" {
			t.Errorf("bad %s %+v", kind, e)
		}
		if len(e.Submissions) != 1 || len(e.Mods) == 0 {
			t.Errorf("%s %s: %d submissions, %d modifications", kind, e.ID, len(e.Submissions), len(e.Mods))
		}
		last := ""
		for _, d := range append(e.Submissions, e.Mods...) {
			if _, err := time.Parse("2006-01-02", d); err != nil || d < last {
				t.Errorf("%s %s: bad or unordered date %q", kind, e.ID, d)
			}
			last = d
		}
	}
	for _, w := range cat.Weaknesses {
		checkEntry("weakness", w.tEntry, w.Description)
		abs[w.Abstraction] = true
	}
	for _, c := range cat.Categories {
		checkEntry("category", c.tEntry, c.Summary)
	}
	for _, v := range cat.Views {
		checkEntry("view", v.tEntry, v.Objective)
	}
	for _, a := range []string{"Pillar", "Class", "Base", "Variant", "Compound"} {
		if !abs[a] {
			t.Errorf("no weakness with Abstraction %s", a)
		}
	}
	if len(cat.Categories) < 3 || len(cat.Views) < 3 {
		t.Errorf("%d categories, %d views", len(cat.Categories), len(cat.Views))
	}
	missing := strconv.Itoa(MissingCWE)
	if have[missing] {
		t.Errorf("CWE-%s is in the catalog", missing)
	}
	for _, id := range CitedCWEs() {
		n := strings.TrimPrefix(id, "CWE-")
		if n != missing && !have[n] {
			t.Errorf("cited %s missing from the catalog", id)
		}
	}
	cited, _ := checkFeeds(t, dir, testN)
	for id := range cited {
		n := strings.TrimPrefix(id, "CWE-")
		if n != missing && !have[n] {
			t.Errorf("%s cited by a record but missing from the catalog", id)
		}
	}
	if !bytes.Contains(raw, []byte("\n            ")) {
		t.Errorf("no description with embedded newlines and indentation")
	}
}

func TestEscapeCPE(t *testing.T) {
	for in, want := range map[string]string{
		"notepad++":          `notepad\+\+`,
		"logo!_soft_comfort": `logo\!_soft_comfort`,
		"a:b":                `a\:b`,
		"2.4(1.249)":         `2.4\(1.249\)`,
		"node.js":            "node.js",
		"e-business_suite":   "e-business_suite",
		"solidfire_&_hci":    `solidfire_\&_hci`,
	} {
		if got := escapeCPE(in); got != want {
			t.Errorf("escapeCPE(%q) = %q, want %q", in, got, want)
		}
	}
	c := criteria('a', "a:b", "x", "1.0", "*", "", "")
	if p := splitCPE(c); len(p) != 13 || p[3] != `a\:b` {
		t.Errorf("criteria %q splits into %q", c, p)
	}
}

// TestVersionOrder walks each product's releases: next and prev are
// inverse, every release formats differently, and for purely numeric
// styles the formatted versions compare in release order.
func TestVersionOrder(t *testing.T) {
	voc := newVocab(1, 5000)
	for pi := range voc.products {
		p := &voc.products[pi]
		v := ver{a: p.minA()}
		if p.style == vsDate {
			v.a = 2001
		}
		seenF := map[string]bool{}
		prevS := ""
		for range 60 {
			s := p.format(v)
			if seenF[s] {
				t.Fatalf("%s: version %q repeats", p.name, s)
			}
			seenF[s] = true
			nv := p.next(v)
			if !v.less(nv) {
				t.Fatalf("%s: next(%v) = %v is not later", p.name, v, nv)
			}
			if back, ok := p.prev(nv); !ok || back != v {
				t.Fatalf("%s: prev(next(%v)) = %v, %v", p.name, v, back, ok)
			}
			switch p.style {
			case vsSemver, vsTwo, vsFour, vsParen, vsPadded, vsDate, vsMajor:
				if prevS != "" && numericCompare(prevS, s) >= 0 {
					t.Fatalf("%s: %q does not sort before %q", p.name, prevS, s)
				}
			}
			prevS = s
			v = nv
		}
	}
}

// numericCompare compares versions made of digit runs and separators.
func numericCompare(a, b string) int {
	split := func(s string) []int {
		var out []int
		for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r < '0' || r > '9' }) {
			n, _ := strconv.Atoi(f)
			out = append(out, n)
		}
		return out
	}
	x, y := split(a), split(b)
	for i := 0; i < len(x) && i < len(y); i++ {
		if x[i] != y[i] {
			if x[i] < y[i] {
				return -1
			}
			return 1
		}
	}
	return len(x) - len(y)
}

func TestVocab(t *testing.T) {
	for _, n := range []int{1, 300, 20000} {
		voc := newVocab(1, n)
		// 0.14 vendors and 0.88 products per CVE (about 40k and 200k named
		// at 400k CVEs, as NVD has), within the floors and caps.
		wantV := min(max(n*14/100, 20), 140000)
		if len(voc.vendors) != wantV {
			t.Errorf("n=%d: %d vendors, want %d", n, len(voc.vendors), wantV)
		}
		if len(voc.products) < min(max(n*88/100, 50), 880000)*9/10 {
			t.Errorf("n=%d: only %d products", n, len(voc.products))
		}
		names := map[string]bool{}
		for _, v := range voc.vendors {
			if !reVendor.MatchString(v.name) || names[v.name] {
				t.Errorf("bad or duplicate vendor name %q", v.name)
			}
			names[v.name] = true
		}
		if len(voc.special) == 0 {
			t.Errorf("n=%d: no product name needs escaping", n)
		}
	}
}

func TestFlags(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{},
		{"-o", dir},
		{"-cves", "10"},
		{"-o", dir, "-cves", "0"},
		{"-o", dir, "-cves", "-5"},
		{"-o", dir, "-cves", "ten"},
		{"-o", dir, "-cves", "20000000"},
		{"-o", dir, "-cves", "10", "-seed", "-1"},
		{"-o", dir, "-cves", "10", "extra"},
		{"-o", dir, "-cves", "10", "-bogus"},
		{"-h"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(args, &stdout, &stderr); code != 2 {
			t.Errorf("run(%q) = %d, want 2", args, code)
		}
		if !strings.HasPrefix(stderr.String(), "synth: ") {
			t.Errorf("run(%q) printed %q to stderr", args, stderr.String())
		}
	}
	var stdout, stderr bytes.Buffer
	out := filepath.Join(dir, "new", "sub")
	if code := run([]string{"-o", out, "-cves", "40", "-seed", "9"}, &stdout, &stderr); code != 0 {
		t.Fatalf("good run returned %d: %s", code, stderr.String())
	}
	if _, err := os.Stat(filepath.Join(out, FeedName(2026))); err != nil {
		t.Error(err)
	}
}

// TestKEVShape: about 0.5 % of the records carry a KEV entry shaped like
// NVD's (dates YYYY-MM-DD, due two or three weeks after the addition,
// never on a rejected record).
func TestKEVShape(t *testing.T) {
	const n = 40000
	p, err := NewPlan(Config{CVEs: n, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	g := p.Generator()
	kev := 0
	for i := range n {
		c := g.Record(i)
		if c.CISAExploitAdd == "" {
			if c.CISAActionDue != "" || c.CISARequiredAction != "" || c.CISAVulnerabilityName != "" {
				t.Fatalf("%s: KEV fields without cisaExploitAdd", c.ID)
			}
			continue
		}
		kev++
		added, err1 := time.Parse(time.DateOnly, c.CISAExploitAdd)
		due, err2 := time.Parse(time.DateOnly, c.CISAActionDue)
		pub, err3 := time.Parse("2006-01-02T15:04:05.000", c.Published)
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("%s: dates %q %q %q", c.ID, c.CISAExploitAdd, c.CISAActionDue, c.Published)
		}
		if d := due.Sub(added); d != 14*24*time.Hour && d != 21*24*time.Hour {
			t.Errorf("%s: due %v after the addition", c.ID, d)
		}
		if added.Before(pub.Truncate(24 * time.Hour)) {
			t.Errorf("%s: added %s before published %s", c.ID, c.CISAExploitAdd, c.Published)
		}
		if c.VulnStatus == "Rejected" || c.CISARequiredAction == "" || c.CISAVulnerabilityName == "" {
			t.Errorf("%s: status %s, action %q, name %q", c.ID, c.VulnStatus, c.CISARequiredAction, c.CISAVulnerabilityName)
		}
	}
	if kev < n*3/1000 || kev > n*7/1000 {
		t.Errorf("%d of %d records with a KEV entry, want about 0.5 %%", kev, n)
	}
}
