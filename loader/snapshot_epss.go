package loader

// The EPSS scores of a snapshot: epss.csv.zst and the manifest's "epss".

import (
	"bytes"
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/vulnd/vulnd/index"
)

// checkEPSSInfo checks the manifest's "epss" against its files["epss"].
func checkEPSSInfo(m Manifest) error {
	e := m.EPSS
	if !validEPSSModel(e.Model) {
		return fmt.Errorf("epss: model %q is not 1 to 64 printable characters", e.Model)
	}
	if _, err := time.Parse(time.RFC3339, e.Date); err != nil {
		return fmt.Errorf("epss: date %q is not an RFC 3339 time", e.Date)
	}
	fi, ok := m.Files[keyEPSS]
	switch {
	case !ok:
		return fmt.Errorf("epss: no %q file", keyEPSS)
	case e.Rows != fi.Records:
		return fmt.Errorf("epss: %d rows, but %s holds %d records", e.Rows, fileEPSS, fi.Records)
	}
	return nil
}

// epssInfo is the manifest's "epss" for e, read from the file named file.
func epssInfo(e *EPSS, file string) *EPSSInfo {
	return &EPSSInfo{File: file, Model: e.Model, Date: e.Date.UTC().Format(time.RFC3339), Rows: e.Len()}
}

// only returns the rows of e for the CVEs of cves, with e's model and
// date: what a snapshot stores of FIRST's file.
func (e *EPSS) only(cves []index.CVE) *EPSS {
	out := &EPSS{Model: e.Model, Date: e.Date}
	for i := range cves {
		key, ok := epssKey(cves[i].Name, false)
		if !ok {
			continue
		}
		if j, found := slices.BinarySearchFunc(e.rows, key, func(r epssRow, k uint64) int { return cmp.Compare(r.key, k) }); found {
			out.rows = append(out.rows, e.rows[j])
		}
	}
	slices.SortFunc(out.rows, func(a, b epssRow) int { return cmp.Compare(a.key, b.key) })
	return out
}

// appendEPSSLine appends row i of e as epss.csv.zst stores it:
// "CVE-2023-1234,0.00707,0.5157".
func (e *EPSS) appendLine(dst []byte, i int) []byte {
	r := e.rows[i]
	dst = appendEPSSName(dst, r.key)
	dst = append(dst, ',')
	dst = r.score.AppendDecimal(dst)
	dst = append(dst, ',')
	return r.pct.AppendDecimal(dst)
}

// source is e as an index takes it (nil for a nil e).
func (e *EPSS) source() *index.EPSSSource {
	if e == nil {
		return nil
	}
	return &index.EPSSSource{
		Model: e.Model,
		Date:  e.Date.UTC().Format(time.DateOnly),
		Rows: func(yield func(string, index.EPSSScores) bool) {
			var buf [32]byte
			for _, r := range e.rows {
				if !yield(string(appendEPSSName(buf[:0], r.key)), index.EPSSScores{Score: uint32(r.score), Percentile: uint32(r.pct)}) {
					return
				}
			}
		},
	}
}

// decodeEPSSFile reads a snapshot's EPSS scores (nil when its manifest
// has none): epss.csv.zst's rows, each CVE once, by CVE id.
func decodeEPSSFile(dir string, m Manifest, dec *zstd.Decoder) (*EPSS, error) {
	if m.EPSS == nil {
		return nil, nil
	}
	fi := m.Files[keyEPSS]
	wrap := func(err error) error {
		return fmt.Errorf("loader: snapshot %s: %s: %w", dir, fi.Name, err)
	}
	date, _ := time.Parse(time.RFC3339, m.EPSS.Date) // checked with the manifest
	e := &EPSS{Model: m.EPSS.Model, Date: date, rows: make([]epssRow, fi.Records)}
	if err := eachRecord(dir, fi, dec, func(n int, line []byte) error {
		r, err := parseEPSSRow(bytes.TrimSuffix(line, []byte("\r")))
		if err != nil {
			return err
		}
		e.rows[n] = r
		return nil
	}); err != nil {
		return nil, wrap(err)
	}
	for i := 1; i < len(e.rows); i++ {
		if e.rows[i].key <= e.rows[i-1].key {
			return nil, wrap(fmt.Errorf("record %d: %s is not after %s", i+1, appendEPSSName(nil, e.rows[i].key), appendEPSSName(nil, e.rows[i-1].key)))
		}
	}
	return e, nil
}

// epssFileName is the name a manifest gives FIRST's file at path.
func epssFileName(path string) string { return filepath.Base(path) }
