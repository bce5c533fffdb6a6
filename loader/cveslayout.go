package loader

// Where the CVE bodies are stored in cves.jsonl.zst (format 10): as NVD's
// records are in nvd.zst (see nvdlayout.go), the bodies of a snapshot
// built with -previous are laid out over the previous snapshot's: its
// chunks are kept whole, the same bytes (the same blobs to publish and
// pull), every body that did not change where it was, and the bodies
// changed or added since follow in chunks of their own, in name order.
// The lines of the bodies replaced or dropped are dead. A snapshot
// compacts (writes every body in name order, in fresh chunks) when its
// NVD records do (nvdCompactShare): one decision for both files.
//
// cveslayout.txt.zst says which CVE each line holds: a first line, the
// number of chunks of the base (those of the last compact layout, the
// first of the file), then a line per chunk of cves.jsonl.zst, each a
// list of runs separated by spaces:
//
//	p      the line holds the CVE at position p (from 0, in name order)
//	p+n    n lines (n ≥ 2) hold the CVEs at positions p to p+n-1
//	-n     n lines (n ≥ 1) are dead
//
// A compact layout is one run per chunk. The details are kept in name
// order (details.txt.zst has a line per CVE, not per stored line).

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/klauspost/compress/zstd"

	"github.com/vulnd/vulnd/index"
)

// Stored in cves.jsonl.zst's manifest entry: its lines, dead ones
// included. The CVEs are the layout's positions.
const (
	keyCVEsLayout  = "cveslayout"
	fileCVEsLayout = "cveslayout.txt.zst"
)

// cvesLayoutVersion is the first format with cveslayout.txt.zst.
const cvesLayoutVersion = 10

// errCVEsLayout is wrapped by the errors of a layout that does not parse
// or does not hold its CVEs once each.
var errCVEsLayout = errors.New("bad CVE layout")

// cvesLayout is where each CVE's body is in cves.jsonl.zst.
type cvesLayout struct {
	// base is how many of the first chunks are the base.
	base int
	// chunks are the lines of each chunk, dead ones included.
	chunks []int
	// owners are, by line of the file, the position of the CVE it
	// holds; -1 for a dead line.
	owners []int32
	// cves is the number of CVEs (positions).
	cves int
}

// compactCVEsLayout is the layout of bodies written in name order in
// chunks of those lines.
func compactCVEsLayout(chunks []int) *cvesLayout {
	l := &cvesLayout{base: len(chunks), chunks: chunks}
	for _, n := range chunks {
		for range n {
			l.owners = append(l.owners, int32(l.cves))
			l.cves++
		}
	}
	return l
}

// places are the lines of the CVEs, by position.
func (l *cvesLayout) places() []int32 {
	out := make([]int32, l.cves)
	for line, p := range l.owners {
		if p >= 0 {
			out[p] = int32(line)
		}
	}
	return out
}

// lines is the number of lines of the layout file.
func (l *cvesLayout) lines() int { return 1 + len(l.chunks) }

// appendLine appends line k of the layout file, without its "\n".
func (l *cvesLayout) appendLine(dst []byte, k int) []byte {
	if k == 0 {
		return strconv.AppendInt(dst, int64(l.base), 10)
	}
	first := 0
	for _, n := range l.chunks[:k-1] {
		first += n
	}
	owners := l.owners[first : first+l.chunks[k-1]]
	for i := 0; i < len(owners); {
		j := i + 1
		if owners[i] < 0 {
			for j < len(owners) && owners[j] < 0 {
				j++
			}
		} else {
			for j < len(owners) && owners[j] == owners[j-1]+1 {
				j++
			}
		}
		if i > 0 {
			dst = append(dst, ' ')
		}
		switch {
		case owners[i] < 0:
			dst = append(dst, '-')
			dst = strconv.AppendInt(dst, int64(j-i), 10)
		case j-i == 1:
			dst = strconv.AppendInt(dst, int64(owners[i]), 10)
		default:
			dst = strconv.AppendInt(dst, int64(owners[i]), 10)
			dst = append(dst, '+')
			dst = strconv.AppendInt(dst, int64(j-i), 10)
		}
		i = j
	}
	return dst
}

// parseCVEsLayout parses the layout file's lines (data, each ending in
// "\n") of a cves.jsonl.zst whose chunks hold chunks lines each, and
// checks that it holds each CVE once, positions 0 to its count.
func parseCVEsLayout(data []byte, chunks []int) (*cvesLayout, error) {
	total := 0
	for _, n := range chunks {
		total += n
	}
	if total > math.MaxInt32 {
		return nil, fmt.Errorf("%w: %d lines", errCVEsLayout, total)
	}
	l := &cvesLayout{chunks: chunks, owners: make([]int32, 0, total)}
	k := 0
	num := func(s []byte) (int, bool) {
		if len(s) == 0 || len(s) > 10 || len(s) > 1 && s[0] == '0' {
			return 0, false
		}
		v := 0
		for _, c := range s {
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		return v, v <= math.MaxInt32
	}
	for line := range bytes.Lines(data) {
		line, ok := bytes.CutSuffix(line, []byte{'\n'})
		if !ok {
			return nil, fmt.Errorf("%w: line %d does not end in a newline", errCVEsLayout, k+1)
		}
		if k == 0 {
			b, ok := num(line)
			if !ok || b > len(chunks) {
				return nil, fmt.Errorf("%w: line 1: a base of %q chunks of %d", errCVEsLayout, line, len(chunks))
			}
			l.base = b
			k++
			continue
		}
		if k > len(chunks) {
			return nil, fmt.Errorf("%w: more than the %d chunk lines", errCVEsLayout, len(chunks))
		}
		start := len(l.owners)
		for run := range bytes.SplitSeq(line, []byte{' '}) {
			var p, n int
			var ok bool
			if dead, isDead := bytes.CutPrefix(run, []byte{'-'}); isDead {
				n, ok = num(dead)
				p = -1
				ok = ok && n >= 1
			} else if a, b, isRun := bytes.Cut(run, []byte{'+'}); isRun {
				p, ok = num(a)
				var okN bool
				n, okN = num(b)
				ok = ok && okN && n >= 2 && p+n <= math.MaxInt32
			} else {
				p, ok = num(run)
				n = 1
			}
			if !ok {
				return nil, fmt.Errorf("%w: line %d: bad run %q", errCVEsLayout, k+1, run)
			}
			if len(l.owners)-start+n > chunks[k-1] {
				return nil, fmt.Errorf("%w: line %d: more than the chunk's %d lines", errCVEsLayout, k+1, chunks[k-1])
			}
			for i := range n {
				if p < 0 {
					l.owners = append(l.owners, -1)
				} else {
					l.owners = append(l.owners, int32(p+i))
				}
			}
		}
		if got := len(l.owners) - start; got != chunks[k-1] {
			return nil, fmt.Errorf("%w: line %d: %d lines, the chunk holds %d", errCVEsLayout, k+1, got, chunks[k-1])
		}
		k++
	}
	if k != 1+len(chunks) {
		return nil, fmt.Errorf("%w: %d lines for %d chunks", errCVEsLayout, k, len(chunks))
	}
	// Each position once, from 0 to the count.
	seen := make([]bool, len(l.owners))
	for line, p := range l.owners {
		switch {
		case p < 0:
			continue
		case int(p) >= len(seen):
			return nil, fmt.Errorf("%w: line %d of %s holds CVE %d, past the %d lines", errCVEsLayout, line+1, fileCVEs, p+1, len(seen))
		case seen[p]:
			return nil, fmt.Errorf("%w: CVE %d is at two lines of %s", errCVEsLayout, p+1, fileCVEs)
		}
		seen[p] = true
		l.cves++
	}
	for p, ok := range seen[:l.cves] {
		if !ok {
			return nil, fmt.Errorf("%w: CVE %d is at no line of %s", errCVEsLayout, p+1, fileCVEs)
		}
	}
	return l, nil
}

// readCVEsLayout reads the layout of the CVE bodies of a snapshot
// (manifest m): the compact one before format 10.
func readCVEsLayout(dir string, m Manifest, dec *zstd.Decoder) (*cvesLayout, error) {
	fi := m.Files[keyCVEs]
	chunks := make([]int, len(fi.Chunks))
	for i, c := range fi.Chunks {
		chunks[i] = c.Records
	}
	if m.Version < cvesLayoutVersion {
		return compactCVEsLayout(chunks), nil
	}
	lfi := m.Files[keyCVEsLayout]
	pieces := make([][]byte, len(lfi.Chunks))
	if err := decodeFile(dir, lfi, dec, func(c int, piece []byte) error {
		pieces[c] = piece
		return nil
	}); err != nil {
		return nil, fmt.Errorf("%s: %w", fileCVEsLayout, err)
	}
	l, err := parseCVEsLayout(bytes.Join(pieces, nil), chunks)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", fileCVEsLayout, err)
	}
	return l, nil
}

// cvesBase is a previous snapshot's cves.jsonl.zst, which a build lays
// its bodies out over.
type cvesBase struct {
	dir  string
	fi   FileInfo
	lay  *cvesLayout
	at   map[string]int32 // the previous position of each CVE
	hash []recHash        // the previous bodies' hashes, by position
	// bodies are the previous bodies, by position, as decoded from the
	// chunks of fi when the previous snapshot was read (their sums
	// checked); nil when not kept (see entriesOver).
	bodies [][]byte
}

// cvesBaseOf is the base a build lays its bodies over when s is its
// previous snapshot; nil when s does not have what it takes.
func cvesBaseOf(s *Snapshot) *cvesBase {
	if s == nil || s.cvesLayout == nil || len(s.bodyHash) != len(s.Data.CVEs) || s.cvesLayout.cves != len(s.Data.CVEs) {
		return nil
	}
	b := &cvesBase{dir: s.Dir, fi: s.Manifest.Files[keyCVEs], lay: s.cvesLayout, at: make(map[string]int32, len(s.Data.CVEs)), hash: s.bodyHash}
	if len(s.bodies) == len(s.Data.CVEs) {
		b.bodies = s.bodies
	}
	for j := range s.Data.CVEs {
		b.at[s.Data.CVEs[j].Name] = int32(j)
	}
	return b
}

// cvesOverlay is a write laying bodies over a base: where each of the
// base's CVEs is kept.
type cvesOverlay struct {
	base  *cvesBase
	kept  []int32 // by the base's positions, the new one (-1: not kept)
	delta []int32 // the positions of the bodies written after the base's chunks
}

// start writes the base's chunks to w, as stored (their sums checked),
// for a write of n CVEs.
func (b *cvesBase) start(w *chunkWriter, n int) (*cvesOverlay, error) {
	data, err := readChecked(b.dir, b.fi)
	if err != nil {
		return nil, err
	}
	var off int64
	for _, c := range b.fi.Chunks {
		if err := w.copyChunk(c.Bytes, data[off:off+c.Size:off+c.Size], c.Records); err != nil {
			return nil, err
		}
		off += c.Size
	}
	o := &cvesOverlay{base: b, kept: make([]int32, b.lay.cves)}
	for j := range o.kept {
		o.kept[j] = -1
	}
	return o, nil
}

// keep tells whether the body of the CVE at position i (named name) is
// the base's, byte for byte (carried over as stored, by the positions of
// carried, or the same bytes): it is then kept where it is, otherwise it
// is written after the base's chunks.
func (o *cvesOverlay) keep(i int, name string, body []byte, carried [][]byte) bool {
	j, ok := o.base.at[name]
	if ok && (i < len(carried) && carried[i] != nil || recordHash(body) == o.base.hash[j]) {
		o.kept[j] = int32(i)
		return true
	}
	o.delta = append(o.delta, int32(i))
	return false
}

// layout is the layout of the file written (fi): the base's lines, dead
// where a CVE was not kept, then the bodies written after them.
func (o *cvesOverlay) layout(fi FileInfo) *cvesLayout {
	l := &cvesLayout{base: o.base.lay.base, chunks: make([]int, len(fi.Chunks)), cves: len(o.delta)}
	for k, c := range fi.Chunks {
		l.chunks[k] = c.Records
	}
	l.owners = make([]int32, 0, len(o.base.lay.owners)+len(o.delta))
	for _, j := range o.base.lay.owners {
		p := int32(-1)
		if j >= 0 {
			p = o.kept[j]
		}
		if p >= 0 {
			l.cves++
		}
		l.owners = append(l.owners, p)
	}
	l.owners = append(l.owners, o.delta...)
	return l
}

// entriesOver is decodeEntries for a cves.jsonl.zst (fi, laid out as lay)
// just written over base: the lines of the base's chunks, copied as
// stored, are scanned from the base's bodies as they were decoded when
// the previous snapshot was read, and only the chunks written after them
// are read and decoded again. The guarantee is decodeEntries': every line
// the index is built from is the decoding of a chunk of the file whose
// SHA-256 is the manifest's, as a copied chunk's sum is the one the base's
// chunk had when it was read and decoded (checked here, chunk by chunk);
// the 764 MB of a 400k refresh's bodies are not decompressed a second
// time. Without the base's bodies, or when a copied chunk is not the
// base's, it is decodeEntries.
func entriesOver(dir string, fi FileInfo, lay *cvesLayout, base *cvesBase, dec *zstd.Decoder) ([]index.CVEEntry, error) {
	nb := 0
	if base != nil && base.bodies != nil && len(base.bodies) == base.lay.cves && len(fi.Chunks) >= len(base.fi.Chunks) {
		nb = len(base.fi.Chunks)
		for k := range nb {
			if fi.Chunks[k] != base.fi.Chunks[k] {
				nb = 0
				break
			}
		}
	}
	if nb == 0 {
		return decodeEntries(dir, fi, lay, dec)
	}
	firsts := make([]int, len(fi.Chunks)+1) // the first line of each chunk
	offsets := make([]int64, len(fi.Chunks))
	for k, c := range fi.Chunks {
		firsts[k+1] = firsts[k] + c.Records
		if k > 0 {
			offsets[k] = offsets[k-1] + fi.Chunks[k-1].Size
		}
	}
	if firsts[nb] != len(base.lay.owners) || firsts[len(fi.Chunks)] != len(lay.owners) {
		return nil, fmt.Errorf("%s: %d lines, its layout says %d (%d of them the previous snapshot's, which held %d)",
			fi.Name, firsts[len(fi.Chunks)], len(lay.owners), firsts[nb], len(base.lay.owners))
	}
	f, err := openData(dir, fi)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := make([]index.CVEEntry, lay.cves)
	errs := index.OnCores(len(fi.Chunks), func() func(int) error {
		var buf []byte
		return func(k int) error {
			if k < nb {
				for n := firsts[k]; n < firsts[k+1]; n++ {
					p, j := lay.owners[n], base.lay.owners[n]
					switch {
					case p < 0:
						continue
					case j < 0:
						return fmt.Errorf("%s: record %d: a line dead in the previous snapshot holds CVE %d", fi.Name, n+1, p+1)
					}
					e, err := index.ScanCVE(base.bodies[j])
					if err != nil {
						return fmt.Errorf("%s: record %d: %w", fi.Name, n+1, err)
					}
					out[p] = e
				}
				return nil
			}
			c := fi.Chunks[k]
			if int64(cap(buf)) < c.Size {
				buf = make([]byte, c.Size)
			}
			data, err := decodeChunk(f, offsets[k], c, buf[:c.Size], make([]byte, 0, c.Bytes), dec)
			if err != nil {
				return fmt.Errorf("%s: chunk %d: %w", fi.Name, k+1, err)
			}
			return eachLine(data, firsts[k], lay.scanInto(out))
		}
	})
	if err := index.FirstError(errs); err != nil {
		return nil, err
	}
	return out, nil
}
