package index

// Where NVD's records are stored (format 9): a record's place in nvd.zst
// (its block, and its line in the block) is apart from its position in
// the order served, so that a build with a previous snapshot keeps that
// snapshot's blocks, byte for byte, and adds blocks of the records changed
// or added since (an overlay). A line of an old block whose record was
// replaced or dropped is dead: no record is stored there. The layout file
// (nvdlayout.txt.zst) has a line giving the number of blocks of the base
// (the blocks of the last compact layout, the first ones of the file),
// then a line per block of nvd.zst:
//
//	size p p - p
//
// size is the block's compressed size; then, for each line of the block,
// the position (from 0, in the order served) of the record it holds, or
// "-" for a dead line.

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// NVDPlace is where a record is stored: its block, and its line in the
// block (from 0).
type NVDPlace struct {
	Block int32
	Slot  uint16
}

// NVDLayout is where the records of a snapshot are stored in its blocks.
type NVDLayout struct {
	// Base is how many of the first blocks are the base: the blocks of
	// the last compact layout.
	Base int
	// Blocks are every block of the file, each's size and lines, dead
	// lines included.
	Blocks []NVDBlock
	// Places are where each record is, in the order served.
	Places []NVDPlace
	owners [][]int32 // by block, by line: its record, -1 for none
}

// CompactNVDLayout is the layout of records packed in the order served
// (see PackNVD): record i is line i%per of block i/per, each block whole.
func CompactNVDLayout(blocks []NVDBlock) *NVDLayout {
	l := &NVDLayout{Base: len(blocks), Blocks: blocks}
	for b, blk := range blocks {
		for s := range blk.Records {
			l.Places = append(l.Places, NVDPlace{Block: int32(b), Slot: uint16(s)})
		}
	}
	return l
}

// ErrNVDLayout is wrapped by the errors of a layout that does not parse
// or does not hold its records once each.
var ErrNVDLayout = errors.New("index: bad NVD layout")

// Lines is the number of lines of the layout file.
func (l *NVDLayout) Lines() int { return 1 + len(l.Blocks) }

// StoredLines is the number of lines of the blocks: nvd.zst's, records
// and dead lines.
func (l *NVDLayout) StoredLines() int {
	n := 0
	for _, b := range l.Blocks {
		n += b.Records
	}
	return n
}

// Dead is the number of lines of the blocks that hold no record.
func (l *NVDLayout) Dead() int { return l.StoredLines() - len(l.Places) }

// Owners are the records (their positions in the order served) at the
// lines of the blocks, in the order of nvd.zst, -1 at a dead line. The
// layout must be checked (as ParseNVDLayout's is).
func (l *NVDLayout) Owners() []int32 {
	out := make([]int32, 0, l.StoredLines())
	for _, o := range l.owners {
		out = append(out, o...)
	}
	return out
}

// check checks the layout holds each of its records once, each at a
// line of its blocks, and makes the lines' owners.
func (l *NVDLayout) check() error {
	if l.Base < 0 || l.Base > len(l.Blocks) {
		return fmt.Errorf("%w: a base of %d blocks of %d", ErrNVDLayout, l.Base, len(l.Blocks))
	}
	if len(l.Places) > math.MaxInt32 || len(l.Blocks) > math.MaxInt32 {
		return fmt.Errorf("%w: %d records in %d blocks", ErrNVDLayout, len(l.Places), len(l.Blocks))
	}
	for b, blk := range l.Blocks {
		if blk.Size <= 0 || blk.Size > math.MaxInt32 || blk.Records <= 0 || blk.Records > 1<<16-1 {
			return fmt.Errorf("%w: block %d: bad size or line count", ErrNVDLayout, b+1)
		}
	}
	lines := l.StoredLines()
	if lines < len(l.Places) {
		return fmt.Errorf("%w: %d lines for %d records", ErrNVDLayout, lines, len(l.Places))
	}
	all := make([]int32, lines)
	for i := range all {
		all[i] = -1
	}
	l.owners = make([][]int32, len(l.Blocks))
	for b, blk := range l.Blocks {
		l.owners[b], all = all[:blk.Records:blk.Records], all[blk.Records:]
	}
	for i, p := range l.Places {
		if p.Block < 0 || int(p.Block) >= len(l.Blocks) || int(p.Slot) >= l.Blocks[p.Block].Records {
			return fmt.Errorf("%w: record %d is at line %d of block %d, out of range", ErrNVDLayout, i+1, int(p.Slot)+1, int(p.Block)+1)
		}
		o := &l.owners[p.Block][p.Slot]
		if *o >= 0 {
			return fmt.Errorf("%w: records %d and %d are both at line %d of block %d", ErrNVDLayout, *o+1, i+1, int(p.Slot)+1, int(p.Block)+1)
		}
		*o = int32(i)
	}
	return nil
}

// AppendLine appends line k of the layout file, without its "\n": the
// base, then a line per block.
func (l *NVDLayout) AppendLine(dst []byte, k int) []byte {
	if k == 0 {
		return strconv.AppendInt(dst, int64(l.Base), 10)
	}
	if l.owners == nil {
		if err := l.check(); err != nil {
			panic(err) // made by PackNVD or a build: a bug
		}
	}
	b := k - 1
	dst = strconv.AppendInt(dst, int64(l.Blocks[b].Size), 10)
	for _, o := range l.owners[b] {
		if o < 0 {
			dst = append(dst, " -"...)
		} else {
			dst = strconv.AppendInt(append(dst, ' '), int64(o), 10)
		}
	}
	return dst
}

// parseLayoutSize parses a number from 1 to math.MaxInt32 in decimal,
// without a sign or leading zeros.
func parseLayoutSize(b []byte) (int64, error) {
	if len(b) == 0 || len(b) > 10 || b[0] == '0' {
		return 0, fmt.Errorf("bad number %q", b)
	}
	var v int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("bad number %q", b)
		}
		v = v*10 + int64(c-'0')
	}
	if v > math.MaxInt32 {
		return 0, fmt.Errorf("number %d out of range", v)
	}
	return v, nil
}

// ParseNVDLayout parses the layout file of records records: whole lines,
// each ending in "\n". It checks every record is at one line of a block,
// no two at the same.
func ParseNVDLayout(data []byte, records int) (*NVDLayout, error) {
	if records < 0 || records > len(data)/2 {
		// Each record takes two bytes at least (" p").
		return nil, fmt.Errorf("%w: %d records in %d bytes", ErrNVDLayout, records, len(data))
	}
	line, data, ok := bytes.Cut(data, []byte{'\n'})
	if !ok {
		return nil, fmt.Errorf("%w: no base line", ErrNVDLayout)
	}
	base, err := parseLayoutSize(line)
	if err != nil && len(line) == 1 && line[0] == '0' {
		base, err = 0, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: base line: %v", ErrNVDLayout, err)
	}
	l := &NVDLayout{Base: int(base)}
	l.Places = make([]NVDPlace, records)
	seen := make([]bool, records)
	placed := 0
	for k := 1; len(data) > 0; k++ {
		if line, data, ok = bytes.Cut(data, []byte{'\n'}); !ok {
			return nil, fmt.Errorf("%w: line %d does not end in a newline", ErrNVDLayout, k+1)
		}
		b := len(l.Blocks)
		if b >= math.MaxInt32 {
			return nil, fmt.Errorf("%w: too many blocks", ErrNVDLayout)
		}
		sp := bytes.IndexByte(line, ' ')
		if sp < 0 {
			return nil, fmt.Errorf("%w: line %d: no lines after the size", ErrNVDLayout, k+1)
		}
		size, err := parseLayoutSize(line[:sp])
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: size: %v", ErrNVDLayout, k+1, err)
		}
		slots := 0
		for rest := line[sp:]; len(rest) > 0; slots++ {
			if slots == 1<<16-1 {
				return nil, fmt.Errorf("%w: line %d: block %d holds too many lines", ErrNVDLayout, k+1, b+1)
			}
			if len(rest) >= 2 && rest[1] == '-' && (len(rest) == 2 || rest[2] == ' ') {
				rest = rest[2:]
				continue
			}
			f := nvdFields{b: rest}
			p := f.int(0, int64(records)-1)
			if f.err != nil {
				return nil, fmt.Errorf("%w: line %d: %v", ErrNVDLayout, k+1, f.err)
			}
			rest = f.b
			if seen[p] {
				return nil, fmt.Errorf("%w: record %d is at two places", ErrNVDLayout, p+1)
			}
			seen[p] = true
			placed++
			l.Places[p] = NVDPlace{Block: int32(b), Slot: uint16(slots)}
		}
		l.Blocks = append(l.Blocks, NVDBlock{Size: int(size), Records: slots})
	}
	if placed != records {
		return nil, fmt.Errorf("%w: %d of the %d records placed", ErrNVDLayout, placed, records)
	}
	if err := l.check(); err != nil {
		return nil, err
	}
	return l, nil
}
