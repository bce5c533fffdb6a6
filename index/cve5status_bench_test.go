package index

import (
	"fmt"
	"testing"
)

// BenchmarkVersionStatus asks the status of one version of the Linux
// kernel CNA's entry of CVE-2024-26581 (nine objects: a single version,
// ranges with 0, P.* and * bounds) and of a CNA's comparison text.
func BenchmarkVersionStatus(b *testing.B) {
	kernel := []AffectedVersion{
		{Version: "6.5", Status: "affected"},
		{Version: "0", VersionType: "semver", LessThan: sp("6.5"), Status: "unaffected"},
		{Version: "5.4.269", VersionType: "semver", LessThanOrEqual: sp("5.4.*"), Status: "unaffected"},
		{Version: "5.10.210", VersionType: "semver", LessThanOrEqual: sp("5.10.*"), Status: "unaffected"},
		{Version: "5.15.149", VersionType: "semver", LessThanOrEqual: sp("5.15.*"), Status: "unaffected"},
		{Version: "6.1.78", VersionType: "semver", LessThanOrEqual: sp("6.1.*"), Status: "unaffected"},
		{Version: "6.6.17", VersionType: "semver", LessThanOrEqual: sp("6.6.*"), Status: "unaffected"},
		{Version: "6.7.5", VersionType: "semver", LessThanOrEqual: sp("6.7.*"), Status: "unaffected"},
		{Version: "6.8", VersionType: "original_commit_for_fix", LessThanOrEqual: sp("*"), Status: "unaffected"},
	}
	def := sp("affected")
	b.Run("kernel", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if VersionStatus(kernel, def, "6.7.4") != "affected" {
				b.Fatal("wrong status")
			}
		}
	})
	cmp := []AffectedVersion{{Version: ">= 4.0.0, < 4.1.2", Status: "affected"}}
	b.Run("comparison", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if VersionStatus(cmp, nil, "4.1.0") != "affected" {
				b.Fatal("wrong status")
			}
		}
	})
}

// productBenchData makes n CVEs under acme/nvd from NVD's CPEs and n
// under acme/cna from CVE JSON 5 entries, the same versions affected on
// both sides, each written as its source writes it: a range from a start
// to a fixed version (a third with no start) and the fix's release
// candidate. NVD: a vulnerable "*" CPE with version_start_including and
// version_end_excluding, and one of the fixed version with update rc1;
// the CNA: an entry of three objects (the range, the release candidate,
// and an unaffected series above the fix) with default unaffected.
func productBenchData(n int) *Data {
	d := &Data{}
	vendor, product := "Acme", "CNA"
	for i := range n {
		lo, hi := fmt.Sprintf("%d.%d", i%7, i%13), fmt.Sprintf("%d.%d.%d", i%7+1, i%5, i%11)
		if i%3 == 0 {
			lo = ""
		}
		mk := func(name string) CVE {
			return CVE{Name: name, Summary: "s", CreatedAt: "2024-01-01 00:00:00Z", UpdatedAt: "2024-01-01 00:00:00Z"}
		}
		nvd := mk(fmt.Sprintf("CVE-2024-%d", 100000+i))
		nvd.CPEs = []CPE{{ID: int64(i + 1), URI: "cpe:2.3:a:acme:nvd:*:*:*:*:*:*:*:*", Vendor: "acme", Product: "nvd", Version: "*",
			Vulnerable: true, VersionStartIncluding: lo, VersionEndExcluding: hi},
			{ID: int64(n + i + 1), URI: "cpe:2.3:a:acme:nvd:" + hi + ":rc1:*:*:*:*:*:*", Vendor: "acme", Product: "nvd", Version: hi, Vulnerable: true}}
		cna := mk(fmt.Sprintf("CVE-2025-%d", 100000+i))
		start := lo
		if start == "" {
			start = "0"
		}
		cna.Affected = []AffectedEntry{{Source: "cna", Vendor: &vendor, Product: &product, DefaultStatus: sp("unaffected"), Versions: []AffectedVersion{
			{Version: start, LessThan: sp(hi), Status: "affected", VersionType: "semver"},
			{Version: fmt.Sprintf("%d.%d.%d-rc1", i%7+1, i%5, i%11), Status: "affected"},
			{Version: fmt.Sprintf("%d.%d.*", i%7+2, i%5), Status: "unaffected", LessThanOrEqual: sp(fmt.Sprintf("%d.%d.*", i%7+2, i%5))},
		}}}
		cna.EntryKeys = []EntryKey{{Vendor: "acme", Product: "cna", Entries: []int{0}}}
		d.CVEs = append(d.CVEs, nvd, cna)
	}
	return d
}

// BenchmarkProductCVEsAt compares ?version= on a product whose CVEs come
// from CVE JSON 5 entries with one of the same size from NVD's CPEs (the
// issue asks the first to be within 10 % of the second), once each
// product's tables are built.
func BenchmarkProductCVEsAt(b *testing.B) {
	ix, err := Build(productBenchData(5000), Meta{})
	if err != nil {
		b.Fatal(err)
	}
	// 3.2.5 is a release; 3.2.5-rc1 a pre-release of a bound, which
	// the CNA product's table answers by asking each entry.
	for _, version := range []string{"3.2.5", "3.2.5-rc1"} {
		for _, product := range []string{"nvd", "cna"} {
			b.Run(product+"/"+version, func(b *testing.B) {
				l, err := ix.ProductCVEsAt("acme", product, version)
				if err != nil || l.Len() == 0 {
					b.Fatalf("%d CVEs, %v", l.Len(), err)
				}
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					if l, _ := ix.ProductCVEsAt("acme", product, version); l.Len() == 0 {
						b.Fatal("no CVE")
					}
				}
			})
		}
	}
}
