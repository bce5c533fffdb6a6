package index

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestListOrderAsBefore: the list order sorted by keys is the one the
// entries' numbers sorted by reading the entries gave, ties included
// (names differing only by leading zeros, same updated_at).
func TestListOrderAsBefore(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 2))
	var cves []CVE
	for i := range 5000 {
		digits := "%04d"
		if i%7 == 0 {
			digits = "%05d"
		}
		cves = append(cves, CVE{Name: fmt.Sprintf("CVE-%d-"+digits, 2015+r.IntN(3), r.IntN(3000)), CreatedAt: "2015-01-01 00:00:00Z",
			UpdatedAt: fmt.Sprintf("2024-01-%02d 00:00:00Z", 1+r.IntN(3))})
	}
	slices.SortFunc(cves, func(a, b CVE) int { return cmp.Compare(a.Name, b.Name) })
	cves = slices.CompactFunc(cves, func(a, b CVE) bool { return a.Name == b.Name })
	entries := make([]CVEEntry, len(cves))
	for i := range cves {
		var err error
		if entries[i], err = ScanCVE(EncodeCVE(&cves[i])); err != nil {
			t.Fatal(err)
		}
	}
	// The order as it was sorted before.
	order := make([]int32, len(entries))
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		x, y := &entries[a], &entries[b]
		if x.updated != y.updated {
			return cmp.Compare(y.updated, x.updated)
		}
		if x.year != y.year {
			return cmp.Compare(y.year, x.year)
		}
		return cmp.Compare(y.num, x.num)
	})
	var want []string
	for _, k := range order {
		want = append(want, cves[k].Name)
	}
	ix, err := BuildEntries(nil, entries, nil, nil, Meta{ID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if got := listNames(t, ix.CVEs(BandNone).List); !slices.Equal(got, want) {
		t.Errorf("list order differs from the one sorted by entries")
	}
}
