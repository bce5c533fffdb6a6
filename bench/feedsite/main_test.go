package main

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vulnd/vulnd/loader"
	"github.com/vulnd/vulnd/loader/fetch"
)

func gzipOf(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestSiteFetched: the site feedsite lays out from a synthetic directory
// holding NVD feeds, the catalog, an EPSS file and CVE JSON 5 records,
// served by a plain file server (as nginx serves it in make fleet-test),
// is what vulnd fetch mirrors: the feeds, the catalog, the EPSS file and
// the baseline bundle, whose records vulnd build reads; a second fetch
// downloads nothing.
func TestSiteFetched(t *testing.T) {
	from, site, dir := t.TempDir(), t.TempDir(), t.TempDir()
	rec := func(id string) string {
		return `{"dataType":"CVE_RECORD","dataVersion":"5.1","cveMetadata":{"cveId":"` + id + `","state":"PUBLISHED","assignerShortName":"t",` +
			`"datePublished":"2026-11-20T00:00:00.000Z","dateUpdated":"2026-11-21T00:00:00.000Z"},` +
			`"containers":{"cna":{"providerMetadata":{"orgId":"x"},"descriptions":[{"lang":"en","value":"d"}],"affected":[{"vendor":"v","product":"p","versions":[{"version":"1","status":"affected"}]}],"references":[]}}}`
	}
	nvd := `{"resultsPerPage":1,"startIndex":0,"totalResults":1,"format":"NVD_CVE","version":"2.0","timestamp":"2026-11-22T00:00:00.000","vulnerabilities":[` +
		`{"cve":{"id":"CVE-2026-0001","published":"2026-11-20T00:00:00.000","lastModified":"2026-11-21T00:00:00.000","descriptions":[{"lang":"en","value":"x"}],"references":[]}}]}`
	for name, b := range map[string][]byte{
		"nvdcve-2.0-2026.json.gz":       gzipOf(t, []byte(nvd)),
		"cwec_synth.xml":                []byte(`<?xml version="1.0"?><Weakness_Catalog Name="CWE" Version="4.15"/>`),
		"epss_scores-2026-11-21.csv.gz": gzipOf(t, []byte("#model_version:v2026.06.15,score_date:2026-11-21T12:00:00Z\ncve,epss,percentile\nCVE-2026-0001,0.1,0.5\n")),
		"epss_scores-2026-11-22.csv.gz": gzipOf(t, []byte("#model_version:v2026.06.15,score_date:2026-11-22T12:00:00Z\ncve,epss,percentile\nCVE-2026-0001,0.2,0.6\n")),
		"cve5_records.json.gz":          gzipOf(t, []byte("["+rec("CVE-2026-0001")+","+rec("CVE-2026-10002")+"]")),
	} {
		if err := os.WriteFile(filepath.Join(from, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := run([]string{"-from", from, "-to", site, "-time", "2026-11-22T06:00:00Z"}); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(site)))
	defer srv.Close()
	opt := fetch.Options{Dir: dir, BaseURL: srv.URL, CWEURL: srv.URL + "/cwec_latest.xml.zip",
		EPSSURL: srv.URL + "/epss_scores-current.csv.gz", CVE5URL: srv.URL + "/cve5/", FirstYear: 2026, LastYear: 2026, Client: srv.Client(),
		Sleep: func(context.Context, time.Duration) error { return nil }}
	res, err := fetch.Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	bundle := "2026-11-22_all_CVEs_at_midnight.zip.zip"
	for _, want := range []string{"nvdcve-2.0-2026.json.gz", fetch.CWEName, "epss_scores-2026-11-22.csv.gz", bundle} {
		if !slices.Contains(res.Fetched, want) {
			t.Errorf("fetched %q, want %s among them", res.Fetched, want)
		}
	}
	recs, _, err := loader.ReadCVE5Files([]string{filepath.Join(dir, bundle)})
	if err != nil || len(recs) != 2 || recs[0].ID != "CVE-2026-0001" || recs[1].ID != "CVE-2026-10002" {
		t.Errorf("the bundle's records: %d, %v", len(recs), err)
	}
	if ok, _ := loader.IsCVE5(filepath.Join(dir, bundle)); !ok {
		t.Error("the bundle is not found by content")
	}
	res, err = fetch.Run(context.Background(), opt)
	if err != nil || len(res.Fetched) != 0 {
		t.Errorf("second fetch: fetched %q, %v; want nothing", res.Fetched, err)
	}
	if b, _ := os.ReadFile(filepath.Join(site, "cve5", "releases", "latest")); !strings.Contains(string(b), `"browser_download_url": "download/`+bundle+`"`) {
		t.Errorf("release description:\n%s", b)
	}
}

// TestSynthCVE5Zip: bench/synth -cve5 writes cves.zip, laid out as the
// CVE Program's own; the release holds it as it is (it was skipped
// before, so a fleet test with records served none).
func TestSynthCVE5Zip(t *testing.T) {
	from, site := t.TempDir(), t.TempDir()
	var inner bytes.Buffer
	zw := zip.NewWriter(&inner)
	w, err := zw.Create("cves/2026/0xxx/CVE-2026-0001.json")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte(`{"dataType":"CVE_RECORD"}`))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	nvd := `{"resultsPerPage":0,"startIndex":0,"totalResults":0,"format":"NVD_CVE","version":"2.0","timestamp":"2026-11-22T00:00:00.000","vulnerabilities":[]}`
	for name, b := range map[string][]byte{
		"nvdcve-2.0-2026.json.gz": gzipOf(t, []byte(nvd)),
		"cwec_synth.xml":          []byte(`<?xml version="1.0"?><Weakness_Catalog Name="CWE" Version="4.15"/>`),
		"cves.zip":                inner.Bytes(),
	} {
		if err := os.WriteFile(filepath.Join(from, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := run([]string{"-from", from, "-to", site, "-time", "2026-11-22T06:00:00Z"}); err != nil {
		t.Fatal(err)
	}
	zr, err := zip.OpenReader(filepath.Join(site, "cve5", "releases", "download", "2026-11-22_all_CVEs_at_midnight.zip.zip"))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	if len(zr.File) != 1 || zr.File[0].Name != "cves.zip" {
		t.Fatalf("the release holds %d files, want cves.zip alone", len(zr.File))
	}
	r, err := zr.File[0].Open()
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, inner.Bytes()) {
		t.Errorf("the release's cves.zip is %d bytes, not synth's %d", len(got), inner.Len())
	}
}

// TestCVE5DeltaFetched: with -cve5-delta-from, the release keeps the
// day before's baseline and adds the hour's delta, which holds only the
// records that changed or are new; vulnd fetch downloads the delta alone
// and vulnd build reads its records. A new day's release drops the delta.
func TestCVE5DeltaFetched(t *testing.T) {
	day, next, site, dir := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	rec := func(id, updated, version string) string {
		return `{"dataType":"CVE_RECORD","dataVersion":"5.1","cveMetadata":{"cveId":"` + id + `","state":"PUBLISHED","assignerShortName":"t",` +
			`"datePublished":"2026-11-20T00:00:00.000Z","dateUpdated":"` + updated + `"},` +
			`"containers":{"cna":{"providerMetadata":{"orgId":"x"},"descriptions":[{"lang":"en","value":"d"}],"affected":[{"vendor":"v","product":"p","versions":[{"version":"` + version + `","status":"affected"}]}],"references":[]}}}`
	}
	synthDir := func(dir string, recs map[string]string) {
		var inner bytes.Buffer
		zw := zip.NewWriter(&inner)
		for _, id := range slices.Sorted(maps.Keys(recs)) {
			w, err := zw.Create("cves/2026/0xxx/" + id + ".json")
			if err != nil {
				t.Fatal(err)
			}
			w.Write([]byte(recs[id]))
		}
		if err := zw.Close(); err != nil {
			t.Fatal(err)
		}
		nvd := `{"resultsPerPage":1,"startIndex":0,"totalResults":1,"format":"NVD_CVE","version":"2.0","timestamp":"2026-11-22T00:00:00.000","vulnerabilities":[` +
			`{"cve":{"id":"CVE-2026-0001","published":"2026-11-20T00:00:00.000","lastModified":"2026-11-21T00:00:00.000","descriptions":[{"lang":"en","value":"x"}],"references":[]}}]}`
		for name, b := range map[string][]byte{
			"nvdcve-2.0-2026.json.gz": gzipOf(t, []byte(nvd)),
			"cwec_synth.xml":          []byte(`<?xml version="1.0"?><Weakness_Catalog Name="CWE" Version="4.15"/>`),
			"cves.zip":                inner.Bytes(),
		} {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	synthDir(day, map[string]string{
		"CVE-2026-0001": rec("CVE-2026-0001", "2026-11-21T00:00:00.000Z", "1"),
		"CVE-2026-0002": rec("CVE-2026-0002", "2026-11-21T00:00:00.000Z", "1"),
	})
	synthDir(next, map[string]string{
		"CVE-2026-0001": rec("CVE-2026-0001", "2026-11-21T00:00:00.000Z", "1"),
		"CVE-2026-0002": rec("CVE-2026-0002", "2026-11-22T07:00:00.000Z", "2"),
		"CVE-2026-0003": rec("CVE-2026-0003", "2026-11-22T07:30:00.000Z", "1"),
	})
	srv := httptest.NewServer(http.FileServer(http.Dir(site)))
	defer srv.Close()
	opt := fetch.Options{Dir: dir, BaseURL: srv.URL, CWEURL: srv.URL + "/cwec_latest.xml.zip", EPSSURL: "-",
		CVE5URL: srv.URL + "/cve5/", FirstYear: 2026, LastYear: 2026, Client: srv.Client(),
		Sleep: func(context.Context, time.Duration) error { return nil }}
	delta := "2026-11-22_delta_CVEs_at_0800Z.zip"
	if err := run([]string{"-from", day, "-to", site, "-time", "2026-11-22T06:00:00Z"}); err != nil {
		t.Fatal(err)
	}
	if _, err := fetch.Run(context.Background(), opt); err != nil {
		t.Fatal(err)
	}
	if err := run([]string{"-from", next, "-to", site, "-time", "2026-11-22T08:00:00Z", "-cve5-delta-from", day}); err != nil {
		t.Fatal(err)
	}
	// An hour later for the file server's Last-Modified (whole seconds),
	// as it is in make fleet-test.
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(site, "cve5", "releases", "latest"), later, later); err != nil {
		t.Fatal(err)
	}
	res, err := fetch.Run(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(res.Fetched, []string{delta}) {
		t.Errorf("fetched %q, want the delta %s alone (the baseline is as it was)", res.Fetched, delta)
	}
	recs, _, err := loader.ReadCVE5Files([]string{filepath.Join(dir, delta)})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, r.ID+" "+r.Updated)
	}
	if want := []string{"CVE-2026-0002 2026-11-22 07:00:00Z", "CVE-2026-0003 2026-11-22 07:30:00Z"}; !slices.Equal(got, want) {
		t.Errorf("the delta's records: %q, want %q", got, want)
	}
	zr, err := zip.OpenReader(filepath.Join(dir, delta))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range zr.File {
		if !strings.HasPrefix(f.Name, "deltaCves/") {
			t.Errorf("the delta holds %s, want deltaCves/ID.json as the CVE Program's", f.Name)
		}
	}
	zr.Close()
	if err := run([]string{"-from", next, "-to", site, "-time", "2026-11-23T06:00:00Z"}); err != nil {
		t.Fatal(err)
	}
	left, _ := filepath.Glob(filepath.Join(site, "cve5", "releases", "download", "*"))
	if want := []string{filepath.Join(site, "cve5", "releases", "download", "2026-11-23_all_CVEs_at_midnight.zip.zip")}; !slices.Equal(left, want) {
		t.Errorf("a new day's release holds %q, want %q", left, want)
	}
}
