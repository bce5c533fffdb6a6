package main

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
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
	// The fetch command it echoes is the one it runs, flags and all.
	if echo := "vulnd fetch -dir " + feeds + " -base-url " + srv.URL + "/ -cwe-url " + srv.URL + "/cwe.zip -years 2024-2024\n"; !strings.Contains(string(out), echo) {
		t.Errorf("output lacks the fetch command %q:\n%s", echo, out)
	}
	if _, err := loader.Validate(snap); err != nil {
		t.Errorf("the refreshed snapshot: %v", err)
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
// /cwe.zip. A request for a path in stall is answered with a few bytes,
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
			w.Write(b)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, stalled, hits
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
	out, err := exec.Command(bin, "fetch", "-dir", dir, "-base-url", srv.URL, "-cwe-url", srv.URL+"/cwe.zip", "-years", "2024").CombinedOutput()
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
	cmd := exec.Command(bin, "fetch", "-dir", dir, "-base-url", srv.URL, "-cwe-url", "-", "-years", "2024")
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
