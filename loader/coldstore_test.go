package loader

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vulnd/vulnd/index"
)

// coldCVEs are CVEs as mapCVE makes them (CWEs and References never nil,
// CPEs nil for none), with what a spill must give back as it was: an
// escaped CPE component, range bounds, a CPE not vulnerable, a
// reference repeated, empty strings, non-ASCII text.
func coldCVEs() []index.CVE {
	return []index.CVE{
		{
			Name: "CVE-2024-0001", Summary: "Überlauf in foo: \"quoted\"\nnew line", CreatedAt: "2024-01-01T00:00:00Z", UpdatedAt: "2024-02-01T00:00:00Z",
			CWEs: []string{"CWE-79", "CWE-787"},
			References: []index.Reference{
				{Description: "Vendor Advisory, Patch", Link: "https://example.com/a", Source: "cna@example.com", Type: "VENDOR_ADVISORY"},
				{Description: "", Link: "https://example.com/a", Source: "nvd@nist.gov", Type: "UNKNOWN"},
			},
			CPEs: []index.CPE{
				{URI: `cpe:2.3:a:foo\:bar:prod\!uct:1.0:*:*:*:*:*:*:*`, Vulnerable: true, VersionStartIncluding: "1.0", VersionEndExcluding: "2.0"},
				{URI: "cpe:2.3:o:linux:linux_kernel:-:*:*:*:*:*:*:*", Vulnerable: false, VersionStartExcluding: "5.4", VersionEndIncluding: "5.10.3"},
			},
			Metrics: []index.Metric{{Version: "3.1", Source: "nvd@nist.gov", Type: "Primary", Score: 9.8}},
		},
		{Name: "CVE-2024-0002", CreatedAt: "2024-01-01T00:00:00Z", UpdatedAt: "2024-01-01T00:00:00Z", CWEs: []string{}, References: []index.Reference{}},
	}
}

// TestColdStoreRoundTrip: what a full build spills of a CVE (summary,
// CWEs, references, CPEs) comes back as it was, the CPEs with their
// components and the ids of their URIs; the counts and URIs are read
// without the rest; a CVE the store does not hold is left as it is.
func TestColdStoreRoundTrip(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "cold")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := coldCVEs()
	for i := range want {
		for k := range want[i].CPEs {
			p := &want[i].CPEs[k]
			if p.Vendor, p.Product, p.Version, err = parseCPE(p.URI); err != nil {
				t.Fatal(err)
			}
		}
	}
	s := newColdStore(f)
	cves := coldCVEs()
	var refs []coldRef
	var names []string
	for i := range cves {
		for k := range cves[i].CPEs {
			p := &cves[i].CPEs[k]
			p.Vendor, p.Product, p.Version, _ = parseCPE(p.URI)
		}
		refs = append(refs, s.put(&cves[i]))
		names = append(names, cves[i].Name)
		if c := &cves[i]; c.Summary != "" || c.CWEs != nil || c.References != nil || c.CPEs != nil {
			t.Fatalf("%s: put left its fields: %+v", c.Name, c)
		}
	}
	if err := s.index(names, refs); err != nil {
		t.Fatal(err)
	}
	var uris []string
	var buf []byte
	for i := range cves {
		if buf, err = s.eachCPEURI(i, buf, func(uri []byte) { uris = append(uris, string(uri)) }); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]string{want[0].CPEs[0].URI, want[0].CPEs[1].URI}, uris); diff != "" {
		t.Errorf("eachCPEURI (-want +got):\n%s", diff)
	}
	s.cpeIDs = map[string]int64{want[0].CPEs[0].URI: 7, want[0].CPEs[1].URI: 3}
	want[0].CPEs[0].ID, want[0].CPEs[1].ID = 7, 3
	for i := range cves {
		got := cves[i]
		if n, w := s.refCount(&got), len(want[i].References); n != w {
			t.Errorf("%s: refCount %d, want %d", got.Name, n, w)
		}
		if n, w := s.cpeCount(&got), len(want[i].CPEs); n != w {
			t.Errorf("%s: cpeCount %d, want %d", got.Name, n, w)
		}
		links, _, err := s.refsOf(&got, nil)
		if err != nil {
			t.Fatal(err)
		}
		for k := range links {
			if links[k].Link != want[i].References[k].Link {
				t.Errorf("%s: refsOf link %d %q, want %q", got.Name, k, links[k].Link, want[i].References[k].Link)
			}
		}
		if buf, err = s.fill(&got, buf); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want[i], got); diff != "" {
			t.Errorf("%s read back (-want +got):\n%s", got.Name, diff)
		}
	}
	other := index.CVE{Name: "CVE-2024-0003", Summary: "held", References: []index.Reference{{Link: "x"}}}
	kept := other
	if _, err := s.fill(&other, nil); err != nil || !cmp.Equal(kept, other) {
		t.Errorf("a CVE not in the store: %v, %+v", err, other)
	}
	if s.refCount(&other) != 1 || s.cpeCount(&other) != 0 {
		t.Errorf("a CVE not in the store: counts %d %d, want 1 0", s.refCount(&other), s.cpeCount(&other))
	}
	// A spill file cut short is an error, not a panic.
	if err := f.Truncate(refs[0].at + int64(refs[0].size) - 3); err != nil {
		t.Fatal(err)
	}
	got := cves[0]
	if _, err := s.fill(&got, nil); err == nil || !strings.Contains(err.Error(), "CVE-2024-0001") {
		t.Errorf("fill of a cut record: %v, want an error naming the CVE", err)
	}
}

// TestBuildSpilledSameBodies: a full build, which spills its CVEs'
// fields as read and reads them back for the bodies, writes the same
// CVE bodies as Write of the same feeds' CVEs held in memory.
func TestBuildSpilledSameBodies(t *testing.T) {
	dir := t.TempDir()
	cwe := sharedPath(t, "cwe/cwec_v4.15.xml.zip")
	feeds := []string{sharedPath(t, "nvd/nvdcve-2.0-sample.json.gz"), mustWrite(t, filepath.Join(dir, "more.json"), feed(
		`{"cve":{"id":"CVE-2024-90001","published":"2024-01-01T00:00:00.000","lastModified":"2024-02-01T00:00:00.000","vulnStatus":"Analyzed",`+
			`"descriptions":[{"lang":"en","value":"esc\u00e4ped \"text\""}],"weaknesses":[{"description":[{"lang":"en","value":"CWE-79"}]}],`+
			`"configurations":[{"nodes":[{"operator":"OR","negate":false,"cpeMatch":[{"vulnerable":true,"criteria":"cpe:2.3:a:foo\\:bar:prod:1.0:*:*:*:*:*:*:*","versionEndExcluding":"2.0"},`+
			`{"vulnerable":false,"criteria":"cpe:2.3:o:linux:linux_kernel:-:*:*:*:*:*:*:*"}]}]}],`+
			`"references":[{"url":"https://example.com/a","source":"cna@example.com","tags":["Patch"]},{"url":"https://example.com/a","source":"nvd@nist.gov"}]}}`))}
	built := filepath.Join(dir, "built")
	if _, err := Build(BuildOptions{CWECatalog: cwe, Feeds: feeds, Out: built, Time: buildTime}); err != nil {
		t.Fatal(err)
	}
	cves, err := ReadFeeds(feeds)
	if err != nil {
		t.Fatal(err)
	}
	cwes, _, _, err := readCWECatalog(cwe)
	if err != nil {
		t.Fatal(err)
	}
	written := filepath.Join(dir, "written")
	if _, err := Write(written, &index.Data{CWEs: cwes, CVEs: cves}, buildTime, nil); err != nil {
		t.Fatal(err)
	}
	a, b := bodiesOf(t, built), bodiesOf(t, written)
	if len(a) < 2 {
		t.Fatalf("%d bodies built", len(a))
	}
	if diff := cmp.Diff(b, a); diff != "" {
		t.Errorf("bodies built (+) against written from memory (-):\n%s", diff)
	}
}

// bodiesOf is the CVE bodies of the snapshot in dir, in order.
func bodiesOf(t *testing.T, dir string) []string {
	t.Helper()
	s, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := decoder()
	if err != nil {
		t.Fatal(err)
	}
	// eachRecord calls f from a goroutine per chunk: by record number.
	out := make([]string, s.Manifest.Files[keyCVEs].Records)
	if err := eachRecord(dir, s.Manifest.Files[keyCVEs], dec, func(n int, line []byte) error {
		out[n] = string(line)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}
