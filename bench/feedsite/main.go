// Command feedsite lays out synthetic feeds (bench/synth's output) as
// NVD's feed site and MITRE's catalog are, for vulnd fetch to mirror in
// tests that stand a web server in for nvd.nist.gov (make fleet-test):
//
//	feedsite -from SYNTH_DIR -to SITE_DIR -time RFC3339
//
// SITE_DIR gets nvdcve-2.0-YYYY.json.gz for 2002 (holding 1999 to 2002,
// as NVD's does) to the last year, nvdcve-2.0-modified.json.gz (the
// records whose lastModified is within 8 days before -time) and
// nvdcve-2.0-recent.json.gz (published within 8 days), each with a
// .meta (lastModifiedDate, size, gzSize, sha256 of the JSON), and
// cwec_latest.xml.zip holding the synthetic catalog. A feed whose JSON is
// the same as the one SITE_DIR already holds keeps its file and .meta, so
// a mirror sees only what changed. Every file is written beside its
// place and renamed, so a server never hands out half of one.
//
// When SYNTH_DIR holds them, the other sources vulnd fetch mirrors are
// laid out too: the newest epss_scores-*.csv.gz as
// epss_scores-current.csv.gz (-epss-url SITE/epss_scores-current.csv.gz),
// and the CVE JSON 5 record files (found by content; gzip or plain, a
// record or an array) as a cvelistV5 release (-cve5-url SITE/cve5/):
// cve5/releases/download/DAY_all_CVEs_at_midnight.zip.zip, DAY -time's
// date, a zip holding cves.zip holding cves/YYYY/NNxxx/ID.json as the CVE
// Program lays them out, and cve5/releases/latest describing it as
// GitHub's API does (name, relative browser_download_url, size, digest).
//
// With -cve5-delta-from DIR (another synth output, the day before), the
// release is that of -time's hour instead: its baseline holds DIR's
// records, at -time's midnight, and the hour's delta asset
// (DAY_delta_CVEs_at_HHMMZ.zip, deltaCves/ID.json) the records of
// SYNTH_DIR that DIR lacks or holds otherwise, as the CVE Program
// publishes an hour's changes between two midnights.
package main

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "feedsite:", err)
		os.Exit(1)
	}
}

// feed is an NVD CVE API 2.0 feed file, its records kept as they are.
type feed struct {
	ResultsPerPage  int               `json:"resultsPerPage"`
	StartIndex      int               `json:"startIndex"`
	TotalResults    int               `json:"totalResults"`
	Format          string            `json:"format"`
	Version         string            `json:"version"`
	Timestamp       string            `json:"timestamp"`
	Vulnerabilities []json.RawMessage `json:"vulnerabilities"`
}

// nvdTime is the feeds' timestamp form.
const nvdTime = "2006-01-02T15:04:05.000"

func run(args []string) error {
	fs := flag.NewFlagSet("feedsite", flag.ContinueOnError)
	from := fs.String("from", "", "bench/synth's output directory")
	to := fs.String("to", "", "the site directory to write (made if missing)")
	at := fs.String("time", "", "the site's time, RFC 3339: the feeds' timestamp and the window of modified and recent")
	deltaFrom := fs.String("cve5-delta-from", "", "the CVE JSON 5 release's baseline is this synth output's records; -from's changes are the hour's delta")
	if err := fs.Parse(args); err != nil {
		return err
	}
	now, err := time.Parse(time.RFC3339, *at)
	if *from == "" || *to == "" || err != nil {
		return errors.New("usage: feedsite -from SYNTH_DIR -to SITE_DIR -time RFC3339 [-cve5-delta-from SYNTH_DIR]")
	}
	now = now.UTC()
	paths, _ := filepath.Glob(filepath.Join(*from, "nvdcve-2.0-*.json.gz"))
	if len(paths) == 0 {
		return fmt.Errorf("%s holds no nvdcve-2.0-*.json.gz", *from)
	}
	years := map[int][]json.RawMessage{}
	var modified, recent []json.RawMessage
	since := now.Add(-8 * 24 * time.Hour).Format(nvdTime)
	for _, p := range paths {
		f, err := readFeed(p)
		if err != nil {
			return err
		}
		for _, v := range f.Vulnerabilities {
			var r struct {
				CVE struct {
					ID           string `json:"id"`
					Published    string `json:"published"`
					LastModified string `json:"lastModified"`
				} `json:"cve"`
			}
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("%s: %w", p, err)
			}
			var year int
			if _, err := fmt.Sscanf(r.CVE.ID, "CVE-%d-", &year); err != nil {
				return fmt.Errorf("%s: CVE id %q", p, r.CVE.ID)
			}
			years[max(year, 2002)] = append(years[max(year, 2002)], v)
			if r.CVE.LastModified >= since {
				modified = append(modified, v)
			}
			if r.CVE.Published >= since {
				recent = append(recent, v)
			}
		}
	}
	if err := os.MkdirAll(*to, 0o755); err != nil {
		return err
	}
	stamp := now.Format(nvdTime)
	written := 0
	for _, y := range slices.Sorted(maps.Keys(years)) {
		n, err := writeFeed(*to, fmt.Sprintf("nvdcve-2.0-%d", y), years[y], now, stamp)
		if err != nil {
			return err
		}
		written += n
	}
	for name, recs := range map[string][]json.RawMessage{"nvdcve-2.0-modified": modified, "nvdcve-2.0-recent": recent} {
		n, err := writeFeed(*to, name, recs, now, stamp)
		if err != nil {
			return err
		}
		written += n
	}
	if err := writeCatalog(*from, *to); err != nil {
		return err
	}
	if err := writeEPSS(*from, *to); err != nil {
		return err
	}
	if err := writeCVE5(*from, *to, *deltaFrom, now); err != nil {
		return err
	}
	fmt.Printf("feedsite: %s: %d feeds written (changed), %d modified and %d recent records\n", *to, written, len(modified), len(recent))
	return nil
}

func readFeed(path string) (*feed, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var fd feed
	if err := json.NewDecoder(zr).Decode(&fd); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &fd, nil
}

// writeFeed writes name.json.gz and name.meta in dir unless the feed's
// records are those already there; it returns 1 when it wrote them.
func writeFeed(dir, name string, recs []json.RawMessage, now time.Time, stamp string) (int, error) {
	if recs == nil {
		recs = []json.RawMessage{}
	}
	// The records alone decide whether the feed changed: the timestamp
	// moves every run.
	recJSON, err := json.Marshal(recs)
	if err != nil {
		return 0, err
	}
	recSum := sha256.Sum256(recJSON)
	sumFile := filepath.Join(dir, "."+name+".records")
	if old, err := os.ReadFile(sumFile); err == nil && string(old) == hex.EncodeToString(recSum[:]) {
		return 0, nil
	}
	body, err := json.Marshal(feed{ResultsPerPage: len(recs), TotalResults: len(recs), Format: "NVD_CVE", Version: "2.0",
		Timestamp: stamp, Vulnerabilities: recs})
	if err != nil {
		return 0, err
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(body)
	if err := zw.Close(); err != nil {
		return 0, err
	}
	sum := sha256.Sum256(body)
	meta := fmt.Sprintf("lastModifiedDate:%s\r\nsize:%d\r\ngzSize:%d\r\nsha256:%s\r\n",
		now.Format("2006-01-02T15:04:05")+"-00:00", len(body), gz.Len(), strings.ToUpper(hex.EncodeToString(sum[:])))
	// The feed first, then its meta: a mirror reading the new meta finds
	// the new feed.
	if err := writeAtomic(filepath.Join(dir, name+".json.gz"), gz.Bytes()); err != nil {
		return 0, err
	}
	if err := writeAtomic(filepath.Join(dir, name+".meta"), []byte(meta)); err != nil {
		return 0, err
	}
	return 1, writeAtomic(sumFile, []byte(hex.EncodeToString(recSum[:])))
}

// writeCatalog zips the synthetic catalog as MITRE ships it.
func writeCatalog(from, to string) error {
	xml, err := os.ReadFile(filepath.Join(from, "cwec_synth.xml"))
	if err != nil {
		return err
	}
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, err := zw.Create("cwec_synth.xml")
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, bytes.NewReader(xml)); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	path := filepath.Join(to, "cwec_latest.xml.zip")
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b.Bytes()) {
		return nil // as it was: its Last-Modified stays
	}
	return writeAtomic(path, b.Bytes())
}

func writeAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
