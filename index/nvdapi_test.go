package index

import "testing"

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
