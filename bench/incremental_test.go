package bench

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vulnd/vulnd/loader"
)

// TestIncrementalSynth: synthetic feeds of a day and of the next one (2 %
// of the CVEs changed, a few new) laid out as NVD's site, built with
// -previous incrementally and with -full, give the same snapshot, every
// file byte for byte: when only the modified and recent feeds changed (a
// two-hourly refresh, which reads only those), and when every feed did
// (the next day).
func TestIncrementalSynth(t *testing.T) {
	dir := t.TempDir()
	bin := func(name string) string {
		out := filepath.Join(dir, "bin", name)
		cmd := exec.Command("go", "build", "-o", out, "./"+name)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build ./%s: %v\n%s", name, err, b)
		}
		return out
	}
	synth, feedsite := bin("synth"), bin("feedsite")
	run := func(name string, args ...string) {
		if b, err := exec.Command(name, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v\n%s", filepath.Base(name), args, err, b)
		}
	}
	day, next := filepath.Join(dir, "day"), filepath.Join(dir, "next")
	run(synth, "-o", day, "-cves", "1500", "-seed", "1")
	run(synth, "-o", next, "-cves", "1500", "-seed", "1", "-next", "-change-rate", "0.02")
	site1, site2 := filepath.Join(dir, "site1"), filepath.Join(dir, "site2")
	run(feedsite, "-from", day, "-to", site1, "-time", "2026-11-22T06:00:00Z")
	run(feedsite, "-from", next, "-to", site2, "-time", "2026-11-23T06:00:00Z")
	feeds := func(yearly, changing string) []string {
		out, err := filepath.Glob(filepath.Join(yearly, "nvdcve-2.0-[0-9]*.json.gz"))
		if err != nil || len(out) == 0 {
			t.Fatalf("no yearly feeds in %s: %v", yearly, err)
		}
		return append(out, filepath.Join(changing, "nvdcve-2.0-modified.json.gz"), filepath.Join(changing, "nvdcve-2.0-recent.json.gz"))
	}
	at := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	first := loader.BuildOptions{CWECatalog: filepath.Join(site1, "cwec_latest.xml.zip"), Feeds: feeds(site1, site1),
		Out: filepath.Join(dir, "s1"), Time: at}
	if _, err := loader.Build(first); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name        string
		feeds       []string
		incremental bool
		// known: records of the changed feeds recognised as the previous
		// snapshot's, not decoded again
		known bool
	}{
		{"modified and recent changed", feeds(site1, site2), true, false},
		{"every feed changed", feeds(site2, site2), true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opt := first
			opt.Feeds, opt.Previous, opt.Time = tc.feeds, first.Out, at.Add(2*time.Hour)
			var log []string
			opt.Stage = func(name string, _ time.Duration, detail string) { log = append(log, name+": "+detail) }
			inc, full := opt, opt
			inc.Out, full.Out, full.Full = filepath.Join(dir, "inc"), filepath.Join(dir, "full"), true
			for _, o := range []loader.BuildOptions{inc, full} {
				os.RemoveAll(o.Out)
				if _, err := loader.Build(o); err != nil {
					t.Fatal(err)
				}
			}
			all := strings.Join(log, "\n")
			if got := strings.Contains(all, "incrementally"); got != tc.incremental {
				t.Errorf("incremental: %v, want %v; log:\n%s", got, tc.incremental, all)
			}
			if got := strings.Contains(all, " read (") && !strings.Contains(all, " read (0 of their records"); got != tc.known {
				t.Errorf("records of the changed feeds recognised: %v, want %v; log:\n%s", got, tc.known, all)
			}
			es, err := os.ReadDir(full.Out)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range es {
				a, err := os.ReadFile(filepath.Join(full.Out, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				b, err := os.ReadFile(filepath.Join(inc.Out, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(a, b) {
					t.Errorf("%s differs: %d bytes in the full build, %d in the incremental one", e.Name(), len(a), len(b))
				}
			}
			if n, err := os.ReadDir(inc.Out); err != nil || len(n) != len(es) {
				t.Errorf("the incremental build holds %d files, the full one %d (%v)", len(n), len(es), err)
			}
		})
	}
}
