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

// TestCarryFromSameTable: details built taking a previous table's texts
// by id (HeldFrom, CarryFrom) are those built from the texts themselves:
// the same lines, and each text the same (its own, or the previous
// table's it names), in the same order; a text given by value that the
// previous table holds, before or after it is taken by id, is listed
// once; entry keys of the CVE's own replace the previous ones.
func TestCarryFromSameTable(t *testing.T) {
	s := func(v string) *string { return &v }
	entries := func(vendor, product string) []AffectedEntry {
		return []AffectedEntry{{Source: "cna", Vendor: s(vendor), Product: s(product), Versions: []AffectedVersion{{Version: "1.0", Status: "affected"}}}}
	}
	es1, es2, es3, esNew := entries("acme", "anvil"), entries("acme", "rocket"), entries("Wile \"E\"", "trap"), entries("new", "thing")
	ssvc1, ssvc2 := &SSVC{Exploitation: s("none")}, &SSVC{Exploitation: s("active")}
	keys1 := []EntryKey{{Vendor: "acme", Product: "anvil", Entries: []int{0}}}
	keys2 := []EntryKey{{Vendor: "acme", Product: "rocket", Entries: []int{0}}}
	metric := func(v string) []Metric {
		return []Metric{{Version: "3.1", Source: "nvd@nist.gov", Type: "Primary", Vector: v, Score: 5, Severity: "MEDIUM"}}
	}
	prevCVEs := []CVE{
		{Name: "CVE-2024-0001", Status: "Analyzed", Affected: es1, SSVC: ssvc1, EntryKeys: keys1, Metrics: metric("AV:N")},
		{Name: "CVE-2024-0002", Status: "Analyzed", Affected: es2, CPEs: []CPE{{URI: "cpe:2.3:a:acme:rocket:1.0:*:*:*:*:*:*:*"}}},
		{Name: "CVE-2024-0003", Status: "Modified", SSVC: ssvc1},
		{Name: "CVE-2024-0004", Status: "Awaiting Analysis", KEV: &KEV{DateAdded: "2024-01-01", VulnerabilityName: "Acme Anvil"}},
		{Name: "CVE-2024-0005", Status: "Analyzed", Affected: es3, SSVC: ssvc2},
	}
	pb := NewDetailsBuilder()
	for i := range prevCVEs {
		c := prevCVEs[i]
		if err := pb.Add(&c); err != nil {
			t.Fatal(err)
		}
	}
	prev := pb.Details()
	prevStrs := prev.Strings()

	// The refresh, by value: a new CVE whose entries the previous table
	// holds further on (CVE-2024-0005's), CVE-2024-0002 losing its CPEs
	// (keys of its own), a new CVE with new entries and the SSVC decision
	// CVE-2024-0001 has.
	byValue := []CVE{
		{Name: "CVE-2023-0001", Status: "Received", Affected: es3, Metrics: metric("AV:L")},
		prevCVEs[0],
		{Name: "CVE-2024-0002", Status: "Modified", Affected: es2, EntryKeys: keys2},
		prevCVEs[2],
		prevCVEs[3],
		{Name: "CVE-2024-0004a", Status: "Received", Affected: esNew, SSVC: ssvc1},
		prevCVEs[4],
	}
	// The same, the previous CVEs' texts taken by id.
	byID := make([]CVE, len(byValue))
	prevOf := map[string]int{"CVE-2024-0001": 0, "CVE-2024-0003": 2, "CVE-2024-0004": 3, "CVE-2024-0005": 4}
	for i, c := range byValue {
		if k, ok := prevOf[c.Name]; ok {
			c.Affected, c.SSVC, c.EntryKeys = nil, nil, nil
			c.Held = HeldFrom(prev, k, false, nil, 0)
		}
		if c.Name == "CVE-2024-0002" {
			c.Affected, c.EntryKeys = nil, nil
			c.Held = HeldFrom(prev, 1, true, EntryKeysText(keys2), 1)
		}
		byID[i] = c
	}
	if byID[4].Held != nil {
		t.Errorf("a CVE without texts holds %+v", byID[4].Held)
	}

	want := NewDetailsBuilder()
	for i := range byValue {
		c := byValue[i]
		if err := want.Add(&c); err != nil {
			t.Fatal(err)
		}
	}
	wd := want.Details()
	got := NewDetailsBuilder()
	index := map[string]uint32{}
	for j, text := range prevStrs {
		index[text] = uint32(j)
	}
	asked := 0
	got.CarryFrom(prev, len(prevStrs), func(text string) (uint32, bool) {
		asked++
		j, ok := index[text]
		return j, ok
	})
	for i := range byID {
		c := byID[i]
		if err := got.Add(&c); err != nil {
			t.Fatal(err)
		}
	}
	gd := got.Details()
	for i := range byValue {
		if g, w := gd.AppendLine(nil, i), wd.AppendLine(nil, i); !bytes.Equal(g, w) {
			t.Errorf("line %d = %s, want %s", i, g, w)
		}
	}
	gs, ws := gd.Strings(), wd.Strings()
	if len(gs) != len(ws) {
		t.Fatalf("%d texts, want %d: %q", len(gs), len(ws), ws)
	}
	byPrev := 0
	for id := range gs {
		text := gs[id]
		if j, ok := gd.PrevText(id); ok {
			if text != "" {
				t.Errorf("text %d taken by id holds %q", id, text)
			}
			text = prevStrs[j]
			byPrev++
		}
		if text != ws[id] {
			t.Errorf("text %d = %q, want %q", id, text, ws[id])
		}
	}
	if byPrev == 0 || asked == 0 {
		t.Errorf("%d texts taken by id, %d asked by value", byPrev, asked)
	}
	// The texts held by id read as the previous table's.
	if a, ss, k, n, err := byID[2].Held.parts(); err != nil || n != 1 || !bytes.Equal(a, encode(es2)) || len(ss) != 0 || string(k) != string(EntryKeysText(keys2)) {
		t.Errorf("parts = %s %s %q %d %v", a, ss, k, n, err)
	}
}
