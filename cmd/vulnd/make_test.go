package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/vulnd/vulnd/loader"
)

// TestMakeSample: make sample builds the real sample into a directory of
// its own each run (two users, or two runs, never share one) and says
// where; SAMPLE_DIR names the directory instead.
func TestMakeSample(t *testing.T) {
	if testing.Short() {
		t.Skip("runs make and builds the binary")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	sharedData(t, "nvd/nvdcve-2.0-sample.json.gz")
	tmp := t.TempDir()
	shared, _ := filepath.Abs(filepath.Join("..", "..", "..", "shared", "data"))
	sample := func(args ...string) string {
		t.Helper()
		args = append([]string{"--no-print-directory", "-C", filepath.Join("..", ".."), "sample",
			"BIN=" + filepath.Join(tmp, "vulnd"), "SHARED=" + shared}, args...)
		out, err := exec.Command("make", args...).CombinedOutput()
		if err != nil {
			t.Fatalf("make sample: %v\n%s", err, out)
		}
		return string(out)
	}
	where := regexp.MustCompile(`(?m)^the sample snapshot is in (\S+)`)
	var dirs []string
	for range 2 {
		out := sample()
		m := where.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("make sample does not say where the snapshot is:\n%s", out)
		}
		t.Cleanup(func() { os.RemoveAll(m[1]) })
		if _, err := loader.Validate(m[1]); err != nil {
			t.Errorf("%s: %v", m[1], err)
		}
		dirs = append(dirs, m[1])
	}
	if dirs[0] == dirs[1] {
		t.Errorf("two runs of make sample wrote the same directory %s", dirs[0])
	}
	dir := filepath.Join(tmp, "mine")
	if out := sample("SAMPLE_DIR=" + dir); !regexp.MustCompile(`(?m)^the sample snapshot is in ` + regexp.QuoteMeta(dir) + `\b`).MatchString(out) {
		t.Errorf("make sample SAMPLE_DIR=%s:\n%s", dir, out)
	}
	if _, err := loader.Validate(dir); err != nil {
		t.Errorf("SAMPLE_DIR: %v", err)
	}
}
