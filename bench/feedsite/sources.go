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
// release with one baseline asset, the day of now.
func writeCVE5(from, to string, now time.Time) error {
	es, err := os.ReadDir(from)
	if err != nil {
		return err
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
			return err
		}
		recs = append(recs, rs...)
	}
	var inner bytes.Buffer
	if len(recs) == 0 {
		// bench/synth -cve5 writes cves.zip laid out as the CVE
		// Program's own (cves/YYYY/NNxxx/ID.json): the release holds it
		// as it is.
		b, err := os.ReadFile(filepath.Join(from, "cves.zip"))
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return nil
		case err != nil:
			return err
		}
		inner.Write(b)
		return writeRelease(to, now, inner.Bytes())
	}
	zw := zip.NewWriter(&inner)
	for _, r := range recs {
		var m struct {
			Meta struct {
				ID string `json:"cveId"`
			} `json:"cveMetadata"`
		}
		if err := json.Unmarshal(r, &m); err != nil {
			return err
		}
		var year, num string
		if _, err := fmt.Sscanf(strings.ReplaceAll(m.Meta.ID, "-", " "), "CVE %s %s", &year, &num); err != nil || len(num) < 4 {
			return fmt.Errorf("a record's cveId %q", m.Meta.ID)
		}
		w, err := zw.Create("cves/" + year + "/" + num[:len(num)-3] + "xxx/" + m.Meta.ID + ".json")
		if err != nil {
			return err
		}
		w.Write(r)
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return writeRelease(to, now, inner.Bytes())
}

// writeRelease writes inner (a cves.zip) as the baseline asset of a
// cvelistV5 release of the day of now, and the release's description.
func writeRelease(to string, now time.Time, inner []byte) error {
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
	name := now.Format("2006-01-02") + "_all_CVEs_at_midnight.zip.zip"
	dl := filepath.Join(to, "cve5", "releases", "download")
	if err := os.MkdirAll(dl, 0o755); err != nil {
		return err
	}
	path := filepath.Join(dl, name)
	if old, err := os.ReadFile(path); err != nil || !bytes.Equal(old, outer.Bytes()) {
		if err := writeAtomic(path, outer.Bytes()); err != nil {
			return err
		}
	}
	// The older baselines go, as GitHub's latest release no longer has
	// them.
	olds, _ := filepath.Glob(filepath.Join(dl, "*_all_CVEs_at_midnight.zip.zip"))
	for _, o := range olds {
		if o != path {
			os.Remove(o)
		}
	}
	sum := sha256.Sum256(outer.Bytes())
	rel, err := json.MarshalIndent(map[string]any{
		"tag_name": "cve_" + now.Format("2006-01-02_1504") + "Z",
		"assets": []map[string]any{{"name": name, "browser_download_url": "download/" + name,
			"size": outer.Len(), "digest": "sha256:" + hex.EncodeToString(sum[:])}},
	}, "", "  ")
	if err != nil {
		return err
	}
	latest := filepath.Join(to, "cve5", "releases", "latest")
	if old, err := os.ReadFile(latest); err == nil && bytes.Equal(old, rel) {
		return nil
	}
	return writeAtomic(latest, rel)
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
