package index

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/zstd"
)

// TestPackNVDFromIsPackNVD: records handed over one by one as their
// blocks are made pack into the same blocks, byte for byte, as the
// records given whole (nvd.zst does not change with how a build holds
// them), whatever order they are given in.
func TestPackNVDFromIsPackNVD(t *testing.T) {
	recs := sampleNVDRecords(t, 200)
	// Given newest first, so that packing reorders them, one record with
	// newlines (stored as 0x1F).
	for i, j := 0, len(recs)-1; i < j; i, j = i+1, j-1 {
		recs[i], recs[j] = recs[j], recs[i]
	}
	recs[7].Raw = bytes.Replace(recs[7].Raw, []byte(`{`), []byte("{\n  "), 1)
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault))
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	want, err := PackNVD(recs, enc)
	if err != nil {
		t.Fatal(err)
	}
	facts := make([]NVDFacts, len(recs))
	for i := range recs {
		facts[i] = recs[i].Facts
	}
	got, err := PackNVDFrom(facts, func(i int, dst []byte) ([]byte, error) { return append(dst, recs[i].Raw...), nil }, enc)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PackNVDFrom differs from PackNVD (-PackNVD +PackNVDFrom):\n%s", diff)
	}
	if len(got.Frames) != (200+NVDBlockRecords-1)/NVDBlockRecords || got.Facts[0].ID != "CVE-2030-00000" {
		t.Errorf("%d blocks, first record %s: want %d blocks, CVE-2030-00000 first (oldest published)",
			len(got.Frames), got.Facts[0].ID, (200+NVDBlockRecords-1)/NVDBlockRecords)
	}
}

// TestPackNVDFromErrors: a record holding byte 0x1F, or one that cannot
// be handed over, stops the packing with the error of the first such
// record in the order served, whichever block it is in.
func TestPackNVDFromErrors(t *testing.T) {
	recs := sampleNVDRecords(t, 100)
	enc, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	facts := make([]NVDFacts, len(recs))
	for i := range recs {
		facts[i] = recs[i].Facts
	}
	broken := errors.New("cannot decompress")
	raw := func(i int, dst []byte) ([]byte, error) {
		switch i {
		case 90:
			return nil, broken
		case 40, 70:
			return append(dst, append([]byte{0x1F}, recs[i].Raw...)...), nil
		}
		return append(dst, recs[i].Raw...), nil
	}
	_, err = PackNVDFrom(facts, raw, enc)
	if want := "NVD record of CVE-2030-00040 holds byte 0x1F"; err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, ErrInvalid) {
		t.Errorf("error %v, want one saying %q", err, want)
	}
	facts[90].Published = "2019-01-01T00:00:00.000" // served first
	_, err = PackNVDFrom(facts, raw, enc)
	if err == nil || !errors.Is(err, broken) || !strings.Contains(err.Error(), "CVE-2030-00090") {
		t.Errorf("error %v, want %v naming CVE-2030-00090", err, broken)
	}
	if _, err := PackNVD([]NVDRecord{{Raw: []byte(fmt.Sprintf(`{"id":"x%c"}`, 0x1F)), Facts: facts[0]}}, enc); err == nil {
		t.Error("PackNVD took a record holding 0x1F")
	}
}

// TestPackNVDFramesHoldTheirSize: a packed frame holds its own bytes, not
// a buffer the size of its block decoded, which the packed records keep
// until they are written (300 MB more for 100k records).
func TestPackNVDFramesHoldTheirSize(t *testing.T) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault))
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	p, err := PackNVD(sampleNVDRecords(t, 100), enc)
	if err != nil {
		t.Fatal(err)
	}
	for b, f := range p.Frames {
		if cap(f) > len(f)*3/2 {
			t.Fatalf("block %d: a frame of %d bytes holds %d (its block decoded: %d)", b, len(f), cap(f), p.Decoded[b])
		}
	}
}
