package loader

import (
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/vulnd/vulnd/index"
)

// TestWriteBuildsDetailsOnce: writing a snapshot builds the details (the
// JSON of every CVE's affected entries among them) once, for the file
// and for the index's check. 1000 CVEs whose entries' JSON is 8 KB each
// make the write allocate 6.6 times these 8 MB more than the same CVEs
// without entries (the JSON is encoded, copied into the details' table,
// quoted and compressed for the file); built twice, the details made it
// 8.8 times. The bound is 7.5.
func TestWriteBuildsDetailsOnce(t *testing.T) {
	const n = 1000
	d := &index.Data{}
	json := 0
	for i := range n {
		c := index.CVE{Name: fmt.Sprintf("CVE-2024-%05d", i+1), CreatedAt: "2024-01-01 00:00:00Z", UpdatedAt: "2024-01-02 00:00:00Z",
			CPEs: []index.CPE{}, CWEs: []string{}, References: []index.Reference{}}
		for j := range 40 {
			v := fmt.Sprintf("%d.%d.%d", i, j, i*j)
			c.Affected = append(c.Affected, index.AffectedEntry{Source: "cna", Vendor: &v, Product: &v,
				Versions: []index.AffectedVersion{{Version: v, Status: "affected", VersionType: "semver", LessThan: &v}}})
		}
		b, err := marshal(c.Affected)
		if err != nil {
			t.Fatal(err)
		}
		json += len(b)
		d.CVEs = append(d.CVEs, c)
	}
	alloc := writeAllocs(t, d)
	for i := range d.CVEs {
		d.CVEs[i].Affected = nil
	}
	alloc -= writeAllocs(t, d)
	t.Logf("the entries' JSON: %.1f MB; the write allocated %.1f MB more with them", float64(json)/(1<<20), float64(alloc)/(1<<20))
	if alloc > 15*uint64(json)/2 {
		t.Errorf("the write allocated %d bytes for %d bytes of the entries' JSON: the details are built more than once", alloc, json)
	}
}

// writeAllocs is how many bytes Write allocates to write d.
func writeAllocs(t *testing.T, d *index.Data) uint64 {
	dir := filepath.Join(t.TempDir(), "snap")
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := Write(dir, d, buildTime, nil); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}
