package loader

// NVD's CVE API 2.0 records in a snapshot (format 6): nvd.zst holds every
// NVD record as the winning feed held it, in blocks of
// index.NVDBlockRecords records, each block one zstd frame of its
// records, each followed by "\n" (see index.PackNVD); the manifest's
// chunks are runs of whole blocks, so the file is an ordinary data file
// of lines. nvdfacts.jsonl.zst holds each record's facts in the same
// order, the first record of each block also the size of its frame. A
// load keeps the blocks compressed, as they are on disk, and decodes a
// block per request.

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

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

// writeNVD writes the NVD records' two files into dir, from the records
// packed, and returns their manifest entries.
func writeNVD(dir string, np *nvdPacked, enc *zstd.Encoder) (data, facts FileInfo, err error) {
	p := np.PackedNVD
	if data, err = writeBlocks(filepath.Join(dir, fileNVD), p); err != nil {
		return data, facts, fmt.Errorf("%s: %w", fileNVD, err)
	}
	at := make([]int, len(p.Facts)) // frame size of each block's first record
	r := 0
	for _, b := range p.Blocks {
		at[r] = b.Size
		r += b.Records
	}
	facts, err = writeDataFile(filepath.Join(dir, fileNVDFacts), enc, len(p.Facts), func(i int) ([]byte, error) {
		line := nvdFactsFromLine{nvdFactsLine: nvdFactsLine{NVDFacts: p.Facts[i], Frame: at[i]}}
		if np.from != nil {
			line.From, line.Clash = np.from[i].In, np.from[i].Clash
		}
		return marshal(&line)
	})
	if err != nil {
		return data, facts, fmt.Errorf("%s: %w", fileNVDFacts, err)
	}
	return data, facts, nil
}

// writeBlocks writes p's frames as a data file, its chunks runs of whole
// blocks of about chunkTarget decoded bytes.
func writeBlocks(path string, p *index.PackedNVD) (FileInfo, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return FileInfo{}, err
	}
	fi := FileInfo{Name: filepath.Base(path), Chunks: []Chunk{}}
	whole := sha256.New()
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
		cur.Records += p.Blocks[b].Records
	}
	flush()
	fi.SHA256 = hex.EncodeToString(whole.Sum(nil))
	if err := f.Sync(); err != nil {
		f.Close()
		return fi, err
	}
	return fi, f.Close()
}

// loadNVD reads a snapshot's NVD records for serving: the facts, and
// nvd.zst whole, still compressed, each chunk checked against its sum. A
// snapshot older than format 6 has none (nil, nil).
func loadNVD(dir string, m Manifest, dec *zstd.Decoder) (*index.NVD, error) {
	if m.Version < 6 {
		return nil, nil
	}
	wrap := func(key string, err error) error {
		return fmt.Errorf("loader: snapshot %s: %s: %w", dir, m.Files[key].Name, err)
	}
	lines, err := decodeRecords[nvdFactsLine](dir, m.Files[keyNVDFacts], dec)
	if err != nil {
		return nil, wrap(keyNVDFacts, err)
	}
	fi := m.Files[keyNVD]
	if fi.Records != len(lines) {
		return nil, wrap(keyNVD, fmt.Errorf("%d records for %d facts", fi.Records, len(lines)))
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
	data, err := readChecked(dir, fi)
	if err != nil {
		return nil, wrap(keyNVD, err)
	}
	n, err := index.NewNVD(data, blocks, facts)
	if err != nil {
		return nil, wrap(keyNVD, err)
	}
	return n, nil
}

// readChecked reads a data file whole, undecoded, checking each chunk's
// sum.
func readChecked(dir string, fi FileInfo) ([]byte, error) {
	f, err := openData(dir, fi)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data := make([]byte, fi.Size)
	if _, err := io.ReadFull(f, data); err != nil {
		return nil, err
	}
	// The chunks' sums are checked on every core.
	offs := make([]int64, len(fi.Chunks)+1)
	for i, c := range fi.Chunks {
		offs[i+1] = offs[i] + c.Size
	}
	errs := make([]error, len(fi.Chunks))
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < min(runtime.GOMAXPROCS(0), len(fi.Chunks)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(fi.Chunks) {
					return
				}
				if err := checkSum(data[offs[i]:offs[i+1]], fi.Chunks[i].SHA256); err != nil {
					errs[i] = fmt.Errorf("chunk %d: %w", i+1, err)
				}
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err // the first chunk's
		}
	}
	return data, nil
}

// validateNVD checks, beyond what a load checks, that every stored NVD
// record decodes, is a JSON object, and is the record its facts name.
func validateNVD(dir string, m Manifest, dec *zstd.Decoder) error {
	if m.Version < 6 {
		return nil
	}
	n, err := loadNVD(dir, m, dec)
	if err != nil {
		return err
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
		ids[i] = rec.ID
		return nil
	}); err != nil {
		return fmt.Errorf("loader: snapshot %s: %s: %w", dir, fileNVD, err)
	}
	for i, id := range ids {
		if want := n.ID(i); id != want {
			return fmt.Errorf("loader: snapshot %s: %s: record %d is %q, its facts say %s", dir, fileNVD, i+1, id, want)
		}
	}
	return nil
}
