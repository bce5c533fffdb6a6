package index

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// positionsOf lists l's CVE positions.
func positionsOf(l CVEList) []int32 {
	if l.sub {
		return l.ids
	}
	out := make([]int32, len(l.src))
	for i := range out {
		out[i] = int32(i)
	}
	return out
}

func TestAndMatchesNaive(t *testing.T) {
	ix := &Index{cveBodies: make([][]byte, 5000), cveSumEnd: make([]uint32, 5000)}
	r := rand.New(rand.NewPCG(1, 2))
	random := func(density float64) CVEList {
		var ids []int32
		for p := range int32(5000) {
			if r.Float64() < density {
				ids = append(ids, p)
			}
		}
		return ix.cveList(orEmpty(ids), false)
	}
	naive := func(a, b []int32) []int32 {
		out := []int32{}
		for _, p := range a {
			if _, ok := slices.BinarySearch(b, p); ok {
				out = append(out, p)
			}
		}
		return out
	}
	all := ix.cveList(nil, true)
	prefix := all
	prefix.src = prefix.src[:1234]
	for i := range 200 {
		x, y := random(r.Float64()*0.3), random(r.Float64())
		if i%7 == 0 {
			x = ix.NoCVEs()
		}
		for _, pair := range [][2]CVEList{{x, y}, {y, x}, {all, y}, {y, all}, {prefix, y}, {y, prefix}, {all, prefix}} {
			want := naive(positionsOf(pair[0]), positionsOf(pair[1]))
			if got := positionsOf(pair[0].And(pair[1])); !cmp.Equal(want, got) {
				t.Fatalf("And: %d and %d positions: got %d, want %d", pair[0].Len(), pair[1].Len(), len(got), len(want))
			}
		}
	}
}

// TestPublishedSinceCreatedAfterUpdated: when some CVE says it was created
// after it was last updated, published_since must not trust the
// updated_at order.
func TestPublishedSinceCreatedAfterUpdated(t *testing.T) {
	mk := func(name, created, updated string) CVE {
		return CVE{Name: name, Summary: "s", CreatedAt: created, UpdatedAt: updated}
	}
	for _, odd := range []bool{false, true} {
		d := &Data{CVEs: []CVE{
			mk("CVE-2024-0001", "2024-01-01 00:00:00Z", "2024-03-01 00:00:00Z"),
			mk("CVE-2024-0002", "2024-01-05 00:00:00Z", "2024-02-01 00:00:00Z"),
		}}
		if odd {
			// Created 2024-06-01, updated before that: last in list order.
			d.CVEs = append(d.CVEs, mk("CVE-2024-0003", "2024-06-01 00:00:00Z", "2024-01-02 00:00:00Z"))
		}
		ix, err := Build(d, Meta{ID: "x"})
		if err != nil {
			t.Fatal(err)
		}
		if ix.createdNotAfterUpdated == odd {
			t.Errorf("odd=%v: createdNotAfterUpdated %v", odd, ix.createdNotAfterUpdated)
		}
		got := ix.CVEs(BandNone).PublishedSince(TimeKey(time.Date(2024, 1, 3, 0, 0, 0, 0, time.UTC)))
		want := []int32{1}
		if odd {
			want = []int32{1, 2}
		}
		if !cmp.Equal(positionsOf(got), want) {
			t.Errorf("odd=%v: published since 2024-01-03: positions %v, want %v", odd, positionsOf(got), want)
		}
	}
}

func TestTimeKey(t *testing.T) {
	for _, tc := range []struct {
		t    time.Time
		want uint64
	}{
		{time.Date(2024, 2, 29, 23, 59, 59, 999, time.UTC), 20240229235959},
		{time.Date(2024, 3, 1, 1, 0, 0, 0, time.FixedZone("x", 3600)), 20240301000000},
		{time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), 10101000000},
		{time.Date(12000, 1, 1, 0, 0, 0, 0, time.UTC), 99991231235959},
		{time.Date(-5, 1, 1, 0, 0, 0, 0, time.UTC), 0},
	} {
		if got := TimeKey(tc.t); got != tc.want {
			t.Errorf("TimeKey(%v) = %d, want %d", tc.t, got, tc.want)
		}
	}
	if got := formatTimeKey(20240301000000); got != "2024-03-01 00:00:00Z" {
		t.Errorf("formatTimeKey: %s", got)
	}
}

func TestSearchText(t *testing.T) {
	names := []string{"acme", "apache_software_foundation", "beta", "microsoft", "x"}
	st := newSearchText(names)
	for _, tc := range []struct {
		q    string
		want []int32
	}{
		{"A", []int32{0, 1, 2}},
		{"apache software", []int32{1}}, // the human name has spaces
		{"apache_software", []int32{1}},
		{"soft", []int32{1, 3}},
		{"x", []int32{4}},
		{"ex", []int32{}}, // never across two items
		{"e\x00", []int32{}},
		{"", []int32{}},
	} {
		if got := st.find(tc.q, 0, len(names)); !cmp.Equal(got, tc.want) {
			t.Errorf("find(%q) = %v, want %v", tc.q, got, tc.want)
		}
	}
	// Within items 1 to 3 (a vendor's products), positions from item 1.
	for _, tc := range []struct {
		q      string
		lo, hi int
		want   []int32
	}{
		{"a", 1, 4, []int32{0, 1}},
		{"soft", 1, 4, []int32{0, 2}},
		{"soft", 2, 4, []int32{1}},
		{"acme", 1, 5, []int32{}},      // before the range
		{"x", 0, 4, []int32{}},         // after it
		{"microsoft", 3, 3, []int32{}}, // an empty range
		{"x", 4, 5, []int32{0}},
	} {
		if got := st.find(tc.q, tc.lo, tc.hi); !cmp.Equal(got, tc.want) {
			t.Errorf("find(%q, %d, %d) = %v, want %v", tc.q, tc.lo, tc.hi, got, tc.want)
		}
	}
}

// TestInBand: filtering a list CVE by CVE gives what intersecting it with
// the band's list gives.
func TestInBand(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	d := &Data{}
	for i := range 500 {
		d.CVEs = append(d.CVEs, CVE{Name: "CVE-2024-" + strconv.Itoa(10000+i), Summary: "s",
			CreatedAt: "2024-01-01 00:00:00Z", UpdatedAt: "2024-01-0" + strconv.Itoa(1+r.IntN(9)) + " 00:00:00Z",
			CVSS: CVSS{Score: float64(r.IntN(101)) / 10}})
	}
	ix, err := Build(d, Meta{ID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	var some []int32
	for p := range int32(500) {
		if r.IntN(3) == 0 {
			some = append(some, p)
		}
	}
	lists := []CVEList{ix.CVEs(BandNone), ix.CVEs(BandNone).UpdatedSince(20240105000000), ix.cveList(some, false), ix.NoCVEs()}
	for _, l := range lists {
		for _, b := range []Band{BandLow, BandMedium, BandHigh, BandCritical} {
			want := positionsOf(l.And(ix.CVEs(b)))
			got := positionsOf(l.InBand(b))
			if !cmp.Equal(want, got) || len(want) == 0 && l.Len() > 100 {
				t.Errorf("band %d of %d CVEs: %d, want %d", b, l.Len(), len(got), len(want))
			}
		}
		if l.InBand(BandNone).Len() != l.Len() {
			t.Error("BandNone filtered")
		}
	}
}

// TestCitingCWE: checking each CVE's CWEs gives what intersecting with the
// CWE's list gives, CWEs cited twice and CWEs outside the catalog included.
func TestCitingCWE(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	cwe := func(n string) CWE {
		return CWE{Name: n, Description: "d", Type: "Weakness Base", CreatedAt: "2006-07-19 00:00:00Z", UpdatedAt: "2024-02-29 00:00:00Z"}
	}
	d := &Data{CWEs: []CWE{cwe("CWE-1"), cwe("CWE-2"), cwe("CWE-3")}}
	names := []string{"CWE-1", "CWE-2", "CWE-3", "CWE-999", "NVD-CWE-noinfo"}
	for i := range 400 {
		var cwes []string
		for range r.IntN(4) {
			cwes = append(cwes, names[r.IntN(len(names))])
		}
		d.CVEs = append(d.CVEs, CVE{Name: "CVE-2024-" + strconv.Itoa(10000+i), Summary: "s", CWEs: cwes,
			CreatedAt: "2024-01-01 00:00:00Z", UpdatedAt: "2024-01-0" + strconv.Itoa(1+r.IntN(9)) + " 00:00:00Z"})
	}
	ix, err := Build(d, Meta{ID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	var some []int32
	for p := range int32(400) {
		if r.IntN(4) == 0 {
			some = append(some, p)
		}
	}
	for _, l := range []CVEList{ix.CVEs(BandNone), ix.CVEs(BandNone).UpdatedSince(20240105000000), ix.cveList(some, false)} {
		for _, n := range []string{"CWE-1", "cwe-2", "CWE-3"} {
			m, _ := ix.CWECVEs(n)
			got, err := l.CitingCWE(n)
			if want := positionsOf(l.And(m)); err != nil || !cmp.Equal(want, positionsOf(got)) || len(want) == 0 {
				t.Errorf("%s on %d CVEs: %d, want %d", n, l.Len(), got.Len(), len(want))
			}
		}
		if got, err := l.CitingCWE("CWE-999"); err != ErrCWENotFound || got.Len() != 0 {
			t.Errorf("a CWE outside the catalog: %v, %d CVEs", err, got.Len())
		}
	}
}

// TestSelectCVEs: SelectCVEs gives what intersecting the lists of each
// part of the filter gives, on both sides of its choice between
// intersecting with a CWE's list and checking each CVE's CWEs, and fails
// with the error of the name it lacks.
func TestSelectCVEs(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	cwe := func(n string) CWE {
		return CWE{Name: n, Description: "d", Type: "Weakness Base", CreatedAt: "2006-07-19 00:00:00Z", UpdatedAt: "2024-02-29 00:00:00Z"}
	}
	d := &Data{CWEs: []CWE{cwe("CWE-1"), cwe("CWE-2"), cwe("CWE-3")}}
	for i := range 600 {
		var cwes []string
		if r.IntN(2) == 0 {
			cwes = append(cwes, "CWE-1") // common
		}
		if r.IntN(100) == 0 {
			cwes = append(cwes, "CWE-2") // rare: fewer than an eighth of v's
		}
		var cpes []CPE
		for _, vp := range [][2]string{{"v", "p"}, {"v", "q"}, {"w", "p"}} {
			if r.IntN(3) == 0 {
				cpes = append(cpes, CPE{URI: "cpe:2.3:a:" + vp[0] + ":" + vp[1] + ":1.0:*:*:*:*:*:*:*", Vendor: vp[0], Product: vp[1], Version: "1.0", Vulnerable: true})
			}
		}
		d.CVEs = append(d.CVEs, CVE{Name: "CVE-2024-" + strconv.Itoa(10000+i), Summary: "s", CWEs: cwes, CPEs: cpes,
			CreatedAt: "2024-01-0" + strconv.Itoa(1+r.IntN(5)) + " 00:00:00Z", UpdatedAt: "2024-01-0" + strconv.Itoa(5+r.IntN(5)) + " 00:00:00Z",
			CVSS: CVSS{Score: float64(r.IntN(101)) / 10}})
	}
	ix, err := Build(d, Meta{ID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []CVEFilter{
		{},
		{Band: BandHigh},
		{CWE: "cwe-1", HasCWE: true},
		{Vendor: "v", HasVendor: true, Band: BandMedium},
		{CWE: "CWE-1", HasCWE: true, Vendor: "v", HasVendor: true},
		{CWE: "CWE-2", HasCWE: true, Vendor: "v", HasVendor: true},
		{CWE: "CWE-1", HasCWE: true, Vendor: "v", HasVendor: true, Product: "p", HasProduct: true, Band: BandLow},
		{Vendor: "v", HasVendor: true, Product: "q", HasProduct: true, Version: "1.0", HasVersion: true},
		{Vendor: "w", HasVendor: true, UpdatedSince: 20240107000000, PublishedSince: 20240103000000},
		{Band: BandCritical, UpdatedSince: 20240108000000},
	} {
		want := ix.CVEs(f.Band)
		if f.HasCWE {
			m, _ := ix.CWECVEs(f.CWE)
			want = want.And(m)
		}
		switch {
		case f.HasVersion:
			m, _ := ix.ProductCVEsAt(f.Vendor, f.Product, f.Version)
			want = want.And(m)
		case f.HasProduct:
			m, _ := ix.ProductCVEs(f.Vendor, f.Product)
			want = want.And(m)
		case f.HasVendor:
			m, _ := ix.VendorCVEs(f.Vendor)
			want = want.And(m)
		}
		want = want.UpdatedSince(f.UpdatedSince).PublishedSince(f.PublishedSince)
		got, err := ix.SelectCVEs(f)
		if err != nil || !cmp.Equal(positionsOf(want), positionsOf(got)) || want.Len() == 0 {
			t.Errorf("%+v: %v, %d CVEs, want %d", f, err, got.Len(), want.Len())
		}
	}
	for _, tc := range []struct {
		f    CVEFilter
		want error
	}{
		{CVEFilter{CWE: "CWE-999", HasCWE: true, Vendor: "v", HasVendor: true}, ErrCWENotFound},
		{CVEFilter{Vendor: "x", HasVendor: true}, ErrVendorNotFound},
		{CVEFilter{Vendor: "v", HasVendor: true, Product: "x", HasProduct: true}, ErrProductNotFound},
		{CVEFilter{Vendor: "x", HasVendor: true, Product: "p", HasProduct: true, Version: "1.0", HasVersion: true}, ErrVendorNotFound},
	} {
		if got, err := ix.SelectCVEs(tc.f); err != tc.want || got.Len() != 0 {
			t.Errorf("%+v: %v, %d CVEs, want %v", tc.f, err, got.Len(), tc.want)
		}
	}
}
