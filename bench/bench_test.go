// Package bench holds the full-scale benchmarks: every endpoint class
// served through httpapi, the snapshot load and the index build, on one
// snapshot per run. See README.md for how to run them and RESULTS.md for
// figures.
//
// The snapshot is VULND_BENCH_SNAPSHOT if set; otherwise one is generated
// with bench/synth (VULND_BENCH_CVES CVEs, default 400,000, a first day
// and a next day built with -previous so reports exist) in a temporary
// directory, once per process, the first time a benchmark needs it.
// Plain go test runs no benchmark and so generates nothing.
package bench

import (
	"fmt"
	"net/http"
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

// snapshot returns the benchmark snapshot's directory and loaded index.
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
// day's snapshot with the first as -previous.
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
	root, err := moduleRoot()
	if err != nil {
		return "", err
	}
	run := func(args ...string) error {
		cmd := exec.Command("go", args...)
		cmd.Dir, cmd.Stderr = root, os.Stderr
		if out, err := cmd.Output(); err != nil {
			return fmt.Errorf("go %v: %w\n%s", args, err, out)
		}
		return nil
	}
	day, next := filepath.Join(tmpDir, "day"), filepath.Join(tmpDir, "next")
	s1, s2 := filepath.Join(tmpDir, "s1"), filepath.Join(tmpDir, "s2")
	count := strconv.Itoa(n)
	steps := [][]string{
		{"run", "./bench/synth", "-o", day, "-cves", count, "-seed", "1"},
		{"run", "./bench/synth", "-o", next, "-cves", count, "-seed", "1", "-next", "-change-rate", "0.02"},
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
	return filepath.Dir(string(out[:len(out)-1])), nil
}

// writer is a minimal http.ResponseWriter that keeps only the status and
// the number of bytes, so a benchmark measures vulnd and not a recorder.
type writer struct {
	hdr    http.Header
	status int
	n      int
}

func (w *writer) Header() http.Header         { return w.hdr }
func (w *writer) WriteHeader(status int)      { w.status = status }
func (w *writer) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

// get answers target from s and decodes the JSON body into v.
func get(s http.Handler, target string, v any) error {
	rec := &recorder{hdr: http.Header{}}
	req, err := http.NewRequest(http.MethodGet, "http://bench"+target, nil)
	if err != nil {
		return err
	}
	s.ServeHTTP(rec, req)
	if rec.status != http.StatusOK {
		return fmt.Errorf("GET %s: status %d: %s", target, rec.status, rec.body)
	}
	return json.Unmarshal(rec.body, v)
}

type recorder struct {
	hdr    http.Header
	status int
	body   []byte
}

func (r *recorder) Header() http.Header         { return r.hdr }
func (r *recorder) WriteHeader(status int)      { r.status = status }
func (r *recorder) Write(p []byte) (int, error) { r.body = append(r.body, p...); return len(p), nil }

var (
	classOnce sync.Once
	classes   []Class
	classErr  error
)

// endpointClasses picks the paths of every class from the snapshot once
// per run, through s.
func endpointClasses(s http.Handler, ix *index.Index) ([]Class, error) {
	classOnce.Do(func() {
		classes, classErr = PickPaths(func(target string, v any) error { return get(s, target, v) }, ix.Counts(), 2000)
	})
	return classes, classErr
}

// BenchmarkEndpoint serves every class's paths in turn through
// httpapi.Server.ServeHTTP, as net/http would call it.
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
			var bytes int
			for i, p := range c.Paths {
				req, err := http.NewRequest(http.MethodGet, "http://bench"+p, nil)
				if err != nil {
					b.Fatal(err)
				}
				reqs[i] = req
				w := &writer{hdr: http.Header{}}
				s.ServeHTTP(w, req)
				// Every path must be a real answer, or the benchmark
				// would measure 404s.
				if w.status != http.StatusOK || w.n < 2 {
					b.Fatalf("GET %s: status %d, %d bytes", p, w.status, w.n)
				}
				bytes += w.n
			}
			b.SetBytes(int64(bytes / len(reqs)))
			w := &writer{hdr: http.Header{}}
			b.ReportAllocs()
			b.ResetTimer()
			i := 0
			for b.Loop() {
				clear(w.hdr)
				s.ServeHTTP(w, reqs[i])
				if i++; i == len(reqs) {
					i = 0
				}
			}
		})
	}
}

// BenchmarkLoad is what serve and every SIGHUP do: read, check and index
// the snapshot.
func BenchmarkLoad(b *testing.B) {
	dir, _ := snapshot(b)
	b.ReportAllocs()
	for b.Loop() {
		ix, _, err := loader.Load(dir)
		if err != nil {
			b.Fatal(err)
		}
		runtime.KeepAlive(ix)
	}
}

// BenchmarkBuildIndex is the index build alone, from records already
// decoded: what the build command does after reading the feeds.
func BenchmarkBuildIndex(b *testing.B) {
	dir, _ := snapshot(b)
	snap, err := loader.Read(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		ix, err := index.Build(snap.Data, index.Meta{})
		if err != nil {
			b.Fatal(err)
		}
		runtime.KeepAlive(ix)
	}
}
