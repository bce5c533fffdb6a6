package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFeedsAcrossDirs is issue 24 item 7: vulnd feeds A B lists every
// directory's yearly feeds, then the modified feeds of all, then the
// recent ones, so an update feed wins over a yearly feed of any
// directory.
func TestFeedsAcrossDirs(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	body := `{"format":"NVD_CVE","version":"2.0","vulnerabilities":[]}`
	for _, p := range []string{
		filepath.Join(a, "nvdcve-2.0-2023.json"), filepath.Join(a, "nvdcve-2.0-modified.json"), filepath.Join(a, "nvdcve-2.0-recent.json"),
		filepath.Join(b, "nvdcve-2.0-2024.json"), filepath.Join(b, "nvdcve-2.0-modified.json"), filepath.Join(b, "x.json"),
	} {
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	o, e, code := vulndRun("feeds", a, b)
	if code != 0 || e != "" {
		t.Fatalf("exit %d, stderr %q", code, e)
	}
	want := []string{
		filepath.Join(a, "nvdcve-2.0-2023.json"), filepath.Join(b, "nvdcve-2.0-2024.json"), filepath.Join(b, "x.json"),
		filepath.Join(a, "nvdcve-2.0-modified.json"), filepath.Join(b, "nvdcve-2.0-modified.json"),
		filepath.Join(a, "nvdcve-2.0-recent.json"),
	}
	if diff := cmp.Diff(want, strings.Fields(o)); diff != "" {
		t.Errorf("vulnd feeds %s %s (-want +got):\n%s", a, b, diff)
	}
	// A directory without feeds is an error, and nothing is listed.
	empty := t.TempDir()
	if o, e, code := vulndRun("feeds", a, empty); code != 1 || o != "" || e != "vulnd feeds: no NVD CVE feed files in "+empty+"\n" {
		t.Errorf("with an empty DIR: exit %d, stdout %q, stderr %q", code, o, e)
	}
}

// TestFeedsAfterFetch is from issue 24 item 8: after vulnd fetch (the
// feeds, their .meta, its state file and the CWE catalog), vulnd feeds
// lists the feeds and names nothing as skipped; a file of the operator's
// is still named.
func TestFeedsAfterFetch(t *testing.T) {
	srv, _, _ := feedSite(t, syntheticFeeds(t), "")
	dir := t.TempDir()
	if _, e, code := vulndRun("fetch", "-dir", dir, "-base-url", srv.URL, "-cwe-url", srv.URL+"/cwe.zip", "-years", "2024-2024"); code != 0 {
		t.Fatalf("fetch: exit %d: %s", code, e)
	}
	o, e, code := vulndRun("feeds", dir)
	want := []string{filepath.Join(dir, "nvdcve-2.0-2024.json.gz"), filepath.Join(dir, "nvdcve-2.0-modified.json.gz"), filepath.Join(dir, "nvdcve-2.0-recent.json.gz")}
	if code != 0 || e != "" || !cmp.Equal(want, strings.Fields(o)) {
		t.Errorf("vulnd feeds after fetch: exit %d, stdout %q, stderr:\n%s", code, o, e)
	}
	os.WriteFile(filepath.Join(dir, "notes.meta"), []byte("mine\n"), 0o644)
	if _, e, _ := vulndRun("feeds", dir); e != "vulnd feeds: skipped "+filepath.Join(dir, "notes.meta")+": not an NVD CVE feed\n" {
		t.Errorf("with a file of the operator's, stderr:\n%s", e)
	}
}
