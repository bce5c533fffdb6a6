package loader

import (
	"fmt"
	"path/filepath"
	"testing"
)

// TestPrevTextsLines: the lines of a text table of many chunks read as
// stored, in order, backwards and at random, and a line past the end
// refused.
func TestPrevTextsLines(t *testing.T) {
	dir := t.TempDir()
	enc, err := newSnapshotEncoder()
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	w, err := newChunkWriter(filepath.Join(dir, fileStrings), enc)
	if err != nil {
		t.Fatal(err)
	}
	w.closeAt = 100 // a few lines a chunk
	var want [][]byte
	for i := range 200 {
		line, err := marshal(fmt.Sprintf(`[{"n":%d,"pad":"%*s"}]`, i, i%37, ""))
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, line)
		if err := w.line(line); err != nil {
			t.Fatal(err)
		}
	}
	fi, err := w.close()
	if err != nil {
		t.Fatal(err)
	}
	if len(fi.Chunks) < 20 {
		t.Fatalf("%d chunks", len(fi.Chunks))
	}
	dec, err := decoder()
	if err != nil {
		t.Fatal(err)
	}
	p := &prevTexts{dir: dir, fi: fi, dec: dec}
	defer p.close()
	check := func(j int) {
		t.Helper()
		got, err := p.line(uint32(j))
		if err != nil || string(got) != string(want[j]) {
			t.Fatalf("line %d = %s, %v; want %s", j, got, err, want[j])
		}
	}
	for j := range want {
		check(j)
	}
	for j := len(want) - 1; j >= 0; j -= 3 {
		check(j)
	}
	for j := 0; j < len(want); j += 41 {
		check(j)
		check(len(want) - 1 - j)
	}
	if _, err := p.line(uint32(len(want))); err == nil {
		t.Error("a line past the end read")
	}
}
