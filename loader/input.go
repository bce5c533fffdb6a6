package loader

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zip"
	"github.com/klauspost/compress/zstd"
)

// inputZstdMaxMemory caps the window a zstd stream may ask for (and so the
// memory its decoder holds), so a hostile header cannot exhaust memory.
const inputZstdMaxMemory = 4 << 30

// Magic numbers at the start of the compressed formats openInput knows.
var (
	inputMagicGzip = []byte{0x1f, 0x8b}
	inputMagicZstd = []byte{0x28, 0xb5, 0x2f, 0xfd}
	inputMagicZip  = []byte{0x50, 0x4b, 0x03, 0x04}
	// An archive with no entries is only an end of central directory.
	inputMagicZipEmpty = []byte{0x50, 0x4b, 0x05, 0x06}
)

// openInput opens the upstream input file at path and returns its
// decompressed content. The format is chosen by the file's magic bytes,
// not by its name: gzip, zstd, zip (which must hold exactly one regular
// file; an empty archive is recognised too, and refused) or, for anything
// else including an empty file, the bytes as they are. Only zip archives
// are read at random (through the file itself); the other formats are
// streamed. Closing the result closes the decompressor and the file. Open
// errors read "loader: open PATH: ...", read errors other than io.EOF
// "loader: read PATH: ...".
func openInput(path string) (*inputReader, error) {
	f, err := os.Open(path)
	if err != nil {
		// *os.PathError already reads "open PATH: ...".
		return nil, fmt.Errorf("loader: %w", err)
	}
	raw := &hashingReader{f: f, h: sha256.New()}
	rc, random, err := decompressInput(path, f, raw)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &inputReader{path: path, r: rc, raw: raw, random: random, closers: []io.Closer{rc, f}}, nil
}

// hashingReader reads f, counting and hashing what it reads, so that an
// input is hashed in the one pass that decodes it: a second open would
// block for ever on a pipe (vulnd build ... <(zcat feed.gz)).
type hashingReader struct {
	f *os.File
	h hash.Hash
	n int64
}

func (r *hashingReader) Read(p []byte) (int, error) {
	n, err := r.f.Read(p)
	r.h.Write(p[:n])
	r.n += int64(n)
	return n, err
}

// decompressInput sniffs the file f through raw (which reads f) and
// returns a reader of its decompressed content, and whether that reads f
// at random (a zip archive) rather than through raw. Closing the reader
// does not close f.
func decompressInput(path string, f *os.File, raw io.Reader) (rc io.ReadCloser, random bool, err error) {
	openErr := func(err error) error {
		return fmt.Errorf("loader: open %s: %w", path, err)
	}
	br := bufio.NewReaderSize(raw, 64<<10)
	head, err := br.Peek(len(inputMagicZip))
	if err != nil && err != io.EOF {
		return nil, false, &inputError{path: path, err: err}
	}
	switch {
	case bytes.HasPrefix(head, inputMagicGzip):
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, false, openErr(err)
		}
		return zr, false, nil
	case bytes.HasPrefix(head, inputMagicZstd):
		zr, err := zstd.NewReader(br,
			zstd.WithDecoderMaxMemory(inputZstdMaxMemory),
			zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, false, openErr(err)
		}
		return zr.IOReadCloser(), false, nil
	case bytes.HasPrefix(head, inputMagicZip), bytes.HasPrefix(head, inputMagicZipEmpty):
		// Read at random through f itself; Sum hashes it afterwards.
		rc, err := openZipEntry(f, openErr)
		return rc, true, err
	default:
		return io.NopCloser(br), false, nil
	}
}

// openZipEntry opens the single regular file of the zip archive f, using
// f as the archive's ReaderAt so that nothing is read into memory up
// front.
func openZipEntry(f *os.File, openErr func(error) error) (io.ReadCloser, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, openErr(err)
	}
	zr, err := zip.NewReader(f, st.Size())
	if err != nil && !errors.Is(err, zip.ErrInsecurePath) {
		// Entry names are never used as paths here, so insecure names
		// are harmless.
		return nil, openErr(err)
	}
	var files []*zip.File
	for _, zf := range zr.File {
		if zf.FileInfo().IsDir() {
			continue
		}
		files = append(files, zf)
	}
	if len(files) != 1 {
		return nil, openErr(fmt.Errorf("zip archive holds %d files, want exactly 1", len(files)))
	}
	zf := files[0]
	if !zf.Mode().IsRegular() {
		return nil, openErr(fmt.Errorf("zip entry %q is not a regular file", zf.Name))
	}
	rc, err := zf.Open()
	if err != nil {
		return nil, openErr(fmt.Errorf("zip entry %q: %w", zf.Name, err))
	}
	return rc, nil
}

// inputReader is the ReadCloser openInput returns: it names the file in
// read errors and closes every layer underneath.
type inputReader struct {
	path    string
	r       io.Reader
	raw     *hashingReader
	random  bool        // r reads the file at random, not through raw
	closers []io.Closer // innermost first
	closed  bool
}

func (r *inputReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		var ie *inputError
		if !errors.As(err, &ie) {
			err = &inputError{path: r.path, err: err}
		}
	}
	return n, err
}

// inputError is an error reading an input file after it was opened,
// "loader: read PATH: ...". Decoders pass it on as it is: it already
// names the file.
type inputError struct {
	path string
	err  error
}

func (e *inputError) Error() string { return "loader: read " + e.path + ": " + e.err.Error() }

func (e *inputError) Unwrap() error { return e.err }

// unnamedReads passes r's reads on, with a read error of openInput's
// reading "read: ..." instead of "loader: read PATH: ...": for decoders
// whose own errors name the file, so that it is named once.
type unnamedReads struct{ r io.Reader }

func (u unnamedReads) Read(p []byte) (int, error) {
	n, err := u.r.Read(p)
	var ie *inputError
	if err != nil && errors.As(err, &ie) {
		err = &readError{ie.err}
	}
	return n, err
}

// readError is an inputError without the file's name.
type readError struct{ err error }

func (e *readError) Error() string { return "read: " + e.err.Error() }

func (e *readError) Unwrap() error { return e.err }

// Sum returns the input file's size and SHA-256, for the manifest: what
// the decoder left unread is read to the end first. A zip archive (read
// at random, so never a pipe) is hashed from its start.
func (r *inputReader) Sum() (FileInfo, error) {
	raw := r.raw
	if r.random {
		raw = &hashingReader{f: raw.f, h: sha256.New()}
		if _, err := raw.f.Seek(0, io.SeekStart); err != nil {
			return FileInfo{}, &inputError{path: r.path, err: err}
		}
	}
	if _, err := io.Copy(io.Discard, raw); err != nil {
		return FileInfo{}, &inputError{path: r.path, err: err}
	}
	return FileInfo{Name: filepath.Base(r.path), Size: raw.n, SHA256: hex.EncodeToString(raw.h.Sum(nil))}, nil
}

func (r *inputReader) Close() error {
	if r.closed {
		return nil
	}
	r.closed = true
	var errs []error
	for _, c := range r.closers {
		if err := c.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("loader: close %s: %w", r.path, err)
	}
	return nil
}
