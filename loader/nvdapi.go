package loader

// NVD's CVE API 2.0 records in a snapshot (format 6 on): nvd.zst holds
// every NVD record as the winning feed held it, in blocks of
// index.NVDBlockRecords records, each block one zstd frame of its
// records, each followed by "\n" (see index.PackNVD); the manifest's
// chunks are runs of whole blocks, so the file is an ordinary data file
// of lines. The facts file holds each record's facts in the same order,
// the first record of each block also the size of its frame: in format 7
// nvdfacts.txt.zst, a line of numbers a record, with nvdstrings.jsonl.zst
// the texts they refer to (see index.NVDStored); in format 6
// nvdfacts.jsonl.zst, a JSON object a record. A load checks nvd.zst's
// sums and keeps the file open: a request reads the blocks it needs from
// it and decodes them.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/goccy/go-json"
	"github.com/klauspost/compress/zstd"

	"github.com/vulnd/vulnd/index"
)

// nvdFactsLine is a line of nvdfacts.jsonl.zst.
type nvdFactsLine struct {
	index.NVDFacts
	// Frame is, on a block's first record, the block's compressed size.
	Frame int `json:"frame,omitempty"`
}

// nvdFacts are what the API's filters read of a record.
func nvdFacts(n *nvdCVE) index.NVDFacts {
	f := index.NVDFacts{ID: n.ID, Published: n.Published, LastModified: n.LastModified,
		VulnStatus: n.VulnStatus, Source: n.SourceIdentifier}
	for _, t := range n.CVETags {
		for _, tag := range t.Tags {
			if !slices.Contains(f.Tags, tag) {
				f.Tags = append(f.Tags, tag)
			}
		}
	}
	for _, w := range n.Weaknesses {
		for _, d := range w.Description {
			if v := strings.TrimSpace(d.Value); v != "" && !slices.Contains(f.CWEs, v) {
				f.CWEs = append(f.CWEs, v)
			}
		}
	}
	metric := func(x nvdMetric) index.NVDMetric {
		sev := x.CVSSData.BaseSeverity
		if sev == "" {
			sev = x.BaseSeverity
		}
		return index.NVDMetric{Severity: strings.ToUpper(sev), Vector: x.CVSSData.VectorString}
	}
	for _, x := range n.Metrics.V2 {
		f.V2 = append(f.V2, metric(x))
	}
	for _, x := range append(slices.Clip(n.Metrics.V30), n.Metrics.V31...) {
		f.V3 = append(f.V3, metric(x))
	}
	for _, x := range n.Metrics.V40 {
		f.V4 = append(f.V4, metric(x))
	}
	if n.CISAExploitAdd != nil {
		f.KEV = kevDate(*n.CISAExploitAdd)
	}
	for _, r := range n.References {
		u := strings.ToLower(r.URL)
		f.CertAlerts = f.CertAlerts || isCertAlert(u)
		f.CertNotes = f.CertNotes || strings.Contains(u, "kb.cert.org/vuls")
		f.OVAL = f.OVAL || strings.Contains(u, "oval.mitre.org") || strings.Contains(u, "oval.cisecurity.org")
	}
	return f
}

// isCertAlert tells whether a reference (lower case) is a US-CERT
// technical alert, at any of the addresses US-CERT and then CISA gave
// them.
func isCertAlert(u string) bool {
	for _, s := range []string{"us-cert.gov/ncas/alerts", "us-cert.gov/cas/techalerts", "cisa.gov/uscert/ncas/alerts", "cisa.gov/news-events/alerts", "us-cert.cisa.gov/ncas/alerts"} {
		if strings.Contains(u, s) {
			return true
		}
	}
	return false
}

// writeNVD writes the NVD records' files into dir, from the records
// packed, in the form of format version (6, 7 or 8: 7 and where each
// record came from), and puts their manifest entries into files.
func writeNVD(dir string, np *nvdPacked, enc *zstd.Encoder, version int, files map[string]FileInfo) error {
	p := np.PackedNVD
	if p.Layout != nil && version < 9 {
		return fmt.Errorf("%s: a layout that keeps a previous snapshot's blocks is not stored before format 9", fileNVD)
	}
	data, err := writeBlocks(filepath.Join(dir, fileNVD), p, np.kept)
	if err != nil {
		return fmt.Errorf("%s: %w", fileNVD, err)
	}
	files[keyNVD] = data
	if version == 6 {
		at := make([]int, len(p.Facts)) // frame size of each block's first record
		r := 0
		for _, b := range p.Blocks {
			at[r] = b.Size
			r += b.Records
		}
		facts, err := writeDataFile(filepath.Join(dir, fileNVDFacts6), enc, len(p.Facts), func(i int) ([]byte, error) {
			return marshal(&nvdFactsLine{NVDFacts: p.Facts[i], Frame: at[i]})
		})
		if err != nil {
			return fmt.Errorf("%s: %w", fileNVDFacts6, err)
		}
		files[keyNVDFacts] = facts
		return nil
	}
	st, err := index.StoreNVD(p)
	if err != nil {
		return err
	}
	if version >= 9 {
		// The blocks and where each record is: the layout file.
		st.OmitFrames()
		lay := p.Places()
		var line []byte
		if files[keyNVDLayout], err = writeDataFile(filepath.Join(dir, fileNVDLayout), enc, lay.Lines(), func(i int) ([]byte, error) {
			line = lay.AppendLine(line[:0], i)
			return line, nil
		}); err != nil {
			return fmt.Errorf("%s: %w", fileNVDLayout, err)
		}
	}
	texts := st.Texts()
	if files[keyNVDStrings], err = writeDataFile(filepath.Join(dir, fileNVDStrings), enc, len(texts), func(i int) ([]byte, error) {
		return marshal(texts[i])
	}); err != nil {
		return fmt.Errorf("%s: %w", fileNVDStrings, err)
	}
	var line []byte
	if files[keyNVDFacts], err = writeDataFile(filepath.Join(dir, fileNVDFacts), enc, st.Len(), func(i int) ([]byte, error) {
		line = st.AppendLine(line[:0], i)
		return line, nil
	}); err != nil {
		return fmt.Errorf("%s: %w", fileNVDFacts, err)
	}
	if version < 8 {
		return nil
	}
	if files[keyNVDFrom], err = writeDataFile(filepath.Join(dir, fileNVDFrom), enc, len(p.Facts), func(i int) ([]byte, error) {
		var f nvdFrom
		if np.from != nil {
			f = np.from[i]
		}
		line = f.appendLine(line[:0])
		return line, nil
	}); err != nil {
		return fmt.Errorf("%s: %w", fileNVDFrom, err)
	}
	return nil
}

// writeBlocks writes p's frames as a data file, its chunks runs of whole
// blocks of about chunkTarget decoded bytes. With kept, p's first blocks
// are those of a previous snapshot's nvd.zst (p.Frames are those of the
// blocks after them): the file is copied first, chunk by chunk, each
// checked against its sum and listed as the previous manifest lists it,
// and the new blocks start a chunk of their own.
func writeBlocks(path string, p *index.PackedNVD, kept *keptNVD) (FileInfo, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return FileInfo{}, err
	}
	fi := FileInfo{Name: filepath.Base(path), Chunks: []Chunk{}}
	whole := sha256.New()
	first := len(p.Blocks) - len(p.Frames) // the blocks kept
	if kept == nil && first != 0 || len(p.Decoded) != len(p.Frames) {
		f.Close()
		return fi, fmt.Errorf("%d blocks, %d frames and no previous file", len(p.Blocks), len(p.Frames))
	}
	if kept != nil {
		var size int64
		for _, b := range p.Blocks[:first] {
			size += int64(b.Size)
		}
		if size != kept.fi.Size {
			f.Close()
			return fi, fmt.Errorf("the blocks kept add up to %d bytes, the previous %s has %d", size, kept.fi.Name, kept.fi.Size)
		}
		if err := copyChunks(f, kept, whole); err != nil {
			f.Close()
			return fi, fmt.Errorf("the previous snapshot's: %w", err)
		}
		fi.Chunks = append(fi.Chunks, kept.fi.Chunks...)
		fi.Size, fi.Bytes, fi.Records = kept.fi.Size, kept.fi.Bytes, kept.fi.Records
	}
	var cur Chunk
	chunk := sha256.New()
	flush := func() {
		if cur.Records == 0 {
			return
		}
		cur.SHA256 = hex.EncodeToString(chunk.Sum(nil))
		fi.Chunks = append(fi.Chunks, cur)
		fi.Size += cur.Size
		fi.Bytes += cur.Bytes
		fi.Records += cur.Records
		cur = Chunk{}
		chunk.Reset()
	}
	for b, frame := range p.Frames {
		if cur.Records > 0 && (cur.Bytes+int64(p.Decoded[b]) > chunkTarget || cur.Size+int64(len(frame)) > maxChunkBytes) {
			flush()
		}
		if _, err := f.Write(frame); err != nil {
			f.Close()
			return fi, err
		}
		whole.Write(frame)
		chunk.Write(frame)
		cur.Size += int64(len(frame))
		cur.Bytes += int64(p.Decoded[b])
		cur.Records += p.Blocks[first+b].Records
	}
	flush()
	fi.SHA256 = hex.EncodeToString(whole.Sum(nil))
	if err := f.Sync(); err != nil {
		f.Close()
		return fi, err
	}
	return fi, f.Close()
}

// copyChunks copies the kept file's chunks to w, each checked against
// its sum, and adds them to whole.
func copyChunks(w io.Writer, kept *keptNVD, whole hash.Hash) error {
	f, err := openData(kept.dir, kept.fi)
	if err != nil {
		return fmt.Errorf("%s: %w", kept.fi.Name, err)
	}
	defer f.Close()
	var buf []byte
	for i, c := range kept.fi.Chunks {
		if int64(cap(buf)) < c.Size {
			buf = make([]byte, c.Size)
		}
		b := buf[:c.Size]
		if _, err := io.ReadFull(f, b); err != nil {
			return fmt.Errorf("%s: chunk %d: %w", kept.fi.Name, i+1, err)
		}
		if err := checkSum(b, c.SHA256); err != nil {
			return fmt.Errorf("%s: chunk %d: %w", kept.fi.Name, i+1, err)
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
		whole.Write(b)
	}
	return nil
}

// loadNVD reads a snapshot's NVD records for serving: the facts, and
// nvd.zst, each chunk checked against its sum and the file kept open for
// the store to read per request. A snapshot older than format 6 has none
// (nil, nil).
func loadNVD(dir string, m Manifest, dec *zstd.Decoder) (*index.NVD, error) {
	if m.Version < 6 {
		return nil, nil
	}
	wrap := func(key string, err error) error {
		return fmt.Errorf("loader: snapshot %s: %s: %w", dir, m.Files[key].Name, err)
	}
	fi := m.Files[keyNVD]
	if facts := m.Files[keyNVDFacts]; fi.Records != facts.Records && m.Version < 9 {
		return nil, wrap(keyNVD, fmt.Errorf("%d records for %d facts", fi.Records, facts.Records))
	}
	if m.Version == 6 {
		return loadNVD6(dir, m, dec, wrap)
	}
	l, _, err := parseNVDFacts(dir, m, dec, wrap)
	if err != nil {
		return nil, err
	}
	f, err := openChecked(dir, fi)
	if err != nil {
		return nil, wrap(keyNVD, err)
	}
	n, err := l.NVDFile(f, fi.Size)
	if err != nil {
		f.Close()
		return nil, wrap(keyNVDFacts, err)
	}
	return n, nil
}

// parseNVDFacts parses the NVD facts of a snapshot of format 7 on
// (nvdfacts.txt.zst over nvdstrings.jsonl.zst) into a loader whose NVD
// is still to be made, and (format 9) the layout, which the loader has
// (nil before).
func parseNVDFacts(dir string, m Manifest, dec *zstd.Decoder, wrap func(string, error) error) (*index.NVDLoader, *index.NVDLayout, error) {
	// The layout is read beside the facts.
	var (
		lay    *index.NVDLayout
		layErr error
		layWG  sync.WaitGroup
	)
	if m.Version >= 9 {
		layWG.Add(1)
		go func() {
			defer layWG.Done()
			lay, layErr = readNVDLayout(dir, m, dec)
		}()
	}
	defer layWG.Wait() // an early error return still waits for it
	texts, err := decodeTexts(dir, m.Files[keyNVDStrings], dec)
	if err != nil {
		return nil, nil, wrap(keyNVDStrings, err)
	}
	facts := m.Files[keyNVDFacts]
	l, err := index.NewNVDLoader(texts, facts.Records, len(facts.Chunks))
	if err != nil {
		return nil, nil, wrap(keyNVDStrings, err)
	}
	firsts := make([]int, len(facts.Chunks)) // the number of each chunk's first record
	for i := 1; i < len(firsts); i++ {
		firsts[i] = firsts[i-1] + facts.Chunks[i-1].Records
	}
	// Each chunk is parsed as it is decoded, on the decoding goroutines,
	// straight into the records, and its text dropped.
	if err := decodeFileReusing(dir, facts, dec, func(c int, data []byte) error {
		return l.ParsePiece(c, firsts[c], data)
	}); err != nil {
		return nil, nil, wrap(keyNVDFacts, err)
	}
	layWG.Wait()
	if layErr != nil {
		return nil, nil, wrap(keyNVDLayout, layErr)
	}
	if lay != nil {
		if err := l.SetLayout(lay); err != nil {
			return nil, nil, wrap(keyNVDLayout, err)
		}
	}
	return l, lay, nil
}

// readNVDLayout reads the layout of a snapshot of format 9: where each of
// its NVD records (as many as the facts) is in nvd.zst, whose lines
// must be those of the layout's blocks.
func readNVDLayout(dir string, m Manifest, dec *zstd.Decoder) (*index.NVDLayout, error) {
	fi := m.Files[keyNVDLayout]
	parts := make([][]byte, len(fi.Chunks))
	if err := decodeFile(dir, fi, dec, func(c int, data []byte) error {
		parts[c] = data
		return nil
	}); err != nil {
		return nil, err
	}
	lay, err := index.ParseNVDLayout(bytes.Join(parts, nil), m.Files[keyNVDFacts].Records)
	if err != nil {
		return nil, err
	}
	if nvd, lines := m.Files[keyNVD], lay.StoredLines(); lines != nvd.Records {
		return nil, fmt.Errorf("blocks of %d lines, %s has %d", lines, nvd.Name, nvd.Records)
	}
	return lay, nil
}

// decodeTexts decodes a data file of JSON strings, one a line.
func decodeTexts(dir string, fi FileInfo, dec *zstd.Decoder) ([]string, error) {
	strs := make([]string, fi.Records)
	if err := eachRecord(dir, fi, dec, func(n int, line []byte) error {
		// Most texts have no escape: the bytes between the quotes.
		if len(line) >= 2 && line[0] == '"' && line[len(line)-1] == '"' && bytes.IndexByte(line, '\\') < 0 {
			strs[n] = string(line[1 : len(line)-1])
			return nil
		}
		return json.Unmarshal(line, &strs[n])
	}); err != nil {
		return nil, err
	}
	return strs, nil
}

// loadNVD6 is loadNVD for a snapshot of format 6, whose facts are JSON.
func loadNVD6(dir string, m Manifest, dec *zstd.Decoder, wrap func(string, error) error) (*index.NVD, error) {
	lines, err := decodeRecords[nvdFactsLine](dir, m.Files[keyNVDFacts], dec)
	if err != nil {
		return nil, wrap(keyNVDFacts, err)
	}
	facts := make([]index.NVDFacts, len(lines))
	var blocks []index.NVDBlock
	for i := range lines {
		facts[i] = lines[i].NVDFacts
		switch {
		case lines[i].Frame > 0:
			blocks = append(blocks, index.NVDBlock{Size: lines[i].Frame, Records: 1})
		case len(blocks) == 0:
			return nil, wrap(keyNVDFacts, errors.New("record 1 starts no block"))
		default:
			blocks[len(blocks)-1].Records++
		}
	}
	f, err := openChecked(dir, m.Files[keyNVD])
	if err != nil {
		return nil, wrap(keyNVD, err)
	}
	n, err := index.NewNVDFile(f, m.Files[keyNVD].Size, blocks, facts)
	if err != nil {
		f.Close()
		return nil, wrap(keyNVD, err)
	}
	return n, nil
}

// openChecked opens a data file for the store to read per request,
// having read it once to check each chunk's sum (on several goroutines).
// The store holds the file open, not its bytes: what a record costs in
// memory is the page cache's to keep or drop, not the heap's. The file
// must stay as it is while it is served: a new snapshot is a new
// directory, and an old one removed stays readable through the open file.
func openChecked(dir string, fi FileInfo) (*os.File, error) {
	f, err := openData(dir, fi)
	if err != nil {
		return nil, err
	}
	offs := make([]int64, len(fi.Chunks)+1)
	for i, c := range fi.Chunks {
		offs[i+1] = offs[i] + c.Size
	}
	errs := index.OnCores(len(fi.Chunks), func() func(int) error {
		var buf []byte
		return func(i int) error {
			if int64(cap(buf)) < fi.Chunks[i].Size {
				buf = make([]byte, fi.Chunks[i].Size)
			}
			b := buf[:fi.Chunks[i].Size]
			if _, err := f.ReadAt(b, offs[i]); err != nil {
				return fmt.Errorf("chunk %d: %w", i+1, err)
			}
			if err := checkSum(b, fi.Chunks[i].SHA256); err != nil {
				return fmt.Errorf("chunk %d: %w", i+1, err)
			}
			return nil
		}
	})
	if err := index.FirstError(errs); err != nil {
		f.Close()
		return nil, err // the first chunk's
	}
	return f, nil
}

// validateNVD checks, beyond what a load checks, that every stored NVD
// record decodes, is a JSON object, and is the record its facts name, and
// (format 8) that nvdfrom.txt.zst, which a load does not read, says where
// each came from in lines that parse.
func validateNVD(dir string, m Manifest, dec *zstd.Decoder) error {
	if m.Version < 6 {
		return nil
	}
	n, err := loadNVD(dir, m, dec)
	if err != nil {
		return err
	}
	// The record of each line of nvd.zst (-1: a dead line, which must
	// still be a record).
	var owner []int32
	if m.Version >= 9 {
		lay, err := readNVDLayout(dir, m, dec)
		if err != nil {
			return fmt.Errorf("loader: snapshot %s: %s: %w", dir, fileNVDLayout, err)
		}
		owner = lay.Owners()
	} else {
		owner = make([]int32, m.Files[keyNVD].Records)
		for i := range owner {
			owner[i] = int32(i)
		}
	}
	ids := make([]string, n.Len())
	if err := eachRecord(dir, m.Files[keyNVD], dec, func(i int, line []byte) error {
		var rec struct {
			ID string `json:"id"`
		}
		raw := bytes.ReplaceAll(line, []byte{0x1F}, []byte{'\n'})
		if err := json.Unmarshal(raw, &rec); err != nil {
			return err
		}
		if i >= len(owner) {
			return fmt.Errorf("more than the %d records of the manifest", len(owner))
		}
		if o := owner[i]; o >= 0 {
			ids[o] = rec.ID
		}
		return nil
	}); err != nil {
		return fmt.Errorf("loader: snapshot %s: %s: %w", dir, fileNVD, err)
	}
	for i, id := range ids {
		if want := n.ID(i); id != want {
			return fmt.Errorf("loader: snapshot %s: %s: record %d is %q, its facts say %s", dir, fileNVD, i+1, id, want)
		}
	}
	if m.Version < 8 {
		return nil
	}
	// Where each record came from: a line per record, naming inputs of
	// the manifest.
	fi := m.Files[keyNVDFrom]
	if fi.Records != n.Len() {
		return fmt.Errorf("loader: snapshot %s: %s: %d records for %d NVD records", dir, fileNVDFrom, fi.Records, n.Len())
	}
	if err := eachRecord(dir, fi, dec, func(i int, line []byte) error {
		_, err := parseNVDFrom(line, len(m.Inputs))
		return err
	}); err != nil {
		return fmt.Errorf("loader: snapshot %s: %s: %w", dir, fileNVDFrom, err)
	}
	return nil
}
