package loader

// A snapshot directory: its format, its data files and its manifest.

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-json"

	"github.com/vulnd/vulnd/index"
)

// FormatVersion is the snapshot layout this build writes and reads.
// Version 2 added ids.jsonl.zst (the id tables change tracking keeps).
// Version 3 stores each CVE as its API body, moves the CVSS metrics kept
// for change tracking to metrics.jsonl.zst, and splits every data file
// into chunks listed in the manifest. Version 4 adds details.txt.zst and
// strings.jsonl.zst: each CVE's NVD status, KEV entry and CVSS metrics
// with vectors and severities, for GET /cve/{name}/details. Version 5
// ends each line of details.txt.zst with the CVE's affected entries and
// SSVC decision (from CVE JSON 5 records), as texts of strings.jsonl.zst.
// Version 6 adds nvd.zst and nvdfacts.jsonl.zst: each NVD record as the
// winning feed held it, for NVD's CVE API, and its facts (see nvdapi.go).
const FormatVersion = 6

// servedVersion is the oldest format serve and validate still read: a
// version 4 snapshot differs only in its details lines, which end after
// the metrics (its CVEs have no affected entries and no SSVC), so a new
// vulnd serves the snapshot an old one wrote until the next build.
const servedVersion = 4

// previousVersion is the oldest format a build still reads as -previous
// (its reports and ids carry over).
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
	// keyNVD and keyNVDFacts: format 6.
	keyNVD      = "nvd"
	keyNVDFacts = "nvdfacts"

	fileCWEs     = "cwes.jsonl.zst"
	fileCVEs     = "cves.jsonl.zst"
	fileMetrics  = "metrics.jsonl.zst"
	fileReports  = "reports.jsonl.zst"
	fileIDs      = "ids.jsonl.zst"
	fileDetails  = "details.txt.zst"
	fileStrings  = "strings.jsonl.zst"
	fileNVD      = "nvd.zst"
	fileNVDFacts = "nvdfacts.jsonl.zst"
)

var dataFiles = map[string]string{
	keyCWEs: fileCWEs, keyCVEs: fileCVEs, keyMetrics: fileMetrics, keyReports: fileReports, keyIDs: fileIDs,
	keyDetails: fileDetails, keyStrings: fileStrings, keyNVD: fileNVD, keyNVDFacts: fileNVDFacts,
}

// dataFilesOf are the data files of a snapshot of format version v.
func dataFilesOf(v int) map[string]string {
	if v >= 6 {
		return dataFiles
	}
	old := maps.Clone(dataFiles)
	delete(old, keyNVD)
	delete(old, keyNVDFacts)
	if v < 4 {
		delete(old, keyDetails)
		delete(old, keyStrings)
	}
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
	case m.Version >= servedVersion && m.Version <= FormatVersion, old && m.Version >= previousVersion && m.Version <= FormatVersion:
	case m.Version >= previousVersion && m.Version < servedVersion:
		return m, fmt.Errorf("format version %d is older than this vulnd's %d: rebuild the snapshot with this vulnd (vulnd build; -previous reads a version %d snapshot, so its reports and ids carry over)", m.Version, FormatVersion, previousVersion)
	default:
		return m, fmt.Errorf("format version %d is not supported (this vulnd reads versions %d to %d); rebuild the snapshot with this vulnd", m.Version, servedVersion, FormatVersion)
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
