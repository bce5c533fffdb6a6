package loader

import (
	"bufio"
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/vulnd/vulnd/index"
)

// This file reads FIRST's daily EPSS file (https://www.first.org/epss/data_stats):
//
//	#model_version:v2026.06.15,score_date:2026-09-29T12:00:22Z
//	cve,epss,percentile
//	CVE-1999-0095,0.16317,0.96858
//	...
//
// into a compact table: one 16-byte row per CVE (its id packed into an
// integer, the score and the percentile in millionths), sorted by CVE id,
// about 5 MB for the 300,000 CVEs FIRST scores.

// EPSS is one day of FIRST's Exploit Prediction Scoring System scores, as
// ReadEPSS reads them: the model, the score date and a score and
// percentile per CVE. An EPSS is never changed once read and is safe for
// concurrent use.
type EPSS struct {
	// Model is the file's model_version, e.g. "v2026.06.15".
	Model string
	// Date is the file's score_date, with the offset it was written in
	// (FIRST writes UTC).
	Date time.Time
	// rows are the CVEs' scores, by CVE id as a string (the order of
	// FIRST's file), each id once.
	rows []epssRow
}

// epssRow is one CVE's scores. key is epssKey of its id.
type epssRow struct {
	key        uint64
	score, pct EPSSValue
}

// EPSSValue is an EPSS probability or percentile in [0,1], stored in
// millionths (EPSSScale): FIRST publishes five decimals, so a value is
// kept exactly (more decimals are rounded half up to six) and compares
// exactly, without float rounding.
type EPSSValue uint32

// EPSSScale is the EPSSValue of 1.
const EPSSScale EPSSValue = 1_000_000

// Float64 returns v as a number in [0,1].
func (v EPSSValue) Float64() float64 { return float64(v) / float64(EPSSScale) }

// AppendDecimal appends v in decimal with no trailing zeros, the way
// FIRST writes it: "0.16317", "0.5157", "0", "1".
func (v EPSSValue) AppendDecimal(dst []byte) []byte {
	return index.AppendMillionths(dst, uint32(v))
}

// String returns v as AppendDecimal writes it.
func (v EPSSValue) String() string { return string(v.AppendDecimal(nil)) }

// EPSSScore is one CVE's row of an EPSS file.
type EPSSScore struct {
	// Score is the probability of exploitation activity in the next 30
	// days.
	Score EPSSValue
	// Percentile is the share of scored CVEs whose score is the same or
	// lower.
	Percentile EPSSValue
}

// Len returns the number of CVEs the file scores.
func (e *EPSS) Len() int { return len(e.rows) }

// Lookup returns the scores of the CVE named name ("CVE-2023-1234", the
// prefix in any letter case), and false when the file has no row for it
// or name is not a CVE id. It does not allocate.
func (e *EPSS) Lookup(name string) (EPSSScore, bool) {
	key, ok := epssKey(name, true)
	if !ok {
		return EPSSScore{}, false
	}
	i, found := slices.BinarySearchFunc(e.rows, key, func(r epssRow, k uint64) int {
		switch {
		case r.key < k:
			return -1
		case r.key > k:
			return 1
		}
		return 0
	})
	if !found {
		return EPSSScore{}, false
	}
	return EPSSScore{Score: e.rows[i].score, Percentile: e.rows[i].pct}, true
}

// All yields every CVE id with its scores, by id as a string (the order
// of FIRST's file). Each id is a new string.
func (e *EPSS) All() iter.Seq2[string, EPSSScore] {
	return func(yield func(string, EPSSScore) bool) {
		var buf [32]byte
		for _, r := range e.rows {
			if !yield(string(appendEPSSName(buf[:0], r.key)), EPSSScore{Score: r.score, Percentile: r.pct}) {
				return
			}
		}
	}
}

// EPSSAlertDelta is how far a CVE's EPSS score must move between two
// builds for an "EPSS changed" alert: 0.1, in millionths.
const EPSSAlertDelta EPSSValue = 100_000

// EPSSChanged reports whether a CVE whose EPSS score was before in the
// previous build and is after in this one gets an "EPSS changed" alert:
// when the score moved by EPSSAlertDelta (0.1) or more, up or down. The
// rule is applied to the stored millionths, so that 0.2 -> 0.3 alerts
// (although 0.3-0.2 is 0.09999999999999998 in float64) and 0.0999 -> 0
// does not. Scores drift a little every day for most CVEs: anything
// smaller than 0.1 is noise to whoever triages the alerts, and a move of
// 0.1 is what a new exploit or campaign does.
//
// A CVE with no row counts as scoring 0 (pass 0): a first score (a new
// CVE, or one FIRST starts to score) alerts only when it is 0.1 or more,
// and a score that disappears (FIRST drops rejected CVEs) only when it
// was 0.1 or more; a CVE in neither build never alerts. Percentiles play
// no part: they move for every CVE whenever other CVEs' scores move.
//
// The rule compares two EPSS files. A caller should not apply it when the
// previous build had no EPSS file at all (the first build given -epss):
// every scored CVE would "appear" at once.
func EPSSChanged(before, after EPSSValue) bool {
	if after >= before {
		return after-before >= EPSSAlertDelta
	}
	return before-after >= EPSSAlertDelta
}

// EPSSChanges yields the id of every CVE that gets an "EPSS changed"
// alert (EPSSChanged) between prev and cur, by id as a string, with its
// scores in each (the zero EPSSScore where it has no row). It reads the
// two sorted tables side by side; see EPSSChanged for when not to call it.
func EPSSChanges(prev, cur *EPSS) iter.Seq2[string, [2]EPSSScore] {
	return func(yield func(string, [2]EPSSScore) bool) {
		var buf [32]byte
		a, b := prev.rows, cur.rows
		for len(a) > 0 || len(b) > 0 {
			var key uint64
			var s [2]EPSSScore
			switch {
			case len(b) == 0 || len(a) > 0 && a[0].key < b[0].key:
				key, s[0] = a[0].key, EPSSScore{a[0].score, a[0].pct}
				a = a[1:]
			case len(a) == 0 || b[0].key < a[0].key:
				key, s[1] = b[0].key, EPSSScore{b[0].score, b[0].pct}
				b = b[1:]
			default:
				key = a[0].key
				s[0], s[1] = EPSSScore{a[0].score, a[0].pct}, EPSSScore{b[0].score, b[0].pct}
				a, b = a[1:], b[1:]
			}
			if EPSSChanged(s[0].Score, s[1].Score) {
				if !yield(string(appendEPSSName(buf[:0], key)), s) {
					return
				}
			}
		}
	}
}

// ReadEPSS reads FIRST's daily EPSS file (epss_scores-YYYY-MM-DD.csv, or
// compressed: gzip as FIRST serves it, or whatever openInput recognises,
// found by content, not by name). The file must be, line by line (LF or
// CRLF ends, the last one optional):
//
//	#model_version:MODEL,score_date:DATE   (other "key:value" pairs are ignored)
//	cve,epss,percentile
//	CVE-YYYY-NNNN,SCORE,PERCENTILE         (one or more)
//
// DATE in RFC 3339 (or with a "+0000" offset, as FIRST wrote in 2022);
// each CVE id once, in the syntax of the NVD records
// (CVE-<4 digits>-<4 to 9 digits>); SCORE and PERCENTILE decimal numbers
// in [0,1] (an exponent is allowed). Rows may come in any order. Every
// problem is an error of one line naming the file and the line:
// "loader: epss PATH: line 7: percentile "1.3" not in [0,1]".
func ReadEPSS(path string) (*EPSS, error) {
	e, _, err := readEPSS(path)
	return e, err
}

// readEPSS is ReadEPSS, also returning the file's size and SHA-256, for a
// manifest.
func readEPSS(path string) (*EPSS, FileInfo, error) {
	rc, err := openInput(path)
	if err != nil {
		return nil, FileInfo{}, err
	}
	defer rc.Close()
	e, err := decodeEPSS(unnamedReads{rc}, "epss "+path)
	if err != nil {
		return nil, FileInfo{}, err
	}
	fi, err := rc.Sum()
	if err != nil {
		return nil, FileInfo{}, err
	}
	fi.Records = e.Len()
	return e, fi, nil
}

// epssMaxLine bounds a line of an EPSS file; a row is about 35 bytes.
const epssMaxLine = 4096

// epssHeader is the column header, the file's second line.
const epssHeader = "cve,epss,percentile"

// epssError is a problem with an EPSS file: "loader: LABEL: line N: ...".
type epssError struct {
	label string // "epss PATH"
	line  int
	err   error
}

func (e *epssError) Error() string {
	return fmt.Sprintf("loader: %s: line %d: %v", e.label, e.line, e.err)
}

func (e *epssError) Unwrap() error { return e.err }

// decodeEPSS reads an EPSS file's decompressed content from r; see
// ReadEPSS. label names the input in errors ("epss PATH").
func decodeEPSS(r io.Reader, label string) (*EPSS, error) {
	br := bufio.NewReaderSize(r, epssMaxLine)
	line := 0
	fail := func(format string, args ...any) (*EPSS, error) {
		return nil, &epssError{label: label, line: line, err: fmt.Errorf(format, args...)}
	}
	// next returns the next line without its end, false at the end of
	// the input.
	next := func() ([]byte, bool, error) {
		b, err := br.ReadSlice('\n')
		if len(b) == 0 && err == io.EOF {
			return nil, false, nil
		}
		line++
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			return nil, false, fmt.Errorf("longer than %d bytes", epssMaxLine)
		case err != nil && err != io.EOF:
			return nil, false, err
		}
		b = bytes.TrimSuffix(b, []byte("\n"))
		b = bytes.TrimSuffix(b, []byte("\r"))
		return b, true, nil
	}

	e := &EPSS{}
	b, ok, err := next()
	switch {
	case err != nil:
		return fail("%w", err)
	case !ok:
		line = 1
		return fail("empty file, want %q", "#model_version:…,score_date:…")
	}
	b = bytes.TrimPrefix(b, []byte("\ufeff")) // a byte order mark
	if err := parseEPSSComment(b, e); err != nil {
		return fail("%w", err)
	}
	b, ok, err = next()
	switch {
	case err != nil:
		return fail("%w", err)
	case !ok:
		line++
		return fail("no header, want %q", epssHeader)
	case string(b) != epssHeader:
		return fail("header %s, want %q", quoteEPSS(b), epssHeader)
	}

	// Rows are gathered in blocks of epssBlock and copied once into a
	// slice of the exact size: append's doubling would allocate about
	// five times the table's size on the way, this twice.
	var (
		blocks [][]epssRow
		cur    []epssRow
		prev   uint64 // the last row's key
		n      int
		sorted = true
	)
	for {
		b, ok, err := next()
		if err != nil {
			return fail("%w", err)
		}
		if !ok {
			break
		}
		row, err := parseEPSSRow(b)
		if err != nil {
			return fail("%w", err)
		}
		if n > 0 && row.key <= prev {
			if sorted && row.key == prev {
				// Every earlier row has a smaller id: this is the
				// first duplicate.
				return fail("duplicate %s (also on line %d)", appendEPSSName(nil, row.key), line-1)
			}
			sorted = false
		}
		if len(cur) == cap(cur) {
			cur = make([]epssRow, 0, epssBlock)
			blocks = append(blocks, cur)
		}
		cur = append(cur, row)
		blocks[len(blocks)-1] = cur
		prev = row.key
		n++
	}
	rows := make([]epssRow, 0, n)
	for _, b := range blocks {
		rows = append(rows, b...)
	}
	if len(rows) == 0 {
		line++
		return fail("no rows after the header")
	}
	if !sorted {
		if d, first, ok := epssDuplicate(rows); ok {
			line = d + epssFirstRowLine
			return fail("duplicate %s (also on line %d)", appendEPSSName(nil, rows[d].key), first+epssFirstRowLine)
		}
		slices.SortFunc(rows, func(a, b epssRow) int { return cmp.Compare(a.key, b.key) })
	}
	e.rows = rows
	return e, nil
}

// epssBlock is how many rows decodeEPSS gathers in one block.
const epssBlock = 8192

// epssFirstRowLine is the line of an EPSS file's first row: rows follow
// the comment and the header, one a line.
const epssFirstRowLine = 3

// epssDuplicate finds, in rows in file order, the first row (by
// position) whose CVE id an earlier row has: its position d and that of
// the earlier row.
func epssDuplicate(rows []epssRow) (d, first int, ok bool) {
	idx := make([]int32, len(rows))
	for i := range idx {
		idx[i] = int32(i)
	}
	slices.SortFunc(idx, func(a, b int32) int {
		switch ka, kb := rows[a].key, rows[b].key; {
		case ka < kb:
			return -1
		case ka > kb:
			return 1
		}
		return int(a - b)
	})
	d = len(rows)
	for k := 1; k < len(idx); k++ {
		key := rows[idx[k]].key
		second := key == rows[idx[k-1]].key && (k == 1 || rows[idx[k-2]].key != key)
		if second && int(idx[k]) < d {
			d, first = int(idx[k]), int(idx[k-1])
		}
	}
	return d, first, d < len(rows)
}

// parseEPSSComment reads the first line, "#model_version:…,score_date:…",
// into e.
func parseEPSSComment(b []byte, e *EPSS) error {
	want := func(problem string) error {
		return fmt.Errorf("%s, want %q first", problem, "#model_version:…,score_date:…")
	}
	if len(b) == 0 || b[0] != '#' {
		return want("got " + quoteEPSS(b))
	}
	var model, date string
	var haveModel, haveDate bool
	for f := range strings.SplitSeq(string(b[1:]), ",") {
		k, v, found := strings.Cut(f, ":")
		if !found {
			return want("field " + quoteEPSS([]byte(f)) + " is not key:value")
		}
		switch k {
		case "model_version":
			if haveModel {
				return errors.New("model_version given twice")
			}
			model, haveModel = v, true
		case "score_date":
			if haveDate {
				return errors.New("score_date given twice")
			}
			date, haveDate = v, true
		}
	}
	switch {
	case !haveModel:
		return want("no model_version in " + quoteEPSS(b))
	case !haveDate:
		return want("no score_date in " + quoteEPSS(b))
	case !validEPSSModel(model):
		return fmt.Errorf("model_version %s is not 1 to 64 printable characters", quoteEPSS([]byte(model)))
	}
	t, err := time.Parse(time.RFC3339, date)
	if err != nil {
		// FIRST's files of 2022 wrote the offset without a colon.
		if t, err = time.Parse("2006-01-02T15:04:05-0700", date); err != nil {
			return fmt.Errorf("score_date %s is not an RFC 3339 time", quoteEPSS([]byte(date)))
		}
	}
	e.Model, e.Date = model, t
	return nil
}

// validEPSSModel reports whether s is 1 to 64 printable ASCII characters
// other than space.
func validEPSSModel(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

// parseEPSSRow parses one row, "CVE-YYYY-NNNN,SCORE,PERCENTILE".
func parseEPSSRow(b []byte) (epssRow, error) {
	if len(b) == 0 {
		return epssRow{}, errors.New("empty line, want cve,epss,percentile")
	}
	if n := bytes.Count(b, []byte(",")) + 1; n != 3 {
		return epssRow{}, fmt.Errorf("%d columns, want 3 (cve,epss,percentile)", n)
	}
	c1 := bytes.IndexByte(b, ',')
	c2 := c1 + 1 + bytes.IndexByte(b[c1+1:], ',')
	id, score, pct := b[:c1], b[c1+1:c2], b[c2+1:]
	key, ok := epssKeyBytes(id, false)
	if !ok {
		return epssRow{}, fmt.Errorf("cve %s is not CVE-<year>-<number>", quoteEPSS(id))
	}
	s, err := parseEPSSValue(score)
	if err != nil {
		return epssRow{}, fmt.Errorf("epss %s %w", quoteEPSS(score), err)
	}
	p, err := parseEPSSValue(pct)
	if err != nil {
		return epssRow{}, fmt.Errorf("percentile %s %w", quoteEPSS(pct), err)
	}
	return epssRow{key: key, score: s, pct: p}, nil
}

var (
	errEPSSNotNumber = errors.New("is not a number")
	errEPSSRange     = errors.New("not in [0,1]")
)

// parseEPSSValue parses a decimal number in [0,1] ("0.16317", "1",
// "1.0", ".5", "4e-05") into millionths, rounding half up.
func parseEPSSValue(b []byte) (EPSSValue, error) {
	s := b
	neg := false
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if bytes.ContainsAny(s, "eE") {
		return parseEPSSFloat(b)
	}
	var intPart uint64
	var frac EPSSValue // millionths
	digits := 0
	above := false // value > 1 beyond what intPart shows
	i := 0
	for ; i < len(s) && isASCIIDigit(s[i]); i++ {
		intPart = min(intPart*10+uint64(s[i]-'0'), 10) // 10 stands for "more than 1"
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		scale := EPSSScale / 10
		for k := 0; i < len(s) && isASCIIDigit(s[i]); i, k = i+1, k+1 {
			d := EPSSValue(s[i] - '0')
			digits++
			switch {
			case k < 6:
				frac += d * scale
				scale /= 10
			case k == 6 && d >= 5:
				frac++
			}
			if d != 0 && intPart >= 1 {
				above = true
			}
		}
	}
	if i != len(s) || digits == 0 {
		return 0, errEPSSNotNumber
	}
	if intPart > 1 || above {
		return 0, errEPSSRange
	}
	v := EPSSValue(intPart)*EPSSScale + frac
	if neg && v != 0 {
		return 0, errEPSSRange
	}
	return v, nil
}

// parseEPSSFloat parses a number with an exponent, the way Python's
// repr writes small floats ("4e-05").
func parseEPSSFloat(b []byte) (EPSSValue, error) {
	for _, c := range b {
		if !isASCIIDigit(c) && !strings.ContainsRune(".eE+-", rune(c)) {
			return 0, errEPSSNotNumber // no "inf", "nan", hex or "_"
		}
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, errEPSSNotNumber
	}
	if !(f >= 0 && f <= 1) { // -0 is 0
		return 0, errEPSSRange
	}
	return EPSSValue(math.Round(f * float64(EPSSScale))), nil
}

func isASCIIDigit(c byte) bool { return '0' <= c && c <= '9' }

// quoteEPSS quotes b for an error message, cut to 64 bytes.
func quoteEPSS(b []byte) string {
	const limit = 64
	if len(b) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(b[cut]) {
			cut--
		}
		return strconv.Quote(string(b[:cut])) + "…"
	}
	return strconv.Quote(string(b))
}

// epssKey packs a CVE id into an integer that sorts as the id does as a
// string: year<<34 | number padded to 9 digits<<4 | digits of the number
// (4 to 9), so "CVE-2023-10000" < "CVE-2023-9999" and "CVE-2023-1000" <
// "CVE-2023-10000". anyCase accepts the "CVE-" prefix in any letter case.
func epssKey(name string, anyCase bool) (uint64, bool) {
	// A conversion the compiler does without allocating.
	if len(name) > 32 {
		return 0, false
	}
	var buf [32]byte
	return epssKeyBytes(append(buf[:0], name...), anyCase)
}

// epssPow10 are the powers of ten up to 10^9.
var epssPow10 = [...]uint64{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9}

func epssKeyBytes(b []byte, anyCase bool) (uint64, bool) {
	// CVE-YYYY-NNNN: 13 to 18 bytes.
	if len(b) < 13 || len(b) > 18 || b[8] != '-' {
		return 0, false
	}
	prefix := string(b[:4]) // compared without allocating
	if prefix != "CVE-" && !(anyCase && strings.EqualFold(prefix, "CVE-")) {
		return 0, false
	}
	var year, num uint64
	for _, c := range b[4:8] {
		if !isASCIIDigit(c) {
			return 0, false
		}
		year = year*10 + uint64(c-'0')
	}
	digits := len(b) - 9
	for _, c := range b[9:] {
		if !isASCIIDigit(c) {
			return 0, false
		}
		num = num*10 + uint64(c-'0')
	}
	return year<<34 | num*epssPow10[9-digits]<<4 | uint64(digits), true
}

// appendEPSSName appends the CVE id of key (see epssKey).
func appendEPSSName(dst []byte, key uint64) []byte {
	digits := int(key & 0xF)
	num := (key >> 4 & (1<<30 - 1)) / epssPow10[9-digits]
	year := key >> 34
	dst = append(dst, "CVE-"...)
	dst = appendPadded(dst, year, 4)
	dst = append(dst, '-')
	return appendPadded(dst, num, digits)
}

// appendPadded appends n in decimal, zero-padded to width digits.
func appendPadded(dst []byte, n uint64, width int) []byte {
	var b [20]byte
	i := len(b)
	for n > 0 || i > len(b)-width {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return append(dst, b[i:]...)
}
