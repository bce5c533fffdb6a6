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
// Version 6 adds the manifest's "newest": how current each input source
// is (InputDates); a version 5 or 4 manifest has none, which reads as
// unknown. Version 6 may also add epss.csv.zst, the EPSS scores of the
// snapshot's CVEs (present only when the build had EPSS; the manifest's
// "epss" says so and gives the model and score date).
// Version 6 also ends each line of details.txt.zst with the vendors and
// products a CVE without NVD CPEs has from its affected entries, and
// which entries give each, as a text of strings.jsonl.zst (see
// index.EntryKey); version 4 and 5 snapshots load with none.
// Version 6 adds nvd.zst and nvdfacts.jsonl.zst: each NVD record as the
// winning feed held it, for NVD's CVE API, and its facts (see nvdapi.go).
// Version 7 stores those facts as nvdfacts.txt.zst, lines of numbers, and
// nvdstrings.jsonl.zst, the texts they refer to (see index/nvdfacts.go),
// which a load parses on every core without JSON: a version 6 snapshot
// still loads from its nvdfacts.jsonl.zst.
// Version 8 adds nvdfrom.txt.zst: which inputs held each NVD record (its
// provenance, see incremental.go), which only a build with -previous
// reads, to carry the records of the feeds that did not change; a load
// only checks its sums, and a version 7 snapshot loads as before (a build
// with it as -previous reads every feed).
// Version 9 adds nvdlayout.txt.zst: where each NVD record is stored in
// nvd.zst (its block and line), apart from its place in the order served,
// so that a build with -previous keeps the previous snapshot's nvd.zst
// whole, its chunks the same bytes, and adds blocks of the records
// changed or added since (see index.NVDLayout and nvdlayout.go); the
// facts' lines then give no frame sizes (0). A version 8 snapshot loads as
// before, its records in the compact layout.
// Version 10 adds cveslayout.txt.zst: which CVE each line of
// cves.jsonl.zst holds, so that a build with -previous keeps the previous
// snapshot's cves.jsonl.zst whole and adds chunks of the bodies changed
// or added since (see cveslayout.go); cves.jsonl.zst's records are its
// lines, dead ones included. A version 9 snapshot loads as before, its
// bodies in name order.
// Version 11 adds cve5from.txt.zst: which input the CVE JSON 5 record
// each CVE took came from, and its dateUpdated (see cve5from.go), which
// only a build with -previous reads, to carry what unchanged record
// files gave, and the manifest's "aliases" (the alias file's SHA-256). A
// version 10 snapshot loads as before (a build with it as -previous
// reads every record file).
const FormatVersion = 11

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
	// keyNVD and keyNVDFacts: format 6; keyNVDStrings: format 7;
	// keyNVDFrom: format 8; keyNVDLayout: format 9.
	keyNVD        = "nvd"
	keyNVDFacts   = "nvdfacts"
	keyNVDStrings = "nvdstrings"
	keyNVDFrom    = "nvdfrom"
	keyNVDLayout  = "nvdlayout"

	fileCWEs       = "cwes.jsonl.zst"
	fileCVEs       = "cves.jsonl.zst"
	fileMetrics    = "metrics.jsonl.zst"
	fileReports    = "reports.jsonl.zst"
	fileIDs        = "ids.jsonl.zst"
	fileDetails    = "details.txt.zst"
	fileStrings    = "strings.jsonl.zst"
	fileNVD        = "nvd.zst"
	fileNVDFacts   = "nvdfacts.txt.zst"
	fileNVDStrings = "nvdstrings.jsonl.zst"
	fileNVDFrom    = "nvdfrom.txt.zst"
	fileNVDLayout  = "nvdlayout.txt.zst"
	// fileNVDFacts6 is the facts' file of format 6 (JSON lines).
	fileNVDFacts6 = "nvdfacts.jsonl.zst"

	// The optional data file: EPSS scores, one "CVE-…,score,percentile"
	// line per scored CVE of the snapshot, by CVE id as a string (the
	// order of FIRST's file), without FIRST's two header lines (the
	// manifest's "epss" has what the first one says).
	keyEPSS  = "epss"
	fileEPSS = "epss.csv.zst"
)

// epssVersion is the first format version that may hold EPSS scores.
const epssVersion = 6

var dataFiles = map[string]string{
	keyCWEs: fileCWEs, keyCVEs: fileCVEs, keyMetrics: fileMetrics, keyReports: fileReports, keyIDs: fileIDs,
	keyDetails: fileDetails, keyStrings: fileStrings, keyNVD: fileNVD, keyNVDFacts: fileNVDFacts, keyNVDStrings: fileNVDStrings,
	keyNVDFrom: fileNVDFrom, keyNVDLayout: fileNVDLayout, keyCVEsLayout: fileCVEsLayout, keyCVE5From: fileCVE5From,
}

// dataFilesOf are the data files of a snapshot of format version v.
func dataFilesOf(v int) map[string]string {
	if v >= cve5FromVersion {
		return dataFiles
	}
	old := maps.Clone(dataFiles)
	delete(old, keyCVE5From)
	if v == 10 {
		return old
	}
	delete(old, keyCVEsLayout)
	if v == 9 {
		return old
	}
	delete(old, keyNVDLayout)
	if v == 8 {
		return old
	}
	delete(old, keyNVDFrom)
	if v == 7 {
		return old
	}
	delete(old, keyNVDStrings)
	if v == 6 {
		old[keyNVDFacts] = fileNVDFacts6
		return old
	}
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
	// Newest is how current each input source is (format 6); nil in an
	// older manifest.
	Newest *InputDates `json:"newest,omitempty"`
	// EPSS describes the snapshot's EPSS scores (files["epss"]); nil
	// when it has none.
	EPSS *EPSSInfo `json:"epss,omitempty"`
	// RefreshOf is the id of the snapshot this one was built from with
	// -previous when the build's refresh guard held against it (a build
	// without -force); "" otherwise. publish takes it as that guard's
	// verdict for a tag naming that snapshot, rather than reading both
	// snapshots' CVEs again to compare them.
	RefreshOf string `json:"refresh_of,omitempty"`
	// Aliases is the SHA-256 (hex) of the alias file a build with CVE
	// JSON 5 records mapped their affected entries' names with (the
	// default one's, loader/aliases.txt, when it was given none); ""
	// when the build read no record, or in a manifest older than it. A
	// build with -previous carries what the records gave only from a
	// snapshot of the same alias file (see carryRecords).
	Aliases string `json:"aliases,omitempty"`
}

// EPSSInfo is the manifest's "epss": the EPSS file the scores came from
// and what its first line says.
type EPSSInfo struct {
	// File is the name (base name) of FIRST's file the build read, as
	// given to build -epss (or to the build whose scores a build with
	// -previous and no -epss carried over).
	File string `json:"file"`
	// Model is the file's model_version ("v2026.06.15").
	Model string `json:"model"`
	// Date is the file's score_date, RFC 3339 in UTC
	// ("2026-09-29T12:00:22Z"): how old the scores are.
	Date string `json:"date"`
	// Rows is the number of the snapshot's CVEs with a score
	// (epss.csv.zst's lines).
	Rows int `json:"rows"`
}

// InputDates are the manifest's dates of the inputs, each in the API's
// form ("YYYY-MM-DD HH:MM:SSZ") or null when the build read no such
// input: NVD the newest lastModified of the NVD feeds' records, CVE5 the
// newest dateUpdated of the CVE JSON 5 records, CWE the catalog's Date
// attribute (at 00:00:00Z; null when the catalog has none). The EPSS
// file's score_date is the manifest's own EPSS entry (see epssDate).
type InputDates struct {
	NVD  *string `json:"nvd"`
	CVE5 *string `json:"cve5"`
	CWE  *string `json:"cwe"`
}

// inputDates are the dates of m's inputs as the index keeps them: ""
// for one m does not give.
func (m Manifest) inputDates() index.InputDates {
	var d index.InputDates
	if n := m.Newest; n != nil {
		d.NVD, d.CVE5, d.CWE = deref(n.NVD), deref(n.CVE5), deref(n.CWE)
	}
	d.EPSS = epssDate(m)
	return d
}

// epssDate is the score_date of the EPSS file the snapshot was built
// with (the manifest's "epss" entry, checked by parseManifest), in the
// API's form, "" without one.
func epssDate(m Manifest) string {
	if m.EPSS == nil {
		return ""
	}
	t, err := time.Parse(time.RFC3339, m.EPSS.Date)
	if err != nil {
		return ""
	}
	return formatTime(t)
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
	// epss are the snapshot's EPSS scores (nil: none).
	epss *EPSS
	// bodies are, for a snapshot read by readPrevious, the CVEs' bodies
	// as stored, in Data.CVEs order, whose CVEs then hold only their
	// names, dates and metrics; nil once they are decoded (decodeAll).
	bodies [][]byte
	// cvesLayout is where each CVE's body is in cves.jsonl.zst, and
	// bodyHash each body's hash (recordHash), in Data.CVEs order: what
	// a build lays its bodies out over (see cvesBase).
	cvesLayout *cvesLayout
	bodyHash   []recHash
	// textHash is, for a snapshot read by readPrevious, the hash
	// (recordHash) of each line of its text table (strings.jsonl.zst).
	textHash []recHash
	// textChunks are, with textHash, the text table's chunks as decoded
	// then, which a build takes the lines of texts from (prevTexts)
	// rather than decoding the table a second time.
	textChunks [][]byte
}

// dataFiles are the data files m lists: those of its format version, and
// epss.csv.zst when it has EPSS scores.
func (m Manifest) dataFiles() map[string]string {
	files := dataFilesOf(m.Version)
	if m.EPSS != nil {
		files = maps.Clone(files)
		files[keyEPSS] = fileEPSS
	}
	return files
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
	if n := m.Newest; n != nil {
		for _, d := range []struct {
			key string
			at  *string
		}{{"nvd", n.NVD}, {"cve5", n.CVE5}, {"cwe", n.CWE}} {
			if d.at == nil {
				continue
			}
			if _, err := time.Parse(TimeLayout, *d.at); err != nil {
				return m, fmt.Errorf("newest.%s %q is not a timestamp", d.key, *d.at)
			}
		}
	}
	if m.Aliases != "" && (len(m.Aliases) != 64 || strings.Trim(m.Aliases, "0123456789abcdef") != "") {
		return m, fmt.Errorf("aliases %q is not a SHA-256 (64 lowercase hex digits)", m.Aliases)
	}
	if m.RefreshOf != "" && IDFromSum(m.RefreshOf+strings.Repeat("0", 40)) != m.RefreshOf {
		return m, fmt.Errorf("refresh_of %q is not a snapshot id (24 lowercase hex digits)", m.RefreshOf)
	}
	if m.EPSS != nil {
		if m.Version < epssVersion {
			return m, fmt.Errorf("format version %d holds no EPSS, but the manifest has \"epss\"", m.Version)
		}
		if err := checkEPSSInfo(m); err != nil {
			return m, err
		}
	}
	files := m.dataFiles()
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
