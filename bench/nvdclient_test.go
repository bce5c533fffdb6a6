package bench

// vuls' NVD fetcher (github.com/MaineK00n/vuls-data-update, package
// pkg/fetch/nvd/api/cve), unchanged, against vulnd serving the real
// sample: every CVE it writes is what the same client code writes from
// the sample's own record.

import (
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/MaineK00n/vuls-data-update/pkg/fetch/nvd/api/cve"
	fetchutil "github.com/MaineK00n/vuls-data-update/pkg/fetch/util"

	"github.com/vulnd/vulnd/httpapi"
	"github.com/vulnd/vulnd/index"
	"github.com/vulnd/vulnd/loader"
	"github.com/vulnd/vulnd/loader/loadertest"
)

// sharedPath is a file of ../shared/data beside the repository; the
// test fails without it.
func sharedPath(t *testing.T, rel string) string {
	t.Helper()
	p := filepath.Join("..", "..", "shared", "data", rel)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("real test data missing: %v (the tests read the samples from ../shared/data beside the repository)", err)
	}
	return p
}

// sampleRecords are the "cve" objects of NVD's sample feed, as the feed
// holds them.
func sampleRecords(t *testing.T) []json.RawMessage {
	t.Helper()
	return loadertest.FeedRecords(t, sharedPath(t, "nvd/nvdcve-2.0-sample.json.gz"))
}

// readTree reads every file under dir, by path relative to it.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[rel] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// quietly runs f without the client's log lines and progress bars on
// the test's output.
func quietly(f func() error) error {
	stderr, out := os.Stderr, log.Writer()
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	os.Stderr = null
	log.SetOutput(io.Discard)
	defer func() { os.Stderr = stderr; log.SetOutput(out) }()
	return f()
}

func TestVulsFetchesTheSample(t *testing.T) {
	dir := t.TempDir()
	snap := filepath.Join(dir, "snap")
	if _, err := loader.Build(loader.BuildOptions{
		CWECatalog: sharedPath(t, "cwe/cwec_v4.15.xml.zip"),
		Feeds: []string{sharedPath(t, "nvd/nvdcve-2.0-sample.json.gz"),
			sharedPath(t, "cve5/cvelistV5-sample.json.gz"), sharedPath(t, "cve5/vulnrichment-sample.json.gz")},
		Out: snap, Time: time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC),
	}); err != nil {
		t.Fatal(err)
	}
	ix, _, err := loader.Load(snap)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.New(func() *index.Index { return ix }, httpapi.Options{}))
	defer srv.Close()

	// What the client writes from each sample record: the record decoded
	// into its type, written by its writer, at the path it uses.
	recs := sampleRecords(t)
	type expected struct {
		modified time.Time
		path     string
		body     string
	}
	var all []expected
	wantDir := filepath.Join(dir, "want")
	for _, raw := range recs {
		var c cve.CVE
		if err := json.Unmarshal(raw, &c); err != nil {
			t.Fatal(err)
		}
		rel := filepath.Join(c.ID[4:8], c.ID+".json")
		if err := fetchutil.Write(filepath.Join(wantDir, rel), c); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(wantDir, rel))
		if err != nil {
			t.Fatal(err)
		}
		m, err := time.Parse("2006-01-02T15:04:05.000", c.LastModified)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, expected{m, rel, string(b)})
	}
	if len(all) != 186 {
		t.Fatalf("%d sample records, want 186", len(all))
	}

	// Windows of lastModified (the client allows at most 120 days): the
	// 120 days up to the newest record, and the 120 days from the
	// median one.
	mods := make([]time.Time, len(all))
	for i, e := range all {
		mods[i] = e.modified
	}
	slices.SortFunc(mods, func(a, b time.Time) int { return a.Compare(b) })
	newest, median := mods[len(mods)-1], mods[len(mods)/2]
	windows := []struct{ from, to time.Time }{
		{newest.Add(-120 * 24 * time.Hour), newest},
		{median, median.Add(120 * 24 * time.Hour)},
	}
	for _, tc := range []struct {
		name     string
		perPage  int
		from, to *time.Time
	}{
		{"everything, NVD's page of 2000", 0, nil, nil},
		{"everything, pages of 7", 7, nil, nil},
		{"the newest 120 days, pages of 3", 3, &windows[0].from, &windows[0].to},
		{"120 days from the median record, pages of 5", 5, &windows[1].from, &windows[1].to},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "fetched")
			// This version's Fetch sets no default concurrency (vuls'
			// command line gives one): one request at a time, no wait.
			opts := []cve.Option{cve.WithBaseURL(srv.URL + httpapi.NVDPath), cve.WithDir(out), cve.WithRetry(0),
				cve.WithConcurrency(1), cve.WithWait(0)}
			if tc.perPage > 0 {
				opts = append(opts, cve.WithResultsPerPage(tc.perPage))
			}
			if tc.from != nil {
				opts = append(opts, cve.WithLastModStartDate(tc.from), cve.WithLastModEndDate(tc.to))
			}
			if err := quietly(func() error { return cve.Fetch(opts...) }); err != nil {
				t.Fatalf("the client: %v", err)
			}
			got := readTree(t, out)
			want := map[string]string{}
			for _, e := range all {
				if tc.from == nil || !e.modified.Before(*tc.from) && !e.modified.After(*tc.to) {
					want[e.path] = e.body
				}
			}
			if len(want) == 0 {
				t.Fatal("the window holds no record of the sample: the test checks nothing")
			}
			if len(got) != len(want) {
				t.Errorf("the client wrote %d CVEs, want %d", len(got), len(want))
			}
			for p, w := range want {
				if g, ok := got[p]; !ok {
					t.Errorf("%s: not written", p)
				} else if !bytes.Equal([]byte(g), []byte(w)) {
					t.Errorf("%s: written\n%.400s\nwant what the client writes from the sample's record\n%.400s", p, g, w)
				}
			}
			t.Logf("%d CVEs fetched, each equal to the sample's", len(got))
		})
	}
}
