package index

import (
	"slices"
	"testing"
)

// TestHeldDetailsAsFields: a CVE whose affected entries, SSVC decision
// and entry keys are held (HoldDetails) gets the very details, line and
// texts, that it gets with them as fields; a held text that does not
// decompress, or that is held beside the fields, is an error.
func TestHeldDetailsAsFields(t *testing.T) {
	entries := []AffectedEntry{
		{Source: "cna", Vendor: sp("acme"), Product: sp("widget \"pro\""), DefaultStatus: sp("unaffected"),
			Versions: []AffectedVersion{{Version: "1.0", Status: "affected", VersionType: "semver", LessThan: sp("1.4.2"),
				Changes: []StatusChange{{At: "1.2", Status: "unaffected"}}}}},
		{Source: "adp:CISA-ADP", Vendor: sp("acme"), Product: sp("gadget"), CPEs: []string{"cpe:2.3:a:acme:gadget:*:*:*:*:*:*:*:*"}, Platforms: []string{"Linux"}},
	}
	ssvc := &SSVC{Exploitation: sp("poc"), Automatable: sp("no"), TechnicalImpact: sp("total"), Timestamp: sp("2024-06-07T10:15:12.293Z")}
	keys := []EntryKey{{Vendor: "acme", Product: "widget", Entries: []int{0}}, {Vendor: "acme", Product: "gadget", Entries: []int{1}}}
	cves := []CVE{
		{Name: "CVE-2024-0001", Status: "Awaiting Analysis", Affected: entries, SSVC: ssvc, EntryKeys: keys},
		{Name: "CVE-2024-0002", Status: "Analyzed", Affected: entries[1:]},
		{Name: "CVE-2024-0003", SSVC: ssvc},
		{Name: "CVE-2024-0004", Affected: entries, EntryKeys: keys[1:]},
		{Name: "CVE-2024-0005"},
	}
	fields, held := NewDetailsBuilder(), NewDetailsBuilder()
	for _, c := range cves {
		if err := fields.Add(&c); err != nil {
			t.Fatal(err)
		}
		h := c
		h.Held = HoldDetails(c.Affected, c.SSVC, c.EntryKeys)
		if (h.Held == nil) != (c.Name == "CVE-2024-0005") {
			t.Errorf("%s: held %v", c.Name, h.Held)
		}
		h.Affected, h.SSVC, h.EntryKeys = nil, nil, nil
		if err := held.Add(&h); err != nil {
			t.Fatal(err)
		}
	}
	want, got := fields.Details(), held.Details()
	if !slices.Equal(want.Strings(), got.Strings()) {
		t.Errorf("texts held %q, as fields %q", got.Strings(), want.Strings())
	}
	for i := range cves {
		if w, g := string(want.AppendLine(nil, i)), string(got.AppendLine(nil, i)); w != g {
			t.Errorf("%s: line held %q, as fields %q", cves[i].Name, g, w)
		}
	}

	both := cves[0]
	both.Held = HoldDetails(entries, nil, nil)
	if err := NewDetailsBuilder().Add(&both); err == nil {
		t.Error("entries both held and as fields: no error")
	}
	bad := CVE{Name: "CVE-2024-0006", Held: HoldDetails(entries, nil, nil)}
	bad.Held.text = bad.Held.text[:len(bad.Held.text)/2]
	if err := NewDetailsBuilder().Add(&bad); err == nil {
		t.Error("a held text that does not decompress: no error")
	}
}
