package loader

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vulnd/vulnd/loader/loadertest"
)

func mustWrite(t *testing.T, p, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustCopy(t *testing.T, from, to string) string {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	return mustWrite(t, to, string(b))
}

func mustLink(t *testing.T, target, p string) {
	t.Helper()
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

func absPath(t *testing.T, p string) string {
	t.Helper()
	abs, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// elsewhere is a new directory outside the test's (and its parent).
func elsewhere(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "vulnd-inputs-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// smallInputs writes a tiny CWE catalog and a one-CVE feed under dir.
func smallInputs(t *testing.T, dir string) (cwe, feedFile string) {
	t.Helper()
	cwe = mustWrite(t, filepath.Join(dir, "cwe.xml"), `<Weakness_Catalog><Weaknesses></Weaknesses></Weakness_Catalog>`)
	feedFile = mustWrite(t, filepath.Join(dir, "feed.json"), feed(record("CVE-2024-0001", "2024-01-01T00:00:00.000", "x")))
	return cwe, feedFile
}

// smallSnapshot builds a snapshot at out from inputs under dir.
func smallSnapshot(t *testing.T, dir, out string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	cwe, f := smallInputs(t, dir)
	if _, err := Build(BuildOptions{CWECatalog: cwe, Feeds: []string{f}, Out: out, Time: buildTime}); err != nil {
		t.Fatal(err)
	}
}

// TestBuildRefusesToReplace is issue 15 item 1: a build never deletes
// what it did not make. Each case is refused before the build reads
// anything (no stage ends), with one line naming -o and the reason, and
// leaves every file under the test's directory as it was; force does not
// change that for these cases.
func TestBuildRefusesToReplace(t *testing.T) {
	cweZip, sample := absPath(t, sharedPath(t, "cwe/cwec_v4.15.xml.zip")), absPath(t, sharedPath(t, "nvd/nvdcve-2.0-sample.json.gz"))
	for _, tc := range []struct {
		name string
		// setup makes the files under root (the working directory) and
		// returns the build's options.
		setup func(t *testing.T, root string) BuildOptions
		want  string // in the error, after "-o OUT "
	}{
		{"the directory of the feeds (the issue's command line)", func(t *testing.T, root string) BuildOptions {
			mustCopy(t, cweZip, filepath.Join(root, "feeds", "cwec_v4.15.xml.zip"))
			mustCopy(t, sample, filepath.Join(root, "feeds", "nvdcve-2.0-sample.json.gz"))
			mustWrite(t, filepath.Join(root, "feeds", "notes.txt"), "the operator's own file\n")
			return BuildOptions{CWECatalog: "feeds/cwec_v4.15.xml.zip", Feeds: []string{"feeds/nvdcve-2.0-sample.json.gz"}, Out: "feeds"}
		}, "holds the input feeds/cwec_v4.15.xml.zip"},
		{"a directory above the feeds", func(t *testing.T, root string) BuildOptions {
			cwe, f := smallInputs(t, filepath.Join(root, "data", "nvd"))
			return BuildOptions{CWECatalog: cwe, Feeds: []string{f}, Out: filepath.Join(root, "data")}
		}, "holds the input"},
		{"the feed file", func(t *testing.T, root string) BuildOptions {
			cwe, f := smallInputs(t, root)
			return BuildOptions{CWECatalog: cwe, Feeds: []string{f}, Out: f}
		}, "is the input"},
		{"the CWE catalog, through a relative path", func(t *testing.T, root string) BuildOptions {
			_, f := smallInputs(t, root)
			return BuildOptions{CWECatalog: filepath.Join(root, "cwe.xml"), Feeds: []string{f}, Out: "./sub/../cwe.xml"}
		}, "is the input"},
		{"a link to the directory of the feeds", func(t *testing.T, root string) BuildOptions {
			cwe, f := smallInputs(t, filepath.Join(root, "feeds"))
			mustLink(t, "feeds", filepath.Join(root, "out"))
			return BuildOptions{CWECatalog: cwe, Feeds: []string{f}, Out: "out"}
		}, "holds the input"},
		{"a feed given through a link, -o its directory", func(t *testing.T, root string) BuildOptions {
			smallInputs(t, filepath.Join(root, "in"))
			cwe, _ := smallInputs(t, filepath.Join(root, "other"))
			mustLink(t, filepath.Join(root, "in"), filepath.Join(root, "alias"))
			return BuildOptions{CWECatalog: cwe, Feeds: []string{"alias/feed.json"}, Out: "in"}
		}, "holds the input alias/feed.json"},
		{"the -previous snapshot", func(t *testing.T, root string) BuildOptions {
			smallSnapshot(t, filepath.Join(root, "in"), filepath.Join(root, "current"))
			cwe, f := smallInputs(t, filepath.Join(root, "in2"))
			return BuildOptions{CWECatalog: cwe, Feeds: []string{f}, Out: "current", Previous: "current"}
		}, "is the -previous snapshot the build reads"},
		{"the -previous snapshot, written another way", func(t *testing.T, root string) BuildOptions {
			smallSnapshot(t, filepath.Join(root, "in"), filepath.Join(root, "current"))
			cwe, f := smallInputs(t, filepath.Join(root, "in2"))
			return BuildOptions{CWECatalog: cwe, Feeds: []string{f}, Out: "current/", Previous: filepath.Join(root, "current")}
		}, "is the -previous snapshot the build reads"},
		{"the directory holding -previous", func(t *testing.T, root string) BuildOptions {
			smallSnapshot(t, filepath.Join(root, "in"), filepath.Join(root, "snaps", "current"))
			cwe, f := smallInputs(t, filepath.Join(root, "in2"))
			return BuildOptions{CWECatalog: cwe, Feeds: []string{f}, Out: "snaps", Previous: "snaps/current"}
		}, "holds the -previous snapshot snaps/current"},
		{"inside -previous", func(t *testing.T, root string) BuildOptions {
			smallSnapshot(t, filepath.Join(root, "in"), filepath.Join(root, "current"))
			cwe, f := smallInputs(t, filepath.Join(root, "in2"))
			return BuildOptions{CWECatalog: cwe, Feeds: []string{f}, Out: "current/next", Previous: "current"}
		}, "is inside the -previous snapshot current"},
		{"a regular file", func(t *testing.T, root string) BuildOptions {
			cwe, f := smallInputs(t, filepath.Join(root, "in"))
			mustWrite(t, filepath.Join(root, "report.pdf"), "not a snapshot")
			return BuildOptions{CWECatalog: cwe, Feeds: []string{f}, Out: "report.pdf"}
		}, "is a file, not a snapshot directory"},
		{"an empty regular file", func(t *testing.T, root string) BuildOptions {
			cwe, f := smallInputs(t, filepath.Join(root, "in"))
			mustWrite(t, filepath.Join(root, "empty"), "")
			return BuildOptions{CWECatalog: cwe, Feeds: []string{f}, Out: "empty"}
		}, "is a file, not a snapshot directory"},
		{"a link to a file", func(t *testing.T, root string) BuildOptions {
			cwe, f := smallInputs(t, filepath.Join(root, "in"))
			mustWrite(t, filepath.Join(root, "notes.txt"), "mine")
			mustLink(t, "notes.txt", filepath.Join(root, "out"))
			return BuildOptions{CWECatalog: cwe, Feeds: []string{f}, Out: "out"}
		}, "is a symbolic link"},
		{"a link to a snapshot", func(t *testing.T, root string) BuildOptions {
			smallSnapshot(t, filepath.Join(root, "in"), filepath.Join(root, "snap-1"))
			mustLink(t, "snap-1", filepath.Join(root, "current"))
			cwe, f := smallInputs(t, filepath.Join(root, "in2"))
			return BuildOptions{CWECatalog: cwe, Feeds: []string{f}, Out: "current"}
		}, "is a symbolic link"},
		{"a dangling link", func(t *testing.T, root string) BuildOptions {
			cwe, f := smallInputs(t, filepath.Join(root, "in"))
			mustLink(t, "nowhere", filepath.Join(root, "out"))
			return BuildOptions{CWECatalog: cwe, Feeds: []string{f}, Out: "out"}
		}, "is a symbolic link"},
		{"the current directory", func(t *testing.T, root string) BuildOptions {
			cwe, f := smallInputs(t, elsewhere(t))
			return BuildOptions{CWECatalog: cwe, Feeds: []string{f}, Out: "."}
		}, "is the current directory or holds it"},
		{"the current directory, by its absolute path", func(t *testing.T, root string) BuildOptions {
			cwe, f := smallInputs(t, elsewhere(t))
			return BuildOptions{CWECatalog: cwe, Feeds: []string{f}, Out: root}
		}, "is the current directory or holds it"},
		{"a directory holding the current one", func(t *testing.T, root string) BuildOptions {
			cwe, f := smallInputs(t, elsewhere(t))
			return BuildOptions{CWECatalog: cwe, Feeds: []string{f}, Out: ".."}
		}, "is the current directory or holds it"},
		{"the root directory", func(t *testing.T, root string) BuildOptions {
			cwe, f := smallInputs(t, filepath.Join(root, "in"))
			return BuildOptions{CWECatalog: cwe, Feeds: []string{f}, Out: "/"}
		}, ""},
	} {
		for _, force := range []bool{false, true} {
			name := tc.name
			if force {
				name += ", force"
			}
			t.Run(name, func(t *testing.T) {
				refuseCase(t, tc.setup, force, tc.want)
			})
		}
	}
}

// TestBuildRefusesNonSnapshot: a non-empty directory that is not a vulnd
// snapshot (or a snapshot holding other files) is refused, and replaced
// only with force.
func TestBuildRefusesNonSnapshot(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, root string) BuildOptions
		want  string
	}{
		{"a directory of other files", func(t *testing.T, root string) BuildOptions {
			cwe, f := smallInputs(t, filepath.Join(root, "in"))
			mustWrite(t, filepath.Join(root, "out", "thesis.tex"), "years of work")
			return BuildOptions{CWECatalog: cwe, Feeds: []string{f}, Out: "out"}
		}, "is a directory that is neither empty nor a vulnd snapshot"},
		{"a directory holding only an empty directory", func(t *testing.T, root string) BuildOptions {
			cwe, f := smallInputs(t, filepath.Join(root, "in"))
			if err := os.MkdirAll(filepath.Join(root, "out", "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
			return BuildOptions{CWECatalog: cwe, Feeds: []string{f}, Out: "out"}
		}, "is a directory that is neither empty nor a vulnd snapshot"},
		{"a manifest of another format", func(t *testing.T, root string) BuildOptions {
			cwe, f := smallInputs(t, filepath.Join(root, "in"))
			mustWrite(t, filepath.Join(root, "out", "manifest.json"), `{"format":"other-tool","version":3,"files":{}}`)
			return BuildOptions{CWECatalog: cwe, Feeds: []string{f}, Out: "out"}
		}, "is a directory that is neither empty nor a vulnd snapshot"},
		{"a manifest that is not JSON", func(t *testing.T, root string) BuildOptions {
			cwe, f := smallInputs(t, filepath.Join(root, "in"))
			mustWrite(t, filepath.Join(root, "out", "manifest.json"), `format: vulnd-snapshot`)
			return BuildOptions{CWECatalog: cwe, Feeds: []string{f}, Out: "out"}
		}, "is a directory that is neither empty nor a vulnd snapshot"},
		{"a snapshot plus a file of the operator", func(t *testing.T, root string) BuildOptions {
			smallSnapshot(t, filepath.Join(root, "in"), filepath.Join(root, "out"))
			mustWrite(t, filepath.Join(root, "out", "NOTES"), "why this snapshot")
			cwe, f := smallInputs(t, filepath.Join(root, "in2"))
			return BuildOptions{CWECatalog: cwe, Feeds: []string{f}, Out: "out"}
		}, `is a vulnd snapshot but also holds "NOTES", which no build made`},
		{"a manifest listing a file outside the directory", func(t *testing.T, root string) BuildOptions {
			cwe, f := smallInputs(t, filepath.Join(root, "in"))
			mustWrite(t, filepath.Join(root, "out", "manifest.json"), `{"format":"vulnd-snapshot","version":3,"files":{"cves":{"name":"../x"}}}`)
			mustWrite(t, filepath.Join(root, "out", "x"), "mine")
			return BuildOptions{CWECatalog: cwe, Feeds: []string{f}, Out: "out"}
		}, `is a vulnd snapshot but also holds "x", which no build made`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			refuseCase(t, tc.setup, false, tc.want)
		})
		t.Run(tc.name+", force", func(t *testing.T) {
			root := t.TempDir()
			t.Chdir(root)
			opt := tc.setup(t, root)
			opt.Force, opt.Time = true, buildTime
			if _, err := Build(opt); err != nil {
				t.Fatalf("Build with force: %v", err)
			}
			if _, err := Validate(opt.Out); err != nil {
				t.Fatal(err)
			}
			assertSnapshotOnly(t, opt.Out)
		})
	}
}

// refuseCase runs setup in a new working directory, builds (with force
// if asked) and checks the build is refused as TestBuildRefusesToReplace says.
func refuseCase(t *testing.T, setup func(*testing.T, string) BuildOptions, force bool, want string) {
	t.Helper()
	root := t.TempDir()
	t.Chdir(root)
	opt := setup(t, root)
	opt.Force, opt.Time = force, buildTime
	var stages []string
	opt.Stage = func(name string, _ time.Duration, _ string) { stages = append(stages, name) }
	parent := filepath.Dir(root)
	before, beside := loadertest.Tree(t, root), loadertest.Tree(t, parent)
	_, err := Build(opt)
	if err == nil {
		t.Fatalf("Build -o %s succeeded", opt.Out)
	}
	msg := err.Error()
	if !strings.Contains(msg, "-o "+opt.Out+" "+want) || strings.Contains(msg, "\n") {
		t.Errorf("error %q, want one line with %q", msg, "-o "+opt.Out+" "+want)
	}
	if len(stages) > 0 {
		t.Errorf("refused after %q; want before reading anything", stages)
	}
	if diff := cmp.Diff(before, loadertest.Tree(t, root)); diff != "" {
		t.Errorf("files changed (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(beside, loadertest.Tree(t, parent)); diff != "" {
		t.Errorf("files beside the working directory changed (-before +after):\n%s", diff)
	}
}

// assertSnapshotOnly checks dir holds the files of a snapshot and nothing
// else.
func assertSnapshotOnly(t *testing.T, dir string) {
	t.Helper()
	got := dirNames(t, dir)
	want := []string{fileCVEs, fileCWEs, fileIDs, ManifestName, fileMetrics, fileReports, fileDetails, fileStrings, fileNVD, fileNVDFacts, fileNVDStrings, fileNVDFrom, fileNVDLayout, fileCVEsLayout, fileCVE5From}
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s holds (-want +got):\n%s", dir, diff)
	}
}

// TestBuildReplaces: what a build may replace, it does, leaving a valid
// snapshot and nothing else at -o and nothing beside it.
func TestBuildReplaces(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, root string) BuildOptions
	}{
		{"nothing there", func(t *testing.T, root string) BuildOptions {
			cwe, f := smallInputs(t, filepath.Join(root, "in"))
			return BuildOptions{CWECatalog: cwe, Feeds: []string{f}, Out: "out"}
		}},
		{"an empty directory", func(t *testing.T, root string) BuildOptions {
			cwe, f := smallInputs(t, filepath.Join(root, "in"))
			if err := os.Mkdir(filepath.Join(root, "out"), 0o700); err != nil {
				t.Fatal(err)
			}
			return BuildOptions{CWECatalog: cwe, Feeds: []string{f}, Out: "out"}
		}},
		{"a snapshot", func(t *testing.T, root string) BuildOptions {
			smallSnapshot(t, filepath.Join(root, "in"), filepath.Join(root, "out"))
			cwe, f := smallInputs(t, filepath.Join(root, "in2"))
			return BuildOptions{CWECatalog: cwe, Feeds: []string{f}, Out: "out"}
		}},
		{"a snapshot of format version 1", func(t *testing.T, root string) BuildOptions {
			cwe, f := smallInputs(t, filepath.Join(root, "in"))
			mustWrite(t, filepath.Join(root, "out", "manifest.json"), `{"format":"vulnd-snapshot","version":1,"built_at":"2026-01-01 00:00:00Z",
"files":{"cves":{"name":"cves.jsonl.zst","size":1,"sha256":"x"},"cwes":{"name":"cwes.jsonl.zst","size":1,"sha256":"x"},"reports":{"name":"reports.jsonl.zst","size":1,"sha256":"x"}}}`)
			for _, n := range []string{"cves.jsonl.zst", "cwes.jsonl.zst", "reports.jsonl.zst"} {
				mustWrite(t, filepath.Join(root, "out", n), "x")
			}
			return BuildOptions{CWECatalog: cwe, Feeds: []string{f}, Out: "out"}
		}},
		{"the next snapshot beside -previous (the documented refresh)", func(t *testing.T, root string) BuildOptions {
			smallSnapshot(t, filepath.Join(root, "in"), filepath.Join(root, "current"))
			smallSnapshot(t, filepath.Join(root, "in"), filepath.Join(root, "current.next"))
			cwe, f := smallInputs(t, filepath.Join(root, "in2"))
			return BuildOptions{CWECatalog: cwe, Feeds: []string{f}, Out: "current.next", Previous: "current"}
		}},
		{"beside the feeds", func(t *testing.T, root string) BuildOptions {
			cwe, f := smallInputs(t, filepath.Join(root, "feeds"))
			return BuildOptions{CWECatalog: cwe, Feeds: []string{f}, Out: "feeds/snap"}
		}},
		{"through a linked parent directory", func(t *testing.T, root string) BuildOptions {
			cwe, f := smallInputs(t, filepath.Join(root, "in"))
			if err := os.Mkdir(filepath.Join(root, "real"), 0o755); err != nil {
				t.Fatal(err)
			}
			mustLink(t, "real", filepath.Join(root, "link"))
			return BuildOptions{CWECatalog: cwe, Feeds: []string{f}, Out: "link/snap"}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			t.Chdir(root)
			opt := tc.setup(t, root)
			opt.Time = buildTime.Add(time.Hour)
			if _, err := Build(opt); err != nil {
				t.Fatalf("Build: %v", err)
			}
			m, err := Validate(opt.Out)
			if err != nil {
				t.Fatal(err)
			}
			if m.BuiltAt != formatTime(opt.Time) {
				t.Errorf("built_at %s, want the new build's %s", m.BuiltAt, formatTime(opt.Time))
			}
			assertSnapshotOnly(t, opt.Out)
			var temps []string
			filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
				if strings.Contains(filepath.Base(p), ".tmp-") {
					temps = append(temps, p)
				}
				return nil
			})
			if len(temps) > 0 {
				t.Errorf("temporary directories left: %q", temps)
			}
		})
	}
}

// TestReplaceDirChecksAgain: what is at the target is checked again just
// before it is moved aside, in case it changed while the build ran.
func TestReplaceDirChecksAgain(t *testing.T) {
	root := t.TempDir()
	t.Chdir(root)
	tmp := filepath.Join(root, ".out.tmp-1")
	mustWrite(t, filepath.Join(tmp, ManifestName), "{}")
	mustWrite(t, filepath.Join(root, "out", "thesis.tex"), "years of work")
	mustWrite(t, filepath.Join(root, "file"), "mine")
	before := loadertest.Tree(t, root)
	for _, tc := range []struct {
		dir   string
		force bool
		want  string
	}{
		{"out", false, "loader: -o out is a directory that is neither empty nor a vulnd snapshot"},
		{"file", true, "loader: -o file is a file, not a snapshot directory"},
		{".", true, "loader: -o . is the current directory or holds it"},
	} {
		err := replaceDir(tmp, tc.dir, tc.force)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("replaceDir(%s, force %v) = %v, want %q", tc.dir, tc.force, err, tc.want)
		}
	}
	if diff := cmp.Diff(before, loadertest.Tree(t, root)); diff != "" {
		t.Errorf("files changed (-before +after):\n%s", diff)
	}
}

// FuzzCheckReplace: whatever manifest.json a directory holds, checkReplace
// neither panics nor accepts a directory holding a file its manifest does
// not list, and accepts nothing without a manifest of format
// vulnd-snapshot.
func FuzzCheckReplace(f *testing.F) {
	f.Add([]byte(`{"format":"vulnd-snapshot","version":3,"files":{"cves":{"name":"cves.jsonl.zst"}}}`), "cves.jsonl.zst")
	f.Add([]byte(`{"format":"vulnd-snapshot","files":{"x":{"name":"../x"}}}`), "x")
	f.Add([]byte(`{"format":"other"}`), "a")
	f.Add([]byte(`not json`), "manifest.json")
	f.Fuzz(func(t *testing.T, manifest []byte, name string) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, ManifestName), manifest, 0o644); err != nil {
			t.Fatal(err)
		}
		if name != "" && name == filepath.Base(name) && name != "." && name != ".." && !strings.ContainsRune(name, 0) {
			if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
				t.Skip()
			}
		}
		err := checkReplace(dir, false)
		made, ok := snapshotFiles(dir)
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if err == nil && (!ok || !made[e.Name()]) {
				t.Fatalf("accepted %s holding %q (manifest %q)", dir, e.Name(), manifest)
			}
		}
		if err != nil && checkReplace(dir, true) != nil {
			t.Fatalf("force refused a directory: %v", err)
		}
	})
}
