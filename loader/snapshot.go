package loader

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/goccy/go-json"
	"github.com/klauspost/compress/zstd"

	"github.com/vulnd/vulnd/index"
)

// FormatVersion is the snapshot layout this build writes and reads.
// Version 2 added ids.jsonl.zst (the id tables change tracking keeps).
const FormatVersion = 2

// formatName marks a manifest as vulnd's.
const formatName = "vulnd-snapshot"

// ManifestName is the manifest's file name inside a snapshot directory.
const ManifestName = "manifest.json"

// Limits on what a snapshot may claim, checked before anything is decoded.
const (
	maxManifestBytes = 1 << 20
	maxDecodedBytes  = 8 << 30   // per data file, after decompression
	zstdMaxMemory    = 512 << 20 // zstd window and buffers
)

// The data files of format 1, in load order.
const (
	fileCWEs    = "cwes.jsonl.zst"
	fileCVEs    = "cves.jsonl.zst"
	fileReports = "reports.jsonl.zst"
	fileIDs     = "ids.jsonl.zst"
)

// Manifest describes a snapshot directory: what wrote it, when, what it
// holds and a checksum of every data file.
type Manifest struct {
	Format  string              `json:"format"`
	Version int                 `json:"version"`
	BuiltAt string              `json:"built_at"`
	Counts  index.Counts        `json:"counts"`
	Files   map[string]FileInfo `json:"files"`
	Inputs  []FileInfo          `json:"inputs,omitempty"`
}

// FileInfo is one file of a snapshot (or one input of its build): its
// name, size in bytes, SHA-256, and for data files the number of records.
type FileInfo struct {
	Name    string `json:"name"`
	Size    int64  `json:"size"`
	SHA256  string `json:"sha256"`
	Records int    `json:"records,omitempty"`
}

// Snapshot is a snapshot read from its directory: its manifest and the
// records it holds.
type Snapshot struct {
	Dir      string
	Manifest Manifest
	// ID is derived from the manifest's bytes, so it changes whenever any
	// data file or the build time does.
	ID   string
	Data *index.Data
	// ids are the id tables; nil when read without them (Load).
	ids *idTables
}

// Load reads the snapshot in dir, checks every file against the manifest
// and builds its index. Any problem is an error naming the file; nothing
// partial is returned. The records are dropped once the index is built.
func Load(dir string) (*index.Index, Manifest, error) {
	s, err := read(dir, false)
	if err != nil {
		return nil, Manifest{}, err
	}
	ix, err := s.index()
	if err != nil {
		return nil, Manifest{}, err
	}
	return ix, s.Manifest, nil
}

// Validate checks the snapshot in dir as Load does (format version, sizes,
// checksums, decodability, counts and the index's own consistency checks)
// and also decodes the id tables, which serving does not need.
func Validate(dir string) (Manifest, error) {
	s, err := Read(dir)
	if err != nil {
		return Manifest{}, err
	}
	if _, err := s.index(); err != nil {
		return Manifest{}, err
	}
	return s.Manifest, nil
}

// index builds the snapshot's index and checks its counts against the
// manifest's.
func (s *Snapshot) index() (*index.Index, error) {
	ix, err := index.Build(s.Data, index.Meta{ID: s.ID, BuiltAt: s.Manifest.BuiltAt})
	if err != nil {
		return nil, fmt.Errorf("loader: snapshot %s: %w", s.Dir, err)
	}
	if got, want := ix.Counts(), s.Manifest.Counts; got != want {
		return nil, fmt.Errorf("loader: snapshot %s: manifest counts %+v, data holds %+v", s.Dir, want, got)
	}
	return ix, nil
}

// Read reads and checks every file of the snapshot in dir, id tables
// included, without building an index; a build with -previous uses it.
func Read(dir string) (*Snapshot, error) { return read(dir, true) }

func read(dir string, withIDs bool) (*Snapshot, error) {
	raw, err := readManifestBytes(dir)
	if err != nil {
		return nil, err
	}
	m, err := parseManifest(raw)
	if err != nil {
		return nil, fmt.Errorf("loader: snapshot %s: %s: %w", dir, ManifestName, err)
	}
	sum := sha256.Sum256(raw)
	s := &Snapshot{Dir: dir, Manifest: m, ID: hex.EncodeToString(sum[:12]), Data: &index.Data{}}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderMaxMemory(zstdMaxMemory), zstd.WithDecoderConcurrency(1))
	if err != nil {
		return nil, fmt.Errorf("loader: zstd: %w", err)
	}
	defer dec.Close()
	read := func(key string, each func(*json.Decoder) error) error {
		fi := m.Files[key]
		n, err := readDataFile(dir, fi, dec, each)
		if err != nil {
			return fmt.Errorf("loader: snapshot %s: %s: %w", dir, fi.Name, err)
		}
		if each != nil && n != fi.Records {
			return fmt.Errorf("loader: snapshot %s: %s: holds %d records, manifest says %d", dir, fi.Name, n, fi.Records)
		}
		return nil
	}
	d := s.Data
	if err := read("cwes", func(j *json.Decoder) error { return decodeInto(j, &d.CWEs) }); err != nil {
		return nil, err
	}
	d.CVEs = make([]index.CVE, 0, m.Files["cves"].Records)
	if err := read("cves", func(j *json.Decoder) error { return decodeInto(j, &d.CVEs) }); err != nil {
		return nil, err
	}
	if err := read("reports", func(j *json.Decoder) error { return decodeInto(j, &d.Reports) }); err != nil {
		return nil, err
	}
	// Serving needs no ids: check the file's size and checksum only.
	var addID func(*json.Decoder) error
	if withIDs {
		s.ids = newIDTables()
		addID = func(j *json.Decoder) error {
			var r idRecord
			if err := j.Decode(&r); err != nil {
				return err
			}
			return s.ids.add(r)
		}
	}
	if err := read("ids", addID); err != nil {
		return nil, err
	}
	return s, nil
}

func decodeInto[T any](j *json.Decoder, dst *[]T) error {
	var v T
	if err := j.Decode(&v); err != nil {
		return err
	}
	*dst = append(*dst, v)
	return nil
}

func readManifestBytes(dir string) ([]byte, error) {
	f, err := os.Open(filepath.Join(dir, ManifestName))
	if err != nil {
		return nil, fmt.Errorf("loader: snapshot %s: %w", dir, err)
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxManifestBytes+1))
	if err != nil {
		return nil, fmt.Errorf("loader: snapshot %s: %s: %w", dir, ManifestName, err)
	}
	if len(raw) > maxManifestBytes {
		return nil, fmt.Errorf("loader: snapshot %s: %s is larger than %d bytes", dir, ManifestName, maxManifestBytes)
	}
	return raw, nil
}

func parseManifest(raw []byte) (Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return m, err
	}
	if m.Format != formatName {
		return m, fmt.Errorf("format %q is not %q", m.Format, formatName)
	}
	if m.Version != FormatVersion {
		return m, fmt.Errorf("format version %d is not supported (this vulnd reads version %d)", m.Version, FormatVersion)
	}
	if _, err := time.Parse(TimeLayout, m.BuiltAt); err != nil {
		return m, fmt.Errorf("built_at %q is not a timestamp", m.BuiltAt)
	}
	want := map[string]string{"cwes": fileCWEs, "cves": fileCVEs, "reports": fileReports, "ids": fileIDs}
	if len(m.Files) != len(want) {
		return m, fmt.Errorf("lists %d data files, want %d", len(m.Files), len(want))
	}
	for key, name := range want {
		fi, ok := m.Files[key]
		if !ok {
			return m, fmt.Errorf("no %q file", key)
		}
		if fi.Name != name {
			return m, fmt.Errorf("%s file is %q, want %q", key, fi.Name, name)
		}
		if fi.Size < 0 || fi.Records < 0 || len(fi.SHA256) != 64 {
			return m, fmt.Errorf("%s file: bad size, records or sha256", key)
		}
	}
	return m, nil
}

// readDataFile streams one zstd JSON-lines file, calling each once per
// record. It checks the size before decoding and the SHA-256 after, and
// caps the decoded size.
func readDataFile(dir string, fi FileInfo, dec *zstd.Decoder, each func(*json.Decoder) error) (int, error) {
	f, err := os.Open(filepath.Join(dir, fi.Name))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	if !st.Mode().IsRegular() {
		return 0, errors.New("not a regular file")
	}
	if st.Size() != fi.Size {
		return 0, fmt.Errorf("size %d, manifest says %d", st.Size(), fi.Size)
	}
	h := sha256.New()
	if each == nil {
		if _, err := io.Copy(h, f); err != nil {
			return 0, err
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != fi.SHA256 {
			return 0, fmt.Errorf("sha256 %s, manifest says %s", got, fi.SHA256)
		}
		return 0, nil
	}
	if err := dec.Reset(io.TeeReader(io.LimitReader(f, fi.Size), h)); err != nil {
		return 0, fmt.Errorf("zstd: %w", err)
	}
	lr := &limitedReader{r: dec, n: maxDecodedBytes}
	j := json.NewDecoder(bufio.NewReaderSize(lr, 1<<16))
	n := 0
	for j.More() {
		if err := each(j); err != nil {
			if lr.n <= 0 {
				return n, fmt.Errorf("decodes to more than %d bytes", int64(maxDecodedBytes))
			}
			return n, fmt.Errorf("record %d: %w", n+1, err)
		}
		n++
	}
	// Drain so the whole compressed file is hashed, and check it ended
	// cleanly.
	if _, err := io.Copy(io.Discard, lr); err != nil {
		return n, fmt.Errorf("zstd: %w", err)
	}
	if _, err := io.Copy(h, f); err != nil {
		return n, err
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != fi.SHA256 {
		return n, fmt.Errorf("sha256 %s, manifest says %s", got, fi.SHA256)
	}
	return n, nil
}

type limitedReader struct {
	r io.Reader
	n int64
}

func (l *limitedReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		return 0, fmt.Errorf("decodes to more than %d bytes", int64(maxDecodedBytes))
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

// Write writes d as a snapshot into dir, atomically: everything is written
// into a temporary directory beside dir, synced, and renamed into place;
// an existing dir is replaced only once the new one is complete. builtAt
// is the build time; inputs describe what it was built from. The id tables
// stored with it are those of d: ids already set are kept, and CPEs and
// metrics with id 0 get fresh ones (d is updated).
func Write(dir string, d *index.Data, builtAt time.Time, inputs []FileInfo) (Manifest, error) {
	return write(dir, d, tablesFromData(d), builtAt, inputs)
}

// tablesFromData makes id tables holding the ids d already carries, then
// assigns the missing ones.
func tablesFromData(d *index.Data) *idTables {
	t := newIDTables()
	for i := range d.CVEs {
		c := &d.CVEs[i]
		for _, p := range c.CPEs {
			if p.ID > 0 {
				t.add(idRecord{Table: "cpe", ID: p.ID, URI: p.URI})
			}
		}
		for _, m := range c.Metrics {
			if m.ID > 0 {
				t.add(idRecord{Table: "cvss", ID: m.ID, CVE: c.Name, Version: m.Version, Source: m.Source})
			}
		}
	}
	for _, r := range d.Reports {
		for _, a := range r.Alerts {
			t.nextAlert = max(t.nextAlert, a.ID+1)
		}
	}
	t.assign(d.CVEs)
	return t
}

func write(dir string, d *index.Data, ids *idTables, builtAt time.Time, inputs []FileInfo) (Manifest, error) {
	m := Manifest{
		Format:  formatName,
		Version: FormatVersion,
		BuiltAt: formatTime(builtAt),
		Files:   map[string]FileInfo{},
		Inputs:  inputs,
	}
	// The index checks the data and gives the counts; a build that would
	// not load is refused here rather than at serve time.
	ix, err := index.Build(d, index.Meta{})
	if err != nil {
		return m, fmt.Errorf("loader: build %s: %w", dir, err)
	}
	m.Counts = ix.Counts()

	parent := filepath.Dir(filepath.Clean(dir))
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".tmp-")
	if err != nil {
		return m, fmt.Errorf("loader: build %s: %w", dir, err)
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp)
		}
	}()
	idRecs := ids.records()
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault))
	if err != nil {
		return m, fmt.Errorf("loader: zstd: %w", err)
	}
	defer enc.Close()
	files := []struct {
		key, name string
		n         int
		each      func(*json.Encoder, int) error
	}{
		{"cwes", fileCWEs, len(d.CWEs), func(e *json.Encoder, i int) error { return e.Encode(&d.CWEs[i]) }},
		{"cves", fileCVEs, len(d.CVEs), func(e *json.Encoder, i int) error { return e.Encode(&d.CVEs[i]) }},
		{"reports", fileReports, len(d.Reports), func(e *json.Encoder, i int) error { return e.Encode(&d.Reports[i]) }},
		{"ids", fileIDs, len(idRecs), func(e *json.Encoder, i int) error { return e.Encode(&idRecs[i]) }},
	}
	for _, f := range files {
		fi, err := writeDataFile(filepath.Join(tmp, f.name), enc, f.n, f.each)
		if err != nil {
			return m, fmt.Errorf("loader: build %s: %s: %w", dir, f.name, err)
		}
		m.Files[f.key] = fi
	}
	raw, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return m, err
	}
	if err := writeFileSync(filepath.Join(tmp, ManifestName), append(raw, '\n')); err != nil {
		return m, fmt.Errorf("loader: build %s: %w", dir, err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return m, fmt.Errorf("loader: build %s: %w", dir, err)
	}
	if err := replaceDir(tmp, dir); err != nil {
		return m, fmt.Errorf("loader: build %s: %w", dir, err)
	}
	done = true
	return m, nil
}

func writeDataFile(path string, enc *zstd.Encoder, n int, each func(*json.Encoder, int) error) (FileInfo, error) {
	fi := FileInfo{Name: filepath.Base(path), Records: n}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fi, err
	}
	defer f.Close()
	h := sha256.New()
	cw := &countWriter{w: io.MultiWriter(f, h)}
	bw := bufio.NewWriterSize(cw, 1<<16)
	enc.Reset(bw)
	je := json.NewEncoder(enc)
	je.SetEscapeHTML(false)
	for i := 0; i < n; i++ {
		if err := each(je, i); err != nil {
			return fi, fmt.Errorf("record %d: %w", i+1, err)
		}
	}
	if err := enc.Close(); err != nil {
		return fi, err
	}
	if err := bw.Flush(); err != nil {
		return fi, err
	}
	if err := f.Sync(); err != nil {
		return fi, err
	}
	fi.Size = cw.n
	fi.SHA256 = hex.EncodeToString(h.Sum(nil))
	return fi, f.Close()
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func writeFileSync(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// replaceDir renames the complete directory tmp to dir. An existing dir is
// first moved aside and removed after the rename, so at no point is a
// half-written directory at dir.
func replaceDir(tmp, dir string) error {
	old := ""
	if _, err := os.Lstat(dir); err == nil {
		old = tmp + ".old"
		if err := os.Rename(dir, old); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		if old != "" {
			os.Rename(old, dir)
		}
		return err
	}
	syncDir(filepath.Dir(dir))
	if old != "" {
		return os.RemoveAll(old)
	}
	return nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// hashFile returns the size and SHA-256 of a file, for the manifest's
// list of inputs.
func hashFile(path string) (FileInfo, error) {
	f, err := os.Open(path)
	if err != nil {
		return FileInfo{}, fmt.Errorf("loader: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return FileInfo{}, fmt.Errorf("loader: read %s: %w", path, err)
	}
	return FileInfo{Name: filepath.Base(path), Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}
