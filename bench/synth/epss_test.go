package main

import (
	"bytes"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/vulnd/vulnd/loader"
)

// readEPSS reads the EPSS file of dir with the product's reader.
func readEPSS(t *testing.T, dir string, next bool) *loader.EPSS {
	t.Helper()
	e, err := loader.ReadEPSS(filepath.Join(dir, EPSSName(next)))
	if err != nil {
		t.Fatalf("the loader does not read the EPSS file: %v", err)
	}
	return e
}

// scoredIDs are the ids of p's records that are not rejected, sorted:
// those FIRST would score. The feeds hold these records (see
// TestDeterministic, TestNextDay).
func scoredIDs(p *Plan) []string {
	g := p.Generator()
	var ids []string
	for i := range p.Total() {
		if c := g.Record(i); c.VulnStatus != "Rejected" {
			ids = append(ids, c.ID)
		}
	}
	slices.Sort(ids)
	return ids
}

// checkEPSSFile checks what every EPSS file must be: the product's loader
// reads it, it has a row for exactly the records that are not rejected,
// and each percentile is the share of rows scoring the same or lower.
func checkEPSSFile(t *testing.T, p *Plan, dir string, date time.Time) *loader.EPSS {
	t.Helper()
	e := readEPSS(t, dir, p.cfg.Next)
	if e.Model != epssModel || !e.Date.Equal(date) {
		t.Errorf("model %q, date %v; want %s, %v", e.Model, e.Date, epssModel, date)
	}
	var names []string
	var scores []loader.EPSSValue
	for name, s := range e.All() {
		names = append(names, name)
		scores = append(scores, s.Score)
	}
	if want := scoredIDs(p); !slices.Equal(names, want) {
		t.Errorf("the file scores %d CVEs, the feeds have %d not rejected; first difference at %d",
			len(names), len(want), firstDiff(names, want))
	}
	sorted := slices.Clone(scores)
	slices.Sort(sorted)
	for name, s := range e.All() {
		if s.Score < 10 || s.Score > 975_000 || s.Score%10 != 0 || s.Percentile%10 != 0 {
			t.Fatalf("%s: score %v, percentile %v: want five decimals, score in [0.00001, 0.975]", name, s.Score, s.Percentile)
		}
		le := sort.Search(len(sorted), func(k int) bool { return sorted[k] > s.Score })
		want := math.Round(float64(le)/float64(len(sorted))*1e5) / 1e5
		if math.Abs(s.Percentile.Float64()-want) > 1e-9 {
			t.Fatalf("%s: percentile %v, want %v (%d of %d rows score %v or less)", name, s.Percentile, want, le, len(sorted), s.Score)
		}
	}
	return e
}

func firstDiff(a, b []string) int {
	for k := range min(len(a), len(b)) {
		if a[k] != b[k] {
			return k
		}
	}
	return min(len(a), len(b))
}

// TestEPSSFile reads the base data set's EPSS file back with the
// product's loader and checks its shape: most scores tiny, a long tail,
// KEV records high.
func TestEPSSFile(t *testing.T) {
	const n = 10000
	p, err := NewPlan(Config{CVEs: n, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := p.WriteEPSS(filepath.Join(dir, EPSSName(false))); err != nil {
		t.Fatal(err)
	}
	e := checkEPSSFile(t, p, dir, time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))

	g := p.Generator()
	var all, kev []float64
	for i := range n {
		c := g.Record(i)
		s, ok := e.Lookup(c.ID)
		if !ok {
			continue
		}
		all = append(all, s.Score.Float64())
		if c.CISAExploitAdd != "" {
			kev = append(kev, s.Score.Float64())
		}
	}
	share := func(xs []float64, f func(float64) bool) float64 {
		k := 0
		for _, x := range xs {
			if f(x) {
				k++
			}
		}
		return float64(k) / float64(len(xs))
	}
	slices.Sort(all)
	if med := all[len(all)/2]; med < 0.003 || med > 0.01 {
		t.Errorf("median score %v, want a fraction of a percent (FIRST's: about 0.006)", med)
	}
	if f := share(all, func(x float64) bool { return x < 0.01 }); f < 0.6 || f > 0.8 {
		t.Errorf("%.3f of the scores below 0.01, want most (0.6-0.8)", f)
	}
	if f := share(all, func(x float64) bool { return x >= 0.1 }); f < 0.02 || f > 0.06 {
		t.Errorf("%.3f of the scores 0.1 or more, want a long tail (0.02-0.06)", f)
	}
	if top := all[len(all)-1]; top < 0.9 {
		t.Errorf("top score %v, want above 0.9", top)
	}
	if len(kev) < 25 {
		t.Fatalf("only %d KEV records scored", len(kev))
	}
	if f := share(kev, func(x float64) bool { return x >= 0.5 }); f < 0.6 {
		t.Errorf("%.3f of the KEV records score 0.5 or more, want most", f)
	}
}

// TestEPSSNext checks the next day's EPSS file, as synth -next writes
// it, against the base one: the same records scored but for the day's
// rejected and new ones, exactly the jumpers moved by 0.1 or more, many
// others by less.
func TestEPSSNext(t *testing.T) {
	const n, seed, rate = 4000, 9, 0.05
	pb, err := NewPlan(Config{CVEs: n, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	baseDir := t.TempDir()
	if err := pb.WriteEPSS(filepath.Join(baseDir, EPSSName(false))); err != nil {
		t.Fatal(err)
	}
	base := checkEPSSFile(t, pb, baseDir, time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	p, err := NewPlan(Config{CVEs: n, Seed: seed, Next: true, ChangeRate: rate})
	if err != nil {
		t.Fatal(err)
	}
	next := checkEPSSFile(t, p, writeNext(t, n, seed, rate), time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC))

	g := p.Generator()
	var jumpers, alerts []string
	both, drifted := 0, 0
	for i := range n {
		id := g.Record(i).ID
		b, inBase := base.Lookup(id)
		a, inNext := next.Lookup(id)
		if !inBase || !inNext {
			continue
		}
		both++
		if p.epssJumper(i) {
			jumpers = append(jumpers, id)
		}
		if loader.EPSSChanged(b.Score, a.Score) {
			alerts = append(alerts, id)
		} else if a.Score != b.Score {
			drifted++
		}
	}
	slices.Sort(jumpers)
	slices.Sort(alerts)
	if len(jumpers) < 3 || !slices.Equal(alerts, jumpers) {
		t.Errorf("moved by 0.1 or more: %v; want the %d jumpers scored both days %v", alerts, epssJumps(n), jumpers)
	}
	if f := float64(drifted) / float64(both); f < 0.3 || f > 0.6 {
		t.Errorf("%.3f of the scores moved by less than 0.1, want many (0.3-0.6)", f)
	}
	// New records are scored the day they appear.
	for i := n; i < p.Total(); i++ {
		id := g.Record(i).ID
		if _, ok := next.Lookup(id); !ok {
			t.Errorf("new record %s has no score on the next day", id)
		}
	}
}

// TestRejectedNext checks rejectedNext, which tells the EPSS file which
// rows to drop, against the records the feeds hold.
func TestRejectedNext(t *testing.T) {
	const n = 3000
	p, err := NewPlan(Config{CVEs: n, Seed: 11, Next: true, ChangeRate: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	g, h := p.Generator(), p.Generator()
	rejected := 0
	for i := range n {
		want := g.Record(i).VulnStatus == "Rejected"
		if got := h.rejectedNext(i); got != want {
			t.Fatalf("record %d: rejectedNext = %v, the record says %v", i, got, want)
		}
		if want {
			rejected++
		}
	}
	if rejected == 0 {
		t.Fatal("no record rejected: the test proves nothing")
	}
}

// TestEPSSDeterministic checks that a seed gives the same EPSS file and
// another seed another.
func TestEPSSDeterministic(t *testing.T) {
	write := func(seed uint64) []byte {
		p, err := NewPlan(Config{CVEs: 2000, Seed: seed, Next: true, ChangeRate: 0.01})
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), EPSSName(true))
		if err := p.WriteEPSS(path); err != nil {
			t.Fatal(err)
		}
		return readDir(t, filepath.Dir(path))[EPSSName(true)]
	}
	if a, b := write(3), write(3); !bytes.Equal(a, b) {
		t.Error("seed 3 wrote two different EPSS files")
	}
	if a, b := write(3), write(4); bytes.Equal(a, b) {
		t.Error("seeds 3 and 4 wrote the same EPSS file")
	}
}

// TestAppendEPSSUnits pins FIRST's number form.
func TestAppendEPSSUnits(t *testing.T) {
	for u, want := range map[int]string{0: "0.0", 1: "0.00001", 345: "0.00345", 50_000: "0.5", 16_317: "0.16317", 100_000: "1.0"} {
		if got := string(appendEPSSUnits(nil, u)); got != want {
			t.Errorf("appendEPSSUnits(%d) = %q, want %q", u, got, want)
		}
	}
}
