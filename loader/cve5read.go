package loader

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"sync"

	"github.com/goccy/go-json"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zip"
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
	_, err := readCVE5File(path, emit)
	return err
}

// ReadCVE5Files reads the CVE JSON 5 records of the files, in the order
// given, merging them with MergeCVE5, and returns them by cveId, with
// each file's size and SHA-256 (for a manifest).
func ReadCVE5Files(paths []string) ([]*CVE5Record, []FileInfo, error) {
	return readCVE5Files(paths, nil)
}

// readCVE5Files is ReadCVE5Files keeping, of each record as soon as it
// is decoded, only what keep returns of it (nil keep: all of it), which
// must have the record's ID and Modified.
func readCVE5Files(paths []string, keep func(*CVE5Record) *CVE5Record) ([]*CVE5Record, []FileInfo, error) {
	byID := map[string]*CVE5Record{}
	infos := make([]FileInfo, len(paths))
	for i, p := range paths {
		fi, err := readCVE5File(p, func(r *CVE5Record) error {
			if keep != nil {
				r = keep(r)
			}
			MergeCVE5(byID, r)
			return nil
		})
		if err != nil {
			return nil, nil, err
		}
		infos[i] = fi
	}
	out := make([]*CVE5Record, 0, len(byID))
	for _, r := range byID {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, infos, nil
}

// readCVE5File is ReadCVE5, also returning the file's size and SHA-256,
// hashed in the pass that decodes it (or afterwards, for a zip archive,
// which is read at random and so never a pipe).
func readCVE5File(path string, emit func(*CVE5Record) error) (FileInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return FileInfo{}, fmt.Errorf("loader: %w", err)
	}
	in := &inputReader{path: path, raw: &hashingReader{f: f, h: sha256.New()}, closers: []io.Closer{f}}
	defer in.Close()
	if size, ok := zipSize(f); ok {
		in.random = true
		if err := readCVE5Zip(f, size, path, 0, emit); err != nil {
			return FileInfo{}, err
		}
		return in.Sum()
	}
	rc, _, err := decompressInput(path, f, in.raw)
	if err != nil {
		return FileInfo{}, err
	}
	in.r, in.closers = rc, []io.Closer{rc, f}
	if _, err := decodeCVE5Stream(in, path, false, emit); err != nil {
		return FileInfo{}, err
	}
	return in.Sum()
}

// readCVE5Zip reads the records of every file of the zip archive ra, in
// archive order; name is the archive's, for errors.
func readCVE5Zip(ra io.ReaderAt, size int64, name string, depth int, emit func(*CVE5Record) error) error {
	zr, err := zip.NewReader(ra, size)
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		// Entry names are never used as paths here.
		return fmt.Errorf("loader: open %s: %w", name, err)
	}
	for _, zf := range zr.File {
		if zf.FileInfo().IsDir() || !zf.Mode().IsRegular() {
			continue
		}
		entry := name + ":" + zf.Name
		err := openZipFile(ra, zf, depth, func(inner io.ReaderAt, size int64) error {
			return readCVE5Zip(inner, size, entry, depth+1, emit)
		}, func(r io.Reader) error {
			_, err := decodeCVE5Stream(r, entry, true, emit)
			return err
		})
		if err != nil {
			var ie *inputError
			if errors.As(err, &ie) || isCVE5Error(err) {
				return err
			}
			return fmt.Errorf("loader: read %s: %w", entry, err)
		}
	}
	return nil
}

// openZipFile opens one file of a zip archive: a zip archive itself (by
// its magic bytes) goes to archive, read in place when it is stored, else
// copied to a temporary file first; anything else goes to stream,
// decompressed when it is gzip.
func openZipFile(ra io.ReaderAt, zf *zip.File, depth int, archive func(io.ReaderAt, int64) error, stream func(io.Reader) error) error {
	if zf.Method == zip.Store {
		if off, err := zf.DataOffset(); err == nil {
			sr := io.NewSectionReader(ra, off, int64(zf.CompressedSize64))
			var head [4]byte
			if n, _ := sr.ReadAt(head[:], 0); n == 4 && bytes.Equal(head[:], inputMagicZip) {
				if depth+1 >= maxCVE5ZipDepth {
					return fmt.Errorf("zip archives nested deeper than %d", maxCVE5ZipDepth)
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
func decodeCVE5Stream(r io.Reader, name string, skipOther bool, emit func(*CVE5Record) error) (skipped bool, err error) {
	fail := func(format string, args ...any) error {
		return &cve5Error{"loader: cve5 " + name + ": " + fmt.Sprintf(format, args...)}
	}
	br := getBufReader(unnamedReads{r})
	defer putBufReader(br)
	first, err := firstNonSpace(br)
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
