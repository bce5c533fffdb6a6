package index

import (
	"slices"
	"testing"
)

// TestHeldDetailsAsFields: a CVE whose affected entries, SSVC decision
// and entry keys are held (MakeHeldText, HeldStore) gets the very
// details, line and texts, that it gets with them as fields, whether its
// block is sealed or open and however many blocks there are; a held text
// that does not decompress, or that is held beside the fields, is an
// error.
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
	// Many times over, so that the texts fill several blocks, read back
	// after the store is sealed, and once with the last block open.
	var all []CVE
	for range 200 {
		all = append(all, cves...)
	}
	for _, seal := range []bool{true, false} {
		store, err := NewHeldStore()
		if err != nil {
			t.Fatal(err)
		}
		held := make([]CVE, len(all))
		for i, c := range all {
			held[i] = c
			held[i].Held = store.Hold(MakeHeldText(c.Affected, c.SSVC, c.EntryKeys))
			if (held[i].Held == nil) != (c.Name == "CVE-2024-0005") {
				t.Errorf("%s: held %v", c.Name, held[i].Held)
			}
			held[i].Affected, held[i].SSVC, held[i].EntryKeys = nil, nil, nil
		}
		if seal {
			store.Seal()
		}
		if len(store.blocks) < 3 {
			t.Fatalf("%d blocks", len(store.blocks))
		}
		fields, byHeld := NewDetailsBuilder(), NewDetailsBuilder()
		// In another order than held, as a build reads them back.
		for _, i := range append(rangeDown(len(all)/2, 0), rangeDown(len(all), len(all)/2)...) {
			if err := fields.Add(&all[i]); err != nil {
				t.Fatal(err)
			}
			if err := byHeld.Add(&held[i]); err != nil {
				t.Fatal(err)
			}
		}
		want, got := fields.Details(), byHeld.Details()
		if !slices.Equal(want.Strings(), got.Strings()) {
			t.Errorf("texts held %q, as fields %q", got.Strings(), want.Strings())
		}
		for i := range all {
			if w, g := string(want.AppendLine(nil, i)), string(got.AppendLine(nil, i)); w != g {
				t.Errorf("%d: line held %q, as fields %q", i, g, w)
			}
		}
	}

	store, err := NewHeldStore()
	if err != nil {
		t.Fatal(err)
	}
	both := cves[0]
	both.Held = store.Hold(MakeHeldText(entries, nil, nil))
	if err := NewDetailsBuilder().Add(&both); err == nil {
		t.Error("entries both held and as fields: no error")
	}
	bad := CVE{Name: "CVE-2024-0006", Held: store.Hold(MakeHeldText(entries, nil, nil))}
	store.Seal()
	store.blocks[0] = store.blocks[0][:len(store.blocks[0])/2]
	if err := NewDetailsBuilder().Add(&bad); err == nil {
		t.Error("a held text that does not decompress: no error")
	}
}

// rangeDown is hi-1 down to lo.
func rangeDown(hi, lo int) []int {
	var out []int
	for i := hi - 1; i >= lo; i-- {
		out = append(out, i)
	}
	return out
}
