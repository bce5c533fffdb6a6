package loader

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vulnd/vulnd/index"
)

// overlayDays makes the feeds of days of NVD's pace: a yearly feed of n
// records that never changes, and a modified feed per day holding every
// record changed or added since the first day (each day changed records
// changed, added added), each record's summary about size bytes of
// words. day(k) writes day k's feeds (k from 0, each once, in order) and
// returns them.
func overlayDays(t *testing.T, dir string, n, changed, added, size int) func(k int) []string {
	t.Helper()
	r := rand.New(rand.NewPCG(29, 2))
	words := []string{"buffer", "overflow", "in", "the", "parser", "allows", "remote", "attackers", "to", "execute", "code", "via", "a", "crafted", "request", "of"}
	text := func(k int) string {
		var b strings.Builder
		fmt.Fprintf(&b, "day %d:", k)
		for b.Len() < size {
			b.WriteString(" " + words[r.IntN(len(words))] + fmt.Sprint(r.IntN(1000)))
		}
		return b.String()
	}
	id := func(i int) string { return fmt.Sprintf("CVE-2024-%05d", i+1) }
	var recs []string
	for i := range n {
		recs = append(recs, record(id(i), "2024-02-01T00:00:00.000", text(0)))
	}
	yearly := writeAs(t, []byte(feed(recs...)), filepath.Join(dir, "site"), "nvdcve-2.0-2024.json")
	perm := r.Perm(n) // the order records change in
	modified := map[int]string{}
	next, fresh := 0, n
	return func(k int) []string {
		if k > 0 {
			mod := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC).AddDate(0, 0, k).Format("2006-01-02T15:04:05.000")
			for range changed {
				i := perm[next%n]
				next++
				modified[i] = record(id(i), mod, text(k))
			}
			for range added {
				modified[fresh] = record(id(fresh), mod, text(k))
				fresh++
			}
		}
		var recs []string
		for _, i := range slices.Sorted(func(yield func(int) bool) {
			for i := range modified {
				if !yield(i) {
					return
				}
			}
		}) {
			recs = append(recs, modified[i])
		}
		return []string{yearly, writeAs(t, []byte(feed(recs...)), filepath.Join(dir, fmt.Sprint("day", k)), "nvdcve-2.0-modified.json")}
	}
}

// sameNVDAnswers fails unless the snapshots a and b answer NVD's CVE API
// the same: every record by cveId, and every page of the records.
func sameNVDAnswers(t *testing.T, a, b string) {
	t.Helper()
	ixA, _, err := Load(a)
	if err != nil {
		t.Fatal(err)
	}
	ixB, _, err := Load(b)
	if err != nil {
		t.Fatal(err)
	}
	na, nb := ixA.NVD(), ixB.NVD()
	if na.Len() != nb.Len() || na.Len() == 0 {
		t.Fatalf("%d NVD records, %d in %s", na.Len(), nb.Len(), b)
	}
	for i := range na.Len() {
		ra, errA := na.AppendRaw(nil, na.ID(i))
		rb, errB := nb.AppendRaw(nil, na.ID(i))
		if na.ID(i) != nb.ID(i) || errA != nil || errB != nil || !bytes.Equal(ra, rb) {
			t.Fatalf("record %d: %s (%v), %s in %s (%v)", i+1, na.ID(i), errA, nb.ID(i), b, errB)
		}
	}
	at := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	for _, size := range []int{2000, 333} {
		for start := 0; start < na.Len(); start += size {
			pa, errA := ixA.AppendNVDPage(nil, ixA.SearchNVD(&index.NVDQuery{}), start, size, at)
			pb, errB := ixB.AppendNVDPage(nil, ixB.SearchNVD(&index.NVDQuery{}), start, size, at)
			if errA != nil || errB != nil || !bytes.Equal(pa, pb) {
				t.Fatalf("page of %d from %d: %d bytes (%v), %d in %s (%v)", size, start, len(pa), errA, len(pb), b, errB)
			}
		}
	}
}

// TestNVDOverlayChain: a chain of refreshes, each built with -previous
// the one before (incrementally and with -full, the same bytes), answers
// NVD's CVE API exactly as a build without -previous of the same feeds.
// A refresh keeps the previous nvd.zst's chunks as they were (the same
// sums, first) and adds chunks of the records changed or added; once the
// dead lines and the records outside the base pass nvdCompactShare of
// the records, it writes the compact layout again: nvd.zst, its facts and
// layout as a build without -previous writes them.
func TestNVDOverlayChain(t *testing.T) {
	overlayChain(t, keyNVD, func(k int, prev, built, fresh string) {
		sameNVDAnswers(t, fresh, built)
		pm, m, fm := readManifestT(t, prev), readManifestT(t, built), readManifestT(t, fresh)
		records := overlayChainCVEs(k)
		// Compacted on day 3: as a build without -previous lays them out.
		checkOverlayDay(t, k, pm, m, fm, keyNVD, []string{keyNVD, keyNVDFacts, keyNVDLayout}, records)
		if k != 3 && m.Files[keyNVD].SHA256 == fm.Files[keyNVD].SHA256 {
			t.Errorf("day %d: nvd.zst is the compact one", k)
		}
	})
}

// The chain of refreshes of TestNVDOverlayChain and TestCVEsOverlayChain:
// n CVEs, changed of them changed and added new each day.
const overlayN, overlayChanged, overlayAdded = 2000, 40, 5

// overlayChainCVEs is the number of CVEs (and NVD records) on day k.
func overlayChainCVEs(k int) int { return overlayN + k*overlayAdded }

// overlayChain builds the first day of the chain (whose file key must be
// of 2 chunks or more), then four refreshes, each with -previous the one
// before, checked to be built incrementally and to write the same bytes
// as with -full, and a build of the same feeds without -previous beside
// each; check is given each day's previous, refreshed and fresh
// snapshots.
func overlayChain(t *testing.T, key string, check func(k int, prev, built, fresh string)) {
	t.Helper()
	dir := t.TempDir()
	cwe := smallCatalog(t, dir)
	day := overlayDays(t, dir, overlayN, overlayChanged, overlayAdded, 2500)
	first := BuildOptions{CWECatalog: cwe, Feeds: day(0), Out: filepath.Join(dir, "s0"), Time: time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)}
	buildLogged(t, first)
	if m0 := readManifestT(t, first.Out); len(m0.Files[key].Chunks) < 2 {
		t.Fatalf("%s of %d chunks, want 2 or more", m0.Files[key].Name, len(m0.Files[key].Chunks))
	}
	prev := first.Out
	for k := 1; k <= 4; k++ {
		opt := first
		opt.Feeds, opt.Previous, opt.Out, opt.Time = day(k), prev, filepath.Join(dir, fmt.Sprint("s", k)), first.Time.Add(time.Duration(k)*2*time.Hour)
		if log := incrementalAndFull(t, opt); !incremental(log) {
			t.Fatalf("day %d not built incrementally: %q", k, log)
		}
		buildLogged(t, opt)
		fresh := opt
		fresh.Previous, fresh.Out = "", filepath.Join(dir, fmt.Sprint("fresh", k))
		buildLogged(t, fresh)
		check(k, prev, opt.Out, fresh.Out)
		prev = opt.Out
	}
}

// checkOverlayDay checks day k's file key of the chain (see overlayChain)
// against the previous day's (pm) and a build without -previous (fm):
// on day 3, the dead lines and those outside the base pass the share and
// every file of compacted is the compact one, its lines the count
// records; on the others, the previous file's chunks come first, the
// same sums, and its dead lines are the records changed since the base
// (day 4's base is day 3's compaction).
func checkOverlayDay(t *testing.T, k int, pm, m, fm Manifest, key string, compacted []string, records int) {
	t.Helper()
	was, now := pm.Files[key].Chunks, m.Files[key].Chunks
	lines := 0
	for _, c := range now {
		lines += c.Records
	}
	if k == 3 {
		for _, key := range compacted {
			if got, want := m.Files[key], fm.Files[key]; got.SHA256 != want.SHA256 {
				t.Errorf("day %d: %s is not the compact one (%d bytes, want %d)", k, got.Name, got.Size, want.Size)
			}
		}
		if lines != records {
			t.Errorf("day %d: %d lines in %s for %d records", k, lines, m.Files[key].Name, records)
		}
		return
	}
	if len(now) <= len(was) || !slices.Equal(now[:len(was)], was) {
		t.Errorf("day %d: the previous %s's %d chunks are not the first of its %d", k, m.Files[key].Name, len(was), len(now))
	}
	since := k
	if k == 4 {
		since = 1
	}
	if dead := lines - records; dead != since*overlayChanged {
		t.Errorf("day %d: %d dead lines in %s, want %d", k, dead, m.Files[key].Name, since*overlayChanged)
	}
}

// readManifestT reads the manifest of the snapshot in dir.
func readManifestT(t *testing.T, dir string) Manifest {
	t.Helper()
	m, _, err := readManifest(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestNVDLayoutRefused: a snapshot whose layout file places a record out
// of its blocks, two records at one line, or gives blocks of other lines
// than nvd.zst holds, is refused by Load and Validate with a clear
// error, naming the file.
func TestNVDLayoutRefused(t *testing.T) {
	dir := t.TempDir()
	cwe := smallCatalog(t, dir)
	day := overlayDays(t, dir, 100, 3, 1, 100)
	first := BuildOptions{CWECatalog: cwe, Feeds: day(0), Out: filepath.Join(dir, "s0"), Time: time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)}
	buildLogged(t, first)
	good := first
	good.Feeds, good.Previous, good.Out, good.Time = day(1), first.Out, filepath.Join(dir, "s1"), first.Time.Add(2*time.Hour)
	buildLogged(t, good)
	raw, err := os.ReadFile(filepath.Join(good.Out, fileNVDLayout))
	if err != nil {
		t.Fatal(err)
	}
	dec, err := decoder()
	if err != nil {
		t.Fatal(err)
	}
	text, err := dec.DecodeAll(raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	// 7 blocks of the first day (100 records), one of the second (4),
	// the 3 records changed dead in the first ones.
	lines := strings.Split(strings.TrimSuffix(string(text), "\n"), "\n")
	if len(lines) != 1+8 || lines[0] != "7" || strings.Count(string(text), " -") != 3 {
		t.Fatalf("layout:\n%s", text)
	}
	// The last block's line, "size p p p p": its records by position.
	last := strings.Fields(lines[len(lines)-1])
	for _, tc := range []struct {
		name string
		edit func(lines []string) []string
		want string
	}{
		{"a record out of range", func(l []string) []string {
			l[len(l)-1] = strings.Join(append(last[:4:4], "101"), " ")
			return l
		}, "line 9: number 101 out of range"},
		{"two records at one line", func(l []string) []string {
			l[len(l)-1] = strings.Join(append(last[:4:4], last[1]), " ")
			return l
		}, "is at two places"},
		{"a record at no line", func(l []string) []string {
			l[len(l)-1] = strings.Join(append(last[:4:4], "-"), " ")
			return l
		}, "100 of the 101 records placed"},
		{"a block of a line more than nvd.zst holds", func(l []string) []string {
			l[len(l)-1] += " -"
			return l
		}, "blocks of 105 lines, nvd.zst has 104"},
		{"a base past the blocks", func(l []string) []string {
			l[0] = "9"
			return l
		}, "a base of 9 blocks of 8"},
		{"a block's size wrong", func(l []string) []string {
			f := strings.Fields(l[len(l)-1])
			f[0] += "1"
			l[len(l)-1] = strings.Join(f, " ")
			return l
		}, "NVD blocks of"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := filepath.Join(t.TempDir(), "snap")
			if err := os.CopyFS(snap, os.DirFS(good.Out)); err != nil {
				t.Fatal(err)
			}
			edited := []byte(strings.Join(tc.edit(slices.Clone(lines)), "\n") + "\n")
			setChunks(t, snap, keyNVDLayout, [][]byte{zstdFrame(t, edited)}, []int64{int64(len(edited))}, []int{len(lines)})
			if _, _, err := Load(snap); err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), snap) {
				t.Errorf("Load: %v, want %q", err, tc.want)
			}
			if _, err := Validate(snap); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Validate: %v, want %q", err, tc.want)
			}
		})
	}
}
