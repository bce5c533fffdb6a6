package loader

import (
	"bytes"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
)

// TestLoadLazyTextsEqualRead: the demo snapshot served by Load, whose
// text table's JSON texts are made on first read, gives every CVE the
// details body an index on the same snapshot read whole (read, as
// validate does, every text made at once) gives.
func TestLoadLazyTextsEqualRead(t *testing.T) {
	const dir = "../snapshots/demo"
	ix, _, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, bodies, err := read(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := decodeEntries(dir, s.Manifest.Files[keyCVEs], mustDecoder(t))
	if err != nil {
		t.Fatal(err)
	}
	eager, err := buildIndex(dir, s.Manifest, s.ID, time.Time{}, s.Data.CWEs, entries, s.details, s.Data.Reports, s.epss)
	if err != nil {
		t.Fatal(err)
	}
	withEntries := 0
	for i := range s.Data.CVEs {
		name := s.Data.CVEs[i].Name
		want, err1 := eager.AppendDetails(nil, name)
		got, err2 := ix.AppendDetails(nil, name)
		if err1 != nil || err2 != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: %s (%v), want %s (%v)", name, got, err2, want, err1)
		}
		if !bytes.Contains(want, []byte(`"affected":[]`)) {
			withEntries++
		}
	}
	if withEntries == 0 || len(bodies) != len(s.Data.CVEs) {
		t.Fatalf("%d CVEs with affected entries of %d: the demo snapshot no longer tests this", withEntries, len(s.Data.CVEs))
	}
}

func mustDecoder(t *testing.T) *zstd.Decoder {
	t.Helper()
	dec, err := decoder()
	if err != nil {
		t.Fatal(err)
	}
	return dec
}
