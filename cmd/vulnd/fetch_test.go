package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vulnd/vulnd/loader"
)

// TestFetchThenBuild: vulnd fetch mirrors a site (a stand-in for NVD's
// feed directory) into a directory that vulnd build then builds from; a
// second fetch downloads nothing.
func TestFetchThenBuild(t *testing.T) {
	files := map[string][]byte{}
	hits := map[string]int{}
	for _, name := range []string{"nvdcve-2.0-2024", "nvdcve-2.0-modified", "nvdcve-2.0-recent"} {
		content := []byte(fmt.Sprintf(`{"format":"NVD_CVE","version":"2.0","vulnerabilities":[{"cve":{"id":"CVE-2024-%04d","published":"2024-01-01T00:00:00.000","lastModified":"2024-01-02T00:00:00.000","vulnStatus":"Analyzed","descriptions":[{"lang":"en","value":"x"}],"references":[]}}]}`, len(files)+1))
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write(content)
		zw.Close()
		sum := sha256.Sum256(content)
		files["/"+name+".json.gz"] = gz.Bytes()
		files["/"+name+".meta"] = []byte(fmt.Sprintf("lastModifiedDate:2026-11-20T03:00:00-05:00\r\nsize:%d\r\nsha256:%s\r\n", len(content), strings.ToUpper(hex.EncodeToString(sum[:]))))
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits[r.URL.Path]++
		if b, ok := files[r.URL.Path]; ok {
			w.Write(b)
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	dir := t.TempDir()
	args := []string{"fetch", "-dir", dir, "-base-url", srv.URL, "-cwe-url", "-", "-years", "2024-2024"}
	var out, errs bytes.Buffer
	if code := run(args, &out, &errs); code != 0 {
		t.Fatalf("fetch: exit %d: %s", code, errs.String())
	}
	if got := out.String(); got != dir+": 3 fetched, 0 unchanged\n" {
		t.Errorf("stdout %q", got)
	}
	if n := strings.Count(errs.String(), "vulnd fetch: fetched "); n != 3 {
		t.Errorf("%d log lines of fetched files, want 3:\n%s", n, errs.String())
	}
	feeds, _, err := loader.FeedFiles(dir)
	if err != nil || len(feeds) != 3 {
		t.Fatalf("FeedFiles: %v %v", feeds, err)
	}
	snap := filepath.Join(t.TempDir(), "snap")
	out.Reset()
	errs.Reset()
	if code := run(append([]string{"build", "-cwe", sharedData(t, "cwe/cwec_v4.15.xml.zip"), "-o", snap}, feeds...), &out, &errs); code != 0 {
		t.Fatalf("build: exit %d: %s", code, errs.String())
	}
	if !strings.Contains(out.String(), ": 3 CVEs") {
		t.Errorf("build: %s", out.String())
	}
	// Within -max-age of the first run, only modified and recent are
	// checked, and both are unchanged.
	out.Reset()
	if code := run(args, &out, &errs); code != 0 || out.String() != dir+": 0 fetched, 2 unchanged\n" {
		t.Errorf("second fetch: exit %d, %q", code, out.String())
	}
	if hits["/nvdcve-2.0-2024.json.gz"] != 1 {
		t.Errorf("the 2024 feed was downloaded %d times, want once", hits["/nvdcve-2.0-2024.json.gz"])
	}
	if _, err := os.Stat(filepath.Join(dir, ".vulnd-fetch.json")); err != nil {
		t.Error(err)
	}
}

// TestMakeRefreshFetch: make refresh FETCH=1 runs the whole cycle: fetch
// into FEEDS (the catalog included), build, validate, move into place.
func TestMakeRefreshFetch(t *testing.T) {
	if testing.Short() {
		t.Skip("runs make and builds the binary")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	cwe, err := os.ReadFile(sharedData(t, "cwe/cwec_v4.15.xml.zip"))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{"/cwe.zip": cwe}
	for i, name := range []string{"nvdcve-2.0-2024", "nvdcve-2.0-modified", "nvdcve-2.0-recent"} {
		content := []byte(fmt.Sprintf(`{"format":"NVD_CVE","version":"2.0","vulnerabilities":[{"cve":{"id":"CVE-2024-%04d","published":"2024-01-01T00:00:00.000","lastModified":"2024-01-02T00:00:00.000","descriptions":[{"lang":"en","value":"x"}],"references":[]}}]}`, i+1))
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write(content)
		zw.Close()
		sum := sha256.Sum256(content)
		files["/"+name+".json.gz"] = gz.Bytes()
		files["/"+name+".meta"] = []byte(fmt.Sprintf("lastModifiedDate:2026-11-20T03:00:00-05:00\r\nsize:%d\r\nsha256:%s\r\n", len(content), strings.ToUpper(hex.EncodeToString(sum[:]))))
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if b, ok := files[r.URL.Path]; ok {
			w.Write(b)
			return
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	tmp := t.TempDir()
	feeds, snap := filepath.Join(tmp, "feeds"), filepath.Join(tmp, "current")
	os.Mkdir(feeds, 0o755)
	out, err := exec.Command("make", "--no-print-directory", "-C", filepath.Join("..", ".."), "refresh", "FETCH=1",
		"BIN="+filepath.Join(tmp, "vulnd"), "FETCH_URL="+srv.URL+"/", "FETCH_FLAGS=-cwe-url "+srv.URL+"/cwe.zip -years 2024-2024",
		"FEEDS="+feeds, "SNAP="+snap).CombinedOutput()
	if err != nil {
		t.Fatalf("make refresh FETCH=1: %v\n%s", err, out)
	}
	for _, w := range []string{"vulnd fetch: fetched nvdcve-2.0-2024.json.gz", "vulnd fetch: fetched cwec_latest.xml.zip",
		"-cwe " + feeds + "/cwec_latest.xml.zip", "wrote " + snap + ".next: 3 CVEs, 1427 CWEs"} {
		if !strings.Contains(string(out), w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	if _, err := loader.Validate(snap); err != nil {
		t.Errorf("the refreshed snapshot: %v", err)
	}
}
