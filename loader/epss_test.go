package loader

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/google/go-cmp/cmp"
)

// realEPSS is FIRST's file, its first rows, as shipped in the shared data
// directory, relative to this package's directory.
const realEPSS = "../../shared/data/epss/epss-sample.csv"

// realEPSSPath returns the absolute path of the real EPSS rows and fails
// the test when they are missing.
func realEPSSPath(tb testing.TB) string {
	tb.Helper()
	path, err := filepath.Abs(realEPSS)
	if err != nil {
		tb.Fatalf("resolving %s: %v", realEPSS, err)
	}
	if _, err := os.Stat(path); err != nil {
		tb.Fatalf("the real EPSS rows are required at %s (resolved from %s): %v", path, realEPSS, err)
	}
	return path
}

// epssRows lists e's rows as "CVE score percentile" strings, in e's order.
func epssRows(e *EPSS) []string {
	var out []string
	for name, s := range e.All() {
		out = append(out, name+" "+s.Score.String()+" "+s.Percentile.String())
	}
	return out
}

// TestReadEPSSReal reads the real rows, plain and gzip'd (found by
// content whatever the name), with expectations written by hand from the
// file.
func TestReadEPSSReal(t *testing.T) {
	path := realEPSSPath(t)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	wantRows := []string{
		"CVE-1999-0095 0.16317 0.96858",
		"CVE-2023-1234 0.00707 0.5157",
		"CVE-2023-1235 0.0042 0.3382",
		"CVE-2023-1236 0.00459 0.37329",
		"CVE-2023-1237 0.0044 0.35796",
		"CVE-2023-20116 0.00604 0.46813",
		"CVE-2023-20242 0.00486 0.39415",
		"CVE-2023-20261 0.00529 0.42473",
		"CVE-2023-20266 0.00488 0.39594",
		"CVE-2023-22466 0.00569 0.44924",
	}
	for _, tc := range []struct {
		name string
		path string
	}{
		{"plain", path},
		{"gzip", writeInputFile(t, "epss_scores-2026-09-29.csv.gz", inputGzip(t, raw))},
		{"gzip named csv", writeInputFile(t, "epss_scores-2026-09-29.csv", inputGzip(t, raw))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, fi, err := readEPSS(tc.path)
			if err != nil {
				t.Fatalf("readEPSS(%s): %v", tc.path, err)
			}
			if e.Model != "v2026.06.15" {
				t.Errorf("Model = %q, want v2026.06.15", e.Model)
			}
			if want := time.Date(2026, 9, 29, 12, 0, 22, 0, time.UTC); !e.Date.Equal(want) {
				t.Errorf("Date = %v, want %v", e.Date, want)
			}
			if e.Len() != 10 {
				t.Errorf("Len() = %d, want 10", e.Len())
			}
			if diff := cmp.Diff(wantRows, epssRows(e)); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
			if fi.Name != filepath.Base(tc.path) || fi.Records != 10 || len(fi.SHA256) != 64 {
				t.Errorf("FileInfo = %+v, want the file's name, 10 records and a SHA-256", fi)
			}
			if tc.name == "plain" && fi.Size != 380 {
				t.Errorf("Size = %d, want 380", fi.Size)
			}
			for _, l := range []struct {
				name       string
				score, pct EPSSValue
				ok         bool
			}{
				{"CVE-1999-0095", 163170, 968580, true},
				{"CVE-2023-20116", 6040, 468130, true},
				{"cve-2023-1235", 4200, 338200, true}, // any case, like the API's names
				{"CVE-2023-22466", 5690, 449240, true},
				{"CVE-2023-1238", 0, 0, false},
				{"CVE-2023-01234", 0, 0, false}, // not CVE-2023-1234
				{"CVE-2023-123", 0, 0, false},
				{"", 0, 0, false},
			} {
				s, ok := e.Lookup(l.name)
				if ok != l.ok || s != (EPSSScore{l.score, l.pct}) {
					t.Errorf("Lookup(%q) = %v, %v; want {%d %d}, %v", l.name, s, ok, l.score, l.pct, l.ok)
				}
			}
		})
	}
}

// epssFile is a small valid file; the cases below break it one way each.
const epssFile = "#model_version:v2026.06.15,score_date:2026-09-29T12:00:22Z\n" +
	"cve,epss,percentile\n" +
	"CVE-2023-1234,0.00707,0.5157\n" +
	"CVE-2023-9999,0.5,0.9\n" +
	"CVE-2023-10000,1.0,1\n"

// TestReadEPSSForms reads the same rows written in every form FIRST's
// file may take: line ends, a last newline or none, gzip, a byte order
// mark, rows in any order, other fields on the first line.
func TestReadEPSSForms(t *testing.T) {
	want := []string{ // by id as a string: 10000 before 9999
		"CVE-2023-10000 1 1",
		"CVE-2023-1234 0.00707 0.5157",
		"CVE-2023-9999 0.5 0.9",
	}
	crlf := strings.ReplaceAll(epssFile, "\n", "\r\n")
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"lf", []byte(epssFile)},
		{"lf, no last newline", []byte(strings.TrimSuffix(epssFile, "\n"))},
		{"crlf", []byte(crlf)},
		{"crlf, no last newline", []byte(strings.TrimSuffix(crlf, "\r\n"))},
		{"gzip", inputGzip(t, []byte(epssFile))},
		{"gzip crlf", inputGzip(t, []byte(crlf))},
		{"byte order mark", []byte("\ufeff" + epssFile)},
		{"sorted", []byte(strings.Replace(epssFile, "CVE-2023-1234,0.00707,0.5157\nCVE-2023-9999,0.5,0.9\nCVE-2023-10000,1.0,1\n",
			"CVE-2023-10000,1.0,1\nCVE-2023-1234,0.00707,0.5157\nCVE-2023-9999,0.5,0.9\n", 1))},
		{"more fields", []byte(strings.Replace(epssFile, "#model_version", "#publisher:FIRST,model_version", 1))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeInputFile(t, "epss_scores-2026-09-29.csv.gz", tc.data)
			e, err := ReadEPSS(path)
			if err != nil {
				t.Fatalf("ReadEPSS: %v", err)
			}
			if diff := cmp.Diff(want, epssRows(e)); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
			if e.Model != "v2026.06.15" || !e.Date.Equal(time.Date(2026, 9, 29, 12, 0, 22, 0, time.UTC)) {
				t.Errorf("Model, Date = %q, %v", e.Model, e.Date)
			}
		})
	}
	t.Run("2022 offset", func(t *testing.T) {
		data := strings.Replace(epssFile, "2026-09-29T12:00:22Z", "2022-05-03T00:00:00+0000", 1)
		e, err := ReadEPSS(writeInputFile(t, "epss.csv", []byte(data)))
		if err != nil {
			t.Fatalf("ReadEPSS: %v", err)
		}
		if !e.Date.Equal(time.Date(2022, 5, 3, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("Date = %v", e.Date)
		}
	})
}

// TestReadEPSSErrors gives a file broken in each way its own one-line
// error naming the file and the line.
func TestReadEPSSErrors(t *testing.T) {
	const (
		comment = "#model_version:v2026.06.15,score_date:2026-09-29T12:00:22Z\n"
		header  = "cve,epss,percentile\n"
		rows    = "CVE-2023-1234,0.00707,0.5157\nCVE-2023-1235,0.0042,0.3382\n"
		first   = `, want "#model_version:…,score_date:…" first`
	)
	for _, tc := range []struct {
		name, data, want string
	}{
		{"empty file", "", `line 1: empty file, want "#model_version:…,score_date:…"`},
		{"no first line", header + rows, `line 1: got "cve,epss,percentile"` + first},
		{"no score_date", "#model_version:v2026.06.15\n" + header + rows,
			`line 1: no score_date in "#model_version:v2026.06.15"` + first},
		{"no model_version", "#score_date:2026-09-29T12:00:22Z\n" + header + rows,
			`line 1: no model_version in "#score_date:2026-09-29T12:00:22Z"` + first},
		{"garbled first line", "#model_version v2026.06.15;score_date 2026-09-29\n" + header + rows,
			`line 1: field "model_version v2026.06.15;score_date 2026-09-29" is not key:value` + first},
		{"date not RFC 3339", "#model_version:v1,score_date:2026-09-29\n" + header + rows,
			`line 1: score_date "2026-09-29" is not an RFC 3339 time`},
		{"date out of range", "#model_version:v1,score_date:2026-02-30T00:00:00Z\n" + header + rows,
			`line 1: score_date "2026-02-30T00:00:00Z" is not an RFC 3339 time`},
		{"empty model", "#model_version:,score_date:2026-09-29T12:00:22Z\n" + header + rows,
			`line 1: model_version "" is not 1 to 64 printable characters`},
		{"model twice", "#model_version:a,model_version:b,score_date:2026-09-29T12:00:22Z\n" + header + rows,
			`line 1: model_version given twice`},
		{"no header", comment, `line 2: no header, want "cve,epss,percentile"`},
		{"wrong header", comment + "cve,epss\n" + rows, `line 2: header "cve,epss", want "cve,epss,percentile"`},
		{"header in capitals", comment + "CVE,EPSS,PERCENTILE\n" + rows,
			`line 2: header "CVE,EPSS,PERCENTILE", want "cve,epss,percentile"`},
		{"no rows", comment + header, `line 3: no rows after the header`},
		{"two columns", comment + header + "CVE-2023-1234,0.00707\n", `line 3: 2 columns, want 3 (cve,epss,percentile)`},
		{"four columns", comment + header + rows + "CVE-2023-1236,0.1,0.2,0.3\n", `line 5: 4 columns, want 3 (cve,epss,percentile)`},
		{"empty line", comment + header + "CVE-2023-1234,0.00707,0.5157\n\nCVE-2023-1235,0.0042,0.3382\n",
			`line 4: empty line, want cve,epss,percentile`},
		{"trailing empty line", comment + header + rows + "\n", `line 5: empty line, want cve,epss,percentile`},
		{"lower-case id", comment + header + "cve-2023-1234,0.1,0.2\n", `line 3: cve "cve-2023-1234" is not CVE-<year>-<number>`},
		{"short number", comment + header + "CVE-2023-123,0.1,0.2\n", `line 3: cve "CVE-2023-123" is not CVE-<year>-<number>`},
		{"two-digit year", comment + header + "CVE-23-12345,0.1,0.2\n", `line 3: cve "CVE-23-12345" is not CVE-<year>-<number>`},
		{"ten-digit number", comment + header + "CVE-2023-1234567890,0.1,0.2\n", `line 3: cve "CVE-2023-1234567890" is not CVE-<year>-<number>`},
		{"space in id", comment + header + "CVE-2023-1234 ,0.1,0.2\n", `line 3: cve "CVE-2023-1234 " is not CVE-<year>-<number>`},
		{"percentile above 1", comment + header + rows + "CVE-2023-1236,0.5,1.3\n", `line 5: percentile "1.3" not in [0,1]`},
		{"score above 1", comment + header + "CVE-2023-1236,1.0000001,0.5\n", `line 3: epss "1.0000001" not in [0,1]`},
		{"negative score", comment + header + "CVE-2023-1236,-0.1,0.5\n", `line 3: epss "-0.1" not in [0,1]`},
		{"score with exponent above 1", comment + header + "CVE-2023-1236,2e0,0.5\n", `line 3: epss "2e0" not in [0,1]`},
		{"empty score", comment + header + "CVE-2023-1236,,0.5\n", `line 3: epss "" is not a number`},
		{"word", comment + header + "CVE-2023-1236,high,0.5\n", `line 3: epss "high" is not a number`},
		{"NaN", comment + header + "CVE-2023-1236,NaN,0.5\n", `line 3: epss "NaN" is not a number`},
		{"inf exponent", comment + header + "CVE-2023-1236,1e999,0.5\n", `line 3: epss "1e999" not in [0,1]`},
		{"hex", comment + header + "CVE-2023-1236,0x1p-2,0.5\n", `line 3: epss "0x1p-2" is not a number`},
		{"quoted", comment + header + "CVE-2023-1236,\"0.5\",0.5\n", `line 3: epss "\"0.5\"" is not a number`},
		{"two points", comment + header + "CVE-2023-1236,0.5.1,0.5\n", `line 3: epss "0.5.1" is not a number`},
		{"duplicate, next line", comment + header + rows + "CVE-2023-1235,0.1,0.2\n",
			`line 5: duplicate CVE-2023-1235 (also on line 4)`},
		{"bad id", comment + header + "CVE-2023-5,0.1,0.2\n", `line 3: cve "CVE-2023-5" is not CVE-<year>-<number>`},
		{"duplicate, unsorted", comment + header + "CVE-2023-5555,0.1,0.2\n" + rows + "CVE-2023-1235,0.1,0.2\nCVE-2023-1234,0.1,0.2\n",
			`line 6: duplicate CVE-2023-1235 (also on line 5)`},
		{"first duplicate of several", comment + header + "CVE-2023-9999,0.1,0.2\nCVE-2023-1111,0.1,0.2\n" + rows +
			"CVE-2023-1111,0.1,0.2\nCVE-2023-1235,0.1,0.2\nCVE-2023-9999,0.1,0.2\n",
			`line 7: duplicate CVE-2023-1111 (also on line 4)`},
		{"adjacent duplicate after unsorted", comment + header + "CVE-2023-9999,0.1,0.2\nCVE-2023-1111,0.1,0.2\nCVE-2023-9999,0.1,0.2\nCVE-2023-5555,0.1,0.2\nCVE-2023-5555,0.1,0.2\n",
			`line 5: duplicate CVE-2023-9999 (also on line 3)`},
		{"long line", comment + header + "CVE-2023-1234,0." + strings.Repeat("1", 5000) + ",0.5\n", `line 3: longer than 4096 bytes`},
		{"long field", comment + header + "CVE-2023-1234,0." + strings.Repeat("x", 100) + ",0.5\n",
			`line 3: epss "0.` + strings.Repeat("x", 62) + `"… is not a number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeInputFile(t, "epss_scores-2026-09-29.csv", []byte(tc.data))
			e, err := ReadEPSS(path)
			want := "loader: epss " + path + ": " + tc.want
			if err == nil || err.Error() != want {
				t.Errorf("ReadEPSS() = %v, %v\nwant error %s", e, err, want)
			}
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q spans lines", err)
			}
		})
	}

	t.Run("truncated gzip", func(t *testing.T) {
		var b strings.Builder
		b.WriteString(comment + header)
		for i := range 20000 {
			fmt.Fprintf(&b, "CVE-2023-%d,0.00%d,0.%d\n", 10000+i, i%10, i%100)
		}
		gz := inputGzip(t, []byte(b.String()))
		path := writeInputFile(t, "epss_scores-2026-09-29.csv.gz", gz[:len(gz)/2])
		_, err := ReadEPSS(path)
		prefix := "loader: epss " + path + ": line "
		if err == nil || !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), ": read: ") {
			t.Errorf("error = %v, want %s N: read: ...", err, prefix)
		}
	})
	t.Run("missing file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "epss.csv.gz")
		_, err := ReadEPSS(path)
		if err == nil || !strings.HasPrefix(err.Error(), "loader: open "+path+": ") {
			t.Errorf("error = %v, want loader: open %s: ...", err, path)
		}
	})
}

// TestParseEPSSValue pins how a score or percentile is read into
// millionths.
func TestParseEPSSValue(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want EPSSValue
		err  error
	}{
		{"0", 0, nil},
		{"1", 1_000_000, nil},
		{"1.0", 1_000_000, nil},
		{"1.000000000", 1_000_000, nil},
		{"0.16317", 163_170, nil},
		{"0.5157", 515_700, nil},
		{".5", 500_000, nil},
		{"1.", 1_000_000, nil},
		{"0.000970000", 970, nil}, // FIRST's files of 2022: nine decimals
		{"4e-05", 40, nil},        // Python's repr of a small float
		{"1E-1", 100_000, nil},
		{"0.000001", 1, nil},
		{"0.0000005", 1, nil}, // half up
		{"0.00000049999", 0, nil},
		{"0.9999995", 1_000_000, nil},
		{"-0", 0, nil},
		{"+0.5", 500_000, nil},
		{"00.25", 250_000, nil},
		{"1.0000001", 0, errEPSSRange},
		{"1.5", 0, errEPSSRange},
		{"10", 0, errEPSSRange},
		{"99999999999999999999999", 0, errEPSSRange},
		{"-0.000001", 0, errEPSSRange},
		{"", 0, errEPSSNotNumber},
		{".", 0, errEPSSNotNumber},
		{"-", 0, errEPSSNotNumber},
		{"0,5", 0, errEPSSNotNumber},
		{" 0.5", 0, errEPSSNotNumber},
		{"inf", 0, errEPSSNotNumber},
		{"e", 0, errEPSSNotNumber},
		{"1e", 0, errEPSSNotNumber},
	} {
		got, err := parseEPSSValue([]byte(tc.in))
		if got != tc.want || err != tc.err {
			t.Errorf("parseEPSSValue(%q) = %d, %v; want %d, %v", tc.in, got, err, tc.want, tc.err)
		}
	}
}

// TestEPSSValueAppendDecimal pins the decimal form: FIRST's, no trailing
// zeros.
func TestEPSSValueAppendDecimal(t *testing.T) {
	for v, want := range map[EPSSValue]string{
		0: "0", 1: "0.000001", 40: "0.00004", 163_170: "0.16317", 515_700: "0.5157",
		100_000: "0.1", 999_999: "0.999999", 1_000_000: "1",
	} {
		if got := string(v.AppendDecimal([]byte("x"))); got != "x"+want {
			t.Errorf("%d.AppendDecimal = %q, want %q", v, got, "x"+want)
		}
		if got := v.Float64(); math.Abs(got-float64(v)/1e6) > 0 {
			t.Errorf("%d.Float64() = %v", v, got)
		}
	}
}

// TestEPSSKeyOrder checks that packed ids sort as the ids do as strings
// and unpack to the same id.
func TestEPSSKeyOrder(t *testing.T) {
	names := []string{
		"CVE-1999-0001", "CVE-1999-0095", "CVE-2014-0001", "CVE-2023-0001", "CVE-2023-1000", "CVE-2023-10000",
		"CVE-2023-100000", "CVE-2023-1234", "CVE-2023-12345", "CVE-2023-123456789", "CVE-2023-1235",
		"CVE-2023-20116", "CVE-2023-9999", "CVE-2023-99999", "CVE-2024-0000", "CVE-9999-999999999",
	}
	if !slices.IsSorted(names) {
		t.Fatal("names not sorted as strings")
	}
	var keys []uint64
	for _, n := range names {
		k, ok := epssKey(n, false)
		if !ok {
			t.Fatalf("epssKey(%q) failed", n)
		}
		if got := string(appendEPSSName(nil, k)); got != n {
			t.Errorf("appendEPSSName(epssKey(%q)) = %q", n, got)
		}
		keys = append(keys, k)
	}
	if !slices.IsSorted(keys) {
		t.Errorf("keys not in the ids' order: %v", keys)
	}
	for _, bad := range []string{"CVE-2023-123", "CVE-2023-1234567890", "CVE-2023_1234", "CVE-20231-1234", "CVE-2023-12a4",
		"CVX-2023-1234", "cve-2023-1234", "CVE-2023-"} {
		if _, ok := epssKey(bad, false); ok {
			t.Errorf("epssKey(%q) accepted", bad)
		}
	}
	if _, ok := epssKey("Cve-2023-1234", true); !ok {
		t.Errorf("epssKey(Cve-2023-1234, anyCase) refused")
	}
}

// TestEPSSChanged pins the alert rule at its boundary, on values as read
// from a file.
func TestEPSSChanged(t *testing.T) {
	v := func(s string) EPSSValue {
		t.Helper()
		x, err := parseEPSSValue([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	// Why fixed point: in float64 this move is less than 0.1.
	if a, b := 0.3, 0.2; a-b >= 0.1 {
		t.Fatal("float64 arithmetic changed")
	}
	for _, tc := range []struct {
		before, after string // "" for no row
		want          bool
	}{
		{"0", "0.0999", false},
		{"0", "0.1", true},
		{"0.0999", "0", false},
		{"0.1", "0", true},
		{"0.2", "0.3", true},
		{"0.3", "0.2", true},
		{"0.2", "0.299999", false},
		{"0.900001", "0.8", true},
		{"0.00043", "0.09943", false},
		{"0.00043", "0.10043", true},
		{"0.5", "0.5", false},
		{"0.05", "0.96", true},
		{"", "0.0999", false}, // a first score
		{"", "0.1", true},
		{"0.0999", "", false}, // no longer scored
		{"0.1", "", true},
		{"", "", false},
	} {
		b, a := EPSSValue(0), EPSSValue(0)
		if tc.before != "" {
			b = v(tc.before)
		}
		if tc.after != "" {
			a = v(tc.after)
		}
		if got := EPSSChanged(b, a); got != tc.want {
			t.Errorf("EPSSChanged(%q, %q) = %v, want %v", tc.before, tc.after, got, tc.want)
		}
	}
}

// TestEPSSChanges walks two days' files side by side.
func TestEPSSChanges(t *testing.T) {
	read := func(rows string) *EPSS {
		t.Helper()
		e, err := ReadEPSS(writeInputFile(t, "epss.csv", []byte("#model_version:v1,score_date:2026-09-29T00:00:00Z\ncve,epss,percentile\n"+rows)))
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	prev := read("CVE-2023-0001,0.2,0.9\nCVE-2023-0002,0.5,0.95\nCVE-2023-0003,0.15,0.8\nCVE-2023-0004,0.01,0.3\nCVE-2023-10000,0.3,0.9\n")
	cur := read("CVE-2023-0001,0.3,0.9\nCVE-2023-0002,0.4001,0.9\nCVE-2023-0004,0.01,0.1\nCVE-2023-0005,0.12,0.8\nCVE-2023-0006,0.0999,0.7\nCVE-2023-10000,0.1,0.9\n")
	var got []string
	for name, s := range EPSSChanges(prev, cur) {
		got = append(got, fmt.Sprintf("%s %s->%s", name, s[0].Score, s[1].Score))
	}
	want := []string{
		"CVE-2023-0001 0.2->0.3",  // up by 0.1
		"CVE-2023-0003 0.15->0",   // no longer scored
		"CVE-2023-0005 0->0.12",   // first score
		"CVE-2023-10000 0.3->0.1", // down, and last by id
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("EPSSChanges (-want +got):\n%s", diff)
	}
	n := 0
	for range EPSSChanges(prev, cur) {
		n++
		break
	}
	if n != 1 {
		t.Errorf("stopping early yielded %d", n)
	}
}

// TestEPSSLookupAllocs checks that a lookup allocates nothing.
func TestEPSSLookupAllocs(t *testing.T) {
	e, err := ReadEPSS(realEPSSPath(t))
	if err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() {
		if _, ok := e.Lookup("CVE-2023-20116"); !ok {
			t.Fatal("not found")
		}
	}); n != 0 {
		t.Errorf("Lookup allocates %v times", n)
	}
}

// TestEPSSRowSize pins the table's cost: 16 bytes a CVE, about 5 MB for
// the 300,000 CVEs FIRST scores.
func TestEPSSRowSize(t *testing.T) {
	if n := unsafe.Sizeof(epssRow{}); n != 16 {
		t.Errorf("an EPSS row takes %d bytes, want 16", n)
	}
	e, err := decodeEPSS(bytes.NewReader(syntheticEPSS(10_000)), "epss test")
	if err != nil {
		t.Fatal(err)
	}
	if len(e.rows) != 10_000 || cap(e.rows) != 10_000 {
		t.Errorf("rows: len %d, cap %d; want 10000 both", len(e.rows), cap(e.rows))
	}
}
