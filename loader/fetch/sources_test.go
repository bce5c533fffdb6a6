package fetch

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
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

	"github.com/vulnd/vulnd/loader"
)

// site is a stand-in for GitHub's API and release downloads and for
// FIRST's EPSS host: it serves its files with http.ServeContent, so
// with an ETag (the content's hash), conditional GETs and Range
// requests (If-Range included) as a real server answers them.
type site struct {
	mu     sync.Mutex
	files  map[string][]byte
	hits   map[string]int
	ranges map[string][]string // path -> the Range header of each request
	// handle, if set, answers a path instead of files.
	handle map[string]http.HandlerFunc
}

func newSite() *site {
	return &site{files: map[string][]byte{}, hits: map[string]int{}, ranges: map[string][]string{}, handle: map[string]http.HandlerFunc{}}
}

func (s *site) set(path string, b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files[path] = b
}

func (s *site) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hits[path]
}

func (s *site) rangesOf(path string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.ranges[path])
}

func (s *site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.hits[r.URL.Path]++
	s.ranges[r.URL.Path] = append(s.ranges[r.URL.Path], r.Header.Get("Range"))
	h := s.handle[r.URL.Path]
	b, ok := s.files[r.URL.Path]
	s.mu.Unlock()
	if h != nil {
		h(w, r)
		return
	}
	if !ok {
		http.NotFound(w, r)
		return
	}
	sum := sha256.Sum256(b)
	w.Header().Set("ETag", `"`+hex.EncodeToString(sum[:8])+`"`)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(b))
}

// record is a minimal valid CVE JSON 5 record.
func record(id, updated string) string {
	return fmt.Sprintf(`{"dataType":"CVE_RECORD","dataVersion":"5.1","cveMetadata":{"cveId":%q,"state":"PUBLISHED",`+
		`"assignerShortName":"test","datePublished":"2026-01-01T00:00:00.000Z","dateUpdated":%q},`+
		`"containers":{"cna":{"providerMetadata":{"orgId":"x","shortName":"tcna"},"descriptions":[{"lang":"en","value":"d"}],`+
		`"affected":[{"vendor":"V","product":"P","versions":[{"version":"1.0","status":"affected"}]}],"references":[]}}}`, id, updated)
}

func zipOf(t *testing.T, files ...string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for i := 0; i+1 < len(files); i += 2 {
		w, err := zw.Create(files[i])
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(files[i+1]))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// fullBundle is a baseline as cvelistV5 lays it out: a zip holding
// cves.zip, which holds cves/YYYY/NNxxx/ID.json, one per id.
func fullBundle(t *testing.T, ids ...string) []byte {
	t.Helper()
	var files []string
	for _, id := range ids {
		files = append(files, "cves/2026/0xxx/"+id+".json", record(id, "2026-11-20T00:00:00.000Z"))
	}
	return zipOf(t, "cves.zip", string(zipOf(t, files...)))
}

// deltaBundle is an hourly delta: deltaCves/ID.json and delta.json, the
// list of changes, which is no record.
func deltaBundle(t *testing.T, ids ...string) []byte {
	t.Helper()
	files := []string{"deltaCves/delta.json", `{"fetchTime":"2026-11-25T01:00:00.000Z","numberOfChanges":1}`}
	for _, id := range ids {
		files = append(files, "deltaCves/"+id+".json", record(id, "2026-11-25T00:30:00.000Z"))
	}
	return zipOf(t, files...)
}

// publish serves the bundles (name, content, ...) as the assets of the
// newest release, with their sizes and digests, downloaded from
// /dl/NAME (relative URLs, as a mirror gives them).
func (s *site) publish(t *testing.T, bundles ...any) {
	t.Helper()
	var assets []map[string]any
	for i := 0; i+1 < len(bundles); i += 2 {
		name, b := bundles[i].(string), bundles[i+1].([]byte)
		sum := sha256.Sum256(b)
		s.set("/cve5/releases/dl/"+name, b)
		assets = append(assets, map[string]any{"name": name, "browser_download_url": "dl/" + name, "size": len(b),
			"digest": "sha256:" + hex.EncodeToString(sum[:])})
	}
	rel, _ := json.Marshal(map[string]any{"tag_name": "cve_2026-11-25_0100Z", "assets": assets})
	s.set("/cve5/releases/latest", rel)
}

// sourcesSetup is a site serving a cvelistV5 release and an EPSS file,
// and the options of a fetch of those alone into a new directory.
func sourcesSetup(t *testing.T) (*site, Options, *[]string) {
	t.Helper()
	s := newSite()
	s.publish(t,
		"2026-11-24_all_CVEs_at_midnight.zip.zip", fullBundle(t, "CVE-2026-0001", "CVE-2026-0002"),
		"2026-11-23_delta_CVEs_at_2300Z.zip", deltaBundle(t, "CVE-2026-0009"), // before the baseline: not wanted
		"2026-11-24_delta_CVEs_at_0100Z.zip", deltaBundle(t, "CVE-2026-0003"),
		"2026-11-24_delta_CVEs_at_0200Z.zip", deltaBundle(t, "CVE-2026-0003", "CVE-2026-0004"))
	s.set("/epss/current.csv.gz", gz([]byte(epssFile("2026-11-24", "0.5"))))
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	var logs []string
	opt := Options{Dir: t.TempDir(), BaseURL: srv.URL + "/feeds", CWEURL: "-", Client: srv.Client(),
		EPSSURL: srv.URL + "/epss/current.csv.gz", CVE5URL: srv.URL + "/cve5",
		Now:   func() time.Time { return time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC) },
		Sleep: func(context.Context, time.Duration) error { return nil },
		Log:   func(l string) { logs = append(logs, l) },
	}
	return s, opt, &logs
}

func epssFile(day, score string) string {
	return "#model_version:v2026.06.15,score_date:" + day + "T12:00:22Z\ncve,epss,percentile\nCVE-2026-0001," + score + ",0.9\nCVE-2026-0002,0.001,0.1\n"
}

// runSources runs the fetch of opt without NVD's feeds: only those of a
// site that has none would fail, so the run is cut down to the sources.
func runSources(t *testing.T, opt Options) (Result, error) {
	t.Helper()
	f, err := newFetcher(opt)
	if err != nil {
		t.Fatal(err)
	}
	st := f.readState()
	var res Result
	note := func(file string, fetched bool) {
		if fetched {
			res.Fetched = append(res.Fetched, file)
		} else {
			res.Unchanged = append(res.Unchanged, file)
		}
	}
	if f.opt.EPSSURL != "-" {
		name, fetched, err := f.epss(context.Background(), &st)
		if err != nil {
			return res, err
		}
		note(name, fetched)
	}
	if f.opt.CVE5URL != "-" {
		if err := f.cve5(context.Background(), &st, note); err != nil {
			return res, err
		}
	}
	return res, nil
}

func mustSources(t *testing.T, opt Options) Result {
	t.Helper()
	res, err := runSources(t, opt)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// keptRecords reads the record files of dir as vulnd build would.
func keptRecords(t *testing.T, dir string) []string {
	t.Helper()
	var paths []string
	for _, n := range dirFiles(t, dir) {
		if IsCVE5Bundle(n) {
			paths = append(paths, filepath.Join(dir, n))
		}
	}
	recs, _, err := loader.ReadCVE5Files(paths)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range recs {
		ids = append(ids, r.ID)
	}
	return ids
}

// TestCVE5Bundles is issue 26 item 2: the first run fetches the newest
// baseline and the newest delta of its day (the older delta of the day
// and the one before the baseline are not wanted), which build reads;
// the second asks for the release description conditionally, gets a
// 304 and downloads nothing; a new hour's delta replaces the old one,
// and a new day's baseline replaces the old baseline and its delta.
func TestCVE5Bundles(t *testing.T) {
	s, opt, logs := sourcesSetup(t)
	opt.EPSSURL = "-"
	res := mustSources(t, opt)
	want := []string{"2026-11-24_all_CVEs_at_midnight.zip.zip", "2026-11-24_delta_CVEs_at_0200Z.zip"}
	if diff := cmp.Diff(Result{Fetched: want}, res); diff != "" {
		t.Errorf("first run (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(append([]string{StateName}, want...), dirFiles(t, opt.Dir)); diff != "" {
		t.Errorf("directory (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"CVE-2026-0001", "CVE-2026-0002", "CVE-2026-0003", "CVE-2026-0004"}, keptRecords(t, opt.Dir)); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix((*logs)[0], "fetched 2026-11-24_all_CVEs_at_midnight.zip.zip: ") || !strings.Contains((*logs)[0], ", 2 records in ") {
		t.Errorf("log %q", *logs)
	}
	before := dirContent(t, opt.Dir)
	stat := func(name string) time.Time {
		fi, err := os.Stat(filepath.Join(opt.Dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return fi.ModTime()
	}
	mod := stat(want[0])

	// Second run: 304, nothing downloaded or rewritten.
	res = mustSources(t, opt)
	if diff := cmp.Diff(Result{Unchanged: want}, res); diff != "" {
		t.Errorf("second run (-want +got):\n%s", diff)
	}
	if n := s.count("/cve5/releases/dl/" + want[0]); n != 1 {
		t.Errorf("the baseline was asked for %d times, want once", n)
	}
	if diff := cmp.Diff(before, dirContent(t, opt.Dir)); diff != "" || !stat(want[0]).Equal(mod) {
		t.Errorf("the second run changed the directory (-before +after):\n%s", diff)
	}

	// A new hour: the release has a new delta; the baseline stays.
	s.publish(t,
		"2026-11-24_all_CVEs_at_midnight.zip.zip", fullBundle(t, "CVE-2026-0001", "CVE-2026-0002"),
		"2026-11-24_delta_CVEs_at_0300Z.zip", deltaBundle(t, "CVE-2026-0003", "CVE-2026-0004", "CVE-2026-0005"))
	res = mustSources(t, opt)
	if diff := cmp.Diff(Result{Fetched: []string{"2026-11-24_delta_CVEs_at_0300Z.zip"}, Unchanged: want[:1]}, res); diff != "" {
		t.Errorf("a new hour (-want +got):\n%s", diff)
	}
	if n := s.count("/cve5/releases/dl/" + want[0]); n != 1 {
		t.Errorf("the baseline was asked for %d times, want once", n)
	}
	if diff := cmp.Diff([]string{StateName, want[0], "2026-11-24_delta_CVEs_at_0300Z.zip"}, dirFiles(t, opt.Dir)); diff != "" {
		t.Errorf("directory after a new hour (-want +got):\n%s", diff)
	}

	// A new day: the new baseline and its delta; the others removed.
	s.publish(t,
		"2026-11-25_all_CVEs_at_midnight.zip.zip", fullBundle(t, "CVE-2026-0001", "CVE-2026-0002", "CVE-2026-0005"),
		"2026-11-24_delta_CVEs_at_end_of_day.zip", deltaBundle(t, "CVE-2026-0005"),
		"2026-11-25_delta_CVEs_at_0100Z.zip", deltaBundle(t, "CVE-2026-0006"))
	*logs = nil
	res = mustSources(t, opt)
	want = []string{"2026-11-25_all_CVEs_at_midnight.zip.zip", "2026-11-25_delta_CVEs_at_0100Z.zip"}
	if diff := cmp.Diff(Result{Fetched: want}, res); diff != "" {
		t.Errorf("a new day (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(append([]string{StateName}, want...), dirFiles(t, opt.Dir)); diff != "" {
		t.Errorf("directory after a new day (-want +got):\n%s", diff)
	}
	for _, w := range []string{"removed 2026-11-24_all_CVEs_at_midnight.zip.zip: superseded", "removed 2026-11-24_delta_CVEs_at_0300Z.zip: superseded"} {
		if !slices.Contains(*logs, w) {
			t.Errorf("log lacks %q: %q", w, *logs)
		}
	}
}

// TestPickCVE5: which assets of a release are kept.
func TestPickCVE5(t *testing.T) {
	a := func(names ...string) []asset {
		var out []asset
		for _, n := range names {
			out = append(out, asset{Name: n, URL: n})
		}
		return out
	}
	names := func(as []asset) []string {
		var out []string
		for _, x := range as {
			out = append(out, x.Name)
		}
		return out
	}
	for _, tc := range []struct {
		in   []asset
		want []string
		err  string
	}{
		{in: a("2026-11-25_all_CVEs_at_midnight.zip.zip", "2026-11-25_delta_CVEs_at_0100Z.zip", "2026-11-25_delta_CVEs_at_1200Z.zip", "release_notes.md"),
			want: []string{"2026-11-25_all_CVEs_at_midnight.zip.zip", "2026-11-25_delta_CVEs_at_1200Z.zip"}},
		// The release of 00:00 may still carry the day before's baseline
		// beside the new day's first delta: every day from the baseline's.
		{in: a("2026-11-24_all_CVEs_at_midnight.zip.zip", "2026-11-25_delta_CVEs_at_0000Z.zip", "2026-11-24_delta_CVEs_at_end_of_day.zip", "2026-11-24_delta_CVEs_at_2300Z.zip"),
			want: []string{"2026-11-24_all_CVEs_at_midnight.zip.zip", "2026-11-24_delta_CVEs_at_end_of_day.zip", "2026-11-25_delta_CVEs_at_0000Z.zip"}},
		// The name of 2023-2024, one .zip.
		{in: a("2024-04-04_all_CVEs_at_midnight.zip"), want: []string{"2024-04-04_all_CVEs_at_midnight.zip"}},
		{in: a("2026-11-25_delta_CVEs_at_0100Z.zip"), err: "the release has no YYYY-MM-DD_all_CVEs_at_midnight.zip.zip asset"},
		{in: a("../../etc_all_CVEs_at_midnight.zip.zip"), err: "the release has no YYYY-MM-DD_all_CVEs_at_midnight.zip.zip asset"},
		{in: []asset{{Name: "2026-11-25_all_CVEs_at_midnight.zip.zip"}}, err: "asset 2026-11-25_all_CVEs_at_midnight.zip.zip has no browser_download_url"},
		{in: []asset{{Name: "2026-11-25_all_CVEs_at_midnight.zip.zip", URL: "x", Digest: "sha256:zz"}},
			err: `asset 2026-11-25_all_CVEs_at_midnight.zip.zip: digest "sha256:zz" is not sha256: and 64 hex digits`},
	} {
		got, err := pickCVE5(tc.in)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("pickCVE5(%v): err %v, want %q", names(tc.in), err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("pickCVE5(%v): %v", names(tc.in), err)
			continue
		}
		if diff := cmp.Diff(tc.want, names(got)); diff != "" {
			t.Errorf("pickCVE5(%v) (-want +got):\n%s", names(tc.in), diff)
		}
	}
}

// TestCVE5Resumed: a baseline whose download is cut is resumed where it
// stopped with a Range request: on the next try of the same run, and,
// when the run gave up, by the next run, from the .part file it kept
// (which vulnd feeds does not name, and the build does not read).
func TestCVE5Resumed(t *testing.T) {
	for _, sameRun := range []bool{true, false} {
		t.Run(fmt.Sprintf("same run %v", sameRun), func(t *testing.T) {
			s, opt, logs := sourcesSetup(t)
			opt.EPSSURL = "-"
			name := "2026-11-24_all_CVEs_at_midnight.zip.zip"
			path := "/cve5/releases/dl/" + name
			body := s.files[path]
			cut := len(body) / 2
			// The first answer is cut short (the connection closes); the
			// others are served by http.ServeContent, with the same ETag,
			// so If-Range matches and a Range is answered 206.
			var n atomic.Int32
			s.handle[path] = func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("ETag", `"b1"`)
				if n.Add(1) == 1 {
					w.Header().Set("Content-Length", strconv.Itoa(len(body)))
					w.Write(body[:cut])
					return
				}
				if r.Header.Get("If-Range") != `"b1"` {
					t.Errorf("If-Range %q, want the first answer's ETag", r.Header.Get("If-Range"))
				}
				http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(body))
			}
			if !sameRun {
				opt.Attempts = 1
				_, err := runSources(t, opt)
				if err == nil || !strings.Contains(err.Error(), path+": ") {
					t.Fatalf("err %v, want the cut download's", err)
				}
				part := filepath.Join(opt.Dir, "."+name+".part")
				if fi, err := os.Stat(part); err != nil || fi.Size() != int64(cut) {
					t.Fatalf("the part kept: %v %v, want %d bytes", fi, err, cut)
				}
				if !Keeps("." + name + ".part") {
					t.Error("vulnd feeds would name the part as skipped")
				}
				opt.Attempts = 0
			}
			res := mustSources(t, opt)
			if !slices.Contains(res.Fetched, name) {
				t.Errorf("result %+v", res)
			}
			if diff := cmp.Diff([]string{"", "bytes=" + strconv.Itoa(cut) + "-"}, s.rangesOf(path)); diff != "" {
				t.Errorf("Range of each request (-want +got):\n%s", diff)
			}
			if b, _ := os.ReadFile(filepath.Join(opt.Dir, name)); !bytes.Equal(b, body) {
				t.Error("the resumed bundle is not the site's")
			}
			if !slices.ContainsFunc(*logs, func(l string) bool {
				return strings.HasSuffix(l, fmt.Sprintf(" (resumed at %s)", ByteSize(int64(cut))))
			}) {
				t.Errorf("no log line says it resumed: %q", *logs)
			}
			if diff := cmp.Diff([]string{StateName, name, "2026-11-24_delta_CVEs_at_0200Z.zip"}, dirFiles(t, opt.Dir)); diff != "" {
				t.Errorf("directory (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCVE5Refused: a bundle that does not match the release's digest or
// size, is not a zip, holds no record or a bad one, is refused with one
// line naming its URL and the reason; the bundles kept stay as they
// were, and no part of it is left.
func TestCVE5Refused(t *testing.T) {
	name := "2026-11-25_all_CVEs_at_midnight.zip.zip"
	for _, tc := range []struct {
		what string
		set  func(s *site, t *testing.T)
		want string
	}{
		{"digest", func(s *site, t *testing.T) {
			// One byte changed: the same size, not the release's digest.
			b := bytes.Clone(s.files["/cve5/releases/dl/"+name])
			b[len(b)/2] ^= 1
			s.files["/cve5/releases/dl/"+name] = b
		}, "sha256 "},
		{"not zip", func(s *site, t *testing.T) {
			s.publish(t, name, []byte("<html>rate limited</html>"))
		}, "not a zip archive"},
		{"no record", func(s *site, t *testing.T) {
			s.publish(t, name, zipOf(t, "README.md", "hello"))
		}, "the bundle holds no CVE JSON 5 record"},
		{"bad record", func(s *site, t *testing.T) {
			bad := strings.Replace(record("CVE-2026-0008", "2026-11-25T00:00:00.000Z"), `"PUBLISHED"`, `"MAYBE"`, 1)
			s.publish(t, name, zipOf(t, "cves.zip", string(zipOf(t, "cves/2026/0xxx/CVE-2026-0008.json", bad))))
		}, "loader: cve5 " + name + ":cves.zip:cves/2026/0xxx/CVE-2026-0008.json: record 1 (CVE-2026-0008): "},
	} {
		t.Run(tc.what, func(t *testing.T) {
			s, opt, _ := sourcesSetup(t)
			opt.EPSSURL = "-"
			mustSources(t, opt)
			before := dirContent(t, opt.Dir)
			s.publish(t, name, fullBundle(t, "CVE-2026-0001"))
			tc.set(s, t)
			_, err := runSources(t, opt)
			prefix := s.urlOf(t, opt, name) + ": refused: "
			if err == nil || !strings.HasPrefix(err.Error(), prefix) || !strings.Contains(err.Error(), tc.want) ||
				!strings.HasSuffix(err.Error(), " (the bundles kept are unchanged)") || strings.Contains(err.Error(), "\n") {
				t.Errorf("err %v, want one line %q...%q", err, prefix, tc.want)
			}
			delete(before, StateName)
			after := dirContent(t, opt.Dir)
			delete(after, StateName)
			if diff := cmp.Diff(before, after); diff != "" {
				t.Errorf("directory (-before +after):\n%s", diff)
			}
		})
	}
}

func (s *site) urlOf(t *testing.T, opt Options, name string) string {
	return opt.CVE5URL + "/releases/dl/" + name
}

// TestEPSSFetched is issue 28 item 1: the EPSS file is kept under its
// score date, asked for conditionally (304: nothing rewritten), a new
// day's replaces it, a bad or older one is refused or passed over,
// keeping the one there.
func TestEPSSFetched(t *testing.T) {
	s, opt, logs := sourcesSetup(t)
	opt.CVE5URL = "-"
	res := mustSources(t, opt)
	if diff := cmp.Diff(Result{Fetched: []string{"epss_scores-2026-11-24.csv.gz"}}, res); diff != "" {
		t.Errorf("first run (-want +got):\n%s", diff)
	}
	e, err := loader.ReadEPSS(filepath.Join(opt.Dir, "epss_scores-2026-11-24.csv.gz"))
	if err != nil || e.Len() != 2 {
		t.Fatalf("the kept file: %v %v", e, err)
	}
	if d, ok := EPSSHeader(filepath.Join(opt.Dir, "epss_scores-2026-11-24.csv.gz")); !ok || d.Format(time.RFC3339) != "2026-11-24T12:00:22Z" {
		t.Errorf("EPSSHeader: %v %v", d, ok)
	}
	before := dirContent(t, opt.Dir)
	res = mustSources(t, opt)
	if diff := cmp.Diff(Result{Unchanged: []string{"epss_scores-2026-11-24.csv.gz"}}, res); diff != "" {
		t.Errorf("second run (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before, dirContent(t, opt.Dir)); diff != "" {
		t.Errorf("the second run changed the directory (-before +after):\n%s", diff)
	}

	// Refused: a bad row, not gzip, no header line. The file kept stays.
	for _, tc := range []struct {
		body []byte
		want string
	}{
		{gz([]byte(epssFile("2026-11-25", "1.5"))), `loader: epss the file: line 3: epss "1.5" not in [0,1]`},
		{[]byte(epssFile("2026-11-25", "0.5")), "not gzip"},
		{gz([]byte("cve,epss,percentile\nCVE-2026-0001,0.5,0.9\n")), "its first line is not #model_version:...,score_date:..."},
	} {
		s.set("/epss/current.csv.gz", tc.body)
		_, err := runSources(t, opt)
		want := opt.EPSSURL + ": refused: " + tc.want + " (the EPSS file kept is unchanged)"
		if err == nil || err.Error() != want {
			t.Errorf("err %v\nwant %s", err, want)
		}
		if diff := cmp.Diff(before, dirContent(t, opt.Dir)); diff != "" {
			t.Errorf("a refused file changed the directory (-before +after):\n%s", diff)
		}
	}

	// An older day's file (a stale mirror) is passed over.
	s.set("/epss/current.csv.gz", gz([]byte(epssFile("2026-11-23", "0.5"))))
	*logs = nil
	res = mustSources(t, opt)
	if diff := cmp.Diff(Result{Unchanged: []string{"epss_scores-2026-11-24.csv.gz"}}, res); diff != "" {
		t.Errorf("an older file (-want +got):\n%s", diff)
	}
	if want := "kept epss_scores-2026-11-24.csv.gz: " + opt.EPSSURL + " holds the scores of 2026-11-23, older"; !slices.Contains(*logs, want) {
		t.Errorf("log %q lacks %q", *logs, want)
	}

	// A new day's replaces it.
	s.set("/epss/current.csv.gz", gz([]byte(epssFile("2026-11-25", "0.6"))))
	*logs = nil
	res = mustSources(t, opt)
	if diff := cmp.Diff(Result{Fetched: []string{"epss_scores-2026-11-25.csv.gz"}}, res); diff != "" {
		t.Errorf("a new day (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{StateName, "epss_scores-2026-11-25.csv.gz"}, dirFiles(t, opt.Dir)); diff != "" {
		t.Errorf("directory (-want +got):\n%s", diff)
	}
	if !slices.Contains(*logs, "removed epss_scores-2026-11-24.csv.gz: superseded") {
		t.Errorf("log %q", *logs)
	}
}

// TestRunSources: Run fetches the EPSS file and the bundles after the
// feeds and the catalog, and a source turned off ("-") is not asked for.
func TestRunSources(t *testing.T) {
	m, opt, _ := setup(t)
	s := newSite()
	s.publish(t, "2026-11-24_all_CVEs_at_midnight.zip.zip", fullBundle(t, "CVE-2026-0001"))
	s.set("/epss/current.csv.gz", gz([]byte(epssFile("2026-11-24", "0.5"))))
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	opt.EPSSURL, opt.CVE5URL = srv.URL+"/epss/current.csv.gz", srv.URL+"/cve5/"
	res := mustRun(t, opt)
	want := []string{"nvdcve-2.0-2023.json.gz", "nvdcve-2.0-2024.json.gz", "nvdcve-2.0-modified.json.gz", "nvdcve-2.0-recent.json.gz",
		CWEName, "epss_scores-2026-11-24.csv.gz", "2026-11-24_all_CVEs_at_midnight.zip.zip"}
	if diff := cmp.Diff(Result{Fetched: want, Full: true}, res); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	_ = m
	opt.EPSSURL, opt.CVE5URL = "-", "-"
	res = mustRun(t, opt)
	if len(res.Unchanged) != 3 || s.count("/epss/current.csv.gz") != 1 || s.count("/cve5/releases/latest") != 1 {
		t.Errorf("with both turned off: %+v, %d and %d requests", res, s.count("/epss/current.csv.gz"), s.count("/cve5/releases/latest"))
	}
}

// TestCVE5WholePartChecked: a bundle downloaded whole by a run stopped
// while it was checking it (SIGINT) is checked and put in place by the
// next run without being downloaded again.
func TestCVE5WholePartChecked(t *testing.T) {
	s, opt, _ := sourcesSetup(t)
	opt.EPSSURL = "-"
	name := "2026-11-24_all_CVEs_at_midnight.zip.zip"
	body := s.files["/cve5/releases/dl/"+name]
	sum := sha256.Sum256(body)
	os.WriteFile(filepath.Join(opt.Dir, "."+name+".part"), body, 0o644)
	st, _ := json.Marshal(state{CVE5Part: &partState{assetState: assetState{Name: name, Size: int64(len(body)), SHA256: hex.EncodeToString(sum[:])}, ETag: `"x"`}})
	os.WriteFile(filepath.Join(opt.Dir, StateName), st, 0o644)
	res := mustSources(t, opt)
	if !slices.Contains(res.Fetched, name) || s.count("/cve5/releases/dl/"+name) != 0 {
		t.Errorf("result %+v, %d downloads of the baseline; want it put in place from its part, none", res, s.count("/cve5/releases/dl/"+name))
	}
	if b, _ := os.ReadFile(filepath.Join(opt.Dir, name)); !bytes.Equal(b, body) {
		t.Error("the bundle is not the part's")
	}
}

// TestRunSourceFails: a source other than NVD's feeds that fails (here
// the EPSS file, a 404) does not keep the others from being
// fetched, since each keeps its own old copy: the catalog before it and
// the bundles after it are in place, the state is written, and Run ends
// with a *SourceError naming the EPSS URL, which vulnd fetch turns into
// its exit status 3 ("the NVD feeds are current, build on").
func TestRunSourceFails(t *testing.T) {
	_, opt, _ := setup(t)
	s := newSite()
	s.publish(t, "2026-11-24_all_CVEs_at_midnight.zip.zip", fullBundle(t, "CVE-2026-0001"))
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	opt.EPSSURL, opt.CVE5URL = srv.URL+"/epss/missing.csv.gz", srv.URL+"/cve5/"
	opt.Attempts = 1
	res, err := Run(context.Background(), opt)
	var se *SourceError
	if !errors.As(err, &se) || len(se.Errs) != 1 || !strings.Contains(err.Error(), opt.EPSSURL) {
		t.Fatalf("err %v, want a *SourceError naming %s alone", err, opt.EPSSURL)
	}
	want := []string{"nvdcve-2.0-2023.json.gz", "nvdcve-2.0-2024.json.gz", "nvdcve-2.0-modified.json.gz", "nvdcve-2.0-recent.json.gz",
		CWEName, "2026-11-24_all_CVEs_at_midnight.zip.zip"}
	if diff := cmp.Diff(Result{Fetched: want, Full: true}, res); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// The next run, with the EPSS file back, asks NVD for nothing new
	// (the full fetch was recorded) and fetches the EPSS file.
	s.set("/epss/missing.csv.gz", gz([]byte(epssFile("2026-11-24", "0.5"))))
	res = mustRun(t, opt)
	if res.Full || !slices.Contains(res.Fetched, "epss_scores-2026-11-24.csv.gz") {
		t.Errorf("second run: %+v", res)
	}
}
