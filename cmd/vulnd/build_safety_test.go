package main

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vulnd/vulnd/loader/loadertest"
)

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatalf("real test data missing: %v", err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestBinaryBuildNeverDeletes is issue 15 item 1 with the real binary: each
// command line that used to delete or clobber files exits non-zero, prints
// one line naming -o and the problem, and leaves every file as it was.
func TestBinaryBuildNeverDeletes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "vulnd")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	data, err := filepath.Abs(filepath.Join("..", "..", "..", "shared", "data"))
	if err != nil {
		t.Fatal(err)
	}
	// work is the operator's directory: the feeds, a note of theirs, a
	// file, a directory of their own and a snapshot built from the feeds.
	work := t.TempDir()
	copyFile(t, filepath.Join(data, "cwe", "cwec_v4.15.xml.zip"), filepath.Join(work, "feeds", "cwec_v4.15.xml.zip"))
	copyFile(t, filepath.Join(data, "nvd", "nvdcve-2.0-sample.json.gz"), filepath.Join(work, "feeds", "nvdcve-2.0-sample.json.gz"))
	copyFile(t, filepath.Join(data, "nvd", "changes", "after.json.gz"), filepath.Join(work, "feeds", "after.json.gz"))
	if err := os.WriteFile(filepath.Join(work, "feeds", "README"), []byte("where these came from\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "notes.txt"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join(work, "notes.txt"), filepath.Join(work, "thesis", "chapter1.tex"))
	vulnd := func(args ...string) (stdout, stderr string, code int) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = work
		var o, e strings.Builder
		cmd.Stdout, cmd.Stderr = &o, &e
		err := cmd.Run()
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			code = ee.ExitCode()
		case err != nil:
			t.Fatal(err)
		}
		return o.String(), e.String(), code
	}
	if _, stderr, code := vulnd("build", "-cwe", "feeds/cwec_v4.15.xml.zip", "-o", "current", "-time", "2026-11-22T06:00:00Z", "feeds/nvdcve-2.0-sample.json.gz"); code != 0 {
		t.Fatalf("first build: exit %d\n%s", code, stderr)
	}

	build := []string{"build", "-cwe", "feeds/cwec_v4.15.xml.zip"}
	feeds := []string{"feeds/nvdcve-2.0-sample.json.gz", "feeds/after.json.gz"}
	for _, tc := range []struct {
		name string
		args []string
		want string // in the one line on stderr
	}{
		{"-o the directory of the feeds (the issue's command line)", []string{"-o", "feeds"}, "-o feeds holds the input feeds/cwec_v4.15.xml.zip"},
		{"-o the directory of the feeds, -force", []string{"-force", "-o", "feeds"}, "-o feeds holds the input"},
		{"-o a feed", []string{"-o", "feeds/after.json.gz"}, "-o feeds/after.json.gz is the input"},
		{"-o a file", []string{"-o", "notes.txt"}, "-o notes.txt is a file"},
		{"-o a file, -force", []string{"-force", "-o", "notes.txt"}, "-o notes.txt is a file"},
		{"-o .", []string{"-o", "."}, "-o . is the current directory"},
		{"-o ..", []string{"-o", ".."}, "-o .. is the current directory or holds it"},
		{"-o a directory of other files", []string{"-o", "thesis"}, "-o thesis is a directory that is neither empty nor a vulnd snapshot"},
		{"-o equal to -previous", []string{"-previous", "current", "-o", "current"}, "-o current is the -previous snapshot"},
		{"-o equal to -previous, -force", []string{"-force", "-previous", "current", "-o", "current/"}, "-o current/ is the -previous snapshot"},
		{"-o inside -previous", []string{"-previous", "current", "-o", "current/next"}, "-o current/next is inside the -previous snapshot"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := loadertest.Tree(t, work)
			args := append(append(append([]string{}, build...), tc.args...), feeds...)
			stdout, stderr, code := vulnd(args...)
			if code == 0 {
				t.Errorf("vulnd %q exited 0", args)
			}
			lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
			if len(lines) != 1 || !strings.Contains(lines[0], tc.want) {
				t.Errorf("stderr %q, want one line with %q", stderr, tc.want)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
			if diff := cmp.Diff(before, loadertest.Tree(t, work)); diff != "" {
				t.Errorf("files changed (-before +after):\n%s", diff)
			}
		})
	}

	// -force replaces a directory that is not a snapshot, and the
	// documented refresh (-o current.next -previous current) works.
	for _, args := range [][]string{
		{"-force", "-o", "thesis"},
		{"-previous", "current", "-o", "current.next", "-time", "2026-11-23T06:00:00Z"},
	} {
		args = append(append(append([]string{}, build...), args...), feeds...)
		if _, stderr, code := vulnd(args...); code != 0 {
			t.Errorf("vulnd %q: exit %d\n%s", args, code, stderr)
		}
	}
	for _, dir := range []string{"thesis", "current.next"} {
		if stdout, stderr, code := vulnd("validate", dir); code != 0 {
			t.Errorf("validate %s: exit %d\n%s%s", dir, code, stdout, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(work, "thesis", "chapter1.tex")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("-force kept thesis/chapter1.tex (%v)", err)
	}
}
