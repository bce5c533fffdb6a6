package loader

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/goccy/go-json"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zip"

	"github.com/vulnd/vulnd/index"
)

// maxCVE5SniffBytes is how much of a file's (or zip entry's) decompressed
// content IsCVE5 reads at most: a record's "dataType" comes first in
// cvelistV5's files and in CISA's, but a record may put it after its
// containers, which can run to hundreds of kilobytes.
const maxCVE5SniffBytes = 1 << 20

// maxCVE5SniffEntries is how many files of a zip archive IsCVE5 looks
// into for a record before it says no.
const maxCVE5SniffEntries = 64

// maxCVE5ZipDepth is how deep zip archives may nest (the cvelistV5
// midnight bundle is a zip holding cves.zip).
const maxCVE5ZipDepth = 3

// IsCVE5 tells whether the file at path holds CVE JSON 5 records, by its
// content and whatever its name: decompressed as ReadCVE5 would (gzip,
// zstd or plain), it is a JSON object whose top-level "dataType" is
// "CVE_RECORD" within its first MiB, or an array whose first element is
// one; or it is a zip archive one of whose first 64 files (in archive
// order, nested zip archives entered) is such. Anything else, including a
// file that does not decompress, is not. The error is for a file that
// cannot be opened or read at all.
func IsCVE5(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, fmt.Errorf("loader: %w", err)
	}
	defer f.Close()
	if size, ok := zipSize(f); ok {
		n := 0
		return sniffCVE5Zip(f, size, 0, &n), nil
	}
	rc, _, err := decompressInput(path, f, f)
	if err != nil {
		var ie *inputError
		if errors.As(err, &ie) {
			return false, ie
		}
		return false, nil
	}
	defer rc.Close()
	return sniffCVE5(io.LimitReader(rc, maxCVE5SniffBytes)), nil
}

// zipSize reports whether the file f is a zip archive (by its magic
// bytes, read in place) and its size. A pipe is never one.
func zipSize(f *os.File) (int64, bool) {
	var head [4]byte
	if n, _ := f.ReadAt(head[:], 0); n < 4 {
		return 0, false
	}
	if !bytes.Equal(head[:], inputMagicZip) && !bytes.Equal(head[:], inputMagicZipEmpty) {
		return 0, false
	}
	st, err := f.Stat()
	if err != nil {
		return 0, false
	}
	return st.Size(), true
}

// sniffCVE5Zip looks for a record in the files of the zip archive ra,
// counting the files it opens in *n.
func sniffCVE5Zip(ra io.ReaderAt, size int64, depth int, n *int) bool {
	zr, err := zip.NewReader(ra, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		return false
	}
	for _, zf := range zr.File {
		if !zf.Mode().IsRegular() {
			continue
		}
		if *n++; *n > maxCVE5SniffEntries {
			return false
		}
		found := false
		err := openZipFile(ra, zf, depth, func(inner io.ReaderAt, size int64) error {
			found = sniffCVE5Zip(inner, size, depth+1, n)
			return nil
		}, func(r io.Reader) error {
			found = sniffCVE5(io.LimitReader(r, maxCVE5SniffBytes))
			return nil
		})
		if err == nil && found {
			return true
		}
	}
	return false
}

// sniffCVE5 reads the start of a JSON text from r: a record object, or
// an array whose first element is one; see IsCVE5.
func sniffCVE5(r io.Reader) bool {
	dec := json.NewDecoder(r)
	tok, err := dec.Token()
	if err != nil {
		return false
	}
	if d, ok := tok.(json.Delim); ok && d == '[' {
		tok, err = dec.Token()
		if err != nil {
			return false
		}
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		if key, _ := tok.(string); key == "dataType" {
			var dt string
			return dec.Decode(&dt) == nil && dt == "CVE_RECORD"
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return false
		}
	}
	return false
}

// ReadCVE5 reads the CVE JSON 5 records of the file at path and passes
// each to emit, in file order. The file is, by its content: one record,
// a JSON array of records, either of these compressed with gzip or zstd,
// or a zip archive holding such files at any depth, zip archives inside
// it included (the CVE Program's cvelistV5 bundles). In a zip archive,
// files that are not records (cvelistV5's delta.json, a README) are
// skipped; a file that is a record, or an array whose first element is
// one, must be wholly valid. Records are streamed: an array or an
// archive is never held whole in memory. A nested zip archive is read in
// place when stored, else through a temporary file that is removed
// afterwards.
//
// A bad record stops the reading with one line naming the file and the
// record, by its position (from 1) and its cveId when it has one:
// "loader: cve5 PATH: record 3 (CVE-2024-1234): ..."; in a zip archive,
// PATH is followed by ":" and the entry's name.
func ReadCVE5(path string, emit func(*CVE5Record) error) error {
	_, err := readCVE5File(path, nil, emit)
	return err
}

// ReadCVE5Files reads the CVE JSON 5 records of the files, in the order
// given, merging them with MergeCVE5, and returns them by cveId, with
// each file's size and SHA-256 (for a manifest).
func ReadCVE5Files(paths []string) ([]*CVE5Record, []FileInfo, error) {
	return readCVE5Files(paths, nil)
}

// readCVE5Files is ReadCVE5Files keeping, of each record as soon as it
// is decoded, only what keep keeps of it (nil keep: all of it). The strings that the records' affected entries
// repeat (vendors, products, versions, statuses, sources) are held once.
//
// When keep holds the part kept (see cve5Keep.holdFor), its texts are
// held in one index.HeldStore, in the order read.
func readCVE5Files(paths []string, keep *cve5Keep) ([]*CVE5Record, []FileInfo, error) {
	var all []*CVE5Record // in the order read
	infos := make([]FileInfo, len(paths))
	strs := newInterner()
	var held *index.HeldStore
	if keep != nil && keep.keysOf != nil {
		var err error
		if held, err = index.NewHeldStore(); err != nil {
			return nil, nil, fmt.Errorf("loader: zstd: %w", err)
		}
	}
	for i, p := range paths {
		fi, err := readCVE5File(p, keep, func(r *CVE5Record) error {
			r.Input = int32(i)
			if held != nil && r.HeldText != nil {
				r.Held, r.HeldText = held.Hold(*r.HeldText), nil
			}
			strs.record(r)
			all = append(all, r)
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
		infos[i] = fi
	}
	if held != nil {
		held.Seal()
	}
	return mergeCVE5Sorted(all), infos, nil
}

// mergeCVE5Sorted returns the records recs (in the order read) by ID
// ascending, two of one CVE merged as MergeCVE5 merges them in that
// order: sorted stably by ID, the records of a CVE follow one another in
// the order read. cvelistV5's bundle is nearly in ID order already, which
// a stable sort takes quickly, more so than a map of 400k records by ID
// and a sort of what it holds.
func mergeCVE5Sorted(recs []*CVE5Record) []*CVE5Record {
	slices.SortStableFunc(recs, func(a, b *CVE5Record) int { return strings.Compare(a.ID, b.ID) })
	out := recs[:0]
	for _, r := range recs {
		if n := len(out); n > 0 && out[n-1].ID == r.ID {
			if !out[n-1].Modified.After(r.Modified) {
				out[n-1] = r
			}
			continue
		}
		out = append(out, r)
	}
	clear(recs[len(out):])
	return out
}

// readCVE5File is ReadCVE5, also returning the file's size and SHA-256,
// hashed in the pass that decodes it (or afterwards, for a zip archive,
// which is read at random and so never a pipe). emit is given only what
// keep keeps of each record (nil keep: all of it).
func readCVE5File(path string, keep *cve5Keep, emit func(*CVE5Record) error) (FileInfo, error) {
	return (&cve5Reader{keep: keep}).file(path, emit)
}

// cve5Reader is how a build reads record files: what it keeps of each
// record, on how many cores, and which records.
type cve5Reader struct {
	keep *cve5Keep
	// workers, when set, is how many goroutines decode the files of a
	// zip archive, read anew for each batch (a build reading its records
	// beside NVD's feeds gives them the core the feeds leave, then every
	// core once the feeds are read); nil: every core.
	workers *atomic.Int32
	// want, when set, is the records to read (see cve5Want): only the
	// zip entries that hold them are opened, and only they are emitted.
	want cve5Want
}

// cve5Loc is where a record was read in its file: the files of the zip
// archives it is in, from the outermost (each its place among the
// archive's files, from 1; 0: none), and its place among the records of
// its file or entry (from 0). Two records of one file never share one.
type cve5Loc struct {
	entry [maxCVE5ZipDepth]int32
	k     int32
}

// cve5Want is a set of records by cve5Loc, with every archive's file
// that leads to one (k -1, the entries after it 0).
type cve5Want map[cve5Loc]struct{}

func (w cve5Want) add(l cve5Loc) {
	w[l] = struct{}{}
	p := cve5Loc{k: -1}
	for d := 0; d < maxCVE5ZipDepth && l.entry[d] != 0; d++ {
		p.entry[d] = l.entry[d]
		w[p] = struct{}{}
	}
}

// wants reports whether w is every record or holds l.
func (w cve5Want) wants(l cve5Loc) bool {
	if w == nil {
		return true
	}
	_, ok := w[l]
	return ok
}

// entry is the loc of file i (from 0) of the archive at depth within
// the file or archive at.
func (l cve5Loc) at(depth, i int) cve5Loc {
	l.entry[depth], l.k = int32(i+1), -1
	return l
}

// file is readCVE5File.
func (rd *cve5Reader) file(path string, emit func(*CVE5Record) error) (FileInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return FileInfo{}, fmt.Errorf("loader: %w", err)
	}
	in := &inputReader{path: path, raw: &hashingReader{f: f, h: sha256.New()}, closers: []io.Closer{f}}
	defer in.Close()
	if size, ok := zipSize(f); ok {
		// The archive is hashed as it is read ahead, from its start
		// (its files, in archive order), and what that left (its
		// central directory, mostly) afterwards: not read a second time
		// whole for its hash (a tenth of a second per 100k records).
		ra := newReadAhead(f, size)
		ra.hash = in.raw.h
		if err := rd.zip(ra, size, path, 0, cve5Loc{k: -1}, emit); err != nil {
			return FileInfo{}, err
		}
		if _, err := f.Seek(ra.hashed, io.SeekStart); err != nil {
			return FileInfo{}, &inputError{path: path, err: err}
		}
		in.raw.n = ra.hashed
		return in.Sum()
	}
	rc, _, err := decompressInput(path, f, in.raw)
	if err != nil {
		return FileInfo{}, err
	}
	in.r, in.closers = rc, []io.Closer{rc, f}
	if _, err := decodeCVE5Kept(in, path, "", false, rd.keep, rd.placed(cve5Loc{}, emit)); err != nil {
		return FileInfo{}, err
	}
	return in.Sum()
}

// placed returns emit giving each record its place among those of the
// file or entry at (which it counts) and passing on those rd wants.
func (rd *cve5Reader) placed(at cve5Loc, emit func(*CVE5Record) error) func(*CVE5Record) error {
	at.k = 0
	return func(r *CVE5Record) error {
		r.loc = at
		at.k++
		if !rd.want.wants(r.loc) {
			return nil
		}
		return emit(r)
	}
}

// cve5Batch is how many files of a zip archive are decoded at once, on
// every core, before their records are passed on in archive order.
const cve5Batch = 512

// zipEntryRecords is what a file of a zip archive gave: its records (what
// is kept of them) or the error that stopped it; errNestedZip when it
// is a zip archive itself, which is read in archive order.
type zipEntryRecords struct {
	recs []*CVE5Record
	err  error
}

// errNestedZip is what openZipFile reports of a zip archive inside one
// when it is not asked to read it.
var errNestedZip = errors.New("a zip archive")

// cve5EntryHook, when set (by tests), is called by the goroutine that
// decodes a file of a zip archive, before it does.
var cve5EntryHook func()

// readCVE5Zip reads the records of every file of the zip archive ra, in
// archive order; name is the archive's, for errors. The files are
// decompressed and decoded on every core, a batch at a time (the next
// while one is passed on), and their records passed to emit in archive
// order, as if they were read one after the other: the first error in
// that order is the one reported, and nothing after it is emitted. A zip
// archive inside it is read when its turn comes.
func readCVE5Zip(ra io.ReaderAt, size int64, name string, depth int, keep *cve5Keep, emit func(*CVE5Record) error) error {
	return (&cve5Reader{keep: keep}).zip(ra, size, name, depth, cve5Loc{k: -1}, emit)
}

// zip is readCVE5Zip, the archive being at within its file; of its files
// only those that lead to a record rd wants are opened.
func (rd *cve5Reader) zip(ra io.ReaderAt, size int64, name string, depth int, at cve5Loc, emit func(*CVE5Record) error) error {
	keep := rd.keep
	if _, ok := ra.(*readAhead); !ok && depth == 0 {
		ra = newReadAhead(ra, size)
	}
	zr, err := zip.NewReader(ra, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		// Entry names are never used as paths here.
		return fmt.Errorf("loader: open %s: %w", name, err)
	}
	zr.RegisterDecompressor(zip.Deflate, newInflater)
	// files are the archive's files, each with its loc (its place among
	// them all): those rd wants.
	var (
		files []*zip.File
		locs  []cve5Loc
	)
	i := 0
	for _, zf := range zr.File {
		if zf.FileInfo().IsDir() || !zf.Mode().IsRegular() {
			continue
		}
		if l := at.at(depth, i); rd.want.wants(l) {
			files, locs = append(files, zf), append(locs, l)
		}
		i++
	}
	stream := func(entry string, emit func(*CVE5Record) error) func(io.Reader) error {
		return func(r io.Reader) error {
			_, err := decodeCVE5Kept(r, name, entry, true, keep, emit)
			return err
		}
	}
	// decode starts decoding the files of batch (the lo-th on) on every
	// core; wait waits for them.
	decode := func(batch []*zip.File, lo int) (results []zipEntryRecords, wait func()) {
		results = make([]zipEntryRecords, len(batch))
		workers := runtime.GOMAXPROCS(0)
		if rd.workers != nil {
			workers = max(1, int(rd.workers.Load()))
		}
		var next atomic.Int64
		var wg sync.WaitGroup
		for range min(workers, len(batch)) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					i := int(next.Add(1) - 1)
					if i >= len(batch) {
						return
					}
					if cve5EntryHook != nil {
						cve5EntryHook()
					}
					res := &results[i]
					res.err = openZipFile(ra, batch[i], depth, nil, stream(batch[i].Name, rd.placed(locs[lo+i], func(r *CVE5Record) error {
						res.recs = append(res.recs, r)
						return nil
					})))
				}
			}()
		}
		return results, wg.Wait
	}
	// pass passes on the records of batch in archive order.
	pass := func(batch []*zip.File, lo int, results []zipEntryRecords) error {
		for i, zf := range batch {
			err := results[i].err
			if err == errNestedZip {
				l := locs[lo+i]
				err = openZipFile(ra, zf, depth, func(inner io.ReaderAt, size int64) error {
					return rd.zip(inner, size, name+":"+zf.Name, depth+1, l, emit)
				}, stream(zf.Name, rd.placed(l, emit)))
			}
			if err != nil {
				var ie *inputError
				if errors.As(err, &ie) || isCVE5Error(err) {
					return err
				}
				return fmt.Errorf("loader: read %s:%s: %w", name, zf.Name, err)
			}
			for _, r := range results[i].recs {
				if err := emit(r); err != nil {
					return err
				}
			}
		}
		return nil
	}
	// The next batch is decoded while one is passed on.
	batchAt := func(lo int) []*zip.File { return files[lo:min(lo+cve5Batch, len(files))] }
	batch := batchAt(0)
	results, wait := decode(batch, 0)
	for lo := 0; lo < len(files); lo += cve5Batch {
		wait()
		nextLo := min(lo+cve5Batch, len(files))
		next := batchAt(nextLo)
		nextResults, nextWait := decode(next, nextLo)
		if err := pass(batch, lo, results); err != nil {
			nextWait()
			return err
		}
		batch, results, wait = next, nextResults, nextWait
	}
	wait()
	return nil
}

// readAheadSize is how much of a zip archive readAhead reads at once.
const readAheadSize = 1 << 20

// readAhead is a zip archive read ahead, readAheadSize bytes at a time:
// the files of cvelistV5's bundle, a record each, are about a KiB
// compressed, and the reads that open one (its local header, then its
// data) would otherwise each be a system call (800k for 400k records, a
// tenth of the time it took to read them). It is read in archive order,
// the files of a batch on every core at once, which stay within a window
// or the next. Safe for concurrent use.
//
// With hash set, what it reads of ra from its start on, window after
// window, is written to hash: hashed is how much. A window that does not
// continue what was hashed (the central directory at the end, read
// first) is not, nor what is read past the windows.
type readAhead struct {
	ra     io.ReaderAt
	size   int64
	mu     sync.Mutex
	off    int64  // where buf starts in ra
	buf    []byte // what ra holds there
	hash   hash.Hash
	hashed int64
}

func newReadAhead(ra io.ReaderAt, size int64) *readAhead {
	return &readAhead{ra: ra, size: size}
}

func (r *readAhead) ReadAt(p []byte, off int64) (int, error) {
	if len(p) > readAheadSize/4 || off < 0 || off+int64(len(p)) > r.size {
		return r.ra.ReadAt(p, off)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if off < r.off || off+int64(len(p)) > r.off+int64(len(r.buf)) {
		if r.buf == nil {
			r.buf = make([]byte, min(readAheadSize, r.size))
		}
		n, _ := r.ra.ReadAt(r.buf[:cap(r.buf)][:min(int64(cap(r.buf)), r.size-off)], off)
		r.off, r.buf = off, r.buf[:n]
		if end := off + int64(n); r.hash != nil && off <= r.hashed && r.hashed < end {
			r.hash.Write(r.buf[r.hashed-off:])
			r.hashed = end
		}
		if n < len(p) { // ra is shorter than it was: its own answer
			r.buf = r.buf[:0]
			return r.ra.ReadAt(p, off)
		}
	}
	return copy(p, r.buf[off-r.off:]), nil
}

// openZipFile opens one file of a zip archive: a zip archive itself (by
// its magic bytes) goes to archive, read in place when it is stored, else
// copied to a temporary file first (a nil archive: errNestedZip, nothing
// copied); anything else goes to stream, decompressed when it is gzip.
func openZipFile(ra io.ReaderAt, zf *zip.File, depth int, archive func(io.ReaderAt, int64) error, stream func(io.Reader) error) error {
	if zf.Method == zip.Store {
		if off, err := zf.DataOffset(); err == nil {
			sr := io.NewSectionReader(ra, off, int64(zf.CompressedSize64))
			var head [4]byte
			if n, _ := sr.ReadAt(head[:], 0); n == 4 && bytes.Equal(head[:], inputMagicZip) {
				if depth+1 >= maxCVE5ZipDepth {
					return fmt.Errorf("zip archives nested deeper than %d", maxCVE5ZipDepth)
				}
				if archive == nil {
					return errNestedZip
				}
				return archive(sr, sr.Size())
			}
		}
	}
	rc, err := zf.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	br := getBufReader(rc)
	defer putBufReader(br)
	head, _ := br.Peek(len(inputMagicZip))
	switch {
	case bytes.HasPrefix(head, inputMagicZip):
		if depth+1 >= maxCVE5ZipDepth {
			return fmt.Errorf("zip archives nested deeper than %d", maxCVE5ZipDepth)
		}
		if archive == nil {
			return errNestedZip
		}
		tmp, err := os.CreateTemp("", "vulnd-cve5-*.zip")
		if err != nil {
			return err
		}
		defer os.Remove(tmp.Name())
		defer tmp.Close()
		n, err := io.Copy(tmp, br)
		if err != nil {
			return err
		}
		return archive(tmp, n)
	case bytes.HasPrefix(head, inputMagicGzip):
		zr, err := gzip.NewReader(br)
		if err != nil {
			return err
		}
		defer zr.Close()
		return stream(zr)
	}
	return stream(br)
}

// bufReaders are the 64 KiB readers of openZipFile and decodeCVE5Stream,
// used again: cvelistV5's bundle has a file per record, and two new ones
// a file were most of what a build allocated while it read the records
// (50 GB for 400k), which made the heap grow past its goal.
var bufReaders = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 64<<10) }}

func getBufReader(r io.Reader) *bufio.Reader {
	br := bufReaders.Get().(*bufio.Reader)
	br.Reset(r)
	return br
}

func putBufReader(br *bufio.Reader) {
	br.Reset(nil)
	bufReaders.Put(br)
}

// inflaters are the deflate decompressors of readCVE5Zip, each with the
// buffered reader it reads through, used again: flate reads a reader
// that is not buffered through a new 4 KiB one, which for cvelistV5's
// file a record was most of the garbage of reading the bundle (400 MB
// at 100k records).
var inflaters sync.Pool

type inflater struct {
	br *bufio.Reader
	fr io.ReadCloser // a flate.Resetter
}

// newInflater is a zip.Decompressor.
func newInflater(r io.Reader) io.ReadCloser {
	in, _ := inflaters.Get().(*inflater)
	if in == nil {
		in = &inflater{br: bufio.NewReader(r)}
		in.fr = flate.NewReader(in.br)
	} else {
		in.br.Reset(r)
		in.fr.(flate.Resetter).Reset(in.br, nil)
	}
	return &inflating{in: in}
}

// inflating is one file's decompression; Close gives its inflater back.
type inflating struct{ in *inflater }

func (f *inflating) Read(p []byte) (int, error) {
	if f.in == nil {
		return 0, errors.New("read after close")
	}
	return f.in.fr.Read(p)
}

func (f *inflating) Close() error {
	if f.in == nil {
		return nil
	}
	err := f.in.fr.Close()
	f.in.br.Reset(nil)
	inflaters.Put(f.in)
	f.in = nil
	return err
}

// cve5Error is an error about a record of a CVE JSON 5 input, its message
// whole.
type cve5Error struct{ msg string }

func (e *cve5Error) Error() string { return e.msg }

func isCVE5Error(err error) bool {
	var ce *cve5Error
	return errors.As(err, &ce)
}

// decodeCVE5Stream decodes one JSON text of records from r (a record or
// an array of records) and passes each to emit. name is the file (or
// zip entry) for errors. When skipOther is set, a text that is no record
// (not JSON, another object, an array not starting with a record) is
// skipped: skipped reports it.
//
// A text that is one object (a file of cvelistV5's bundle) is read whole
// and decoded straight into a record; only when that fails is it decoded
// again as decodeCVE5Text does, for the same error (or skip). It is what
// decodeCVE5Text does, without decoding every record twice (first as a
// JSON value, then into a record).
func decodeCVE5Stream(r io.Reader, name string, skipOther bool, emit func(*CVE5Record) error) (skipped bool, err error) {
	return decodeCVE5Kept(r, name, "", skipOther, nil, emit)
}

// decodeCVE5Kept is decodeCVE5Stream passing on what keep keeps of each
// record (nil keep: all of it). A text that is one record of which only
// a part is kept is decoded only in that part (decodeCVE5Part). Its name
// is file, followed by ":" and entry when entry is not "" (a file of a zip
// archive), put together only for an error: a record read well never
// needs it.
func decodeCVE5Kept(r io.Reader, file, entry string, skipOther bool, keep *cve5Keep, emit func(*CVE5Record) error) (skipped bool, err error) {
	name := func() string {
		if entry == "" {
			return file
		}
		return file + ":" + entry
	}
	// emitKept passes on what keep keeps of each record.
	emitKept := func() func(*CVE5Record) error {
		if keep == nil {
			return emit
		}
		return func(r *CVE5Record) error { return emit(keep.keep(r)) }
	}
	br := getBufReader(unnamedReads{r})
	defer putBufReader(br)
	first, err := firstNonSpace(br)
	if err != nil || first != '{' {
		return decodeCVE5After(br, first, err, name(), skipOther, emitKept())
	}
	bp := getRecordBuf()
	defer putRecordBuf(bp)
	buf, err := readAllTo((*bp)[:0], br)
	*bp = buf
	if err != nil {
		// The same bytes, then the same error.
		return decodeCVE5Text(io.MultiReader(bytes.NewReader(buf), failingReader{err}), name(), skipOther, emitKept())
	}
	if keep != nil {
		if rec := decodeCVE5Part(buf, keep); rec != nil {
			return false, emit(rec) // the part kept
		}
	}
	if rec := decodeCVE5Whole(buf); rec != nil {
		return false, emit(keep.keep(rec))
	}
	return decodeCVE5Text(bytes.NewReader(buf), name(), skipOther, emitKept())
}

// decodeCVE5Whole decodes buf, a JSON object and white space, into a
// record: nil when it is not a valid record (decodeCVE5Text tells why).
func decodeCVE5Whole(buf []byte) *CVE5Record {
	var raw cve5Raw
	if json.Unmarshal(buf, &raw) != nil || raw.DataType != "CVE_RECORD" {
		return nil
	}
	rec, err := mapCVE5(&raw)
	if err != nil {
		return nil
	}
	return rec
}

// readAllTo appends what r holds to buf.
func readAllTo(buf []byte, r io.Reader) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// failingReader fails every read with err.
type failingReader struct{ err error }

func (f failingReader) Read([]byte) (int, error) { return 0, f.err }

// recordBufs are the buffers decodeCVE5Stream reads a record into, used
// again; one that grew past maxPooledRecord is let go.
var recordBufs = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

const maxPooledRecord = 1 << 20

func getRecordBuf() *[]byte { return recordBufs.Get().(*[]byte) }

func putRecordBuf(b *[]byte) {
	if cap(*b) <= maxPooledRecord {
		recordBufs.Put(b)
	}
}

// decodeCVE5Text is decodeCVE5Stream decoding each record first as a
// JSON value, then into a record.
func decodeCVE5Text(r io.Reader, name string, skipOther bool, emit func(*CVE5Record) error) (skipped bool, err error) {
	br := getBufReader(unnamedReads{r})
	defer putBufReader(br)
	first, err := firstNonSpace(br)
	return decodeCVE5After(br, first, err, name, skipOther, emit)
}

// decodeCVE5After is decodeCVE5Text once the first byte that is not
// white space is known: first, left unread in br, or the error that
// reading it gave.
func decodeCVE5After(br *bufio.Reader, first byte, err error, name string, skipOther bool, emit func(*CVE5Record) error) (skipped bool, _ error) {
	fail := func(format string, args ...any) error {
		return &cve5Error{"loader: cve5 " + name + ": " + fmt.Sprintf(format, args...)}
	}
	if err != nil {
		if skipOther {
			return true, nil
		}
		if err == io.EOF {
			return false, fail("empty: not a CVE JSON 5 record or array")
		}
		return false, fail("%v", err)
	}
	dec := json.NewDecoder(br)
	switch first {
	case '{':
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			if skipOther {
				return true, nil
			}
			return false, fail("record 1: %v", err)
		}
		if skipOther && !isCVE5Record(raw) {
			return true, nil
		}
		if err := emitCVE5(raw, 1, fail, emit); err != nil {
			return false, err
		}
	case '[':
		if _, err := dec.Token(); err != nil {
			return false, fail("%v", err)
		}
		for i := 1; dec.More(); i++ {
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				if skipOther && i == 1 {
					return true, nil
				}
				return false, fail("record %d: %v", i, err)
			}
			if i == 1 && skipOther && !isCVE5Record(raw) {
				return true, nil
			}
			if err := emitCVE5(raw, i, fail, emit); err != nil {
				return false, err
			}
		}
		if _, err := dec.Token(); err != nil {
			return false, fail("after the records: %v", err)
		}
	default:
		if skipOther {
			return true, nil
		}
		return false, fail("not a CVE JSON 5 record or array: starts with %q", first)
	}
	if _, err := dec.Token(); err != io.EOF {
		if err == nil {
			err = errors.New("more JSON after the records")
		}
		return false, fail("%v", err)
	}
	return false, nil
}

// firstNonSpace returns the first byte of br that is not JSON white
// space, leaving it unread.
func firstNonSpace(br *bufio.Reader) (byte, error) {
	for {
		c, err := br.ReadByte()
		if err != nil {
			return 0, err
		}
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		}
		return c, br.UnreadByte()
	}
}

// emitCVE5 decodes the i-th record and passes it on.
func emitCVE5(raw []byte, i int, fail func(string, ...any) error, emit func(*CVE5Record) error) error {
	rec, err := decodeCVE5(raw)
	if err != nil {
		if id := cve5IDOf(raw); id != "" {
			return fail("record %d (%s): %v", i, id, err)
		}
		return fail("record %d: %v", i, err)
	}
	return emit(rec)
}
