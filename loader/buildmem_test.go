package loader

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/vulnd/vulnd/index"
)

// What a build holds while it reads (issue 26: a build's peak with CVE
// JSON 5 records at most 15 % over NVD's alone). These tests are not
// parallel: they measure the live heap.

// liveHeap is the live heap in bytes, after a full collection.
func liveHeap() int64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapAlloc)
}

// prose is n bytes of words, different for each seed: text as JSON
// holds it, which compresses about as NVD's does.
func prose(seed uint64, n int) string {
	words := strings.Fields("the a of to in remote attacker could allow execute arbitrary code via crafted request " +
		"buffer overflow in function when parsing improper validation of input leads to denial service memory " +
		"corruption cross site scripting vulnerability authenticated user privilege escalation component version " +
		"before through affected product vendor plugin kernel driver module configuration file network packet")
	r := rand.New(rand.NewPCG(seed, 7))
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(words[r.IntN(len(words))])
		b.WriteByte(' ')
		if r.IntN(50) == 0 {
			fmt.Fprintf(&b, "%d.%d.%d ", r.IntN(20), r.IntN(100), r.IntN(1000))
		}
	}
	return b.String()
}

// TestReadFeedsKeepsRecordsCompressed: the NVD records a build keeps as
// read (for NVD's API) are held compressed, not as read: NVD's sample
// records, repeated under new ids to 1860 records, take with their facts
// less than four fifths of their size as read (about three fifths;
// whole, they took it all and their facts more) beside the CVEs mapped
// from them.
func TestReadFeedsKeepsRecordsCompressed(t *testing.T) {
	dir := t.TempDir()
	doc := realFeed(t)
	var recs []string
	raw := 0
	for copy := range 10 {
		for id, rec := range rawRecords(t, doc) {
			rec = strings.Replace(rec, `"`+id+`"`, fmt.Sprintf(`"CVE-2030-%d%06d"`, copy, len(recs)), 1)
			raw += len(rec)
			recs = append(recs, `{"cve":`+rec+`}`)
		}
	}
	path := mustWrite(t, filepath.Join(dir, "feed.json"), feed(recs...))
	n := len(recs)
	recs, doc = nil, nil
	// What the CVEs take, then the CVEs and the records.
	before := liveHeap()
	cves, err := ReadFeeds([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	mapped := liveHeap() - before
	runtime.KeepAlive(cves)
	cves = nil
	before = liveHeap()
	cves, nvd, _, err := readFeeds([]string{path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	kept := liveHeap() - before - mapped
	runtime.KeepAlive(cves)
	runtime.KeepAlive(nvd)
	if len(cves) != n {
		t.Fatalf("%d CVEs, want %d", len(cves), n)
	}
	t.Logf("%d records, %.1f MB as read: %.1f MB kept beside the %.1f MB of their CVEs", n, float64(raw)/(1<<20), float64(kept)/(1<<20), float64(mapped)/(1<<20))
	if kept > int64(raw)*4/5 {
		t.Errorf("the records take %d bytes for %d bytes as read: they are held as read", kept, raw)
	}
}

// TestReadCVE5KeepsWhatTheBuildTakes: of a CVE JSON 5 record of a CVE
// that NVD has, a build keeps only what it takes (affected entries, SSVC
// decision, dates), as soon as the record is decoded: 500 records with
// 16 KB descriptions and 100 references add less than a tenth of their
// size to the live heap. A CVE that NVD lacks keeps its record whole.
func TestReadCVE5KeepsWhatTheBuildTakes(t *testing.T) {
	dir := t.TempDir()
	const n, size = 500, 16 << 10
	var recs, feedRecs []string
	raw := 0
	for i := range n {
		id := fmt.Sprintf("CVE-2024-%05d", i+1)
		if i < n-1 { // the last one only has a record
			feedRecs = append(feedRecs, record(id, "2024-02-01T00:00:00.000", "x"))
		}
		var refs []string
		for j := range 100 {
			refs = append(refs, fmt.Sprintf(`{"url":"https://example.com/advisories/%d/%d/%s","tags":["vendor-advisory"]}`, i, j, prose(uint64(j), 60)))
		}
		rec := fmt.Sprintf(`{"dataType":"CVE_RECORD","dataVersion":"5.1","cveMetadata":{"cveId":"%s","state":"PUBLISHED","assignerShortName":"acme",`+
			`"datePublished":"2024-01-01T00:00:00.000Z","dateUpdated":"2024-03-01T00:00:00.000Z"},"containers":{"cna":{"providerMetadata":{"shortName":"acme"},`+
			`"descriptions":[{"lang":"en","value":"%s"}],"references":[%s],`+
			`"affected":[{"vendor":"acme","product":"widget","defaultStatus":"unaffected","versions":[{"version":"1.0","lessThan":"1.%d","status":"affected","versionType":"semver"}]}]}}}`,
			id, prose(uint64(i), size), strings.Join(refs, ","), i)
		raw += len(rec)
		recs = append(recs, rec)
	}
	feedPath := mustWrite(t, filepath.Join(dir, "feed.json"), feed(feedRecs...))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	io.WriteString(zw, "["+strings.Join(recs, ",")+"]")
	zw.Close()
	recPath := filepath.Join(dir, "records.json.gz")
	if err := os.WriteFile(recPath, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	recs, feedRecs = nil, nil
	cves, err := ReadFeeds([]string{feedPath})
	if err != nil {
		t.Fatal(err)
	}
	slices.SortFunc(cves, func(a, b index.CVE) int { return strings.Compare(a.Name, b.Name) })
	before := liveHeap()
	got, _, err := readCVE5Files([]string{recPath}, keptOfCVE5(cves))
	if err != nil {
		t.Fatal(err)
	}
	grew := liveHeap() - before
	runtime.KeepAlive(got)
	if len(got) != n {
		t.Fatalf("%d records, want %d", len(got), n)
	}
	t.Logf("%d records, %d MB as read: the live heap grew by %.1f MB", n, raw>>20, float64(grew)/(1<<20))
	if grew > int64(raw)/10 {
		t.Errorf("the live heap grew by %d bytes for %d bytes of records: they are held whole", grew, raw)
	}
	for _, r := range got {
		if len(r.Affected) != 1 || *r.Affected[0].Product != "widget" || r.Updated != "2024-03-01 00:00:00Z" {
			t.Fatalf("%s: affected %v, updated %q: not what the build takes", r.ID, r.Affected, r.Updated)
		}
		if whole := r.ID == fmt.Sprintf("CVE-2024-%05d", n); whole != (len(r.Description) >= size) {
			t.Errorf("%s: description of %d bytes; only the CVE without an NVD record keeps it", r.ID, len(r.Description))
		}
	}
}

// TestNVDFileIsPackOfRecordsAsRead: however a build holds NVD's records
// while it reads (compressed), nvd.zst is, byte for byte, the records as
// the feed holds them (read here with the standard library) packed by
// index.PackNVD with the snapshot's encoder.
func TestNVDFileIsPackOfRecordsAsRead(t *testing.T) {
	dir := t.TempDir()
	feedPath := sharedPath(t, "nvd/nvdcve-2.0-sample.json.gz")
	out := filepath.Join(dir, "snap")
	if _, err := Build(BuildOptions{CWECatalog: sharedPath(t, "cwe/cwec_v4.15.xml.zip"),
		Feeds: []string{feedPath, sharedPath(t, "cve5/cvelistV5-sample.json.gz")}, Out: out, Time: buildTime}); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(out, fileNVD))
	if err != nil {
		t.Fatal(err)
	}
	doc := realFeed(t)
	_, nvd, _, err := readFeeds([]string{feedPath}, nil)
	if err != nil {
		t.Fatal(err)
	}
	asRead := rawRecords(t, doc)
	var recs []index.NVDRecord
	for _, facts := range nvd.facts {
		recs = append(recs, index.NVDRecord{Raw: []byte(asRead[facts.ID]), Facts: facts})
	}
	enc, err := newSnapshotEncoder()
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	p, err := index.PackNVD(recs, enc)
	if err != nil {
		t.Fatal(err)
	}
	if want := bytes.Join(p.Frames, nil); !bytes.Equal(got, want) {
		t.Errorf("nvd.zst: %d bytes, not the %d bytes of the records as read packed", len(got), len(want))
	}
}

// TestMergeCVE5InPlace: records of NVD's CVEs are merged into the CVEs
// as they are, not into a copy of them all (with room for as many more
// as there are records: twice the CVEs' memory while a build reads); a
// CVE only a record gives still takes its place by name.
func TestMergeCVE5InPlace(t *testing.T) {
	cves := []index.CVE{{Name: "CVE-2024-0001"}, {Name: "CVE-2024-0003"}}
	ssvc := &index.SSVC{}
	recs := []*CVE5Record{{ID: "CVE-2024-0001", SSVC: ssvc}, {ID: "CVE-2024-0003", Affected: []index.AffectedEntry{{Source: "cna"}}}}
	out, only := mergeCVE5(cves, recs)
	if only != 0 || len(out) != 2 || &out[0] != &cves[0] || out[0].SSVC != ssvc || len(out[1].Affected) != 1 {
		t.Errorf("merged into a copy (%v) or wrongly: only %d, %+v", &out[0] != &cves[0], only, out)
	}
	recs = append(recs[:1], &CVE5Record{ID: "CVE-2024-0002", Published: "2024-01-01 00:00:00Z"}, recs[1], &CVE5Record{ID: "CVE-2024-0004"})
	out, only = mergeCVE5(cves, recs)
	var names []string
	for _, c := range out {
		names = append(names, c.Name)
	}
	if want := "CVE-2024-0001 CVE-2024-0002 CVE-2024-0003 CVE-2024-0004"; only != 2 || strings.Join(names, " ") != want || out[1].CreatedAt != "2024-01-01 00:00:00Z" || out[0].SSVC != ssvc {
		t.Errorf("only %d, CVEs %v: want 2, %s with the records' fields", only, names, want)
	}
}
