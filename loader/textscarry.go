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

	// chunks are the table's chunks decoded (nil until the first line
	// asked for), firsts the number of each one's first line.
	chunks []textChunk
	firsts []int
	dec    *zstd.Decoder
	// kept are the table's chunks as decoded when the previous snapshot
	// was read (their sums checked then), which read takes instead of
	// decoding the file again; nil: none kept.
	kept [][]byte
}

// textChunk is a decoded chunk of the text table and where its lines
// start (and the last one ends).
type textChunk struct {
	data []byte
	at   []int
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
	p := &prevTexts{details: snap.details, dir: snap.Dir, fi: fi, byHash: make(map[recHash]uint32, len(lineHash)), kept: snap.textChunks}
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

// line returns line j of p's table as stored (a JSON string). The
// first call reads the table whole, its chunks decoded on every core
// (the texts a build takes come mostly, not only, in the table's order).
func (p *prevTexts) line(j uint32) ([]byte, error) {
	if p.chunks == nil {
		if err := p.read(); err != nil {
			return nil, err
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
	tc := &p.chunks[c]
	k := int(j) - p.firsts[c]
	return tc.data[tc.at[k] : tc.at[k+1]-1], nil
}

// read reads p's table whole.
func (p *prevTexts) read() error {
	p.firsts = make([]int, len(p.fi.Chunks)+1)
	for i, c := range p.fi.Chunks {
		p.firsts[i+1] = p.firsts[i] + c.Records
	}
	chunks := make([]textChunk, len(p.fi.Chunks))
	split := func(c int, _, data []byte) error {
		at := make([]int, 1, p.fi.Chunks[c].Records+1)
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
			return fmt.Errorf("%d lines, the manifest says %d", len(at)-1, p.fi.Chunks[c].Records)
		}
		chunks[c] = textChunk{data: data, at: at}
		return nil
	}
	if kept := p.kept; len(kept) == len(p.fi.Chunks) {
		p.kept = nil
		errs := index.OnCores(len(kept), func() func(int) error {
			return func(c int) error {
				if int64(len(kept[c])) != p.fi.Chunks[c].Bytes {
					return fmt.Errorf("chunk %d: %d bytes kept, the manifest says %d", c+1, len(kept[c]), p.fi.Chunks[c].Bytes)
				}
				if err := split(c, nil, kept[c]); err != nil {
					return fmt.Errorf("chunk %d: %w", c+1, err)
				}
				return nil
			}
		})
		if err := index.FirstError(errs); err != nil {
			return fmt.Errorf("the previous snapshot's %s: %w", fileStrings, err)
		}
	} else if err := decodeChunks(p.dir, p.fi, p.dec, false, split); err != nil {
		return fmt.Errorf("the previous snapshot's %s: %w", fileStrings, err)
	}
	p.chunks = chunks
	return nil
}

// close lets p's table go.
func (p *prevTexts) close() { p.chunks, p.kept = nil, nil }
