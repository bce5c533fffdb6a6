package loader

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zip"
	"github.com/klauspost/compress/zstd"
)

// inputContent is what the test files hold once decompressed.
const inputContent = `{"vulnerabilities": ["CVE-2024-0001", "CVE-2024-0002"]}` + "\n"

func writeInputFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func inputGzip(t *testing.T, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func inputZstd(t *testing.T, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := zstd.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// inputZipEntry is one entry of a test archive; a name ending in "/" is a
// directory.
type inputZipEntry struct {
	name string
	data []byte
}

func inputZip(t *testing.T, entries ...inputZipEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range entries {
		w, err := zw.Create(e.name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(e.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readInputFile opens path with openInput and reads it whole.
func readInputFile(t *testing.T, path string) ([]byte, error) {
	t.Helper()
	rc, err := openInput(path)
	if err != nil {
		return nil, err
	}
	data, err := io.ReadAll(rc)
	if cerr := rc.Close(); cerr != nil && err == nil {
		err = cerr
	}
	return data, err
}

func TestOpenInputRoundTrip(t *testing.T) {
	content := []byte(inputContent)
	tests := []struct {
		name string // file name; the extensions deliberately lie
		data []byte
		want []byte
	}{
		{"plain.json", content, content},
		{"plain-named.json.gz", content, content},
		{"gzip.json.gz", inputGzip(t, content), content},
		{"gzip-named.json", inputGzip(t, content), content},
		{"zstd.json.zst", inputZstd(t, content), content},
		{"zstd-named.json.gz", inputZstd(t, content), content},
		{"one.xml.zip", inputZip(t, inputZipEntry{"cwec.xml", content}), content},
		{"dir-and-file.zip", inputZip(t, inputZipEntry{"data/", nil}, inputZipEntry{"data/cwec.xml", content}), content},
		{"empty-entry.zip", inputZip(t, inputZipEntry{"empty.json", nil}), nil},
		{"empty.json", nil, nil},
		{"one-byte", []byte{0x1f}, []byte{0x1f}},
		{"three-bytes", []byte{0x28, 0xb5, 0x2f}, []byte{0x28, 0xb5, 0x2f}},
		{"gzip-empty.gz", inputGzip(t, nil), nil},
		{"gzip-concatenated.gz", append(inputGzip(t, content[:10]), inputGzip(t, content[10:])...), content},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeInputFile(t, tt.name, tt.data)
			got, err := readInputFile(t, path)
			if err != nil {
				t.Fatalf("openInput(%s): %v", tt.name, err)
			}
			if !bytes.Equal(got, tt.want) {
				t.Errorf("openInput(%s) content = %q, want %q", tt.name, got, tt.want)
			}
		})
	}
}

// TestOpenInputLarge streams a few megabytes through each format in
// small reads.
func TestOpenInputLarge(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 4<<20; i++ {
		b.WriteString(`{"id": "CVE-2024-`)
		b.WriteString(strings.Repeat("x", i%17))
		b.WriteString(`"}` + "\n")
	}
	content := []byte(b.String())
	for name, data := range map[string][]byte{
		"plain": content,
		"gzip":  inputGzip(t, content),
		"zstd":  inputZstd(t, content),
		"zip":   inputZip(t, inputZipEntry{"big.json", content}),
	} {
		t.Run(name, func(t *testing.T) {
			rc, err := openInput(writeInputFile(t, name, data))
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			var got bytes.Buffer
			buf := make([]byte, 1000)
			if _, err := io.CopyBuffer(&got, struct{ io.Reader }{rc}, buf); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), content) {
				t.Errorf("content differs: got %d bytes, want %d", got.Len(), len(content))
			}
		})
	}
}

func TestOpenInputZipEntryCount(t *testing.T) {
	tests := []struct {
		name    string
		entries []inputZipEntry
		want    string
	}{
		{"none.zip", nil, "zip archive holds 0 files, want exactly 1"},
		{"only-dir.zip", []inputZipEntry{{"dir/", nil}}, "zip archive holds 0 files, want exactly 1"},
		{"two.zip", []inputZipEntry{{"a.xml", []byte("a")}, {"b.xml", []byte("b")}}, "zip archive holds 2 files, want exactly 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeInputFile(t, tt.name, inputZip(t, tt.entries...))
			rc, err := openInput(path)
			if err == nil {
				rc.Close()
				t.Fatalf("openInput(%s) succeeded, want error", tt.name)
			}
			want := "loader: open " + path + ": " + tt.want
			if err.Error() != want {
				t.Errorf("openInput(%s) error = %q, want %q", tt.name, err, want)
			}
		})
	}
}

func TestOpenInputErrors(t *testing.T) {
	content := []byte(strings.Repeat(inputContent, 100))
	gz := inputGzip(t, content)
	zs := inputZstd(t, content)
	zp := inputZip(t, inputZipEntry{"x.json", content})

	t.Run("missing file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "feeds", "nvdcve-2.0-2024.json.gz")
		_, err := openInput(path)
		if err == nil {
			t.Fatal("openInput succeeded on a missing file")
		}
		if want := "loader: open " + path + ": "; !strings.HasPrefix(err.Error(), want) {
			t.Errorf("error = %q, want prefix %q", err, want)
		}
		if !errors.Is(err, os.ErrNotExist) {
			t.Errorf("error %q is not os.ErrNotExist", err)
		}
	})

	t.Run("bad gzip header", func(t *testing.T) {
		// Compression method 7 instead of 8 (deflate).
		path := writeInputFile(t, "x.json.gz", []byte{0x1f, 0x8b, 0x07, 0, 0, 0, 0, 0, 0, 0xff, 'x', 'y', 'z'})
		_, err := openInput(path)
		if err == nil {
			t.Fatal("openInput succeeded on a bad gzip header")
		}
		if want := "loader: open " + path + ": gzip: invalid header"; err.Error() != want {
			t.Errorf("error = %q, want %q", err, want)
		}
	})

	t.Run("bad zip", func(t *testing.T) {
		path := writeInputFile(t, "x.zip", []byte("PK\x03\x04 not really a zip archive"))
		_, err := openInput(path)
		if err == nil {
			t.Fatal("openInput succeeded on a bad zip archive")
		}
		if want := "loader: open " + path + ": zip: "; !strings.HasPrefix(err.Error(), want) {
			t.Errorf("error = %q, want prefix %q", err, want)
		}
	})

	t.Run("directory", func(t *testing.T) {
		path := t.TempDir()
		_, err := readInputFile(t, path)
		if err == nil {
			t.Fatal("reading a directory succeeded")
		}
		if !strings.Contains(err.Error(), path) {
			t.Errorf("error %q does not name %s", err, path)
		}
	})

	// Truncated streams open fine (the header is intact) and fail on
	// read, naming the file.
	for name, data := range map[string][]byte{
		"truncated.json.gz":  gz[:len(gz)/2],
		"no-trailer.json.gz": gz[:len(gz)-4],
		"truncated.json.zst": zs[:len(zs)/2],
	} {
		t.Run(name, func(t *testing.T) {
			path := writeInputFile(t, name, data)
			rc, err := openInput(path)
			if err != nil {
				t.Fatalf("openInput: %v", err)
			}
			defer rc.Close()
			_, err = io.ReadAll(rc)
			if err == nil {
				t.Fatal("reading a truncated stream succeeded")
			}
			if want := "loader: read " + path + ": "; !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error = %q, want prefix %q", err, want)
			}
		})
	}

	t.Run("truncated zip", func(t *testing.T) {
		// Cutting the end loses the central directory, so this fails on
		// open.
		path := writeInputFile(t, "truncated.zip", zp[:len(zp)/2])
		_, err := readInputFile(t, path)
		if err == nil {
			t.Fatal("reading a truncated zip succeeded")
		}
		if !strings.HasPrefix(err.Error(), "loader: open "+path+": ") {
			t.Errorf("error %q does not start with loader: open %s", err, path)
		}
	})

	t.Run("corrupt zip entry", func(t *testing.T) {
		bad := bytes.Clone(zp)
		// Flip a byte of the compressed data (after the 30-byte local
		// header and the 6-byte name): the checksum or inflate fails.
		bad[30+len("x.json")+5] ^= 0xff
		path := writeInputFile(t, "corrupt.zip", bad)
		_, err := readInputFile(t, path)
		if err == nil {
			t.Fatal("reading a corrupt zip entry succeeded")
		}
		if !strings.Contains(err.Error(), path) {
			t.Errorf("error %q does not name %s", err, path)
		}
	})
}

func TestOpenInputCloseTwice(t *testing.T) {
	for name, data := range map[string][]byte{
		"plain": []byte(inputContent),
		"gzip":  inputGzip(t, []byte(inputContent)),
		"zstd":  inputZstd(t, []byte(inputContent)),
		"zip":   inputZip(t, inputZipEntry{"a", []byte(inputContent)}),
	} {
		rc, err := openInput(writeInputFile(t, name, data))
		if err != nil {
			t.Fatal(err)
		}
		if err := rc.Close(); err != nil {
			t.Errorf("%s: first Close: %v", name, err)
		}
		if err := rc.Close(); err != nil {
			t.Errorf("%s: second Close: %v", name, err)
		}
	}
}

// TestOpenInputSum: the size and SHA-256 an input reports are those of
// the file's bytes, whatever the format and however much of it the
// decoder read (gzip can stop before trailing bytes; zip reads at random).
func TestOpenInputSum(t *testing.T) {
	content := []byte(inputContent)
	for _, tt := range []struct {
		name string
		data []byte
		read int // decompressed bytes read before Sum; -1: all
	}{
		{"plain.json", content, -1},
		{"plain-unread.json", content, 0},
		{"gzip.gz", inputGzip(t, content), -1},
		{"gzip-one-byte.gz", inputGzip(t, content), 1},
		{"zstd.zst", inputZstd(t, content), 5},
		{"one.zip", inputZip(t, inputZipEntry{"a.json", content}), -1},
		{"one-unread.zip", inputZip(t, inputZipEntry{"a.json", content}), 0},
		{"large-plain.json", bytes.Repeat(content, 20000), 70000},
		{"empty.json", nil, -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := writeInputFile(t, tt.name, tt.data)
			rc, err := openInput(path)
			if err != nil {
				t.Fatal(err)
			}
			defer rc.Close()
			if tt.read < 0 {
				_, err = io.ReadAll(rc)
			} else {
				_, err = io.ReadFull(rc, make([]byte, tt.read))
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := rc.Sum()
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(tt.data)
			want := FileInfo{Name: tt.name, Size: int64(len(tt.data)), SHA256: hex.EncodeToString(sum[:])}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("Sum() (-want +got):\n%s", d)
			}
		})
	}
}

// TestBuildFromPipe: a feed given as a pipe (vulnd build ... <(zcat f))
// is read once, and the manifest still holds its size and SHA-256. A
// build that opened its inputs a second time to hash them blocked for
// ever here.
func TestBuildFromPipe(t *testing.T) {
	dir := t.TempDir()
	cwe, feedFile := smallInputs(t, dir)
	data, err := os.ReadFile(feedFile)
	if err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "feed.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	go func() {
		w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
		if err != nil {
			return
		}
		w.Write(inputGzip(t, data))
		w.Close()
	}()
	done := make(chan error, 1)
	var m Manifest
	go func() {
		var err error
		m, err = Build(BuildOptions{CWECatalog: cwe, Feeds: []string{fifo}, Out: filepath.Join(dir, "out"), Time: buildTime})
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("build from a pipe still running after 30 s")
	}
	gz := inputGzip(t, data)
	sum := sha256.Sum256(gz)
	want := FileInfo{Name: "feed.fifo", Size: int64(len(gz)), SHA256: hex.EncodeToString(sum[:])}
	if len(m.Inputs) != 2 {
		t.Fatalf("manifest inputs %+v, want the catalog and the pipe", m.Inputs)
	}
	if d := cmp.Diff(want, m.Inputs[1]); d != "" {
		t.Errorf("the pipe's input (-want +got):\n%s", d)
	}
	if m.Counts.CVEs != 1 {
		t.Errorf("counts %+v, want 1 CVE", m.Counts)
	}
}
