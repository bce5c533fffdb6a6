package index

import (
	"bytes"
	"testing"
)

// TestDetailsReorderable: the index puts the details it is given in list
// order; given Reorderable's copy, it serves every CVE's details while the
// details built keep the order they were built in (a build writes them
// in the order of the CVE bodies, and builds them once).
func TestDetailsReorderable(t *testing.T) {
	cves := detailsCVEs()
	// Oldest first: out of list order (newest first), so that the index
	// has to move them.
	b := NewDetailsBuilder()
	var entries []CVEEntry
	for i := range cves {
		if err := b.Add(&cves[i]); err != nil {
			t.Fatal(err)
		}
		e, err := ScanCVE(EncodeCVE(&cves[i]))
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, e)
	}
	d := b.Details()
	var before [][]byte
	for i := range d.Len() {
		before = append(before, d.AppendLine(nil, i))
	}
	ix, err := BuildEntries(nil, entries, d.Reorderable(), nil, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range d.Len() {
		if got := d.AppendLine(nil, i); !bytes.Equal(got, before[i]) {
			t.Errorf("line %d is %q after the index was built, was %q", i, got, before[i])
		}
	}
	want, err := Build(&Data{CVEs: detailsCVEs()}, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cves {
		got, err1 := ix.AppendDetails(nil, c.Name)
		w, err2 := want.AppendDetails(nil, c.Name)
		if err1 != nil || err2 != nil || !bytes.Equal(got, w) {
			t.Errorf("%s: details %s (%v), want %s (%v)", c.Name, got, err1, w, err2)
		}
	}
}
