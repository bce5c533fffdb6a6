package main

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
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
	if o, e, code := vulndRun("feeds", a, empty); code != 1 || o != "" || e != "vulnd feeds: no NVD CVE feed or CVE JSON 5 record files in "+empty+"\n" {
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
	if _, e, code := vulndRun(append([]string{"fetch", "-dir", dir, "-base-url", srv.URL, "-cwe-url", srv.URL + "/cwe.zip", "-years", "2024-2024"}, noSources...)...); code != 0 {
		t.Fatalf("fetch: exit %d: %s", code, e)
	}
	o, e, code := vulndRun("feeds", dir)
	want := []string{filepath.Join(dir, "nvdcve-2.0-2024.json.gz"), filepath.Join(dir, "nvdcve-2.0-modified.json.gz"), filepath.Join(dir, "nvdcve-2.0-recent.json.gz")}
	if code != 0 || e != "" || !cmp.Equal(want, strings.Fields(o)) {
		t.Errorf("vulnd feeds after fetch: exit %d, stdout %q, stderr:\n%s", code, o, e)
	}
	os.WriteFile(filepath.Join(dir, "notes.meta"), []byte("mine\n"), 0o644)
	if _, e, _ := vulndRun("feeds", dir); e != "vulnd feeds: skipped "+filepath.Join(dir, "notes.meta")+": not an NVD CVE feed, CVE JSON 5 record or EPSS file\n" {
		t.Errorf("with a file of the operator's, stderr:\n%s", e)
	}
}

// TestFeedsRecordsAndEPSS is the brief's item 4: vulnd feeds lists CVE
// JSON 5 record files (a zip of records, a gzipped array, a plain
// record) after the NVD feeds, by name, as inputs of vulnd build, not as
// skipped; EPSS files are recognised (not skipped, not listed), and
// -epss prints the newest by its score_date, whatever the names.
func TestFeedsRecordsAndEPSS(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	rec := func(id string) string {
		return `{"dataType":"CVE_RECORD","dataVersion":"5.1","cveMetadata":{"cveId":"` + id + `","state":"PUBLISHED"},"containers":{"cna":{}}}`
	}
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	w, _ := zw.Create("deltaCves/CVE-2026-0002.json")
	w.Write([]byte(rec("CVE-2026-0002")))
	zw.Close()
	var gb bytes.Buffer
	gw := gzip.NewWriter(&gb)
	gw.Write([]byte("[" + rec("CVE-2026-0003") + "]"))
	gw.Close()
	var eb bytes.Buffer
	ew := gzip.NewWriter(&eb)
	ew.Write([]byte("#model_version:v2026.06.15,score_date:2026-11-24T12:00:22Z\ncve,epss,percentile\nCVE-2026-0001,0.5,0.9\n"))
	ew.Close()
	for p, body := range map[string][]byte{
		filepath.Join(a, "nvdcve-2.0-2026.json.gz"):                 []byte(`{"format":"NVD_CVE","version":"2.0","vulnerabilities":[]}`),
		filepath.Join(a, "2026-11-25_delta_CVEs_at_0100Z.zip"):      zb.Bytes(),
		filepath.Join(a, "2026-11-25_all_CVEs_at_midnight.zip.zip"): zb.Bytes(),
		filepath.Join(a, "CVE-2026-0001.json"):                      []byte(rec("CVE-2026-0001")),
		filepath.Join(a, "epss_scores-2026-11-24.csv.gz"):           eb.Bytes(),
		filepath.Join(a, "notes.txt"):                               []byte("mine"),
		filepath.Join(b, "records.json.gz"):                         gb.Bytes(),
		filepath.Join(b, "epss.csv"):                                []byte("#model_version:v2026.06.15,score_date:2026-11-25T12:00:22Z\ncve,epss,percentile\n"),
		filepath.Join(b, "old-epss.csv"):                            []byte("#model_version:v2026.06.15,score_date:2026-11-20T12:00:22Z\ncve,epss,percentile\n"),
	} {
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	o, e, code := vulndRun("feeds", a, b)
	want := []string{filepath.Join(a, "nvdcve-2.0-2026.json.gz"),
		filepath.Join(a, "2026-11-25_all_CVEs_at_midnight.zip.zip"), filepath.Join(a, "2026-11-25_delta_CVEs_at_0100Z.zip"), filepath.Join(a, "CVE-2026-0001.json"),
		filepath.Join(b, "records.json.gz")}
	if diff := cmp.Diff(want, strings.Fields(o)); diff != "" || code != 0 {
		t.Errorf("vulnd feeds: exit %d (-want +got):\n%s", code, diff)
	}
	if want := "vulnd feeds: skipped " + filepath.Join(a, "notes.txt") + ": not an NVD CVE feed, CVE JSON 5 record or EPSS file\n"; e != want {
		t.Errorf("stderr %q, want %q", e, want)
	}
	// A directory of records alone is an input.
	if o, e, code := vulndRun("feeds", b); code != 0 || o != filepath.Join(b, "records.json.gz")+"\n" || e != "" {
		t.Errorf("records alone: exit %d, stdout %q, stderr %q", code, o, e)
	}
	if o, e, code := vulndRun("feeds", "-epss", a, b); code != 0 || o != filepath.Join(b, "epss.csv")+"\n" || e != "" {
		t.Errorf("feeds -epss: exit %d, stdout %q, stderr %q", code, o, e)
	}
	empty := t.TempDir()
	if o, e, code := vulndRun("feeds", "-epss", empty); code != 1 || o != "" || e != "vulnd feeds: no EPSS file in "+empty+"\n" {
		t.Errorf("feeds -epss of an empty DIR: exit %d, stdout %q, stderr %q", code, o, e)
	}
}
