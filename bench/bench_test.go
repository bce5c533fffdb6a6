package bench

import (
	"bytes"
	stdjson "encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/goccy/go-json"

	"github.com/vulnd/vulnd/httpapi"
	"github.com/vulnd/vulnd/index"
	"github.com/vulnd/vulnd/loader"
)

var (
	snapOnce sync.Once
	snapDir  string
	snapIx   *index.Index
	snapErr  error
	tmpDir   string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if tmpDir != "" {
		os.RemoveAll(tmpDir)
	}
	os.Exit(code)
}

// snapshot returns the benchmark snapshot's directory and loaded index,
// generating the snapshot on first use unless VULND_BENCH_SNAPSHOT names
// one.
func snapshot(b *testing.B) (string, *index.Index) {
	b.Helper()
	snapOnce.Do(func() {
		snapDir = os.Getenv("VULND_BENCH_SNAPSHOT")
		if snapDir == "" {
			snapDir, snapErr = generate()
			if snapErr != nil {
				return
			}
		}
		snapIx, _, snapErr = loader.Load(snapDir)
	})
	if snapErr != nil {
		b.Fatal(snapErr)
	}
	return snapDir, snapIx
}

// generate writes synthetic feeds for two days and builds the second
// day's snapshot with the first as -previous, so it holds a report.
func generate() (string, error) {
	n := 400000
	if s := os.Getenv("VULND_BENCH_CVES"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n <= 0 {
			return "", fmt.Errorf("VULND_BENCH_CVES=%q: want a positive number", s)
		}
	}
	var err error
	if tmpDir, err = os.MkdirTemp("", "vulnd-bench-"); err != nil {
		return "", err
	}
	benchDir, err := moduleRoot()
	if err != nil {
		return "", err
	}
	// synth is in this module; vulnd in the one above it.
	run := func(args ...string) error {
		dir := filepath.Dir(benchDir)
		if args[1] == "./synth" {
			dir = benchDir
		}
		cmd := exec.Command("go", args...)
		cmd.Dir, cmd.Stderr = dir, os.Stderr
		if out, err := cmd.Output(); err != nil {
			return fmt.Errorf("go %v: %w\n%s", args, err, out)
		}
		return nil
	}
	day, next := filepath.Join(tmpDir, "day"), filepath.Join(tmpDir, "next")
	s1, s2 := filepath.Join(tmpDir, "s1"), filepath.Join(tmpDir, "s2")
	count := strconv.Itoa(n)
	steps := [][]string{
		{"run", "./synth", "-o", day, "-cves", count, "-seed", "1"},
		{"run", "./synth", "-o", next, "-cves", count, "-seed", "1", "-next", "-change-rate", "0.02"},
	}
	for _, s := range steps {
		if err := run(s...); err != nil {
			return "", err
		}
	}
	for _, s := range []struct{ feeds, out, prev, at string }{
		{day, s1, "", "2026-11-22T06:00:00Z"},
		{next, s2, s1, "2026-11-23T06:00:00Z"},
	} {
		feeds, err := filepath.Glob(filepath.Join(s.feeds, "nvdcve-2.0-*.json.gz"))
		if err != nil {
			return "", err
		}
		args := []string{"run", "./cmd/vulnd", "build", "-cwe", filepath.Join(s.feeds, "cwec_synth.xml"), "-o", s.out, "-time", s.at}
		if s.prev != "" {
			args = append(args, "-previous", s.prev)
		}
		if err := run(append(args, feeds...)...); err != nil {
			return "", err
		}
	}
	return s2, nil
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	return filepath.Dir(string(bytes.TrimSpace(out))), nil
}

// writer is a minimal http.ResponseWriter that keeps only the status and
// the number of bytes, so a benchmark measures vulnd and not a recorder.
// It copies nothing: a body the index holds whole costs no more than a
// small one, so MB/s is the rate bodies are produced, not copied.
type writer struct {
	hdr    http.Header
	status int
	n      int
}

func (w *writer) Header() http.Header         { return w.hdr }
func (w *writer) WriteHeader(status int)      { w.status = status }
func (w *writer) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

// check answers target from s and fails unless the answer is a 200 with
// a JSON Content-Type and a valid JSON body, which it returns.
func check(s http.Handler, target string) ([]byte, error) {
	req, err := http.NewRequest(http.MethodGet, "http://bench"+target, nil)
	if err != nil {
		return nil, err
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	body := rec.Body.Bytes()
	if rec.Code != http.StatusOK {
		return nil, fmt.Errorf("GET %s: status %d: %.200s", target, rec.Code, body)
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		return nil, fmt.Errorf("GET %s: Content-Type %q", target, ct)
	}
	if !stdjson.Valid(body) {
		return nil, fmt.Errorf("GET %s: body is not JSON: %.200s", target, body)
	}
	return body, nil
}

var (
	classOnce sync.Once
	classes   []Class
	classErr  error
)

// endpointClasses picks the paths of every class from the snapshot once
// per run, through s: the same paths bench/load.sh uses.
func endpointClasses(s http.Handler, ix *index.Index) ([]Class, error) {
	classOnce.Do(func() {
		if ix.Counts().Reports == 0 {
			classErr = fmt.Errorf("the snapshot has no report, so the report and alert classes have no path: " +
				"set VULND_BENCH_SNAPSHOT to a snapshot built with -previous, or unset it to generate one")
			return
		}
		get := func(target string, v any) error {
			body, err := check(s, target)
			if err != nil {
				return err
			}
			return json.Unmarshal(body, v)
		}
		classes, classErr = PickPaths(get, ix.Counts(), 2000)
	})
	return classes, classErr
}

// BenchmarkEndpoint serves every class's paths in turn through
// httpapi.Server.ServeHTTP, as net/http would call it, with a writer that
// keeps nothing. Before timing, every distinct path must answer 200 with
// a JSON body, so a broken path fails the benchmark instead of timing a
// 404. The bytes per op are the mean body size of the class's paths.
func BenchmarkEndpoint(b *testing.B) {
	_, ix := snapshot(b)
	s := httpapi.New(func() *index.Index { return ix }, httpapi.Options{})
	cs, err := endpointClasses(s, ix)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range cs {
		b.Run(c.Name, func(b *testing.B) {
			reqs := make([]*http.Request, len(c.Paths))
			size := make(map[string]int, len(c.Paths))
			var total, empty int
			for i, p := range c.Paths {
				req, err := http.NewRequest(http.MethodGet, "http://bench"+p, nil)
				if err != nil {
					b.Fatal(err)
				}
				reqs[i] = req
				n, ok := size[p]
				if !ok {
					body, err := check(s, p)
					if err != nil {
						b.Fatal(err)
					}
					n = len(body)
					size[p] = n
				}
				if n == len("[]") {
					empty++
				}
				total += n
			}
			if empty > 0 {
				b.Logf("%d of %d paths are pages past the end ([])", empty, len(reqs))
			}
			b.SetBytes(int64(total / len(reqs)))
			w := &writer{hdr: http.Header{}}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				clear(w.hdr)
				s.ServeHTTP(w, reqs[i])
				if i++; i == len(reqs) {
					i = 0
				}
			}
			if w.status != http.StatusOK {
				b.Fatalf("GET %s: status %d while timing", reqs[(i+len(reqs)-1)%len(reqs)].URL.RequestURI(), w.status)
			}
		})
	}
}

// BenchmarkLoad is what serve and every SIGHUP do: read, check, decode
// and index the snapshot. The bytes per op are the decoded size of the
// files serving reads (CVEs, CWEs, reports).
func BenchmarkLoad(b *testing.B) {
	dir, _ := snapshot(b)
	_, m, err := loader.Load(dir)
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	for _, key := range []string{"cves", "cwes", "reports"} {
		n += m.Files[key].Bytes
	}
	b.SetBytes(n)
	b.ReportAllocs()
	for b.Loop() {
		ix, _, err := loader.Load(dir)
		if err != nil {
			b.Fatal(err)
		}
		runtime.KeepAlive(ix)
	}
}

// BenchmarkBuildIndex is the index build alone, with nothing read from
// disk. Records is index.Build from decoded records, as vulnd build does
// after reading the feeds (each CVE encoded and scanned, then indexed);
// Entries is index.BuildEntries from CVE bodies already scanned, the step
// loader.Load ends with. The bytes per op are the CVE bodies' size.
func BenchmarkBuildIndex(b *testing.B) {
	dir, _ := snapshot(b)
	snap, err := loader.Read(dir)
	if err != nil {
		b.Fatal(err)
	}
	d := snap.Data
	entries := make([]index.CVEEntry, len(d.CVEs))
	var n int64
	for i := range d.CVEs {
		body := index.EncodeCVE(&d.CVEs[i])
		n += int64(len(body))
		if entries[i], err = index.ScanCVE(body); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("Records", func(b *testing.B) {
		b.SetBytes(n)
		b.ReportAllocs()
		for b.Loop() {
			ix, err := index.Build(d, index.Meta{})
			if err != nil {
				b.Fatal(err)
			}
			runtime.KeepAlive(ix)
		}
	})
	b.Run("Entries", func(b *testing.B) {
		// BuildEntries may reorder its slice, so each run gets a fresh
		// copy in the stored order.
		in := make([]index.CVEEntry, len(entries))
		b.SetBytes(n)
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			copy(in, entries)
			b.StartTimer()
			ix, err := index.BuildEntries(d.CWEs, in, nil, d.Reports, index.Meta{})
			if err != nil {
				b.Fatal(err)
			}
			runtime.KeepAlive(ix)
		}
	})
}
