package loader

import (
	"encoding/json"
	"fmt"
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

// TestIDsChunksKeptOverARefresh: ids.jsonl.zst starts each table in a
// chunk of its own and ends with "next", so a build with -previous,
// which only adds ids after the largest, leaves every chunk of a table
// but its last as it was: the blobs a publish need not send again. The
// real sample and its change pair, with chunks of 2 KB.
func TestIDsChunksKeptOverARefresh(t *testing.T) {
	defer func(n int) { idsChunkBytes = n }(idsChunkBytes)
	idsChunkBytes = 2 << 10
	dir := t.TempDir()
	cwe := smallCatalog(t, dir)
	yearly := copyAs(t, sharedPath(t, "nvd/nvdcve-2.0-sample.json.gz"), filepath.Join(dir, "site"), "nvdcve-2.0-2024.json.gz")
	first := BuildOptions{CWECatalog: cwe, Feeds: []string{yearly, copyAs(t, sharedPath(t, "nvd/changes/before.json.gz"),
		filepath.Join(dir, "day1"), "nvdcve-2.0-modified.json.gz")}, Out: filepath.Join(dir, "s1"),
		Time: time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)}
	buildLogged(t, first)
	second := first
	second.Feeds = []string{yearly, copyAs(t, sharedPath(t, "nvd/changes/after.json.gz"), filepath.Join(dir, "day2"), "nvdcve-2.0-modified.json.gz")}
	second.Previous, second.Out, second.Time = first.Out, filepath.Join(dir, "s2"), first.Time.Add(2*time.Hour)
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
