package index

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// overlaidNVD lays recs out over base as a build with a previous
// snapshot does: base's blocks as they are, each record of recs whose
// bytes base holds at its place there, the others packed in blocks after
// them. It returns the store, and the layout with its frames.
func overlaidNVD(t testing.TB, base, recs []NVDRecord) (*NVD, *NVDLayout, []byte) {
	t.Helper()
	bp := packNVDT(t, base)
	was := map[string]int{} // base's records by name: position
	for i, f := range bp.Facts {
		was[f.ID] = i
	}
	raw := map[string][]byte{}
	for _, r := range base {
		raw[r.Facts.ID] = r.Raw
	}
	all := packNVDT(t, recs) // for the order served
	byID := map[string]NVDRecord{}
	for _, r := range recs {
		byID[r.Facts.ID] = r
	}
	baseLay := CompactNVDLayout(bp.Blocks)
	lay := &NVDLayout{Base: len(bp.Blocks), Places: make([]NVDPlace, len(all.Facts))}
	var delta []NVDRecord
	var deltaAt []int
	for k, f := range all.Facts {
		if j, ok := was[f.ID]; ok && bytes.Equal(raw[f.ID], byID[f.ID].Raw) {
			lay.Places[k] = baseLay.Places[j]
			continue
		}
		delta, deltaAt = append(delta, byID[f.ID]), append(deltaAt, k)
	}
	dp := packNVDT(t, delta)
	lay.Blocks = append(append([]NVDBlock(nil), bp.Blocks...), dp.Blocks...)
	for d, p := range CompactNVDLayout(dp.Blocks).Places {
		lay.Places[deltaAt[d]] = NVDPlace{Block: int32(len(bp.Blocks)) + p.Block, Slot: p.Slot}
	}
	data := append(bytes.Join(bp.Frames, nil), bytes.Join(dp.Frames, nil)...)
	p := &PackedNVD{Facts: all.Facts, Blocks: lay.Blocks, Frames: dp.Frames, Decoded: dp.Decoded, Layout: lay}
	s, err := StoreNVD(p)
	if err != nil {
		t.Fatal(err)
	}
	s.OmitFrames()
	// Stored and loaded as a snapshot of format 9 is: the facts' lines,
	// the layout's.
	var facts, layout []byte
	for i := range s.Len() {
		facts = append(s.AppendLine(facts, i), '\n')
	}
	for k := range lay.Lines() {
		layout = append(lay.AppendLine(layout, k), '\n')
	}
	parsed, err := ParseNVDLayout(layout, len(all.Facts))
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewNVDLoader(s.Texts(), s.Len(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.ParsePiece(0, 0, facts); err != nil {
		t.Fatal(err)
	}
	if err := l.SetLayout(parsed); err != nil {
		t.Fatal(err)
	}
	n, err := l.NVDFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	return n, lay, data
}

// changedNVD is recs with every fifth record's bytes changed (a newer
// lastModified), every 40th dropped, and 30 records added.
func changedNVD(recs []NVDRecord) []NVDRecord { return changedEvery(recs, 5, 40, 30) }

// changedEvery is changedNVD with every every-th record changed, every
// drop-th dropped (0: none) and added records added.
func changedEvery(recs []NVDRecord, every, drop, added int) []NVDRecord {
	var out []NVDRecord
	for i, r := range recs {
		switch {
		case drop > 0 && i%drop == 3:
			continue
		case i%every == 1:
			r.Raw = bytes.Replace(r.Raw, []byte(`"lastModified"`), []byte(`"lastModified":"2026-01-01T00:00:00.000","was"`), 1)
			r.Facts.LastModified = "2026-01-01T00:00:00.000"
		}
		out = append(out, r)
	}
	for i := range added {
		r := recs[i*7%len(recs)]
		id := fmt.Sprintf("CVE-2031-%05d", i)
		r.Raw = bytes.Replace(r.Raw, []byte(r.Facts.ID), []byte(id), 1)
		r.Facts.ID = id
		out = append(out, r)
	}
	return out
}

// TestNVDOverlayAnswersAsCompact: records laid out over an earlier set's
// blocks (kept as they are, the changed and new records in blocks after
// them, the lines of the changed and dropped ones dead) answer every
// record and every page as the same records packed compactly.
func TestNVDOverlayAnswersAsCompact(t *testing.T) {
	base := sampleNVDRecords(t, 700)
	recs := changedNVD(base)
	want, err := BuildNVD(recs)
	if err != nil {
		t.Fatal(err)
	}
	got, lay, _ := overlaidNVD(t, base, recs)
	if lay.Dead() == 0 || lay.Base == len(lay.Blocks) {
		t.Fatalf("the layout keeps %d dead lines, %d of %d blocks the base's: not an overlay", lay.Dead(), lay.Base, len(lay.Blocks))
	}
	if got.Len() != want.Len() {
		t.Fatalf("%d records, want %d", got.Len(), want.Len())
	}
	for i := range want.Len() {
		w, werr := want.AppendRaw(nil, want.ID(i))
		g, gerr := got.AppendRaw(nil, want.ID(i))
		if got.ID(i) != want.ID(i) || werr != nil || gerr != nil || !bytes.Equal(g, w) {
			t.Fatalf("record %d: %s %.60s (%v), want %s %.60s (%v)", i+1, got.ID(i), g, gerr, want.ID(i), w, werr)
		}
	}
	at := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	ixW, ixG := &Index{nvd: want}, &Index{nvd: got}
	for _, q := range []NVDQuery{{}, {CVEID: want.ID(100)}} {
		rw, rg := ixW.SearchNVD(&q), ixG.SearchNVD(&q)
		for _, page := range [][2]int{{0, 2000}, {0, 7}, {33, 250}, {600, 2000}, {5000, 10}} {
			w, werr := ixW.AppendNVDPage(nil, rw, page[0], page[1], at)
			g, gerr := ixG.AppendNVDPage(nil, rg, page[0], page[1], at)
			if werr != nil || gerr != nil || !bytes.Equal(g, w) {
				t.Errorf("query %+v, page %v: %d bytes (%v), want %d (%v)", q, page, len(g), gerr, len(w), werr)
			}
		}
	}
}

// TestParseNVDLayout: the layout file round-trips, and one whose places
// are out of range, overlap or leave a record out is refused with the
// record or block named.
func TestParseNVDLayout(t *testing.T) {
	base := sampleNVDRecords(t, 100)
	_, lay, _ := overlaidNVD(t, base, changedNVD(base))
	var text []byte
	for k := range lay.Lines() {
		text = append(lay.AppendLine(text, k), '\n')
	}
	got, err := ParseNVDLayout(text, len(lay.Places))
	if err != nil {
		t.Fatal(err)
	}
	if got.Base != lay.Base || fmt.Sprint(got.Blocks) != fmt.Sprint(lay.Blocks) || fmt.Sprint(got.Places) != fmt.Sprint(lay.Places) {
		t.Errorf("parsed %d, %v, %v; want %d, %v, %v", got.Base, got.Blocks, got.Places, lay.Base, lay.Blocks, lay.Places)
	}
	for _, tc := range []struct {
		name, text string
		records    int
		want       string
	}{
		{"compact", "1\n10 0 1 2\n", 3, ""},
		{"dead lines", "1\n10 - 1 -\n7 0 2\n", 3, ""},
		{"no base line", "", 0, "no base line"},
		{"more records than the text can hold", "1\n10 0\n", 1 << 40, "1099511627776 records in 7 bytes"},
		{"base past the blocks", "2\n10 0\n", 1, "a base of 2 blocks of 1"},
		{"a record out of range", "1\n10 0 3\n", 3, "line 2: number 3 out of range"},
		{"a negative record", "1\n10 0 -1\n", 2, "line 2: number -1 out of range"},
		{"a record twice", "1\n10 0 1\n10 1\n", 2, "record 2 is at two places"},
		{"a record left out", "1\n10 0 -\n", 2, "1 of the 2 records placed"},
		{"a block of no line", "1\n10\n", 0, "line 2: no lines after the size"},
		{"a block of no size", "1\n0 0\n", 1, `line 2: size: bad number "0"`},
		{"no newline at the end", "1\n10 0", 1, "line 2 does not end in a newline"},
		{"a space too many", "1\n10 0 \n", 1, "line 2: missing number"},
		{"a word", "1\n10 x\n", 1, "line 2: bad number"},
		{"a size past 2^31-1", "1\n2147483648 0\n", 1, "line 2: size: number 2147483648 out of range"},
		{"a base of a leading zero", "01\n10 0\n", 1, "base line: bad number"},
		{"a base of 0", "0\n10 0\n", 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseNVDLayout([]byte(tc.text), tc.records)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
	// A layout of places that overlap is refused by the store too.
	bad := &NVDLayout{Blocks: []NVDBlock{{Size: 10, Records: 2}}, Places: []NVDPlace{{0, 1}, {0, 1}}}
	if _, err := StoreNVD(&PackedNVD{Facts: randomNVDFacts(2), Blocks: bad.Blocks, Layout: bad}); err == nil || !strings.Contains(err.Error(), "records 1 and 2 are both at line 2 of block 1") {
		t.Errorf("StoreNVD of overlapping places: %v", err)
	}
	bad.Places[1] = NVDPlace{0, 2}
	if _, err := StoreNVD(&PackedNVD{Facts: randomNVDFacts(2), Blocks: bad.Blocks, Layout: bad}); err == nil || !strings.Contains(err.Error(), "record 2 is at line 3 of block 1, out of range") {
		t.Errorf("StoreNVD of a place out of range: %v", err)
	}
}

// randomNVDFacts are the facts of n records in the order served.
func randomNVDFacts(n int) []NVDFacts {
	recs := randomNVDRecords(n)
	out := make([]NVDFacts, n)
	for i := range out {
		out[i] = recs[i].Facts
	}
	slices.SortFunc(out, func(a, b NVDFacts) int { return CompareNVD(&a, &b) })
	return out
}

// FuzzParseNVDLayout: any text parses or is refused, never panics; what
// parses places each record once, within its blocks, and writes back to
// a layout that parses the same.
func FuzzParseNVDLayout(f *testing.F) {
	for _, s := range []string{"1\n10 0 1 2\n", "1\n10 - 1 -\n7 0 2\n", "0\n5 2 - 0\n9 1\n", "2\n10 0\n", "1\n10 0 0\n", "1\n99999999999 0\n"} {
		f.Add([]byte(s), 3)
	}
	f.Fuzz(func(t *testing.T, data []byte, records int) {
		lay, err := ParseNVDLayout(data, records)
		if err != nil {
			return
		}
		seen := map[NVDPlace]bool{}
		for i, p := range lay.Places {
			if int(p.Block) >= len(lay.Blocks) || int(p.Slot) >= lay.Blocks[p.Block].Records || seen[p] {
				t.Fatalf("record %d at %+v: out of range or taken", i, p)
			}
			seen[p] = true
		}
		var text []byte
		for k := range lay.Lines() {
			text = append(lay.AppendLine(text, k), '\n')
		}
		again, err := ParseNVDLayout(text, records)
		if err != nil || fmt.Sprint(again.Places) != fmt.Sprint(lay.Places) || fmt.Sprint(again.Blocks) != fmt.Sprint(lay.Blocks) || again.Base != lay.Base {
			t.Fatalf("written again: %v", err)
		}
	})
}

// TestNVDOverlayDecodesEachBlockOnce: reading the records in the order
// served, as a page does, decodes each block once, in the compact layout
// and laid out over a base (the records of a page in the base's blocks
// and in the blocks after them at once).
func TestNVDOverlayDecodesEachBlockOnce(t *testing.T) {
	base := sampleNVDRecords(t, 2000)
	for _, tc := range []struct {
		name string
		recs []NVDRecord
		span int
	}{
		{"compact", base, 1},
		{"a twentieth changed", changedEvery(base, 20, 0, 0), 2},
		{"a fifth changed, some dropped and added", changedNVD(base), 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, _, _ := overlaidNVD(t, base, tc.recs)
			if n.span != tc.span {
				t.Errorf("span %d, want %d", n.span, tc.span)
			}
			for _, from := range []int{0, 700} {
				br := blockReader{n: n}
				blocks := map[int32]bool{}
				for p := from; p < n.Len(); p++ {
					blocks[n.recs[p].block] = true
					if _, err := br.record(int32(p)); err != nil {
						t.Fatal(err)
					}
				}
				br.release()
				if br.decodes != len(blocks) {
					t.Errorf("from record %d: %d blocks decoded for %d blocks read", from+1, br.decodes, len(blocks))
				}
			}
		})
	}
}

// BenchmarkParseNVDLayout: the layout of 400,000 records as a refresh
// leaves it (25,000 blocks of the base, 3 % of their lines dead, 716
// blocks after them), parsed as a load does.
func BenchmarkParseNVDLayout(b *testing.B) {
	const records, base = 400000, 25000
	lay := &NVDLayout{Base: base}
	r := rand.New(rand.NewPCG(1, 2))
	var moved []int
	for p := range records {
		if r.IntN(100) < 3 {
			moved = append(moved, p)
		}
	}
	lay.Places = make([]NVDPlace, records)
	for b := range base {
		lay.Blocks = append(lay.Blocks, NVDBlock{Size: 8000, Records: NVDBlockRecords})
		for s := range NVDBlockRecords {
			lay.Places[b*NVDBlockRecords+s] = NVDPlace{Block: int32(b), Slot: uint16(s)}
		}
	}
	for k, p := range moved {
		if k%NVDBlockRecords == 0 {
			lay.Blocks = append(lay.Blocks, NVDBlock{Size: 8000, Records: min(NVDBlockRecords, len(moved)-k)})
		}
		lay.Places[p] = NVDPlace{Block: int32(base + k/NVDBlockRecords), Slot: uint16(k % NVDBlockRecords)}
	}
	var text []byte
	for k := range lay.Lines() {
		text = append(lay.AppendLine(text, k), '\n')
	}
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseNVDLayout(text, records); err != nil {
			b.Fatal(err)
		}
	}
}
