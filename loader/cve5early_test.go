package loader

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// sampleCVE5 are the records of the sample name of ../shared/data/cve5
// (an array, gzipped), each as written there.
func sampleCVE5(t testing.TB, name string) []string {
	t.Helper()
	f, err := os.Open(cve5Sample(t, name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(raws))
	for i, r := range raws {
		out[i] = string(r)
	}
	return out
}

// restamped is the record rec as the record of CVE id, updated at updated.
func restamped(t *testing.T, rec, id, updated string) string {
	t.Helper()
	var old struct {
		Meta struct {
			ID      string `json:"cveId"`
			Updated string `json:"dateUpdated"`
		} `json:"cveMetadata"`
	}
	if err := json.Unmarshal([]byte(rec), &old); err != nil {
		t.Fatal(err)
	}
	out := strings.ReplaceAll(rec, `"`+old.Meta.ID+`"`, `"`+id+`"`)
	return strings.Replace(out, `"dateUpdated":"`+old.Meta.Updated+`"`, `"dateUpdated":"`+updated+`"`, 1)
}

// earlyInputs writes the record files of TestBuildEarlyRecordsSameAsAfter
// into dir: the sample's records, all in NVD's sample feed, and records of
// CVEs that NVD lacks, in every form and place a record can take (a file
// of a zip inside a deflated zip and of one inside a stored zip, an array
// in such a file, a .gz array, a lone record), some of them twice.
func earlyInputs(t *testing.T, dir string) []string {
	recs := sampleCVE5(t, "cvelistV5-sample.json.gz")
	if len(recs) < 10 {
		t.Fatalf("%d sample records", len(recs))
	}
	var inner []cve5ZipFile
	for i, r := range recs {
		inner = append(inner, cve5ZipFile{name: "cves/" + strings.Repeat("x", i%3) + "/r.json", data: []byte(r)})
		if i == 3 {
			inner = append(inner, cve5ZipFile{name: "README.md", data: []byte("not a record")})
		}
	}
	// Records NVD lacks, the second and third in an array.
	inner = append(inner,
		cve5ZipFile{name: "cves/2099/alone.json", data: []byte(restamped(t, recs[0], "CVE-2099-0001", "2025-01-01T00:00:00.000Z"))},
		cve5ZipFile{name: "cves/2099/pair.json", data: []byte("[" + restamped(t, recs[1], "CVE-2099-0002", "2025-01-01T00:00:00.000Z") + "," +
			restamped(t, recs[2], "CVE-2099-0003", "2025-01-01T00:00:00.000Z") + "]")})
	bundle := writeAs(t, cve5Zip(t, cve5ZipFile{name: "cves.zip", data: cve5Zip(t, inner...)}), dir, "midnight.zip")
	stored := writeAs(t, cve5Zip(t,
		cve5ZipFile{name: "notes.txt", data: []byte("hi")},
		cve5ZipFile{name: "delta.zip", stored: true, data: cve5Zip(t,
			cve5ZipFile{name: "a.json", data: []byte(restamped(t, recs[4], "CVE-2099-0004", "2025-01-01T00:00:00.000Z"))},
			// Older than the bundle's: loses to it.
			cve5ZipFile{name: "b.json", data: []byte(restamped(t, recs[5], "CVE-2099-0001", "2024-01-01T00:00:00.000Z"))},
			// A record of NVD's CVE, updated later.
			cve5ZipFile{name: "c.json", data: []byte(restamped(t, recs[6], idOf(t, recs[7]), "2030-01-01T00:00:00.000Z"))},
		)},
	), dir, "delta.zip")
	// Newer than the bundle's: wins over it.
	array := writeAs(t, inputGzip(t, []byte("["+restamped(t, recs[8], "CVE-2099-0002", "2026-01-01T00:00:00.000Z")+","+
		restamped(t, recs[9], "CVE-2099-0005", "2025-01-01T00:00:00.000Z")+"]")), dir, "extra.json.gz")
	lone := writeAs(t, []byte(restamped(t, recs[2], "CVE-2099-0006", "2025-01-01T00:00:00.000Z")), dir, "lone.json")
	return []string{bundle, stored, array, lone, sharedPath(t, "cve5/vulnrichment-sample.json.gz")}
}

// idOf is the cveId of the record rec.
func idOf(t *testing.T, rec string) string {
	t.Helper()
	var r struct {
		Meta struct {
			ID string `json:"cveId"`
		} `json:"cveMetadata"`
	}
	if err := json.Unmarshal([]byte(rec), &r); err != nil {
		t.Fatal(err)
	}
	return r.Meta.ID
}

// TestBuildEarlyRecordsSameAsAfter builds the same inputs with the records
// read beside the feeds (cve5Early) and after them, and checks that the
// snapshots are the same, byte for byte: the entry keys of CVEs whose
// NVD records give CPEs dropped, the records of CVEs NVD lacks read again
// whole wherever they are, two records of one CVE merged alike.
func TestBuildEarlyRecordsSameAsAfter(t *testing.T) {
	dir := t.TempDir()
	records := earlyInputs(t, filepath.Join(dir, "in"))
	opt := BuildOptions{CWECatalog: sharedPath(t, "cwe/cwec_v4.15.xml.zip"), Time: buildTime,
		Feeds: append([]string{sharedPath(t, "nvd/nvdcve-2.0-sample.json.gz")}, records...)}

	defer func(p int) { cve5EarlyProcs = p }(cve5EarlyProcs)
	cve5EarlyProcs = 1 << 20 // never
	opt.Out = filepath.Join(dir, "after")
	after := buildLogged(t, opt)
	cve5EarlyProcs = 1 // always
	opt.Out = filepath.Join(dir, "early")
	early := buildLogged(t, opt)

	// 101 records, once two of one CVE are merged (three of them): the
	// 8 that NVD lacks read again.
	want := "read CVE JSON 5 records beside the feeds: the rest of the read, 101 records, 8 of CVEs NVD lacks read again whole"
	if !slices.Contains(early, want) || slices.Contains(after, want) {
		t.Fatalf("stages: read early %q, after %q; want %q in the first only", early, after, want)
	}
	// The sample's 95 CVEs (2 of them not in NVD's sample) and
	// CVE-2099-0001 to 0006.
	wantRead := "read CVE JSON 5 records: 101 CVEs from 5 files, 8 of them not in the feeds"
	if !slices.Contains(after, wantRead) || !slices.Contains(early, wantRead) {
		t.Errorf("stages %q and %q, want %q in both", after, early, wantRead)
	}
	sameSnapshots(t, filepath.Join(dir, "after"), filepath.Join(dir, "early"))
}

// TestCVE5EarlyFileChanged: a record file that changes between the early
// read and the read again of a record NVD lacks fails the build, rather
// than give that CVE another file's record.
func TestCVE5EarlyFileChanged(t *testing.T) {
	dir := t.TempDir()
	a, b := cve5JSON("CVE-2024-0001", "2024-02-01T00:00:00Z", "a"), cve5JSON("CVE-2024-0002", "2024-02-01T00:00:00Z", "b")
	path := writeAs(t, cve5Zip(t, cve5ZipFile{name: "a.json", data: []byte(a)}, cve5ZipFile{name: "b.json", data: []byte(b)}), dir, "cves.zip")
	e := readCVE5Early([]string{path}, nil)
	<-e.done
	// The same size, another record.
	writeAs(t, cve5Zip(t, cve5ZipFile{name: "a.json", data: []byte(a)}, cve5ZipFile{name: "b.json", data: []byte(strings.Replace(b, "0002", "0003", 1))}), dir, "cves.zip")
	err := e.finish(nil, nil)
	if err == nil || !strings.Contains(err.Error(), "changed while the build read it") {
		t.Fatalf("finish: %v, want the file changed", err)
	}
}

// TestCVE5EarlyAbandon: a build that fails while its records are read
// early stops the read, and leaves GOGC as it found it.
func TestCVE5EarlyAbandon(t *testing.T) {
	before := debug.SetGCPercent(100)
	defer debug.SetGCPercent(before)
	path := writeAs(t, cve5Zip(t, cve5ZipFile{name: "a.json", data: []byte(cve5JSON("CVE-2024-0001", "2024-02-01T00:00:00Z", "a"))}), t.TempDir(), "cves.zip")
	for _, wait := range []bool{false, true} {
		e := readCVE5Early([]string{path}, nil)
		if wait {
			<-e.done // lowered GOGC
		}
		e.abandon()
		if got := debug.SetGCPercent(100); got != 100 {
			t.Errorf("GOGC %d after abandon, want 100", got)
		}
		e.abandon() // again: a build's deferred one after finish
	}
	(*cve5Early)(nil).abandon()
}

// TestBuildEarlyFeedError: a bad feed fails a build reading its records
// early with the feed's error.
func TestBuildEarlyFeedError(t *testing.T) {
	defer func(p int) { cve5EarlyProcs = p }(cve5EarlyProcs)
	cve5EarlyProcs = 1
	dir := t.TempDir()
	bad := writeAs(t, []byte(`{"format":"NVD_CVE","vulnerabilities":[{"cve":{"id":"CVE-2024-0001"}}`), dir, "nvdcve-2.0-bad.json")
	records := earlyInputs(t, filepath.Join(dir, "in"))
	_, err := Build(BuildOptions{CWECatalog: sharedPath(t, "cwe/cwec_v4.15.xml.zip"), Time: buildTime,
		Feeds: append([]string{bad}, records...), Out: filepath.Join(dir, "out")})
	if err == nil || !strings.Contains(err.Error(), "nvdcve-2.0-bad.json") {
		t.Fatalf("build: %v, want the feed's error", err)
	}
}

// TestCVE5Want: a reader wanting some records by their places opens only
// the files that lead to them, in nested archives and arrays alike.
func TestCVE5Want(t *testing.T) {
	dir := t.TempDir()
	records := earlyInputs(t, dir)
	var opened atomic.Int32
	cve5EntryHook = func() { opened.Add(1) }
	defer func() { cve5EntryHook = nil }()
	one := &atomic.Int32{}
	one.Store(1)
	for n, path := range records[:4] {
		var all []*CVE5Record
		opened.Store(0)
		if _, err := (&cve5Reader{workers: one}).file(path, func(r *CVE5Record) error { all = append(all, r); return nil }); err != nil {
			t.Fatal(err)
		}
		openedAll := opened.Load()
		seen := map[cve5Loc]bool{}
		for _, r := range all {
			if seen[r.loc] {
				t.Errorf("%s: two records at %+v", path, r.loc)
			}
			seen[r.loc] = true
		}
		// Every other record.
		want := cve5Want{}
		var ids []string
		for i, r := range all {
			if i%2 == 1 || len(all) == 1 {
				want.add(r.loc)
				ids = append(ids, r.ID)
			}
		}
		var got []string
		opened.Store(0)
		if _, err := (&cve5Reader{want: want, workers: one}).file(path, func(r *CVE5Record) error { got = append(got, r.ID); return nil }); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, ids) {
			t.Errorf("%s: read %v, want %v", filepath.Base(path), got, ids)
		}
		// The two archives: half their files or so opened.
		if n < 2 && (opened.Load() == 0 || opened.Load() > openedAll/2+2) {
			t.Errorf("%s: %d of %d files opened for %d of %d records", filepath.Base(path), opened.Load(), openedAll, len(ids), len(all))
		}
	}
}
