package loader

// The id tables of a build with -previous, carried over as stored: the
// previous snapshot's ids.jsonl.zst lists each table by id (see
// writeIDs), and a build only adds ids after the largest, so the new file
// is the previous one's lines of each table, then the new ids. Reading
// every line into the tables' maps (2.6 million at 400k CVEs), and
// listing and encoding them again, was a fifth of a refresh. Instead,
// the CPE table is read (a new CVE may name any URI), the CVSS and
// reference records only of the CVEs the build decodes (see
// idTables.loadCVEs), and the write copies the previous lines (the
// chunks whole to a table but its last, as compressed) before the new
// ids.

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/goccy/go-json"
	"github.com/klauspost/compress/zstd"
)

// idTableNames are the tables of ids.jsonl.zst, in the file's order,
// before the "next" line.
var idTableNames = [...]string{"cpe", "cvss", "ref"}

// carriedIDs is a previous snapshot's ids.jsonl.zst, as stored.
type carriedIDs struct {
	fi     FileInfo
	frames [][]byte // by chunk, as stored
	chunks [][]byte // by chunk, decoded
	tables [len(idTableNames)]carriedTable
}

// carriedTable is where a table's lines are in the file.
type carriedTable struct {
	// chunks are the chunks holding the table's lines (each holds one
	// table's lines only: writeIDs starts a chunk at each table).
	first, end int
	// next is one past the table's largest id: the first id the build
	// may give.
	next int64
}

// readCarriedIDs reads the id tables of the snapshot in dir as stored;
// nil (and no error) when they are not as writeIDs writes them (each
// table in a chunk of its own, ids ascending, the "next" line last):
// they are then read whole. t gets the CPE table, the counters, and the
// next alert id.
func readCarriedIDs(dir string, fi FileInfo, dec *zstd.Decoder, t *idTables) (*carriedIDs, error) {
	data, err := readChecked(dir, fi)
	if err != nil {
		return nil, err
	}
	c := &carriedIDs{fi: fi, frames: make([][]byte, len(fi.Chunks)), chunks: make([][]byte, len(fi.Chunks))}
	var off int64
	for i, ch := range fi.Chunks {
		c.frames[i] = data[off : off+ch.Size : off+ch.Size]
		off += ch.Size
		if c.chunks[i], err = dec.DecodeAll(c.frames[i], make([]byte, 0, ch.Bytes)); err != nil {
			return nil, fmt.Errorf("chunk %d: zstd: %w", i+1, err)
		}
		if int64(len(c.chunks[i])) != ch.Bytes || bytes.Count(c.chunks[i], []byte{'\n'}) != ch.Records {
			return nil, fmt.Errorf("chunk %d: not the %d bytes and %d records the manifest gives", i+1, ch.Bytes, ch.Records)
		}
	}
	// The CPE table's map made at its size (the lines of the chunks
	// starting with a CPE line: each chunk holds one table's lines), not
	// grown as read (a third of its making at 400k).
	cpes := 0
	for i, data := range c.chunks {
		if bytes.HasPrefix(data, []byte(`{"table":"cpe",`)) {
			cpes += fi.Chunks[i].Records
		}
	}
	if len(t.cpe) == 0 && cpes > 0 {
		t.cpe = make(map[string]int64, cpes)
	}
	table := -1 // the table of the lines so far; len(idTableNames): "next"
	for i := range c.tables {
		c.tables[i] = carriedTable{first: -1, next: 1}
	}
	n := 0
	for i, data := range c.chunks {
		chunkTable := -2
		for line := range bytes.Lines(data) {
			n++
			line = line[:len(line)-1]
			name, id, rest, ok := idLinePrefix(line)
			k := idTableIndex(name)
			switch {
			case !ok || k < 0 || k < table || table == len(idTableNames):
				return nil, nil // not as writeIDs writes them
			case chunkTable != -2 && chunkTable != k:
				return nil, nil // two tables in one chunk
			}
			chunkTable, table = k, k
			if k == len(idTableNames) {
				t.nextAlert = max(t.nextAlert, id)
				continue
			}
			tb := &c.tables[k]
			if tb.first < 0 {
				tb.first = i
			}
			tb.end = i + 1
			if id < tb.next {
				return nil, nil // not ascending
			}
			tb.next = id + 1
			if k == 0 {
				uri, ok := idLineURI(rest)
				if !ok {
					var r idRecord
					if err := json.Unmarshal(line, &r); err != nil {
						return nil, fmt.Errorf("record %d: %w", n, err)
					}
					uri = r.URI
				}
				t.cpe[uri] = id
			}
		}
	}
	if table != len(idTableNames) {
		return nil, nil // no "next" line
	}
	t.nextCPE, t.nextCVSS, t.nextRef = c.tables[0].next, c.tables[1].next, c.tables[2].next
	return c, nil
}

func idTableIndex(name []byte) int {
	for k, n := range idTableNames {
		if string(name) == n {
			return k
		}
	}
	if string(name) == "next" {
		return len(idTableNames)
	}
	return -1
}

// idLinePrefix reads the table and id a line of ids.jsonl.zst starts
// with (`{"table":"cpe","id":12`), and what follows them.
func idLinePrefix(line []byte) (table []byte, id int64, rest []byte, ok bool) {
	rest, ok = bytes.CutPrefix(line, []byte(`{"table":"`))
	if !ok {
		return nil, 0, nil, false
	}
	i := bytes.IndexByte(rest, '"')
	if i < 0 {
		return nil, 0, nil, false
	}
	table, rest = rest[:i], rest[i+1:]
	if rest, ok = bytes.CutPrefix(rest, []byte(`,"id":`)); !ok {
		return nil, 0, nil, false
	}
	j := 0
	for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
		j++
	}
	id, err := strconv.ParseInt(string(rest[:j]), 10, 64)
	if err != nil || id < 1 || rest[0] == '0' {
		return nil, 0, nil, false
	}
	return table, id, rest[j:], true
}

// idLineURI reads the URI of a CPE line's rest (`,"uri":"..."}`), when
// it holds no escape.
func idLineURI(rest []byte) (string, bool) {
	s, ok := bytes.CutPrefix(rest, []byte(`,"uri":"`))
	if !ok || len(s) < 2 || s[len(s)-1] != '}' || s[len(s)-2] != '"' {
		return "", false
	}
	s = s[:len(s)-2]
	if bytes.IndexByte(s, '\\') >= 0 || bytes.IndexByte(s, '"') >= 0 {
		return "", false
	}
	return string(s), true
}

// loadCVEs adds to t, from the carried tables, the CVSS and reference
// records of the CVEs named (nil: all): those a build assigns ids to and
// compares.
func (t *idTables) loadCVEs(names map[string]bool) error {
	c := t.prev
	if c == nil {
		return nil
	}
	for k := 1; k < len(idTableNames); k++ {
		tb := c.tables[k]
		if tb.first < 0 {
			continue
		}
		for _, data := range c.chunks[tb.first:tb.end] {
			for line := range bytes.Lines(data) {
				i := bytes.Index(line, []byte(`,"cve":"`))
				if i < 0 {
					return fmt.Errorf("%s record without a CVE: %.80s", idTableNames[k], line)
				}
				name := line[i+len(`,"cve":"`):]
				j := bytes.IndexByte(name, '"')
				if j < 0 {
					return fmt.Errorf("%s record: %.80s", idTableNames[k], line)
				}
				if names != nil && !names[string(name[:j])] && bytes.IndexByte(name[:j], '\\') < 0 {
					continue
				}
				var r idRecord
				if err := json.Unmarshal(line, &r); err != nil {
					return fmt.Errorf("%s record: %w", idTableNames[k], err)
				}
				if names == nil || names[r.CVE] {
					if err := t.add(r); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// writeCarried writes table k of the carried tables to w as stored: the
// chunks whole to it but its last as they are compressed (when
// compressing the first of them again gives its frame: the previous
// snapshot may come from a vulnd that compressed otherwise), the rest
// line by line. w must be at a chunk's start.
func (c *carriedIDs) writeCarried(w *chunkWriter, k int, enc *zstd.Encoder) error {
	tb := c.tables[k]
	if tb.first < 0 {
		return nil
	}
	copyUpTo := tb.first
	if tb.end-1 > tb.first && bytes.Equal(enc.EncodeAll(c.chunks[tb.first], nil), c.frames[tb.first]) {
		copyUpTo = tb.end - 1
	}
	for i := tb.first; i < tb.end; i++ {
		if i < copyUpTo {
			if err := w.copyChunk(int64(len(c.chunks[i])), c.frames[i], c.fi.Chunks[i].Records); err != nil {
				return err
			}
			continue
		}
		for line := range bytes.Lines(c.chunks[i]) {
			if err := w.line(line[:len(line)-1]); err != nil {
				return err
			}
		}
	}
	return nil
}
