package loader

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// idsChunkTables reads the ids file of the snapshot in dir and gives,
// for each of its chunks in order, the one table its lines belong to; a
// chunk holding lines of two tables is an error.
func idsChunkTables(t *testing.T, dir string) (Manifest, []string) {
	t.Helper()
	m := readManifestT(t, dir)
	dec, err := newDecoder()
	if err != nil {
		t.Fatal(err)
	}
	tables := make([]string, len(m.Files[keyIDs].Chunks))
	err = decodeFile(dir, m.Files[keyIDs], dec, func(chunk int, data []byte) error {
		return eachLine(data, 0, func(_ int, line []byte) error {
			var r idRecord
			if err := json.Unmarshal(line, &r); err != nil {
				return err
			}
			if tables[chunk] != "" && r.Table != tables[chunk] {
				return fmt.Errorf("chunk %d of ids.jsonl.zst holds lines of tables %q and %q", chunk+1, tables[chunk], r.Table)
			}
			tables[chunk] = r.Table
			return nil
		})
	})
	if err != nil {
		t.Fatalf("%s: %v", dir, err)
	}
	return m, tables
}

// sampleRefresh builds the real sample with changes/before.json.gz as the
// modified feed (first, built) and gives a two-hourly refresh of it with
// after.json.gz instead (second, -previous first, into s2, not built).
func sampleRefresh(t *testing.T) (first, second BuildOptions) {
	t.Helper()
	dir := t.TempDir()
	cwe := smallCatalog(t, dir)
	yearly := copyAs(t, sharedPath(t, "nvd/nvdcve-2.0-sample.json.gz"), filepath.Join(dir, "site"), "nvdcve-2.0-2024.json.gz")
	first = BuildOptions{CWECatalog: cwe, Feeds: []string{yearly, copyAs(t, sharedPath(t, "nvd/changes/before.json.gz"),
		filepath.Join(dir, "day1"), "nvdcve-2.0-modified.json.gz")}, Out: filepath.Join(dir, "s1"),
		Time: time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)}
	buildLogged(t, first)
	second = first
	second.Feeds = []string{yearly, copyAs(t, sharedPath(t, "nvd/changes/after.json.gz"), filepath.Join(dir, "day2"), "nvdcve-2.0-modified.json.gz")}
	second.Previous, second.Out, second.Time = first.Out, filepath.Join(dir, "s2"), first.Time.Add(2*time.Hour)
	return first, second
}

// TestIDsChunksKeptOverARefresh: ids.jsonl.zst starts each table in a
// chunk of its own and ends with "next", so a build with -previous,
// which only adds ids after the largest, leaves every chunk of a table
// but its last as it was: the blobs a publish need not send again. The
// real sample and its change pair, with chunks of 2 KB.
func TestIDsChunksKeptOverARefresh(t *testing.T) {
	defer func(n int) { idsChunkBytes = n }(idsChunkBytes)
	idsChunkBytes = 2 << 10
	first, second := sampleRefresh(t)
	buildLogged(t, second)

	m1, t1 := idsChunkTables(t, first.Out)
	m2, t2 := idsChunkTables(t, second.Out)
	for _, tables := range [][]string{t1, t2} {
		if n := len(tables); n == 0 || tables[n-1] != "next" || m1.Files[keyIDs].Chunks[len(t1)-1].Records != 1 || m2.Files[keyIDs].Chunks[len(t2)-1].Records != 1 {
			t.Fatalf("ids.jsonl.zst does not end with a chunk of the one next line: %q", tables)
		}
	}
	byTable := func(m Manifest, tables []string) map[string][]Chunk {
		out := map[string][]Chunk{}
		for i, name := range tables {
			out[name] = append(out[name], m.Files[keyIDs].Chunks[i])
		}
		return out
	}
	c1, c2 := byTable(m1, t1), byTable(m2, t2)
	kept := 0
	for _, name := range []string{"cpe", "cvss", "ref"} {
		was, now := c1[name], c2[name]
		if len(was) < 2 {
			t.Fatalf("table %s in %d chunks: the sample should fill several of 2 KB", name, len(was))
		}
		if len(now) < len(was) {
			t.Fatalf("table %s: %d chunks after the refresh, %d before", name, len(now), len(was))
		}
		for i := range len(was) - 1 {
			if now[i] != was[i] {
				t.Errorf("table %s: chunk %d changed over the refresh: %+v, was %+v", name, i+1, now[i], was[i])
			}
			kept++
		}
	}
	t.Logf("chunks %d then %d, %d kept (%s)", len(t1), len(t2), kept, fmt.Sprint(t2))
}

// TestCarriedIDs: a build with -previous reads the previous id tables as
// stored: the CPE table and counters whole, the CVSS and reference
// records only of the CVEs it asks for, the same as reading every
// record gives them; it writes the same file as a build of every feed,
// copying the chunks whole to a table but its last; a file not as
// writeIDs writes it is read whole.
func TestCarriedIDs(t *testing.T) {
	defer func(n int) { idsChunkBytes = n }(idsChunkBytes)
	idsChunkBytes = 2 << 10
	first, second := sampleRefresh(t)
	if log := incrementalAndFull(t, second); !incremental(log) {
		t.Fatalf("not incremental: %q", log)
	}

	whole, err := Read(first.Out)
	if err != nil {
		t.Fatal(err)
	}
	m := readManifestT(t, first.Out)
	dec, err := newDecoder()
	if err != nil {
		t.Fatal(err)
	}
	ids := newIDTables()
	c, err := readCarriedIDs(first.Out, m.Files[keyIDs], dec, ids)
	if err != nil || c == nil {
		t.Fatalf("not read as stored: %v", err)
	}
	w := whole.ids
	if len(ids.cvss)+len(ids.ref) != 0 || !maps.Equal(ids.cpe, w.cpe) || ids.nextCPE != w.nextCPE || ids.nextCVSS != w.nextCVSS || ids.nextRef != w.nextRef || ids.nextAlert != w.nextAlert {
		t.Fatalf("as stored: %d CPEs, %d CVSS, %d references, next %d %d %d %d; read whole: %d CPEs, next %d %d %d %d",
			len(ids.cpe), len(ids.cvss), len(ids.ref), ids.nextCPE, ids.nextCVSS, ids.nextRef, ids.nextAlert, len(w.cpe), w.nextCPE, w.nextCVSS, w.nextRef, w.nextAlert)
	}
	name := ""
	for k := range w.ref {
		name = k.cve
		break
	}
	ids.prev = c
	if err := ids.loadCVEs(map[string]bool{name: true}); err != nil {
		t.Fatal(err)
	}
	only := func(cve string) func(k cvssKey, id int64) bool {
		return func(k cvssKey, _ int64) bool { return k.cve != cve }
	}
	wantCVSS := maps.Clone(w.cvss)
	maps.DeleteFunc(wantCVSS, only(name))
	wantRef := maps.Clone(w.ref)
	maps.DeleteFunc(wantRef, func(k refKey, _ int64) bool { return k.cve != name })
	if len(wantRef) == 0 || !maps.Equal(ids.cvss, wantCVSS) || !maps.Equal(ids.ref, wantRef) {
		t.Errorf("the records of %s: %d CVSS and %d references, want %d and %d", name, len(ids.cvss), len(ids.ref), len(wantCVSS), len(wantRef))
	}

	// Two tables in one chunk: read whole.
	bad := filepath.Join(t.TempDir(), "bad")
	if err := os.MkdirAll(bad, 0o755); err != nil {
		t.Fatal(err)
	}
	enc, err := newSnapshotEncoder()
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	lines := []string{`{"table":"cpe","id":1,"uri":"cpe:2.3:a:x:y:1:*:*:*:*:*:*:*"}`, `{"table":"cvss","id":1,"cve":"CVE-2024-0001","version":"3.1","source":"nvd"}`, `{"table":"next","id":1}`}
	fi, err := writeDataFile(filepath.Join(bad, fileIDs), enc, len(lines), func(i int) ([]byte, error) { return []byte(lines[i]), nil })
	if err != nil {
		t.Fatal(err)
	}
	if c, err := readCarriedIDs(bad, fi, dec, newIDTables()); c != nil || err != nil {
		t.Errorf("two tables in a chunk read as stored: %v", err)
	}
}
