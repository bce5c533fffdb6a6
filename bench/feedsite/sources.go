package main

import (
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/vulnd/vulnd/loader"
)

// writeEPSS copies the newest epss_scores-*.csv.gz of from to
// to/epss_scores-current.csv.gz, FIRST's stable name, unless it is
// already there.
func writeEPSS(from, to string) error {
	paths, _ := filepath.Glob(filepath.Join(from, "epss_scores-*.csv.gz"))
	if len(paths) == 0 {
		return nil
	}
	slices.Sort(paths)
	b, err := os.ReadFile(paths[len(paths)-1])
	if err != nil {
		return err
	}
	path := filepath.Join(to, "epss_scores-current.csv.gz")
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b) {
		return nil // as it was: its Last-Modified stays
	}
	return writeAtomic(path, b)
}

// writeCVE5 lays the CVE JSON 5 record files of from out as a cvelistV5
// release of now: with deltaFrom "", one baseline asset (every record of
// from, at now's midnight); otherwise the release of now's hour on a day
// whose midnight baseline was deltaFrom's records, with the hour's delta
// asset (DAY_delta_CVEs_at_HHMMZ.zip) holding the records of from that
// deltaFrom lacks or holds otherwise, as deltaCves/ID.json.
func writeCVE5(from, to, deltaFrom string, now time.Time) error {
	if deltaFrom == "" {
		inner, err := cve5Bundle(from)
		if err != nil || inner == nil {
			return err
		}
		return writeRelease(to, now, inner, nil)
	}
	base, err := cve5Bundle(deltaFrom)
	if err != nil {
		return err
	}
	next, err := cve5Bundle(from)
	if err != nil {
		return err
	}
	if base == nil || next == nil {
		return fmt.Errorf("-cve5-delta-from: %s and %s must both hold CVE JSON 5 records", deltaFrom, from)
	}
	delta, err := cve5Delta(base, next)
	if err != nil {
		return err
	}
	return writeRelease(to, now, base, delta)
}

// cve5Bundle is the cves.zip of the CVE JSON 5 record files of from
// (cves/YYYY/NNxxx/ID.json, as the CVE Program lays them out), or nil
// when from holds none.
func cve5Bundle(from string) ([]byte, error) {
	es, err := os.ReadDir(from)
	if err != nil {
		return nil, err
	}
	var recs []json.RawMessage
	for _, e := range es {
		p := filepath.Join(from, e.Name())
		if !e.Type().IsRegular() || strings.HasSuffix(e.Name(), ".zip") {
			continue
		}
		if ok, err := loader.IsCVE5(p); err != nil || !ok {
			continue
		}
		rs, err := rawRecords(p)
		if err != nil {
			return nil, err
		}
		recs = append(recs, rs...)
	}
	if len(recs) == 0 {
		// bench/synth -cve5 writes cves.zip laid out as the CVE
		// Program's own (cves/YYYY/NNxxx/ID.json): the release holds it
		// as it is.
		b, err := os.ReadFile(filepath.Join(from, "cves.zip"))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return b, err
	}
	var inner bytes.Buffer
	zw := zip.NewWriter(&inner)
	for _, r := range recs {
		var m struct {
			Meta struct {
				ID string `json:"cveId"`
			} `json:"cveMetadata"`
		}
		if err := json.Unmarshal(r, &m); err != nil {
			return nil, err
		}
		var year, num string
		if _, err := fmt.Sscanf(strings.ReplaceAll(m.Meta.ID, "-", " "), "CVE %s %s", &year, &num); err != nil || len(num) < 4 {
			return nil, fmt.Errorf("a record's cveId %q", m.Meta.ID)
		}
		w, err := zw.Create("cves/" + year + "/" + num[:len(num)-3] + "xxx/" + m.Meta.ID + ".json")
		if err != nil {
			return nil, err
		}
		w.Write(r)
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return inner.Bytes(), nil
}

// cve5Delta is a delta asset (deltaCves/ID.json) of the records of next
// (a cves.zip) that base (another) lacks or holds otherwise: another
// size or CRC-32 of the same file name, which bench/synth's next day
// gives every record it changes (it changes dateUpdated).
func cve5Delta(base, next []byte) ([]byte, error) {
	br, err := zip.NewReader(bytes.NewReader(base), int64(len(base)))
	if err != nil {
		return nil, fmt.Errorf("baseline cves.zip: %w", err)
	}
	nr, err := zip.NewReader(bytes.NewReader(next), int64(len(next)))
	if err != nil {
		return nil, fmt.Errorf("next cves.zip: %w", err)
	}
	type sum struct {
		crc  uint32
		size uint64
	}
	was := make(map[string]sum, len(br.File))
	for _, f := range br.File {
		was[path.Base(f.Name)] = sum{f.CRC32, f.UncompressedSize64}
	}
	var out bytes.Buffer
	zw := zip.NewWriter(&out)
	for _, f := range nr.File {
		name := path.Base(f.Name)
		if !strings.HasSuffix(name, ".json") || f.FileInfo().IsDir() {
			continue
		}
		if s, ok := was[name]; ok && s == (sum{f.CRC32, f.UncompressedSize64}) {
			continue
		}
		r, err := f.Open()
		if err != nil {
			return nil, fmt.Errorf("next cves.zip: %s: %w", f.Name, err)
		}
		b, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			return nil, fmt.Errorf("next cves.zip: %s: %w", f.Name, err)
		}
		w, err := zw.Create("deltaCves/" + name)
		if err != nil {
			return nil, err
		}
		w.Write(b)
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// writeRelease writes inner (a cves.zip) as the baseline asset of a
// cvelistV5 release of now, at now's midnight, and delta, unless nil, as
// the delta asset of now's hour; then the release's description. Assets
// of other releases go.
func writeRelease(to string, now time.Time, inner, delta []byte) error {
	var outer bytes.Buffer
	zw := zip.NewWriter(&outer)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "cves.zip", Method: zip.Store})
	if err != nil {
		return err
	}
	w.Write(inner)
	if err := zw.Close(); err != nil {
		return err
	}
	type file struct {
		name string
		b    []byte
	}
	files := []file{{now.Format("2006-01-02") + "_all_CVEs_at_midnight.zip.zip", outer.Bytes()}}
	if delta != nil {
		files = append(files, file{now.Format("2006-01-02") + "_delta_CVEs_at_" + now.Format("1504") + "Z.zip", delta})
	}
	dl := filepath.Join(to, "cve5", "releases", "download")
	if err := os.MkdirAll(dl, 0o755); err != nil {
		return err
	}
	var assets []map[string]any
	for _, f := range files {
		p := filepath.Join(dl, f.name)
		if old, err := os.ReadFile(p); err != nil || !bytes.Equal(old, f.b) {
			if err := writeAtomic(p, f.b); err != nil {
				return err
			}
		}
		sum := sha256.Sum256(f.b)
		assets = append(assets, map[string]any{"name": f.name, "browser_download_url": "download/" + f.name,
			"size": len(f.b), "digest": "sha256:" + hex.EncodeToString(sum[:])})
	}
	rel, err := json.MarshalIndent(map[string]any{"tag_name": "cve_" + now.Format("2006-01-02_1504") + "Z", "assets": assets}, "", "  ")
	if err != nil {
		return err
	}
	latest := filepath.Join(to, "cve5", "releases", "latest")
	if old, err := os.ReadFile(latest); err != nil || !bytes.Equal(old, rel) {
		if err := writeAtomic(latest, rel); err != nil {
			return err
		}
	}
	// The older assets go once the description no longer names them, as
	// GitHub's latest release no longer has them.
	olds, _ := filepath.Glob(filepath.Join(dl, "*.zip"))
	for _, o := range olds {
		if !slices.ContainsFunc(files, func(f file) bool { return f.name == filepath.Base(o) }) {
			os.Remove(o)
		}
	}
	return nil
}

// rawRecords reads the records of a record file: a record or an array
// of them, gzipped or not.
func rawRecords(path string) ([]json.RawMessage, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	var r io.Reader = br
	if head, _ := br.Peek(2); bytes.Equal(head, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		r = zr
	}
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	b = bytes.TrimSpace(b)
	if bytes.HasPrefix(b, []byte("[")) {
		var rs []json.RawMessage
		if err := json.Unmarshal(b, &rs); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return rs, nil
	}
	return []json.RawMessage{b}, nil
}
