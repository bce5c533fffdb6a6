package loader

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

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
func openInput(path string) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		// *os.PathError already reads "open PATH: ...".
		return nil, fmt.Errorf("loader: %w", err)
	}
	rc, err := decompressInput(path, f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &inputReader{path: path, r: rc, closers: []io.Closer{rc, f}}, nil
}

// decompressInput sniffs f and returns a reader of its decompressed content.
// Closing the reader does not close f.
func decompressInput(path string, f *os.File) (io.ReadCloser, error) {
	openErr := func(err error) error {
		return fmt.Errorf("loader: open %s: %w", path, err)
	}
	br := bufio.NewReaderSize(f, 64<<10)
	head, err := br.Peek(len(inputMagicZip))
	if err != nil && err != io.EOF {
		return nil, &inputError{path: path, err: err}
	}
	switch {
	case bytes.HasPrefix(head, inputMagicGzip):
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, openErr(err)
		}
		return zr, nil
	case bytes.HasPrefix(head, inputMagicZstd):
		zr, err := zstd.NewReader(br,
			zstd.WithDecoderMaxMemory(inputZstdMaxMemory),
			zstd.WithDecoderConcurrency(1))
		if err != nil {
			return nil, openErr(err)
		}
		return zr.IOReadCloser(), nil
	case bytes.HasPrefix(head, inputMagicZip), bytes.HasPrefix(head, inputMagicZipEmpty):
		return openZipEntry(f, openErr)
	default:
		return io.NopCloser(br), nil
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
