package main

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vulnd/vulnd/loader"
)

// TestFetchThenBuild: vulnd fetch mirrors a site (a stand-in for NVD's
// feed directory) into a directory that vulnd build then builds from; a
// second fetch downloads nothing.
func TestFetchThenBuild(t *testing.T) {
	srv, _, hits := feedSite(t, syntheticFeeds(t), "")
	dir := t.TempDir()
	args := append([]string{"fetch", "-dir", dir, "-base-url", srv.URL, "-cwe-url", "-", "-years", "2024-2024"}, noSources...)
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
	if n := hits("/nvdcve-2.0-2024.json.gz"); n != 1 {
		t.Errorf("the 2024 feed was downloaded %d times, want once", n)
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
	srv, _, _ := feedSite(t, syntheticFeeds(t), "")
	tmp := t.TempDir()
	feeds, snap := filepath.Join(tmp, "feeds"), filepath.Join(tmp, "current")
	os.Mkdir(feeds, 0o755)
	out, err := exec.Command("make", "--no-print-directory", "-C", filepath.Join("..", ".."), "refresh", "FETCH=1",
		"BIN="+filepath.Join(tmp, "vulnd"), "FETCH_URL="+srv.URL+"/", "FETCH_FLAGS=-cwe-url "+srv.URL+"/cwe.zip -years 2024-2024 "+strings.Join(sourceFlags(srv), " "),
		"FEEDS="+feeds, "SNAP="+snap).CombinedOutput()
	if err != nil {
		t.Fatalf("make refresh FETCH=1: %v\n%s", err, out)
	}
	// The records of the bundles fetched reach the build through vulnd
	// feeds: 3 CVEs of the feeds and 18 of the records.
	for _, w := range []string{"vulnd fetch: fetched nvdcve-2.0-2024.json.gz", "vulnd fetch: fetched cwec_latest.xml.zip",
		"vulnd fetch: fetched " + bundleName, "vulnd fetch: fetched epss_scores-2026-09-29.csv.gz",
		"-cwe " + feeds + "/cwec_latest.xml.zip", "-epss " + feeds + "/epss_scores-2026-09-29.csv.gz", "wrote " + snap + ".next: 21 CVEs, 1427 CWEs"} {
		if !strings.Contains(string(out), w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	// The fetch command it echoes is the one it runs, flags and all.
	if echo := "vulnd fetch -dir " + feeds + " -base-url " + srv.URL + "/ -cwe-url " + srv.URL + "/cwe.zip -years 2024-2024 " + strings.Join(sourceFlags(srv), " ") + "\n"; !strings.Contains(string(out), echo) {
		t.Errorf("output lacks the fetch command %q:\n%s", echo, out)
	}
	// The EPSS file fetched reaches the build too.
	if m, err := loader.Validate(snap); err != nil {
		t.Errorf("the refreshed snapshot: %v", err)
	} else if m.EPSS == nil || m.EPSS.File != "epss_scores-2026-09-29.csv.gz" {
		t.Errorf("the refreshed snapshot's EPSS: %+v, want epss_scores-2026-09-29.csv.gz's", m.EPSS)
	}
}

// TestFetchCommandLine: what vulnd fetch refuses (exit 2, one line) and
// how it reads -years and -max-age.
func TestFetchCommandLine(t *testing.T) {
	// Every case but the last two is refused before the directory is
	// looked at (feeds does not exist); a fixed name keeps the subtests'
	// names the same from run to run.
	dir := "feeds"
	thisYear := time.Now().UTC().Year()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "vulnd fetch: -dir is required; see vulnd help fetch\n"},
		{[]string{"-dir", dir, "extra"}, "vulnd fetch: unexpected argument \"extra\"; see vulnd help fetch\n"},
		{[]string{"-dir", dir, "-years", "2001-2024"}, "vulnd fetch: -years \"2001-2024\": NVD's yearly feeds start at 2002 (which holds 1999 to 2002); see vulnd help fetch\n"},
		{[]string{"-dir", dir, "-years", "2024-2023"}, "vulnd fetch: -years \"2024-2023\": the first is after the last; see vulnd help fetch\n"},
		{[]string{"-dir", dir, "-years", "recent"}, "vulnd fetch: -years \"recent\": want FIRST-LAST (such as 2002-" + fmt.Sprint(time.Now().UTC().Year()) + "), one year, or all; see vulnd help fetch\n"},
		{[]string{"-dir", dir, "-max-age", "a week"}, "vulnd fetch: invalid value \"a week\" for flag -max-age: \"a week\" is neither days (8d) nor a duration (36h); see vulnd help fetch\n"},
		{[]string{"-dir", dir, "-max-age", "0d"}, "vulnd fetch: -max-age must be more than 0; see vulnd help fetch\n"},
		{[]string{"-dir", dir, "-attempts", "0"}, "vulnd fetch: -attempts must be at least 1; see vulnd help fetch\n"},
		{[]string{"-dir", dir, "-timeout", "0s"}, "vulnd fetch: -timeout must be more than 0; see vulnd help fetch\n"},
		// Issue 24 item 5: a URL that is not http(s), a future year and a
		// missing -dir are refused at once, naming the flag.
		{[]string{"-dir", dir, "-base-url", "ftp://nvd.example/feeds/"}, "vulnd fetch: -base-url \"ftp://nvd.example/feeds/\" is not an http:// or https:// URL; see vulnd help fetch\n"},
		{[]string{"-dir", dir, "-base-url", "nvd.nist.gov/feeds/json/cve/2.0/"}, "vulnd fetch: -base-url \"nvd.nist.gov/feeds/json/cve/2.0/\" is not an http:// or https:// URL; see vulnd help fetch\n"},
		{[]string{"-dir", dir, "-base-url", "http://"}, "vulnd fetch: -base-url \"http://\" is not an http:// or https:// URL; see vulnd help fetch\n"},
		{[]string{"-dir", dir, "-cwe-url", "file:///srv/cwec_latest.xml.zip"}, "vulnd fetch: -cwe-url \"file:///srv/cwec_latest.xml.zip\" is not an http:// or https:// URL; see vulnd help fetch\n"},
		{[]string{"-dir", dir, "-epss-url", "epss.empiricalsecurity.com/epss_scores-current.csv.gz"}, "vulnd fetch: -epss-url \"epss.empiricalsecurity.com/epss_scores-current.csv.gz\" is not an http:// or https:// URL; see vulnd help fetch\n"},
		{[]string{"-dir", dir, "-cve5-url", "ftp://mirror.example/cvelistV5/"}, "vulnd fetch: -cve5-url \"ftp://mirror.example/cvelistV5/\" is not an http:// or https:// URL; see vulnd help fetch\n"},
		{[]string{"-dir", dir, "-years", fmt.Sprintf("2024-%d", thisYear+1)}, fmt.Sprintf("vulnd fetch: -years \"2024-%d\": %d is in the future; NVD's last yearly feed is %d's; see vulnd help fetch\n", thisYear+1, thisYear+1, thisYear)},
		{[]string{"-dir", dir, "-years", fmt.Sprint(thisYear + 1)}, fmt.Sprintf("vulnd fetch: -years \"%d\": %d is in the future; NVD's last yearly feed is %d's; see vulnd help fetch\n", thisYear+1, thisYear+1, thisYear)},
		{[]string{"-dir", dir, "-base-url", "http://127.0.0.1:1/"}, "vulnd fetch: -dir feeds does not exist; create it first; see vulnd help fetch\n"},
		{[]string{"-dir", "fetch.go"}, "vulnd fetch: -dir fetch.go is not a directory; see vulnd help fetch\n"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errs bytes.Buffer
			code := run(append([]string{"fetch"}, tc.args...), &out, &errs)
			if diff := cmp.Diff([]any{2, tc.want, ""}, []any{code, errs.String(), out.String()}); diff != "" {
				t.Errorf("exit, stderr, stdout (-want +got):\n%s", diff)
			}
		})
	}
	for _, tc := range []struct {
		in          string
		first, last int
	}{{"all", 2002, 2026}, {"2024", 2024, 2024}, {"2002-2026", 2002, 2026}, {"2010-2012", 2010, 2012}} {
		first, last, err := parseYears(tc.in, 2026)
		if diff := cmp.Diff([]any{tc.first, tc.last, nil}, []any{first, last, err}); diff != "" {
			t.Errorf("parseYears(%q) (-want +got):\n%s", tc.in, diff)
		}
	}
	for _, tc := range []struct {
		in, str string
		d       time.Duration
	}{{"8d", "8d", 8 * 24 * time.Hour}, {"1.5d", "36h0m0s", 36 * time.Hour}, {"36h", "36h0m0s", 36 * time.Hour}, {"30m", "30m0s", 30 * time.Minute}} {
		var d days
		err := d.Set(tc.in)
		if diff := cmp.Diff([]any{tc.d, tc.str, nil}, []any{time.Duration(d), d.String(), err}); diff != "" {
			t.Errorf("-max-age %s (-want +got):\n%s", tc.in, diff)
		}
	}
}

// feedSite serves files as NVD does: each feed of files (name -> path of
// a gzipped NVD feed) with a .meta made for it, and the CWE catalog as
// /cwe.zip; and the sources of sourceFlags: FIRST's EPSS file and a
// cvelistV5 release (sourceFiles). A request for a path in stall is answered with a few bytes,
// then nothing until the client leaves; stalled is closed then. hits
// tells how many times a path was asked for.
func feedSite(t *testing.T, feeds map[string]string, stall string) (srv *httptest.Server, stalled chan struct{}, hits func(path string) int) {
	t.Helper()
	files := map[string][]byte{}
	for name, path := range feeds {
		g, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(g))
		if err != nil {
			t.Fatal(err)
		}
		content, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(content)
		files["/"+name+".json.gz"] = g
		files["/"+name+".meta"] = []byte(fmt.Sprintf("lastModifiedDate:2026-11-20T03:00:00-05:00\r\nsize:%d\r\nzipSize:%d\r\ngzSize:%d\r\nsha256:%s\r\n",
			len(content), len(g)+100, len(g), strings.ToUpper(hex.EncodeToString(sum[:]))))
	}
	cwe, err := os.ReadFile(sharedData(t, "cwe/cwec_v4.15.xml.zip"))
	if err != nil {
		t.Fatal(err)
	}
	files["/cwe.zip"] = cwe
	for p, b := range sourceFiles(t) {
		files[p] = b
	}
	stalled = make(chan struct{})
	var mu sync.Mutex
	count := map[string]int{}
	hits = func(path string) int {
		mu.Lock()
		defer mu.Unlock()
		return count[path]
	}
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		count[r.URL.Path]++
		mu.Unlock()
		if r.URL.Path == stall {
			w.Write(files[r.URL.Path][:100])
			w.(http.Flusher).Flush()
			close(stalled)
			<-r.Context().Done()
			return
		}
		if b, ok := files[r.URL.Path]; ok {
			// With an ETag, conditional requests and Range, as GitHub's
			// and FIRST's servers answer.
			sum := sha256.Sum256(b)
			w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:8])+`"`)
			http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(b))
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, stalled, hits
}

// sourceFlags point vulnd fetch's EPSS and CVE JSON 5 sources at
// feedSite srv.
func sourceFlags(srv *httptest.Server) []string {
	return []string{"-epss-url", srv.URL + "/epss_scores-current.csv.gz", "-cve5-url", srv.URL + "/cve5/"}
}

// noSources turns vulnd fetch's EPSS and CVE JSON 5 sources off, for the
// tests of NVD's feeds alone (they must never reach the real hosts).
var noSources = []string{"-epss-url", "-", "-cve5-url", "-"}

// bundleName and deltaName are the cvelistV5 assets feedSite serves.
const (
	bundleName = "2026-11-25_all_CVEs_at_midnight.zip.zip"
	deltaName  = "2026-11-25_delta_CVEs_at_0100Z.zip"
)

// sourceFiles are the EPSS and cvelistV5 paths of feedSite: the real
// EPSS rows of ../shared/data/epss, gzipped, as
// /epss_scores-current.csv.gz; and a release (/cve5/releases/latest)
// whose baseline holds cves.zip holding the 18 real records of
// ../shared/data/cve5/cvelistV5-sample.json.gz, one file each, as
// cvelistV5 lays them out, and whose delta holds two of them again.
func sourceFiles(t *testing.T) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	csv, err := os.ReadFile(sharedData(t, "epss/epss-sample.csv"))
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(csv)
	zw.Close()
	files["/epss_scores-current.csv.gz"] = gz.Bytes()
	g, err := os.ReadFile(sharedData(t, "cve5/cvelistV5-sample.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(g))
	if err != nil {
		t.Fatal(err)
	}
	var recs []json.RawMessage
	if err := json.NewDecoder(zr).Decode(&recs); err != nil {
		t.Fatal(err)
	}
	zipOf := func(names []string, bodies [][]byte) []byte {
		var b bytes.Buffer
		zw := zip.NewWriter(&b)
		for i, n := range names {
			w, err := zw.Create(n)
			if err != nil {
				t.Fatal(err)
			}
			w.Write(bodies[i])
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	var names []string
	var bodies [][]byte
	for _, r := range recs {
		var m struct {
			Meta struct {
				ID string `json:"cveId"`
			} `json:"cveMetadata"`
		}
		json.Unmarshal(r, &m)
		names = append(names, "cves/"+m.Meta.ID[4:8]+"/"+m.Meta.ID[9:len(m.Meta.ID)-3]+"xxx/"+m.Meta.ID+".json")
		bodies = append(bodies, r)
	}
	full := zipOf([]string{"cves.zip"}, [][]byte{zipOf(names, bodies)})
	delta := zipOf([]string{"deltaCves/" + filepath.Base(names[0]), "deltaCves/" + filepath.Base(names[1])}, bodies[:2])
	var assets []map[string]any
	for _, a := range []struct {
		name string
		b    []byte
	}{{bundleName, full}, {deltaName, delta}} {
		sum := sha256.Sum256(a.b)
		files["/cve5/releases/download/cve_2026-11-25_0100Z/"+a.name] = a.b
		assets = append(assets, map[string]any{"name": a.name, "size": len(a.b), "digest": "sha256:" + hex.EncodeToString(sum[:]),
			"browser_download_url": "download/cve_2026-11-25_0100Z/" + a.name})
	}
	rel, _ := json.Marshal(map[string]any{"tag_name": "cve_2026-11-25_0100Z", "assets": assets})
	files["/cve5/releases/latest"] = rel
	return files
}

// syntheticFeeds writes the 2024, modified and recent feeds, one made-up
// CVE each (CVE-2024-0001 to -0003), as gzipped files, for feedSite.
func syntheticFeeds(t *testing.T) map[string]string {
	t.Helper()
	dir := t.TempDir()
	feeds := map[string]string{}
	for i, name := range []string{"nvdcve-2.0-2024", "nvdcve-2.0-modified", "nvdcve-2.0-recent"} {
		content := fmt.Sprintf(`{"format":"NVD_CVE","version":"2.0","vulnerabilities":[{"cve":{"id":"CVE-2024-%04d","published":"2024-01-01T00:00:00.000","lastModified":"2024-01-02T00:00:00.000","vulnStatus":"Analyzed","descriptions":[{"lang":"en","value":"x"}],"references":[]}}]}`, i+1)
		var gz bytes.Buffer
		zw := gzip.NewWriter(&gz)
		zw.Write([]byte(content))
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		feeds[name] = filepath.Join(dir, name+".json.gz")
		if err := os.WriteFile(feeds[name], gz.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return feeds
}

// TestBinaryFetchBuild: the binary mirrors a site serving real NVD
// records (the shared sample as the 2024 feed, the change pairs as
// modified and recent) and MITRE's catalog; vulnd feeds lists what it
// fetched, and vulnd build and validate accept the result.
func TestBinaryFetchBuild(t *testing.T) {
	tmp := t.TempDir()
	bin := buildBinary(t, tmp)
	srv, _, _ := feedSite(t, map[string]string{
		"nvdcve-2.0-2024":     sharedData(t, "nvd/nvdcve-2.0-sample.json.gz"),
		"nvdcve-2.0-modified": sharedData(t, "nvd/changes/after.json.gz"),
		"nvdcve-2.0-recent":   sharedData(t, "nvd/changes/before.json.gz"),
	}, "")
	dir := filepath.Join(tmp, "feeds")
	os.Mkdir(dir, 0o755)
	out, err := exec.Command(bin, append([]string{"fetch", "-dir", dir, "-base-url", srv.URL, "-cwe-url", srv.URL + "/cwe.zip", "-years", "2024"}, noSources...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("fetch: %v\n%s", err, out)
	}
	for _, w := range []string{"vulnd fetch: fetched nvdcve-2.0-2024.json.gz: 128.3 kB in ", "vulnd fetch: fetched cwec_latest.xml.zip: 1.7 MB in ", dir + ": 4 fetched, 0 unchanged\n"} {
		if !strings.Contains(string(out), w) {
			t.Errorf("fetch output lacks %q:\n%s", w, out)
		}
	}
	listed, err := exec.Command(bin, "feeds", dir).Output()
	if err != nil {
		t.Fatal(err)
	}
	feeds := strings.Fields(string(listed))
	want := []string{filepath.Join(dir, "nvdcve-2.0-2024.json.gz"), filepath.Join(dir, "nvdcve-2.0-modified.json.gz"), filepath.Join(dir, "nvdcve-2.0-recent.json.gz")}
	if diff := cmp.Diff(want, feeds); diff != "" {
		t.Fatalf("vulnd feeds (-want +got):\n%s", diff)
	}
	snap := filepath.Join(tmp, "snap")
	out, err = exec.Command(bin, append([]string{"build", "-cwe", filepath.Join(dir, "cwec_latest.xml.zip"), "-o", snap}, feeds...)...).Output()
	if err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	// 186 sample records, and of the 15 in after.json.gz, 2 updates of
	// CVEs not in the sample and 3 new CVEs; before.json.gz adds none.
	if !strings.Contains(string(out), ": 191 CVEs, 1427 CWEs,") {
		t.Errorf("build: %s", out)
	}
	if out, err := exec.Command(bin, "validate", snap).CombinedOutput(); err != nil {
		t.Errorf("validate: %v\n%s", err, out)
	}
}

// TestBinaryFetchInterrupted: SIGINT in the middle of a download stops
// vulnd fetch with exit 1 and one line naming the URL; the file it was
// at is not written, no temporary file is left, and the feeds fetched
// before it are in place.
func TestBinaryFetchInterrupted(t *testing.T) {
	tmp := t.TempDir()
	bin := buildBinary(t, tmp)
	srv, stalled, _ := feedSite(t, map[string]string{
		"nvdcve-2.0-2024":     sharedData(t, "nvd/nvdcve-2.0-sample.json.gz"),
		"nvdcve-2.0-modified": sharedData(t, "nvd/changes/after.json.gz"),
		"nvdcve-2.0-recent":   sharedData(t, "nvd/changes/before.json.gz"),
	}, "/nvdcve-2.0-modified.json.gz")
	dir := filepath.Join(tmp, "feeds")
	os.Mkdir(dir, 0o755)
	cmd := exec.Command(bin, append([]string{"fetch", "-dir", dir, "-base-url", srv.URL, "-cwe-url", "-", "-years", "2024"}, noSources...)...)
	var out, errs syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	select {
	case <-stalled:
	case <-time.After(30 * time.Second):
		t.Fatalf("the download of modified never started:\n%s", errs.String())
	}
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit %v, want status 1", err)
	}
	want := "vulnd fetch: fetched nvdcve-2.0-2024.json.gz: 128.3 kB in "
	lines := strings.Split(strings.TrimSuffix(errs.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], want) ||
		lines[1] != "vulnd fetch: "+srv.URL+"/nvdcve-2.0-modified.json.gz: interrupted: context canceled" {
		t.Errorf("stderr %q, want the 2024 feed fetched, then one line naming modified's URL", errs.String())
	}
	if out.String() != "" {
		t.Errorf("stdout %q", out.String())
	}
	var names []string
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{"nvdcve-2.0-2024.json.gz", "nvdcve-2.0-2024.meta"}, names); diff != "" {
		t.Errorf("directory (-want +got):\n%s", diff)
	}
}

// TestFetchAllSources: vulnd fetch with -epss-url and -cve5-url pointed
// at a local site (a stand-in for FIRST's host and GitHub's) mirrors the
// EPSS file and the cvelistV5 bundles beside NVD's feeds; vulnd feeds
// lists the feeds then the bundles, and -epss the EPSS file; vulnd build
// reads the records; a second fetch downloads nothing. A source turned
// off with - is not asked for.
func TestFetchAllSources(t *testing.T) {
	srv, _, hits := feedSite(t, syntheticFeeds(t), "")
	dir := t.TempDir()
	args := append([]string{"fetch", "-dir", dir, "-base-url", srv.URL, "-cwe-url", "-", "-years", "2024-2024"}, sourceFlags(srv)...)
	o, e, code := vulndRun(args...)
	if code != 0 || o != dir+": 6 fetched, 0 unchanged\n" {
		t.Fatalf("fetch: exit %d, stdout %q, stderr:\n%s", code, o, e)
	}
	for _, w := range []string{"vulnd fetch: fetched epss_scores-2026-09-29.csv.gz: ", ", 10 scores of 2026-09-29 in ",
		"vulnd fetch: fetched " + bundleName + ": ", ", 18 records in ", "vulnd fetch: fetched " + deltaName + ": "} {
		if !strings.Contains(e, w) {
			t.Errorf("stderr lacks %q:\n%s", w, e)
		}
	}
	o, e, code = vulndRun("feeds", dir)
	inputs := strings.Fields(o)
	want := []string{filepath.Join(dir, "nvdcve-2.0-2024.json.gz"), filepath.Join(dir, "nvdcve-2.0-modified.json.gz"), filepath.Join(dir, "nvdcve-2.0-recent.json.gz"),
		filepath.Join(dir, bundleName), filepath.Join(dir, deltaName)}
	if diff := cmp.Diff(want, inputs); diff != "" || code != 0 || e != "" {
		t.Errorf("vulnd feeds: exit %d, stderr %q (-want +got):\n%s", code, e, diff)
	}
	if o, e, code := vulndRun("feeds", "-epss", dir); code != 0 || o != filepath.Join(dir, "epss_scores-2026-09-29.csv.gz")+"\n" {
		t.Errorf("vulnd feeds -epss: exit %d, stdout %q, stderr %q", code, o, e)
	}
	snap := filepath.Join(t.TempDir(), "snap")
	o, e, code = vulndRun(append([]string{"build", "-cwe", sharedData(t, "cwe/cwec_v4.15.xml.zip"), "-o", snap}, inputs...)...)
	if code != 0 || !strings.Contains(o, ": 21 CVEs") {
		t.Errorf("build: exit %d, stdout %q, stderr:\n%s", code, o, e)
	}
	o, e, code = vulndRun(args...)
	if code != 0 || o != dir+": 0 fetched, 5 unchanged\n" {
		t.Errorf("second fetch: exit %d, stdout %q, stderr:\n%s", code, o, e)
	}
	if n := hits("/cve5/releases/download/cve_2026-11-25_0100Z/" + bundleName); n != 1 {
		t.Errorf("the baseline was downloaded %d times, want once", n)
	}
	// Turned off, neither is asked for, and the files kept stay.
	before := hits("/cve5/releases/latest") + hits("/epss_scores-current.csv.gz")
	if o, e, code := vulndRun(append(args[:len(args)-4], noSources...)...); code != 0 || o != dir+": 0 fetched, 2 unchanged\n" {
		t.Errorf("fetch with - : exit %d, stdout %q, stderr:\n%s", code, o, e)
	}
	if after := hits("/cve5/releases/latest") + hits("/epss_scores-current.csv.gz"); after != before {
		t.Errorf("the sources turned off were asked for %d times", after-before)
	}
	if o, _, _ := vulndRun("feeds", dir); !cmp.Equal(want, strings.Fields(o)) {
		t.Errorf("after a fetch without the sources, vulnd feeds lists %q", o)
	}
}

// TestFetchSourceFails: when NVD's feeds are all fetched but another
// source fails (here the EPSS URL answers 404), vulnd fetch still fetches
// the sources after it, prints its counts, names the failure on stderr,
// and exits 3, which tells make refresh (and the CronJob) that a build
// from the fresh feeds may go on.
func TestFetchSourceFails(t *testing.T) {
	srv, _, _ := feedSite(t, syntheticFeeds(t), "")
	dir := t.TempDir()
	flags := sourceFlags(srv)
	for i := range flags {
		if flags[i] == "-epss-url" {
			flags[i+1] = srv.URL + "/no-such-epss.csv.gz"
		}
	}
	args := append([]string{"fetch", "-dir", dir, "-base-url", srv.URL, "-cwe-url", "-", "-years", "2024-2024", "-attempts", "1"}, flags...)
	o, e, code := vulndRun(args...)
	if code != 3 || o != dir+": 5 fetched, 0 unchanged\n" {
		t.Errorf("fetch: exit %d, stdout %q, stderr:\n%s", code, o, e)
	}
	if want := "vulnd fetch: " + srv.URL + "/no-such-epss.csv.gz"; !strings.Contains(e, want) || !strings.Contains(e, "NVD's feeds are current") {
		t.Errorf("stderr lacks %q and a word on NVD's feeds:\n%s", want, e)
	}
}
