package loader

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/vulnd/vulnd/index"
	"github.com/vulnd/vulnd/loader/loadertest"
)

// TestReadCVE5PartOfNVDCVEAllocs: of the record of a CVE of NVD, a build
// decodes only what it keeps and checks: its descriptions and references
// (most of a record's bytes) are skipped unread, not decoded to be
// dropped. Records with 2000 references each allocate a small part of
// their size to read.
func TestReadCVE5PartOfNVDCVEAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	var refs []string
	for i := range 2000 {
		refs = append(refs, fmt.Sprintf(`{"url":"https://example.com/advisories/%d","tags":["vendor-advisory","x_refsource_CONFIRM"]}`, i))
	}
	var files []cve5ZipFile
	var cves []index.CVE
	size := 0
	for i := range 20 {
		id := fmt.Sprintf("CVE-2024-%05d", i+1)
		rec := strings.Replace(cve5JSON(id, "2024-02-01T00:00:00.000Z", "d"), `"references":[]`, `"references":[`+strings.Join(refs, ",")+`]`, 1)
		files = append(files, cve5ZipFile{name: id + ".json", data: []byte(rec)})
		cves = append(cves, index.CVE{Name: id})
		size += len(rec)
	}
	path := mustWrite(t, filepath.Join(t.TempDir(), "cves.zip"), string(cve5Zip(t, files...)))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	read := func() []*CVE5Record {
		recs, _, err := readCVE5Files([]string{path}, keptOfCVE5(cves))
		if err != nil {
			t.Fatal(err)
		}
		return recs
	}
	if recs := read(); len(recs) != len(files) || len(recs[0].Affected) != 1 || recs[0].References != nil {
		t.Fatalf("read %d records, the first %+v", len(recs), recs[0])
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	read()
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("records of %d bytes: %d bytes allocated to read them", size, alloc)
	if alloc > uint64(size)/4 {
		t.Errorf("reading records of %d bytes allocated %d bytes: their references are decoded", size, alloc)
	}
}

// TestReadCVE5PartSameAsKept: what a build keeps of the record of a CVE
// of NVD, decoded only in part, is what it keeps of the record decoded
// whole (the real records of the samples, one file each in a zip
// archive, as cvelistV5's bundle has them); a record that fails whole
// fails with the same error.
func TestReadCVE5PartSameAsKept(t *testing.T) {
	var raws []json.RawMessage
	for _, name := range []string{"cvelistV5-sample.json.gz", "vulnrichment-sample.json.gz"} {
		var recs []json.RawMessage
		if err := json.Unmarshal(loadertest.Gunzip(t, cve5Sample(t, name)), &recs); err != nil {
			t.Fatal(err)
		}
		raws = append(raws, recs...)
	}
	var files []cve5ZipFile
	var cves []index.CVE
	for i, raw := range raws {
		var head struct {
			Metadata struct {
				ID string `json:"cveId"`
			} `json:"cveMetadata"`
		}
		if err := json.Unmarshal(raw, &head); err != nil {
			t.Fatal(err)
		}
		files = append(files, cve5ZipFile{name: fmt.Sprintf("%d.json", i), data: raw})
		if i%3 != 0 { // a third are CVEs only a record gives
			cves = append(cves, index.CVE{Name: head.Metadata.ID})
		}
	}
	sort.Slice(cves, func(i, j int) bool { return cves[i].Name < cves[j].Name })
	dir := t.TempDir()
	path := mustWrite(t, filepath.Join(dir, "cves.zip"), string(cve5Zip(t, files...)))
	got, _, err := readCVE5Files([]string{path}, keptOfCVE5(cves))
	if err != nil {
		t.Fatal(err)
	}
	whole, _, err := ReadCVE5Files([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	want := make([]*CVE5Record, len(whole))
	for i, r := range whole {
		want[i] = r
		if _, ok := findCVE(cves, r.ID); ok {
			want[i] = keptPart(r)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d records kept, want %d", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("%s: kept\n%+v\nwant\n%+v", want[i].ID, got[i], want[i])
		}
	}

	// Bad records of a CVE of NVD: the error of the whole record.
	good := cve5JSON("CVE-2024-0001", "2024-02-01T00:00:00.000Z", "d")
	nvd := []index.CVE{{Name: "CVE-2024-0001"}}
	for _, bad := range []string{
		strings.Replace(good, `"state":"PUBLISHED"`, `"state":"RESERVED"`, 1),
		strings.Replace(good, `"dateUpdated":"2024-02-01T00:00:00.000Z"`, `"dateUpdated":"yesterday"`, 1),
		strings.Replace(good, `"status":"affected"`, `"x":1`, 1),
		strings.Replace(good, `"cna":{`, `"cna":{"problemTypes":[{"descriptions":[{"cweId":"CWE-x"}]}],`, 1),
		strings.Replace(good, `"cna":{`, `"cna":{"metrics":[{"cvssV3_1":{"vectorString":"CVSS:3.1/AV:N"}}],`, 1),
		strings.Replace(good, `"cna":{`, `"cna":{"references":[{"url":"a"}],"metrics":[{"cvssV4_0":{"baseScore":11}}],`, 1),
		strings.Replace(good, `"containers":{"cna"`, `"containers":{"adp":[{"affected":[{"versions":[{"version":"1"}]}]}],"cna"`, 1),
	} {
		p := mustWrite(t, filepath.Join(dir, "bad.zip"), string(cve5Zip(t, cve5ZipFile{name: "CVE-2024-0001.json", data: []byte(bad)})))
		_, _, errPart := readCVE5Files([]string{p}, keptOfCVE5(nvd))
		_, _, errWhole := readCVE5Files([]string{p}, nil)
		if errWhole == nil || fmt.Sprint(errPart) != fmt.Sprint(errWhole) {
			t.Errorf("%s:\nin part: %v\nwhole: %v", bad, errPart, errWhole)
		}
	}
}

// findCVE is where name is or would be in cves, by name ascending.
func findCVE(cves []index.CVE, name string) (int, bool) {
	for i := range cves {
		if cves[i].Name >= name {
			return i, cves[i].Name == name
		}
	}
	return len(cves), false
}

// TestReadCVE5PartArraysUsedAgainAllocs: the arrays that the part of a record
// is decoded into (its containers' affected entries, metrics, problem
// types) are used again from record to record, not allocated anew for
// each to be dropped once its part is kept: reading records of 40
// affected entries allocates less than twice the entries kept (the array
// decoded into, grown 4, 8, 16, 32, 64 as append grows it, was twice that
// again).
func TestReadCVE5PartArraysUsedAgainAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	entries := strings.Repeat(`{"vendor":"V","product":"P"},`, 39) + `{"vendor":"V","product":"P"}`
	var files []cve5ZipFile
	var cves []index.CVE
	for i := range 200 {
		id := fmt.Sprintf("CVE-2024-%05d", i+1)
		rec := strings.Replace(cve5JSON(id, "2024-02-01T00:00:00.000Z", "d"), `"affected":[{"vendor":"V","product":"P","versions":[{"version":"1.0","status":"affected"}]}]`, `"affected":[`+entries+`]`, 1)
		files = append(files, cve5ZipFile{name: id + ".json", data: []byte(rec)})
		cves = append(cves, index.CVE{Name: id})
	}
	path := mustWrite(t, filepath.Join(t.TempDir(), "cves.zip"), string(cve5Zip(t, files...)))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	read := func() {
		recs, _, err := readCVE5Files([]string{path}, keptOfCVE5(cves))
		if err != nil || len(recs) != len(files) || len(recs[0].Affected) != 40 {
			t.Fatalf("%d records, %v", len(recs), err)
		}
	}
	read()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	read()
	runtime.ReadMemStats(&after)
	per := (after.TotalAlloc - before.TotalAlloc) / uint64(len(files))
	kept := 40 * uint64(unsafe.Sizeof(index.AffectedEntry{}))
	t.Logf("%d bytes allocated a record, %d of them its entries", per, kept)
	if per > 5*kept {
		t.Errorf("%d bytes allocated a record whose entries are %d bytes", per, kept)
	}
}

// TestMergeCVE5Sorted: records merged by a stable sort are what MergeCVE5
// makes of them in the order read, by ID: two of one CVE, the later
// Modified wins, the one read later on a tie.
func TestMergeCVE5Sorted(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2024, 1, d, 0, 0, 0, 0, time.UTC) }
	for seed := range int64(50) {
		rng := rand.New(rand.NewSource(seed))
		var recs []*CVE5Record
		for i := range rng.Intn(300) {
			recs = append(recs, &CVE5Record{ID: fmt.Sprintf("CVE-2024-%04d", rng.Intn(60)), Modified: day(1 + rng.Intn(3)), Description: fmt.Sprint(i)})
		}
		byID := map[string]*CVE5Record{}
		for _, r := range recs {
			MergeCVE5(byID, r)
		}
		var want []*CVE5Record
		for _, r := range byID {
			want = append(want, r)
		}
		sort.Slice(want, func(i, j int) bool { return want[i].ID < want[j].ID })
		if got := mergeCVE5Sorted(slices.Clone(recs)); !reflect.DeepEqual(got, want) && len(want) > 0 {
			t.Fatalf("seed %d: merged %d records, want %d", seed, len(got), len(want))
		}
	}
}
