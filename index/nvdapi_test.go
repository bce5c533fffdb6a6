package index

import (
	"slices"
	"testing"
)

// FuzzParseNVDCPE: ParseNVDCPE never panics; what it accepts has 11
// parts, none empty, and a whole name is accepted only with all 13.
func FuzzParseNVDCPE(f *testing.F) {
	for _, s := range []string{"cpe:2.3:a:apache:log4j:2.0:beta9:*:*:*:*:*:*", "cpe:2.3:a:apache:log4j", "cpe:2.3:a:a\\:b:c",
		"cpe:2.3:a:x:y:1:*:*:*:*:*:*:*:*", "cpe:2.3:", "CPE:2.3:O:Linux:Linux_Kernel:6.8:rc1:*:*:*:*:*:*", "cpe:2.3:a::b"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, s string, whole bool) {
		c, err := ParseNVDCPE(s, whole)
		if err != nil {
			return
		}
		for i, p := range c.Comps {
			if p == "" {
				t.Fatalf("%q: part %d empty", s, i)
			}
		}
		m := nvdCPEMatch{Criteria: s, VersionEndExcluding: "2.0"}
		c.matches(&m) // never panics
		c.Names()
	})
}

// TestNVDOrder: NVDOrder puts records in CompareNVD's order, written out
// by hand: published oldest first (a time with a zone read as UTC, one
// that is not a time as 0, the Unix epoch), then CVE year, number, name.
func TestNVDOrder(t *testing.T) {
	facts := []NVDFacts{
		{ID: "CVE-2024-10000", Published: "2024-06-07T10:15:12.293"},
		{ID: "CVE-2023-9", Published: "2024-06-07T10:15:12.293"},
		{ID: "CVE-2024-999", Published: "2024-06-07T10:15:12.293"},
		{ID: "CVE-1999-0001", Published: "not a time"},
		{ID: "CVE-2024-1", Published: "2024-06-07T12:15:12.293+02:00"}, // 10:15:12.293Z
		{ID: "CVE-2021-44228", Published: "2021-12-10T10:15:09.143"},
		{ID: "CVE-2024-2", Published: "2024-06-07T10:15:12.2935"}, // the same millisecond
		{ID: "CVE-1999-0002", Published: "1969-12-31T23:59:59.999"},
	}
	want := []int{7, 3, 5, 1, 4, 6, 2, 0}
	got := NVDOrder(len(facts), func(i int) *NVDFacts { return &facts[i] })
	if !slices.Equal(got, want) {
		t.Errorf("NVDOrder = %v, want %v", got, want)
	}
	for i := 1; i < len(got); i++ {
		if CompareNVD(&facts[got[i-1]], &facts[got[i]]) >= 0 {
			t.Errorf("%s before %s, against CompareNVD", facts[got[i-1]].ID, facts[got[i]].ID)
		}
	}
}
