package index

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// epssRows yields rows as EPSSSource.Rows does.
func epssRows(rows map[string]EPSSScores) func(func(string, EPSSScores) bool) {
	return func(yield func(string, EPSSScores) bool) {
		for _, name := range slices.Sorted(func(y func(string) bool) {
			for k := range rows {
				if !y(k) {
					return
				}
			}
		}) {
			if !yield(name, rows[name]) {
				return
			}
		}
	}
}

// riskIndex is seven CVEs, A to G in the usual order (updated_at newest
// first), with KEV entries, EPSS scores and CVSS scores chosen so that
// each step of sort=risk decides somewhere:
//
//	     KEV  EPSS (percentile)  CVSS
//	A         0.5   (0.9)        5.0
//	B    yes  0.01  (0.3)        9.8
//	C    yes  none               10.0
//	D         0.5   (0.9)        7.5
//	E         0     (0.05)       9.0
//	F         none               9.9
//	G    yes  0.01  (0.3)        9.8   (B's twin: the usual order decides)
func riskIndex(t *testing.T, withEPSS bool) *Index {
	t.Helper()
	mk := func(num, day string, kev bool, score float64) CVE {
		c := CVE{Name: "CVE-2024-000" + num, Summary: "s", CreatedAt: "2024-01-01 00:00:00Z", UpdatedAt: "2024-06-" + day + " 00:00:00Z"}
		c.CVSS.Score = score
		if kev {
			c.KEV = &KEV{DateAdded: "2024-06-01"}
		}
		return c
	}
	d := &Data{CVEs: []CVE{
		mk("1", "05", false, 5.0), mk("2", "04", true, 9.8), mk("3", "03", true, 10.0),
		mk("4", "02", false, 7.5), mk("5", "01", false, 9.0), mk("6", "00", false, 9.9)}}
	d.CVEs[5].UpdatedAt = "2024-05-31 00:00:00Z"
	g := mk("7", "00", true, 9.8)
	g.UpdatedAt = "2024-05-30 00:00:00Z"
	d.CVEs = append(d.CVEs, g)
	meta := Meta{ID: "x"}
	if withEPSS {
		meta.EPSS = &EPSSSource{Model: "v2026.06.15", Date: "2026-09-29", Rows: epssRows(map[string]EPSSScores{
			"CVE-2024-0001": {500000, 900000}, "CVE-2024-0002": {10000, 300000}, "CVE-2024-0004": {500000, 900000},
			"CVE-2024-0005": {0, 50000}, "CVE-2024-0007": {10000, 300000},
		})}
	}
	ix, err := Build(d, meta)
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// letters names a list's CVEs by their last digit as A to G.
func letters(l CVEList) string {
	var b strings.Builder
	for i := range l.Len() {
		name := string(l.Item(i)[len(`{"name":"`) : len(`{"name":"`)+len("CVE-2024-0001")])
		b.WriteByte('A' + name[len(name)-1] - '1')
	}
	return b.String()
}

// TestSortRiskAndEPSS pins sort=epss and sort=risk on hand-made data:
// the expected orders are written out from the documented rules.
func TestSortRiskAndEPSS(t *testing.T) {
	ix := riskIndex(t, true)
	for _, tc := range []struct {
		name string
		f    CVEFilter
		want string
	}{
		{"usual", CVEFilter{}, "ABCDEFG"},
		// Score high to low; A and D tie at 0.5, B and G at 0.01: the
		// usual order; E's 0 before C and F, which have none.
		{"epss", CVEFilter{Sort: SortEPSS}, "ADBGECF"},
		// KEV first (B, G, C: B and G by EPSS over C, which has none;
		// B and G tie on everything); then D before A by CVSS at the same
		// EPSS; then E (EPSS 0); then F (no EPSS, although CVSS 9.9).
		{"risk", CVEFilter{Sort: SortRisk}, "BGCDAEF"},
		{"epss_min=0.01", CVEFilter{EPSSMin: 10000, HasEPSSMin: true}, "ABDG"},
		{"epss_min=0", CVEFilter{EPSSMin: 0, HasEPSSMin: true}, "ABDEG"},
		{"epss_min=0.5", CVEFilter{EPSSMin: 500000, HasEPSSMin: true}, "AD"},
		{"epss_min=0.500001", CVEFilter{EPSSMin: 500001, HasEPSSMin: true}, ""},
		{"percentile_min=0.3", CVEFilter{PercentileMin: 300000, HasPercentileMin: true}, "ABDG"},
		{"both", CVEFilter{EPSSMin: 10000, HasEPSSMin: true, PercentileMin: 500000, HasPercentileMin: true}, "AD"},
		{"kev risk", CVEFilter{KEV: KEVOnly, Sort: SortRisk}, "BGC"},
		{"high epss", CVEFilter{Band: BandHigh, Sort: SortEPSS}, "DBGECF"},
		{"critical risk", CVEFilter{Band: BandCritical, Sort: SortRisk}, "BGCEF"},
		{"risk since", CVEFilter{UpdatedSince: 20240602000000, Sort: SortRisk}, "BCDA"},
		{"risk epss_min", CVEFilter{EPSSMin: 0, HasEPSSMin: true, Sort: SortRisk}, "BGDAE"},
	} {
		l, err := ix.SelectCVEs(tc.f)
		if err != nil {
			t.Fatal(err)
		}
		if got := letters(l); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
	// Without EPSS: no CVE meets an EPSS filter; sort=epss is the usual
	// order; sort=risk is KEV, then CVSS.
	ix = riskIndex(t, false)
	for _, tc := range []struct {
		name string
		f    CVEFilter
		want string
	}{
		{"epss", CVEFilter{Sort: SortEPSS}, "ABCDEFG"},
		{"risk", CVEFilter{Sort: SortRisk}, "CBGFEDA"},
		{"epss_min=0", CVEFilter{HasEPSSMin: true}, ""},
		{"percentile_min=0 high", CVEFilter{Band: BandHigh, HasPercentileMin: true}, ""},
	} {
		l, _ := ix.SelectCVEs(tc.f)
		if got := letters(l); got != tc.want {
			t.Errorf("without EPSS: %s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

// TestEPSSDetails: the details' epss object, numbers as FIRST writes
// them, and null for a CVE without a row or a snapshot without EPSS.
func TestEPSSDetails(t *testing.T) {
	ix := riskIndex(t, true)
	for name, want := range map[string]string{
		"CVE-2024-0001": `"epss":{"score":0.5,"percentile":0.9,"date":"2026-09-29","model":"v2026.06.15"}}`,
		"CVE-2024-0005": `"epss":{"score":0,"percentile":0.05,"date":"2026-09-29","model":"v2026.06.15"}}`,
		"CVE-2024-0003": `"epss":null}`,
	} {
		b, err := ix.AppendDetails(nil, name)
		if err != nil || !strings.HasSuffix(string(b), want) {
			t.Errorf("%s: %v %s, want ending %s", name, err, b, want)
		}
	}
	b, _ := riskIndex(t, false).AppendDetails(nil, "CVE-2024-0001")
	if !strings.HasSuffix(string(b), `"epss":null}`) {
		t.Errorf("without EPSS: %s", b)
	}
	if n, ok := ix.EPSSRows(); n != 5 || !ok {
		t.Errorf("EPSSRows: %d %v", n, ok)
	}
}

func TestAppendMillionths(t *testing.T) {
	for v, want := range map[uint32]string{
		0: "0", 1_000_000: "1", 163170: "0.16317", 968580: "0.96858", 515700: "0.5157",
		40: "0.00004", 1: "0.000001", 100000: "0.1", 999999: "0.999999", 4200: "0.0042",
	} {
		if got := string(AppendMillionths(nil, v)); got != want {
			t.Errorf("%d: %s, want %s", v, got, want)
		}
	}
}

// TestBuildEPSSRefuses: a row for a CVE the index lacks, twice, or out
// of range is invalid data.
func TestBuildEPSSRefuses(t *testing.T) {
	d := &Data{CVEs: []CVE{cve("CVE-2024-0001", "2024-01-01 00:00:00Z")}}
	for _, rows := range []func(func(string, EPSSScores) bool){
		epssRows(map[string]EPSSScores{"CVE-2024-0002": {1, 1}}),
		epssRows(map[string]EPSSScores{"CVE-2024-0001": {1_000_001, 1}}),
		func(yield func(string, EPSSScores) bool) {
			_ = yield("CVE-2024-0001", EPSSScores{1, 1}) && yield("cve-2024-0001", EPSSScores{1, 1})
		},
	} {
		if _, err := Build(d, Meta{EPSS: &EPSSSource{Rows: rows}}); err == nil {
			t.Error("built")
		}
	}
}

// TestSortedMatchesNaive: the three ways Sorted orders a list (the whole
// order, a prefix, a bitmap over the whole order, a sort of a short
// list) agree with a stable sort by key.
func TestSortedMatchesNaive(t *testing.T) {
	const n = 5000
	r := rand.New(rand.NewPCG(3, 4))
	ix := &Index{cveBodies: make([][]byte, n), cveSumEnd: make([]uint32, n), cvssAt: make([]uint8, n),
		epssScore: make([]uint32, n), epssPct: make([]uint32, n), orders: new([SortRisk + 1]sortedOrder)}
	for p := range n {
		ix.cvssAt[p] = uint8(r.IntN(101))
		ix.epssScore[p] = uint32(r.IntN(20)) * 50000 // many ties
		if r.IntN(5) == 0 {
			ix.epssScore[p] = epssNone
		}
	}
	for _, s := range []CVESort{SortEPSS, SortRisk} {
		for i := range 60 {
			var l CVEList
			switch {
			case i == 0:
				l = ix.cveList(nil, true)
			case i == 1:
				l = ix.cveList(nil, true)
				l.src = l.src[:1234]
			default:
				var ids []int32
				density := r.Float64() * r.Float64()
				for p := range int32(n) {
					if r.Float64() < density {
						ids = append(ids, p)
					}
				}
				l = ix.cveList(orEmpty(ids), false)
			}
			want := slices.Clone(positionsOf(l))
			slices.SortStableFunc(want, func(a, b int32) int {
				ka, kb := ix.sortKey(s, a), ix.sortKey(s, b)
				switch {
				case ka > kb:
					return -1
				case ka < kb:
					return 1
				}
				return 0
			})
			if got := positionsOf(l.Sorted(s)); !cmp.Equal(orEmpty(want), orEmpty(got)) {
				t.Fatalf("sort %d, list %d of %d CVEs: differs", s, i, l.Len())
			}
		}
	}
}
