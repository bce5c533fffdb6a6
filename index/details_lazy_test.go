package index

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// lazyTexts reads stored pieces of a text table as ParsePiece (eager)
// or ParsePieceLazy (each piece's far texts left in its raw bytes, here
// the piece itself behind decode, which counts its calls) does, and the
// CVEs' lines as one piece.
func lazyTexts(t testing.TB, strs []string, per int, lines [][]byte, lazy bool, decodes *atomic.Int64) (*Details, error) {
	t.Helper()
	pieces := storedTexts(t, strs, per)
	tl, err := NewTextsLoader(len(strs), len(pieces))
	if err != nil {
		return nil, err
	}
	for p := len(pieces) - 1; p >= 0; p-- {
		if !lazy {
			err = tl.ParsePiece(p, p*per, pieces[p])
		} else {
			err = tl.ParsePieceLazy(p, p*per, pieces[p], bytes.Clone(pieces[p]), func(raw []byte) ([]byte, error) {
				decodes.Add(1)
				return bytes.Clone(raw), nil
			})
		}
		if err != nil {
			return nil, err
		}
	}
	l, err := tl.DetailsLoader(len(lines), 1)
	if err != nil {
		return nil, err
	}
	var data []byte
	for _, line := range lines {
		data = append(append(data, line...), '\n')
	}
	if err := l.ParsePiece(0, 0, data); err != nil {
		return nil, err
	}
	return l.Details()
}

// entryDetails are the Details a build makes of manyEntryCVEs(n), their
// text table and lines as stored, and their index entries.
func entryDetails(t testing.TB, n int) ([]CVE, *Details, []string, [][]byte, []CVEEntry) {
	t.Helper()
	cves := manyEntryCVEs(n)
	b := NewDetailsBuilder()
	for i := range cves {
		if err := b.Add(&cves[i]); err != nil {
			t.Fatal(err)
		}
	}
	built := b.Details()
	var lines [][]byte
	for i := range built.Len() {
		lines = append(lines, built.AppendLine(nil, i))
	}
	entries := make([]CVEEntry, len(cves))
	for i := range cves {
		var err error
		if entries[i], err = ScanCVE(EncodeCVE(&cves[i])); err != nil {
			t.Fatal(err)
		}
	}
	return cves, built, built.Strings(), lines, entries
}

// TestTextsLoaderLazyEqualsEager: a Details whose far texts are made on
// first read (a load for serving) serves exactly what one whose texts
// were made at load serves: details bodies, entries, ?version= answers,
// the stored form, Check; and its load decodes no piece, its first read
// one piece, each piece at most once.
func TestTextsLoaderLazyEqualsEager(t *testing.T) {
	cves, _, strs, lines, entries := entryDetails(t, 3000)
	var decodes atomic.Int64
	eager, err := lazyTexts(t, strs, 700, lines, false, &decodes)
	if err != nil {
		t.Fatal(err)
	}
	lazy, err := lazyTexts(t, strs, 700, lines, true, &decodes)
	if err != nil {
		t.Fatal(err)
	}
	if decodes.Load() != 0 {
		t.Fatalf("the load decoded %d pieces, want none", decodes.Load())
	}
	ixEager, err := BuildEntries(nil, entries, eager, nil, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	ixLazy, err := BuildEntries(nil, entries, lazy, nil, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	if decodes.Load() != 0 {
		t.Fatalf("building the index decoded %d pieces, want none", decodes.Load())
	}
	got, err1 := ixLazy.AppendDetails(nil, cves[0].Name)
	want, err2 := ixEager.AppendDetails(nil, cves[0].Name)
	if err1 != nil || err2 != nil || !bytes.Equal(got, want) {
		t.Fatalf("%s: %s (%v), want %s (%v)", cves[0].Name, got, err1, want, err2)
	}
	if decodes.Load() != 1 {
		t.Fatalf("the first read decoded %d pieces, want 1", decodes.Load())
	}
	for _, c := range cves {
		want, err1 := ixEager.AppendDetails(nil, c.Name)
		got, err2 := ixLazy.AppendDetails(nil, c.Name)
		if err1 != nil || err2 != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: %s (%v), want %s (%v)", c.Name, got, err2, want, err1)
		}
	}
	for i := 0; i < len(cves); i += 97 {
		v := *cves[i].Affected[0].Vendor
		for _, ver := range []string{"0", fmt.Sprintf("%d.2", i), fmt.Sprintf("%d.5", i)} {
			p := *cves[i].Affected[0].Product
			want, err1 := ixEager.ProductCVEsAt(v, p, ver)
			got, err2 := ixLazy.ProductCVEsAt(v, p, ver)
			if fmt.Sprint(got, err2) != fmt.Sprint(want, err1) {
				t.Fatalf("%s %q at %s: %v (%v), want %v (%v)", v, p, ver, got, err2, want, err1)
			}
		}
	}
	if got, want := lazy.Strings(), eager.Strings(); strings.Join(got, "\x00") != strings.Join(want, "\x00") || strings.Join(got, "\x00") != strings.Join(strs, "\x00") {
		t.Error("Strings of the lazy Details is not the stored table")
	}
	for i := range lazy.Len() {
		if got, want := lazy.AppendLine(nil, i), eager.AppendLine(nil, i); !bytes.Equal(got, want) {
			t.Fatalf("CVE %d: line %q, want %q", i+1, got, want)
		}
	}
	if err := lazy.Check(); err != nil {
		t.Error(err)
	}
	if n := decodes.Load(); n != int64((len(strs)+699)/700) {
		t.Errorf("%d pieces decoded, for %d pieces", n, (len(strs)+699)/700)
	}
}

// TestTextsLoaderLazyConcurrent: the first reads of a lazy Details's far
// texts, from many goroutines at once (requests right after a load),
// each get the right text, and each piece is decoded once. Run with
// -race.
func TestTextsLoaderLazyConcurrent(t *testing.T) {
	cves, _, strs, lines, entries := entryDetails(t, 1500)
	var decodes atomic.Int64
	eager, err := lazyTexts(t, strs, 300, lines, false, &decodes)
	if err != nil {
		t.Fatal(err)
	}
	lazy, err := lazyTexts(t, strs, 300, lines, true, &decodes)
	if err != nil {
		t.Fatal(err)
	}
	ixEager, _ := BuildEntries(nil, entries, eager, nil, Meta{})
	ixLazy, err := BuildEntries(nil, entries, lazy, nil, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	want := make([][]byte, len(cves))
	for i, c := range cves {
		want[i], _ = ixEager.AppendDetails(nil, c.Name)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range cves {
				i := (k*7 + g*131) % len(cves)
				got, err := ixLazy.AppendDetails(nil, cves[i].Name)
				if err != nil || !bytes.Equal(got, want[i]) {
					errs <- fmt.Sprintf("%s: %s (%v), want %s", cves[i].Name, got, err, want[i])
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if n := decodes.Load(); n != int64((len(strs)+299)/300) {
		t.Errorf("%d pieces decoded, for %d pieces", n, (len(strs)+299)/300)
	}
}

// TestTextsLoaderLazyBadText: a far text whose JSON string does not read
// (a writer's bug behind a matching sum) is not seen at a lazy load: on
// first read it reads as none, and Check reports it; an eager load
// refuses it, naming it.
func TestTextsLoaderLazyBadText(t *testing.T) {
	strs := []string{"", "[1]", "x"}
	lines := [][]byte{[]byte("0 0 0 1 0 0")}
	piece := []byte("\"\"\n\"[1\\q]\"\n\"x\"\n")
	tl, _ := NewTextsLoader(len(strs), 1)
	if err := tl.ParsePiece(0, 0, piece); err == nil || !strings.Contains(err.Error(), "record 2") {
		t.Errorf("eager: %v, want an error naming record 2", err)
	}
	tl, _ = NewTextsLoader(len(strs), 1)
	if err := tl.ParsePieceLazy(0, 0, piece, piece, func(raw []byte) ([]byte, error) { return raw, nil }); err != nil {
		t.Fatal(err)
	}
	l, err := tl.DetailsLoader(1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.ParsePiece(0, 0, append(lines[0], '\n')); err != nil {
		t.Fatal(err)
	}
	d, err := l.Details()
	if err != nil {
		t.Fatal(err)
	}
	if got := d.appendText(nil, 1); len(got) != 0 {
		t.Errorf("the bad text reads as %q, want none", got)
	}
	if err := d.Check(); err == nil || !strings.Contains(err.Error(), "record 2") {
		t.Errorf("Check: %v, want an error naming record 2", err)
	}
	if d.strs[2] != "x" {
		t.Errorf("plain text %q, want x", d.strs[2])
	}
}
