package loader

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strings"
	"testing"
	"time"
)

// TestBuildProfile profiles a build of the synthetic data in
// $VULND_BUILD_PROFILE (bench/synth's output: go run -C bench ./synth -o
// DIR -cves 100000 -seed 1 -cve5), writing cpu.pprof and heap.pprof
// (the heap when the records are merged, at the end of the build, and
// when the most was live: heap-read, heap-writ, heap-peak)
// into $VULND_BUILD_PROFILE_OUT; VULND_BUILD_PROFILE_NVD=1 leaves out
// cves.zip. It is skipped without them: it is a tool, not a test. At
// 400k (bench/RESULTS.md, "Issue 26 item 8, w26g"), on the cores a
// build has, under the lock the helpers share:
//
//	go test -c -o /tmp/loader.test ./loader
//	cd loader && VULND_BUILD_PROFILE=/work/data400 VULND_BUILD_PROFILE_OUT=/tmp/prof \
//	  flock /tmp/big.lock taskset -c 0 /tmp/loader.test -test.run '^TestBuildProfile$' -test.v
//	go tool pprof -sample_index=inuse_space -top /tmp/prof/heap-write-bodies-written.pprof
func TestBuildProfile(t *testing.T) {
	dir, out := os.Getenv("VULND_BUILD_PROFILE"), os.Getenv("VULND_BUILD_PROFILE_OUT")
	if dir == "" || out == "" {
		t.Skip("VULND_BUILD_PROFILE and VULND_BUILD_PROFILE_OUT not set")
	}
	feeds, err := filepath.Glob(filepath.Join(dir, "nvdcve-2.0-*.json.gz"))
	if err != nil || len(feeds) == 0 {
		t.Fatalf("no feeds in %s", dir)
	}
	if os.Getenv("VULND_BUILD_PROFILE_NVD") == "" {
		feeds = append(feeds, filepath.Join(dir, "cves.zip"))
	}
	f, err := os.Create(filepath.Join(out, "cpu.pprof"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		t.Fatal(err)
	}
	// The heap after the collection that found the most live memory.
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		var most uint64
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			metrics.Read(sample)
			if live := sample[0].Value.Uint64(); live > most*21/20 {
				most = live
				writeHeapProfile(t, filepath.Join(out, "heap-peak.pprof"), false)
				t.Logf("live heap %d MB", live>>20)
			}
		}
	}()
	writePhase = func(name string) {
		writeHeapProfile(t, filepath.Join(out, "heap-write-"+strings.ReplaceAll(name, " ", "-")+".pprof"), true)
		t.Logf("write: %s: live heap %d MB, %s", name, liveHeap()>>20, procRSS())
	}
	defer func() { writePhase = func(string) {} }()
	start := time.Now()
	_, err = Build(BuildOptions{
		CWECatalog: filepath.Join(dir, "cwec_synth.xml"),
		Feeds:      feeds,
		Out:        filepath.Join(t.TempDir(), "snap"),
		Time:       time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC),
		Stage: func(name string, took time.Duration, detail string) {
			t.Logf("%s: %v %s (live heap %d MB, %s)", name, took, detail, liveHeap()>>20, procRSS())
			switch name {
			case "read feeds", "pack NVD records", "assign ids", "read CVE JSON 5 records", "write snapshot":
				writeHeapProfile(t, filepath.Join(out, "heap-"+strings.ReplaceAll(name, " ", "-")+".pprof"), true)
			}
		},
	})
	pprof.StopCPUProfile()
	close(stop)
	<-watched
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("build took %v", time.Since(start))
}

// procRSS is the process's resident set and its peak so far, from
// /proc/self/status ("" where there is none).
func procRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return ""
	}
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmRSS:") || strings.HasPrefix(l, "VmHWM:") {
			out = append(out, strings.Join(strings.Fields(l), " "))
		}
	}
	return strings.Join(out, ", ")
}

func writeHeapProfile(t *testing.T, path string, gc bool) {
	if gc {
		runtime.GC()
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		t.Fatal(err)
	}
}

// TestBuildPreviousProfile profiles a build with -previous: the previous
// snapshot in $VULND_PREVIOUS_PROFILE, the inputs (space-separated) in
// $VULND_PREVIOUS_PROFILE_INPUTS, the CWE catalog in
// $VULND_PREVIOUS_PROFILE_CWE, build time 2026-11-22T08:00:00Z; it writes
// cpu.pprof into $VULND_PREVIOUS_PROFILE_OUT and logs each stage and
// each phase of the write with the time since the previous one and the
// process's RSS. It is skipped without them: it is a tool, not a test.
func TestBuildPreviousProfile(t *testing.T) {
	prev, inputs, cwe, out := os.Getenv("VULND_PREVIOUS_PROFILE"), os.Getenv("VULND_PREVIOUS_PROFILE_INPUTS"), os.Getenv("VULND_PREVIOUS_PROFILE_CWE"), os.Getenv("VULND_PREVIOUS_PROFILE_OUT")
	if prev == "" || inputs == "" || cwe == "" || out == "" {
		t.Skip("VULND_PREVIOUS_PROFILE, _INPUTS, _CWE and _OUT not set")
	}
	f, err := os.Create(filepath.Join(out, "cpu.pprof"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := pprof.StartCPUProfile(f); err != nil {
		t.Fatal(err)
	}
	defer pprof.StopCPUProfile()
	last := time.Now()
	writePhase = func(name string) {
		t.Logf("write: %s: %v (%s)", name, time.Since(last).Round(time.Millisecond), procRSS())
		last = time.Now()
	}
	defer func() { writePhase = func(string) {} }()
	start := time.Now()
	_, err = Build(BuildOptions{
		CWECatalog: cwe,
		Feeds:      strings.Fields(inputs),
		Previous:   prev,
		Out:        filepath.Join(t.TempDir(), "snap"),
		Time:       time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC),
		Stage: func(name string, took time.Duration, detail string) {
			t.Logf("%s: %v %s (%s)", name, took.Round(time.Millisecond), detail, procRSS())
			last = time.Now()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("build took %v", time.Since(start))
}
