package index

import (
	"fmt"
	"runtime"
	"testing"
)

// TestDetailsAddAffectedOnceAllocs: a CVE's affected entries are encoded
// for its details once, and the encoding held as it is, not copied again
// into a string (what a CVE JSON 5 record's entries cost a build twice).
func TestDetailsAddAffectedOnceAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	var es []AffectedEntry
	for i := range 400 {
		v, p := fmt.Sprintf("vendor-%d", i), fmt.Sprintf("product-%d", i)
		es = append(es, AffectedEntry{Source: "cna", Vendor: &v, Product: &p,
			Versions: []AffectedVersion{{Version: "1.0", Status: "affected", VersionType: "semver"}}})
	}
	c := &CVE{Name: "CVE-2024-0001", Affected: es}
	size := len(encode(es))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	NewDetailsBuilder().Add(c) // go-json's buffers, once
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	b := NewDetailsBuilder()
	if err := b.Add(c); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("entries of %d bytes encoded: %d bytes allocated", size, alloc)
	if alloc > uint64(size)*3/2 {
		t.Errorf("adding entries of %d bytes encoded allocated %d bytes: they are copied", size, alloc)
	}
}
