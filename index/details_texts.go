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
//
// A load (TextsLoader.ParsePieceLazy) does not even make the blocks: it
// keeps each piece of the stored table (a chunk of the snapshot file)
// as it is stored, compressed, and the first read of one of its far
// texts makes its blocks, some milliseconds for a 4 MB piece. Reading
// the texts out of their JSON strings and compressing them again was
// 0.3 s of a 400k load (0.4 of what CVE JSON 5 records add to it), for
// texts most CVEs never have read; serve's warm-up (WarmVersionTables)
// reads those of the biggest products' CVEs after the load.

// farBlockTarget is the decoded size at which a block of far texts is
// closed: a read decodes about this many bytes (some microseconds); a
// bigger block compresses better.
const farBlockTarget = 16 << 10

// farTexts are the far texts of a Details: those of its text table that
// are a JSON array ("[...]") or object ("{...}"), s2-compressed in
// blocks, per piece of the stored table. Their entries in the table's
// strs are "", unless a line names the text where a plain text is read
// too (a status, say), see TextsLoader.
type farTexts struct {
	// kind[i] is the first byte of far text i ('[' or '{'), 0 for a
	// text that is not far.
	kind []byte
	// pieces are in text order; firsts[k] is pieces[k].first.
	firsts []int
	pieces []*farPiece
}

// farPiece is the far texts of one piece of the stored table: the texts
// from first on, n of them.
type farPiece struct {
	first, n int
	once     sync.Once
	// raw is the stored piece, still compressed, and decode what gives
	// its lines, until its blocks are made (nil once they are, or when
	// they were made at load).
	raw    []byte
	decode func([]byte) ([]byte, error)
	// at[i] and at[i+1] are where text first+i starts and ends in the
	// stream of the piece's far texts back to back: equal for a text
	// that is not far.
	at []uint32
	// starts[k] is where block k starts in the stream; a text is never
	// split between blocks.
	starts []uint32
	blocks [][]byte
	// err is why the blocks could not be made from raw: its texts are
	// then read as none (Check reports it).
	err error
}

// isFar reports whether text id is far.
func (f *farTexts) isFar(id uint32) bool { return f != nil && f.kind[id] != 0 }

// piece is the piece that holds text id.
func (f *farTexts) piece(id uint32) *farPiece {
	k, found := slices.BinarySearch(f.firsts, int(id))
	if !found {
		k--
	}
	return f.pieces[k]
}

// ready makes pc's blocks if a lazy load left them to the first read,
// and reports whether pc has them. It is safe for concurrent use.
func (pc *farPiece) ready(kind []byte) bool {
	pc.once.Do(func() {
		if pc.raw == nil {
			return
		}
		data, err := pc.decode(pc.raw)
		if err == nil {
			err = pc.build(kind, data)
		}
		pc.raw, pc.decode, pc.err = nil, nil, err
	})
	return pc.err == nil
}

// build makes pc's blocks from its lines in data (those of texts
// pc.first to pc.first+pc.n, each a JSON string ending in "\n"): the
// texts kind marks far, read out of their strings back to back, are
// compressed in blocks of about farBlockTarget bytes. Errors name the
// line by its number from 1 among all texts.
func (pc *farPiece) build(kind []byte, data []byte) error {
	pc.at = make([]uint32, pc.n+1)
	var (
		cur  []byte // the block being filled: its decoded texts
		size uint32 // the stream's bytes in the blocks closed
		out  []byte // the compressed blocks back to back
		ends []int
	)
	flush := func() {
		if len(cur) == 0 {
			return
		}
		if out == nil {
			out = make([]byte, 0, len(data)/4) // JSON compresses some 5 times
		}
		n := len(out)
		out = slices.Grow(out, s2.MaxEncodedLen(len(cur)))
		enc := s2.Encode(out[n:cap(out)], cur) // in place: big enough
		out = out[:n+len(enc)]
		pc.starts = append(pc.starts, size)
		ends = append(ends, len(out))
		size += uint32(len(cur))
		cur = cur[:0]
	}
	i := 0
	for ; len(data) > 0; i++ {
		j := bytes.IndexByte(data, '\n')
		if j < 0 {
			j = len(data)
		}
		line := data[:j]
		data = data[min(j+1, len(data)):]
		if i >= pc.n {
			return fmt.Errorf("%w: more than the piece's %d texts", ErrDetails, pc.n)
		}
		n := pc.first + i
		if kind[n] == 0 {
			pc.at[i+1] = pc.at[i]
			continue
		}
		mark := len(cur)
		var err error
		if cur, err = appendText(cur, line); err != nil {
			return fmt.Errorf("record %d: %w", n+1, err)
		}
		if text := cur[mark:]; len(text) < 2 || text[0] != kind[n] || text[len(text)-1] != kind[n]+2 { // ']' and '}' are 2 past '[' and '{'
			return fmt.Errorf("%w: record %d is not a JSON text", ErrDetails, n+1)
		}
		if uint64(size)+uint64(len(cur)) > math.MaxUint32 {
			return fmt.Errorf("%w: piece of texts from %d over 4 GB", ErrDetails, pc.first+1)
		}
		pc.at[i+1] = size + uint32(len(cur))
		if len(cur) >= farBlockTarget {
			flush()
		}
	}
	if i != pc.n {
		return fmt.Errorf("%w: %d texts in a piece of %d", ErrDetails, i, pc.n)
	}
	flush()
	if cap(out)-len(out) > len(out)/8 {
		out = slices.Clone(out) // at its size: the rest is garbage now
	}
	for k, end := range ends {
		from := 0
		if k > 0 {
			from = ends[k-1]
		}
		pc.blocks = append(pc.blocks, out[from:end:end])
	}
	return nil
}

// farBufs are the buffers blocks are decoded into.
var farBufs = sync.Pool{New: func() any { return new([]byte) }}

// farReader reads far texts, decoding a block once for the texts it
// holds that are read one after the other (a CVE's entries and its SSVC
// decision are mostly in one block). Its buffer is pooled: release it.
type farReader struct {
	f    *farTexts
	pc   *farPiece // the piece of block k
	k    int       // the block in data; -1 for none
	data []byte    // block k decoded
	buf  *[]byte
}

func (f *farTexts) reader() farReader { return farReader{f: f, k: -1} }

// appendTo appends far text id to dst; ok is false if its block does not
// decode, which a block compressed by this process never fails to, or
// if its piece's blocks could not be made.
func (r *farReader) appendTo(dst []byte, id uint32) ([]byte, bool) {
	pc := r.f.piece(id)
	if !pc.ready(r.f.kind) {
		return dst, false
	}
	lo, hi := pc.at[int(id)-pc.first], pc.at[int(id)-pc.first+1]
	k, found := slices.BinarySearch(pc.starts, lo)
	if !found {
		k--
	}
	if k < 0 {
		return dst, false
	}
	if pc != r.pc || k != r.k {
		r.k = -1
		block := pc.blocks[k]
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
		r.pc, r.k = pc, k
	}
	from, to := lo-pc.starts[k], hi-pc.starts[k]
	if to > uint32(len(r.data)) {
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

// check makes the blocks of every piece and reports the first piece
// whose blocks could not be made.
func (f *farTexts) check() error {
	if f == nil {
		return nil
	}
	for _, pc := range f.pieces {
		if !pc.ready(f.kind) {
			return pc.err
		}
	}
	return nil
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
//
// A text is far when its line is a JSON string that starts with "[ or
// "{ and ends with the matching ]" or }": what a writer makes of a JSON
// array or object. Any other text is a string, whatever it reads as.
type TextsLoader struct {
	strs   []string
	kind   []byte
	pieces []farPiece
	seen   []bool
}

// NewTextsLoader starts a text table of texts texts stored in pieces
// pieces.
func NewTextsLoader(texts, pieces int) (*TextsLoader, error) {
	if texts < 0 || texts > math.MaxUint32 || pieces > math.MaxUint16+1 {
		return nil, fmt.Errorf("%w: %d texts in %d pieces", ErrDetails, texts, pieces)
	}
	return &TextsLoader{
		strs:   make([]string, texts),
		kind:   make([]byte, texts),
		pieces: make([]farPiece, pieces),
		seen:   make([]bool, pieces),
	}, nil
}

// ParsePiece parses piece p, whose lines (each ending in a newline, the
// last one maybe not) are the texts from first on. A line is a JSON
// string; its text is what json.Unmarshal makes of it, except that a line
// without a backslash is read as the bytes between its quotes. The error
// names the line by its number from 1 among all texts.
func (l *TextsLoader) ParsePiece(p, first int, data []byte) error {
	pc, err := l.parse(p, first, data)
	if err != nil {
		return err
	}
	pc.once.Do(func() { pc.err = pc.build(l.kind, data) })
	return pc.err
}

// ParsePieceLazy is ParsePiece, except that the piece's far texts are
// left in raw, the piece as stored, which l keeps: decode(raw) must give
// data again, and is called once, on the first read of one of them (see
// farTexts). Their lines are not read beyond their first and last bytes
// until then: a bad one is an error of Details.Check, and reads as none.
func (l *TextsLoader) ParsePieceLazy(p, first int, data, raw []byte, decode func(raw []byte) ([]byte, error)) error {
	pc, err := l.parse(p, first, data)
	if err != nil {
		return err
	}
	for _, k := range l.kind[first : first+pc.n] {
		if k != 0 {
			pc.raw, pc.decode = raw, decode
			return nil
		}
	}
	pc.once.Do(func() { pc.at = make([]uint32, pc.n+1) }) // no far text
	return nil
}

// parse reads piece p's lines: the plain texts into strings, the far
// ones marked in kind.
func (l *TextsLoader) parse(p, first int, data []byte) (*farPiece, error) {
	if p < 0 || p >= len(l.pieces) || l.seen[p] {
		return nil, fmt.Errorf("%w: text piece %d", ErrDetails, p)
	}
	l.seen[p] = true
	pc := &l.pieces[p]
	pc.first = first
	var buf []byte
	for n := first; len(data) > 0; n++ {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			i = len(data)
		}
		line := data[:i]
		data = data[min(i+1, len(data)):]
		if n < 0 || n >= len(l.strs) {
			return nil, fmt.Errorf("%w: more than the %d texts", ErrDetails, len(l.strs))
		}
		pc.n++
		if k := len(line); k >= 4 && line[0] == '"' && line[k-1] == '"' &&
			(line[1] == '[' && line[k-2] == ']' || line[1] == '{' && line[k-2] == '}') {
			l.kind[n] = line[1]
			continue
		}
		var err error
		if buf, err = appendText(buf[:0], line); err != nil {
			return nil, fmt.Errorf("record %d: %w", n+1, err)
		}
		l.strs[n] = string(buf)
	}
	return pc, nil
}

// appendText appends the text of line, a JSON string, to dst: the bytes
// between the quotes when it has no backslash, else what json.Unmarshal
// reads.
func appendText(dst, line []byte) ([]byte, error) {
	if len(line) >= 2 && line[0] == '"' && line[len(line)-1] == '"' && bytes.IndexByte(line, '\\') < 0 {
		// Most texts have no escape: the bytes between the quotes.
		return append(dst, line[1:len(line)-1]...), nil
	}
	if out, ok := appendUnescaped(dst, line); ok {
		return out, nil
	}
	var s string
	if err := json.Unmarshal(line, &s); err != nil {
		return dst, err
	}
	return append(dst, s...), nil
}

// DetailsLoader returns the loader of the CVEs' lines of a Details of
// cves CVEs stored in pieces pieces (see NewDetailsLoader), on the text
// table once every piece of it is parsed.
func (l *TextsLoader) DetailsLoader(cves, pieces int) (*DetailsLoader, error) {
	next := 0 // the texts the pieces cover, in order, with no gap
	f := &farTexts{kind: l.kind}
	for p := range l.pieces {
		if !l.seen[p] {
			return nil, fmt.Errorf("%w: text piece %d not parsed", ErrDetails, p)
		}
		f.pieces = append(f.pieces, &l.pieces[p])
	}
	slices.SortFunc(f.pieces, func(x, y *farPiece) int { return x.first - y.first })
	anyFar := false
	for _, pc := range f.pieces {
		if pc.first != next {
			return nil, fmt.Errorf("%w: text piece starts at text %d, not %d", ErrDetails, pc.first+1, next+1)
		}
		f.firsts = append(f.firsts, pc.first)
		anyFar = anyFar || pc.raw != nil || len(pc.blocks) > 0
		next += pc.n
	}
	if next != len(l.strs) {
		return nil, fmt.Errorf("%w: %d texts for %d", ErrDetails, next, len(l.strs))
	}
	if len(l.strs) > 0 && l.kind[0] != 0 {
		return nil, fmt.Errorf("%w: the text table does not start with \"\"", ErrDetails)
	}
	dl, err := NewDetailsLoader(l.strs, cves, pieces)
	if err != nil {
		return nil, err
	}
	if anyFar {
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
