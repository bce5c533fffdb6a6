package loader

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-json"
	"github.com/google/go-cmp/cmp"

	"github.com/vulnd/vulnd/index"
)

const at = "2026-11-22 06:00:00Z"

func cpeOf(uri string) index.CPE {
	v, p, ver, err := parseCPE(uri)
	if err != nil {
		panic(err)
	}
	return index.CPE{URI: uri, Vendor: v, Product: p, Version: ver, Vulnerable: true}
}

// eventsJSON renders events as the API serves them, for comparing with
// expectations written as JSON.
func eventsJSON(t *testing.T, events []index.Event) any {
	t.Helper()
	b, err := json.Marshal(events)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	json.Unmarshal(b, &v)
	return v
}

func parseJSON(t *testing.T, s string) any {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("bad expectation: %v\n%s", err, s)
	}
	return v
}

func TestDiffEdgeCases(t *testing.T) {
	apache := "cpe:2.3:a:apache:httpd:2.4.1:*:*:*:*:*:*:*"
	apache2 := "cpe:2.3:a:apache:httpd:2.4.2:*:*:*:*:*:*:*"
	win := "cpe:2.3:o:microsoft:windows:-:*:*:*:*:*:*:*"
	ref := func(link, source, typ, desc string) index.Reference {
		return index.Reference{Link: link, Source: source, Type: typ, Description: desc}
	}
	base := index.CVE{
		Name: "CVE-2024-0001", Summary: "old text",
		CPEs:       []index.CPE{cpeOf(apache), cpeOf(win), cpeOf(apache)},
		CWEs:       []string{"CWE-20", "CWE-79"},
		Metrics:    []index.Metric{{Version: "2.0", Source: "nvd@nist.gov", Score: 5}, {Version: "3.1", Source: "nvd@nist.gov", Score: 9.8}},
		References: []index.Reference{ref("https://a", "s", "PATCH", "Patch"), ref("https://b", "s", "UNKNOWN", ""), ref("https://a", "dup", "X", "X")},
	}
	for _, tc := range []struct {
		name string
		edit func(c *index.CVE)
		want string // events as the API shows them; ids as assigned below
	}{
		{"nothing tracked changed", func(c *index.CVE) { c.UpdatedAt = "later" }, `[]`},
		{"loses all CPEs", func(c *index.CVE) { c.CPEs = nil }, `[
			{"type":"CPEs changed","created_at":"` + at + `","details":{"added":[],"removed":[
				{"cpe_id":1,"product":"httpd","uri":"` + apache + `","vendor":"apache","version":"2.4.1"},
				{"cpe_id":3,"product":"windows","uri":"` + win + `","vendor":"microsoft","version":"-"}]}}]`},
		{"CPE swapped, duplicate kept once", func(c *index.CVE) {
			c.CPEs = []index.CPE{cpeOf(apache2), cpeOf(win), cpeOf(apache2)}
		}, `[
			{"type":"CPEs changed","created_at":"` + at + `","details":{
				"added":[{"cpe_id":2,"product":"httpd","uri":"` + apache2 + `","vendor":"apache","version":"2.4.2"}],
				"removed":[{"cpe_id":1,"product":"httpd","uri":"` + apache + `","vendor":"apache","version":"2.4.1"}]}}]`},
		{"metric removed, one changed, one added", func(c *index.CVE) {
			c.Metrics = []index.Metric{{Version: "3.1", Source: "nvd@nist.gov", Score: 10}, {Version: "4.0", Source: "cna", Score: 8.7}}
		}, `[
			{"type":"CVSS changed","created_at":"` + at + `","details":{"action":"removed","id":1,"new_score":"","old_score":"5.0"}},
			{"type":"CVSS changed","created_at":"` + at + `","details":{"action":"changed","id":2,"new_score":"10.0","old_score":"9.8"}},
			{"type":"CVSS changed","created_at":"` + at + `","details":{"action":"added","id":3,"new_score":"8.7","old_score":""}}]`},
		{"same score, other vector: no event", func(c *index.CVE) {
			c.Metrics = []index.Metric{{Version: "2.0", Source: "nvd@nist.gov", Type: "Secondary", Score: 5.0}, c.Metrics[1]}
		}, `[]`},
		{"reference tags change, one added, one removed", func(c *index.CVE) {
			c.References = []index.Reference{ref("https://c", "s2", "EXPLOIT", "Exploit"), ref("https://a", "t", "VENDOR_ADVISORY", "Vendor Advisory, Patch")}
		}, `[
			{"type":"References changed","created_at":"` + at + `","details":{
				"added":[{"description":"Exploit","link":"https://c","source":"s2","type":"EXPLOIT"}],
				"changed":[
					{"id":1,"key":"type","link":"https://a","new_value":"VENDOR_ADVISORY","old_value":"PATCH"},
					{"id":1,"key":"source","link":"https://a","new_value":"t","old_value":"s"},
					{"id":1,"key":"description","link":"https://a","new_value":"Vendor Advisory, Patch","old_value":"Patch"}],
				"removed":[{"description":"","link":"https://b","source":"s","type":"UNKNOWN"},
					{"description":"X","link":"https://a","source":"dup","type":"X"}]}}]`},
		{"link repeated under a second source is added", func(c *index.CVE) {
			c.References = append(c.References, ref("https://b", "cisa", "UNKNOWN", ""))
		}, `[
			{"type":"References changed","created_at":"` + at + `","details":{
				"added":[{"description":"","link":"https://b","source":"cisa","type":"UNKNOWN"}],"changed":[],"removed":[]}}]`},
		{"CWEs replaced", func(c *index.CVE) { c.CWEs = []string{"CWE-20", "CWE-89", "CWE-787"} }, `[
			{"type":"CWEs changed","created_at":"` + at + `","details":{"added":["CWE-89","CWE-787"],"removed":["CWE-79"]}}]`},
		{"rejected", func(c *index.CVE) {
			c.Summary = "** REJECT ** gone"
			c.CPEs, c.CWEs, c.Metrics, c.References = nil, nil, nil, nil
		}, `[
			{"type":"Summary changed","created_at":"` + at + `","details":{"old":"old text","new":"** REJECT ** gone"}},
			{"type":"CPEs changed","created_at":"` + at + `","details":{"added":[],"removed":[
				{"cpe_id":1,"product":"httpd","uri":"` + apache + `","vendor":"apache","version":"2.4.1"},
				{"cpe_id":3,"product":"windows","uri":"` + win + `","vendor":"microsoft","version":"-"}]}},
			{"type":"CVSS changed","created_at":"` + at + `","details":{"action":"removed","id":1,"new_score":"","old_score":"5.0"}},
			{"type":"CVSS changed","created_at":"` + at + `","details":{"action":"removed","id":2,"new_score":"","old_score":"9.8"}},
			{"type":"CWEs changed","created_at":"` + at + `","details":{"added":[],"removed":["CWE-20","CWE-79"]}},
			{"type":"References changed","created_at":"` + at + `","details":{"added":[],"changed":[],"removed":[
				{"description":"Patch","link":"https://a","source":"s","type":"PATCH"},
				{"description":"","link":"https://b","source":"s","type":"UNKNOWN"},
				{"description":"X","link":"https://a","source":"dup","type":"X"}]}}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old := clone(base)
			n := clone(base)
			tc.edit(&n)
			// apache (1), apache2 (2), windows (3): new URIs are numbered
			// in byte order; metrics and references in record order. The
			// second https://a of base is a reference of its own.
			ids := newIDTables()
			ids.assign([]index.CVE{{Name: old.Name, CPEs: []index.CPE{cpeOf(win), cpeOf(apache2), cpeOf(apache)}}})
			ids.assign([]index.CVE{old, n})
			events := diffCVE(&old, &n, ids, at)
			if events == nil {
				events = []index.Event{}
			}
			if diff := cmp.Diff(parseJSON(t, tc.want), eventsJSON(t, events)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

func clone(c index.CVE) index.CVE {
	b, _ := json.Marshal(c)
	var out index.CVE
	json.Unmarshal(b, &out)
	return out
}

func TestDiffNewCVE(t *testing.T) {
	n := index.CVE{
		Name: "CVE-2024-0002", Summary: "s",
		CPEs:       []index.CPE{cpeOf("cpe:2.3:a:v:p:1:*:*:*:*:*:*:*"), cpeOf("cpe:2.3:a:w:q:*:*:*:*:*:*:*:*")},
		Metrics:    []index.Metric{{Version: "3.1", Source: "x", Score: 7}},
		CWEs:       []string{"CWE-79"},
		References: []index.Reference{{Link: "https://l", Source: "x", Type: "UNKNOWN"}},
	}
	ids := newIDTables()
	ids.assign([]index.CVE{n})
	alerts, err := diffCVEs(nil, []index.CVE{n}, ids, at, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(alerts) != 1 {
		t.Fatalf("%d alerts", len(alerts))
	}
	a := alerts[0]
	if a.ID != 1 || a.CVE != n.Name || a.CreatedAt != at {
		t.Errorf("alert %+v", a)
	}
	if diff := cmp.Diff(index.Handlers{Products: []string{"p", "q"}, Vendors: []string{"v", "w"}}, a.Handlers); diff != "" {
		t.Errorf("handlers (-want +got):\n%s", diff)
	}
	want := `[
		{"type":"New CVE","created_at":"` + at + `","details":{}},
		{"type":"CPEs changed","created_at":"` + at + `","details":{"added":[
			{"cpe_id":1,"product":"p","uri":"cpe:2.3:a:v:p:1:*:*:*:*:*:*:*","vendor":"v","version":"1"},
			{"cpe_id":2,"product":"q","uri":"cpe:2.3:a:w:q:*:*:*:*:*:*:*:*","vendor":"w","version":"*"}],"removed":[]}},
		{"type":"CVSS changed","created_at":"` + at + `","details":{"action":"added","id":1,"new_score":"7.0","old_score":""}},
		{"type":"CWEs changed","created_at":"` + at + `","details":{"added":["CWE-79"],"removed":[]}},
		{"type":"References changed","created_at":"` + at + `","details":{"added":[{"description":"","link":"https://l","source":"x","type":"UNKNOWN"}],"changed":[],"removed":[]}}]`
	if diff := cmp.Diff(parseJSON(t, want), eventsJSON(t, a.Events)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	// A CVE with nothing but a name is still new: one event.
	bare := index.CVE{Name: "CVE-2024-0003"}
	alerts, _ = diffCVEs(nil, []index.CVE{bare}, ids, at, nil)
	if len(alerts) != 1 || len(alerts[0].Events) != 1 || alerts[0].ID != 2 {
		t.Errorf("bare new CVE: %+v", alerts)
	}
}

// buildChain builds s1 (sample + before), s2 (-previous s1, sample +
// after) and s3 (-previous s2, same inputs as s2) from the real change
// pairs, into dir.
func buildChain(t *testing.T, dir string, keep int) (s1, s2, s3 string) {
	t.Helper()
	cwe := sharedPath(t, "cwe/cwec_v4.15.xml.zip")
	sample := sharedPath(t, "nvd/nvdcve-2.0-sample.json.gz")
	before := sharedPath(t, "nvd/changes/before.json.gz")
	after := sharedPath(t, "nvd/changes/after.json.gz")
	s1, s2, s3 = filepath.Join(dir, "s1"), filepath.Join(dir, "s2"), filepath.Join(dir, "s3")
	day := func(d int) time.Time { return time.Date(2026, 11, d, 6, 0, 0, 0, time.UTC) }
	for _, b := range []BuildOptions{
		{CWECatalog: cwe, Feeds: []string{sample, before}, Out: s1, Time: day(21)},
		{CWECatalog: cwe, Feeds: []string{sample, after}, Out: s2, Previous: s1, Time: day(22), KeepReports: keep},
		{CWECatalog: cwe, Feeds: []string{sample, after}, Out: s3, Previous: s2, Time: day(23), KeepReports: keep},
	} {
		if _, err := Build(b); err != nil {
			t.Fatalf("build %s: %v", b.Out, err)
		}
	}
	return s1, s2, s3
}

func TestIDsStableAcrossBuilds(t *testing.T) {
	s1, s2, s3 := buildChain(t, t.TempDir(), 0)
	snaps := make([]*Snapshot, 3)
	for i, dir := range []string{s1, s2, s3} {
		s, err := Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		snaps[i] = s
	}
	// Every id a snapshot holds is still in the next one, naming the same
	// thing; ids of things that are gone stay reserved.
	for i := 0; i+1 < len(snaps); i++ {
		a, b := snaps[i].ids, snaps[i+1].ids
		for uri, id := range a.cpe {
			if b.cpe[uri] != id {
				t.Errorf("s%d→s%d: cpe %s id %d became %d", i+1, i+2, uri, id, b.cpe[uri])
			}
		}
		for k, id := range a.cvss {
			if b.cvss[k] != id {
				t.Errorf("s%d→s%d: cvss %v id %d became %d", i+1, i+2, k, id, b.cvss[k])
			}
		}
		for k, id := range a.ref {
			if b.ref[k] != id {
				t.Errorf("s%d→s%d: ref %v id %d became %d", i+1, i+2, k, id, b.ref[k])
			}
		}
	}
	// The CVE records agree with the tables, and cpe ids are unique per URI.
	for i, s := range snaps {
		seen := map[int64]string{}
		for _, c := range s.Data.CVEs {
			for _, p := range c.CPEs {
				if p.ID != s.ids.cpe[p.URI] || p.ID < 1 {
					t.Fatalf("s%d %s: %s has cpe_id %d, table says %d", i+1, c.Name, p.URI, p.ID, s.ids.cpe[p.URI])
				}
				if u, ok := seen[p.ID]; ok && u != p.URI {
					t.Fatalf("s%d: cpe_id %d names %s and %s", i+1, p.ID, u, p.URI)
				}
				seen[p.ID] = p.URI
			}
			for _, m := range c.Metrics {
				if m.ID != s.ids.cvss[cvssKey{c.Name, m.Version, m.Source}] || m.ID < 1 {
					t.Fatalf("s%d %s: metric %+v id disagrees with the table", i+1, c.Name, m)
				}
			}
		}
	}
	// s1 has no reports; s2 one; s3 (nothing changed) keeps s2's as is.
	if n := len(snaps[0].Data.Reports); n != 0 {
		t.Errorf("s1 has %d reports", n)
	}
	if len(snaps[1].Data.Reports) != 1 {
		t.Fatalf("s2 has %d reports, want 1", len(snaps[1].Data.Reports))
	}
	if diff := cmp.Diff(snaps[1].Data.Reports, snaps[2].Data.Reports); diff != "" {
		t.Errorf("s3 changed s2's report (-s2 +s3):\n%s", diff)
	}
	// Alert ids are unique in the snapshot.
	alertIDs := map[int64]bool{}
	for _, a := range snaps[2].Data.Reports[0].Alerts {
		if alertIDs[a.ID] {
			t.Errorf("alert id %d twice", a.ID)
		}
		alertIDs[a.ID] = true
	}
}

func TestKeepReports(t *testing.T) {
	for _, tc := range []struct {
		keep int
		want [][]string // report ids kept after each of four daily builds
	}{
		{1, [][]string{nil, {"20261102T000000Z"}, {"20261103T000000Z"}, {"20261104T000000Z"}}},
		{2, [][]string{nil, {"20261102T000000Z"}, {"20261102T000000Z", "20261103T000000Z"}, {"20261104T000000Z", "20261103T000000Z"}}},
	} {
		t.Run(strconv.Itoa(tc.keep), func(t *testing.T) {
			if diff := cmp.Diff(tc.want, dailyReports(t, tc.keep)); diff != "" {
				t.Errorf("reports kept per day (-want +got):\n%s", diff)
			}
		})
	}
}

// dailyReports runs four daily builds, each adding one CVE, with
// -keep-reports keep, and returns the report ids of each snapshot.
func dailyReports(t *testing.T, keep int) [][]string {
	dir := t.TempDir()
	cwe := filepath.Join(dir, "cwe.xml")
	os.WriteFile(cwe, []byte(`<Weakness_Catalog><Weaknesses></Weaknesses></Weakness_Catalog>`), 0o644)
	var reports [][]string
	snap := ""
	for day := 1; day <= 4; day++ {
		f := filepath.Join(dir, "feed.json")
		var recs []string
		for i := 1; i <= day; i++ { // each day adds one CVE
			recs = append(recs, record("CVE-2024-000"+string(rune('0'+i)), "2024-01-01T00:00:00.000", "x"))
		}
		os.WriteFile(f, []byte(feed(recs...)), 0o644)
		prev := snap // "" on the first day
		snap = filepath.Join(dir, "snap"+strconv.Itoa(day))
		if _, err := Build(BuildOptions{CWECatalog: cwe, Feeds: []string{f}, Out: snap, Previous: prev, KeepReports: keep,
			Time: time.Date(2026, 11, day, 0, 0, 0, 0, time.UTC)}); err != nil {
			t.Fatal(err)
		}
		s, err := Read(snap)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range s.Data.Reports {
			ids = append(ids, r.ID)
		}
		reports = append(reports, ids)
	}
	return reports
}

func TestReportIDIsUniqueAndURLSafe(t *testing.T) {
	at := time.Date(2026, 11, 22, 6, 0, 0, 0, time.FixedZone("x", 3600))
	kept := []index.Report{{ID: "20261122T050000Z"}, {ID: "20261122T050000Z-2"}}
	if got := reportID(at, kept); got != "20261122T050000Z-3" {
		t.Errorf("reportID = %q", got)
	}
	if got := reportID(at, nil); strings.Trim(got, "0123456789TZ") != "" {
		t.Errorf("reportID %q is not plain", got)
	}
}
