package index

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestExplainEntryRules: each kind of version object, a change and the
// default status give their rule, on the objects the CVE 5 algorithm
// picks (the first that matches), and the status is VersionStatus's.
func TestExplainEntryRules(t *testing.T) {
	s := func(v string) *string { return &v }
	entries := []AffectedEntry{
		{Source: "cna", Vendor: s("v"), Product: s("p"), DefaultStatus: s("unaffected"), Versions: []AffectedVersion{
			{Version: "1.0", Status: "affected"},                            // 0
			{Version: "2.x", Status: "affected"},                            // 1
			{Version: "< 0.5", Status: "affected"},                          // 2
			{Version: "3.0", LessThanOrEqual: s("3.5"), Status: "affected"}, // 3
			{Version: "4.0", LessThan: s("5.0"), Status: "affected", Changes: []StatusChange{ // 4
				{At: "4.2", Status: "unaffected"}, {At: "4.4", Status: "affected"}}},
			{Version: "abc123", VersionType: "git", LessThan: s("def456"), Status: "affected"}, // 5: never
		}},
		{Source: "adp:CISA-ADP", Vendor: s("v"), Product: s("q"), DefaultStatus: s("affected")},
		{Source: "adp:CISA-ADP", Vendor: s("v"), Product: s("p"), DefaultStatus: s("affected"), Versions: []AffectedVersion{
			{Version: "9.0", Status: "unaffected"}}},
	}
	has := func(e *AffectedEntry) bool { return *e.Product == "p" }
	obj := func(i int) *int { return &i }
	for _, tc := range []struct {
		x    string
		want []EntryMatch
	}{
		{"1.0.0", []EntryMatch{
			{Source: "cna", Entry: 0, VersionObject: obj(0), Rule: RuleVersion, Status: StatusAffected},
			{Source: "adp:CISA-ADP", Entry: 2, Rule: RuleDefaultStatus, Status: StatusAffected}}},
		{"2.7.1", []EntryMatch{
			{Source: "cna", Entry: 0, VersionObject: obj(1), Rule: RuleSeries, Status: StatusAffected},
			{Source: "adp:CISA-ADP", Entry: 2, Rule: RuleDefaultStatus, Status: StatusAffected}}},
		{"0.4", []EntryMatch{
			{Source: "cna", Entry: 0, VersionObject: obj(2), Rule: RuleComparisons, Status: StatusAffected},
			{Source: "adp:CISA-ADP", Entry: 2, Rule: RuleDefaultStatus, Status: StatusAffected}}},
		{"3.5", []EntryMatch{
			{Source: "cna", Entry: 0, VersionObject: obj(3), Rule: RuleLessThanOrEqual, Status: StatusAffected},
			{Source: "adp:CISA-ADP", Entry: 2, Rule: RuleDefaultStatus, Status: StatusAffected}}},
		{"4.1", []EntryMatch{
			{Source: "cna", Entry: 0, VersionObject: obj(4), Rule: RuleLessThan, Status: StatusAffected},
			{Source: "adp:CISA-ADP", Entry: 2, Rule: RuleDefaultStatus, Status: StatusAffected}}},
		{"4.3", []EntryMatch{ // the change at 4.2: unaffected
			{Source: "adp:CISA-ADP", Entry: 2, Rule: RuleDefaultStatus, Status: StatusAffected}}},
		{"4.4", []EntryMatch{
			{Source: "cna", Entry: 0, VersionObject: obj(4), Rule: RuleLessThan, ChangeAt: s("4.4"), Status: StatusAffected},
			{Source: "adp:CISA-ADP", Entry: 2, Rule: RuleDefaultStatus, Status: StatusAffected}}},
		{"9.0", nil}, // cna: default unaffected; the ADP's object says unaffected
		{"*", nil},   // no version
	} {
		got := ExplainEntries(entries, has, tc.x)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("at %s (-want +got):\n%s", tc.x, diff)
		}
		for i := range entries {
			if !has(&entries[i]) {
				continue
			}
			d := explainStatus(entries[i].Versions, entries[i].DefaultStatus, tc.x)
			if d.status != entries[i].StatusAt(tc.x) || d.object != matchIndex(entries[i].Versions, tc.x) {
				t.Errorf("at %s, entry %d: %+v, StatusAt %s, matchIndex %d", tc.x, i, d, entries[i].StatusAt(tc.x), matchIndex(entries[i].Versions, tc.x))
			}
		}
	}
}

// TestExplainAtEntries: a CVE without CPEs is explained by its affected
// entries, read back from the details, once a key source is set.
func TestExplainAtEntries(t *testing.T) {
	s := func(v string) *string { return &v }
	c := cve("CVE-2024-0001", "2024-01-01 00:00:00Z")
	c.Affected = []AffectedEntry{
		{Source: "cna", Vendor: s("Acme"), Product: s("Widget"), DefaultStatus: s("unaffected"),
			Versions: []AffectedVersion{{Version: "1.0", LessThan: s("2.0"), Status: "affected"}}},
	}
	ix, err := Build(&Data{CVEs: []CVE{c}}, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	if got := ix.explainAt(0, "acme", "widget", "1.5"); len(got) != 0 {
		t.Errorf("without a key source: %v, want nothing", got)
	}
	ix.SetExplainSources(ExplainSources{EntryHasKey: func(e *AffectedEntry, vendor, product string) bool {
		return vendor == "acme" && product == "widget" && *e.Vendor == "Acme"
	}})
	want := []any{EntryMatch{Source: "cna", Entry: 0, VersionObject: new(int), Rule: RuleLessThan, Status: StatusAffected}}
	if diff := cmp.Diff(want, ix.explainAt(0, "acme", "widget", "1.5")); diff != "" {
		t.Errorf("at 1.5 (-want +got):\n%s", diff)
	}
	if got := ix.explainAt(0, "acme", "widget", "2.0"); len(got) != 0 {
		t.Errorf("at 2.0: %v, want nothing", got)
	}
}
