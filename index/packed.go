package index

import (
	"fmt"
	"math"
)

// The index keeps its many small pieces (vendor and product bodies and
// summaries, their CVE lists) back to back in a few large slices without
// pointers, addressed by offsets, rather than as one allocation each. The
// garbage collector then has a few objects to mark instead of about a
// million, and nothing inside them to scan: at 400k CVEs that is what
// made each collection cost tens of milliseconds of a serving core.

// packed is a list of byte strings stored back to back: item k is
// text[offs[k]:offs[k+1]]. The zero packed is empty.
type packed struct {
	text []byte
	offs []uint32 // len(offs) is the number of items plus one, or 0
}

func (p *packed) add(b []byte) {
	if p.offs == nil {
		p.offs = []uint32{0}
	}
	p.text = append(p.text, b...)
	p.offs = append(p.offs, uint32(len(p.text)))
}

// addWith adds the item that f appends to the bytes it is given.
func (p *packed) addWith(f func(dst []byte) []byte) {
	if p.offs == nil {
		p.offs = []uint32{uint32(len(p.text))}
	}
	p.text = f(p.text)
	p.offs = append(p.offs, uint32(len(p.text)))
}

func (p packed) len() int { return max(0, len(p.offs)-1) }

func (p packed) item(k int) []byte {
	return p.text[p.offs[k]:p.offs[k+1]:p.offs[k+1]]
}

// slice returns items lo to hi-1 as a packed of their own, sharing p's
// storage.
func (p packed) slice(lo, hi int) packed {
	if lo == hi {
		return packed{}
	}
	return packed{p.text, p.offs[lo : hi+1 : hi+1]}
}

// run is a range of offsets into one of the index's packed slices.
type run struct{ from, to uint32 }

func (s run) of(b []byte) []byte { return b[s.from:s.to:s.to] }

func (s run) ints(b []int32) []int32 { return b[s.from:s.to:s.to] }

// moved is s for its slice appended to another of n elements.
func (s run) moved(n uint32) run { return run{s.from + n, s.to + n} }

// appendRun appends add to *dst and returns where it went.
func appendRun[T any](dst *[]T, add []T) run {
	from := len(*dst)
	*dst = append(*dst, add...)
	return run{uint32(from), uint32(len(*dst))}
}

// joinPacked appends the items of each of parts to one packed.
func joinPacked(parts []packed) packed {
	n, k := 0, 0
	for _, p := range parts {
		n += len(p.used())
		k += p.len()
	}
	out := packed{text: make([]byte, 0, n), offs: make([]uint32, 1, k+1)}
	for _, p := range parts {
		if p.len() == 0 {
			continue
		}
		base := uint32(len(out.text)) - p.offs[0]
		out.text = append(out.text, p.used()...)
		for _, o := range p.offs[1:] {
			out.offs = append(out.offs, base+o)
		}
	}
	return out
}

// used is the text of p's items.
func (p packed) used() []byte {
	if p.len() == 0 {
		return nil
	}
	return p.text[p.offs[0]:p.offs[len(p.offs)-1]]
}

// fitsOffsets checks that n bytes or items can be addressed by a run.
func fitsOffsets(what string, n int) error {
	if n > math.MaxUint32 {
		return fmt.Errorf("%w: %s: %d is past what the index can address", ErrInvalid, what, n)
	}
	return nil
}
