package index

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"sync"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/goccy/go-json"
	"github.com/klauspost/compress/s2"
)

// The texts of a loaded Details that are JSON (each CVE's affected
// entries, an array, and its SSVC decision, an object) are most of its
// text table's bytes: some 400 bytes a CVE with a CVE JSON 5 record, 150
// MB at 400k CVEs, which /cve/{name}/details, explain and a product's
// first ?version= query read one CVE at a time, never a list. A load
// keeps them compressed, in blocks of consecutive texts (farTexts), and
// a read decodes the one block that holds its text.

// farBlockTarget is the decoded size at which a block of far texts is
// closed: a read decodes about this many bytes (some microseconds); a
// bigger block compresses better.
const farBlockTarget = 16 << 10

// farTexts are the far texts of a Details: those of its text table that
// are a JSON array ("[...]") or object ("{...}"), s2-compressed in
// blocks. Their entries in the table's strs are "", unless a line names
// the text where a plain text is read too (a status, say), see
// TextsLoader.
type farTexts struct {
	// at[i] and at[i+1] are where text i starts and ends in the stream
	// of all far texts back to back: equal for a text that is not far.
	at []uint64
	// kind[i] is the first byte of far text i ('[' or '{'), 0 for a
	// text that is not far.
	kind []byte
	// starts[k] is where block k starts in the stream; a text is never
	// split between blocks.
	starts []uint64
	blocks [][]byte
}

// isFar reports whether text id is far.
func (f *farTexts) isFar(id uint32) bool { return f != nil && f.kind[id] != 0 }

// farBufs are the buffers blocks are decoded into.
var farBufs = sync.Pool{New: func() any { return new([]byte) }}

// farReader reads far texts, decoding a block once for the texts it
// holds that are read one after the other (a CVE's entries and its SSVC
// decision are mostly in one block). Its buffer is pooled: release it.
type farReader struct {
	f    *farTexts
	k    int    // the block in data; -1 for none
	data []byte // block k decoded
	buf  *[]byte
}

func (f *farTexts) reader() farReader { return farReader{f: f, k: -1} }

// appendTo appends far text id to dst; ok is false if its block does not
// decode, which a block compressed at load never fails to.
func (r *farReader) appendTo(dst []byte, id uint32) ([]byte, bool) {
	f := r.f
	lo, hi := f.at[id], f.at[id+1]
	k, found := slices.BinarySearch(f.starts, lo)
	if !found {
		k--
	}
	if k != r.k {
		r.k = -1
		block := f.blocks[k]
		n, err := s2.DecodedLen(block)
		if err != nil {
			return dst, false
		}
		if r.buf == nil {
			r.buf = farBufs.Get().(*[]byte)
		}
		if cap(*r.buf) < n {
			*r.buf = make([]byte, max(n, farBlockTarget*2))
		}
		if r.data, err = s2.Decode((*r.buf)[:n], block); err != nil {
			return dst, false
		}
		r.k = k
	}
	from, to := lo-f.starts[k], hi-f.starts[k]
	if to > uint64(len(r.data)) {
		return dst, false
	}
	return append(dst, r.data[from:to]...), true
}

// release gives the reader's buffer back to the pool.
func (r *farReader) release() {
	if r.buf != nil {
		farBufs.Put(r.buf)
		*r = farReader{f: r.f, k: -1}
	}
}

// appendText appends text id of d's table to dst, far or not.
func (d *Details) appendText(dst []byte, id uint32) []byte {
	if d.far.isFar(id) {
		r := d.far.reader()
		dst, _ = r.appendTo(dst, id)
		r.release()
		return dst
	}
	return append(dst, d.strs[id]...)
}

// appendTextWith is appendText reading a far text with r (r's Details'
// far texts), so that texts in one block decode it once.
func (d *Details) appendTextWith(r *farReader, dst []byte, id uint32) []byte {
	if d.far.isFar(id) {
		dst, _ = r.appendTo(dst, id)
		return dst
	}
	return append(dst, d.strs[id]...)
}

// textShaped reports whether text id is "" (none) or starts with open
// and ends with close, as jsonShaped, far or not.
func (d *Details) textShaped(id uint32, open, close byte) bool {
	if d.far.isFar(id) {
		return d.far.kind[id] == open
	}
	return jsonShaped(d.strs[id], open, close)
}

// TextsLoader rebuilds the text table of a Details from its stored form,
// one JSON string a line (what Strings gives, each written as a JSON
// string), in pieces (the chunks of a snapshot file) that may be parsed
// at the same time on several goroutines. The JSON texts among them are
// kept compressed (see farTexts); the others become strings. Then
// DetailsLoader reads the lines of the CVEs against it.
type TextsLoader struct {
	strs   []string
	far    farTexts // at, kind; starts and blocks once every piece is parsed
	pieces []textsPiece
	seen   []bool
}

// textsPiece is what a piece of the text table holds of the far texts:
// its blocks, compressed back to back in data (block k is
// data[ends[k-1]:ends[k]]), and where each starts in the piece's part of
// the stream.
type textsPiece struct {
	first, n int // the piece's texts: from first on, n of them
	data     []byte
	ends     []int
	starts   []uint64
	size     uint64 // far bytes in the piece
}

// NewTextsLoader starts a text table of texts texts stored in pieces
// pieces.
func NewTextsLoader(texts, pieces int) (*TextsLoader, error) {
	if texts < 0 || texts > math.MaxUint32 || pieces > math.MaxUint16+1 {
		return nil, fmt.Errorf("%w: %d texts in %d pieces", ErrDetails, texts, pieces)
	}
	return &TextsLoader{
		strs:   make([]string, texts),
		far:    farTexts{at: make([]uint64, texts+1), kind: make([]byte, texts)},
		pieces: make([]textsPiece, pieces),
		seen:   make([]bool, pieces),
	}, nil
}

// ParsePiece parses piece p, whose lines (each ending in a newline, the
// last one maybe not) are the texts from first on. A line is a JSON
// string; its text is what json.Unmarshal makes of it, except that a line
// without a backslash is read as the bytes between its quotes. The error
// names the line by its number from 1 among all texts.
func (l *TextsLoader) ParsePiece(p, first int, data []byte) error {
	if p < 0 || p >= len(l.pieces) || l.seen[p] {
		return fmt.Errorf("%w: text piece %d", ErrDetails, p)
	}
	l.seen[p] = true
	pc := &l.pieces[p]
	pc.first = first
	var cur []byte // the block being filled: its decoded texts
	flush := func() {
		if len(cur) == 0 {
			return
		}
		if pc.data == nil {
			pc.data = make([]byte, 0, len(data)/4) // JSON compresses some 5 times
		}
		n := len(pc.data)
		pc.data = slices.Grow(pc.data, s2.MaxEncodedLen(len(cur)))
		enc := s2.Encode(pc.data[n:cap(pc.data)], cur) // in place: big enough
		pc.data = pc.data[:n+len(enc)]
		pc.starts = append(pc.starts, pc.size)
		pc.ends = append(pc.ends, len(pc.data))
		pc.size += uint64(len(cur))
		cur = cur[:0]
	}
	for n := first; len(data) > 0; n++ {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			i = len(data)
		}
		line := data[:i]
		data = data[min(i+1, len(data)):]
		if n >= len(l.strs) {
			return fmt.Errorf("%w: more than the %d texts", ErrDetails, len(l.strs))
		}
		pc.n++
		mark := len(cur)
		if len(line) >= 2 && line[0] == '"' && line[len(line)-1] == '"' && bytes.IndexByte(line, '\\') < 0 {
			// Most texts have no escape: the bytes between the quotes.
			cur = append(cur, line[1:len(line)-1]...)
		} else {
			var ok bool
			if cur, ok = appendUnescaped(cur, line); !ok {
				var s string
				if err := json.Unmarshal(line, &s); err != nil {
					return fmt.Errorf("record %d: %w", n+1, err)
				}
				cur = append(cur, s...)
			}
		}
		text := cur[mark:]
		if k := len(text); k >= 2 && (text[0] == '[' && text[k-1] == ']' || text[0] == '{' && text[k-1] == '}') {
			l.far.kind[n] = text[0]
			l.far.at[n+1] = pc.size + uint64(len(cur)) // in the piece's part, for now
			if len(cur) >= farBlockTarget {
				flush()
			}
			continue
		}
		l.strs[n] = string(text)
		cur = cur[:mark]
		l.far.at[n+1] = pc.size + uint64(len(cur))
	}
	flush()
	if cap(pc.data)-len(pc.data) > len(pc.data)/8 {
		pc.data = slices.Clone(pc.data) // at its size: the rest is garbage now
	}
	return nil
}

// DetailsLoader returns the loader of the CVEs' lines of a Details of
// cves CVEs stored in pieces pieces (see NewDetailsLoader), on the text
// table once every piece of it is parsed.
func (l *TextsLoader) DetailsLoader(cves, pieces int) (*DetailsLoader, error) {
	next := 0 // the texts the pieces cover, in order, with no gap
	order := make([]int, len(l.pieces))
	for p := range order {
		order[p] = p
	}
	slices.SortFunc(order, func(x, y int) int { return l.pieces[x].first - l.pieces[y].first })
	f := &l.far
	var base uint64
	for _, p := range order {
		pc := &l.pieces[p]
		if !l.seen[p] {
			return nil, fmt.Errorf("%w: text piece %d not parsed", ErrDetails, p)
		}
		if pc.first != next {
			return nil, fmt.Errorf("%w: text piece %d starts at text %d, not %d", ErrDetails, p, pc.first+1, next+1)
		}
		for i := pc.first + 1; i <= pc.first+pc.n; i++ {
			f.at[i] += base
		}
		for k, s := range pc.starts {
			from := 0
			if k > 0 {
				from = pc.ends[k-1]
			}
			f.starts = append(f.starts, base+s)
			f.blocks = append(f.blocks, pc.data[from:pc.ends[k]:pc.ends[k]])
		}
		base += pc.size
		next += pc.n
	}
	if next != len(l.strs) {
		return nil, fmt.Errorf("%w: %d texts for %d", ErrDetails, next, len(l.strs))
	}
	if len(l.strs) > 0 && f.kind[0] != 0 {
		return nil, fmt.Errorf("%w: the text table does not start with \"\"", ErrDetails)
	}
	dl, err := NewDetailsLoader(l.strs, cves, pieces)
	if err != nil {
		return nil, err
	}
	if len(f.blocks) > 0 {
		dl.d.far = f
	}
	return dl, nil
}

// appendUnescaped appends to dst the text of lit, a JSON string (quotes
// included), when reading it is plain: its escapes are of one character
// or a \u of a code point that is no surrogate, its other bytes printable
// ASCII or valid UTF-8. Then the text is the one json.Unmarshal reads.
// Otherwise (a bad string, or one Unmarshal reads with replacements) ok
// is false and dst is returned as it came.
func appendUnescaped(dst, lit []byte) (_ []byte, ok bool) {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return dst, false
	}
	mark := len(dst)
	s := lit[1 : len(lit)-1]
	// The text is no longer than s: written in place, byte by byte, with
	// no call per run between escapes (most escapes here are \", a few
	// bytes apart).
	dst = slices.Grow(dst, len(s))
	out := dst[mark : mark+len(s)]
	var high byte
	j := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' {
			if c < 0x20 || c == '"' {
				return dst[:mark], false
			}
			high |= c
			out[j] = c
			j++
			continue
		}
		if i+1 >= len(s) {
			return dst[:mark], false
		}
		i++
		switch e := s[i]; e {
		case '"', '\\', '/':
			out[j] = e
		case 'b':
			out[j] = '\b'
		case 'f':
			out[j] = '\f'
		case 'n':
			out[j] = '\n'
		case 'r':
			out[j] = '\r'
		case 't':
			out[j] = '\t'
		case 'u':
			if i+4 >= len(s) {
				return dst[:mark], false
			}
			var r rune
			for _, h := range s[i+1 : i+5] {
				switch {
				case '0' <= h && h <= '9':
					r = r<<4 | rune(h-'0')
				case 'a' <= h && h <= 'f':
					r = r<<4 | rune(h-'a'+10)
				case 'A' <= h && h <= 'F':
					r = r<<4 | rune(h-'A'+10)
				default:
					return dst[:mark], false
				}
			}
			if utf16.IsSurrogate(r) {
				return dst[:mark], false
			}
			j += utf8.EncodeRune(out[j:], r) // at most 3 bytes for the 6 of \uXXXX
			i += 4
			continue
		default:
			return dst[:mark], false
		}
		j++
	}
	if high >= utf8.RuneSelf && !utf8.Valid(s) {
		return dst[:mark], false
	}
	return dst[:mark+j], true
}
