package main

import (
	"bufio"
	"cmp"
	"math"
	"slices"
	"strconv"

	"github.com/klauspost/compress/gzip"
)

// This file writes the data set's EPSS file, in the shape of FIRST's
// daily epss_scores-YYYY-MM-DD.csv.gz:
//
//	#model_version:v2026.06.15,score_date:2026-11-22T00:00:00Z
//	cve,epss,percentile
//	CVE-1999-0001,0.00345,0.41234
//
// one row per record that is not rejected (FIRST scores published CVEs
// only), by id as a string as FIRST sorts them, scores and percentiles
// with five decimals at most.
//
// Scores: a record with a KEV entry scores high (0.075 to 0.975, mostly
// above 0.5); 6% of the others make a long tail (log-uniform over 0.01 to
// 0.95); the rest, most records, a fraction of a percent (log-normal
// around 0.0063, the median of FIRST's file). A percentile is the share
// of the file's rows whose score is the same or lower, rounded to five
// decimals, as FIRST defines it.
//
// The next day (Config.Next) dates its file a day later and keeps it
// coherent with the feeds: rows of records rejected that day are gone,
// the day's new records have rows, and of the other records
// epssJumps(CVEs) (about 0.05%, those last in the seeded permutation that
// picks the changed records) move by 0.1 or more, mostly up (an exploit
// published), half the rest drift by less than 0.09 (about 15% of their
// score), and the others keep their score. Percentiles are those of the
// day's rows.

const (
	epssModel = "v2026.06.15"
	// epssUnit is 1 in the scores' unit, FIRST's fifth decimal.
	epssUnit = 100_000
	// epssTop is the highest score drawn: FIRST's top scores are about
	// 0.975.
	epssTop = 97_500
	// epssAlert is the move of an "EPSS changed" alert, 0.1.
	epssAlert = 10_000
	// epssDrift bounds the day-to-day drift of a score that does not
	// jump, below epssAlert.
	epssDrift = 9_000
)

// EPSSName is the file name of the data set's EPSS file, that of the day
// of the feeds' timestamp (a day later with next).
func EPSSName(next bool) string {
	if next {
		return "epss_scores-2026-11-23.csv.gz"
	}
	return "epss_scores-2026-11-22.csv.gz"
}

// epssScoreDate is the file's score_date.
func epssScoreDate(next bool) string {
	if next {
		return "2026-11-23T00:00:00Z"
	}
	return "2026-11-22T00:00:00Z"
}

// epssJumps is how many base records of a data set of n move by 0.1 or
// more on the next day: about 0.05%, at least 3 (at most n).
func epssJumps(n int) int { return min(n, max(3, int(math.Round(float64(n)/2000)))) }

// epssJumper reports whether record i's score jumps on the next day: the
// last epssJumps(CVEs) ranks of the permutation that picks the changed
// records (its first ranks).
func (p *Plan) epssJumper(i int) bool {
	return p.cfg.Next && i < p.cfg.CVEs && p.permute(i) >= p.cfg.CVEs-epssJumps(p.cfg.CVEs)
}

// epssScore returns record i's score in the day's file (in epssUnit) and
// whether the file has a row for it.
func (g *Generator) epssScore(i int) (int, bool) {
	p := g.plan
	switch {
	case i >= p.cfg.CVEs: // a new record of the next day
		return g.epssBase(i), true
	case !p.cfg.Next:
		if g.core(i).rejected {
			return 0, false
		}
		return g.epssBase(i), true
	case g.rejectedNext(i):
		return 0, false
	}
	return g.epssNext(i), true
}

// epssBase is record i's score in the base data set (see the top of the
// file), drawn from its EPSS stream of revision 0.
func (g *Generator) epssBase(i int) int {
	r := g.streamRev(i, secEPSS, 0)
	_, kev := g.plan.kevHash(i)
	var x float64
	switch u := r.Float64(); {
	case kev:
		v := r.Float64()
		x = 0.975 - 0.9*v*v
	case u < 0.06:
		x = math.Exp(math.Log(0.01) + r.Float64()*(math.Log(0.95)-math.Log(0.01)))
	default:
		x = math.Pow(10, -2.2+0.4*r.NormFloat64())
	}
	return min(max(int(math.Round(x*epssUnit)), 1), epssTop)
}

// epssNext is base record i's score on the next day, drawn from its EPSS
// stream of revision 1.
func (g *Generator) epssNext(i int) int {
	old := g.epssBase(i)
	r := g.streamRev(i, secEPSS, 1)
	if g.plan.epssJumper(i) {
		up := r.Float64() < 0.75
		switch {
		case old+epssAlert > epssTop:
			up = false
		case old-epssAlert < 1:
			up = true
		}
		if up {
			return old + epssAlert + r.IntN(min(50_000, epssTop-old-epssAlert)+1)
		}
		return old - epssAlert - r.IntN(min(50_000, old-epssAlert-1)+1)
	}
	if r.Float64() < 0.5 {
		return old
	}
	d := int(math.Round(float64(old) * 0.15 * r.NormFloat64()))
	d = min(max(d, -epssDrift), epssDrift)
	return min(max(old+d, 1), epssTop)
}

// WriteEPSS writes the data set's EPSS file (EPSSName) to path, gzip'd.
// It holds 4 bytes per record, and the ids of one year at a time.
func (p *Plan) WriteEPSS(path string) error {
	g := p.Generator()
	n := p.Total()
	scores := make([]int32, n) // 0: no row
	le := make([]int, epssUnit+1)
	rows := 0
	for i := range n {
		if s, ok := g.epssScore(i); ok {
			scores[i] = int32(s)
			le[s]++
			rows++
		}
	}
	for s := 1; s <= epssUnit; s++ {
		le[s] += le[s-1] // rows scoring s or less
	}
	return writeFileAtomic(path, func(bw *bufio.Writer) error {
		zw, err := gzip.NewWriterLevel(bw, gzip.DefaultCompression)
		if err != nil {
			return err
		}
		w := bufio.NewWriterSize(zw, 64<<10)
		w.WriteString("#model_version:" + epssModel + ",score_date:" + epssScoreDate(p.cfg.Next) + "\ncve,epss,percentile\n")
		type rec struct {
			id string
			i  int
		}
		var year []rec
		var line []byte
		for y := firstYear; y <= lastYear; y++ {
			year = year[:0]
			first, base := p.start[y-firstYear], p.Count(y)
			for k := range p.feedCount(y) {
				i := first + k
				if k >= base {
					i = p.cfg.CVEs + k - base
				}
				if scores[i] > 0 {
					year = append(year, rec{p.cveID(y, k), i})
				}
			}
			slices.SortFunc(year, func(a, b rec) int { return cmp.Compare(a.id, b.id) })
			for _, x := range year {
				s := int(scores[x.i])
				pct := (2*le[s]*epssUnit + rows) / (2 * rows) // rounded half up
				line = append(line[:0], x.id...)
				line = append(line, ',')
				line = appendEPSSUnits(line, s)
				line = append(line, ',')
				line = appendEPSSUnits(line, pct)
				line = append(line, '\n')
				if _, err := w.Write(line); err != nil {
					return err
				}
			}
		}
		if err := w.Flush(); err != nil {
			return err
		}
		return zw.Close()
	})
}

// appendEPSSUnits appends u (in epssUnit, 0..epssUnit) as FIRST writes
// it: "0.00345", "0.5", "1.0".
func appendEPSSUnits(dst []byte, u int) []byte {
	switch u {
	case 0:
		return append(dst, "0.0"...)
	case epssUnit:
		return append(dst, "1.0"...)
	}
	s := strconv.Itoa(epssUnit + u)[1:] // five digits
	for s[len(s)-1] == '0' {
		s = s[:len(s)-1]
	}
	return append(append(dst, "0."...), s...)
}
