package loader

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vulnd/vulnd/index"
)

var buildTime = time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)

func smallData() *index.Data {
	src := "nvd@nist.gov"
	return &index.Data{
		CWEs: []index.CWE{{Name: "CWE-79", Description: "XSS <script> & co", Type: "Weakness Base", CreatedAt: "2006-07-19 00:00:00Z", UpdatedAt: "2024-02-29 00:00:00Z"}},
		CVEs: []index.CVE{{
			Name: "CVE-2024-0001", Summary: "x", CreatedAt: "2024-01-01 00:00:00Z", UpdatedAt: "2024-01-02 00:00:00Z",
			CPEs:       []index.CPE{{ID: 1, URI: "cpe:2.3:a:v:p:1:*:*:*:*:*:*:*", Vendor: "v", Product: "p", Version: "1", Vulnerable: true, VersionEndExcluding: "2"}},
			CWEs:       []string{"CWE-79"},
			CVSS:       index.CVSS{Source: &src, Score: 9.8},
			References: []index.Reference{{Description: "Patch", Link: "https://e.example/?a=1&b=<2>", Source: "s", Type: "PATCH"}},
			Metrics:    []index.Metric{{Version: "3.1", Source: src, Type: "Primary", Score: 9.8}},
		}},
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "snap")
	d := smallData()
	m, err := Write(dir, d, buildTime, []FileInfo{{Name: "in.json", Size: 1, SHA256: strings.Repeat("0", 64)}})
	if err != nil {
		t.Fatal(err)
	}
	if m.BuiltAt != "2026-11-22 06:00:00Z" || m.Counts.CVEs != 1 || m.Counts.CWEs != 1 || m.Counts.Vendors != 1 || m.Counts.Products != 1 {
		t.Errorf("manifest %+v", m)
	}
	s, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(d, s.Data, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	ix, m2, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if ix.ETag() != `"`+s.ID+`"` || m2.BuiltAt != m.BuiltAt {
		t.Errorf("etag %s id %s", ix.ETag(), s.ID)
	}
	// A rebuild at another time is another snapshot, with another id.
	if _, err := Write(dir, d, buildTime.Add(time.Hour), nil); err != nil {
		t.Fatal(err)
	}
	s2, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s2.ID == s.ID {
		t.Error("snapshot id did not change with the build time")
	}
	entries, _ := os.ReadDir(filepath.Dir(dir))
	if len(entries) != 1 {
		t.Errorf("left beside the snapshot: %v", entries)
	}
}

// corrupt copies a good snapshot and breaks it.
func TestCorruptSnapshotsAreRefused(t *testing.T) {
	good := filepath.Join(t.TempDir(), "good")
	if _, err := Write(good, smallData(), buildTime, nil); err != nil {
		t.Fatal(err)
	}
	copyDir := func(t *testing.T) string {
		dst := filepath.Join(t.TempDir(), "snap")
		os.MkdirAll(dst, 0o755)
		entries, _ := os.ReadDir(good)
		for _, e := range entries {
			b, _ := os.ReadFile(filepath.Join(good, e.Name()))
			os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644)
		}
		return dst
	}
	edit := func(name string, f func([]byte) []byte) func(string) {
		return func(dir string) {
			p := filepath.Join(dir, name)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, f(b), 0o644)
		}
	}
	replace := func(old, new string) func([]byte) []byte {
		return func(b []byte) []byte { return []byte(strings.Replace(string(b), old, new, 1)) }
	}
	cves, _ := os.ReadFile(filepath.Join(good, fileCVEs))
	cases := []struct {
		name   string
		break_ func(dir string)
		want   string
	}{
		{"missing manifest", func(d string) { os.Remove(filepath.Join(d, ManifestName)) }, "manifest.json: no such file"},
		{"missing data file", func(d string) { os.Remove(filepath.Join(d, fileCVEs)) }, "cves.jsonl.zst: open"},
		{"newer version", edit(ManifestName, replace(`"version": 2`, `"version": 3`)), "format version 3 is not supported (this vulnd reads version 2)"},
		{"older version", edit(ManifestName, replace(`"version": 2`, `"version": 1`)), "format version 1 is not supported"},
		{"ids flipped byte", edit(fileIDs, func(b []byte) []byte { b[len(b)/2] ^= 0x01; return b }), fileIDs},
		{"not a manifest", edit(ManifestName, func([]byte) []byte { return []byte("{}") }), `format "" is not "vulnd-snapshot"`},
		{"manifest not JSON", edit(ManifestName, func(b []byte) []byte { return b[:len(b)/2] }), "manifest.json"},
		{"path outside", edit(ManifestName, replace(`"name": "cves.jsonl.zst"`, `"name": "../cves.jsonl.zst"`)), `cves file is "../cves.jsonl.zst", want "cves.jsonl.zst"`},
		{"flipped byte", edit(fileCVEs, func(b []byte) []byte { b[len(b)/2] ^= 0x40; return b }), fileCVEs},
		{"truncated at 1", edit(fileCVEs, func(b []byte) []byte { return b[:1] }), "size 1, manifest says"},
		{"truncated at half", edit(fileCVEs, func(b []byte) []byte { return b[:len(b)/2] }), "manifest says"},
		{"truncated by 1", edit(fileCVEs, func(b []byte) []byte { return b[:len(b)-1] }), "manifest says"},
		{"other file swapped in", func(d string) { os.WriteFile(filepath.Join(d, fileCWEs), cves, 0o644) }, fileCWEs},
		{"wrong count", edit(ManifestName, replace(`"cves": 1,`, `"cves": 2,`)), "manifest counts"},
		{"wrong records", edit(ManifestName, replace(`"records": 1`, `"records": 7`)), "manifest says 7"},
		{"bad built_at", edit(ManifestName, replace(`"built_at": "2026-11-22 06:00:00Z"`, `"built_at": "yesterday"`)), "built_at"},
		{"not a directory", func(d string) { os.RemoveAll(d); os.WriteFile(d, []byte("x"), 0o644) }, "not a directory"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDir(t)
			tc.break_(dir)
			_, err := Validate(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate: %v, want an error containing %q", err, tc.want)
			}
			if !strings.Contains(err.Error(), dir) {
				t.Errorf("error %q does not name the snapshot directory", err)
			}
		})
	}
}

func TestFailedBuildLeavesNothing(t *testing.T) {
	parent := t.TempDir()
	out := filepath.Join(parent, "snap")
	cwe := filepath.Join(parent, "cwe.xml")
	os.WriteFile(cwe, []byte(`<Weakness_Catalog><Weaknesses></Weaknesses></Weakness_Catalog>`), 0o644)
	bad := filepath.Join(parent, "bad.json")
	os.WriteFile(bad, []byte(feed(record("CVE-2024-0001", "nope", "x"))), 0o644)
	_, err := Build(BuildOptions{CWECatalog: cwe, Feeds: []string{bad}, Out: out, Time: buildTime})
	if err == nil || !strings.Contains(err.Error(), bad) {
		t.Fatalf("build error %v, want one naming %s", err, bad)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("failed build left %s", out)
	}
	// A good build, then a failing one: the good snapshot stays as it was.
	good := filepath.Join(parent, "good.json")
	os.WriteFile(good, []byte(feed(record("CVE-2024-0001", "2024-01-01T00:00:00.000", "x"))), 0o644)
	if _, err := Build(BuildOptions{CWECatalog: cwe, Feeds: []string{good}, Out: out, Time: buildTime}); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(out, ManifestName))
	if _, err := Build(BuildOptions{CWECatalog: cwe, Feeds: []string{bad}, Out: out, Time: buildTime}); err == nil {
		t.Fatal("bad build succeeded")
	}
	after, _ := os.ReadFile(filepath.Join(out, ManifestName))
	if string(before) != string(after) {
		t.Error("a failed build changed the existing snapshot")
	}
	entries, _ := os.ReadDir(parent)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{"bad.json", "cwe.xml", "good.json", "snap"}, names); diff != "" {
		t.Errorf("files beside the snapshot (-want +got):\n%s", diff)
	}
}
