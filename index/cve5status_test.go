package index

import (
	"testing"
)

func sp(s string) *string { return &s }

// statusCase is one version asked of one list of version objects: want is
// the status, and at the index of the object that decides it (-1: the
// default status).
type statusCase struct {
	x    string
	want string
	at   int
}

func checkStatuses(t *testing.T, name string, vs []AffectedVersion, def *string, cases []statusCase) {
	t.Helper()
	for _, c := range cases {
		e := AffectedEntry{Versions: vs, DefaultStatus: def}
		if got := e.StatusAt(c.x); got != c.want {
			t.Errorf("%s: status of %q = %q, want %q", name, c.x, got, c.want)
		}
		if got := matchIndex(vs, c.x); got != c.at {
			t.Errorf("%s: %q is decided by object %d, want %d", name, c.x, got, c.at)
		}
		// The table ProductCVEsAt compiles the entry into answers alike.
		b := newEntryTableBuilder()
		b.add(7, []AffectedEntry{e})
		got := b.table().match(c.x)
		if want := c.want == StatusAffected; (len(got) == 1 && got[0] == 7) != want || len(got) > 1 {
			t.Errorf("%s: the entry table gives %q %v, want affected %v", name, c.x, got, want)
		}
	}
}

// TestVersionStatusDecisions checks the examples of the API decisions
// ("CVE records of the CVE Program, JSON 5"). The version objects are
// those of the real records in ../shared/data/cve5, copied here by hand;
// loader's TestReadCVE5RealExamples asks the same of the records as read.
func TestVersionStatusDecisions(t *testing.T) {
	// CVE-2024-47177 (vulnrichment-sample.json.gz), the CNA's entry
	// OpenPrinting/cups-filters: one object {"version": "<= 2.0.1",
	// "status": "affected"}, no defaultStatus. "<= 2.0.1" is a comparison:
	// 2.0.1 <= 2.0.1 holds, 2.0.2 <= 2.0.1 does not, so 2.0.2 takes the
	// default, absent: unknown (not affected).
	checkStatuses(t, "CVE-2024-47177 cups-filters",
		[]AffectedVersion{{Version: "<= 2.0.1", Status: "affected"}}, nil,
		[]statusCase{
			{"2.0.1", "affected", 0},
			{"2.0.2", "unknown", -1},
			{"1.28.17", "affected", 0}, // 1.28.17 < 2.0.1
			{"2.0.1-rc1", "affected", 0},
		})
	// Its CISA-ADP entry openprinting/cpdb-libs: {"version": "0",
	// "versionType": "custom", "lessThanOrEqual": "2.0.1", "status":
	// "affected"}, defaultStatus unknown: 0 is no lower bound, so every
	// X <= 2.0.1 is affected.
	checkStatuses(t, "CVE-2024-47177 cpdb-libs",
		[]AffectedVersion{{Version: "0", VersionType: "custom", LessThanOrEqual: sp("2.0.1"), Status: "affected"}}, sp("unknown"),
		[]statusCase{
			{"0", "affected", 0},
			{"2.0.1", "affected", 0},
			{"2.0.1a", "unknown", -1}, // a letter after 2.0.1 comes after it
			{"2.0.2", "unknown", -1},
		})
	// CVE-2023-5631 (cvelistV5-sample.json.gz), Roundcube/Roundcubemail,
	// defaultStatus unaffected, objects in record order:
	//   0: 1.6.0 <= X < 1.6.3 affected (semver)
	//   1: 1.5.0 <= X < 1.5.4 affected
	//   2: 1.4.0 <= X < 1.5.14 affected
	//   3: 1.6.4 unaffected; 4: 1.5.5 unaffected; 5: 1.5.15 unaffected
	// 1.5.3: not in [1.6.0, 1.6.3); in [1.5.0, 1.5.4): object 1.
	// 1.5.10: not in 0 or 1 (1.5.10 >= 1.5.4); in [1.4.0, 1.5.14): object
	// 2, affected, as the record says (though the description says 1.5.x
	// before 1.5.5). 1.6.4: no range holds it (1.6.4 >= 1.6.3, >= 1.5.4,
	// >= 1.5.14), object 3 equals it: unaffected.
	roundcube := []AffectedVersion{
		{Version: "1.6.0", VersionType: "semver", LessThan: sp("1.6.3"), Status: "affected"},
		{Version: "1.5.0", VersionType: "semver", LessThan: sp("1.5.4"), Status: "affected"},
		{Version: "1.4.0", VersionType: "semver", LessThan: sp("1.5.14"), Status: "affected"},
		{Version: "1.6.4", Status: "unaffected"},
		{Version: "1.5.5", Status: "unaffected"},
		{Version: "1.5.15", Status: "unaffected"},
	}
	checkStatuses(t, "CVE-2023-5631", roundcube, sp("unaffected"), []statusCase{
		{"1.5.3", "affected", 1},
		{"1.5.10", "affected", 2},
		{"1.6.4", "unaffected", 3},
		{"1.6.2", "affected", 0},
		{"1.6.3", "unaffected", -1},     // lessThan 1.6.3 leaves 1.6.3 out; default
		{"1.6.3-rc1", "unaffected", -1}, // counts as 1.6.3 against the bound 1.6.3
		{"1.3.9", "unaffected", -1},
	})
}

// TestVersionStatusSchemaDocs checks every example of cve-schema's
// docs/versions.md ("CVE 5.0 Product and Version Encodings"), each worked
// out by hand from the text quoted.
func TestVersionStatusSchemaDocs(t *testing.T) {
	// "this version object specifies that semantic versions starting at
	// 2.0.0 up to and including 2.5.1 are affected": version <= V <=
	// lessThanOrEqual. No defaultStatus: unknown elsewhere.
	checkStatuses(t, "2.0.0 through 2.5.1",
		[]AffectedVersion{{Version: "2.0.0", VersionType: "semver", LessThanOrEqual: sp("2.5.1"), Status: "affected"}}, nil,
		[]statusCase{{"2.0.0", "affected", 0}, {"2.5.1", "affected", 0}, {"2.5.2", "unknown", -1}, {"1.9", "unknown", -1}})
	// "... starting at 2.0.0 up to but not including 2.5.2 are affected".
	checkStatuses(t, "2.0.0 up to 2.5.2",
		[]AffectedVersion{{Version: "2.0.0", VersionType: "semver", LessThan: sp("2.5.2"), Status: "affected"}}, nil,
		[]statusCase{{"2.5.1", "affected", 0}, {"2.5.2", "unknown", -1}})
	// "version 2.0.0 through 2.5.1 are affected, and all other versions
	// ... unaffected": defaultStatus unaffected.
	checkStatuses(t, "2.0.0 through 2.5.1, default unaffected",
		[]AffectedVersion{{Version: "2.0.0", VersionType: "semver", LessThanOrEqual: sp("2.5.1"), Status: "affected"}}, sp("unaffected"),
		[]statusCase{{"1.0", "unaffected", -1}, {"2.3", "affected", 0}, {"2.5.2", "unaffected", -1}})
	// "2.5.2 and later are unaffected and everything else affected":
	// {2.5.2, lessThan *} unaffected, defaultStatus affected. "*" is no
	// upper bound.
	checkStatuses(t, "2.5.2 and later unaffected",
		[]AffectedVersion{{Version: "2.5.2", VersionType: "semver", LessThan: sp("*"), Status: "unaffected"}}, sp("affected"),
		[]statusCase{{"2.5.1", "affected", -1}, {"2.5.2", "unaffected", 0}, {"10.0", "unaffected", 0}})
	// "a vulnerability researcher who has tested a few specific versions":
	// 2.4 affected, 2.5 affected, 2.6 unaffected, default unknown.
	tested := []AffectedVersion{{Version: "2.4", Status: "affected"}, {Version: "2.5", Status: "affected"}, {Version: "2.6", Status: "unaffected"}}
	checkStatuses(t, "tested versions", tested, nil,
		[]statusCase{{"2.4", "affected", 0}, {"2.5", "affected", 1}, {"2.5.0", "affected", 1}, {"2.6", "unaffected", 2}, {"2.4.1", "unknown", -1}, {"2.7", "unknown", -1}})
	// "a vendor that knows there are exactly two affected versions": 2.4
	// and 2.5 affected, defaultStatus unaffected.
	checkStatuses(t, "exactly two", tested[:2], sp("unaffected"),
		[]statusCase{{"2.4", "affected", 0}, {"2.5", "affected", 1}, {"2.6", "unaffected", -1}, {"2.4.1", "unaffected", -1}})
	// {"version": "1.0", "lessThan": "2.*"}: "says that the entire 1.X and
	// 2.X version series are affected".
	checkStatuses(t, "1.0 up to 2.*",
		[]AffectedVersion{{Version: "1.0", VersionType: "semver", LessThan: sp("2.*"), Status: "affected"}}, nil,
		[]statusCase{{"1.0", "affected", 0}, {"1.9.9", "affected", 0}, {"2.0", "affected", 0}, {"2.99.1", "affected", 0}, {"3.0", "unknown", -1}, {"0.9", "unknown", -1}})
	// "2.0.0 up to but not including 2.5.2 are affected", then "2.5.2
	// through 2.x.x unaffected" as {2.5.2, lessThan 2.*} unaffected.
	checkStatuses(t, "two ranges",
		[]AffectedVersion{
			{Version: "2.0.0", VersionType: "semver", LessThan: sp("2.5.2"), Status: "affected"},
			{Version: "2.5.2", VersionType: "semver", LessThan: sp("2.*"), Status: "unaffected"},
		}, nil,
		[]statusCase{{"2.5.1", "affected", 0}, {"2.5.2", "unaffected", 1}, {"2.9", "unaffected", 1}, {"3.0", "unknown", -1}})
	// The same with a status change: {2.0.0, lessThan 2.*, affected,
	// changes [{at 2.5.2, unaffected}]}.
	checkStatuses(t, "one change",
		[]AffectedVersion{{Version: "2.0.0", VersionType: "semver", LessThan: sp("2.*"), Status: "affected",
			Changes: []StatusChange{{At: "2.5.2", Status: "unaffected"}}}}, nil,
		[]statusCase{{"2.0.0", "affected", 0}, {"2.5.1", "affected", 0}, {"2.5.2", "unaffected", 0}, {"2.6.0", "unaffected", 0}, {"3.0", "unknown", -1}})
	// "when 2.6.0 had also been released with the vulnerability and was
	// fixed in 2.6.3": changes 2.5.2 unaffected, 2.6.0 affected, 2.6.3
	// unaffected. Written out of order here: "clients must re-sort the
	// list themselves".
	complexChanges := AffectedVersion{Version: "2.0.0", VersionType: "semver", LessThan: sp("2.*"), Status: "affected",
		Changes: []StatusChange{{At: "2.6.3", Status: "unaffected"}, {At: "2.5.2", Status: "unaffected"}, {At: "2.6.0", Status: "affected"}}}
	checkStatuses(t, "three changes", []AffectedVersion{complexChanges}, nil,
		[]statusCase{{"2.5.1", "affected", 0}, {"2.5.2", "unaffected", 0}, {"2.5.9", "unaffected", 0}, {"2.6.0", "affected", 0}, {"2.6.2", "affected", 0}, {"2.6.3", "unaffected", 0}, {"2.7", "unaffected", 0}})
	// The same object followed by a git range {0, git, lessThan *,
	// unaffected, changes at commits}: source-control versions match no
	// release, so releases are decided by the semver object alone, and
	// a commit id asked as a version matches neither (123abc is the
	// number 123 then a word, past 2.*): unknown.
	gitRange := AffectedVersion{Version: "0", VersionType: "git", LessThan: sp("*"), Status: "unaffected",
		Changes: []StatusChange{{At: "123abc", Status: "affected"}, {At: "234bcd", Status: "unaffected"}, {At: "567ef0", Status: "unaffected"}}}
	checkStatuses(t, "semver and git", []AffectedVersion{complexChanges, gitRange}, nil,
		[]statusCase{{"2.6.1", "affected", 0}, {"2.6.3", "unaffected", 0}, {"123abc", "unknown", -1}, {"1.0.3", "unknown", -1}})
	// The two CVEs for the 2.5 and 2.6 branches: {123abc, git, lessThan
	// 234bcd (567ef0), affected}, defaultStatus unaffected. A git range
	// matches nothing: every version takes the default.
	for _, fix := range []string{"234bcd", "567ef0"} {
		checkStatuses(t, "git branch "+fix,
			[]AffectedVersion{{Version: "123abc", VersionType: "git", LessThan: sp(fix), Status: "affected"}}, sp("unaffected"),
			[]statusCase{{"2.5.1", "unaffected", -1}, {"150", "unaffected", -1}, {"200abc", "unaffected", -1}})
	}
	// "lessThan": "1.*" "describes the remainder of the 1.X branch".
	checkStatuses(t, "remainder of 1.x",
		[]AffectedVersion{{Version: "1.4", VersionType: "semver", LessThan: sp("1.*"), Status: "affected"}}, nil,
		[]statusCase{{"1.3", "unknown", -1}, {"1.4", "affected", 0}, {"1.99", "affected", 0}, {"2.0", "unknown", -1}})
}

// TestVersionStatusRules checks the rules of the decisions that the
// examples above do not reach.
func TestVersionStatusRules(t *testing.T) {
	// Source-control types match nothing, whatever their versions.
	for _, vt := range []string{"git", "hg", "svn", "bzr", "darcs", "fossil", "cvs", "GIT"} {
		checkStatuses(t, vt,
			[]AffectedVersion{{Version: "1.0", VersionType: vt, LessThan: sp("2.0"), Status: "affected"}, {Version: "1.5", VersionType: vt, Status: "affected"}}, sp("unaffected"),
			[]statusCase{{"1.5", "unaffected", -1}})
	}
	// A range's version with no digit is no lower bound, as 0 is.
	for _, lo := range []string{"0", "n/a", "unspecified", "*", "All versions", "All Previous Versions", ""} {
		checkStatuses(t, "start "+lo,
			[]AffectedVersion{{Version: lo, VersionType: "custom", LessThan: sp("2.1.0"), Status: "affected"}}, sp("unaffected"),
			[]statusCase{{"0.0.1", "affected", 0}, {"2.0.9", "affected", 0}, {"2.1.0", "unaffected", -1}, {"2.1.0-beta1", "unaffected", -1}})
	}
	// The Linux kernel's entry of CVE-2024-26581 (vulnrichment sample),
	// defaultStatus affected:
	//   0: 6.5 affected
	//   1: 0 <= X < 6.5 unaffected
	//   2..7: 5.4.269 <= X <= 5.4.*, 5.10.210 <= 5.10.*, 5.15.149 <= 5.15.*,
	//         6.1.78 <= 6.1.*, 6.6.17 <= 6.6.*, 6.7.5 <= 6.7.* unaffected
	//   8: 6.8 <= X <= * unaffected (original_commit_for_fix: numbers)
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
	checkStatuses(t, "CVE-2024-26581 kernel", kernel, sp("affected"), []statusCase{
		{"6.5", "affected", 0},
		{"6.1.77", "unaffected", 1}, // below 6.5: object 1 comes before 6.1.78's
		{"6.5.3", "affected", -1},   // no object: 6.5.3 is not 6.5, not < 6.5, past 6.1.*, below 6.6.17
		{"6.6.16", "affected", -1},
		{"6.6.17", "unaffected", 6},
		{"6.6.99", "unaffected", 6}, // leading 6.6 <= 6.6
		{"6.7.4", "affected", -1},
		{"6.7.5", "unaffected", 7},
		{"6.8", "unaffected", 8},
		{"6.8-rc1", "unaffected", 8}, // counts as 6.8 against the start 6.8
		{"6.13.2", "unaffected", 8},
	})
	// A single P.x or P.* covers the series P (CVE-2025-2982's "1.x").
	checkStatuses(t, "1.x", []AffectedVersion{{Version: "1.x", Status: "affected"}, {Version: "3.*", Status: "affected"}}, nil,
		[]statusCase{{"1", "affected", 0}, {"1.0", "affected", 0}, {"1.9.2", "affected", 0}, {"2.0", "unknown", -1}, {"0.9", "unknown", -1}, {"3.1", "affected", 1}})
	// Versions written with comparisons (real ones, from the samples).
	checkStatuses(t, "comparisons", []AffectedVersion{
		{Version: "< 8.8.2", Status: "affected"},                           // CVE-2025-49144
		{Version: ">= 8.0.0-alpha.0, < 8.0.0-alpha.4", Status: "affected"}, // CVE-2023-45133
		{Version: "10.0 - 10.4", Status: "affected"},
		{Version: "5.5.54 and earlier", Status: "affected"}, // CVE-2017-3456 (Oracle)
	}, sp("unaffected"), []statusCase{
		{"8.8.1", "affected", 0},
		{"8.8.2", "unaffected", -1},
		{"8.8.2-rc1", "unaffected", -1},  // counts as 8.8.2 against < 8.8.2
		{"8.0.0-alpha.3", "affected", 0}, // < 8.8.2: the first object decides
		{"10.0", "affected", 2},
		{"10.4", "affected", 2},
		{"10.4.1", "unaffected", -1},
		{"9.9", "unaffected", -1},
	})
	checkStatuses(t, "alpha range", []AffectedVersion{{Version: ">= 8.0.0-alpha.0, < 8.0.0-alpha.4", Status: "affected"}}, nil,
		[]statusCase{{"8.0.0-alpha.0", "affected", 0}, {"8.0.0-alpha.3", "affected", 0}, {"8.0.0-alpha.4", "unknown", -1}, {"8.0.0", "unknown", -1}, {"7.9", "unknown", -1}})
	checkStatuses(t, "and earlier", []AffectedVersion{{Version: "5.5.54 and earlier", Status: "affected"}}, nil,
		[]statusCase{{"5.5.54", "affected", 0}, {"5.1", "affected", 0}, {"5.5.55", "unknown", -1}})
	// A change at a version outside the object's range does not make the
	// object match; changes below X apply in increasing order.
	checkStatuses(t, "changes", []AffectedVersion{{Version: "1.0", VersionType: "semver", LessThan: sp("2.0"), Status: "unaffected",
		Changes: []StatusChange{{At: "1.2", Status: "affected"}, {At: "1.2", Status: "unknown"}, {At: "1.4", Status: "unaffected"}}}}, sp("affected"),
		[]statusCase{{"1.1", "unaffected", 0}, {"1.2", "unknown", 0}, {"1.3", "unknown", 0}, {"1.4", "unaffected", 0}, {"2.0", "affected", -1}})
	// No version: unknown whatever the default.
	for _, x := range []string{"", "*", "-", " "} {
		if got := VersionStatus(nil, sp("affected"), x); got != "unknown" {
			t.Errorf("status of %q = %q, want unknown", x, got)
		}
	}
}
