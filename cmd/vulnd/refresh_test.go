package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vulnd/vulnd/loader"
	"github.com/vulnd/vulnd/loader/oci"
)

// vulndRun runs one command line in this process and returns what it
// printed and its exit status.
func vulndRun(args ...string) (stdout, stderr string, code int) {
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return o.String(), e.String(), code
}

// warningLines are the lines of stderr that are warnings.
func warningLines(stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, "warning") {
			out = append(out, l)
		}
	}
	return out
}

// TestBuildWarnsOverReports is issue 24 item 1: a build that writes over
// a snapshot that has reports, without -previous, says on stderr, in one
// line, that the report history starts over; a build over a snapshot
// without reports, or with -previous, says nothing of the kind.
func TestBuildWarnsOverReports(t *testing.T) {
	cwe := sharedData(t, "cwe/cwec_v4.15.xml.zip")
	before := sharedData(t, "nvd/changes/before.json.gz")
	after := sharedData(t, "nvd/changes/after.json.gz")
	dir := t.TempDir()
	snap, next := filepath.Join(dir, "snap"), filepath.Join(dir, "snap.next")
	if _, e, code := vulndRun("build", "-cwe", cwe, "-o", snap, "-time", "2026-11-22T06:00:00Z", before); code != 0 || warningLines(e) != nil {
		t.Fatalf("first build: exit %d\n%s", code, e)
	}
	// Over a snapshot without reports: no warning.
	if _, e, code := vulndRun("build", "-cwe", cwe, "-o", snap, "-time", "2026-11-22T06:00:00Z", before); code != 0 || warningLines(e) != nil {
		t.Fatalf("build over a snapshot without reports: exit %d\n%s", code, e)
	}
	// The build-aside-and-move flow: no warning, and one report.
	if _, e, code := vulndRun("build", "-cwe", cwe, "-o", next, "-previous", snap, "-time", "2026-11-23T06:00:00Z", after); code != 0 || warningLines(e) != nil {
		t.Fatalf("build aside: exit %d\n%s", code, e)
	}
	if err := os.RemoveAll(snap); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(next, snap); err != nil {
		t.Fatal(err)
	}
	// Over it without -previous: the report is gone, and stderr says so.
	o, e, code := vulndRun("build", "-cwe", cwe, "-o", snap, "-time", "2026-11-24T06:00:00Z", after)
	if code != 0 || !strings.Contains(o, " 0 reports") {
		t.Fatalf("build over the snapshot: exit %d\n%s%s", code, o, e)
	}
	want := "vulnd build: warning: replaced the snapshot in " + snap + " and its 1 report without -previous: the new snapshot starts its report history over (to keep it, build with -previous " +
		snap + " -o " + snap + ".next and move that into place)"
	if got := warningLines(e); len(got) != 1 || got[0] != want {
		t.Errorf("warnings on stderr:\n got %q\nwant %q", got, want)
	}
}

// TestBuildRefreshGuard is issue 24 item 2 on the command line: with
// -previous, an empty feed and an older feed are refused, exit 1, with one
// line naming what tripped, and nothing written; -force lets both through.
func TestBuildRefreshGuard(t *testing.T) {
	cwe := sharedData(t, "cwe/cwec_v4.15.xml.zip")
	sample := sharedData(t, "nvd/nvdcve-2.0-sample.json.gz")
	before := sharedData(t, "nvd/changes/before.json.gz")
	after := sharedData(t, "nvd/changes/after.json.gz")
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.json")
	if err := os.WriteFile(empty, []byte(`{"resultsPerPage":0,"startIndex":0,"totalResults":0,"format":"NVD_CVE","version":"2.0","timestamp":"2026-11-23T00:00:00.000","vulnerabilities":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	snap := filepath.Join(dir, "snap")
	if _, e, code := vulndRun("build", "-cwe", cwe, "-o", snap, "-time", "2026-11-22T06:00:00Z", sample, after); code != 0 {
		t.Fatalf("first build: exit %d\n%s", code, e)
	}
	for _, tc := range []struct {
		name  string
		feeds []string
		want  string // the one line on stderr
		force string // what -force's build prints on stdout
	}{
		{"empty", []string{empty},
			"vulnd build: refusing a refresh that loses 100.0 % of the CVEs, more than 5 %: 0 CVEs, -previous " + snap + " has 191 (an empty or partial feed?); -force lets it through\n",
			": 0 CVEs,"},
		{"rollback", []string{sample, before},
			"vulnd build: refusing a refresh that goes back in time: CVE-2021-44200 was last modified 2026-06-17 04:12:02Z in -previous " + snap +
				", 2021-11-30 13:42:50Z now, and 11 more CVEs went back too (an older feed? NVD never goes back); -force lets it through\n",
			": 188 CVEs,"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := filepath.Join(t.TempDir(), "next")
			args := append([]string{"build", "-cwe", cwe, "-o", next, "-previous", snap, "-time", "2026-11-23T06:00:00Z"}, tc.feeds...)
			o, e, code := vulndRun(args...)
			// The stage lines come first; the refusal is the last line.
			lines := strings.SplitAfter(e, "\n")
			if code != 1 || o != "" || len(lines) < 2 || lines[len(lines)-2] != tc.want {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 1 and last line %q", code, o, e, tc.want)
			}
			if _, err := os.Lstat(next); !os.IsNotExist(err) {
				t.Errorf("a refused build left %s", next)
			}
			args = append([]string{"build", "-force"}, args[1:]...)
			o, e, code = vulndRun(args...)
			if code != 0 || !strings.Contains(o, tc.force) {
				t.Errorf("with -force: exit %d\n%s%s", code, o, e)
			}
		})
	}
}

// TestPublishRefreshGuard is issue 24 item 2 for publish, against a real
// registry: a snapshot with far fewer CVEs, or with CVEs older than the
// snapshot a tag names now, is refused (exit 1, one line, no tag moved),
// whichever of -to and -also-tag names it; -force publishes it; the same
// snapshot again, a new tag, and a newer snapshot pass.
func TestPublishRefreshGuard(t *testing.T) {
	reg := startRegistry(t)
	cwe := sharedData(t, "cwe/cwec_v4.15.xml.zip")
	sample := sharedData(t, "nvd/nvdcve-2.0-sample.json.gz")
	before := sharedData(t, "nvd/changes/before.json.gz")
	after := sharedData(t, "nvd/changes/after.json.gz")
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.json")
	if err := os.WriteFile(empty, []byte(`{"format":"NVD_CVE","version":"2.0","timestamp":"2026-11-23T00:00:00.000","vulnerabilities":[]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	snaps := map[string][]string{
		"old":     {sample, before},        // 188 CVEs
		"current": {sample, after},         // 191 CVEs, newer
		"empty":   {empty},                 // 0 CVEs
		"newer":   {sample, before, after}, // the same CVEs as current
	}
	for name, feeds := range snaps {
		if _, e, code := vulndRun(append([]string{"build", "-cwe", cwe, "-o", filepath.Join(dir, name), "-time", "2026-11-22T06:00:00Z"}, feeds...)...); code != 0 {
			t.Fatalf("build %s: exit %d\n%s", name, code, e)
		}
	}
	base := "oci://" + reg.addr + "/vulnd/snapshots"
	tagged := func(tag string) string {
		t.Helper()
		repo, err := oci.Repository(mustRef(t, base+":"+tag), oci.Options{PlainHTTP: true})
		if err != nil {
			t.Fatal(err)
		}
		desc, err := repo.Resolve(context.Background(), tag)
		if err != nil {
			return ""
		}
		return desc.Digest.String()
	}
	current := publish(t, base+":day1", filepath.Join(dir, "current")) // and latest
	for _, tc := range []struct {
		name, snap, tag, want string
	}{
		{"empty against latest", "empty", "day2",
			"vulnd publish: refusing a refresh that loses 100.0 % of the CVEs, more than 5 %: 0 CVEs, the snapshot " + base + ":latest names has 191 (an empty or partial feed?); -force lets it through\n"},
		{"rollback against latest", "old", "day2",
			"vulnd publish: refusing a refresh that goes back in time: CVE-2021-44200 was last modified 2026-06-17 04:12:02Z in the snapshot " + base + ":latest names, 2021-11-30 13:42:50Z now, and 11 more CVEs went back too (an older feed? NVD never goes back); -force lets it through\n"},
		{"rollback against -to", "old", "day1",
			"vulnd publish: refusing a refresh that goes back in time: CVE-2021-44200 was last modified 2026-06-17 04:12:02Z in the snapshot " + base + ":day1 names, 2021-11-30 13:42:50Z now, and 11 more CVEs went back too (an older feed? NVD never goes back); -force lets it through\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, e, code := vulndRun("publish", "-plain-http", "-to", base+":"+tc.tag, filepath.Join(dir, tc.snap))
			if code != 1 || o != "" || e != tc.want {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 1 and stderr:\n%s", code, o, e, tc.want)
			}
			if got := tagged("latest"); got != current {
				t.Errorf("latest moved to %s", got)
			}
			if got := tagged("day1"); got != current {
				t.Errorf("day1 moved to %s", got)
			}
			if got := tagged("day2"); got != "" {
				t.Errorf("day2 was set to %s", got)
			}
		})
	}
	// The same snapshot again, and one as new, pass.
	publish(t, base+":day1", filepath.Join(dir, "current"))
	publish(t, base+":day3", filepath.Join(dir, "newer"))
	// -force publishes the rolled-back one.
	if o, e, code := vulndRun("publish", "-plain-http", "-force", "-to", base+":day4", filepath.Join(dir, "old")); code != 0 {
		t.Fatalf("publish -force: exit %d\n%s%s", code, o, e)
	}
	if tagged("latest") != tagged("day4") || tagged("day4") == "" {
		t.Errorf("after -force, latest is %s, day4 %s", tagged("latest"), tagged("day4"))
	}
	// And then the empty one, with -force too.
	if o, e, code := vulndRun("publish", "-plain-http", "-force", "-to", base+":day5", filepath.Join(dir, "empty")); code != 0 {
		t.Fatalf("publish -force: exit %d\n%s%s", code, o, e)
	}
	// A snapshot whose manifest says its build's guard held against the
	// snapshot a tag names (refresh_of) is not compared with it again:
	// the rolled-back one, so marked against current, passes day1 (which
	// names current); marked against another snapshot, it is compared,
	// and refused.
	currentID, err := loader.ID(filepath.Join(dir, "current"))
	if err != nil {
		t.Fatal(err)
	}
	newerID, err := loader.ID(filepath.Join(dir, "newer"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		refreshOf string
		code      int
	}{{newerID, 1}, {currentID, 0}} {
		marked := filepath.Join(t.TempDir(), "marked")
		if err := os.CopyFS(marked, os.DirFS(filepath.Join(dir, "old"))); err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(filepath.Join(marked, loader.ManifestName))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		m["refresh_of"] = tc.refreshOf
		if raw, err = json.Marshal(m); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(marked, loader.ManifestName), raw, 0o644); err != nil {
			t.Fatal(err)
		}
		o, e, code := vulndRun("publish", "-plain-http", "-also-tag", "", "-to", base+":day1", marked)
		if code != tc.code {
			t.Errorf("refresh_of %s (current %s): exit %d, want %d\n%s%s", tc.refreshOf, currentID, code, tc.code, o, e)
		}
		if moved := tagged("day1") != current; moved != (tc.code == 0) {
			t.Errorf("refresh_of %s: day1 moved %v", tc.refreshOf, moved)
		}
	}
}

func mustRef(t *testing.T, s string) oci.Ref {
	t.Helper()
	r, err := oci.ParseRef(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestReadmeReloadRecipe is issue 24 item 1: the README's "Reload
// without downtime" recipe, run as written (but for starting and
// signalling the server), keeps the reports of the snapshot served and
// warns of nothing.
func TestReadmeReloadRecipe(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Reload without downtime\n")
	if !ok {
		t.Fatal(`README.md has no section "Reload without downtime"`)
	}
	_, block, ok := strings.Cut(section, "```sh\n")
	block, _, ok2 := strings.Cut(block, "```")
	if !ok || !ok2 {
		t.Fatal("the section has no sh block")
	}
	work := t.TempDir()
	bin := buildBinary(t, work)
	var script []string
	for _, line := range strings.Split(block, "\n") {
		if strings.Contains(line, "vulnd serve") || strings.HasPrefix(line, "kill ") || strings.TrimSpace(line) == "" {
			continue // the server is not part of this test
		}
		script = append(script, strings.ReplaceAll(line, "bin/vulnd", bin))
	}
	// The served snapshot has one report: before.json.gz then after.json.gz.
	copyFile(t, sharedData(t, "cwe/cwec_v4.15.xml.zip"), filepath.Join(work, "cwec.xml.zip"))
	copyFile(t, sharedData(t, "nvd/nvdcve-2.0-sample.json.gz"), filepath.Join(work, "nvdcve-2.0-2024.json.gz"))
	copyFile(t, sharedData(t, "nvd/changes/after.json.gz"), filepath.Join(work, "nvdcve-2.0-modified.json.gz"))
	first, snap := filepath.Join(work, "first"), filepath.Join(work, "snap")
	if _, e, code := vulndRun("build", "-cwe", filepath.Join(work, "cwec.xml.zip"), "-o", first, "-time", "2026-11-22T06:00:00Z",
		filepath.Join(work, "nvdcve-2.0-2024.json.gz"), sharedData(t, "nvd/changes/before.json.gz")); code != 0 {
		t.Fatalf("first build: %s", e)
	}
	if o, e, code := vulndRun("build", "-cwe", filepath.Join(work, "cwec.xml.zip"), "-o", snap, "-previous", first, "-time", "2026-11-23T06:00:00Z",
		filepath.Join(work, "nvdcve-2.0-2024.json.gz"), filepath.Join(work, "nvdcve-2.0-modified.json.gz")); code != 0 || !strings.Contains(o, " 1 report,") {
		t.Fatalf("second build: %s%s", o, e)
	}
	cmd := exec.Command("sh", "-ec", strings.Join(script, "\n"))
	cmd.Dir = work
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil {
		t.Fatalf("the recipe:\n%s\nfailed: %v\n%s%s", strings.Join(script, "\n"), err, o.String(), e.String())
	}
	if w := warningLines(e.String()); w != nil {
		t.Errorf("the recipe warned: %q", w)
	}
	out, _, code := vulndRun("validate", snap)
	if code != 0 || !strings.HasSuffix(strings.TrimSpace(out), " 1 report") {
		t.Errorf("after the recipe, vulnd validate snap: %s (want its 1 report kept)", out)
	}
}
