package index

import (
	"bytes"
	"fmt"
	"runtime"
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

// TestHeldStoreBlocksTight: a sealed block takes about the bytes it
// holds compressed, not the array the encoder grew while it wrote them
// (at 400k records, 69 MB held through a build's write where the blocks
// need a fraction of it).
func TestHeldStoreBlocksTight(t *testing.T) {
	text := func(i int) HeldText {
		var es []AffectedEntry
		for j := range 6 {
			v, p := fmt.Sprintf("vendor%d", i%97), fmt.Sprintf("product%d_%d", i%89, j)
			lt := fmt.Sprintf("%d.%d.%d", (i*7+j)%31, (i*13+j)%17, i*j%1000)
			es = append(es, AffectedEntry{Source: "cna", Vendor: &v, Product: &p,
				Versions: []AffectedVersion{{Version: fmt.Sprintf("%d.0", j), Status: "affected", VersionType: "semver", LessThan: &lt}}})
		}
		return MakeHeldText(es, nil, nil)
	}
	live := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	store, err := NewHeldStore()
	if err != nil {
		t.Fatal(err)
	}
	store.Hold(text(0)) // the encoder's own buffers, made once
	store.Seal()
	const n = 20000
	held := make([]*HeldDetails, 0, n)
	before := live()
	for i := range n {
		held = append(held, store.Hold(text(i)))
	}
	store.Seal()
	grew := live() - before
	compressed := 0
	for _, b := range store.blocks {
		compressed += len(b)
	}
	// The blocks, the HeldDetails (32 bytes each) and the slice of blocks.
	if want := uint64(compressed)*3/2 + n*48 + 64<<10; grew > want {
		t.Errorf("holding %d texts in %d blocks of %d bytes in all took %d bytes, want at most %d", n, len(store.blocks), compressed, grew, want)
	}
	for _, i := range []int{0, n / 3, n - 1} {
		got, err := store.text(held[i])
		if want := text(i).text; err != nil || !bytes.Equal(got, want) {
			t.Fatalf("text %d: %q, %v; want %q", i, got, err, want)
		}
	}
	runtime.KeepAlive(held)
}

// TestDetailsKeepHeldFar: details built with the held records' affected
// entries left in their store (KeepHeldFar) write the very texts and
// lines that they write held whole: each text once, the first CVE's id
// for a text equal to an earlier one, whether either is held, given as
// fields or another text (a KEV entry's); and the texts are not held a
// second time (at 400k CVEs, 150 MB held whole through a build's write).
func TestDetailsKeepHeldFar(t *testing.T) {
	a := []AffectedEntry{{Source: "cna", Vendor: sp("acme"), Product: sp("widget"),
		Versions: []AffectedVersion{{Version: "1.0", Status: "affected", VersionType: "semver", LessThan: sp("1.4.2")}}}}
	b := []AffectedEntry{{Source: "cna", Vendor: sp("acme"), Product: sp("gadget"), DefaultStatus: sp("affected")}}
	c := []AffectedEntry{{Source: "adp:CISA-ADP", Vendor: sp("zeta"), Product: sp("gadget"), CPEs: []string{"cpe:2.3:a:zeta:gadget:*:*:*:*:*:*:*:*"}}}
	ssvc := &SSVC{Exploitation: sp("poc"), Automatable: sp("no"), TechnicalImpact: sp("total")}
	keys := []EntryKey{{Vendor: "acme", Product: "widget", Entries: []int{0}}}
	aJSON := string(encode(a))
	cves := []CVE{
		{Name: "CVE-2024-0001", Affected: b},                                                    // as fields, then held
		{Name: "CVE-2024-0002", Affected: a, SSVC: ssvc, EntryKeys: keys, Held: &HeldDetails{}}, // held
		{Name: "CVE-2024-0003", Affected: a, Held: &HeldDetails{}},                              // held again
		{Name: "CVE-2024-0004", Affected: b, SSVC: ssvc, Held: &HeldDetails{}},                  // held, as 0001's
		{Name: "CVE-2024-0005", Affected: a},                                                    // as fields, as 0002's held
		{Name: "CVE-2024-0006", KEV: &KEV{DateAdded: "2024-01-02", VulnerabilityName: aJSON}},   // another text, as 0002's
		{Name: "CVE-2024-0007", Affected: c, Held: &HeldDetails{}, Status: "Analyzed"},
		{Name: "CVE-2024-0008", KEV: &KEV{DateAdded: "2024-01-02", RequiredAction: string(encode(c)), VulnerabilityName: "[x]"}},
		{Name: "CVE-2024-0009", Affected: c, Held: &HeldDetails{}},
	}
	store, err := NewHeldStore()
	if err != nil {
		t.Fatal(err)
	}
	for i := range cves {
		if cves[i].Held != nil {
			cves[i].Held = store.Hold(MakeHeldText(cves[i].Affected, cves[i].SSVC, cves[i].EntryKeys))
			cves[i].Affected, cves[i].SSVC, cves[i].EntryKeys = nil, nil, nil
		}
	}
	store.Seal()
	whole, far := NewDetailsBuilder(), NewDetailsBuilder().KeepHeldFar()
	for i := range cves {
		if err := whole.Add(&cves[i]); err != nil {
			t.Fatal(err)
		}
		if err := far.Add(&cves[i]); err != nil {
			t.Fatal(err)
		}
	}
	want, got := whole.Details(), far.Details()
	if got.TextCount() != len(want.Strings()) {
		t.Fatalf("%d texts, want %d: %q", got.TextCount(), len(want.Strings()), want.Strings())
	}
	for id, w := range want.Strings() {
		if g, err := got.Text(id); err != nil || g != w {
			t.Errorf("text %d: %q, %v; want %q", id, g, err, w)
		}
	}
	if !slices.Equal(got.Strings(), want.Strings()) {
		t.Errorf("Strings %q, want %q", got.Strings(), want.Strings())
	}
	for i := range cves {
		if w, g := string(want.AppendLine(nil, i)), string(got.AppendLine(nil, i)); w != g {
			t.Errorf("%s: line %q, want %q", cves[i].Name, g, w)
		}
	}
	if n := len(slices.DeleteFunc(slices.Clone(got.held), func(h *HeldDetails) bool { return h == nil })); n != 2 {
		t.Errorf("%d texts left in the store, want 2 (those of 0002 and 0007)", n)
	}

	// Many texts: those left in the store are not held again.
	var many []CVE
	for i := range 4000 {
		var es []AffectedEntry
		for j := range 4 {
			v := fmt.Sprintf("%d.%d.%d", i%37, j, i)
			es = append(es, AffectedEntry{Source: "cna", Vendor: sp(fmt.Sprintf("vendor%d", i%101)), Product: sp(fmt.Sprintf("product%d", j)),
				Versions: []AffectedVersion{{Version: "0", Status: "affected", VersionType: "semver", LessThan: &v}}})
		}
		many = append(many, CVE{Name: fmt.Sprintf("CVE-2024-%05d", i), Held: store.Hold(MakeHeldText(es, nil, nil))})
	}
	store.Seal()
	live := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	held := func(b *DetailsBuilder) (*Details, uint64) {
		before := live()
		for i := range many {
			if err := b.Add(&many[i]); err != nil {
				t.Fatal(err)
			}
		}
		d := b.Details()
		return d, live() - before
	}
	wholeD, wholeBytes := held(NewDetailsBuilder())
	texts := 0
	for _, s := range wholeD.Strings() {
		texts += len(s)
	}
	wholeD = nil
	farD, farBytes := held(NewDetailsBuilder().KeepHeldFar())
	if farBytes > wholeBytes/3 || farBytes > uint64(texts)/3 {
		t.Errorf("the details of %d CVEs hold %d bytes with their texts left in the store, %d with the texts (%d bytes) whole", len(many), farBytes, wholeBytes, texts)
	}
	if s, err := farD.Text(int(farD.cves[len(many)-1].affected)); err != nil || s != wholeTextOf(t, many[len(many)-1].Held) {
		t.Errorf("last text %q, %v", s, err)
	}
	runtime.KeepAlive(wholeD)
}

// wholeTextOf is the JSON of h's affected entries.
func wholeTextOf(t *testing.T, h *HeldDetails) string {
	a, _, _, _, err := h.parts()
	if err != nil {
		t.Fatal(err)
	}
	return string(a)
}
