package index

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestCWERelationsFromData: the CVEs citing each CWE, and the CWEs each
// CVE cites (cweAt), are those of the data, whatever the CWE lists look
// like: repeats within a list, names outside the catalog, many CVEs
// sharing one list, lists in different orders.
func TestCWERelationsFromData(t *testing.T) {
	catalog := []CWE{{Name: "CWE-20"}, {Name: "CWE-79"}, {Name: "CWE-89"}, {Name: "CWE-787"}}
	vocab := []string{"CWE-20", "CWE-79", "CWE-89", "CWE-787", "CWE-99999", "NVD-CWE-Other", "NVD-CWE-noinfo"}
	r := rand.New(rand.NewPCG(29, 1))
	cves := make([]CVE, 2000)
	for i := range cves {
		cves[i] = CVE{Name: fmt.Sprintf("CVE-2022-%05d", i+1), CreatedAt: "2022-01-01 00:00:00Z",
			UpdatedAt: fmt.Sprintf("2022-03-%02d 00:00:00Z", i%28+1)}
		for range r.IntN(4) {
			cves[i].CWEs = append(cves[i].CWEs, vocab[r.IntN(len(vocab))])
		}
	}
	ix, err := Build(&Data{CWEs: catalog, CVEs: cves}, Meta{ID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	// The CWEs of each CVE, each once, in the order the CVE cites them.
	cited := map[string][]string{}
	for _, c := range cves {
		var cs []string
		for _, w := range c.CWEs {
			if w != "CWE-99999" && w[:3] == "CWE" && !slices.Contains(cs, w) {
				cs = append(cs, w)
			}
		}
		cited[c.Name] = cs
	}
	all := listNames(t, ix.CVEs(BandNone).List)
	for _, w := range catalog {
		var want []string
		for _, name := range all { // list order
			if slices.Contains(cited[name], w.Name) {
				want = append(want, name)
			}
		}
		l, err := ix.CWECVEs(w.Name)
		if got := listNames(t, l.List); err != nil || !slices.Equal(got, orEmpty(want)) {
			t.Errorf("%s: %d CVEs, want %d (%v)", w.Name, len(got), len(want), err)
		}
	}
	byPos := []string{"CWE-20", "CWE-79", "CWE-89", "CWE-787"} // the catalog by number
	for p, name := range all {
		var got []string
		for _, at := range ix.cweAt[ix.cweOff[p]:ix.cweOff[p+1]] {
			got = append(got, byPos[at])
		}
		if !slices.Equal(got, cited[name]) {
			t.Errorf("%s: CWEs %v at its position, cites %v", name, got, cited[name])
		}
	}
}
