package index

// The facts of NVD's records as a snapshot of format 7 stores them: a
// table of texts (each a kind byte and the text: CWEs, tags, vectors and
// sources, see the nvdKind* constants) and one line of decimal numbers
// per record, in the order served, which a load parses chunk by chunk on
// every core straight into the store's pointer-free records, with no
// JSON, no time parsing and nothing allocated per record:
//
//	id pub mod kev flags sev source frame n text×n
//
// id is the CVE's name as NVD writes it ("CVE-2024-0001"); pub and mod
// its published and lastModified times in Unix milliseconds; kev the day
// CISA added it to its catalog, in days since 1970-01-01 plus one (0: not
// there); flags the bits 1 rejected, 2 a US-CERT technical alert, 4 a
// CERT/CC vulnerability note, 8 an OVAL definition among its references;
// sev its severities, 5 bits per CVSS version (v2, v3, v4: NONE, LOW,
// MEDIUM, HIGH, CRITICAL from the low bit); source the text of its
// sourceIdentifier; frame, on the first record of a block, the block's
// compressed size, 0 on the others; then its n distinct texts (CWEs,
// tags, vectors).

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"
)

// NVDStored is packed records' facts in their stored form (format 7).
type NVDStored struct {
	n      *NVD
	source []uint32 // by source: its text
	// noFrames: the lines give no frame sizes (0), the layout file does
	// (format 9).
	noFrames bool
}

// StoreNVD makes the stored form of p's facts. It fails on facts a load
// would refuse (a bad id or time, records out of order, places that
// overlap).
func StoreNVD(p *PackedNVD) (*NVDStored, error) {
	var places []NVDPlace
	if p.Layout != nil {
		places = p.Layout.Places
	}
	n, err := nvdFromFacts(p.Blocks, places, p.Facts)
	if err != nil {
		return nil, err
	}
	s := &NVDStored{n: n, source: make([]uint32, len(n.source)), noFrames: p.Layout != nil}
	for i, src := range n.source {
		s.source[i] = n.strID[string(nvdKindSource)+src]
	}
	return s, nil
}

// OmitFrames makes the lines give 0 for every frame size, as format 9
// stores them, the layout file giving the blocks. A layout other than
// the compact one is always stored so.
func (s *NVDStored) OmitFrames() { s.noFrames = true }

// Texts are the table of texts the lines refer to, by number from 0.
func (s *NVDStored) Texts() []string { return s.n.strs }

// Len is the number of records (lines).
func (s *NVDStored) Len() int { return len(s.n.recs) }

// AppendLine appends the line of record i, without its "\n".
func (s *NVDStored) AppendLine(dst []byte, i int) []byte {
	n := s.n
	r := &n.recs[i]
	dst = append(dst, n.ID(i)...)
	for _, v := range []int64{r.pub, r.mod, int64(r.kev), int64(r.flags), int64(r.sev), int64(s.source[r.source])} {
		dst = strconv.AppendInt(append(dst, ' '), v, 10)
	}
	frame := int64(0)
	if r.slot == 0 && !s.noFrames {
		frame = n.blocks[r.block+1] - n.blocks[r.block]
	}
	dst = strconv.AppendInt(append(dst, ' '), frame, 10)
	dst = strconv.AppendUint(append(dst, ' '), uint64(r.n), 10)
	for _, id := range n.pool[r.lo : r.lo+uint32(r.n)] {
		dst = strconv.AppendUint(append(dst, ' '), uint64(id), 10)
	}
	return dst
}

// StoredFacts are the facts of record i as its stored line keeps them
// (see AppendLine), and the compressed size of its block when it is the
// block's first record (0 otherwise): the times to the millisecond,
// VulnStatus "Rejected" or "", the KEV date, the flags, the source, the
// CWEs and tags, and per CVSS version the severities and the vectors, as
// two lists (the severities in the order NONE to CRITICAL) zipped into
// metrics, not the record's pairs. Stored again (StoreNVD) in the same
// place among the others, they give record i's line: an incremental build
// carries a record over from the previous snapshot's stored form with
// them.
func (n *NVD) StoredFacts(i int) (NVDFacts, int) {
	r := &n.recs[i]
	const layout = "2006-01-02T15:04:05.000"
	f := NVDFacts{ID: n.ID(i), Published: time.UnixMilli(r.pub).UTC().Format(layout),
		LastModified: time.UnixMilli(r.mod).UTC().Format(layout), Source: n.source[r.source],
		CertAlerts: r.flags&flagCertAlerts != 0, CertNotes: r.flags&flagCertNotes != 0, OVAL: r.flags&flagOVAL != 0}
	if r.flags&flagRejected != 0 {
		f.VulnStatus = "Rejected"
	}
	if r.kev > 0 {
		f.KEV = time.Unix(int64(r.kev-1)*86400, 0).UTC().Format(time.DateOnly)
	}
	var vectors [3][]string
	for _, id := range n.pool[r.lo : r.lo+uint32(r.n)] {
		t := n.strs[id]
		switch t[0] {
		case nvdKindCWE:
			f.CWEs = append(f.CWEs, t[1:])
		case nvdKindTag:
			f.Tags = append(f.Tags, t[1:])
		case nvdKindV2, nvdKindV3, nvdKindV4:
			v := t[0] - nvdKindV2
			vectors[v] = append(vectors[v], t[1:])
		}
	}
	for v, dst := range [3]*[]NVDMetric{&f.V2, &f.V3, &f.V4} {
		var sevs []string
		for k, s := range nvdSeverities {
			if r.sev&sevBit(v+2, s) != 0 {
				sevs = append(sevs, nvdSeverities[k])
			}
		}
		for k := range max(len(sevs), len(vectors[v])) {
			var m NVDMetric
			if k < len(sevs) {
				m.Severity = sevs[k]
			}
			if k < len(vectors[v]) {
				m.Vector = vectors[v][k]
			}
			*dst = append(*dst, m)
		}
	}
	frame := 0
	if r.slot == 0 {
		frame = int(n.blocks[r.block+1] - n.blocks[r.block])
	}
	return f, frame
}

// ErrNVDFacts is wrapped by the errors of stored facts that do not parse.
var ErrNVDFacts = errors.New("index: bad NVD facts")

// NVDLoader makes the store from its stored form (format 7): NewNVDLoader
// with the texts, ParsePiece for each piece of the lines (several at
// once, each piece once), then NVD with the blocks' frames.
type NVDLoader struct {
	texts  []string
	strID  map[string]uint32
	source []int32 // by text: the number of the source it is, -1 for another kind
	nsrc   int
	recs   []nvdRec
	frames []int32    // by record: its frame's size when it starts a block, else 0
	pools  [][]uint32 // by piece: the texts of its records
	pieces []nvdPiece
	layout *NVDLayout // nil: the blocks are given by the frames
}

// SetLayout gives the records their places (format 9, see NVDLayout):
// the lines' frame sizes must then all be 0. The layout must have been
// parsed for as many records (ParseNVDLayout).
func (l *NVDLoader) SetLayout(lay *NVDLayout) error {
	if len(lay.Places) != len(l.recs) {
		return fmt.Errorf("%w: %d places for %d records", ErrNVDLayout, len(lay.Places), len(l.recs))
	}
	l.layout = lay
	return nil
}

type nvdPiece struct {
	first, n int
	seen     bool
}

// NewNVDLoader starts a load of records lines in pieces pieces, whose
// texts are texts.
func NewNVDLoader(texts []string, records, pieces int) (*NVDLoader, error) {
	if records < 0 || pieces < 0 || len(texts) > math.MaxUint32 {
		return nil, fmt.Errorf("%w: %d records in %d pieces", ErrNVDFacts, records, pieces)
	}
	l := &NVDLoader{texts: texts, strID: make(map[string]uint32, len(texts)), source: make([]int32, len(texts)),
		recs: make([]nvdRec, records), frames: make([]int32, records), pools: make([][]uint32, pieces), pieces: make([]nvdPiece, pieces)}
	for i, t := range texts {
		if t == "" {
			return nil, fmt.Errorf("%w: text %d is empty", ErrNVDFacts, i+1)
		}
		switch t[0] {
		case nvdKindCWE, nvdKindTag, nvdKindV2, nvdKindV3, nvdKindV4:
			l.source[i] = -1
		case nvdKindSource:
			l.source[i] = int32(l.nsrc)
			l.nsrc++
		default:
			return nil, fmt.Errorf("%w: text %d is of no known kind (%q)", ErrNVDFacts, i+1, t[0])
		}
		if _, dup := l.strID[t]; dup {
			return nil, fmt.Errorf("%w: text %d (%q) twice", ErrNVDFacts, i+1, t)
		}
		l.strID[t] = uint32(i)
	}
	return l, nil
}

// ParsePiece parses piece p of the lines, whose first line is record
// first (from 0): whole lines, each ending in "\n". It is safe to call
// for different pieces at once.
func (l *NVDLoader) ParsePiece(p, first int, data []byte) error {
	if p < 0 || p >= len(l.pieces) || l.pieces[p].seen {
		return fmt.Errorf("%w: piece %d", ErrNVDFacts, p)
	}
	l.pieces[p] = nvdPiece{first: first, seen: true}
	var pool []uint32
	k := first
	for ; len(data) > 0; k++ {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			return fmt.Errorf("%w: piece %d does not end in a newline", ErrNVDFacts, p)
		}
		if k < 0 || k >= len(l.recs) {
			return fmt.Errorf("%w: more lines than the %d records", ErrNVDFacts, len(l.recs))
		}
		var err error
		if pool, err = l.parseLine(data[:i], k, pool); err != nil {
			return fmt.Errorf("%w: record %d: %v", ErrNVDFacts, k+1, err)
		}
		data = data[i+1:]
	}
	l.pieces[p].n = k - first
	l.pools[p] = pool
	return nil
}

// parseLine parses record k's line into its record, appending its texts
// to pool; the record's lo is within pool until NVD places it.
func (l *NVDLoader) parseLine(line []byte, k int, pool []uint32) ([]uint32, error) {
	sp := bytes.IndexByte(line, ' ')
	if sp < 0 {
		return pool, errors.New("no facts after the id")
	}
	id := line[:sp]
	year, num, ok := cveNumber(string(id))
	if !ok || id[0] != 'C' || id[1] != 'V' || id[2] != 'E' {
		return pool, fmt.Errorf("bad id %q", id)
	}
	r := &l.recs[k]
	r.key = cveKey(year, len(id)-len("CVE-yyyy-"), num)
	f := nvdFields{b: line[sp:]}
	r.pub = f.int(math.MinInt64, math.MaxInt64)
	r.mod = f.int(math.MinInt64, math.MaxInt64)
	r.kev = int32(f.int(math.MinInt32, math.MaxInt32))
	r.flags = uint8(f.int(0, flagOVAL<<1-1))
	r.sev = uint16(f.int(0, 1<<15-1))
	src := f.int(0, int64(len(l.texts))-1)
	frame := f.int(0, math.MaxInt32)
	n := f.int(0, math.MaxUint16)
	if f.err != nil {
		return pool, f.err
	}
	if l.source[src] < 0 {
		return pool, fmt.Errorf("text %d is not a source", src+1)
	}
	r.source = uint32(l.source[src])
	l.frames[k] = int32(frame)
	r.lo, r.n = uint32(len(pool)), uint16(n)
	for range n {
		t := f.int(0, int64(len(l.texts))-1)
		if f.err == nil && l.source[t] >= 0 {
			return pool, fmt.Errorf("text %d is a source", t+1)
		}
		pool = append(pool, uint32(t))
	}
	if f.err == nil && len(f.b) > 0 {
		return pool, fmt.Errorf("more than %d texts", n)
	}
	return pool, f.err
}

// nvdFields reads a line's numbers, each after a space.
type nvdFields struct {
	b   []byte
	err error
}

// int reads the next number, which must be within [lo, hi].
func (f *nvdFields) int(lo, hi int64) int64 {
	if f.err != nil {
		return lo
	}
	if len(f.b) < 2 || f.b[0] != ' ' {
		f.err = errors.New("missing number")
		return lo
	}
	b := f.b[1:]
	neg := b[0] == '-'
	if neg {
		b = b[1:]
	}
	i := 0
	var v uint64
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if i == 19 || i > 0 && v == 0 {
			f.err = errors.New("bad number")
			return lo
		}
		v = v*10 + uint64(b[i]-'0')
	}
	if i == 0 || i < len(b) && b[i] != ' ' || v > math.MaxInt64 {
		f.err = errors.New("bad number")
		return lo
	}
	x := int64(v)
	if neg {
		x = -x
	}
	if x < lo || x > hi {
		f.err = fmt.Errorf("number %d out of range", x)
		return lo
	}
	f.b = b[i:]
	return x
}

// NVD finishes the load: it places the pieces' texts, makes the blocks
// from the records' frames, checks the names and the order, and gives the
// store data, the blocks' frames back to back.
func (l *NVDLoader) NVD(data []byte) (*NVD, error) {
	n, err := l.finish()
	if err != nil {
		return nil, err
	}
	if err := n.setData(data); err != nil {
		return nil, err
	}
	return n, nil
}

// NVDFile is NVD for frames kept in a file of size bytes, which the store
// reads a block at a time, per request: r must stay as it is while the
// store is used (a snapshot's nvd.zst, whose sums the caller checked).
func (l *NVDLoader) NVDFile(r io.ReaderAt, size int64) (*NVD, error) {
	n, err := l.finish()
	if err != nil {
		return nil, err
	}
	if err := n.setFile(r, size); err != nil {
		return nil, err
	}
	return n, nil
}

// finish is NVD without the frames.
func (l *NVDLoader) finish() (*NVD, error) {
	next, total := 0, 0
	for i, p := range l.pieces {
		if !p.seen {
			return nil, fmt.Errorf("%w: piece %d not parsed", ErrNVDFacts, i)
		}
		if p.first != next {
			return nil, fmt.Errorf("%w: piece %d starts at record %d, not %d", ErrNVDFacts, i, p.first+1, next+1)
		}
		next += p.n
		total += len(l.pools[i])
	}
	if next != len(l.recs) {
		return nil, fmt.Errorf("%w: %d lines for %d records", ErrNVDFacts, next, len(l.recs))
	}
	if total > math.MaxUint32 {
		return nil, fmt.Errorf("%w: %d texts of records", ErrNVDFacts, total)
	}
	n := &NVD{recs: l.recs, strs: l.texts, strID: l.strID, byName: make(map[uint64]int32, len(l.recs)),
		pool: make([]uint32, 0, total), source: make([]string, 0, l.nsrc), blocks: []int64{0}}
	for i, p := range l.pieces {
		base := uint32(len(n.pool))
		n.pool = append(n.pool, l.pools[i]...)
		l.pools[i] = nil
		for k := p.first; k < p.first+p.n; k++ {
			n.recs[k].lo += base
		}
	}
	for i, t := range l.texts {
		if l.source[i] >= 0 {
			n.source = append(n.source, t[1:])
		}
	}
	if lay := l.layout; lay != nil {
		if lay.owners == nil { // checked when parsed
			if err := lay.check(); err != nil {
				return nil, err
			}
		}
		for _, b := range lay.Blocks {
			n.blocks = append(n.blocks, n.blocks[len(n.blocks)-1]+int64(b.Size))
		}
	}
	slot := 0
	for k := range n.recs {
		r := &n.recs[k]
		switch f := l.frames[k]; {
		case l.layout != nil:
			if f != 0 {
				return nil, fmt.Errorf("%w: record %d gives a frame size beside a layout", ErrNVDFacts, k+1)
			}
			p := l.layout.Places[k]
			r.block, r.slot = p.Block, p.Slot
		case f > 0:
			n.blocks = append(n.blocks, n.blocks[len(n.blocks)-1]+int64(f))
			slot = 0
		case k == 0:
			return nil, fmt.Errorf("%w: record 1 starts no block", ErrNVDFacts)
		default:
			if slot++; slot >= 1<<16-1 {
				return nil, fmt.Errorf("%w: record %d: block %d holds too many records", ErrNVDFacts, k+1, len(n.blocks)-1)
			}
		}
		if l.layout == nil {
			r.block, r.slot = int32(len(n.blocks)-2), uint16(slot)
		}
		// One map operation a record: a name seen before leaves the map
		// a record short.
		if n.byName[r.key] = int32(k); len(n.byName) != k+1 {
			return nil, fmt.Errorf("%w: NVD record of %s twice", ErrInvalid, n.ID(k))
		}
		if k > 0 && !n.recs[k-1].before(r) {
			return nil, fmt.Errorf("%w: NVD record of %s is out of order", ErrInvalid, n.ID(k))
		}
	}
	l.recs, l.frames = nil, nil
	n.setSpan()
	return n, nil
}
