package loader

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
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/zstd"
)

// A data file is a sequence of zstd frames, its chunks, each holding
// whole JSON lines. The manifest lists every chunk's compressed size,
// decoded size, record count and SHA-256, so a reader checks every size
// before it decodes a byte, decodes the chunks in parallel straight into
// one buffer, and checks a chunk's sum without reading the rest. The file
// as a whole is still one valid zstd stream.

// Chunk is one zstd frame of a data file.
type Chunk struct {
	Size    int64  `json:"size"`    // compressed bytes
	Bytes   int64  `json:"bytes"`   // decoded bytes
	Records int    `json:"records"` // JSON lines
	SHA256  string `json:"sha256"`  // of the compressed bytes
}

// Limits on data files, checked against the manifest before decoding.
const (
	// chunkTarget is the decoded size at which the writer closes a chunk.
	chunkTarget = 4 << 20
	// maxChunkBytes bounds a chunk's decoded and compressed size; it is
	// also the zstd decoder's memory limit.
	maxChunkBytes = 64 << 20
	// maxDecodedBytes bounds a data file's decoded size.
	maxDecodedBytes = 16 << 30
)

// checkChunks checks that fi's chunks tile the file and add up to its
// decoded size and record count, within the limits.
func checkChunks(fi FileInfo) error {
	if fi.Bytes < 0 || fi.Bytes > maxDecodedBytes {
		return fmt.Errorf("decoded size %d is over the limit of %d bytes", fi.Bytes, int64(maxDecodedBytes))
	}
	var size, decoded int64
	records := 0
	for i, c := range fi.Chunks {
		if c.Size <= 0 || c.Size > maxChunkBytes || c.Bytes < 0 || c.Bytes > maxChunkBytes || c.Records < 0 || len(c.SHA256) != 64 {
			return fmt.Errorf("chunk %d: bad size, decoded size, records or sha256", i+1)
		}
		size += c.Size
		decoded += c.Bytes
		records += c.Records
	}
	if size != fi.Size || decoded != fi.Bytes || records != fi.Records {
		return fmt.Errorf("chunks add up to %d bytes, %d decoded, %d records; the file has %d, %d, %d",
			size, decoded, records, fi.Size, fi.Bytes, fi.Records)
	}
	return nil
}

// openData opens a data file and checks it is a regular file of the
// manifest's size.
func openData(dir string, fi FileInfo) (*os.File, error) {
	f, err := os.Open(filepath.Join(dir, fi.Name))
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() {
		f.Close()
		return nil, errors.New("not a regular file")
	}
	if st.Size() != fi.Size {
		f.Close()
		return nil, fmt.Errorf("size %d, manifest says %d", st.Size(), fi.Size)
	}
	return f, nil
}

// verifyFile checks a data file's size and the SHA-256 of each chunk and
// of the whole file, without decoding it.
func verifyFile(dir string, fi FileInfo) error {
	return verifyChunks(dir, fi, true)
}

// verifyChunks is verifyFile, checking the whole file's sum only if whole:
// a load checks the chunks' sums alone, which cover every byte, as
// decodeFile does (the ids, 43 MB at 400k CVEs, hashed once, not twice).
func verifyChunks(dir string, fi FileInfo, whole bool) error {
	f, err := openData(dir, fi)
	if err != nil {
		return err
	}
	defer f.Close()
	sum := sha256.New()
	buf := make([]byte, 0, 1<<20)
	for i, c := range fi.Chunks {
		if int64(cap(buf)) < c.Size {
			buf = make([]byte, 0, c.Size)
		}
		b := buf[:c.Size]
		if _, err := io.ReadFull(f, b); err != nil {
			return err
		}
		if err := checkSum(b, c.SHA256); err != nil {
			return fmt.Errorf("chunk %d: %w", i+1, err)
		}
		if whole {
			sum.Write(b)
		}
	}
	if !whole {
		return nil
	}
	return sameSum(sum.Sum(nil), fi.SHA256)
}

// checkSum checks b's SHA-256 against the manifest's hex digest.
func checkSum(b []byte, want string) error {
	sum := sha256.Sum256(b)
	return sameSum(sum[:], want)
}

func sameSum(sum []byte, want string) error {
	if got := hex.EncodeToString(sum); got != want {
		return fmt.Errorf("sha256 %s, manifest says %s", got, want)
	}
	return nil
}

// newDecoder returns the zstd decoder for snapshot files: one frame at a
// time per goroutine, at most maxChunkBytes of memory each.
//
// It does not check the frames' content checksums (xxhash64 of the
// decoded bytes): decodeChunk decodes only a chunk whose SHA-256 matched
// the manifest's, so the frame is exactly the one the writer made and
// decodes to what it encoded. Skipping them makes decoding 13% faster
// (0.44 s -> 0.39 s of CPU for the 820 MB of a 400k-CVE cves.jsonl.zst).
func newDecoder() (*zstd.Decoder, error) {
	return zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(runtime.GOMAXPROCS(0)),
		zstd.WithDecoderMaxMemory(maxChunkBytes),
		zstd.IgnoreChecksum(true))
}

// decoder is the process's one snapshot decoder, made on first use and
// never closed: DecodeAll is safe for concurrent use, so every load, a
// reload during a validate included, shares it and its buffers.
var decoder = sync.OnceValues(newDecoder)

// decodeFile decodes a data file chunk by chunk. The chunks are read,
// checked and decoded by several goroutines, each chunk into a buffer of
// its own that each (if set) is then called with, from the same goroutine,
// with the chunk's number: whole lines, each ending in "\n". each may keep
// the buffer. The first error stops the work. The whole-file SHA-256 is
// not checked: the chunks' sums cover every byte.
//
// The buffers are made by the decoding goroutines rather than as one
// buffer up front: the runtime zeroes a large allocation, and on the full
// NVD set (900 MB decoded) zeroing, which faults the pages in, took 1.2 s
// on one core before any decoding began.
func decodeFile(dir string, fi FileInfo, dec *zstd.Decoder, each func(chunk int, data []byte) error) error {
	return decodeChunks(dir, fi, dec, false, func(c int, _, data []byte) error {
		if each == nil {
			return nil
		}
		return each(c, data)
	})
}

// decodeFileReusing is decodeFile for an each that keeps nothing of the
// decoded chunk: each goroutine decodes its chunks into one buffer, so
// that a file parsed and dropped (the details, the text tables, the NVD
// facts) costs no fresh memory per chunk, whose pages the kernel would
// fault in and the collector then reclaim (182 MB for the text table at
// 400k CVEs with CVE JSON 5 records).
func decodeFileReusing(dir string, fi FileInfo, dec *zstd.Decoder, each func(chunk int, data []byte) error) error {
	return decodeChunks(dir, fi, dec, true, func(c int, _, data []byte) error { return each(c, data) })
}

// decodeChunks is decodeFile and decodeFileReusing: each also gets the
// chunk's compressed bytes (checked against its sum), in a buffer the
// goroutine reuses; reuse: data is too.
func decodeChunks(dir string, fi FileInfo, dec *zstd.Decoder, reuse bool, each func(chunk int, raw, data []byte) error) error {
	f, err := openData(dir, fi)
	if err != nil {
		return err
	}
	defer f.Close()
	offsets := make([]int64, len(fi.Chunks)) // compressed offset of each chunk
	for i := 1; i < len(fi.Chunks); i++ {
		offsets[i] = offsets[i-1] + fi.Chunks[i-1].Size
	}
	var (
		next   atomic.Int64
		failed atomic.Bool
		mu     sync.Mutex
		first  error
		wg     sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		if first == nil {
			first = err
		}
		mu.Unlock()
		failed.Store(true)
	}
	workers := min(runtime.GOMAXPROCS(0), len(fi.Chunks))
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf, out []byte
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= len(fi.Chunks) {
					return
				}
				c := fi.Chunks[i]
				if int64(cap(buf)) < c.Size {
					buf = make([]byte, c.Size)
				}
				if !reuse || int64(cap(out)) < c.Bytes {
					out = make([]byte, 0, c.Bytes)
				}
				data, err := decodeChunk(f, offsets[i], c, buf[:c.Size], out[:0:c.Bytes], dec)
				if err == nil {
					err = each(i, buf[:c.Size], data)
				}
				if err != nil {
					fail(fmt.Errorf("chunk %d: %w", i+1, err))
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// decodeChunk reads chunk c at off into buf, checks its sum, decodes it
// into dst (which has exactly c.Bytes of capacity) and checks it holds
// c.Records whole lines.
func decodeChunk(f *os.File, off int64, c Chunk, buf, dst []byte, dec *zstd.Decoder) ([]byte, error) {
	if _, err := f.ReadAt(buf, off); err != nil {
		return nil, err
	}
	if err := checkSum(buf, c.SHA256); err != nil {
		return nil, err
	}
	data, err := dec.DecodeAll(buf, dst)
	if err != nil {
		return nil, fmt.Errorf("zstd: %w", err)
	}
	if int64(len(data)) != c.Bytes {
		return nil, fmt.Errorf("decodes to %d bytes, manifest says %d", len(data), c.Bytes)
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		return nil, errors.New("last line does not end in a newline")
	}
	if n := bytes.Count(data, []byte{'\n'}); n != c.Records {
		return nil, fmt.Errorf("holds %d lines, manifest says %d records", n, c.Records)
	}
	return data, nil
}

// eachRecord decodes a data file (see decodeFile) and calls f, from the
// decoding goroutines, with every line (without its "\n", a view into
// its chunk's buffer) and its record number in the file.
func eachRecord(dir string, fi FileInfo, dec *zstd.Decoder, f func(n int, line []byte) error) error {
	firsts := make([]int, len(fi.Chunks)) // the number of each chunk's first record
	for i := 1; i < len(firsts); i++ {
		firsts[i] = firsts[i-1] + fi.Chunks[i-1].Records
	}
	return decodeFile(dir, fi, dec, func(c int, data []byte) error {
		return eachLine(data, firsts[c], f)
	})
}

// eachLine calls f with every line of data (without its "\n") and its
// number from first.
func eachLine(data []byte, first int, f func(n int, line []byte) error) error {
	for n := first; len(data) > 0; n++ {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			i = len(data)
		}
		if err := f(n, data[:i]); err != nil {
			return fmt.Errorf("record %d: %w", n+1, err)
		}
		data = data[min(i+1, len(data)):]
	}
	return nil
}

// chunkWriter writes a data file: it takes lines, closes a chunk once it
// holds chunkTarget bytes (or closeAt, when set), compresses chunks on
// several goroutines and writes them in order.
type chunkWriter struct {
	closeAt int // the decoded size at which a chunk closes, when > 0
	f       *os.File
	enc     *zstd.Encoder
	fi      FileInfo
	whole   hash.Hash
	cur     *pending
	order   chan *pending // chunks in file order, to the writing goroutine
	jobs    chan *pending // chunks to compress
	done    chan error    // the writing goroutine's result
	wg      sync.WaitGroup
}

// pending is a chunk on its way: raw lines, then compressed.
type pending struct {
	raw     []byte
	size    int64 // the decoded size of a chunk copied (raw nil)
	records int
	out     []byte
	ready   chan struct{}
}

func newChunkWriter(path string, enc *zstd.Encoder) (*chunkWriter, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	workers := runtime.GOMAXPROCS(0)
	w := &chunkWriter{
		f: f, enc: enc, whole: sha256.New(),
		fi:    FileInfo{Name: filepath.Base(path), Chunks: []Chunk{}},
		order: make(chan *pending, 2*workers),
		jobs:  make(chan *pending, 2*workers),
		done:  make(chan error, 1),
	}
	for i := 0; i < workers; i++ {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			for p := range w.jobs {
				p.out = w.enc.EncodeAll(p.raw, make([]byte, 0, len(p.raw)/4))
				close(p.ready)
			}
		}()
	}
	go w.writeLoop()
	return w, nil
}

// line adds one record; b must not hold "\n".
func (w *chunkWriter) line(b []byte) error {
	if bytes.IndexByte(b, '\n') >= 0 {
		return errors.New("record holds a newline")
	}
	if w.cur == nil {
		w.cur = &pending{raw: make([]byte, 0, chunkTarget+64<<10), ready: make(chan struct{})}
	}
	if len(w.cur.raw)+len(b)+1 > maxChunkBytes {
		if w.cur.records == 0 {
			return fmt.Errorf("record of %d bytes is over the limit of %d", len(b), maxChunkBytes)
		}
		if err := w.flush(); err != nil {
			return err
		}
		return w.line(b)
	}
	w.cur.raw = append(append(w.cur.raw, b...), '\n')
	w.cur.records++
	if len(w.cur.raw) >= w.target() {
		return w.flush()
	}
	return nil
}

// target is the decoded size at which w closes a chunk.
func (w *chunkWriter) target() int {
	if w.closeAt > 0 {
		return w.closeAt
	}
	return chunkTarget
}

// copyChunk adds a chunk as it is stored: records lines of size bytes,
// compressed as frame. w must be at a chunk's start (flushed).
func (w *chunkWriter) copyChunk(size int64, frame []byte, records int) error {
	if w.cur != nil && w.cur.records > 0 {
		return errors.New("a chunk copied in the middle of another")
	}
	p := &pending{size: size, records: records, out: frame, ready: make(chan struct{})}
	close(p.ready)
	w.order <- p
	return nil
}

func (w *chunkWriter) flush() error {
	if w.cur == nil || w.cur.records == 0 {
		return nil
	}
	p := w.cur
	w.cur = nil
	// order first: the writing goroutine waits on the chunks in order,
	// and each is handed to a compressing goroutine right after.
	w.order <- p
	w.jobs <- p
	return nil
}

func (w *chunkWriter) writeLoop() {
	var err error
	for p := range w.order {
		<-p.ready
		if err != nil {
			continue // drain
		}
		if _, err = w.f.Write(p.out); err != nil {
			continue
		}
		w.whole.Write(p.out)
		sum := sha256.Sum256(p.out)
		size := p.size
		if p.raw != nil {
			size = int64(len(p.raw))
		}
		w.fi.Chunks = append(w.fi.Chunks, Chunk{
			Size: int64(len(p.out)), Bytes: size, Records: p.records,
			SHA256: hex.EncodeToString(sum[:]),
		})
		w.fi.Size += int64(len(p.out))
		w.fi.Bytes += size
		w.fi.Records += p.records
	}
	w.done <- err
}

// close writes what is left, syncs and closes the file, and returns its
// manifest entry.
func (w *chunkWriter) close() (FileInfo, error) {
	err := w.flush()
	close(w.order)
	close(w.jobs)
	w.wg.Wait()
	if werr := <-w.done; err == nil {
		err = werr
	}
	if err == nil {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	w.fi.SHA256 = hex.EncodeToString(w.whole.Sum(nil))
	return w.fi, err
}
