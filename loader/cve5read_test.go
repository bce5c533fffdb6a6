package loader

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/klauspost/compress/zip"

	"github.com/vulnd/vulnd/loader/loadertest"
)

// TestReadCVE5ZipOnEveryCore: the files of a zip archive are decoded on
// several goroutines at once (two files are seen being decoded at the
// same time with GOMAXPROCS 2), and their records still come in archive
// order, a nested archive's in its place.
func TestReadCVE5ZipOnEveryCore(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	var inside, most, calls atomic.Int32
	cve5EntryHook = func() {
		if calls.Add(1) > 20 {
			return
		}
		n := inside.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		// Wait a little for another goroutine to start its file.
		for deadline := time.Now().Add(50 * time.Millisecond); most.Load() < 2 && time.Now().Before(deadline); {
			runtime.Gosched()
		}
		inside.Add(-1)
	}
	defer func() { cve5EntryHook = nil }()
	var files, inner []cve5ZipFile
	var want []string
	for i := range 8 {
		id := fmt.Sprintf("CVE-2024-%04d", 1000-i) // not in name order
		inner = append(inner, cve5ZipFile{name: id + ".json", data: []byte(cve5JSON(id, "2024-02-01T00:00:00.000Z", "inner"))})
	}
	for i := range 1200 {
		if i == 700 {
			files = append(files, cve5ZipFile{name: "inner.zip", data: cve5Zip(t, inner...)})
			for _, f := range inner {
				want = append(want, strings.TrimSuffix(f.name, ".json"))
			}
		}
		id := fmt.Sprintf("CVE-2023-%05d", 20000-i)
		files = append(files, cve5ZipFile{name: id + ".json", data: []byte(cve5JSON(id, "2024-02-01T00:00:00.000Z", "d"))})
		want = append(want, id)
	}
	path := filepath.Join(t.TempDir(), "cves.zip")
	mustWrite(t, path, string(cve5Zip(t, files...)))
	var got []string
	if err := ReadCVE5(path, func(r *CVE5Record) error { got = append(got, r.ID); return nil }); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("records in the order %v..., want archive order %v...", got[:10], want[:10])
	}
	if most.Load() < 2 {
		t.Errorf("at most %d files decoded at once with GOMAXPROCS 2", most.Load())
	}
}

// TestReadCVE5ZipFirstErrorInArchiveOrder: however the files are shared
// out, the error is the first bad file's in archive order, nothing after
// it is emitted, and of two records of one CVE with the same date the
// one later in the archive wins.
func TestReadCVE5ZipFirstErrorInArchiveOrder(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	var files []cve5ZipFile
	for i := range 1100 {
		id := fmt.Sprintf("CVE-2023-%05d", i+1)
		data := cve5JSON(id, "2024-02-01T00:00:00.000Z", fmt.Sprint("file ", i))
		switch i {
		case 400:
			data = strings.Replace(cve5JSON("CVE-2023-00001", "2024-02-01T00:00:00.000Z", "again"), `"1.0"`, `"2.0"`, 1)
		case 900, 1000:
			data = strings.Replace(data, `"status":"affected"`, `"x":1`, 1)
		}
		files = append(files, cve5ZipFile{name: fmt.Sprintf("f%04d.json", i), data: []byte(data)})
	}
	path := filepath.Join(t.TempDir(), "cves.zip")
	mustWrite(t, path, string(cve5Zip(t, files...)))
	n := 0
	err := ReadCVE5(path, func(*CVE5Record) error { n++; return nil })
	if want := "loader: cve5 " + path + ":f0900.json: record 1 (CVE-2023-00901): cna affected 1: version 1: no status"; err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
	if n != 900 {
		t.Errorf("%d records emitted before the error, want 900", n)
	}
	files = files[:900]
	mustWrite(t, path, string(cve5Zip(t, files...)))
	recs, _, err := ReadCVE5Files([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 899 || recs[0].ID != "CVE-2023-00001" || recs[0].Description != "again" {
		t.Errorf("%d records, the first %s %q: want 899, the later of CVE-2023-00001's two", len(recs), recs[0].ID, recs[0].Description)
	}
}

// TestReadCVE5FilesHoldsRepeatedStringsOnce: the strings that records'
// affected entries repeat are held once: two records of one vendor and
// product point to the same vendor and product, and their versions and
// statuses share their bytes.
func TestReadCVE5FilesHoldsRepeatedStringsOnce(t *testing.T) {
	dir := t.TempDir()
	var recs []string
	for i := range 3 {
		recs = append(recs, strings.Replace(cve5JSON(fmt.Sprintf("CVE-2024-%04d", i+1), "2024-02-01T00:00:00.000Z", "d"),
			`"versions":[`, `"defaultStatus":"unaffected","versions":[{"version":"0","lessThan":"1.2.3","status":"affected","versionType":"semver"},`, 1))
	}
	path := mustWrite(t, filepath.Join(dir, "records.json"), "["+strings.Join(recs, ",")+"]")
	got, _, err := ReadCVE5Files([]string{path})
	if err != nil {
		t.Fatal(err)
	}
	a, b := got[0].Affected[0], got[2].Affected[0]
	same := func(x, y string) bool { return unsafe.StringData(x) == unsafe.StringData(y) }
	switch {
	case a.Vendor != b.Vendor || a.Product != b.Product || a.DefaultStatus != b.DefaultStatus || a.Versions[0].LessThan != b.Versions[0].LessThan:
		t.Errorf("vendor, product, default status or lessThan held twice: %p %p, %p %p, %p %p, %p %p", a.Vendor, b.Vendor, a.Product, b.Product,
			a.DefaultStatus, b.DefaultStatus, a.Versions[0].LessThan, b.Versions[0].LessThan)
	case !same(a.Versions[1].Version, b.Versions[1].Version) || !same(a.Versions[0].Status, b.Versions[1].Status) || !same(a.Versions[0].VersionType, b.Versions[0].VersionType):
		t.Errorf("a version, status or version type held twice")
	case *a.Vendor != "V" || *a.DefaultStatus != "unaffected" || a.Versions[1].Version != "1.0" || a.Versions[0].Status != "affected":
		t.Errorf("entry %+v: not the record's", a)
	}
}

// TestDecodeCVE5RecordOnceAllocs: a record file is decoded into a record in
// one pass, not first as a JSON value (a copy of the record) and then
// into the record: a record with 256 KB of fields vulnd does not read
// allocates a small part of that to decode.
func TestDecodeCVE5RecordOnceAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	var refs []string
	for i := range 2000 {
		refs = append(refs, fmt.Sprintf(`{"url":"https://example.com/%0100d","name":"advisory %d"}`, i, i))
	}
	rec := strings.Replace(cve5JSON("CVE-2024-0001", "2024-02-01T00:00:00.000Z", "d"), `"cna":{`, `"cna":{"x_generator":[`+strings.Join(refs, ",")+`],`, 1)
	decode := func() {
		if _, err := decodeCVE5Stream(strings.NewReader(rec), "f.json", true, func(*CVE5Record) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	// One P: sync.Pool keeps a buffer per P, and a goroutine moved to
	// another P between two decodes would find none there and count a
	// new one (a flaky 95 KB a decode under load).
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	decode()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const runs = 20
	for range runs {
		decode()
	}
	runtime.ReadMemStats(&after)
	per := (after.TotalAlloc - before.TotalAlloc) / runs
	t.Logf("a record of %d bytes: %d bytes allocated to decode it", len(rec), per)
	if per > uint64(len(rec))/4 {
		t.Errorf("decoding a record of %d bytes allocated %d bytes: it is copied whole", len(rec), per)
	}
}

// FuzzDecodeCVE5Whole: a JSON text decoded whole and straight into a
// record (decodeCVE5Stream) gives what decoding it first as JSON values
// gives (decodeCVE5Text): the same records, the same skip, the same
// error.
func FuzzDecodeCVE5Whole(f *testing.F) {
	good := cve5JSON("CVE-2024-0001", "2024-02-01T00:00:00Z", "a")
	for _, s := range []string{good, " " + good + "\n", good + good, good + "x", "[" + good + "]", "{}", `{"dataType":"CVE_RECORD"}`,
		strings.Replace(good, `"status":"affected"`, `"x":1`, 1), strings.Replace(good, `"cna":{`, `"cna":{"x":[1,{"a":tru}],`, 1),
		strings.Replace(good, `"cna":{`, `"cna":{"x":"\u00e9\ud800",`, 1), good[:len(good)-3]} {
		f.Add([]byte(s))
	}
	for _, name := range []string{"cvelistV5-sample.json.gz", "vulnrichment-sample.json.gz"} {
		var recs []json.RawMessage
		if err := json.Unmarshal(loadertest.Gunzip(f, cve5Sample(f, name)), &recs); err != nil {
			f.Fatal(err)
		}
		for i := 0; i < len(recs); i += 7 {
			f.Add([]byte(recs[i]))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, skip := range []bool{false, true} {
			var a, b []*CVE5Record
			sa, errA := decodeCVE5Stream(bytes.NewReader(data), "f.json", skip, func(r *CVE5Record) error { a = append(a, r); return nil })
			sb, errB := decodeCVE5Text(bytes.NewReader(data), "f.json", skip, func(r *CVE5Record) error { b = append(b, r); return nil })
			if sa != sb || fmt.Sprint(errA) != fmt.Sprint(errB) || !reflect.DeepEqual(a, b) {
				t.Fatalf("skip %v: whole: %v %v %d records; as values: %v %v %d records", skip, sa, errA, len(a), sb, errB, len(b))
			}
			// Failing to read midway.
			r := func() io.Reader { return io.MultiReader(bytes.NewReader(data[:len(data)/2]), errReader{}) }
			sa, errA = decodeCVE5Stream(r(), "f.json", skip, func(*CVE5Record) error { return nil })
			sb, errB = decodeCVE5Text(r(), "f.json", skip, func(*CVE5Record) error { return nil })
			if sa != sb || fmt.Sprint(errA) != fmt.Sprint(errB) {
				t.Fatalf("skip %v, cut: whole: %v %v; as values: %v %v", skip, sa, errA, sb, errB)
			}
		}
	})
}

// TestReadCVE5ZipInflateAllocs: the files of a zip archive are
// decompressed by decompressors used again with their buffers: reading
// a small record of a deflated file allocates less than 4 KiB (each
// decompressor read through a new 4 KiB buffer: 400 MB of garbage for
// 100k records).
func TestReadCVE5ZipInflateAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	var files []cve5ZipFile
	for i := range 1000 {
		id := fmt.Sprintf("CVE-2024-%05d", i+1)
		files = append(files, cve5ZipFile{name: id + ".json", data: []byte(cve5JSON(id, "2024-02-01T00:00:00.000Z", "d"))})
	}
	path := filepath.Join(t.TempDir(), "cves.zip")
	mustWrite(t, path, string(cve5Zip(t, files...)))
	read := func() {
		if err := ReadCVE5(path, func(*CVE5Record) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	read()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	read()
	runtime.ReadMemStats(&after)
	per := (after.TotalAlloc - before.TotalAlloc) / uint64(len(files))
	t.Logf("%d bytes allocated a record", per)
	if per >= 4<<10 {
		t.Errorf("%d bytes allocated a record of %d bytes", per, len(files[0].data))
	}
}

// countingReaderAt counts the reads of a reader at.
type countingReaderAt struct {
	ra    io.ReaderAt
	reads atomic.Int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	c.reads.Add(1)
	return c.ra.ReadAt(p, off)
}

// TestReadCVE5ZipReadsAhead: the small files of a zip archive (cvelistV5's
// bundle has a record a file) are read from it a window at a time, not
// each with reads of its own (a system call each for its header and its
// data): 2000 records of 0.8 MB in all take a few reads of the archive,
// and come out as they went in.
func TestReadCVE5ZipReadsAhead(t *testing.T) {
	var files []cve5ZipFile
	for i := range 2000 {
		id := fmt.Sprintf("CVE-2024-%05d", i+1)
		files = append(files, cve5ZipFile{name: id + ".json", data: []byte(cve5JSON(id, "2024-02-01T00:00:00.000Z", fmt.Sprintf("d%d", i)))})
	}
	data := cve5Zip(t, files...)
	c := &countingReaderAt{ra: bytes.NewReader(data)}
	n := 0
	err := readCVE5Zip(c, int64(len(data)), "cves.zip", 0, nil, func(r *CVE5Record) error {
		if want := fmt.Sprintf("d%d", n); r.Description != want {
			t.Fatalf("record %d: description %q, want %q", n+1, r.Description, want)
		}
		n++
		return nil
	})
	if err != nil || n != len(files) {
		t.Fatalf("%d records, %v", n, err)
	}
	t.Logf("%d records, %d bytes: %d reads", n, len(data), c.reads.Load())
	if c.reads.Load() > 20 {
		t.Errorf("%d records of %d bytes in all took %d reads", n, len(data), c.reads.Load())
	}
}

// TestReadCVE5ZipHash: the size and SHA-256 that ReadCVE5Files gives of
// a zip archive, which it hashes as it reads it ahead, are the file's,
// whether the archive fits in one window or takes many, holds a zip
// archive (stored, read in place; or deflated, read from a copy), or
// other files; and the read ahead hashed the archive's files, leaving
// little to hash afterwards.
func TestReadCVE5ZipHash(t *testing.T) {
	record := func(i int) cve5ZipFile {
		id := fmt.Sprintf("CVE-2024-%05d", i+1)
		return cve5ZipFile{name: id + ".json", data: []byte(cve5JSON(id, "2024-02-01T00:00:00.000Z", fmt.Sprintf("d%d", i))), stored: i%3 == 0}
	}
	var small, large []cve5ZipFile
	for i := range 10 {
		small = append(small, record(i))
	}
	for i := range 6000 { // about 2 MB stored: several windows
		large = append(large, record(i))
	}
	inner := cve5Zip(t, small...)
	for _, tt := range []struct {
		name  string
		files []cve5ZipFile
	}{
		{"small", small},
		{"large", large},
		{"large with others", append([]cve5ZipFile{{name: "README.md", data: []byte("# cves\n")}}, append(large, cve5ZipFile{name: "delta.json", data: []byte(`{"new":[]}`)})...)},
		{"stored zip inside", append(slices.Clone(large[:3000]), cve5ZipFile{name: "inner.zip", data: inner, stored: true}, large[3000])},
		{"deflated zip inside", append(slices.Clone(large[:3000]), cve5ZipFile{name: "inner.zip", data: inner}, large[3000])},
	} {
		t.Run(tt.name, func(t *testing.T) {
			data := cve5Zip(t, tt.files...)
			path := filepath.Join(t.TempDir(), "cves.zip")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, infos, err := ReadCVE5Files([]string{path})
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(data)
			if got, want := infos[0], (FileInfo{Name: "cves.zip", Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}); !reflect.DeepEqual(got, want) {
				t.Errorf("%+v, want %+v", got, want)
			}
			// What the read ahead hashed: up to the central directory.
			f, err := os.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			ra := newReadAhead(f, int64(len(data)))
			ra.hash = sha256.New()
			if err := readCVE5Zip(ra, int64(len(data)), path, 0, nil, func(*CVE5Record) error { return nil }); err != nil {
				t.Fatal(err)
			}
			zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
			if err != nil {
				t.Fatal(err)
			}
			last := zr.File[len(zr.File)-1]
			off, err := last.DataOffset()
			if err != nil {
				t.Fatal(err)
			}
			if end := off + int64(last.CompressedSize64); ra.hashed < end {
				t.Errorf("hashed %d bytes of %d as read ahead, want at least its files' %d", ra.hashed, len(data), end)
			}
		})
	}
}
