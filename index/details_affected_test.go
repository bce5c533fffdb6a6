package index

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestDetailsAffected: Affected gives back each CVE's entries as stored,
// without PackageName, and nil for a CVE without any; a text that is not
// entries is an error, not a panic.
func TestDetailsAffected(t *testing.T) {
	cves := detailsCVEs()
	b := NewDetailsBuilder()
	for i := range cves {
		if err := b.Add(&cves[i]); err != nil {
			t.Fatal(err)
		}
	}
	d := b.Details()
	for i, c := range cves {
		got, err := d.Affected(i)
		if err != nil {
			t.Fatal(err)
		}
		want := c.Affected
		for j := range want {
			want[j].PackageName = nil
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s entries (-want +got):\n%s", c.Name, diff)
		}
	}
	d.strs = append(d.strs, `[{"source":1}]`)
	d.cves[0].affected = uint32(len(d.strs) - 1)
	if _, err := d.Affected(0); err == nil {
		t.Error("entries of a bad text, want an error")
	}
}
