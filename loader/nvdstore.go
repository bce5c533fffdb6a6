package loader

// How a build holds NVD's records as read until it packs them (see
// index.PackNVDFrom): each winning record is compressed alone, as soon as
// it wins, into large shared buffers, rather than kept as read, each its
// own allocation. Alone, a record of NVD's sample compresses about 2.7
// times (at any level: its repeats are its own keys); the blocks packed
// right after the feeds are read take far less (16 records a frame).

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/klauspost/compress/zstd"

	"github.com/vulnd/vulnd/index"
)

// nvdSlabBytes is the size of the buffers the compressed records are
// appended to.
const nvdSlabBytes = 4 << 20

// nvdStore compresses records as read, for one goroutine. With a spill
// file, the compressed records are appended to it rather than kept in
// memory: a build at 400k CVEs holds 430 MB of them until they are packed.
type nvdStore struct {
	enc     *zstd.Encoder
	scratch []byte // the last record compressed
	slab    []byte // the buffer records are appended to
	spill   *os.File
	w       *bufio.Writer // to spill
	off     int64         // spill's size
	err     error         // of the first write to spill that failed
}

// nvdRef is a record the store holds: z, or n bytes at off in the spill
// file.
type nvdRef struct {
	z   []byte
	off int64
	n   int
}

// newNVDStore makes a store that spills into spill, unless it is nil.
func newNVDStore(spill *os.File) (*nvdStore, error) {
	// The fastest level: a record compresses about as well at the others,
	// and reading must not slow down. No checksum: the frames never leave
	// the process.
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
		zstd.WithEncoderCRC(false))
	if err != nil {
		return nil, err
	}
	s := &nvdStore{enc: enc, spill: spill}
	if spill != nil {
		s.w = bufio.NewWriterSize(spill, 1<<20)
	}
	return s, nil
}

// add compresses raw alone (one zstd frame) and keeps it: in a buffer
// shared with other records, or in the spill file.
func (s *nvdStore) add(raw []byte) nvdRef {
	s.scratch = s.enc.EncodeAll(raw, s.scratch[:0])
	if s.spill != nil {
		r := nvdRef{off: s.off, n: len(s.scratch)}
		if _, err := s.w.Write(s.scratch); err != nil && s.err == nil {
			s.err = err
		}
		s.off += int64(len(s.scratch))
		return r
	}
	if cap(s.slab)-len(s.slab) < len(s.scratch) {
		s.slab = make([]byte, 0, max(nvdSlabBytes, len(s.scratch)))
	}
	start := len(s.slab)
	s.slab = append(s.slab, s.scratch...)
	return nvdRef{z: s.slab[start:len(s.slab):len(s.slab)]}
}

// close lets the encoder go and returns the error of the spill, if
// any: once it is nil, every record added can be read back.
func (s *nvdStore) close() error {
	if s.enc != nil {
		s.enc.Close()
		s.enc = nil
	}
	if s.w != nil {
		if s.err == nil {
			s.err = s.w.Flush()
		}
		s.w = nil
	}
	return s.err
}

// nvdRecords are the winning records of a build's feeds: each one's
// facts, its record as read, compressed alone (see nvdStore), in
// memory or in spill, and where it came from.
type nvdRecords struct {
	facts []index.NVDFacts
	z     []nvdRef
	from  []nvdFrom
	spill *os.File
}

// pack orders the records as served and compresses them in blocks with
// enc (see index.PackNVD), decompressing each as its block is made: over
// the previous snapshot's records (prev, nil: none) when the layout is an
// overlay (see nvdlayout.go), only those changed or added since.
func (n *nvdRecords) pack(enc *zstd.Encoder, prev *previousNVD) (*nvdPacked, error) {
	dec, err := decoder()
	if err != nil {
		return nil, err
	}
	var frames sync.Pool // of *[]byte: a record read back from spill
	raw := func(i int, dst []byte) ([]byte, error) {
		r := n.z[i]
		if r.z != nil || r.n == 0 {
			return dec.DecodeAll(r.z, dst)
		}
		bp, _ := frames.Get().(*[]byte)
		if bp == nil {
			bp = new([]byte)
		}
		defer frames.Put(bp)
		*bp = slices.Grow((*bp)[:0], r.n)[:r.n]
		if _, err := n.spill.ReadAt(*bp, r.off); err != nil {
			return dst, fmt.Errorf("reading it back: %w", err)
		}
		return dec.DecodeAll(*bp, dst)
	}
	if prev != nil {
		order := index.NVDOrder(len(n.facts), func(i int) *index.NVDFacts { return &n.facts[i] })
		p, kept, err := overlayRecords(prev, n.facts, order, raw, enc)
		if err != nil {
			return nil, err
		}
		if p != nil {
			out := withFrom(p, n.facts, n.from)
			out.kept = kept
			return out, nil
		}
	}
	p, err := index.PackNVDFrom(n.facts, raw, enc)
	if err != nil {
		return nil, err
	}
	return withFrom(p, n.facts, n.from), nil
}

// nvdPacked are NVD's records packed, with where each came from (nil:
// not known), in the order of Facts: in memory or, once spill has written
// the snapshot's files of them into dir, only those files' manifest
// entries.
type nvdPacked struct {
	*index.PackedNVD
	// kept is the previous snapshot's nvd.zst whose blocks are the first
	// of PackedNVD's (nil: none).
	kept  *keptNVD
	from  []nvdFrom
	dir   string
	files map[string]FileInfo
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

// spillFile is a temporary file beside out (on its file system, not in
// memory as /tmp may be) that a build keeps NVD's records in while it
// reads the feeds, removed at once: it goes when it is closed, or when
// the build dies.
func spillFile(out string) (*os.File, error) {
	f, err := os.CreateTemp(filepath.Dir(filepath.Clean(out)), "."+filepath.Base(out)+".spill-")
	if err != nil {
		return nil, fmt.Errorf("loader: build %s: %w", out, err)
	}
	os.Remove(f.Name())
	return f, nil
}

// spill writes the snapshot's files of the records (nvd.zst, the facts
// and the provenance) into dir and lets the records go: a build holds the rest of its
// data a good while longer (at 400k CVEs, 190 MB of frames and 120 MB of
// facts). The write moves the files into the snapshot.
func (p *nvdPacked) spill(dir string, enc *zstd.Encoder) error {
	files := map[string]FileInfo{}
	if err := writeNVD(dir, p, enc, writeVersion, files); err != nil {
		return err
	}
	p.PackedNVD, p.from, p.kept, p.dir, p.files = nil, nil, nil, dir, files
	return nil
}

// spillBeside spills p into dir (see spill) on a goroutine, then closes
// enc, which nothing else may use; the function returned waits for it
// and returns its error (each call the same).
func spillBeside(p *nvdPacked, dir string, enc *zstd.Encoder) func() error {
	done := make(chan struct{})
	var err error
	go func() {
		defer close(done)
		err = p.spill(dir, enc)
		enc.Close()
	}()
	return func() error {
		<-done
		return err
	}
}

// spillDir is a temporary directory beside out, on its file system, for
// what a build writes before the snapshot's own directory is made.
func spillDir(out string) (string, error) {
	dir, err := os.MkdirTemp(filepath.Dir(filepath.Clean(out)), "."+filepath.Base(out)+".spill-")
	if err != nil {
		return "", fmt.Errorf("loader: build %s: %w", out, err)
	}
	return dir, nil
}
