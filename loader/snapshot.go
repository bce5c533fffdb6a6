package loader

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/goccy/go-json"
	"github.com/klauspost/compress/zstd"

	"github.com/vulnd/vulnd/index"
)

// FormatVersion is the snapshot layout this build writes and reads.
// Version 2 added ids.jsonl.zst (the id tables change tracking keeps).
// Version 3 stores each CVE as its API body, moves the CVSS metrics kept
// for change tracking to metrics.jsonl.zst, and splits every data file
// into chunks listed in the manifest. Version 4 adds details.txt.zst and
// strings.jsonl.zst: each CVE's NVD status, KEV entry and CVSS metrics
// with vectors and severities, for GET /cve/{name}/details.
const FormatVersion = 4

// previousVersion is the oldest format a build still reads as -previous
// (its reports and ids carry over); serve and validate read only
// FormatVersion.
const previousVersion = 3

// formatName marks a manifest as vulnd's.
const formatName = "vulnd-snapshot"

// ManifestName is the manifest's file name inside a snapshot directory.
const ManifestName = "manifest.json"

// maxManifestBytes bounds the manifest, read before anything else.
const maxManifestBytes = 1 << 20

// The data files, by role (the manifest's keys) and fixed name.
const (
	keyCWEs    = "cwes"
	keyCVEs    = "cves"
	keyMetrics = "metrics"
	keyReports = "reports"
	keyIDs     = "ids"
	keyDetails = "details"
	keyStrings = "strings"

	fileCWEs    = "cwes.jsonl.zst"
	fileCVEs    = "cves.jsonl.zst"
	fileMetrics = "metrics.jsonl.zst"
	fileReports = "reports.jsonl.zst"
	fileIDs     = "ids.jsonl.zst"
	fileDetails = "details.txt.zst"
	fileStrings = "strings.jsonl.zst"
)

var dataFiles = map[string]string{
	keyCWEs: fileCWEs, keyCVEs: fileCVEs, keyMetrics: fileMetrics, keyReports: fileReports, keyIDs: fileIDs,
	keyDetails: fileDetails, keyStrings: fileStrings,
}

// dataFilesOf are the data files of a snapshot of format version v.
func dataFilesOf(v int) map[string]string {
	if v >= 4 {
		return dataFiles
	}
	old := maps.Clone(dataFiles)
	delete(old, keyDetails)
	delete(old, keyStrings)
	return old
}

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
// name, size in bytes and SHA-256, and for data files the number of
// records, the decoded size and the chunks.
type FileInfo struct {
	Name    string  `json:"name"`
	Size    int64   `json:"size"`
	SHA256  string  `json:"sha256"`
	Records int     `json:"records,omitempty"`
	Bytes   int64   `json:"bytes,omitempty"`
	Chunks  []Chunk `json:"chunks,omitempty"`
}

// Snapshot is a snapshot read whole from its directory: its manifest and
// the records it holds.
type Snapshot struct {
	Dir      string
	Manifest Manifest
	// ID is derived from the manifest's bytes, so it changes whenever any
	// data file or the build time does.
	ID   string
	Data *index.Data
	// ids are the id tables.
	ids *idTables
	// details are the CVEs' details, in Data.CVEs order (nil for a
	// snapshot of the previous format).
	details *index.Details
}

// metricsRecord is one line of metrics.jsonl.zst: the CVSS metrics of one
// CVE, kept for change tracking and never served.
type metricsRecord struct {
	CVE     string         `json:"cve"`
	Metrics []index.Metric `json:"metrics"`
}

// Load reads the snapshot in dir and builds its index: the CVE bodies are
// decoded in parallel into one buffer and served from it; the files
// serving does not need (metrics, ids) are checked against their sums
// only. Any problem is an error naming the file; nothing partial is
// returned.
func Load(dir string) (*index.Index, Manifest, error) {
	start := time.Now()
	o, err := openSnapshot(dir, false)
	if err != nil {
		return nil, Manifest{}, err
	}
	m, id, dec, wrap := o.m, o.id, o.dec, o.wrap
	cwes, err := decodeRecords[index.CWE](dir, m.Files[keyCWEs], dec)
	if err != nil {
		return nil, Manifest{}, wrap(keyCWEs, err)
	}
	entries, err := decodeEntries(dir, m.Files[keyCVEs], dec)
	if err != nil {
		return nil, Manifest{}, wrap(keyCVEs, err)
	}
	reports, err := decodeRecords[index.Report](dir, m.Files[keyReports], dec)
	if err != nil {
		return nil, Manifest{}, wrap(keyReports, err)
	}
	details, err := decodeDetails(dir, m, dec)
	if err != nil {
		return nil, Manifest{}, err
	}
	for _, key := range []string{keyMetrics, keyIDs} {
		if err := verifyFile(dir, m.Files[key]); err != nil {
			return nil, Manifest{}, wrap(key, err)
		}
	}
	ix, err := buildIndex(dir, m, id, start, cwes, entries, details, reports)
	if err != nil {
		return nil, Manifest{}, err
	}
	return ix, m, nil
}

// buildIndex builds a snapshot's index and checks its counts against the
// manifest's.
func buildIndex(dir string, m Manifest, id string, start time.Time, cwes []index.CWE, entries []index.CVEEntry, details *index.Details, reports []index.Report) (*index.Index, error) {
	meta := index.Meta{ID: id, BuiltAt: m.BuiltAt, Format: m.Version, LoadStarted: start}
	meta.Artifact, _ = ReadArtifact(dir)
	for _, in := range m.Inputs {
		meta.Inputs = append(meta.Inputs, index.Input{Name: in.Name, Size: in.Size, SHA256: in.SHA256})
	}
	ix, err := index.BuildEntries(cwes, entries, details, reports, meta)
	if err != nil {
		return nil, fmt.Errorf("loader: snapshot %s: %w", dir, err)
	}
	if got, want := ix.Counts(), m.Counts; got != want {
		return nil, fmt.Errorf("loader: snapshot %s: manifest counts %+v, data holds %+v", dir, want, got)
	}
	return ix, nil
}

// Validate checks the snapshot in dir as Load does (format version, sizes,
// checksums, decodability, counts and the index's own consistency checks)
// and more: it decodes every file, checks every CVE body is exactly what
// this vulnd would serve for its record, and checks the whole-file sums.
func Validate(dir string) (Manifest, error) {
	s, bodies, err := read(dir, false)
	if err != nil {
		return Manifest{}, err
	}
	entries := make([]index.CVEEntry, len(bodies))
	for i, b := range bodies {
		c := &s.Data.CVEs[i]
		if !bytes.Equal(index.EncodeCVE(c), b) {
			return Manifest{}, fmt.Errorf("loader: snapshot %s: %s: record %d (%s) is not the body this vulnd serves for it",
				dir, fileCVEs, i+1, c.Name)
		}
		if entries[i], err = index.ScanCVE(b); err != nil {
			return Manifest{}, fmt.Errorf("loader: snapshot %s: %s: record %d: %w", dir, fileCVEs, i+1, err)
		}
	}
	if _, err := buildIndex(dir, s.Manifest, s.ID, time.Time{}, s.Data.CWEs, entries, s.details, s.Data.Reports); err != nil {
		return Manifest{}, err
	}
	for _, key := range sortedKeys(dataFilesOf(s.Manifest.Version)) {
		if err := verifyFile(dir, s.Manifest.Files[key]); err != nil {
			return Manifest{}, fmt.Errorf("loader: snapshot %s: %s: %w", dir, s.Manifest.Files[key].Name, err)
		}
	}
	return s.Manifest, nil
}

// Read reads and checks every file of the snapshot in dir and decodes
// every record, id tables included, without building an index; a build
// with -previous uses it. It also reads a snapshot of the previous format
// version, so that an upgrade keeps the reports and ids.
func Read(dir string) (*Snapshot, error) {
	s, _, err := read(dir, true)
	return s, err
}

// read is Read, also returning the stored CVE bodies (in Data.CVEs order);
// old allows the previous format version.
func read(dir string, old bool) (*Snapshot, [][]byte, error) {
	o, err := openSnapshot(dir, old)
	if err != nil {
		return nil, nil, err
	}
	m, id, dec, wrap := o.m, o.id, o.dec, o.wrap
	s := &Snapshot{Dir: dir, Manifest: m, ID: id, Data: &index.Data{}, ids: newIDTables()}
	d := s.Data
	if d.CWEs, err = decodeRecords[index.CWE](dir, m.Files[keyCWEs], dec); err != nil {
		return nil, nil, wrap(keyCWEs, err)
	}
	fi := m.Files[keyCVEs]
	bodies := make([][]byte, fi.Records)
	d.CVEs = make([]index.CVE, fi.Records)
	if err := eachRecord(dir, fi, dec, func(n int, line []byte) error {
		bodies[n] = line
		return json.Unmarshal(line, &d.CVEs[n])
	}); err != nil {
		return nil, nil, wrap(keyCVEs, err)
	}
	metrics, err := decodeRecords[metricsRecord](dir, m.Files[keyMetrics], dec)
	if err != nil {
		return nil, nil, wrap(keyMetrics, err)
	}
	if err := joinMetrics(d.CVEs, metrics); err != nil {
		return nil, nil, wrap(keyMetrics, err)
	}
	if d.Reports, err = decodeRecords[index.Report](dir, m.Files[keyReports], dec); err != nil {
		return nil, nil, wrap(keyReports, err)
	}
	idRecs, err := decodeRecords[idRecord](dir, m.Files[keyIDs], dec)
	if err != nil {
		return nil, nil, wrap(keyIDs, err)
	}
	for i, r := range idRecs {
		if err := s.ids.add(r); err != nil {
			return nil, nil, wrap(keyIDs, fmt.Errorf("record %d: %w", i+1, err))
		}
	}
	if m.Version >= 4 {
		if s.details, err = decodeDetails(dir, m, dec); err != nil {
			return nil, nil, err
		}
	}
	return s, bodies, nil
}

// opened is what Load and read start from: the checked manifest, the
// snapshot id, the decoder, and how to name a data file in an error.
type opened struct {
	m    Manifest
	id   string
	dec  *zstd.Decoder
	wrap func(key string, err error) error
}

// openSnapshot reads and checks dir's manifest (old: the previous format
// version too) and gets the decoder.
func openSnapshot(dir string, old bool) (opened, error) {
	m, id, err := readManifest(dir, old)
	if err != nil {
		return opened{}, err
	}
	dec, err := decoder()
	if err != nil {
		return opened{}, fmt.Errorf("loader: zstd: %w", err)
	}
	return opened{m, id, dec, func(key string, err error) error {
		return fmt.Errorf("loader: snapshot %s: %s: %w", dir, m.Files[key].Name, err)
	}}, nil
}

// joinMetrics puts each metrics record on its CVE.
func joinMetrics(cves []index.CVE, metrics []metricsRecord) error {
	pos := make(map[string]int, len(cves))
	for i := range cves {
		pos[cves[i].Name] = i
	}
	for n, r := range metrics {
		i, ok := pos[r.CVE]
		if !ok {
			return fmt.Errorf("record %d: metrics of %q, which the snapshot does not hold", n+1, r.CVE)
		}
		if cves[i].Metrics != nil {
			return fmt.Errorf("record %d: metrics of %s again", n+1, r.CVE)
		}
		cves[i].Metrics = r.Metrics
	}
	return nil
}

// decodeRecords decodes a data file of JSON lines into records of type T.
func decodeRecords[T any](dir string, fi FileInfo, dec *zstd.Decoder) ([]T, error) {
	out := make([]T, fi.Records)
	if err := eachRecord(dir, fi, dec, func(n int, line []byte) error {
		return json.Unmarshal(line, &out[n])
	}); err != nil {
		return nil, err
	}
	return out, nil
}

// decodeEntries decodes cves.jsonl.zst into index entries whose bodies
// are views into the decoded chunks.
func decodeEntries(dir string, fi FileInfo, dec *zstd.Decoder) ([]index.CVEEntry, error) {
	out := make([]index.CVEEntry, fi.Records)
	if err := eachRecord(dir, fi, dec, func(n int, line []byte) error {
		e, err := index.ScanCVE(line)
		out[n] = e
		return err
	}); err != nil {
		return nil, err
	}
	return out, nil
}

// readManifest reads and checks dir's manifest and derives the snapshot
// id from its bytes.
func readManifest(dir string, old bool) (Manifest, string, error) {
	raw, err := readManifestBytes(dir)
	if err != nil {
		return Manifest{}, "", err
	}
	m, err := parseManifest(raw, old)
	if err != nil {
		return Manifest{}, "", fmt.Errorf("loader: snapshot %s: %s: %w", dir, ManifestName, err)
	}
	return m, manifestID(raw), nil
}

// manifestID is a snapshot's id: a hash of its manifest's bytes, which
// hold the sum of every data file and the build time.
func manifestID(raw []byte) string {
	sum := sha256.Sum256(raw)
	return IDFromSum(hex.EncodeToString(sum[:]))
}

// IDFromSum is the id of the snapshot whose manifest's SHA-256 is sum (in
// hex): a replica that knows only the sum of a manifest it could
// download (an OCI layer's digest) tells from it whether that is the
// snapshot it serves. "" when sum is not 64 hex digits.
func IDFromSum(sum string) string {
	if len(sum) != 64 {
		return ""
	}
	if _, err := hex.DecodeString(sum); err != nil {
		return ""
	}
	return strings.ToLower(sum[:24])
}

// ID returns the id of the snapshot in dir from its manifest alone, as
// Load would give it, without reading or checking anything else: a
// server compares it with the id it serves to skip a reload of the same
// snapshot.
func ID(dir string) (string, error) {
	raw, err := readManifestBytes(dir)
	if err != nil {
		return "", err
	}
	return manifestID(raw), nil
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

// parseManifest decodes a manifest and checks everything it claims that
// can be checked without opening a data file.
func parseManifest(raw []byte, old bool) (Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return m, err
	}
	if m.Format != formatName {
		return m, fmt.Errorf("format %q is not %q", m.Format, formatName)
	}
	switch {
	case m.Version == FormatVersion, old && m.Version == previousVersion:
	case m.Version >= previousVersion && m.Version < FormatVersion:
		return m, fmt.Errorf("format version %d is older than this vulnd's %d: rebuild the snapshot with this vulnd (vulnd build; -previous reads a version %d snapshot, so its reports and ids carry over)", m.Version, FormatVersion, previousVersion)
	default:
		return m, fmt.Errorf("format version %d is not supported (this vulnd reads version %d); rebuild the snapshot with this vulnd", m.Version, FormatVersion)
	}
	if _, err := time.Parse(TimeLayout, m.BuiltAt); err != nil {
		return m, fmt.Errorf("built_at %q is not a timestamp", m.BuiltAt)
	}
	files := dataFilesOf(m.Version)
	if len(m.Files) != len(files) {
		return m, fmt.Errorf("lists %d data files, want %d", len(m.Files), len(files))
	}
	var total int64
	for _, key := range sortedKeys(files) {
		name := files[key]
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
		if err := checkChunks(fi); err != nil {
			return m, fmt.Errorf("%s file: %w", key, err)
		}
		total += fi.Bytes
	}
	if total > maxDecodedBytes {
		return m, fmt.Errorf("data files decode to %d bytes, over the limit of %d", total, int64(maxDecodedBytes))
	}
	return m, nil
}

func sortedKeys(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}

// Write writes d as a snapshot into dir, atomically: everything is written
// into a temporary directory beside dir, synced, and renamed into place;
// an existing dir is replaced only once the new one is complete, and only
// when it is a vulnd snapshot or an empty directory (never a file or any
// other directory: see checkReplace). builtAt is the build time; inputs
// describe what it was built from. The id tables
// stored with it are those of d: ids already set are kept, and CPEs and
// metrics with id 0 get fresh ones (d is updated).
func Write(dir string, d *index.Data, builtAt time.Time, inputs []FileInfo) (Manifest, error) {
	return write(dir, d, tablesFromData(d), builtAt, inputs, false)
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

func write(dir string, d *index.Data, ids *idTables, builtAt time.Time, inputs []FileInfo, force bool) (Manifest, error) {
	m := Manifest{
		Format:  formatName,
		Version: FormatVersion,
		BuiltAt: formatTime(builtAt),
		Files:   map[string]FileInfo{},
		Inputs:  inputs,
	}
	// The bodies are encoded once, for the file and for the index, which
	// checks the data and gives the counts: a build that would not load is
	// refused here rather than at serve time.
	bodies, entries, err := encodeCVEs(d.CVEs)
	if err != nil {
		return m, fmt.Errorf("loader: build %s: %w", dir, err)
	}
	// The index reorders the details it is given; the file keeps them in
	// the order of the CVE bodies, so it gets its own.
	check, err := buildDetails(d.CVEs)
	if err != nil {
		return m, fmt.Errorf("loader: build %s: %w", dir, err)
	}
	ix, err := index.BuildEntries(d.CWEs, entries, check, d.Reports, index.Meta{})
	if err != nil {
		return m, fmt.Errorf("loader: build %s: %w", dir, err)
	}
	m.Counts = ix.Counts()
	ix, entries, check = nil, nil, nil
	details, err := buildDetails(d.CVEs)
	if err != nil {
		return m, fmt.Errorf("loader: build %s: %w", dir, err)
	}

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
	var withMetrics []int
	for i := range d.CVEs {
		if len(d.CVEs[i].Metrics) > 0 {
			withMetrics = append(withMetrics, i)
		}
	}
	idRecs := ids.records()
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedDefault))
	if err != nil {
		return m, fmt.Errorf("loader: zstd: %w", err)
	}
	defer enc.Close()
	files := []struct {
		key  string
		n    int
		line func(int) ([]byte, error)
	}{
		{keyCWEs, len(d.CWEs), func(i int) ([]byte, error) { return marshal(&d.CWEs[i]) }},
		{keyCVEs, len(bodies), func(i int) ([]byte, error) { return bodies[i], nil }},
		{keyMetrics, len(withMetrics), func(i int) ([]byte, error) {
			c := &d.CVEs[withMetrics[i]]
			return marshal(&metricsRecord{CVE: c.Name, Metrics: c.Metrics})
		}},
		{keyReports, len(d.Reports), func(i int) ([]byte, error) { return marshal(&d.Reports[i]) }},
		{keyIDs, len(idRecs), func(i int) ([]byte, error) { return marshal(&idRecs[i]) }},
		{keyDetails, details.Len(), func(i int) ([]byte, error) { return details.AppendLine(nil, i), nil }},
		{keyStrings, len(details.Strings()), func(i int) ([]byte, error) { return marshal(details.Strings()[i]) }},
	}
	for _, f := range files {
		name := dataFiles[f.key]
		fi, err := writeDataFile(filepath.Join(tmp, name), enc, f.n, f.line)
		if err != nil {
			return m, fmt.Errorf("loader: build %s: %s: %w", dir, name, err)
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
	if err := replaceDir(tmp, dir, force); err != nil {
		return m, err
	}
	done = true
	return m, nil
}

var marshalOptions = []json.EncodeOptionFunc{json.DisableHTMLEscape()}

func marshal(v any) ([]byte, error) { return json.MarshalWithOption(v, marshalOptions...) }

// encodeCVEs encodes every CVE's API body and scans it for the index, on
// several goroutines.
func encodeCVEs(cves []index.CVE) ([][]byte, []index.CVEEntry, error) {
	bodies := make([][]byte, len(cves))
	entries := make([]index.CVEEntry, len(cves))
	errs := make([]error, len(cves))
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				from := int(next.Add(1024) - 1024)
				if from >= len(cves) {
					return
				}
				for i := from; i < min(from+1024, len(cves)); i++ {
					bodies[i] = index.EncodeCVE(&cves[i])
					entries[i], errs[i] = index.ScanCVE(bodies[i])
				}
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return nil, nil, fmt.Errorf("record %d: %w", i+1, err)
		}
	}
	return bodies, entries, nil
}

// writeDataFile writes n lines as a chunked data file and returns its
// manifest entry.
func writeDataFile(path string, enc *zstd.Encoder, n int, line func(int) ([]byte, error)) (FileInfo, error) {
	w, err := newChunkWriter(path, enc)
	if err != nil {
		return FileInfo{}, err
	}
	for i := 0; i < n; i++ {
		b, err := line(i)
		if err == nil {
			err = w.line(b)
		}
		if err != nil {
			w.close()
			return FileInfo{}, fmt.Errorf("record %d: %w", i+1, err)
		}
	}
	return w.close()
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
// first checked again (checkReplace: a vulnd snapshot or an empty
// directory, or with force any directory, never a file or a symbolic
// link), moved aside, and removed after the rename, so at no point is a
// half-written directory at dir; if the rename fails, it is moved back.
func replaceDir(tmp, dir string, force bool) error {
	if err := checkReplace(dir, force); err != nil {
		return err
	}
	old := ""
	if _, err := os.Lstat(dir); err == nil {
		old = tmp + ".old"
		if err := os.Rename(dir, old); err != nil {
			return fmt.Errorf("loader: build %s: %w", dir, err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		if old != "" {
			os.Rename(old, dir)
		}
		return fmt.Errorf("loader: build %s: %w", dir, err)
	}
	syncDir(filepath.Dir(dir))
	if old != "" {
		if err := os.RemoveAll(old); err != nil {
			return fmt.Errorf("loader: build %s: removing the old snapshot: %w", dir, err)
		}
	}
	return nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// buildDetails makes the details of cves, in their order.
func buildDetails(cves []index.CVE) (*index.Details, error) {
	b := index.NewDetailsBuilder()
	for i := range cves {
		if err := b.Add(&cves[i]); err != nil {
			return nil, err
		}
	}
	return b.Details(), nil
}

// decodeDetails decodes a snapshot's details files: the text table, one
// JSON string a line, and a line of numbers per CVE (see
// index.Details.AppendLine), in cves.jsonl.zst's order.
func decodeDetails(dir string, m Manifest, dec *zstd.Decoder) (*index.Details, error) {
	wrap := func(key string, err error) error {
		return fmt.Errorf("loader: snapshot %s: %s: %w", dir, m.Files[key].Name, err)
	}
	strs := make([]string, m.Files[keyStrings].Records)
	if err := eachRecord(dir, m.Files[keyStrings], dec, func(n int, line []byte) error {
		// Most texts have no escape: the bytes between the quotes.
		if len(line) >= 2 && line[0] == '"' && line[len(line)-1] == '"' && bytes.IndexByte(line, '\\') < 0 {
			strs[n] = string(line[1 : len(line)-1])
			return nil
		}
		return json.Unmarshal(line, &strs[n])
	}); err != nil {
		return nil, wrap(keyStrings, err)
	}
	fi := m.Files[keyDetails]
	if fi.Records != m.Files[keyCVEs].Records {
		return nil, wrap(keyDetails, fmt.Errorf("%d records for %d CVEs", fi.Records, m.Files[keyCVEs].Records))
	}
	l, err := index.NewDetailsLoader(strs, fi.Records, len(fi.Chunks))
	if err != nil {
		return nil, wrap(keyDetails, err)
	}
	firsts := make([]int, len(fi.Chunks)) // the number of each chunk's first record
	for i := 1; i < len(firsts); i++ {
		firsts[i] = firsts[i-1] + fi.Chunks[i-1].Records
	}
	// Each chunk is parsed as it is decoded, on the decoding goroutines,
	// and its text dropped: nothing of the file is kept but the records.
	if err := decodeFile(dir, fi, dec, func(c int, data []byte) error {
		return l.ParsePiece(c, firsts[c], data)
	}); err != nil {
		return nil, wrap(keyDetails, err)
	}
	d, err := l.Details()
	if err != nil {
		return nil, wrap(keyDetails, err)
	}
	if d.Len() != m.Files[keyCVEs].Records {
		return nil, wrap(keyDetails, fmt.Errorf("%d records for %d CVEs", d.Len(), m.Files[keyCVEs].Records))
	}
	return d, nil
}
