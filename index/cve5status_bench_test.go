package index

import "testing"

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
