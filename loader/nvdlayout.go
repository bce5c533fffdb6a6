package loader

// How a build with -previous lays NVD's records out in nvd.zst (format
// 9, see index.NVDLayout): an overlay. NVD changes records of every year
// every day, so records packed in the order served change nearly every
// chunk of nvd.zst on a refresh of 2 % of them, and a publish pushes (a
// replica pulls) the whole file again. Instead, the build keeps the
// previous snapshot's nvd.zst as it is, its chunks the same bytes (the
// same blobs), every record whose bytes did not change where it was, and
// appends blocks of the records changed or added since, in the order
// served, in chunks of their own. The lines of the records replaced or
// dropped are dead. Once the dead lines and the records outside the base
// (the blocks of the last compact layout) pass nvdCompactShare of the
// records, the build writes the compact layout again (the records in the
// order served, all in fresh blocks): a compaction, once every few days at
// NVD's pace. A build without -previous writes the compact layout.
//
// The layout is a function of the records and the previous snapshot
// alone: an incremental build (its carried records are those kept) and a
// build of every feed (which compares each record's bytes with the
// previous snapshot's record of the CVE) write the same.

import (
	"fmt"
	"slices"

	"github.com/klauspost/compress/zstd"

	"github.com/vulnd/vulnd/index"
)

// nvdCompactShare is the share of the records, in percent, that the dead
// lines and the records outside the base may reach before a build writes
// the compact layout again.
const nvdCompactShare = 10

// keptNVD is a previous snapshot's nvd.zst that a layout keeps whole, as
// the first blocks of the new one.
type keptNVD struct {
	dir string
	fi  FileInfo
}

// planOverlay tells whether the records (in the order served) are laid
// out over prev (the previous snapshot's layout, nil: none) rather than
// compactly, kept[k] being the previous record (its position in prev's
// order served) whose place record k keeps, -1 for a record changed or
// added since.
func planOverlay(prev *index.NVDLayout, kept []int) bool {
	if prev == nil || len(prev.Blocks) == 0 || len(kept) == 0 {
		return false
	}
	outside := 0 // records outside the base
	k := 0       // records kept
	for _, j := range kept {
		switch {
		case j < 0:
			outside++
		case int(prev.Places[j].Block) >= prev.Base:
			outside++
			k++
		default:
			k++
		}
	}
	if k == 0 {
		return false
	}
	dead := prev.StoredLines() - k
	return (dead+outside)*100 <= nvdCompactShare*len(kept)
}

// overlayNVD lays records out over prev (see planOverlay): facts are the
// records in the order served, kept as for planOverlay, delta the records
// not kept, packed (their facts in the same order); the frames are those
// of delta's blocks, after prev's.
func overlayNVD(prev *index.NVDLayout, facts []index.NVDFacts, kept []int, delta *index.PackedNVD) (*index.PackedNVD, error) {
	lay := &index.NVDLayout{Base: prev.Base, Blocks: slices.Concat(prev.Blocks, delta.Blocks), Places: make([]index.NVDPlace, len(facts))}
	dp := index.CompactNVDLayout(delta.Blocks).Places
	d := 0
	for k, j := range kept {
		if j >= 0 {
			lay.Places[k] = prev.Places[j]
			continue
		}
		if d >= len(delta.Facts) || delta.Facts[d].ID != facts[k].ID {
			return nil, fmt.Errorf("NVD record of %s: not among the records packed anew", facts[k].ID)
		}
		lay.Places[k] = index.NVDPlace{Block: int32(len(prev.Blocks)) + dp[d].Block, Slot: dp[d].Slot}
		d++
	}
	if d != len(delta.Facts) {
		return nil, fmt.Errorf("%d NVD records packed anew, %d placed", len(delta.Facts), d)
	}
	return &index.PackedNVD{Facts: facts, Blocks: lay.Blocks, Frames: delta.Frames, Decoded: delta.Decoded, Layout: lay}, nil
}

// previousLayout is what a build of every feed with -previous reads of
// the previous snapshot's NVD records to lay its own out (nil when it
// has none it can read: the build writes the compact layout).
func previousLayout(dir string) *previousNVD {
	if dir == "" {
		return nil
	}
	m, _, err := readManifest(dir, true)
	if err != nil || m.Version < 7 {
		return nil
	}
	p, _ := readPreviousStore(dir, m)
	return p
}

// overlayRecords lays a build's records out over the previous snapshot's
// (see planOverlay): order is the records' order served (indexes into
// facts), raw gives each record's bytes; nil when the compact layout is
// to be written.
func overlayRecords(prev *previousNVD, facts []index.NVDFacts, order []int, raw func(i int, dst []byte) ([]byte, error), enc *zstd.Encoder) (*index.PackedNVD, *keptNVD, error) {
	if prev == nil {
		return nil, nil, nil
	}
	prevHash, err := prev.hashes()
	if err != nil {
		return nil, nil, nil // the build's own read of -previous says what is wrong
	}
	at := make(map[string]int, len(prev.lines))
	for j := range prev.lines {
		at[prev.lines[j].ID] = j
	}
	hashes := make([]recHash, len(facts))
	errs := index.OnCores((len(facts)+255)/256, func() func(int) error {
		var buf []byte
		return func(c int) error {
			for i := c * 256; i < min((c+1)*256, len(facts)); i++ {
				var err error
				if buf, err = raw(i, buf[:0]); err != nil {
					return fmt.Errorf("NVD record of %s: %w", facts[i].ID, err)
				}
				hashes[i] = recordHash(buf)
			}
			return nil
		}
	})
	if err := index.FirstError(errs); err != nil {
		return nil, nil, err
	}
	kept := make([]int, len(order))
	var delta []index.NVDFacts
	var deltaOf []int // the record of each of delta
	for k, i := range order {
		kept[k] = -1
		if j, ok := at[facts[i].ID]; ok && prevHash[j] == hashes[i] {
			kept[k] = j
		} else {
			delta = append(delta, facts[i])
			deltaOf = append(deltaOf, i)
		}
	}
	if !planOverlay(prev.lay, kept) {
		return nil, nil, nil
	}
	sorted := make([]index.NVDFacts, len(order))
	for k, i := range order {
		sorted[k] = facts[i]
	}
	return packOverlay(prev, sorted, kept, delta, func(d int, dst []byte) ([]byte, error) { return raw(deltaOf[d], dst) }, enc)
}

// packOverlay packs the records not kept (delta, in the order served,
// raw giving each's bytes) and lays all out over prev's.
func packOverlay(prev *previousNVD, facts []index.NVDFacts, kept []int, delta []index.NVDFacts, raw func(d int, dst []byte) ([]byte, error), enc *zstd.Encoder) (*index.PackedNVD, *keptNVD, error) {
	dp, err := index.PackNVDFrom(delta, raw, enc)
	if err != nil {
		return nil, nil, err
	}
	p, err := overlayNVD(prev.lay, facts, kept, dp)
	if err != nil {
		return nil, nil, err
	}
	return p, &keptNVD{dir: prev.dir, fi: prev.fi}, nil
}
