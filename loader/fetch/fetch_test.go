package fetch

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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
	cweTag  string           // the catalog's ETag; "" for none
	cweMod  string           // the catalog's Last-Modified
	cweReq  []http.Header    // the headers of each catalog request
	// handle, if set, answers a path instead of files.
	handle map[string]http.HandlerFunc
}

func newMirror() *mirror {
	return &mirror{files: map[string][]byte{}, hits: map[string]int{}, fail: map[string][]int{},
		cweTag: `"v1"`, cweMod: "Tue, 16 Jul 2024 12:00:00 GMT", handle: map[string]http.HandlerFunc{}}
}

// feed is a small NVD CVE API 2.0 feed holding the given CVE ids.
func feed(ids ...string) []byte {
	var vs []string
	for _, id := range ids {
		vs = append(vs, fmt.Sprintf(`{"cve":{"id":%q,"published":"2024-01-01T00:00:00.000","lastModified":"2024-01-02T00:00:00.000","descriptions":[{"lang":"en","value":"x"}],"references":[]}}`, id))
	}
	return []byte(`{"format":"NVD_CVE","version":"2.0","vulnerabilities":[` + strings.Join(vs, ",") + `]}`)
}

func gz(content []byte) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(content)
	zw.Close()
	return b.Bytes()
}

// metaOf is the .meta NVD would publish for content and its gzip gzipped.
func metaOf(content, gzipped []byte, mod string) []byte {
	sum := sha256.Sum256(content)
	return []byte(fmt.Sprintf("lastModifiedDate:%s\r\nsize:%d\r\nzipSize:%d\r\ngzSize:%d\r\nsha256:%s\r\n",
		mod, len(content), len(gzipped)+120, len(gzipped), strings.ToUpper(hex.EncodeToString(sum[:]))))
}

// put serves name.json.gz holding content, and its meta, changed at mod.
func (m *mirror) put(name string, content []byte, mod string) {
	g := gz(content)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.files["/feeds/"+name+".json.gz"] = g
	m.files["/feeds/"+name+".meta"] = metaOf(content, g, mod)
}

func (m *mirror) set(path string, b []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.files[path] = b
}

// catalog is a zip holding files, by name and content.
func catalog(t *testing.T, files ...string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for i := 0; i+1 < len(files); i += 2 {
		w, _ := zw.Create(files[i])
		w.Write([]byte(files[i+1]))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func (m *mirror) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m.mu.Lock()
	m.hits[r.URL.Path]++
	if h := m.handle[r.URL.Path]; h != nil {
		m.mu.Unlock()
		h(w, r)
		return
	}
	defer m.mu.Unlock()
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
		m.cweReq = append(m.cweReq, r.Header.Clone())
		if m.cweTag != "" {
			w.Header().Set("ETag", m.cweTag)
		}
		w.Header().Set("Last-Modified", m.cweMod)
		if m.cweTag != "" && r.Header.Get("If-None-Match") == m.cweTag ||
			m.cweTag == "" && r.Header.Get("If-Modified-Since") == m.cweMod {
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

var validCatalog = []string{"cwec_v4.15.xml", `<?xml version="1.0" encoding="UTF-8"?><Weakness_Catalog Name="CWE" Version="4.15"/>`}

// setup is a mirror with the 2023 and 2024 feeds, modified, recent and
// the catalog, and the options of a fetch from it into a new directory
// at 2026-11-21T00:00Z; the waits of the fetch are recorded, not slept.
func setup(t *testing.T) (*mirror, Options, *[]time.Duration) {
	t.Helper()
	m := newMirror()
	m.put("nvdcve-2.0-2023", feed("CVE-2023-0001"), "2026-11-01T03:00:00-05:00")
	m.put("nvdcve-2.0-2024", feed("CVE-2024-0001", "CVE-2024-0002"), "2026-11-01T03:00:00-05:00")
	m.put("nvdcve-2.0-modified", feed("CVE-2024-0002"), "2026-11-20T03:00:00-05:00")
	m.put("nvdcve-2.0-recent", feed(), "2026-11-20T03:00:00-05:00")
	m.files["/cwe.zip"] = catalog(t, validCatalog...)
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	var slept []time.Duration
	now := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	opt := Options{
		Dir: t.TempDir(), BaseURL: srv.URL + "/feeds", CWEURL: srv.URL + "/cwe.zip", EPSSURL: "-", CVE5URL: "-",
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

// dirContent is every file in dir, by name.
func dirContent(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, n := range dirFiles(t, dir) {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			t.Fatal(err)
		}
		out[n] = string(b)
	}
	return out
}

func mustRun(t *testing.T, opt Options) Result {
	t.Helper()
	res, err := Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestRunOnlyWhatChanged: the first run fetches everything; the second
// nothing (the metas are equal); after one feed changes, only it.
func TestRunOnlyWhatChanged(t *testing.T) {
	m, opt, _ := setup(t)
	var logs []string
	opt.Log = func(s string) { logs = append(logs, s) }
	res := mustRun(t, opt)
	all := []string{"nvdcve-2.0-2023.json.gz", "nvdcve-2.0-2024.json.gz", "nvdcve-2.0-modified.json.gz", "nvdcve-2.0-recent.json.gz", CWEName}
	if diff := cmp.Diff(Result{Fetched: all, Full: true}, res); diff != "" {
		t.Errorf("first run (-want +got):\n%s", diff)
	}
	want := []string{StateName, CWEName, "nvdcve-2.0-2023.json.gz", "nvdcve-2.0-2023.meta", "nvdcve-2.0-2024.json.gz", "nvdcve-2.0-2024.meta",
		"nvdcve-2.0-modified.json.gz", "nvdcve-2.0-modified.meta", "nvdcve-2.0-recent.json.gz", "nvdcve-2.0-recent.meta"}
	slices.Sort(want)
	if diff := cmp.Diff(want, dirFiles(t, opt.Dir)); diff != "" {
		t.Errorf("directory (-want +got):\n%s", diff)
	}
	// Each file is the mirror's, byte for byte, and so is its meta.
	for _, n := range []string{"nvdcve-2.0-2024.json.gz", "nvdcve-2.0-2024.meta"} {
		if b, _ := os.ReadFile(filepath.Join(opt.Dir, n)); !bytes.Equal(b, m.files["/feeds/"+n]) {
			t.Errorf("%s differs from the mirror's", n)
		}
	}
	// Its size reads true: a feed of some hundred bytes is not "0.0 MB".
	size2023 := fmt.Sprintf("%d bytes", len(m.files["/feeds/nvdcve-2.0-2023.json.gz"]))
	if len(logs) != 5 || !strings.HasPrefix(logs[0], "fetched nvdcve-2.0-2023.json.gz: "+size2023+" in ") {
		t.Errorf("log %q, want 5 lines, the first for the 2023 feed (%s)", logs, size2023)
	}
	// The directory is what build reads: its feeds are found by content,
	// in build's order, and they decode.
	feeds, _, err := loader.FeedFiles(opt.Dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range feeds {
		names = append(names, filepath.Base(p))
	}
	if diff := cmp.Diff(all[:4], names); diff != "" {
		t.Errorf("FeedFiles (-want +got):\n%s", diff)
	}
	if _, err := loader.ReadFeeds(feeds); err != nil {
		t.Errorf("the fetched feeds do not read: %v", err)
	}

	logs = nil
	res = mustRun(t, opt)
	want2 := Result{Unchanged: []string{"nvdcve-2.0-modified.json.gz", "nvdcve-2.0-recent.json.gz", CWEName}}
	if diff := cmp.Diff(want2, res); diff != "" {
		t.Errorf("second run (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"unchanged nvdcve-2.0-modified.json.gz", "unchanged nvdcve-2.0-recent.json.gz", "unchanged " + CWEName}, logs); diff != "" {
		t.Errorf("second run's log (-want +got):\n%s", diff)
	}
	if n := m.count("/feeds/nvdcve-2.0-2024.meta"); n != 1 {
		t.Errorf("the 2024 meta was asked %d times, want once (the run after is within -max-age)", n)
	}

	m.put("nvdcve-2.0-modified", feed("CVE-2024-0002", "CVE-2024-0003"), "2026-11-21T03:00:00-05:00")
	res = mustRun(t, opt)
	if diff := cmp.Diff([]string{"nvdcve-2.0-modified.json.gz"}, res.Fetched); diff != "" {
		t.Errorf("third run fetched (-want +got):\n%s", diff)
	}
	for path, want := range map[string]int{"/feeds/nvdcve-2.0-recent.json.gz": 1, "/feeds/nvdcve-2.0-modified.json.gz": 2, "/feeds/nvdcve-2.0-recent.meta": 3} {
		if n := m.count(path); n != want {
			t.Errorf("%s asked %d times, want %d", path, n, want)
		}
	}
}

// TestRunMetaDateOnly: a meta whose date moved but whose content is the
// same does not download the feed again; the kept meta follows it.
func TestRunMetaDateOnly(t *testing.T) {
	m, opt, _ := setup(t)
	mustRun(t, opt)
	m.put("nvdcve-2.0-recent", feed(), "2026-11-21T05:00:00-05:00")
	res := mustRun(t, opt)
	if len(res.Fetched) != 0 || m.count("/feeds/nvdcve-2.0-recent.json.gz") != 1 {
		t.Errorf("fetched %v, recent downloaded %d times; want nothing downloaded again", res.Fetched, m.count("/feeds/nvdcve-2.0-recent.json.gz"))
	}
	if b, _ := os.ReadFile(filepath.Join(opt.Dir, "nvdcve-2.0-recent.meta")); !bytes.Equal(b, m.files["/feeds/nvdcve-2.0-recent.meta"]) {
		t.Errorf("the kept meta is %q, want the mirror's new one", b)
	}
}

// TestRunDamagedCopy: a local feed that is missing, or whose size is not
// the meta's gzSize, is downloaded again although its meta is the same.
func TestRunDamagedCopy(t *testing.T) {
	for name, damage := range map[string]func(path string) error{
		"missing":   os.Remove,
		"truncated": func(p string) error { return os.Truncate(p, 10) },
	} {
		t.Run(name, func(t *testing.T) {
			m, opt, _ := setup(t)
			mustRun(t, opt)
			path := filepath.Join(opt.Dir, "nvdcve-2.0-modified.json.gz")
			if err := damage(path); err != nil {
				t.Fatal(err)
			}
			res := mustRun(t, opt)
			if diff := cmp.Diff([]string{"nvdcve-2.0-modified.json.gz"}, res.Fetched); diff != "" {
				t.Errorf("fetched (-want +got):\n%s", diff)
			}
			if b, _ := os.ReadFile(path); !bytes.Equal(b, m.files["/feeds/nvdcve-2.0-modified.json.gz"]) {
				t.Error("the feed was not restored")
			}
		})
	}
}

// TestRunProgress: a download reports its bytes, the last report being
// the whole file.
func TestRunProgress(t *testing.T) {
	m, opt, _ := setup(t)
	// Random descriptions, so that the gzip is megabytes too.
	rng := rand.New(rand.NewPCG(1, 2))
	var vs []string
	for i := range 6000 {
		var b [512]byte
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
		vs = append(vs, fmt.Sprintf(`{"cve":{"id":"CVE-2024-%05d","published":"2024-01-01T00:00:00.000","lastModified":"2024-01-02T00:00:00.000","descriptions":[{"lang":"en","value":"%x"}],"references":[]}}`, i, b))
	}
	m.put("nvdcve-2.0-2024", []byte(`{"format":"NVD_CVE","version":"2.0","vulnerabilities":[`+strings.Join(vs, ",")+`]}`), "2026-11-01T03:00:00-05:00")
	last := map[string][2]int64{}
	reports := 0
	opt.Progress = func(file string, done, total int64) { last[file] = [2]int64{done, total}; reports++ }
	mustRun(t, opt)
	fi, err := os.Stat(filepath.Join(opt.Dir, "nvdcve-2.0-2024.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() < 2*progressStep {
		t.Fatalf("the 2024 feed is %d bytes, too small to report progress twice", fi.Size())
	}
	if diff := cmp.Diff([2]int64{fi.Size(), fi.Size()}, last["nvdcve-2.0-2024.json.gz"]); diff != "" {
		t.Errorf("last report (-want +got):\n%s", diff)
	}
	if min := 4 + int(fi.Size()/progressStep); reports < min {
		t.Errorf("%d reports, want at least %d", reports, min)
	}
}

// TestRunMaxAge: more than -max-age after the last full run (or when a
// yearly feed is missing), the yearly feeds are checked again; within
// it, not.
func TestRunMaxAge(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after time.Duration
		years [2]int
		full  bool
	}{
		{"within max-age", DefaultMaxAge, [2]int{2023, 2024}, false},
		{"older than max-age", DefaultMaxAge + time.Minute, [2]int{2023, 2024}, true},
		{"a year more", time.Hour, [2]int{2022, 2024}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, opt, _ := setup(t)
			m.put("nvdcve-2.0-2022", feed("CVE-2022-0001"), "2026-11-01T03:00:00-05:00")
			mustRun(t, opt)
			later := opt.Now().Add(tc.after)
			opt.Now = func() time.Time { return later }
			opt.FirstYear, opt.LastYear = tc.years[0], tc.years[1]
			res := mustRun(t, opt)
			metas := 1
			if tc.full {
				metas = 2
			}
			if res.Full != tc.full || m.count("/feeds/nvdcve-2.0-2023.meta") != metas || m.count("/feeds/nvdcve-2.0-2023.json.gz") != 1 {
				t.Errorf("full %v, 2023 meta asked %d times, feed %d times; want full %v, meta %d times, feed once",
					res.Full, m.count("/feeds/nvdcve-2.0-2023.meta"), m.count("/feeds/nvdcve-2.0-2023.json.gz"), tc.full, metas)
			}
			// The state remembers the last full run.
			b, err := os.ReadFile(filepath.Join(opt.Dir, StateName))
			if err != nil {
				t.Fatal(err)
			}
			wantLast := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
			if tc.full {
				wantLast = later
			}
			if !strings.Contains(string(b), `"last_full": "`+wantLast.Format(time.RFC3339)+`"`) {
				t.Errorf("state %s, want last_full %s", b, wantLast.Format(time.RFC3339))
			}
		})
	}
}

// noTemp fails when dir holds a temporary file.
func noTemp(t *testing.T, dir string) {
	t.Helper()
	for _, n := range dirFiles(t, dir) {
		if strings.Contains(n, ".tmp-") {
			t.Errorf("temporary file left: %s", n)
		}
	}
}

// TestRunBadFeed: a feed that does not match its meta is refused, naming
// its URL; it keeps its old copy and meta, while modified, fetched before
// it in the same run, is in place and whole; no temporary file is left and
// the next run, once the mirror is right, fetches only the refused feed.
func TestRunBadFeed(t *testing.T) {
	other := feed("CVE-2024-0009")
	for _, tc := range []struct {
		name string
		body func(content []byte) []byte // what the mirror serves for content
		meta func(content []byte) []byte // nil: content's own meta
		err  string
	}{
		{name: "sha256", body: gz, meta: withLine("sha256", strings.Repeat("AB", 32)),
			err: "nvdcve-2.0-recent.json.gz: sha256 of the content is " + sumOf(other) + ", the meta says " + strings.Repeat("AB", 32)},
		{name: "size", body: gz, meta: withLine("size", "1"),
			err: fmt.Sprintf("nvdcve-2.0-recent.json.gz: content is %d bytes, the meta says 1", len(other))},
		{name: "gzSize", body: gz, meta: withLine("gzSize", "7"),
			err: fmt.Sprintf("nvdcve-2.0-recent.json.gz: file is %d bytes, the meta's gzSize says 7", len(gz(other)))},
		{name: "truncated gzip", body: func(c []byte) []byte { g := gz(c); return g[:len(g)-12] },
			err: "nvdcve-2.0-recent.json.gz: truncated or damaged gzip: unexpected EOF"},
		{name: "not gzip", body: func([]byte) []byte { return []byte("<html>Service Unavailable</html>") },
			err: "nvdcve-2.0-recent.json.gz: not gzip"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, opt, _ := setup(t)
			mustRun(t, opt)
			before := dirContent(t, opt.Dir)
			m.put("nvdcve-2.0-modified", feed("CVE-2024-0007"), "2026-11-21T03:00:00-05:00")
			m.set("/feeds/nvdcve-2.0-recent.json.gz", tc.body(other))
			meta := metaOf(other, gz(other), "2026-11-21T03:00:00-05:00")
			if tc.meta != nil {
				meta = tc.meta(other)
			}
			m.set("/feeds/nvdcve-2.0-recent.meta", meta)
			_, err := Run(context.Background(), opt)
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("err %v, want one with %q", err, tc.err)
			}
			if n := m.count("/feeds/nvdcve-2.0-recent.json.gz"); n != 2 {
				t.Errorf("recent asked %d times, want twice (a bad content is not asked again)", n)
			}
			noTemp(t, opt.Dir)
			after := dirContent(t, opt.Dir)
			want := before
			want["nvdcve-2.0-modified.json.gz"] = string(m.files["/feeds/nvdcve-2.0-modified.json.gz"])
			want["nvdcve-2.0-modified.meta"] = string(m.files["/feeds/nvdcve-2.0-modified.meta"])
			if diff := cmp.Diff(want, after); diff != "" {
				t.Errorf("directory after the failed run (-want +got):\n%s", diff)
			}

			m.put("nvdcve-2.0-recent", other, "2026-11-21T03:00:00-05:00")
			res := mustRun(t, opt)
			if diff := cmp.Diff([]string{"nvdcve-2.0-recent.json.gz"}, res.Fetched); diff != "" {
				t.Errorf("the run after (-want +got):\n%s", diff)
			}
		})
	}
}

// withLine is the right meta of a content with the line of key changed
// to value.
func withLine(key, value string) func(content []byte) []byte {
	return func(c []byte) []byte {
		var out []string
		for _, line := range strings.SplitAfter(string(metaOf(c, gz(c), "2026-11-21T03:00:00-05:00")), "\r\n") {
			if strings.HasPrefix(line, key+":") {
				line = key + ":" + value + "\r\n"
			}
			out = append(out, line)
		}
		return []byte(strings.Join(out, ""))
	}
}

func sumOf(b []byte) string {
	sum := sha256.Sum256(b)
	return strings.ToUpper(hex.EncodeToString(sum[:]))
}

// TestRunFirstRunResumes: a first run that fails keeps the feeds it
// fetched; the next one goes on from there.
func TestRunFirstRunResumes(t *testing.T) {
	m, opt, _ := setup(t)
	m.set("/feeds/nvdcve-2.0-recent.json.gz", []byte("not gzip"))
	if _, err := Run(context.Background(), opt); err == nil {
		t.Fatal("a run with a bad feed succeeded")
	}
	want := []string{"nvdcve-2.0-2023.json.gz", "nvdcve-2.0-2023.meta", "nvdcve-2.0-2024.json.gz", "nvdcve-2.0-2024.meta",
		"nvdcve-2.0-modified.json.gz", "nvdcve-2.0-modified.meta"}
	if diff := cmp.Diff(want, dirFiles(t, opt.Dir)); diff != "" {
		t.Errorf("after a failed first run (-want +got):\n%s", diff)
	}
	m.put("nvdcve-2.0-recent", feed(), "2026-11-20T03:00:00-05:00")
	res := mustRun(t, opt)
	if diff := cmp.Diff(Result{Fetched: []string{"nvdcve-2.0-recent.json.gz", CWEName},
		Unchanged: []string{"nvdcve-2.0-2023.json.gz", "nvdcve-2.0-2024.json.gz", "nvdcve-2.0-modified.json.gz"}, Full: true}, res); diff != "" {
		t.Errorf("the run after (-want +got):\n%s", diff)
	}
}

// TestRunRetries: 503 and 429 are tried again, after Retry-After when
// given (seconds or a date), else after a backoff; a 404 or 403 fails at
// once, naming the URL; the tries are capped.
func TestRunRetries(t *testing.T) {
	t.Run("Retry-After seconds", func(t *testing.T) {
		m, opt, slept := setup(t)
		m.fail["/feeds/nvdcve-2.0-2023.json.gz"] = []int{503, 429}
		m.retryIn = "7"
		mustRun(t, opt)
		if diff := cmp.Diff([]time.Duration{7 * time.Second, 7 * time.Second}, *slept); diff != "" {
			t.Errorf("waits (-want +got):\n%s", diff)
		}
		if n := m.count("/feeds/nvdcve-2.0-2023.json.gz"); n != 3 {
			t.Errorf("%d requests, want 3", n)
		}
	})
	t.Run("Retry-After date", func(t *testing.T) {
		m, opt, slept := setup(t)
		m.fail["/cwe.zip"] = []int{429}
		m.retryIn = "Sat, 21 Nov 2026 00:01:30 GMT" // opt.Now is 00:00:00
		mustRun(t, opt)
		if diff := cmp.Diff([]time.Duration{90 * time.Second}, *slept); diff != "" {
			t.Errorf("waits (-want +got):\n%s", diff)
		}
	})
	t.Run("backoff", func(t *testing.T) {
		m, opt, slept := setup(t)
		m.fail["/feeds/nvdcve-2.0-recent.meta"] = []int{500, 502, 504}
		mustRun(t, opt)
		if len(*slept) != 3 {
			t.Fatalf("waits %v, want 3", *slept)
		}
		for i, d := range *slept {
			if base := time.Second << i; d < base/2 || d > base {
				t.Errorf("wait %d is %s, want between %s and %s", i+1, d, base/2, base)
			}
		}
	})
	for _, status := range []int{404, 403} {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			m, opt, _ := setup(t)
			m.fail["/feeds/nvdcve-2.0-2024.meta"] = []int{status}
			_, err := Run(context.Background(), opt)
			if want := opt.BaseURL + "/nvdcve-2.0-2024.meta: " + strconv.Itoa(status) + " " + http.StatusText(status); err == nil || err.Error() != want {
				t.Errorf("err %v, want %q", err, want)
			}
			if n := m.count("/feeds/nvdcve-2.0-2024.meta"); n != 1 {
				t.Errorf("asked %d times, want once", n)
			}
		})
	}
	t.Run("capped", func(t *testing.T) {
		m, opt, _ := setup(t)
		m.fail["/feeds/nvdcve-2.0-recent.meta"] = []int{500, 500, 500, 500, 500}
		opt.Attempts = 3
		_, err := Run(context.Background(), opt)
		if want := opt.BaseURL + "/nvdcve-2.0-recent.meta: 500 Internal Server Error (after 3 tries)"; err == nil || err.Error() != want {
			t.Errorf("err %v, want %q", err, want)
		}
		if n := m.count("/feeds/nvdcve-2.0-recent.meta"); n != 3 {
			t.Errorf("asked %d times, want 3", n)
		}
	})
}

// TestRunCutTransfer: a download cut short is tried again.
func TestRunCutTransfer(t *testing.T) {
	m, opt, slept := setup(t)
	body := m.files["/feeds/nvdcve-2.0-2024.json.gz"]
	var served atomic.Bool
	m.handle["/feeds/nvdcve-2.0-2024.json.gz"] = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		if !served.Swap(true) {
			w.Write(body[:len(body)/2]) // and the server closes the connection
			return
		}
		w.Write(body)
	}
	mustRun(t, opt)
	if n := m.count("/feeds/nvdcve-2.0-2024.json.gz"); n != 2 || len(*slept) != 1 {
		t.Errorf("%d requests, %d waits; want 2 and 1", n, len(*slept))
	}
	if b, _ := os.ReadFile(filepath.Join(opt.Dir, "nvdcve-2.0-2024.json.gz")); !bytes.Equal(b, body) {
		t.Error("the feed is not the mirror's")
	}
	noTemp(t, opt.Dir)
}

// TestRunTimeout: a try that does not finish within the timeout is
// abandoned and tried again; the error says so.
func TestRunTimeout(t *testing.T) {
	m, opt, _ := setup(t)
	m.handle["/feeds/nvdcve-2.0-modified.json.gz"] = func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte{0x1f, 0x8b})
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
	opt.Timeout, opt.Attempts = 50*time.Millisecond, 2
	_, err := Run(context.Background(), opt)
	if want := opt.BaseURL + "/nvdcve-2.0-modified.json.gz: no complete answer within 50ms (after 2 tries)"; err == nil || err.Error() != want {
		t.Errorf("err %v, want %q", err, want)
	}
	if n := m.count("/feeds/nvdcve-2.0-modified.json.gz"); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
	noTemp(t, opt.Dir)
}

// TestRunCanceled: a run stopped in the middle of a download (a SIGINT)
// returns at once, removes its temporary file and keeps the old copy.
func TestRunCanceled(t *testing.T) {
	m, opt, _ := setup(t)
	mustRun(t, opt)
	before := dirContent(t, opt.Dir)
	m.put("nvdcve-2.0-modified", feed("CVE-2024-0007"), "2026-11-21T03:00:00-05:00")
	started := make(chan struct{})
	m.handle["/feeds/nvdcve-2.0-modified.json.gz"] = func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte{0x1f, 0x8b, 8, 0})
		w.(http.Flusher).Flush()
		close(started)
		<-r.Context().Done()
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	_, err := Run(ctx, opt)
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "/feeds/nvdcve-2.0-modified.json.gz: interrupted") {
		t.Errorf("err %v, want the URL, interrupted, wrapping context.Canceled", err)
	}
	noTemp(t, opt.Dir)
	if diff := cmp.Diff(before, dirContent(t, opt.Dir)); diff != "" {
		t.Errorf("directory (-before +after):\n%s", diff)
	}
}

// TestRunCatalog: the catalog is asked for with its validators, a 304
// leaves it, a new one replaces it, and one that is not a zip of one
// whole XML file is refused, keeping the old.
func TestRunCatalog(t *testing.T) {
	m, opt, _ := setup(t)
	mustRun(t, opt)
	res := mustRun(t, opt)
	if !slices.Contains(res.Unchanged, CWEName) || m.count("/cwe.zip") != 2 {
		t.Errorf("unchanged %v, %d requests", res.Unchanged, m.count("/cwe.zip"))
	}
	if diff := cmp.Diff([]string{"", `"v1"`}, []string{m.cweReq[0].Get("If-None-Match"), m.cweReq[1].Get("If-None-Match")}); diff != "" {
		t.Errorf("If-None-Match of the two requests (-want +got):\n%s", diff)
	}
	if got := m.cweReq[1].Get("If-Modified-Since"); got != m.cweMod {
		t.Errorf("If-Modified-Since %q, want %q", got, m.cweMod)
	}
	// Without an ETag, Last-Modified alone.
	m.cweTag = ""
	m.files["/cwe.zip"] = catalog(t, "cwec_v4.16.xml", "<Weakness_Catalog/>")
	m.cweMod = "Mon, 16 Nov 2026 12:00:00 GMT"
	res = mustRun(t, opt)
	if !slices.Contains(res.Fetched, CWEName) {
		t.Errorf("a new catalog was not fetched: %+v", res)
	}
	if res = mustRun(t, opt); !slices.Contains(res.Unchanged, CWEName) {
		t.Errorf("If-Modified-Since did not leave the catalog: %+v", res)
	}
	good, _ := os.ReadFile(filepath.Join(opt.Dir, CWEName))

	// A catalog stored, not deflated, with a byte of its XML changed:
	// the CRC-32 no longer matches.
	var stored bytes.Buffer
	zw := zip.NewWriter(&stored)
	w, _ := zw.CreateHeader(&zip.FileHeader{Name: validCatalog[0], Method: zip.Store})
	w.Write([]byte(validCatalog[1]))
	zw.Close()
	damaged := stored.Bytes()
	damaged[bytes.Index(damaged, []byte("Weakness_Catalog"))] ^= 1
	for _, tc := range []struct {
		name string
		body []byte
		err  string
	}{
		{"not a zip", []byte("not a zip"), "not a zip archive"},
		{"two XML files", catalog(t, "a.xml", "<a/>", "b.xml", "<b/>"), "the archive holds 2 XML files, want 1"},
		{"no XML file", catalog(t, "readme.txt", "x"), "the archive holds 0 XML files, want 1"},
		{"not XML", catalog(t, "cwec.xml", "{}"), "cwec.xml in the archive is not XML"},
		{"damaged", damaged, "cwec_v4.15.xml in the archive: zip: checksum error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m.cweMod = "Tue, 17 Nov 2026 12:00:00 GMT"
			m.set("/cwe.zip", tc.body)
			_, err := Run(context.Background(), opt)
			if want := opt.CWEURL + ": " + tc.err; err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("err %v, want %q", err, want)
			}
			if b, _ := os.ReadFile(filepath.Join(opt.Dir, CWEName)); !bytes.Equal(b, good) {
				t.Error("the old catalog was replaced")
			}
			noTemp(t, opt.Dir)
		})
	}
}

// TestRunOptions: what Run refuses before any request.
func TestRunOptions(t *testing.T) {
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o644)
	for _, tc := range []struct {
		name string
		opt  Options
		err  string
	}{
		{"no dir", Options{}, "no directory given"},
		{"missing dir", Options{Dir: file + "x"}, "no such file or directory"},
		{"a file", Options{Dir: file}, "is not a directory"},
		{"years", Options{Dir: filepath.Dir(file), FirstYear: 2025, LastYear: 2024}, "years 2025-2024: the first is after the last"},
		{"ftp base", Options{Dir: filepath.Dir(file), BaseURL: "ftp://nvd.example/feeds/"}, `base URL "ftp://nvd.example/feeds/" is not an http:// or https:// URL`},
		{"file catalog", Options{Dir: filepath.Dir(file), CWEURL: "/srv/cwec.zip"}, `catalog URL "/srv/cwec.zip" is not an http:// or https:// URL`},
		{"ftp EPSS", Options{Dir: filepath.Dir(file), EPSSURL: "ftp://epss.example/e.csv.gz"}, `EPSS URL "ftp://epss.example/e.csv.gz" is not an http:// or https:// URL`},
		{"file CVE5", Options{Dir: filepath.Dir(file), CVE5URL: "/srv/cvelistV5"}, `CVE JSON 5 URL "/srv/cvelistV5/" is not an http:// or https:// URL`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Run(context.Background(), tc.opt); err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("err %v, want %q", err, tc.err)
			}
		})
	}
}

// TestRunRemovesStaleTemps: the temporary files a killed run left (a
// half-downloaded feed, which loader.FeedFiles skips as hidden, would
// still take its room) are removed; other files, hidden or not, are left.
func TestRunRemovesStaleTemps(t *testing.T) {
	m, opt, _ := setup(t)
	half := m.files["/feeds/nvdcve-2.0-2024.json.gz"]
	half = half[:len(half)/2]
	stale := map[string][]byte{
		".nvdcve-2.0-2024.json.gz.tmp-123": half,
		".nvdcve-2.0-2024.meta.tmp-9":      []byte("lastModifiedDate:x"),
		"." + CWEName + ".tmp-77":          []byte("PK"),
		"." + StateName + ".tmp-5":         []byte("{"),
	}
	kept := map[string][]byte{
		".keep":                    nil,
		".other.tmp-1":             []byte("x"),
		"notes.tmp-1":              []byte("x"),
		"nvdcve-2.0-2024.tmp-1":    []byte("x"), // not hidden: not ours
		".nvdcve-2.0-2024.json.gz": []byte("x"), // no .tmp-: not ours
	}
	for n, b := range stale {
		os.WriteFile(filepath.Join(opt.Dir, n), b, 0o644)
	}
	for n, b := range kept {
		os.WriteFile(filepath.Join(opt.Dir, n), b, 0o644)
	}
	mustRun(t, opt)
	for n := range stale {
		if _, err := os.Stat(filepath.Join(opt.Dir, n)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s was left (%v)", n, err)
		}
	}
	for n, b := range kept {
		if got, err := os.ReadFile(filepath.Join(opt.Dir, n)); err != nil || !bytes.Equal(got, b) {
			t.Errorf("%s: %q, %v; want it kept as it was", n, got, err)
		}
	}
	feeds, _, err := loader.FeedFiles(opt.Dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"nvdcve-2.0-2023.json.gz", "nvdcve-2.0-2024.json.gz", "nvdcve-2.0-modified.json.gz", "nvdcve-2.0-recent.json.gz"}
	var got []string
	for _, p := range feeds {
		got = append(got, filepath.Base(p))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("FeedFiles after the run (-want +got):\n%s", diff)
	}
}

// TestRunGzipLabelledEncoding: a server that sends a .json.gz with
// "Content-Encoding: gzip" (Apache's AddEncoding x-gzip .gz does) still
// gives the file's own bytes, not the JSON inside.
func TestRunGzipLabelledEncoding(t *testing.T) {
	m, opt, _ := setup(t)
	body := m.files["/feeds/nvdcve-2.0-2024.json.gz"]
	var enc atomic.Value
	m.handle["/feeds/nvdcve-2.0-2024.json.gz"] = func(w http.ResponseWriter, r *http.Request) {
		enc.Store(r.Header.Get("Accept-Encoding"))
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write(body)
	}
	mustRun(t, opt)
	if b, _ := os.ReadFile(filepath.Join(opt.Dir, "nvdcve-2.0-2024.json.gz")); !bytes.Equal(b, body) {
		t.Errorf("the feed is not the mirror's .json.gz (%d bytes, want %d)", len(b), len(body))
	}
	if got := enc.Load(); got != "identity" {
		t.Errorf("Accept-Encoding %q, want identity", got)
	}
}

// TestRunFullYearsRemembered: a full run of fewer years (-years 2024)
// does not count as a check of the others: a later run asking for them
// checks every yearly feed again, even within -max-age.
func TestRunFullYearsRemembered(t *testing.T) {
	m, opt, _ := setup(t)
	start := opt.Now()
	at := func(d time.Duration, first int) Result {
		t.Helper()
		now := start.Add(d)
		opt.Now = func() time.Time { return now }
		opt.FirstYear = first
		return mustRun(t, opt)
	}
	at(0, 2023)                                     // full: the first run
	if res := at(9*24*time.Hour, 2024); !res.Full { // older than -max-age
		t.Fatalf("9 days later, -years 2024: %+v, want a full run", res)
	}
	res := at(10*24*time.Hour, 2023)
	if !res.Full || m.count("/feeds/nvdcve-2.0-2023.meta") != 2 {
		t.Errorf("a day after a full run of 2024 only, -years 2023-2024: full %v, the 2023 meta asked %d times; want a full run, asked twice",
			res.Full, m.count("/feeds/nvdcve-2.0-2023.meta"))
	}
	if res := at(11*24*time.Hour, 2023); res.Full {
		t.Errorf("a day after a full run of 2023-2024, the same years: %+v, want no full run", res)
	}
}
