package index

// The records of NVD's CVE API 2.0 (GET /rest/json/cves/2.0): each CVE's
// "cve" object exactly as the winning feed held it, kept compressed in
// blocks of consecutive records and decoded per request, and the facts
// of each record the API's filters read, decoded once at build time.

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"
)

// NVDRecord is one CVE's NVD record as a build keeps it: the raw "cve"
// object as read from the feed, and its facts.
type NVDRecord struct {
	Raw   []byte
	Facts NVDFacts
}

// NVDFacts are what the filters of NVD's CVE API read of a record,
// decoded from it at build time and stored beside it.
type NVDFacts struct {
	ID string `json:"id"`
	// Published and LastModified are NVD's texts ("2024-06-07T10:15:12.293").
	Published    string `json:"published"`
	LastModified string `json:"lastModified"`
	VulnStatus   string `json:"vulnStatus,omitempty"`
	Source       string `json:"sourceIdentifier,omitempty"`
	// Tags are the cveTags' tags ("disputed", ...), distinct.
	Tags []string `json:"tags,omitempty"`
	// CWEs are the weaknesses' values as written ("CWE-79",
	// "NVD-CWE-Other"), distinct.
	CWEs []string `json:"cwes,omitempty"`
	// V2, V3 and V4 are the CVSS metrics of each version (v3: 3.0 and
	// 3.1): severity and vector.
	V2 []NVDMetric `json:"v2,omitempty"`
	V3 []NVDMetric `json:"v3,omitempty"`
	V4 []NVDMetric `json:"v4,omitempty"`
	// KEV is the date CISA added the CVE to its catalog (YYYY-MM-DD),
	// "" when it is not there.
	KEV string `json:"kev,omitempty"`
	// CertAlerts, CertNotes and OVAL: a reference is a US-CERT technical
	// alert, a CERT/CC vulnerability note, an OVAL definition.
	CertAlerts bool `json:"certAlerts,omitempty"`
	CertNotes  bool `json:"certNotes,omitempty"`
	OVAL       bool `json:"oval,omitempty"`
}

// NVDMetric is a CVSS metric's severity (upper case) and vector.
type NVDMetric struct {
	Severity string `json:"severity,omitempty"`
	Vector   string `json:"vector,omitempty"`
}

// NVDBlockRecords is how many records a block holds (the last may hold
// fewer): a record asked by cveId decodes its block, about this many
// times 4 KB of JSON.
const NVDBlockRecords = 16

// NVDBlock is one compressed block: its zstd frame's size and the
// number of records it holds.
type NVDBlock struct {
	Size    int
	Records int
}

// CompareNVD is the order the API serves records in: published oldest
// first (NVD's own order), then by CVE year and number ascending.
func CompareNVD(a, b *NVDFacts) int {
	if c := cmp.Compare(nvdMillis(a.Published), nvdMillis(b.Published)); c != 0 {
		return c
	}
	return compareNVDIDs(a, b)
}

// compareNVDIDs is CompareNVD's order of two records published at the
// same time: by CVE year and number, then name.
func compareNVDIDs(a, b *NVDFacts) int {
	ay, an, _ := cveNumber(a.ID)
	by, bn, _ := cveNumber(b.ID)
	return cmp.Or(cmp.Compare(ay, by), cmp.Compare(an, bn), cmp.Compare(a.ID, b.ID))
}

// NVDOrder is the indexes of n records, facts(i) being record i's, in
// CompareNVD's order. Each record's published time is parsed once, not
// at each of the sort's comparisons (some 19 a record at 400k).
func NVDOrder(n int, facts func(i int) *NVDFacts) []int {
	order := make([]int, n)
	published := make([]int64, n)
	for i := range order {
		order[i], published[i] = i, nvdMillis(facts(i).Published)
	}
	slices.SortFunc(order, func(a, b int) int {
		if c := cmp.Compare(published[a], published[b]); c != 0 {
			return c
		}
		return compareNVDIDs(facts(a), facts(b))
	})
	return order
}

// nvdMillis is an NVD timestamp in Unix milliseconds, 0 when it is not one.
func nvdMillis(s string) int64 {
	t, err := ParseNVDTime(s)
	if err != nil {
		return 0
	}
	return t.UnixMilli()
}

// ParseNVDTime reads NVD's record timestamps: UTC without a zone
// ("2024-06-07T10:15:12.293"), or RFC 3339 with one.
func ParseNVDTime(s string) (time.Time, error) {
	for _, layout := range []string{"2006-01-02T15:04:05.999999999", time.RFC3339Nano} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("bad timestamp %q", s)
}

// PackedNVD is a set of records ready to store: the facts in the order
// served, and the compressed blocks (each a zstd frame of its records,
// each followed by "\n"; a "\n" inside a record, which JSON allows only
// as whitespace, is stored as 0x1F, which valid JSON never holds).
type PackedNVD struct {
	Facts  []NVDFacts
	Blocks []NVDBlock
	Frames [][]byte
	// Decoded is each block's decoded size.
	Decoded []int
	// Layout, when not nil, is where each record is stored in Blocks (see
	// NVDLayout): Frames and Decoded are then those of the last blocks
	// only, the earlier ones a previous snapshot's, kept as they were.
	// Nil: the compact layout, record i at line i%NVDBlockRecords of
	// block i/NVDBlockRecords, every block in Frames.
	Layout *NVDLayout
}

// Places are where each record of Facts is stored.
func (p *PackedNVD) Places() *NVDLayout {
	if p.Layout != nil {
		return p.Layout
	}
	return CompactNVDLayout(p.Blocks)
}

// PackNVD orders recs as served and compresses them in blocks with enc.
func PackNVD(recs []NVDRecord, enc *zstd.Encoder) (*PackedNVD, error) {
	facts := make([]NVDFacts, len(recs))
	for i := range recs {
		facts[i] = recs[i].Facts
	}
	return packNVD(facts, func(i int, dst []byte) ([]byte, error) { return append(dst, recs[i].Raw...), nil }, enc, NVDBlockRecords)
}

// PackNVDFrom is PackNVD for records given by their facts and their raw
// records, which raw appends to dst, one record (of facts[i]) a call: a
// build keeps its records compressed until they are packed, and hands
// each over only when its block is. raw is called on several goroutines
// at once; its error stops the packing.
func PackNVDFrom(facts []NVDFacts, raw func(i int, dst []byte) ([]byte, error), enc *zstd.Encoder) (*PackedNVD, error) {
	return packNVD(facts, raw, enc, NVDBlockRecords)
}

func packNVD(facts []NVDFacts, raw func(i int, dst []byte) ([]byte, error), enc *zstd.Encoder, per int) (*PackedNVD, error) {
	order := NVDOrder(len(facts), func(i int) *NVDFacts { return &facts[i] })
	p := &PackedNVD{Facts: make([]NVDFacts, len(facts))}
	for i, o := range order {
		if i > 0 && facts[order[i-1]].ID == facts[o].ID {
			return nil, fmt.Errorf("%w: NVD record of %s twice", ErrInvalid, facts[o].ID)
		}
		p.Facts[i] = facts[o]
	}
	nb := (len(order) + per - 1) / per
	p.Frames, p.Blocks, p.Decoded = make([][]byte, nb), make([]NVDBlock, nb), make([]int, nb)
	// The error of each block, the first of its records': the one
	// returned is that of the first record in the order served.
	// The blocks are compressed on every core: EncodeAll is safe for
	// concurrent use.
	errs := OnCores(nb, func() func(int) error {
		var buf, frame []byte
		return func(b int) error {
			from, to := b*per, min((b+1)*per, len(order))
			buf = buf[:0]
			for _, o := range order[from:to] {
				start := len(buf)
				var err error
				if buf, err = raw(o, buf); err != nil {
					return fmt.Errorf("NVD record of %s: %w", facts[o].ID, err)
				}
				rec := buf[start:]
				if bytes.IndexByte(rec, nvdNewline) >= 0 {
					return fmt.Errorf("%w: NVD record of %s holds byte 0x1F", ErrInvalid, facts[o].ID)
				}
				if bytes.IndexByte(rec, '\n') >= 0 {
					for i := range rec {
						if rec[i] == '\n' {
							rec[i] = nvdNewline
						}
					}
				}
				buf = append(buf, '\n')
			}
			// Into a buffer of the worker's, then copied: EncodeAll
			// into nil gives a frame the capacity of its input, which
			// the frame would keep (10 times its size: 300 MB more
			// for 100k records).
			frame = enc.EncodeAll(buf, frame[:0])
			p.Frames[b] = slices.Clone(frame)
			p.Blocks[b] = NVDBlock{Size: len(p.Frames[b]), Records: to - from}
			p.Decoded[b] = len(buf)
			return nil
		}
	})
	if err := FirstError(errs); err != nil {
		return nil, err
	}
	return p, nil
}

// nvdNewline stands for "\n" inside a stored record.
const nvdNewline = 0x1F

// NVD is the NVD CVE API's records of a snapshot: immutable, safe for
// concurrent use.
type NVD struct {
	data []byte // the blocks' frames back to back (nil: in file)
	// file holds them instead, from offset 0, read per request: a
	// snapshot's nvd.zst, kept open (os.File's finalizer closes it once
	// the store is no longer reachable).
	file   io.ReaderAt
	blocks []int64 // block b is data[blocks[b]:blocks[b+1]]
	recs   []nvdRec
	byName map[uint64]int32
	// strs are interned texts (kind byte and text: see the nvdKind*
	// constants); pool holds, for each record, the ids of its texts
	// (never of a source).
	strs   []string
	strID  map[string]uint32
	pool   []uint32
	source []string // sourceIdentifier by id
	// words is keywordSearch's word index, made on first use (nvdwords.go).
	words nvdWordsOnce
	// span is how many blocks reading the records in the order served
	// uses at once: 1 in the compact layout, one more for each build that
	// laid records out over the base since (see setSpan).
	span int
	// lastOf is, by block, the position of its last record in the order
	// served (-1: none): a reader going forward has no more use for it
	// past there.
	lastOf []int32
}

// setSpan sets n.span: the most blocks whose records, from the first in
// the order served to the last, overlap at one position.
func (n *NVD) setSpan() {
	nb := len(n.blocks) - 1
	first, last := make([]int32, nb), make([]int32, nb)
	for b := range first {
		first[b], last[b] = -1, -1
	}
	for p := range n.recs {
		b := n.recs[p].block
		if first[b] < 0 {
			first[b] = int32(p)
		}
		last[b] = int32(p)
	}
	d := make([]int32, len(n.recs)+1) // blocks starting less those ended, by position
	for b := range first {
		if first[b] >= 0 {
			d[first[b]]++
			d[last[b]+1]--
		}
	}
	n.span, n.lastOf = 1, last
	cur := int32(0)
	for _, x := range d {
		cur += x
		n.span = max(n.span, int(cur))
	}
}

type nvdRec struct {
	key      uint64 // cveKey of the name
	pub, mod int64  // Unix milliseconds
	kev      int32  // days since 1970-01-01 + 1; 0: not in KEV
	block    int32
	lo       uint32 // pool[lo:lo+n] are the record's texts
	n        uint16
	slot     uint16 // the record's line in its block
	sev      uint16 // severity bits, 5 per version: see sevBit
	flags    uint8
	source   uint32
}

// before tells whether r comes before s in the order served (see
// CompareNVD): published, then CVE year and number.
func (r *nvdRec) before(s *nvdRec) bool {
	if r.pub != s.pub {
		return r.pub < s.pub
	}
	if ry, sy := r.key>>40, s.key>>40; ry != sy {
		return ry < sy
	}
	return uint32(r.key) < uint32(s.key)
}

const (
	flagRejected = 1 << iota
	flagCertAlerts
	flagCertNotes
	flagOVAL
)

// Kinds of interned texts.
const (
	nvdKindCWE = 'c'
	nvdKindTag = 't'
	nvdKindV2  = '2'
	nvdKindV3  = '3'
	nvdKindV4  = '4'
	// nvdKindSource is a sourceIdentifier: the sources are also kept
	// apart (NVD.source), by their order among the texts.
	nvdKindSource = 's'
)

// nvdSeverities are the severities in bit order within a version.
var nvdSeverities = [...]string{"NONE", "LOW", "MEDIUM", "HIGH", "CRITICAL"}

func sevBit(version int, severity string) uint16 {
	for i, s := range nvdSeverities {
		if strings.EqualFold(s, severity) {
			return 1 << (5*(version-2) + i)
		}
	}
	return 0
}

// NewNVD makes the store from the stored form of format 6: data holds
// the blocks' frames back to back, facts are the records in the order
// served. It checks what it can without decoding a block.
func NewNVD(data []byte, blocks []NVDBlock, facts []NVDFacts) (*NVD, error) {
	n, err := nvdFromFacts(blocks, nil, facts)
	if err != nil {
		return nil, err
	}
	if err := n.setData(data); err != nil {
		return nil, err
	}
	return n, nil
}

// NewNVDFile is NewNVD for frames kept in a file of size bytes, read a
// block at a time, per request (see NVDLoader.NVDFile).
func NewNVDFile(r io.ReaderAt, size int64, blocks []NVDBlock, facts []NVDFacts) (*NVD, error) {
	n, err := nvdFromFacts(blocks, nil, facts)
	if err != nil {
		return nil, err
	}
	if err := n.setFile(r, size); err != nil {
		return nil, err
	}
	return n, nil
}

// setData gives n its blocks' frames, which must be exactly the size its
// blocks add up to.
func (n *NVD) setData(data []byte) error {
	if off := n.blocks[len(n.blocks)-1]; off != int64(len(data)) {
		return fmt.Errorf("%w: NVD blocks of %d bytes for %d bytes", ErrInvalid, off, len(data))
	}
	n.data = data
	return nil
}

// setFile gives n its blocks' frames as a file of exactly the size its
// blocks add up to, read per request.
func (n *NVD) setFile(r io.ReaderAt, size int64) error {
	if off := n.blocks[len(n.blocks)-1]; off != size {
		return fmt.Errorf("%w: NVD blocks of %d bytes for %d bytes", ErrInvalid, off, size)
	}
	n.file = r
	return nil
}

// nvdFromFacts makes the store of facts, in blocks, without its data:
// each record at its place of places (nil: the compact layout).
func nvdFromFacts(blocks []NVDBlock, places []NVDPlace, facts []NVDFacts) (*NVD, error) {
	n := &NVD{blocks: make([]int64, 1, len(blocks)+1), recs: make([]nvdRec, len(facts)),
		byName: make(map[uint64]int32, len(facts)), strID: map[string]uint32{}}
	var off int64
	r := 0
	for b, blk := range blocks {
		if blk.Size <= 0 || blk.Records <= 0 || blk.Records > 1<<16-1 {
			return nil, fmt.Errorf("%w: NVD block %d: bad size or record count", ErrInvalid, b+1)
		}
		off += int64(blk.Size)
		n.blocks = append(n.blocks, off)
		for s := 0; s < blk.Records && places == nil; s++ {
			if r == len(facts) {
				return nil, fmt.Errorf("%w: NVD blocks hold more records than the %d facts", ErrInvalid, len(facts))
			}
			n.recs[r].block, n.recs[r].slot = int32(b), uint16(s)
			r++
		}
	}
	if places != nil {
		if len(places) != len(facts) {
			return nil, fmt.Errorf("%w: %d places for %d facts", ErrNVDLayout, len(places), len(facts))
		}
		if err := (&NVDLayout{Blocks: blocks, Places: places}).check(); err != nil {
			return nil, err
		}
		for i, p := range places {
			n.recs[i].block, n.recs[i].slot = p.Block, p.Slot
		}
		r = len(facts)
	}
	if r != len(facts) {
		return nil, fmt.Errorf("%w: NVD blocks of %d bytes and %d records for %d facts", ErrInvalid, off, r, len(facts))
	}
	n.setSpan()
	sources := map[string]uint32{}
	var tb []byte // a text being looked up
	for i := range facts {
		f := &facts[i]
		rec := &n.recs[i]
		year, num, ok := cveNumber(f.ID)
		if !ok || f.ID != strings.ToUpper(f.ID) {
			return nil, fmt.Errorf("%w: NVD record %d: bad id %q", ErrInvalid, i+1, f.ID)
		}
		key := cveKey(year, len(f.ID)-len("CVE-yyyy-"), num)
		if _, dup := n.byName[key]; dup {
			return nil, fmt.Errorf("%w: NVD record of %s twice", ErrInvalid, f.ID)
		}
		n.byName[key] = int32(i)
		rec.key = key
		pub, err := ParseNVDTime(f.Published)
		if err != nil {
			return nil, fmt.Errorf("%w: NVD record of %s: published: %w", ErrInvalid, f.ID, err)
		}
		mod, err := ParseNVDTime(f.LastModified)
		if err != nil {
			return nil, fmt.Errorf("%w: NVD record of %s: lastModified: %w", ErrInvalid, f.ID, err)
		}
		rec.pub, rec.mod = pub.UnixMilli(), mod.UnixMilli()
		if i > 0 && !n.recs[i-1].before(rec) {
			return nil, fmt.Errorf("%w: NVD record of %s is out of order", ErrInvalid, f.ID)
		}
		if f.KEV != "" {
			d, err := time.Parse(time.DateOnly, f.KEV)
			if err != nil {
				return nil, fmt.Errorf("%w: NVD record of %s: KEV date %q", ErrInvalid, f.ID, f.KEV)
			}
			rec.kev = int32(d.Unix()/86400) + 1
		}
		if strings.EqualFold(f.VulnStatus, "Rejected") {
			rec.flags |= flagRejected
		}
		if f.CertAlerts {
			rec.flags |= flagCertAlerts
		}
		if f.CertNotes {
			rec.flags |= flagCertNotes
		}
		if f.OVAL {
			rec.flags |= flagOVAL
		}
		s, ok := sources[f.Source]
		if !ok {
			s = uint32(len(n.source))
			sources[f.Source] = s
			n.source = append(n.source, f.Source)
			// Among the texts too, in the same order, which is how a
			// snapshot of format 7 stores the sources.
			tb, _ = n.intern(tb, nvdKindSource, f.Source)
		}
		rec.source = s
		rec.lo = uint32(len(n.pool))
		// Each text is looked up by its bytes (no string is made unless
		// it is new): a kind byte, then the text.
		add := func(kind byte, text string) {
			var id uint32
			tb, id = n.intern(tb, kind, text)
			if !slices.Contains(n.pool[rec.lo:], id) {
				n.pool = append(n.pool, id)
			}
		}
		for _, c := range f.CWEs {
			add(nvdKindCWE, strings.ToUpper(c))
		}
		for _, t := range f.Tags {
			add(nvdKindTag, t)
		}
		for v, ms := range [][]NVDMetric{f.V2, f.V3, f.V4} {
			for _, m := range ms {
				rec.sev |= sevBit(v+2, m.Severity)
				if m.Vector != "" {
					add(byte('2'+v), m.Vector)
				}
			}
		}
		if len(n.pool)-int(rec.lo) > 1<<16-1 {
			return nil, fmt.Errorf("%w: NVD record of %s has too many facts", ErrInvalid, f.ID)
		}
		rec.n = uint16(len(n.pool) - int(rec.lo))
	}
	return n, nil
}

// intern adds the text of kind (a kind byte, then the text) to the texts
// unless they hold it, and returns its id; tb is a buffer for its key.
func (n *NVD) intern(tb []byte, kind byte, text string) ([]byte, uint32) {
	tb = append(append(tb[:0], kind), text...)
	id, ok := n.strID[string(tb)]
	if !ok {
		k := string(tb)
		id = uint32(len(n.strs))
		n.strID[k] = id
		n.strs = append(n.strs, k)
	}
	return tb, id
}

// BuildNVD packs recs and makes their store: for tests and for Build.
func BuildNVD(recs []NVDRecord) (*NVD, error) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	if err != nil {
		return nil, err
	}
	defer enc.Close()
	p, err := PackNVD(recs, enc)
	if err != nil {
		return nil, err
	}
	return NewNVD(bytes.Join(p.Frames, nil), p.Blocks, p.Facts)
}

// Len is the number of records.
func (n *NVD) Len() int {
	if n == nil {
		return 0
	}
	return len(n.recs)
}

// Size is the compressed size of the records in bytes.
func (n *NVD) Size() int {
	if n == nil {
		return 0
	}
	return int(n.blocks[len(n.blocks)-1])
}

// InMemory tells whether the compressed records are held in memory
// (rather than read from their file per request).
func (n *NVD) InMemory() bool { return n != nil && n.file == nil }

// nvdDecoder decodes blocks for every request: DecodeAll is safe for
// concurrent use and keeps one decoder per core.
var nvdDecoder = sync.OnceValues(func() (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderConcurrency(runtime.GOMAXPROCS(0)),
		zstd.WithDecoderMaxMemory(64<<20), zstd.IgnoreChecksum(true))
})

// ErrNVDBlock is wrapped by the errors of a block that does not decode.
var ErrNVDBlock = errors.New("index: NVD block does not decode")

// blockReader decodes blocks for one request, keeping those it may use
// again: a layout with records added since its base (see NVDLayout) puts
// the records of a page in its base's blocks and in those of each build
// since, each build's in the order served, so that reading a page in
// that order uses one block of each at a time (the store's span), and
// decodes each once. Its buffers come from blockBufs (release puts them
// back).
type blockReader struct {
	n     *NVD
	frame []byte // a frame read from the file
	dec   *zstd.Decoder
	// blocks[:nblocks] are the blocks decoded, last the one used last.
	blocks  [nvdKeptBlocks]decodedBlock
	nblocks int
	last    int
	tick    uint32
	decodes int // blocks decoded
}

// nvdKeptBlocks is how many decoded blocks a request keeps at most (it
// keeps the store's span): as many as builds lay records out over a base
// before one compacts (a refresh every two hours of NVD's 2 % a day:
// about 36), and a few.
const nvdKeptBlocks = 48

// decodedBlock is a block decoded: its records, each followed by "\n".
type decodedBlock struct {
	b   int32
	buf []byte
	// offs[:noffs] are the starts of the block's lines found so far,
	// from 0: a line ends a byte before the next starts (a line past
	// them is looked for from the last one).
	offs  [NVDBlockRecords + 1]int32
	noffs int
	used  uint32 // when last used (the reader's tick)
}

// blockBufs are decoded blocks' buffers, shared by the requests.
var blockBufs = sync.Pool{New: func() any { return new([]byte) }}

// maxPooledBlock keeps a rare huge block from pinning memory.
const maxPooledBlock = 1 << 20

func (br *blockReader) release() {
	put := func(b []byte) {
		if b != nil && cap(b) <= maxPooledBlock {
			b = b[:0]
			blockBufs.Put(&b)
		}
	}
	put(br.frame)
	for i := range br.nblocks {
		put(br.blocks[i].buf)
		br.blocks[i].buf = nil
	}
	br.frame, br.nblocks = nil, 0
}

// frameOf returns block b's frame: a view of the store's data, or read
// from its file into the reader's frame buffer.
func (br *blockReader) frameOf(b int32) ([]byte, error) {
	n := br.n
	lo, hi := n.blocks[b], n.blocks[b+1]
	if n.file == nil {
		return n.data[lo:hi], nil
	}
	if br.frame == nil {
		br.frame = (*blockBufs.Get().(*[]byte))[:0]
	}
	if int64(cap(br.frame)) < hi-lo {
		br.frame = make([]byte, 0, hi-lo)
	}
	f := br.frame[:hi-lo]
	if _, err := n.file.ReadAt(f, lo); err != nil {
		return nil, fmt.Errorf("%w: block %d: %w", ErrNVDBlock, b+1, err)
	}
	return f, nil
}

// block returns block b, for the record at position p, decoded: one the
// reader keeps, or decoded into the place of one whose last record is
// before p (a reader goes forward in the order served), else of the one
// used least recently.
func (br *blockReader) block(b, p int32) (*decodedBlock, error) {
	br.tick++
	if br.nblocks > 0 && br.blocks[br.last].b == b {
		d := &br.blocks[br.last]
		d.used = br.tick
		return d, nil
	}
	at, done := -1, -1
	for i := range br.nblocks {
		if x := br.blocks[i].b; x == b {
			br.last = i
			br.blocks[i].used = br.tick
			return &br.blocks[i], nil
		} else if x < 0 || br.n.lastOf[x] < p {
			done = i
		}
		if at < 0 || br.blocks[i].used < br.blocks[at].used {
			at = i
		}
	}
	if done >= 0 {
		at = done
	}
	if done < 0 && br.nblocks < min(len(br.blocks), br.n.span) || at < 0 {
		at = br.nblocks
		br.nblocks++
	}
	d := &br.blocks[at]
	if br.dec == nil {
		dec, err := nvdDecoder()
		if err != nil {
			return nil, err
		}
		br.dec = dec
	}
	if d.buf == nil {
		d.buf = (*blockBufs.Get().(*[]byte))[:0]
	}
	d.b = -1 // until it decodes
	frame, err := br.frameOf(b)
	if err != nil {
		return nil, err
	}
	if d.buf, err = br.dec.DecodeAll(frame, d.buf[:0]); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNVDBlock, err)
	}
	d.b, d.offs[0], d.noffs, d.used = b, 0, 1, br.tick
	br.last, br.decodes = at, br.decodes+1
	return d, nil
}

// record returns the raw record of position p, a view into one of the
// reader's buffers valid until it decodes another block.
func (br *blockReader) record(p int32) ([]byte, error) {
	rec := &br.n.recs[p]
	d, err := br.block(rec.block, p)
	if err != nil {
		return nil, err
	}
	// From the start of the record's line if known, else from the last
	// start known (a decoded block is at most 64 MB: see nvdDecoder).
	s := min(int(rec.slot), d.noffs-1)
	start := int(d.offs[s])
	for {
		i := bytes.IndexByte(d.buf[start:], '\n')
		if i < 0 {
			return nil, fmt.Errorf("%w: block %d has no record %d", ErrNVDBlock, rec.block+1, rec.slot+1)
		}
		end := start + i
		if s+1 == d.noffs && s+1 < len(d.offs) {
			d.offs[s+1] = int32(end + 1)
			d.noffs++
		}
		if s == int(rec.slot) {
			return d.buf[start:end], nil
		}
		s, start = s+1, end+1
	}
}

// appendRecord appends raw with its stored newlines restored.
func appendRecord(dst, raw []byte) []byte {
	start := len(dst)
	dst = append(dst, raw...)
	if bytes.IndexByte(raw, nvdNewline) >= 0 {
		for i := start; i < len(dst); i++ {
			if dst[i] == nvdNewline {
				dst[i] = '\n'
			}
		}
	}
	return dst
}

// AppendRaw appends the raw record of the CVE named name (any letter case),
// appended to dst; ErrCVENotFound when the snapshot has no NVD record of
// it.
func (n *NVD) AppendRaw(dst []byte, name string) ([]byte, error) {
	p, ok := n.pos(name)
	if !ok {
		return dst, ErrCVENotFound
	}
	br := blockReader{n: n}
	defer br.release()
	raw, err := br.record(p)
	if err != nil {
		return dst, err
	}
	return appendRecord(dst, raw), nil
}

// ID is the name of the record at position i of the order served.
func (n *NVD) ID(i int) string {
	k := n.recs[i].key
	digits := int(k >> 32 & 0xff)
	num := strconv.Itoa(int(uint32(k)))
	return "CVE-" + strconv.Itoa(int(k>>40)) + "-" + strings.Repeat("0", max(0, digits-len(num))) + num
}

func (n *NVD) pos(name string) (int32, bool) {
	if n == nil {
		return 0, false
	}
	year, num, ok := cveNumber(name)
	if !ok {
		return 0, false
	}
	p, ok := n.byName[cveKey(year, len(name)-len("CVE-yyyy-"), num)]
	return p, ok
}
