package loader

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"github.com/vulnd/vulnd/index"
)

// FuzzDecodeCVE5 feeds the record reader arbitrary bytes, as a file of
// its own and as a file inside a zip archive: it must never panic, fail
// with one line naming the file, and yield only records with a valid id
// and state, whose entries the status algorithm can read. Seeds are
// written records and the real records of ../shared/data/cve5.
func FuzzDecodeCVE5(f *testing.F) {
	good := cve5JSON("CVE-2024-0001", "2024-02-01T00:00:00Z", "a")
	for _, s := range []string{good, "[" + good + "," + good + "]", "[]", "{}", `{"dataType":"CVE_RECORD"}`, "[1]", `{"a":[`} {
		f.Add([]byte(s))
	}
	for _, name := range []string{"cvelistV5-sample.json.gz", "vulnrichment-sample.json.gz"} {
		recs := sampleCVE5(f, name)
		for i := 0; i < len(recs); i += 10 {
			f.Add([]byte(recs[i]))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, skip := range []bool{false, true} {
			n := 0
			_, err := decodeCVE5Stream(bytes.NewReader(data), "f.json", skip, func(r *CVE5Record) error {
				n++
				if !cveIDPattern.MatchString(r.ID) || (r.State != "PUBLISHED" && r.State != "REJECTED") {
					t.Fatalf("record %+v", r)
				}
				for i := range r.Affected {
					r.Affected[i].StatusAt("1.0")
					r.Affected[i].StatusAt(string(data[:min(len(data), 12)]))
				}
				_ = r.CVE()
				return nil
			})
			if err != nil && (!strings.HasPrefix(err.Error(), "loader: cve5 f.json: ") || strings.Contains(err.Error(), "\n")) {
				t.Fatalf("error %q", err)
			}
		}
		// The same bytes as a stream that fails to read midway.
		_, _ = decodeCVE5Stream(io.MultiReader(bytes.NewReader(data[:len(data)/2]), errReader{}), "f.json", false, func(*CVE5Record) error { return nil })
	})
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }

// FuzzParseAliases checks that the alias parser never panics, fails with
// one line naming the file, and maps what a valid line says.
func FuzzParseAliases(f *testing.F) {
	f.Add(defaultAliasesText)
	for _, s := range []string{"a/b c/d # r", "*/b c/d", "a/b c/d\na/b e/f", "a b", "#", "\n\n", "/ /", "a/b/c d/e/f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		a, err := ParseAliases("f", strings.NewReader(text))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "loader: aliases f") || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q", err)
			}
			return
		}
		for from, to := range a.m {
			if from.Vendor == "" || from.Product == "" || to.Vendor == "" || to.Product == "" {
				t.Fatalf("mapping %v -> %v", from, to)
			}
			if from.Vendor != "*" && NormalizeName(from.Vendor) != from.Vendor || NormalizeName(from.Product) != from.Product {
				t.Fatalf("left side %v not normalised", from)
			}
			if k, ok := a.Lookup(from.Vendor, from.Product); !ok || k != to {
				t.Fatalf("Lookup(%v) = %v, %v; want %v", from, k, ok, to)
			}
		}
	})
}

// FuzzEntryKeys checks that keys are never empty, never "*" or "-", and
// that names give normalised keys.
func FuzzEntryKeys(f *testing.F) {
	f.Add("Linux", "Linux", "", "cpe:2.3:o:linux:linux_kernel:*:*:*:*:*:*:*:*")
	f.Add("n/a", "PostgreSQL", "", "")
	f.Add("V", "", "pkg", "cpe:/a:v%2f:p")
	aliases, err := DefaultAliases()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, vendor, product, pkg, cpe string) {
		e := index.AffectedEntry{Vendor: &vendor, Product: &product, PackageName: &pkg}
		if cpe != "" {
			e.CPEs = []string{cpe, cpe}
		}
		for _, a := range []*Aliases{nil, aliases} {
			keys := EntryKeys(&e, a)
			if len(keys) > 1 {
				t.Fatalf("keys %v for one CPE", keys)
			}
			for _, k := range keys {
				for _, s := range []string{k.Vendor, k.Product} {
					if s == "" || s == "*" || s == "-" {
						t.Fatalf("key %v", k)
					}
				}
			}
		}
	})
}

// FuzzCVE5Metadata checks the quick paths of mapCVE5Metadata against
// what they stand for: isCVEID against cveIDPattern, and cve5Time's
// served form against formatTime of parseCVE5Time (the same error, or
// the same time and text).
func FuzzCVE5Metadata(f *testing.F) {
	for _, s := range []string{"CVE-2024-1234", "CVE-2024-123456789", "CVE-2024-1234567890", "CVE-2024-123", "cve-2024-1234",
		"CVE-20241-1234", "CVE-2024-12a4", "CVE-2024-1234\n", "2024-06-07T10:15:12.293Z", "2024-06-07T10:15:12Z",
		"2024-06-07T10:15:12", "2024-06-07T10:15:12.293", "2024-06-07T10:15:12+02:00", "2024-06-07T10:15:12,5Z",
		"2024-06-07T10:15:12.Z", "2024-02-30T10:15:12Z", "2024-06-07T24:00:00Z", "2024-06-07t10:15:12z", "0000-01-01T00:00:00.000000000Z"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := isCVEID(s), cveIDPattern.MatchString(s); got != want {
			t.Errorf("isCVEID(%q) = %v, cveIDPattern says %v", s, got, want)
		}
		tm, served, err := cve5Time(s)
		wantT, wantErr := parseCVE5Time(s)
		if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
			t.Fatalf("cve5Time(%q): error %v, parseCVE5Time's %v", s, err, wantErr)
		}
		if err == nil && (!tm.Equal(wantT) || tm.Location() != wantT.Location() || served != formatTime(wantT)) {
			t.Errorf("cve5Time(%q) = %v %q, want %v %q", s, tm, served, wantT, formatTime(wantT))
		}
	})
}
