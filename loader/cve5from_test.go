package loader

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/klauspost/compress/zstd"
)

// TestRecordFromLines: a build with records says in cve5from.txt.zst, a
// line per CVE in name order, which input its winning record came from
// and its dateUpdated at full precision ("-" for a CVE no record gave
// anything, a date "-" for a record without dates, " p" after it when
// an entry may take its product from its packageName), which Validate
// reads.
func TestRecordFromLines(t *testing.T) {
	r := newRecordsRefresh(t)
	// A record of CVE-2099-0002 later in a file given after extra.json
	// wins; an older one of CVE-2099-0001 does not; one of a CVE of NVD
	// has no dates.
	recs, _, err := ReadCVE5Files(r.records)
	if err != nil {
		t.Fatal(err)
	}
	undated := "" // a CVE of NVD no record file has
	for _, id := range slices.Sorted(maps.Keys(r.nvd)) {
		if !slices.ContainsFunc(recs, func(rec *CVE5Record) bool { return rec.ID == id }) {
			undated = id
			break
		}
	}
	later := writeAs(t, []byte("["+strings.Replace(cve5JSON(undated, "x", "none"), `"datePublished":"2024-01-01T00:00:00.000Z","dateUpdated":"x"`, `"datePublished":"","dateUpdated":""`, 1)+
		","+cve5JSON("CVE-2099-0002", "2024-07-21T00:00:00.123456789Z", "later")+","+cve5JSON("CVE-2099-0001", "2024-07-19T00:00:00.000Z", "older")+"]"),
		filepath.Join(r.dir, "later"), "later.json")
	opt := r.opts(t, "day1", feedDoc())
	opt.Feeds = append(opt.Feeds, later)
	buildLogged(t, opt)
	m, err := Validate(opt.Out)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	s, err := Read(opt.Out)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	if err := eachRecord(opt.Out, m.Files[keyCVE5From], dec, func(n int, line []byte) error {
		lines = append(lines, s.Data.CVEs[n].Name+" "+string(line))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// The inputs: the catalog, cvelist, the yearly feed, the modified
	// feed, vulnrichment, extra, later.
	for _, want := range []string{"CVE-2099-0001 5 2024-07-20T00:00:00Z p", "CVE-2099-0002 6 2024-07-21T00:00:00.123456789Z", undated + " 6 -"} {
		if !slices.Contains(lines, want) {
			t.Errorf("no line %q in %q", want, lines[len(lines)-3:])
		}
	}
	if len(lines) != m.Counts.CVEs || !slices.ContainsFunc(lines, func(l string) bool { return strings.HasSuffix(l, " -") && !strings.HasPrefix(l, undated+" ") }) {
		t.Errorf("%d lines for %d CVEs, or no CVE without a record", len(lines), m.Counts.CVEs)
	}
	if !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, " 1 2") }) || !slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, " 4 2") }) {
		t.Errorf("no record from cvelist or vulnrichment: %q", lines[:5])
	}
}

func TestParseRecordFrom(t *testing.T) {
	for line, want := range map[string]struct {
		in        int32
		modified  time.Time
		byPackage bool
	}{
		"-":                                  {},
		"3 -":                                {in: 3},
		"2 2024-07-20T10:15:12Z":             {in: 2, modified: time.Date(2024, 7, 20, 10, 15, 12, 0, time.UTC)},
		"4 2024-07-20T10:15:12.2Z":           {in: 4, modified: time.Date(2024, 7, 20, 10, 15, 12, 2e8, time.UTC)},
		"4 2024-07-20T10:15:12Z p":           {in: 4, modified: time.Date(2024, 7, 20, 10, 15, 12, 0, time.UTC), byPackage: true},
		"1 - p":                              {in: 1, byPackage: true},
		"2 0001-01-01T00:00:00.000000001Z p": {in: 2, modified: time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC), byPackage: true},
		"3 9999-12-31T23:59:59.999999999Z":   {in: 3, modified: time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)},
		"3 1969-12-31T23:59:59.5Z p":         {in: 3, modified: time.Date(1969, 12, 31, 23, 59, 59, 5e8, time.UTC), byPackage: true},
		"3 2262-04-11T23:47:16.854775808Z":   {in: 3, modified: time.Date(2262, 4, 11, 23, 47, 16, 854775808, time.UTC)},
		"3 1677-09-21T00:12:43.145224191Z":   {in: 3, modified: time.Date(1677, 9, 21, 0, 12, 43, 145224191, time.UTC)},
	} {
		got, err := parseRecordFrom([]byte(line), 5)
		if err != nil || got.In != want.in || !got.Modified().Equal(want.modified) || got.Modified().IsZero() != want.modified.IsZero() || got.ByPackage() != want.byPackage {
			t.Errorf("%q: %v %v %v, %v; want %+v", line, got.In, got.Modified(), got.ByPackage(), err, want)
		}
		if back := string(got.appendLine(nil)); back != line {
			t.Errorf("%q written back as %q", line, back)
		}
		if made := newRecordFrom(want.in, want.modified, want.byPackage); made != got {
			t.Errorf("%q: newRecordFrom gives %+v, parseRecordFrom %+v", line, made, got)
		}
	}
	for _, line := range []string{"", "c", "0 -", "5 -", "03 -", "-1 -", "2", "2 2024-07-20", "2 2024-07-20T10:15:12+02:00", "2 2024-07-20T10:15:12.200Z", "2 -  ", "2 - p p", "2 p", "2 - P"} {
		if f, err := parseRecordFrom([]byte(line), 5); err == nil {
			t.Errorf("%q: %+v, want an error", line, f)
		}
	}
}

// TestRecordFromSize: a build holds a recordFrom for every CVE from the
// records' merge through the write (400k at NVD's scale): 16 bytes each,
// not the 40 of an input, a time.Time and a flag (16 MB at 400k).
func TestRecordFromSize(t *testing.T) {
	if n := unsafe.Sizeof(recordFrom{}); n > 16 {
		t.Errorf("a recordFrom takes %d bytes, want at most 16", n)
	}
}

// FuzzRecordFrom: parseRecordFrom never panics, and what it accepts it
// writes back as read.
func FuzzRecordFrom(f *testing.F) {
	for _, s := range []string{"-", "3 -", "2 2024-07-20T10:15:12.293Z", "1 1999-01-01T00:00:00Z", "9 x"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		got, err := parseRecordFrom(line, 10)
		if err != nil {
			return
		}
		if back := got.appendLine(nil); string(back) != string(line) {
			t.Errorf("%q written back as %q", line, back)
		}
	})
}
