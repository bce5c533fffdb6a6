package loader

import (
	"fmt"
	"testing"

	"github.com/vulnd/vulnd/index"
)

// diffBenchData makes n previous CVEs and the next day's: 1% changed (a
// CPE added, a score changed, a reference retagged), 0.1% new.
func diffBenchData(n int) (prev, next []index.CVE) {
	mk := func(i int) index.CVE {
		c := index.CVE{Name: fmt.Sprintf("CVE-%d-%05d", 1999+i%28, i), Summary: "summary of a vulnerability"}
		for k := 0; k < 1+i%7; k++ {
			c.CPEs = append(c.CPEs, cpeOf(fmt.Sprintf("cpe:2.3:a:vendor%d:product%d:%d.%d:*:*:*:*:*:*:*", i%4000, i%20000, k, i%10)))
		}
		c.Metrics = []index.Metric{{Version: "3.1", Source: "nvd@nist.gov", Score: float64(i%100) / 10}}
		c.CWEs = []string{"CWE-79"}
		for k := 0; k < 1+i%12; k++ {
			c.References = append(c.References, index.Reference{Link: fmt.Sprintf("https://example.com/%d/%d", i, k), Source: "s", Type: "PATCH", Description: "Patch"})
		}
		return c
	}
	for i := 0; i < n; i++ {
		prev = append(prev, mk(i))
		c := mk(i)
		if i%100 == 0 {
			c.CPEs = append(c.CPEs, cpeOf(fmt.Sprintf("cpe:2.3:a:vendor%d:product%d:9.9:*:*:*:*:*:*:*", i%4000, i%20000)))
			c.Metrics[0].Score = 9.9
			c.References[0].Type = "VENDOR_ADVISORY"
		}
		next = append(next, c)
	}
	for i := n; i < n+n/1000; i++ {
		next = append(next, mk(i))
	}
	return prev, next
}

func BenchmarkDiff(b *testing.B) {
	for _, n := range []int{50_000, 400_000} {
		b.Run(fmt.Sprintf("cves=%d", n), func(b *testing.B) {
			prev, next := diffBenchData(n)
			ids := newIDTables()
			ids.assign(prev)
			ids.assign(next)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				alerts, err := diffCVEs(prev, next, ids, at, nil)
				if err != nil {
					b.Fatal(err)
				}
				if len(alerts) != n/100+n/1000 {
					b.Fatalf("%d alerts, want %d", len(alerts), n/100+n/1000)
				}
			}
		})
	}
}
