package main

import (
	"path/filepath"
	"sort"
	"testing"
	"time"
)

// TestDistributions checks the shapes issue 5 asks of the data (see
// bench/README.md, "Synthetic data") on a set large enough for tails to
// show: which CVSS versions exist in which era, a few percent without
// metrics, heavy-tailed vendors and CPE matches, version ranges. Bounds
// are loose: they say what NVD's shape is, not what this seed draws.
func TestDistributions(t *testing.T) {
	const n = 5000
	dir := writeSet(t, n, 1)
	var (
		v40Start = time.Date(2023, 11, 1, 0, 0, 0, 0, time.UTC) // CVSS 4.0 published
		v2End    = time.Date(2022, 7, 13, 0, 0, 0, 0, time.UTC) // NVD stops scoring CVSS 2.0
	)
	type era struct{ n, v2, v31, v40 int }
	eras := map[string]*era{"2005-2014": {}, "2020-2021": {}, "2025-2026": {}}
	eraOf := func(y int) *era {
		switch {
		case y >= 2005 && y <= 2014:
			return eras["2005-2014"]
		case y >= 2020 && y <= 2021:
			return eras["2020-2021"]
		case y >= 2025:
			return eras["2025-2026"]
		}
		return nil
	}
	live, noMetrics, withMatches, ranged := 0, 0, 0, 0
	var matchCounts, refCounts []int
	vendorCVEs := map[string]int{}
	for y := firstYear; y <= lastYear; y++ {
		for _, v := range readFeed(t, filepath.Join(dir, FeedName(y))).Vulnerabilities {
			c := v.CVE
			if c.VulnStatus == "Rejected" {
				continue
			}
			live++
			pub, err := time.Parse(timeLayout, c.Published)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := c.Metrics["cvssMetricV40"]; ok && pub.Before(v40Start) {
				t.Errorf("%s: CVSS 4.0 metric on a CVE published %s, before CVSS 4.0 existed", c.ID, c.Published)
			}
			for _, m := range c.Metrics["cvssMetricV2"] {
				if m.Source == nvdSource && !pub.Before(v2End) {
					t.Errorf("%s: NVD CVSS 2.0 metric on a CVE published %s, after NVD stopped scoring 2.0", c.ID, c.Published)
				}
			}
			if len(c.Metrics) == 0 {
				noMetrics++
			}
			if e := eraOf(pub.Year()); e != nil {
				e.n++
				_, v2 := c.Metrics["cvssMetricV2"]
				_, v31 := c.Metrics["cvssMetricV31"]
				_, v40 := c.Metrics["cvssMetricV40"]
				for _, x := range []struct {
					has bool
					cnt *int
				}{{v2, &e.v2}, {v31, &e.v31}, {v40, &e.v40}} {
					if x.has {
						*x.cnt++
					}
				}
			}
			refCounts = append(refCounts, len(c.References))
			matches, hasRange := 0, false
			vendors := map[string]bool{}
			for _, conf := range c.Configurations {
				for _, node := range conf.Nodes {
					for _, m := range node.CPEMatch {
						matches++
						if m.VersionStartIncluding != "" || m.VersionStartExcluding != "" ||
							m.VersionEndIncluding != "" || m.VersionEndExcluding != "" {
							hasRange = true
						}
						if m.Vulnerable {
							vendors[splitCPE(m.Criteria)[3]] = true
						}
					}
				}
			}
			for v := range vendors {
				vendorCVEs[v]++
			}
			if matches > 0 {
				withMatches++
				matchCounts = append(matchCounts, matches)
				if hasRange {
					ranged++
				}
			}
		}
	}
	share := func(a, b int) float64 { return float64(a) / float64(b) }

	// Metric mix by year: v2 for old CVEs, v3.1 for newer, v4.0 for recent.
	for _, name := range []string{"2005-2014", "2020-2021", "2025-2026"} {
		e := eras[name]
		t.Logf("%s: %d CVEs, v2 %.2f, v3.1 %.2f, v4.0 %.2f", name, e.n, share(e.v2, e.n), share(e.v31, e.n), share(e.v40, e.n))
	}
	if e := eras["2005-2014"]; share(e.v2, e.n) < 0.8 || e.v40 != 0 {
		t.Errorf("2005-2014: v2 on %d and v4.0 on %d of %d CVEs, want most with v2 and none with v4.0", e.v2, e.v40, e.n)
	}
	if e := eras["2020-2021"]; share(e.v31, e.n) < 0.8 || e.v40 != 0 {
		t.Errorf("2020-2021: v3.1 on %d and v4.0 on %d of %d CVEs, want most with v3.1 and none with v4.0", e.v31, e.v40, e.n)
	}
	if e := eras["2025-2026"]; share(e.v31, e.n) < 0.6 || share(e.v40, e.n) < 0.2 || share(e.v2, e.n) > 0.3 {
		t.Errorf("2025-2026: v2 %d, v3.1 %d, v4.0 %d of %d CVEs, want v3.1 on most, v4.0 on a good share, little v2",
			e.v2, e.v31, e.v40, e.n)
	}
	// None for a few percent.
	if s := share(noMetrics, live); s < 0.01 || s > 0.10 {
		t.Errorf("%.3f of live CVEs have no metrics, want a few percent", s)
	}

	// CPE matches: most CVEs a few, some hundreds.
	sort.Ints(matchCounts)
	p50, p99, top := matchCounts[len(matchCounts)/2], matchCounts[len(matchCounts)*99/100], matchCounts[len(matchCounts)-1]
	t.Logf("CPE matches per CVE with matches: p50 %d, p99 %d, max %d", p50, p99, top)
	if p50 > 5 || p99 < 30 || top < 100 {
		t.Errorf("CPE matches per CVE: p50 %d, p99 %d, max %d; want p50 <= 5, p99 >= 30, max >= 100", p50, p99, top)
	}
	if s := share(ranged, withMatches); s < 0.25 || s > 0.75 {
		t.Errorf("%.2f of CVEs with matches have a version range, want a large minority to a majority", s)
	}

	// CVEs per vendor: Zipf-like, a few vendors carry many, most a few.
	counts := make([]int, 0, len(vendorCVEs))
	for _, c := range vendorCVEs {
		counts = append(counts, c)
	}
	sort.Ints(counts)
	med, most := counts[len(counts)/2], counts[len(counts)-1]
	t.Logf("%d vendors, CVEs per vendor: median %d, max %d", len(counts), med, most)
	if med > 4 || most < 100*med || share(most, withMatches) < 0.02 {
		t.Errorf("CVEs per vendor: median %d, max %d of %d CVEs; want median <= 4, max >= 100 medians and >= 2%% of CVEs",
			med, most, withMatches)
	}

	// References: 1-30 (checked per record in checkCVE), most a few.
	sort.Ints(refCounts)
	if med := refCounts[len(refCounts)/2]; med < 2 || med > 6 {
		t.Errorf("median references per CVE %d, want a few", med)
	}
}
