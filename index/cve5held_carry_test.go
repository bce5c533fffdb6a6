package index

import (
	"bytes"
	"testing"
)

// TestHeldTextFromDetails: the texts the details keep of a record, made
// a HeldText again, give the same details line and texts as the record's
// own (MakeHeldText), and its keys parse back.
func TestHeldTextFromDetails(t *testing.T) {
	s := func(v string) *string { return &v }
	es := []AffectedEntry{
		{Source: "cna", Vendor: s("Acme, \"Inc\" [x]"), Product: s("road{runner}"), Versions: []AffectedVersion{{Version: "1.0", Status: "affected", Changes: []StatusChange{{At: "1.1", Status: "unaffected"}}}}},
		{Source: "adp:CISA-ADP", Vendor: s("acme"), Product: s("anvil")},
	}
	ssvc := &SSVC{Exploitation: s("none")}
	keys := []EntryKey{{Vendor: "acme", Product: "road_runner", Entries: []int{0}}, {Vendor: "acme", Product: "anvil", Entries: []int{1}}}
	src := []CVE{{Name: "CVE-2024-0001", Affected: es, SSVC: ssvc, EntryKeys: keys}, {Name: "CVE-2024-0002"}, {Name: "CVE-2024-0003", SSVC: ssvc}}
	b := NewDetailsBuilder()
	for i := range src {
		c := src[i]
		if err := b.Add(&c); err != nil {
			t.Fatal(err)
		}
	}
	d := b.Details()
	store, err := NewHeldStore()
	if err != nil {
		t.Fatal(err)
	}
	carried := make([]CVE, len(src))
	for i := range src {
		a, ss, k, n, err := d.HeldParts(i)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 && n != 2 {
			t.Errorf("entries = %d, want 2", n)
		}
		carried[i] = CVE{Name: src[i].Name, Held: store.Hold(HeldTextFrom(a, ss, k, n))}
	}
	store.Seal()
	if carried[1].Held != nil {
		t.Errorf("a CVE without a record holds %+v", carried[1].Held)
	}
	b2 := NewDetailsBuilder()
	for i := range carried {
		if err := b2.Add(&carried[i]); err != nil {
			t.Fatal(err)
		}
	}
	d2 := b2.Details()
	for i := range src {
		if got, want := d2.AppendLine(nil, i), d.AppendLine(nil, i); !bytes.Equal(got, want) {
			t.Errorf("line %d = %s, want %s", i, got, want)
		}
	}
	if got, want := d2.Strings(), d.Strings(); len(got) != len(want) {
		t.Fatalf("strings %q, want %q", got, want)
	} else {
		for i := range got {
			if got[i] != want[i] {
				t.Errorf("string %d = %q, want %q", i, got[i], want[i])
			}
		}
	}
	ks, err := carried[0].Held.EntryKeys()
	if err != nil || len(ks) != 2 || ks[0].Vendor != "acme" || ks[0].Product != "road_runner" || len(ks[1].Entries) != 1 || ks[1].Entries[0] != 1 {
		t.Errorf("keys = %+v, %v", ks, err)
	}
	if string(EntryKeysText(ks)) != string(EntryKeysText(keys)) {
		t.Errorf("keys text = %q", EntryKeysText(ks))
	}
}

func TestJSONArrayLen(t *testing.T) {
	for text, want := range map[string]int{`[]`: 0, ` [ ] `: 0, `[1]`: 1, `[{"a":[1,2]},"x,]",3]`: 3, `["\"",{}]`: 2} {
		if n, ok := jsonArrayLen([]byte(text)); !ok || n != want {
			t.Errorf("%s: %d, %v; want %d", text, n, ok, want)
		}
	}
	for _, text := range []string{``, `{}`, `[`, `["]`, `[}]`} {
		if _, ok := jsonArrayLen([]byte(text)); ok {
			t.Errorf("%s: ok", text)
		}
	}
}
