package loader

// How a build holds NVD's records as read until it packs them (see
// index.PackNVDFrom): each winning record is compressed alone, as soon as
// it wins, into large shared buffers, rather than kept as read, each its
// own allocation. Alone, a record of NVD's sample compresses about 2.7
// times (at any level: its repeats are its own keys); the blocks packed
// right after the feeds are read take far less (16 records a frame).

import (
	"github.com/klauspost/compress/zstd"

	"github.com/vulnd/vulnd/index"
)

// nvdSlabBytes is the size of the buffers the compressed records are
// appended to.
const nvdSlabBytes = 4 << 20

// nvdStore compresses records as read, for one goroutine.
type nvdStore struct {
	enc     *zstd.Encoder
	scratch []byte // the last record compressed
	slab    []byte // the buffer records are appended to
}

func newNVDStore() (*nvdStore, error) {
	// The fastest level: a record compresses about as well at the others,
	// and reading must not slow down. No checksum: the frames never leave
	// the process.
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
		zstd.WithEncoderCRC(false))
	if err != nil {
		return nil, err
	}
	return &nvdStore{enc: enc}, nil
}

// add returns raw compressed alone (one zstd frame), in a buffer shared
// with other records.
func (s *nvdStore) add(raw []byte) []byte {
	s.scratch = s.enc.EncodeAll(raw, s.scratch[:0])
	if cap(s.slab)-len(s.slab) < len(s.scratch) {
		s.slab = make([]byte, 0, max(nvdSlabBytes, len(s.scratch)))
	}
	start := len(s.slab)
	s.slab = append(s.slab, s.scratch...)
	return s.slab[start:len(s.slab):len(s.slab)]
}

func (s *nvdStore) close() { s.enc.Close() }

// nvdRecords are the winning records of a build's feeds: each one's
// facts, its record as read, compressed alone (see nvdStore), and where
// it came from.
type nvdRecords struct {
	facts []index.NVDFacts
	z     [][]byte
	from  []nvdFrom
}

// pack orders the records as served and compresses them in blocks with
// enc (see index.PackNVD), decompressing each as its block is made.
func (n *nvdRecords) pack(enc *zstd.Encoder) (*nvdPacked, error) {
	dec, err := decoder()
	if err != nil {
		return nil, err
	}
	p, err := index.PackNVDFrom(n.facts, func(i int, dst []byte) ([]byte, error) {
		return dec.DecodeAll(n.z[i], dst)
	}, enc)
	if err != nil {
		return nil, err
	}
	return withFrom(p, n.facts, n.from), nil
}

// nvdPacked are NVD's records packed, with where each came from (nil:
// not known), in the order of Facts.
type nvdPacked struct {
	*index.PackedNVD
	from []nvdFrom
}

// withFrom puts from, given in the order of facts, beside p's records,
// which hold the same records in another order.
func withFrom(p *index.PackedNVD, facts []index.NVDFacts, from []nvdFrom) *nvdPacked {
	if from == nil {
		return &nvdPacked{PackedNVD: p}
	}
	at := make(map[string]int, len(facts))
	for i := range facts {
		at[facts[i].ID] = i
	}
	out := &nvdPacked{PackedNVD: p, from: make([]nvdFrom, len(p.Facts))}
	for i := range p.Facts {
		out.from[i] = from[at[p.Facts[i].ID]]
	}
	return out
}

// newSnapshotEncoder is the zstd encoder of a snapshot's data files.
func newSnapshotEncoder() (*zstd.Encoder, error) {
	return zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault))
}

// nvdSize is the compressed size of the packed records in bytes.
func nvdSize(p *nvdPacked) int {
	n := 0
	for _, b := range p.Blocks {
		n += b.Size
	}
	return n
}
