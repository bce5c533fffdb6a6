package fetch

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/klauspost/compress/gzip"

	"github.com/vulnd/vulnd/loader"
)

// mirror is a stand-in for NVD's feed host and MITRE's catalog: it serves
// feeds with their .meta files and counts the requests of each path.
type mirror struct {
	mu      sync.Mutex
	files   map[string][]byte // path -> body
	hits    map[string]int
	fail    map[string][]int // path -> statuses to answer first, in order
	retryIn string           // Retry-After of those failures
	cweTag  string
}

func newMirror() *mirror {
	return &mirror{files: map[string][]byte{}, hits: map[string]int{}, fail: map[string][]int{}, cweTag: `"v1"`}
}

// feed is a small NVD CVE API 2.0 feed holding the given CVE ids.
func feed(ids ...string) []byte {
	var vs []string
	for _, id := range ids {
		vs = append(vs, fmt.Sprintf(`{"cve":{"id":%q,"published":"2024-01-01T00:00:00.000","lastModified":"2024-01-02T00:00:00.000","descriptions":[{"lang":"en","value":"x"}],"references":[]}}`, id))
	}
	return []byte(`{"format":"NVD_CVE","version":"2.0","vulnerabilities":[` + strings.Join(vs, ",") + `]}`)
}

// put serves name.json.gz holding content, and its meta, changed at mod.
func (m *mirror) put(name string, content []byte, mod string) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(content)
	zw.Close()
	sum := sha256.Sum256(content)
	meta := fmt.Sprintf("lastModifiedDate:%s\r\nsize:%d\r\nzipSize:1\r\ngzSize:%d\r\nsha256:%s\r\n", mod, len(content), gz.Len(), strings.ToUpper(hex.EncodeToString(sum[:])))
	m.mu.Lock()
	defer m.mu.Unlock()
	m.files["/feeds/"+name+".json.gz"] = gz.Bytes()
	m.files["/feeds/"+name+".meta"] = []byte(meta)
}

func catalog(t *testing.T) []byte {
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	w, _ := zw.Create("cwec_v4.15.xml")
	w.Write([]byte(`<Weakness_Catalog/>`))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func (m *mirror) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.hits[r.URL.Path]++
	if f := m.fail[r.URL.Path]; len(f) > 0 {
		m.fail[r.URL.Path] = f[1:]
		if m.retryIn != "" {
			w.Header().Set("Retry-After", m.retryIn)
		}
		w.WriteHeader(f[0])
		return
	}
	b, ok := m.files[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	if r.URL.Path == "/cwe.zip" {
		w.Header().Set("ETag", m.cweTag)
		if r.Header.Get("If-None-Match") == m.cweTag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b)
}

func (m *mirror) count(path string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.hits[path]
}

// setup is a mirror with the 2023 and 2024 feeds, modified, recent and
// the catalog, and the options of a fetch from it into a new directory.
func setup(t *testing.T) (*mirror, Options, *[]time.Duration) {
	t.Helper()
	m := newMirror()
	m.put("nvdcve-2.0-2023", feed("CVE-2023-0001"), "2026-11-01T03:00:00-05:00")
	m.put("nvdcve-2.0-2024", feed("CVE-2024-0001", "CVE-2024-0002"), "2026-11-01T03:00:00-05:00")
	m.put("nvdcve-2.0-modified", feed("CVE-2024-0002"), "2026-11-20T03:00:00-05:00")
	m.put("nvdcve-2.0-recent", feed(), "2026-11-20T03:00:00-05:00")
	m.files["/cwe.zip"] = catalog(t)
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	var slept []time.Duration
	now := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	opt := Options{
		Dir: t.TempDir(), BaseURL: srv.URL + "/feeds", CWEURL: srv.URL + "/cwe.zip",
		FirstYear: 2023, LastYear: 2024, Client: srv.Client(),
		Now:   func() time.Time { return now },
		Sleep: func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil },
	}
	return m, opt, &slept
}

func dirFiles(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// TestRunOnlyWhatChanged: the first run fetches everything; the second
// nothing (the metas are equal); after one feed changes, only it.
func TestRunOnlyWhatChanged(t *testing.T) {
	m, opt, _ := setup(t)
	res, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	all := []string{"nvdcve-2.0-2023.json.gz", "nvdcve-2.0-2024.json.gz", "nvdcve-2.0-modified.json.gz", "nvdcve-2.0-recent.json.gz", CWEName}
	if diff := cmp.Diff(all, res.Fetched); diff != "" || !res.Full {
		t.Errorf("first run fetched (-want +got):\n%s (full %v)", diff, res.Full)
	}
	want := []string{StateName, CWEName, "nvdcve-2.0-2023.json.gz", "nvdcve-2.0-2023.meta", "nvdcve-2.0-2024.json.gz", "nvdcve-2.0-2024.meta",
		"nvdcve-2.0-modified.json.gz", "nvdcve-2.0-modified.meta", "nvdcve-2.0-recent.json.gz", "nvdcve-2.0-recent.meta"}
	slices.Sort(want)
	if diff := cmp.Diff(want, dirFiles(t, opt.Dir)); diff != "" {
		t.Errorf("directory (-want +got):\n%s", diff)
	}
	// The directory is what build reads: its feeds are found by content.
	feeds, _, err := loader.FeedFiles(opt.Dir)
	if err != nil || len(feeds) != 4 {
		t.Errorf("FeedFiles: %v %v, want the 4 feeds", feeds, err)
	}
	if _, err := loader.ReadFeeds(feeds); err != nil {
		t.Errorf("the fetched feeds do not read: %v", err)
	}

	res, err = Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Fetched) != 0 || res.Full {
		t.Errorf("second run fetched %v (full %v), want nothing and no yearly feed checked", res.Fetched, res.Full)
	}
	if n := m.count("/feeds/nvdcve-2.0-2024.meta"); n != 1 {
		t.Errorf("the 2024 meta was asked %d times, want once (the run after is within -max-age)", n)
	}

	m.put("nvdcve-2.0-modified", feed("CVE-2024-0002", "CVE-2024-0003"), "2026-11-21T03:00:00-05:00")
	res, err = Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"nvdcve-2.0-modified.json.gz"}, res.Fetched); diff != "" {
		t.Errorf("third run fetched (-want +got):\n%s", diff)
	}
	if n := m.count("/feeds/nvdcve-2.0-recent.json.gz"); n != 1 {
		t.Errorf("recent downloaded %d times, want once", n)
	}
}

// TestRunProgress: a download reports its bytes, the last report being
// the whole file.
func TestRunProgress(t *testing.T) {
	m, opt, _ := setup(t)
	big := feed(strings.Split(strings.TrimSuffix(strings.Repeat("CVE-2024-0001,", 40000), ","), ",")...)
	m.put("nvdcve-2.0-2024", big, "2026-11-01T03:00:00-05:00")
	last := map[string][2]int64{}
	reports := 0
	opt.Progress = func(file string, done, total int64) { last[file] = [2]int64{done, total}; reports++ }
	if _, err := Run(context.Background(), opt); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(opt.Dir, "nvdcve-2.0-2024.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if got := last["nvdcve-2.0-2024.json.gz"]; got[0] != fi.Size() || got[1] != fi.Size() {
		t.Errorf("last report %v, want the file's %d bytes of %d", got, fi.Size(), fi.Size())
	}
	if reports < 5 {
		t.Errorf("%d reports for 5 files", reports)
	}
}

// TestRunMaxAge: more than -max-age after the last full run, the yearly
// feeds are checked again.
func TestRunMaxAge(t *testing.T) {
	m, opt, _ := setup(t)
	if _, err := Run(context.Background(), opt); err != nil {
		t.Fatal(err)
	}
	later := opt.Now().Add(DefaultMaxAge + time.Hour)
	opt.Now = func() time.Time { return later }
	res, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Full || m.count("/feeds/nvdcve-2.0-2023.meta") != 2 || m.count("/feeds/nvdcve-2.0-2023.json.gz") != 1 {
		t.Errorf("full %v, 2023 meta asked %d times, feed %d times; want a full run that downloads nothing",
			res.Full, m.count("/feeds/nvdcve-2.0-2023.meta"), m.count("/feeds/nvdcve-2.0-2023.json.gz"))
	}
}

// TestRunBadSum: a feed whose content does not match its meta is refused
// and the old copy and its meta stay; no temporary file is left.
func TestRunBadSum(t *testing.T) {
	m, opt, _ := setup(t)
	if _, err := Run(context.Background(), opt); err != nil {
		t.Fatal(err)
	}
	oldFeed, _ := os.ReadFile(filepath.Join(opt.Dir, "nvdcve-2.0-modified.json.gz"))
	oldMeta, _ := os.ReadFile(filepath.Join(opt.Dir, "nvdcve-2.0-modified.meta"))
	m.put("nvdcve-2.0-modified", feed("CVE-2024-0009"), "2026-11-21T03:00:00-05:00")
	// Its meta gives another content's sum.
	sum := sha256.Sum256([]byte("other"))
	m.mu.Lock()
	m.files["/feeds/nvdcve-2.0-modified.meta"] = []byte("lastModifiedDate:2026-11-21T04:00:00-05:00\r\nsha256:" + strings.ToUpper(hex.EncodeToString(sum[:])) + "\r\n")
	m.mu.Unlock()
	_, err := Run(context.Background(), opt)
	if err == nil || !strings.Contains(err.Error(), "/feeds/nvdcve-2.0-modified.json.gz: sha256 of the content is") {
		t.Fatalf("err %v, want the URL and the sum mismatch", err)
	}
	newFeed, _ := os.ReadFile(filepath.Join(opt.Dir, "nvdcve-2.0-modified.json.gz"))
	newMeta, _ := os.ReadFile(filepath.Join(opt.Dir, "nvdcve-2.0-modified.meta"))
	if !bytes.Equal(oldFeed, newFeed) || !bytes.Equal(oldMeta, newMeta) {
		t.Error("the old feed or meta changed after a refused download")
	}
	for _, n := range dirFiles(t, opt.Dir) {
		if strings.Contains(n, ".tmp-") {
			t.Errorf("temporary file left: %s", n)
		}
	}
}

// TestRunRetries: 503 and 429 are tried again, after Retry-After when
// given; a 404 fails at once, naming the URL.
func TestRunRetries(t *testing.T) {
	m, opt, slept := setup(t)
	m.fail["/feeds/nvdcve-2.0-2023.json.gz"] = []int{503, 429}
	m.retryIn = "7"
	if _, err := Run(context.Background(), opt); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]time.Duration{7 * time.Second, 7 * time.Second}, *slept); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
	if n := m.count("/feeds/nvdcve-2.0-2023.json.gz"); n != 3 {
		t.Errorf("%d requests, want 3", n)
	}

	m2, opt2, _ := setup(t)
	delete(m2.files, "/feeds/nvdcve-2.0-2024.meta")
	_, err := Run(context.Background(), opt2)
	if err == nil || !strings.Contains(err.Error(), "/feeds/nvdcve-2.0-2024.meta: 404 Not Found") {
		t.Errorf("err %v, want the URL and 404", err)
	}
	if n := m2.count("/feeds/nvdcve-2.0-2024.meta"); n != 1 {
		t.Errorf("a 404 asked %d times, want once", n)
	}

	m3, opt3, _ := setup(t)
	m3.fail["/feeds/nvdcve-2.0-recent.meta"] = []int{500, 500, 500, 500, 500}
	opt3.Attempts = 3
	if _, err := Run(context.Background(), opt3); err == nil || !strings.Contains(err.Error(), "500 Internal Server Error (after 3 tries)") {
		t.Errorf("err %v, want the last failure after 3 tries", err)
	}
}

// TestRunCatalogNotModified: the catalog is asked for with its ETag, and a
// 304 leaves it.
func TestRunCatalogNotModified(t *testing.T) {
	m, opt, _ := setup(t)
	if _, err := Run(context.Background(), opt); err != nil {
		t.Fatal(err)
	}
	res, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(res.Unchanged, CWEName) || m.count("/cwe.zip") != 2 {
		t.Errorf("unchanged %v, %d requests", res.Unchanged, m.count("/cwe.zip"))
	}
	m.cweTag = `"v2"`
	m.files["/cwe.zip"] = []byte("not a zip")
	if _, err := Run(context.Background(), opt); err == nil || !strings.Contains(err.Error(), "not a zip archive") {
		t.Errorf("err %v, want the catalog refused", err)
	}
	if b, _ := os.ReadFile(filepath.Join(opt.Dir, CWEName)); !bytes.Equal(b, catalog(t)) {
		t.Error("the old catalog was replaced by a bad one")
	}
}

func TestParseMeta(t *testing.T) {
	sum := strings.Repeat("AB", 32)
	got, err := ParseMeta([]byte("lastModifiedDate:2026-11-20T03:00:00-05:00\r\nsize:123\r\nzipSize:10\r\ngzSize:9\r\nsha256:" + strings.ToLower(sum) + "\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Meta{LastModified: "2026-11-20T03:00:00-05:00", Size: 123, SHA256: sum}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, bad := range []string{"", "sha256:" + sum, "lastModifiedDate:x", "lastModifiedDate:x\nsha256:12", "lastModifiedDate:x\nsize:-1\nsha256:" + sum, "garbage"} {
		if _, err := ParseMeta([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func FuzzParseMeta(f *testing.F) {
	f.Add([]byte("lastModifiedDate:2026-11-20T03:00:00-05:00\r\nsize:123\r\nsha256:" + strings.Repeat("AB", 32) + "\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseMeta(b)
		if err != nil {
			return
		}
		if len(m.SHA256) != 64 || m.LastModified == "" || m.Size < 0 || strings.ToUpper(m.SHA256) != m.SHA256 {
			t.Errorf("accepted %+v", m)
		}
	})
}

// TestRunAllOrNothing: when one file of a run fails, none of the run's
// downloads replaces anything: modified stays at its old copy although
// its own download was good, and a first run that fails leaves the
// directory empty.
func TestRunAllOrNothing(t *testing.T) {
	m, opt, _ := setup(t)
	if _, err := Run(context.Background(), opt); err != nil {
		t.Fatal(err)
	}
	before := map[string][]byte{}
	for _, n := range dirFiles(t, opt.Dir) {
		before[n], _ = os.ReadFile(filepath.Join(opt.Dir, n))
	}
	m.put("nvdcve-2.0-modified", feed("CVE-2024-0007"), "2026-11-21T03:00:00-05:00")
	m.put("nvdcve-2.0-recent", feed("CVE-2024-0008"), "2026-11-21T03:00:00-05:00")
	m.mu.Lock()
	m.files["/feeds/nvdcve-2.0-recent.json.gz"] = []byte("not gzip")
	m.mu.Unlock()
	if _, err := Run(context.Background(), opt); err == nil || !strings.Contains(err.Error(), "nvdcve-2.0-recent.json.gz: not gzip") {
		t.Fatalf("err %v, want recent refused", err)
	}
	after := map[string][]byte{}
	for _, n := range dirFiles(t, opt.Dir) {
		after[n], _ = os.ReadFile(filepath.Join(opt.Dir, n))
	}
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("the directory changed in a failed run (-before +after):\n%s", diff)
	}

	// A first run whose last feed is bad: 2023, 2024 and modified were
	// downloaded and checked, and are dropped.
	m2, fresh, _ := setup(t)
	m2.files["/feeds/nvdcve-2.0-recent.json.gz"] = []byte("not gzip")
	if _, err := Run(context.Background(), fresh); err == nil {
		t.Fatal("a run with a bad feed succeeded")
	}
	if m2.count("/feeds/nvdcve-2.0-modified.json.gz") != 1 {
		t.Fatal("modified was not downloaded before recent failed")
	}
	if got := dirFiles(t, fresh.Dir); len(got) != 0 {
		t.Errorf("a failed first run left %v", got)
	}
}
