package loader

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goccy/go-json"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/klauspost/compress/zstd"

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

// setChunks replaces a data file with the given zstd frames, each said to
// decode to the matching number of bytes and records, and rewrites the
// manifest's entry to match, so that every check before decoding passes.
func setChunks(t *testing.T, dir, key string, frames [][]byte, decoded []int64, records []int) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	var m Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	fi := m.Files[key]
	fi.Chunks, fi.Size, fi.Bytes, fi.Records = nil, 0, 0, 0
	var all []byte
	for i, f := range frames {
		sum := sha256.Sum256(f)
		fi.Chunks = append(fi.Chunks, Chunk{Size: int64(len(f)), Bytes: decoded[i], Records: records[i], SHA256: hex.EncodeToString(sum[:])})
		fi.Size += int64(len(f))
		fi.Bytes += decoded[i]
		fi.Records += records[i]
		all = append(all, f...)
	}
	sum := sha256.Sum256(all)
	fi.SHA256 = hex.EncodeToString(sum[:])
	m.Files[key] = fi
	if raw, err = json.MarshalIndent(m, "", "  "); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, ManifestName), raw, 0o644)
	os.WriteFile(filepath.Join(dir, fi.Name), all, 0o644)
}

func zstdFrame(t *testing.T, b []byte) []byte {
	t.Helper()
	enc, err := testEncoder()
	if err != nil {
		t.Fatal(err)
	}
	return enc.EncodeAll(b, nil)
}

// testEncoder is one encoder for every test: making one takes
// milliseconds, which the fuzz targets would spend on every input.
var testEncoder = sync.OnceValues(func() (*zstd.Encoder, error) {
	return zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
})

// TestCorruptSnapshotsAreRefused breaks a good snapshot in every way we
// can think of; Load and Validate must each refuse it with an error that
// names the directory and says what is wrong.
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
	edit := func(name string, f func([]byte) []byte) func(*testing.T, string) {
		return func(_ *testing.T, dir string) {
			p := filepath.Join(dir, name)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, f(b), 0o644)
		}
	}
	replace := func(old, new string) func([]byte) []byte {
		return func(b []byte) []byte {
			if !strings.Contains(string(b), old) {
				panic("test fixture: " + old + " not found")
			}
			return []byte(strings.Replace(string(b), old, new, 1))
		}
	}
	cves, _ := os.ReadFile(filepath.Join(good, fileCVEs))
	goodBody := index.EncodeCVE(&smallData().CVEs[0])
	// A body that is valid JSON but not what this vulnd serves for its
	// record: one with members out of order, which neither accepts; one
	// with a member too many, which loads, but does not validate.
	reordered := []byte(strings.Replace(string(goodBody), `{"name":"CVE-2024-0001","summary":"x",`, `{"summary":"x","name":"CVE-2024-0001",`, 1))
	extra := append(append([]byte{}, goodBody[:len(goodBody)-1]...), `,"extra":1}`...)
	cases := []struct {
		name         string
		break_       func(t *testing.T, dir string)
		want         string
		validateOnly bool   // Load does not look that deep
		wantLoad     string // Load's error, when not want
	}{
		{"missing manifest", func(_ *testing.T, d string) { os.Remove(filepath.Join(d, ManifestName)) }, "manifest.json: no such file", false, ""},
		{"missing data file", func(_ *testing.T, d string) { os.Remove(filepath.Join(d, fileCVEs)) }, "cves.jsonl.zst: open", false, ""},
		{"missing metrics file", func(_ *testing.T, d string) { os.Remove(filepath.Join(d, fileMetrics)) }, "metrics.jsonl.zst: open", false, ""},
		{"newer version", edit(ManifestName, replace(`"version": 11`, `"version": 12`)), "format version 12 is not supported (this vulnd reads versions 4 to 11); rebuild the snapshot with this vulnd", false, ""},
		{"version 3", edit(ManifestName, replace(`"version": 11`, `"version": 3`)), "format version 3 is older than this vulnd's 11: rebuild the snapshot with this vulnd (vulnd build; -previous reads a version 3 snapshot, so its reports and ids carry over)", false, ""},
		{"older version", edit(ManifestName, replace(`"version": 11`, `"version": 2`)), "format version 2 is not supported", false, ""},
		{"version 5 with version 11 files", edit(ManifestName, replace(`"version": 11`, `"version": 5`)), "lists 14 data files, want 7", false, ""},
		{"version 6 with version 11 files", edit(ManifestName, replace(`"version": 11`, `"version": 6`)), "lists 14 data files, want 9", false, ""},
		{"version 7 with version 11 files", edit(ManifestName, replace(`"version": 11`, `"version": 7`)), "lists 14 data files, want 10", false, ""},
		{"version 8 with version 11 files", edit(ManifestName, replace(`"version": 11`, `"version": 8`)), "lists 14 data files, want 11", false, ""},
		{"version 9 with version 11 files", edit(ManifestName, replace(`"version": 11`, `"version": 9`)), "lists 14 data files, want 12", false, ""},
		{"version 10 with version 11 files", edit(ManifestName, replace(`"version": 11`, `"version": 10`)), "lists 14 data files, want 13", false, ""},
		{"missing record provenance", func(_ *testing.T, d string) { os.Remove(filepath.Join(d, fileCVE5From)) }, "cve5from.txt.zst: open", true, ""},
		{"version 4 with version 5 details", func(t *testing.T, d string) { withoutNVD(t, d, 4) }, fileDetails + ": chunk 1: index: bad details record 1: trailing bytes", false, ""},
		{"version 5 with version 6 details", func(t *testing.T, d string) { withoutNVD(t, d, 5) }, fileDetails + ": chunk 1: index: bad details record 1: trailing bytes", false, ""},
		{"missing details file", func(_ *testing.T, d string) { os.Remove(filepath.Join(d, fileDetails)) }, "details.txt.zst: open", false, ""},
		{"details flipped byte", edit(fileDetails, func(b []byte) []byte { b[len(b)/2] ^= 0x01; return b }), fileDetails + ": chunk 1: sha256", false, ""},
		{"strings flipped byte", edit(fileStrings, func(b []byte) []byte { b[len(b)/2] ^= 0x01; return b }), fileStrings + ": chunk 1: sha256", false, ""},
		// ids.jsonl.zst has a chunk per table (cpe, cvss, ref, next): its middle byte is in the second.
		{"ids flipped byte", edit(fileIDs, func(b []byte) []byte { b[len(b)/2] ^= 0x01; return b }), fileIDs + ": chunk 2: sha256", false, ""},
		{"metrics flipped byte", edit(fileMetrics, func(b []byte) []byte { b[len(b)/2] ^= 0x01; return b }), fileMetrics + ": chunk 1: sha256", false, ""},
		{"not a manifest", edit(ManifestName, func([]byte) []byte { return []byte("{}") }), `format "" is not "vulnd-snapshot"`, false, ""},
		{"manifest not JSON", edit(ManifestName, func(b []byte) []byte { return b[:len(b)/2] }), "manifest.json", false, ""},
		{"manifest too large", edit(ManifestName, func(b []byte) []byte { return append(b, make([]byte, 1<<20)...) }), "manifest.json is larger than 1048576 bytes", false, ""},
		{"path outside", edit(ManifestName, replace(`"name": "cves.jsonl.zst"`, `"name": "../cves.jsonl.zst"`)), `cves file is "../cves.jsonl.zst", want "cves.jsonl.zst"`, false, ""},
		{"absolute path", edit(ManifestName, replace(`"name": "cves.jsonl.zst"`, `"name": "/etc/passwd"`)), `cves file is "/etc/passwd"`, false, ""},
		{"flipped byte", edit(fileCVEs, func(b []byte) []byte { b[len(b)/2] ^= 0x40; return b }), fileCVEs + ": chunk 1: sha256", false, ""},
		{"truncated at 0", edit(fileCVEs, func(b []byte) []byte { return b[:0] }), "size 0, manifest says", false, ""},
		{"truncated at 1", edit(fileCVEs, func(b []byte) []byte { return b[:1] }), "size 1, manifest says", false, ""},
		{"truncated at half", edit(fileCVEs, func(b []byte) []byte { return b[:len(b)/2] }), "manifest says", false, ""},
		{"truncated by 1", edit(fileCVEs, func(b []byte) []byte { return b[:len(b)-1] }), "manifest says", false, ""},
		{"one byte more", edit(fileCVEs, func(b []byte) []byte { return append(b, 0) }), "manifest says", false, ""},
		{"other file swapped in", func(_ *testing.T, d string) { os.WriteFile(filepath.Join(d, fileCWEs), cves, 0o644) }, fileCWEs, false, ""},
		{"directory in place of a file", func(_ *testing.T, d string) {
			os.Remove(filepath.Join(d, fileCVEs))
			os.Mkdir(filepath.Join(d, fileCVEs), 0o755)
		}, "not a regular file", false, ""},
		{"wrong count", edit(ManifestName, replace(`"cves": 1,`, `"cves": 2,`)), "manifest counts", false, ""},
		{"wrong records", edit(ManifestName, replace(`"records": 1`, `"records": 7`)), "the file has", false, ""},
		{"decoded size over the limit", edit(ManifestName, replace(`"bytes": `, `"bytes": 99999999999999`)), "over the limit", false, ""},
		{"bad built_at", edit(ManifestName, replace(`"built_at": "2026-11-22 06:00:00Z"`, `"built_at": "yesterday"`)), "built_at", false, ""},
		{"not a directory", func(_ *testing.T, d string) { os.RemoveAll(d); os.WriteFile(d, []byte("x"), 0o644) }, "not a directory", false, ""},
		{"bomb: frame larger than the decoder's memory limit", func(t *testing.T, d string) {
			setChunks(t, d, keyCVEs, [][]byte{zstdFrame(t, make([]byte, maxChunkBytes+1))}, []int64{int64(len(goodBody)) + 1}, []int{1})
		}, "zstd", false, ""},
		{"bomb: decodes to more than the manifest says", func(t *testing.T, d string) {
			setChunks(t, d, keyCVEs, [][]byte{zstdFrame(t, make([]byte, 1<<20))}, []int64{1024}, []int{1})
		}, "decodes to 1048576 bytes, manifest says 1024", false, ""},
		{"not zstd", func(t *testing.T, d string) {
			setChunks(t, d, keyCVEs, [][]byte{append(goodBody, '\n')}, []int64{int64(len(goodBody)) + 1}, []int{1})
		}, "zstd", false, ""},
		{"lines and records disagree", func(t *testing.T, d string) {
			two := append(append(append([]byte{}, goodBody...), '\n'), '\n')
			setChunks(t, d, keyCVEs, [][]byte{zstdFrame(t, two)}, []int64{int64(len(two))}, []int{1})
		}, "holds 2 lines, manifest says 1 records", false, ""},
		{"last line not ended", func(t *testing.T, d string) {
			// One record, as the layout says, its line not ended.
			setChunks(t, d, keyCVEs, [][]byte{zstdFrame(t, goodBody)}, []int64{int64(len(goodBody))}, []int{1})
		}, "last line does not end in a newline", false, ""},
		{"body not JSON", func(t *testing.T, d string) {
			b := append(append([]byte{}, goodBody[:len(goodBody)-1]...), '\n')
			setChunks(t, d, keyCVEs, [][]byte{zstdFrame(t, b)}, []int64{int64(len(b))}, []int{1})
		}, "chunk 1: record 1: ", false, ""},
		{"body members out of order", func(t *testing.T, d string) {
			b := append(append([]byte{}, reordered...), '\n')
			setChunks(t, d, keyCVEs, [][]byte{zstdFrame(t, b)}, []int64{int64(len(b))}, []int{1})
		}, "record 1 (CVE-2024-0001) is not the body this vulnd serves for it", false, "record 1: index: not a CVE body: member 1 is not name"},
		{"body with a member too many", func(t *testing.T, d string) {
			b := append(append([]byte{}, extra...), '\n')
			setChunks(t, d, keyCVEs, [][]byte{zstdFrame(t, b)}, []int64{int64(len(b))}, []int{1})
		}, "record 1 (CVE-2024-0001) is not the body this vulnd serves for it", true, ""},
		{"metrics of an unknown CVE", func(t *testing.T, d string) {
			b := []byte(`{"cve":"CVE-1999-0001","metrics":[]}` + "\n")
			setChunks(t, d, keyMetrics, [][]byte{zstdFrame(t, b)}, []int64{int64(len(b))}, []int{1})
		}, `metrics of "CVE-1999-0001", which the snapshot does not hold`, true, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyDir(t)
			tc.break_(t, dir)
			_, err := Validate(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate: %v, want an error containing %q", err, tc.want)
			}
			if !strings.Contains(err.Error(), dir) {
				t.Errorf("error %q does not name the snapshot directory", err)
			}
			ix, _, err := Load(dir)
			if tc.validateOnly {
				if err != nil {
					t.Errorf("Load: %v; this damage is for Validate alone to find", err)
				}
				return
			}
			want := tc.want
			if tc.wantLoad != "" {
				want = tc.wantLoad
			}
			if err == nil || ix != nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("Load: %v, want an error containing %q", err, want)
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

// EncodeCVEForTest is the body of smallData's CVE, as stored.
func EncodeCVEForTest() []byte { return index.EncodeCVE(&smallData().CVEs[0]) }
