package index

import (
	"cmp"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"sync"
)

// EPSS scores (FIRST's Exploit Prediction Scoring System) are kept per CVE
// position, as two uint32 of millionths (8 bytes a CVE, 3.2 MB at 400k
// CVEs, and nothing when the snapshot has no EPSS), so that the filters
// epss_min and percentile_min and the orders sort=epss and sort=risk look
// a CVE's score up by its position, like its band.

// EPSSSource is one day of EPSS scores as an index takes them (see
// Meta.EPSS): the model, the score date and each scored CVE's score and
// percentile.
type EPSSSource struct {
	// Model is FIRST's model_version, e.g. "v2026.06.15".
	Model string
	// Date is the score date, YYYY-MM-DD (UTC).
	Date string
	// Rows yields each scored CVE's name and scores, each CVE once;
	// every CVE it names must be in the index.
	Rows iter.Seq2[string, EPSSScores]
}

// EPSSScores are one CVE's EPSS score and percentile, in millionths:
// 0 to EPSSOne.
type EPSSScores struct {
	Score, Percentile uint32
}

// EPSSOne is 1 in millionths, the largest score or percentile.
const EPSSOne = 1_000_000

// epssNone marks a CVE position without an EPSS row.
const epssNone = ^uint32(0)

// CVESort is the order of a CVE list (the sort parameter).
type CVESort uint8

// The orders of CVESort. SortUsual is the API's usual order (updated_at
// newest first, then CVE year and number, highest first). SortEPSS puts
// the highest EPSS score first; SortRisk KEV CVEs first, then by EPSS
// score, then by CVSS score (see riskKey). Both break ties by the usual
// order and put CVEs without an EPSS score after every CVE with one.
const (
	SortUsual CVESort = iota
	SortEPSS
	SortRisk
)

// buildEPSS sets the EPSS scores of the CVE positions from src (nil: the
// snapshot has none).
func (ix *Index) buildEPSS(src *EPSSSource) error {
	if src == nil {
		return nil
	}
	n := len(ix.cveBodies)
	ix.epssModel, ix.epssDate = src.Model, src.Date
	ix.epssScore = make([]uint32, n)
	ix.epssPct = make([]uint32, n)
	for p := range n {
		ix.epssScore[p], ix.epssPct[p] = epssNone, epssNone
	}
	ix.hasEPSS = true
	if src.Rows == nil {
		return nil
	}
	for name, s := range src.Rows {
		p, ok := ix.cvePos(name)
		switch {
		case !ok:
			return fmt.Errorf("%w: EPSS score of %q, which the snapshot does not hold", ErrInvalid, name)
		case ix.epssScore[p] != epssNone:
			return fmt.Errorf("%w: EPSS score of %s given twice", ErrInvalid, name)
		case s.Score > EPSSOne || s.Percentile > EPSSOne:
			return fmt.Errorf("%w: EPSS score of %s not in [0,1]", ErrInvalid, name)
		}
		ix.epssScore[p], ix.epssPct[p] = s.Score, s.Percentile
		ix.epssRows++
	}
	return nil
}

// EPSSRows returns the number of CVEs with an EPSS score, and whether the
// index has EPSS scores at all.
func (ix *Index) EPSSRows() (int, bool) { return ix.epssRows, ix.hasEPSS }

// epssAt returns the EPSS scores of the CVE at position p, and false when
// it has none.
func (ix *Index) epssAt(p int32) (EPSSScores, bool) {
	if ix.epssScore == nil || ix.epssScore[p] == epssNone {
		return EPSSScores{}, false
	}
	return EPSSScores{ix.epssScore[p], ix.epssPct[p]}, true
}

// appendEPSS appends the details' epss member's value of the CVE at p:
// {"score","percentile","date","model"} or null.
func (ix *Index) appendEPSS(dst []byte, p int32) []byte {
	s, ok := ix.epssAt(p)
	if !ok {
		return append(dst, "null"...)
	}
	dst = append(dst, `{"score":`...)
	dst = AppendMillionths(dst, s.Score)
	dst = append(dst, `,"percentile":`...)
	dst = AppendMillionths(dst, s.Percentile)
	dst = append(dst, `,"date":`...)
	dst = appendJSONString(dst, ix.epssDate)
	dst = append(dst, `,"model":`...)
	dst = appendJSONString(dst, ix.epssModel)
	return append(dst, '}')
}

// AppendMillionths appends v millionths as a decimal number with no
// trailing zeros and no exponent, the way FIRST writes its scores:
// 163170 is "0.16317", 4000 "0.004", 0 "0", 1000000 "1". It is exact:
// no float rounding is involved.
func AppendMillionths(dst []byte, v uint32) []byte {
	dst = strconv.AppendUint(dst, uint64(v/EPSSOne), 10)
	frac := v % EPSSOne
	if frac == 0 {
		return dst
	}
	var b [7]byte
	b[0] = '.'
	for i := 6; i >= 1; i-- {
		b[i] = byte('0' + frac%10)
		frac /= 10
	}
	n := len(b)
	for b[n-1] == '0' {
		n--
	}
	return append(dst, b[:n]...)
}

// WithEPSS returns the CVEs of l whose EPSS score is at least minScore
// (when hasScore) and whose percentile is at least minPct (when hasPct),
// in list order. A CVE without an EPSS score meets neither, even at 0.
func (l CVEList) WithEPSS(minScore uint32, hasScore bool, minPct uint32, hasPct bool) CVEList {
	if !l.isCVEList() || !hasScore && !hasPct {
		return l
	}
	ix := l.ix
	keep := func(p int32) bool {
		s, ok := ix.epssAt(p)
		return ok && (!hasScore || s.Score >= minScore) && (!hasPct || s.Percentile >= minPct)
	}
	var out []int32
	if ids, ok := l.positions(); ok {
		for _, p := range ids {
			if keep(p) {
				out = append(out, p)
			}
		}
	} else if ix.epssScore != nil {
		for p := range int32(len(l.src)) {
			if keep(p) {
				out = append(out, p)
			}
		}
	}
	return ix.cveList(orEmpty(out), false)
}

// sortKey is the key of the CVE at position p in order s (not
// SortUsual): higher comes first, equal keys in the usual order.
//
// SortEPSS: the EPSS score plus one, 0 for a CVE without one.
// SortRisk (riskKey): KEV in bit 28, the EPSS score plus one (0: none)
// in bits 7 to 27, the CVSS score in tenths (0 to 100) in bits 0 to 6;
// so KEV first, then the EPSS score, then the CVSS score.
func (ix *Index) sortKey(s CVESort, p int32) uint32 {
	var epss uint32
	if e, ok := ix.epssAt(p); ok {
		epss = e.Score + 1
	}
	if s == SortEPSS {
		return epss
	}
	var kev uint32
	if ix.kevAt(p) {
		kev = 1
	}
	return kev<<28 | epss<<7 | uint32(ix.cvssAt[p])
}

// order returns every CVE position in order s, computed on first use.
func (ix *Index) order(s CVESort) []int32 {
	o := &ix.orders[s]
	o.once.Do(func() {
		n := int32(len(ix.cveBodies))
		keys := make([]uint32, n)
		ps := make([]int32, n)
		for p := range n {
			keys[p], ps[p] = ix.sortKey(s, p), p
		}
		slices.SortFunc(ps, func(a, b int32) int {
			if c := cmp.Compare(keys[b], keys[a]); c != 0 {
				return c
			}
			return cmp.Compare(a, b)
		})
		o.ids = ps
	})
	return o.ids
}

// sortedOrder is an order of every CVE position, computed once.
type sortedOrder struct {
	once sync.Once
	ids  []int32
}

// Sorted returns l in order s: l itself for SortUsual. A list of many
// CVEs is the index's whole order, computed once, kept to l's CVEs; a
// short one is sorted on its own.
func (l CVEList) Sorted(s CVESort) CVEList {
	if !l.isCVEList() || s == SortUsual || s > SortRisk {
		return l
	}
	ix := l.ix
	n := len(ix.cveBodies)
	ids, sub := l.positions()
	if !sub {
		all := ix.order(s)
		if len(l.src) == n {
			return ix.cveList(all, false)
		}
		// A prefix of the usual order: its positions are those below
		// its length.
		out := make([]int32, 0, len(l.src))
		for _, p := range all {
			if int(p) < len(l.src) {
				out = append(out, p)
			}
		}
		return ix.cveList(out, false)
	}
	if len(ids) >= n/16 && len(ids) > 64 {
		in := make([]uint64, (n+63)/64)
		for _, p := range ids {
			in[p/64] |= 1 << (p % 64)
		}
		out := make([]int32, 0, len(ids))
		for _, p := range ix.order(s) {
			if in[p/64]&(1<<(p%64)) != 0 {
				out = append(out, p)
			}
		}
		return ix.cveList(out, false)
	}
	out := slices.Clone(ids)
	slices.SortStableFunc(out, func(a, b int32) int {
		return cmp.Compare(ix.sortKey(s, b), ix.sortKey(s, a))
	})
	return ix.cveList(orEmpty(out), false)
}
