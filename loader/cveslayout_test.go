package loader

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// sameCVEAnswers fails unless the snapshots a and b serve the same CVEs:
// the bodies in name order (every list's order), each CVE and its
// details by name, and the counts but the reports'.
func sameCVEAnswers(t *testing.T, a, b string) {
	t.Helper()
	_, bodiesA, err := read(a, false)
	if err != nil {
		t.Fatal(err)
	}
	_, bodiesB, err := read(b, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(bodiesA) != len(bodiesB) || len(bodiesA) == 0 {
		t.Fatalf("%d CVEs, %d in %s", len(bodiesA), len(bodiesB), b)
	}
	for i := range bodiesA {
		if !bytes.Equal(bodiesA[i], bodiesB[i]) {
			t.Fatalf("CVE %d: %.60s, %.60s in %s", i+1, bodiesA[i], bodiesB[i], b)
		}
	}
	ixA, _, err := Load(a)
	if err != nil {
		t.Fatal(err)
	}
	ixB, _, err := Load(b)
	if err != nil {
		t.Fatal(err)
	}
	ca, cb := ixA.Counts(), ixB.Counts()
	ca.Reports, ca.Alerts, cb.Reports, cb.Alerts = 0, 0, 0, 0
	if ca != cb {
		t.Fatalf("counts %+v, %+v in %s", ca, cb, b)
	}
	for _, body := range bodiesA {
		name := string(body[len(`{"name":"`) : bytes.IndexByte(body[len(`{"name":"`):], '"')+len(`{"name":"`)])
		x, errA := ixA.CVE(name)
		y, errB := ixB.CVE(name)
		if errA != nil || errB != nil || !bytes.Equal(x, y) {
			t.Fatalf("%s: %v, %v in %s", name, errA, errB, b)
		}
		x, errA = ixA.AppendDetails(nil, name)
		y, errB = ixB.AppendDetails(nil, name)
		if errA != nil || errB != nil || !bytes.Equal(x, y) {
			t.Fatalf("%s's details: %s (%v), %s in %s (%v)", name, x, errA, y, b, errB)
		}
	}
}

// TestCVEsOverlayChain: a chain of refreshes (see TestNVDOverlayChain)
// lays the CVE bodies out as NVD's records: cves.jsonl.zst keeps the
// previous one's chunks, first, the same sums, and adds chunks of the
// bodies changed or added, the lines of those replaced dead; it compacts
// when nvd.zst does. Each snapshot serves every CVE exactly as a build
// without -previous of the same feeds, and the incremental build and
// the one with -full write the same bytes.
func TestCVEsOverlayChain(t *testing.T) {
	overlayChain(t, keyCVEs, func(k int, prev, built, fresh string) {
		sameCVEAnswers(t, fresh, built)
		pm, m, fm := readManifestT(t, prev), readManifestT(t, built), readManifestT(t, fresh)
		cves := overlayChainCVEs(k)
		checkOverlayDay(t, k, pm, m, fm, keyCVEs, []string{keyCVEs, keyCVEsLayout}, cves)
		if k != 3 && m.Counts.CVEs != cves {
			t.Errorf("day %d: the manifest counts %d CVEs, want %d", k, m.Counts.CVEs, cves)
		}
		if k != 3 {
			checkEntriesOver(t, k, prev, built)
		}
	})
}

// checkEntriesOver checks entriesOver on day k of the chain: the entries
// of the snapshot built over prev are those decodeEntries reads from the
// file, with the lines copied from prev taken from its bodies as read
// (a kept body swapped there shows in them), the whole file decoded when
// a copied chunk is not prev's, and a chunk written after them that does
// not match its sum refused.
func checkEntriesOver(t *testing.T, k int, prev, built string) {
	t.Helper()
	dec, err := decoder()
	if err != nil {
		t.Fatal(err)
	}
	s, err := readPrevious(prev)
	if err != nil {
		t.Fatal(err)
	}
	base := cvesBaseOf(s)
	if base == nil || base.bodies == nil {
		t.Fatalf("day %d: no base bodies of %s", k, prev)
	}
	m := readManifestT(t, built)
	fi := m.Files[keyCVEs]
	lay, err := readCVEsLayout(built, m, dec)
	if err != nil {
		t.Fatal(err)
	}
	want, err := decodeEntries(built, fi, lay, dec)
	if err != nil {
		t.Fatal(err)
	}
	got, err := entriesOver(built, fi, lay, base, dec)
	if err != nil {
		t.Fatalf("day %d: %v", k, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("day %d: entriesOver's entries are not those of %s decoded", k, fi.Name)
	}
	// The base's positions are not the new ones (a CVE added or dropped
	// before others moves them): the same base, its positions reversed,
	// gives the same entries.
	reversed := *base
	reversed.lay = &cvesLayout{base: base.lay.base, chunks: base.lay.chunks, cves: base.lay.cves, owners: slices.Clone(base.lay.owners)}
	reversed.bodies = make([][]byte, len(base.bodies))
	last := int32(len(base.bodies) - 1)
	for n, j := range reversed.lay.owners {
		if j >= 0 {
			reversed.lay.owners[n] = last - j
			reversed.bodies[last-j] = base.bodies[j]
		}
	}
	if got, err := entriesOver(built, fi, lay, &reversed, dec); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("day %d: the base's positions reversed: %v, the file's entries: %v", k, err, reflect.DeepEqual(got, want))
	}
	// Two bodies of the base swapped, at lines kept: the entries follow.
	var kept []int32 // positions, in the base, of two lines kept
	for n, p := range lay.owners[:len(base.lay.owners)] {
		if j := base.lay.owners[n]; p >= 0 && j >= 0 && len(kept) < 2 {
			kept = append(kept, j)
		}
	}
	if len(kept) < 2 {
		t.Fatalf("day %d: %d lines kept", k, len(kept))
	}
	swapped := *base
	swapped.bodies = slices.Clone(base.bodies)
	swapped.bodies[kept[0]], swapped.bodies[kept[1]] = base.bodies[kept[1]], base.bodies[kept[0]]
	if got, err := entriesOver(built, fi, lay, &swapped, dec); err != nil || reflect.DeepEqual(got, want) {
		t.Fatalf("day %d: the base's bodies swapped: %v, the entries unchanged: %v", k, err, reflect.DeepEqual(got, want))
	}
	// A copied chunk whose sum is not the base's: the file is decoded.
	other := swapped
	other.fi.Chunks = slices.Clone(base.fi.Chunks)
	other.fi.Chunks[0].SHA256 = strings.Repeat("0", 64)
	if got, err := entriesOver(built, fi, lay, &other, dec); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("day %d: a copied chunk not the base's: %v, the file's entries: %v", k, err, reflect.DeepEqual(got, want))
	}
	// A chunk written after the base's, corrupted.
	if len(fi.Chunks) == len(base.fi.Chunks) {
		t.Fatalf("day %d: no chunk after the base's", k)
	}
	bad := t.TempDir()
	data, err := os.ReadFile(filepath.Join(built, fi.Name))
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)-3] ^= 0x55
	writeAs(t, data, bad, fi.Name)
	if _, err := entriesOver(bad, fi, lay, base, dec); err == nil || !strings.Contains(err.Error(), "sha256") {
		t.Fatalf("day %d: a chunk after the base's corrupted: %v, want a sum error", k, err)
	}
}

// TestCVEsLayoutLines: the layout file's lines, written and parsed back,
// runs of positions and of dead lines.
func TestCVEsLayoutLines(t *testing.T) {
	l := &cvesLayout{base: 2, chunks: []int{4, 3, 2}, owners: []int32{0, -1, -1, 1, 2, 3, 4, 6, 5}, cves: 7}
	var data []byte
	for k := range l.lines() {
		data = append(l.appendLine(data, k), '\n')
	}
	if want := "2\n0 -2 1\n2+3\n6 5\n"; string(data) != want {
		t.Fatalf("lines %q, want %q", data, want)
	}
	got, err := parseCVEsLayout(data, l.chunks)
	if err != nil {
		t.Fatal(err)
	}
	if got.base != l.base || got.cves != l.cves || !slices.Equal(got.owners, l.owners) {
		t.Errorf("parsed %+v, want %+v", got, l)
	}
	c := compactCVEsLayout([]int{3, 2})
	if got, want := string(c.appendLine(c.appendLine(nil, 1), 2)), "0+33+2"; got != want {
		t.Errorf("compact lines %q, want %q", got, want)
	}
}

// TestCVEsLayoutRefused: a layout that does not hold each CVE once, at a
// line of its chunks, is refused by parseCVEsLayout, and by Load and
// Validate of a snapshot holding it, with an error naming the file.
func TestCVEsLayoutRefused(t *testing.T) {
	chunks := []int{3, 2}
	for _, tc := range []struct{ name, data, why string }{
		{"a CVE twice", "1\n0+3\n2 3\n", "CVE 3 is at two lines"},
		{"a CVE at no line", "1\n0 1 3\n4 -1\n", "CVE 3 is at no line"},
		{"a chunk short", "1\n0+2\n2+2\n", "line 2: 2 lines, the chunk holds 3"},
		{"a chunk long", "1\n0+4\n4\n", "more than the chunk's 3 lines"},
		{"a line more", "1\n0+3\n3+2\n5\n", "more than the 2 chunk lines"},
		{"a line short", "1\n0+3\n", "2 lines for 2 chunks"},
		{"a base past the chunks", "3\n0+3\n3+2\n", "a base of \"3\" chunks of 2"},
		{"a bad run", "1\n0+1 1 2\n3+2\n", "bad run \"0+1\""},
		{"a leading zero", "1\n00 1 2\n3+2\n", "bad run \"00\""},
		{"no newline", "1\n0+3\n3+2", "does not end in a newline"},
		{"past the lines", "1\n0+3\n3 9\n", "holds CVE 10, past the 5 lines"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseCVEsLayout([]byte(tc.data), chunks)
			if err == nil || !errors.Is(err, errCVEsLayout) || !strings.Contains(err.Error(), tc.why) {
				t.Errorf("error %v, want one saying %q", err, tc.why)
			}
		})
	}

	// A snapshot whose layout holds a CVE twice.
	dir := t.TempDir()
	cwe := smallCatalog(t, dir)
	day := overlayDays(t, dir, 50, 0, 0, 100)
	opt := BuildOptions{CWECatalog: cwe, Feeds: day(0), Out: filepath.Join(dir, "s"), Time: time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)}
	buildLogged(t, opt)
	m := readManifestT(t, opt.Out)
	lay := compactCVEsLayout([]int{m.Files[keyCVEs].Records})
	lay.owners[1] = 0
	enc, err := newSnapshotEncoder()
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	path := filepath.Join(opt.Out, fileCVEsLayout)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	fi, err := writeDataFile(path, enc, lay.lines(), func(k int) ([]byte, error) { return lay.appendLine(nil, k), nil })
	if err != nil {
		t.Fatal(err)
	}
	m.Files[keyCVEsLayout] = fi
	writeManifestJSON(t, opt.Out, m)
	if _, _, err := Load(opt.Out); err == nil || !strings.Contains(err.Error(), fileCVEsLayout+": bad CVE layout: CVE 1 is at two lines") {
		t.Errorf("Load: %v", err)
	}
	if _, err := Validate(opt.Out); err == nil || !strings.Contains(err.Error(), fileCVEsLayout+": bad CVE layout: CVE 1 is at two lines") {
		t.Errorf("Validate: %v", err)
	}
}

// FuzzCVEsLayout: the parser refuses or returns a layout that holds each
// CVE once, which it writes back as it read it.
func FuzzCVEsLayout(f *testing.F) {
	f.Add([]byte("2\n0 -2 1\n2+3\n6 5\n"), uint8(4), uint8(3), uint8(2))
	f.Add([]byte("1\n0+3\n3+2\n"), uint8(3), uint8(2), uint8(0))
	f.Add([]byte("0\n-3\n0+2\n"), uint8(3), uint8(2), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, a, b, c uint8) {
		var chunks []int
		for _, n := range []uint8{a, b, c} {
			if n > 0 {
				chunks = append(chunks, int(n))
			}
		}
		l, err := parseCVEsLayout(data, chunks)
		if err != nil {
			if !errors.Is(err, errCVEsLayout) {
				t.Fatalf("error %v is not errCVEsLayout", err)
			}
			return
		}
		seen := make([]bool, l.cves)
		for _, p := range l.owners {
			if p >= 0 {
				if int(p) >= l.cves || seen[p] {
					t.Fatalf("position %d of %d twice or out of range", p, l.cves)
				}
				seen[p] = true
			}
		}
		var back []byte
		for k := range l.lines() {
			back = append(l.appendLine(back, k), '\n')
		}
		again, err := parseCVEsLayout(back, chunks)
		if err != nil || !slices.Equal(again.owners, l.owners) || again.base != l.base {
			t.Fatalf("written back as %q: %v", back, err)
		}
	})
}

// TestCVEsOverlayFromFormat9: the first refresh after an upgrade, with
// a format 9 snapshot as -previous (its bodies in name order, no
// layout): its bodies are decoded (they are not carried as bytes across
// formats), laid out over its cves.jsonl.zst, the same bytes as with
// -full, serving every CVE as a build without -previous; the next
// refresh, over format 10, carries them.
func TestCVEsOverlayFromFormat9(t *testing.T) {
	dir := t.TempDir()
	cwe := smallCatalog(t, dir)
	const n, changed, added = 2000, 40, 5
	day := overlayDays(t, dir, n, changed, added, 2500)
	first := BuildOptions{CWECatalog: cwe, Feeds: day(0), Out: filepath.Join(dir, "s0"), Time: time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)}
	func() {
		defer func(v int) { writeVersion = v }(writeVersion)
		writeVersion = 9
		buildLogged(t, first)
	}()
	if m := readManifestT(t, first.Out); m.Version != 9 || m.Files[keyCVEsLayout].Name != "" {
		t.Fatalf("the first snapshot is of format %d, with %q", m.Version, m.Files[keyCVEsLayout].Name)
	}
	prev := first.Out
	for k := 1; k <= 2; k++ {
		opt := first
		opt.Feeds, opt.Previous, opt.Out, opt.Time = day(k), prev, filepath.Join(dir, fmt.Sprint("s", k)), first.Time.Add(time.Duration(k)*2*time.Hour)
		log := incrementalAndFull(t, opt)
		if !incremental(log) {
			t.Fatalf("day %d not built incrementally: %q", k, log)
		}
		decodedAll := slices.ContainsFunc(log, func(l string) bool { return strings.HasPrefix(l, "diff: ") && !strings.Contains(l, "decoded of") })
		if decodedAll != (k == 1) {
			t.Errorf("day %d: previous bodies decoded whole: %v, want %v (%q)", k, decodedAll, k == 1, log)
		}
		buildLogged(t, opt)
		fresh := opt
		fresh.Previous, fresh.Out = "", filepath.Join(dir, fmt.Sprint("fresh", k))
		buildLogged(t, fresh)
		sameCVEAnswers(t, fresh.Out, opt.Out)
		pm, m := readManifestT(t, prev), readManifestT(t, opt.Out)
		if was, now := pm.Files[keyCVEs].Chunks, m.Files[keyCVEs].Chunks; len(now) <= len(was) || !slices.Equal(now[:len(was)], was) {
			t.Errorf("day %d: the previous cves.jsonl.zst's %d chunks are not the first of its %d", k, len(was), len(now))
		}
		prev = opt.Out
	}
}
