package loader

// cve5from.txt.zst (format 11): where the CVE JSON 5 record each CVE
// took came from, a line per CVE of the snapshot in name order (that of
// details.txt.zst): "-" for a CVE no record gave anything, else the
// winning record's input (its index in the manifest's inputs, decimal)
// and its dateUpdated (else datePublished) at full precision, RFC 3339
// in UTC, or "-" for a record with neither: "3 2024-07-20T10:15:12.293Z";
// then " p" when an entry of the record may take its product key from
// its packageName (see keyByPackageName), which the details do not keep.
// A load reads none of it (it checks its sums); a build with -previous
// reads it to carry what the records gave (see carryRecords) and, when a
// record file is replaced (the CVE Program's hourly delta), to decide
// each CVE's winning record without reading the files that did not
// change, as mergeCVE5Sorted decides it: the later dateUpdated, on a tie
// the record read later.

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/vulnd/vulnd/index"
)

const (
	keyCVE5From  = "cve5from"
	fileCVE5From = "cve5from.txt.zst"
)

// cve5FromVersion is the first format with cve5from.txt.zst.
const cve5FromVersion = 11

// recordFrom is where a CVE's winning record came from; In 0: none (the
// CWE catalog is input 0, never a record file). A build holds one for
// every CVE from the records' merge through the write: 16 bytes, not the
// 40 of a time.Time and a flag beside the input (16 MB at 400k CVEs), so
// the date is held as seconds since year 1 and its nanoseconds, any date
// a record or a line can hold as it was read.
type recordFrom struct {
	In int32
	// nsec is the date's nanoseconds (below 1e9, so below 1<<30), with
	// fromByPackage set when an entry may take its product key from its
	// packageName (see keyByPackageName).
	nsec uint32
	// sec is the date's seconds since 0001-01-01T00:00:00Z: 0 (with no
	// nanoseconds) is the zero time, a record without a date.
	sec int64
}

const (
	fromNanos     = 1<<30 - 1
	fromByPackage = 1 << 31
	// year1Unix is the Unix time of 0001-01-01T00:00:00Z, the zero
	// time.Time.
	year1Unix = -62135596800
)

// newRecordFrom is where a record of input in, dated modified (zero:
// without a date), came from.
func newRecordFrom(in int32, modified time.Time, byPackage bool) recordFrom {
	f := recordFrom{In: in, nsec: uint32(modified.Nanosecond()), sec: modified.Unix() - year1Unix}
	if byPackage {
		f.nsec |= fromByPackage
	}
	return f
}

// Modified is the record's dateUpdated (else datePublished) at full
// precision, in UTC; zero when it has neither.
func (f recordFrom) Modified() time.Time {
	if f.sec == 0 && f.nsec&fromNanos == 0 {
		return time.Time{}
	}
	return time.Unix(f.sec+year1Unix, int64(f.nsec&fromNanos)).UTC()
}

// ByPackage reports whether an entry of the record may take its product
// key from its packageName (see keyByPackageName).
func (f recordFrom) ByPackage() bool { return f.nsec&fromByPackage != 0 }

// appendLine appends f's line of cve5from.txt.zst.
func (f recordFrom) appendLine(dst []byte) []byte {
	if f.In == 0 {
		return append(dst, '-')
	}
	dst = strconv.AppendInt(dst, int64(f.In), 10)
	if m := f.Modified(); m.IsZero() {
		dst = append(dst, " -"...)
	} else {
		dst = m.AppendFormat(append(dst, ' '), time.RFC3339Nano)
	}
	if f.ByPackage() {
		dst = append(dst, " p"...)
	}
	return dst
}

// parseRecordFrom parses a line of cve5from.txt.zst of a snapshot built
// from inputs inputs.
func parseRecordFrom(line []byte, inputs int) (recordFrom, error) {
	if string(line) == "-" {
		return recordFrom{}, nil
	}
	in, date, ok := bytes.Cut(line, []byte{' '})
	if !ok {
		return recordFrom{}, fmt.Errorf("%q is neither \"-\" nor an input and a date", line)
	}
	at, err := parseInput(in, inputs, "a CVE input")
	if err != nil {
		return recordFrom{}, err
	}
	byPackage := false
	if d, ok := bytes.CutSuffix(date, []byte(" p")); ok {
		date, byPackage = d, true
	}
	if string(date) == "-" {
		return newRecordFrom(at, time.Time{}, byPackage), nil
	}
	modified, err := time.Parse(time.RFC3339Nano, string(date))
	if err != nil || len(date) == 0 || date[len(date)-1] != 'Z' {
		return recordFrom{}, fmt.Errorf("bad date %q", date)
	}
	if !bytes.Equal(modified.AppendFormat(nil, time.RFC3339Nano), date) {
		return recordFrom{}, fmt.Errorf("date %q is not as written", date)
	}
	f := newRecordFrom(at, modified, byPackage)
	return f, nil
}

// readRecordFrom reads the cve5from.txt.zst of the snapshot in dir
// (manifest m of format 11 on) of cves CVEs.
func readRecordFrom(dir string, m Manifest, cves int, dec *zstd.Decoder) ([]recordFrom, error) {
	fi := m.Files[keyCVE5From]
	if fi.Records != cves {
		return nil, fmt.Errorf("%s: %d records for %d CVEs", fileCVE5From, fi.Records, cves)
	}
	out := make([]recordFrom, cves)
	if err := eachRecord(dir, fi, dec, func(n int, line []byte) error {
		f, err := parseRecordFrom(line, len(m.Inputs))
		if err != nil {
			return fmt.Errorf("record %d: %w", n+1, err)
		}
		out[n] = f
		return nil
	}); err != nil {
		return nil, fmt.Errorf("%s: %w", fileCVE5From, err)
	}
	return out, nil
}

// recordsOut is what a build writes of the CVE JSON 5 records beside
// the CVEs: the alias file's SHA-256 (the manifest's "aliases"; "" when
// the build read no record) and, by CVE in name order, where each CVE's
// record came from (cve5from.txt.zst; nil: from none).
type recordsOut struct {
	aliasSum string
	from     []recordFrom
	// texts is the previous snapshot's text table, when CVEs' texts are
	// taken from it by id (see textscarry.go); nil otherwise.
	texts *prevTexts
}

// recordFromsOf is where the record of each CVE of cves (by name, the
// records merged in) came from: recs, by name, the winning records, each
// read from the file Input of the record files, which are the inputs
// pos of the manifest.
func recordFromsOf(cves []index.CVE, recs []*CVE5Record, pos []int) []recordFrom {
	out := make([]recordFrom, len(cves))
	j := 0
	for i := range cves {
		for j < len(recs) && recs[j].ID < cves[i].Name {
			j++
		}
		if j < len(recs) && recs[j].ID == cves[i].Name {
			r := recs[j]
			out[i] = newRecordFrom(int32(pos[r.Input]), r.Modified, r.ByPackage || slices.ContainsFunc(r.Affected, keyByPackageName))
		}
	}
	return out
}

// recordStampsOf are the stamps the refresh guard takes of the records
// of cves (see refreshStamps): each record's dateUpdated (else
// datePublished), as a record's Updated gives it.
func recordStampsOf(cves []index.CVE, from []recordFrom) []Stamp {
	var out []Stamp
	for i := range cves {
		if f := from[i]; f.In != 0 && !f.Modified().IsZero() {
			out = append(out, Stamp{Name: cves[i].Name, UpdatedAt: formatTime(f.Modified())})
		}
	}
	return out
}

// newestFrom is the newest dateUpdated (else datePublished) of the
// records from says the CVEs took, as newestRecord gives it of them.
func newestFrom(from []recordFrom) *string {
	var newest time.Time
	for _, f := range from {
		if f.In != 0 && f.Modified().After(newest) {
			newest = f.Modified()
		}
	}
	if newest.IsZero() {
		return nil
	}
	s := formatTime(newest)
	return &s
}
