package loader

// A build with -previous that carries what the CVE JSON 5 records gave
// (see carryRecords) takes each carried CVE's texts (its affected
// entries' JSON, SSVC decision and entry keys) from the previous
// snapshot's details by their ids in its text table (index.HeldFrom),
// and the details it writes take them by id too
// (index.DetailsBuilder.CarryFrom): no text is decoded, held again or
// interned by value. The new table lists the same texts in the same
// order as a full build's (the order in which the CVEs, in name order,
// first name them); a text the previous table holds is written as that
// table stores it (a JSON string a line, which this vulnd wrote: the
// previous snapshot is of the format it writes), the others encoded.
// A text given by value (the CVEs' statuses, KEV entries, metrics, and
// the texts of records read anew) is looked up in the previous table by
// the hash of its stored form, so that a text both given by value and
// taken by id is listed once, as a full build lists it.

import (
	"bytes"
	"fmt"
	"slices"

	"github.com/klauspost/compress/zstd"

	"github.com/vulnd/vulnd/index"
)

// prevTexts is the previous snapshot's text table (strings.jsonl.zst)
// as a build takes texts of it by id: the hash of each stored line, to
// find a text given by value, and the file, read again at the write for
// the lines of the texts taken.
type prevTexts struct {
	details *index.Details // the previous snapshot's, whose table it is
	dir     string
	fi      FileInfo
	// byHash is each line's number by its hash (recordHash).
	byHash map[recHash]uint32

	// The file's chunks, read whole at the first line asked for (line),
	// and the chunks decoded last.
	data   []byte
	offs   []int64 // where each chunk starts in data
	firsts []int   // the number of each chunk's first line
	dec    *zstd.Decoder
	cache  [4]textChunk
	next   int         // the cache entry to replace
	ahead  *aheadChunk // the chunk being decoded ahead, if any
}

// textChunk is a decoded chunk of the text table and where its lines
// start (and the last one ends).
type textChunk struct {
	chunk int // -1: none
	data  []byte
	at    []int
}

// newPrevTexts is the text table of snap (read by readPrevious, with
// each line's hash: lineHash), or why its texts cannot be taken by id:
// it lists a text twice, which a build never writes (a table taken by id
// would list it twice again, where a full build lists it once).
func newPrevTexts(snap *Snapshot, lineHash []recHash) (*prevTexts, string, error) {
	fi := snap.Manifest.Files[keyStrings]
	if len(lineHash) != fi.Records {
		return nil, fmt.Sprintf("the previous snapshot's %s: %d lines read of %d", fileStrings, len(lineHash), fi.Records), nil
	}
	p := &prevTexts{details: snap.details, dir: snap.Dir, fi: fi, byHash: make(map[recHash]uint32, len(lineHash))}
	for j, h := range lineHash {
		if _, ok := p.byHash[h]; ok {
			return nil, fmt.Sprintf("the previous snapshot's %s lists a text twice (line %d)", fileStrings, j+1), nil
		}
		p.byHash[h] = uint32(j)
	}
	dec, err := decoder()
	if err != nil {
		return nil, "", err
	}
	p.dec = dec
	for i := range p.cache {
		p.cache[i].chunk = -1
	}
	return p, "", nil
}

// carry makes b take the texts of p's table by id (see
// index.DetailsBuilder.CarryFrom).
func (p *prevTexts) carry(b *index.DetailsBuilder) {
	b.CarryFrom(p.details, p.fi.Records, p.same)
}

// same reports which text of p's table is text: the line whose hash is
// that of text's stored form.
func (p *prevTexts) same(text string) (uint32, bool) {
	line, err := marshal(text)
	if err != nil {
		return 0, false
	}
	j, ok := p.byHash[recordHash(line)]
	return j, ok
}

// line returns line j of p's table as stored (a JSON string), valid
// until the next call. The texts a build takes come mostly in the
// table's order: each chunk is decoded about once.
func (p *prevTexts) line(j uint32) ([]byte, error) {
	if p.data == nil {
		var err error
		if p.data, err = readChecked(p.dir, p.fi); err != nil {
			return nil, fmt.Errorf("the previous snapshot's %s: %w", fileStrings, err)
		}
		p.offs = make([]int64, len(p.fi.Chunks)+1)
		p.firsts = make([]int, len(p.fi.Chunks)+1)
		for i, c := range p.fi.Chunks {
			p.offs[i+1] = p.offs[i] + c.Size
			p.firsts[i+1] = p.firsts[i] + c.Records
		}
	}
	if int(j) >= p.fi.Records {
		return nil, fmt.Errorf("the previous snapshot's %s: line %d of %d", fileStrings, j+1, p.fi.Records)
	}
	c, found := slices.BinarySearch(p.firsts, int(j))
	if !found {
		c--
	}
	for p.fi.Chunks[c].Records == 0 {
		c++ // an empty chunk starts where the next one does
	}
	tc, err := p.chunk(c)
	if err != nil {
		return nil, err
	}
	k := int(j) - p.firsts[c]
	return tc.data[tc.at[k] : tc.at[k+1]-1], nil
}

// chunk returns chunk c decoded, from the cache when it is there, or
// decoded ahead (the chunk after the one decoded last is decoded on
// another goroutine while the lines of that one are written).
func (p *prevTexts) chunk(c int) (*textChunk, error) {
	for i := range p.cache {
		if p.cache[i].chunk == c {
			return &p.cache[i], nil
		}
	}
	tc := &p.cache[p.next]
	p.next = (p.next + 1) % len(p.cache)
	tc.chunk = -1
	var got textChunk
	var err error
	if a := p.ahead; a != nil {
		<-a.done
		p.ahead = nil
		if a.chunk.chunk == c {
			got, err = a.chunk, a.err
		} else {
			got, err = p.decodeChunk(c, tc.data[:0], tc.at[:0])
		}
	} else {
		got, err = p.decodeChunk(c, tc.data[:0], tc.at[:0])
	}
	if err != nil {
		return nil, err
	}
	if next := c + 1; next < len(p.fi.Chunks) {
		a := &aheadChunk{done: make(chan struct{})}
		p.ahead = a
		go func() {
			defer close(a.done)
			a.chunk, a.err = p.decodeChunk(next, nil, nil)
		}()
	}
	*tc = got
	return tc, nil
}

// aheadChunk is a chunk being decoded ahead.
type aheadChunk struct {
	done  chan struct{}
	chunk textChunk
	err   error
}

// decodeChunk decodes chunk c into data and finds its lines (at).
func (p *prevTexts) decodeChunk(c int, data []byte, at []int) (textChunk, error) {
	data, err := p.dec.DecodeAll(p.data[p.offs[c]:p.offs[c+1]], data)
	if err != nil {
		return textChunk{}, fmt.Errorf("the previous snapshot's %s: chunk %d: %w", fileStrings, c+1, err)
	}
	at = append(at, 0)
	for rest, off := data, 0; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			break
		}
		off += i + 1
		at = append(at, off)
		rest = rest[i+1:]
	}
	if len(at)-1 != p.fi.Chunks[c].Records || len(data) > 0 && data[len(data)-1] != '\n' {
		return textChunk{}, fmt.Errorf("the previous snapshot's %s: chunk %d: %d lines, the manifest says %d", fileStrings, c+1, len(at)-1, p.fi.Chunks[c].Records)
	}
	return textChunk{chunk: c, data: data, at: at}, nil
}

// close waits for a chunk decoded ahead, if any.
func (p *prevTexts) close() {
	if a := p.ahead; a != nil {
		<-a.done
		p.ahead = nil
	}
}
