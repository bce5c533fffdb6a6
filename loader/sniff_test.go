package loader

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vulnd/vulnd/loader/loadertest"
)

// realFeed returns the real NVD sample feed, decompressed.
func realFeed(t testing.TB) []byte {
	t.Helper()
	return loadertest.Gunzip(t, sharedPath(t, "nvd/nvdcve-2.0-sample.json.gz"))
}

func TestIsFeed(t *testing.T) {
	feed := realFeed(t)
	sample, err := os.ReadFile(sharedPath(t, "nvd/nvdcve-2.0-sample.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(sharedPath(t, "nvd/changes/after.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	cwe, err := os.ReadFile(sharedPath(t, "cwe/cwec_v4.15.xml.zip"))
	if err != nil {
		t.Fatal(err)
	}
	// The sample opens with its counts, "format" and "timestamp", then
	// "vulnerabilities": [{"cve": ...
	head := feed[:bytes.Index(feed, []byte(`{"cve"`))+1]
	for _, tc := range []struct {
		name string
		file string // the name on disk, which must not matter
		data []byte
		want bool
	}{
		{"real sample, gzip", "nvdcve-2.0-sample.json.gz", sample, true},
		{"real sample, plain, any name", "feed.txt", feed, true},
		{"real sample, zstd", "x.bin", inputZstd(t, feed), true},
		{"real sample, zip", "download", inputZip(t, inputZipEntry{"nvdcve-2.0-2024.json", feed}), true},
		{"real change feed", "after.json.gz", after, true},
		// Cut after the array opens: a feed, so that a build fails
		// on it loudly instead of a refresh leaving it out.
		{"cut after the array opens", "nvdcve-2.0-2024.json", head, true},
		{"no format key, empty array", "a.json", []byte(`{"resultsPerPage": 0, "vulnerabilities": []}`), true},
		{"CWE catalog", "cwec_v4.15.xml.zip", cwe, false},
		{"snapshot manifest", "manifest.json", []byte(`{"format": "vulnd-snapshot", "version": 4, "files": {}}`), false},
		{"NVD CPE feed", "nvdcpe-2.0.json", []byte(`{"format": "NVD_CPE", "version": "2.0", "products": []}`), false},
		{"other format before the array", "x.json", []byte(`{"format": "NVD_CPE", "vulnerabilities": []}`), false},
		{"vulnerabilities not an array", "x.json", []byte(`{"vulnerabilities": {}}`), false},
		{"array at top", "x.json", []byte(`[{"cve": {}}]`), false},
		{"cut before the array", "x.json", feed[:bytes.Index(feed, []byte(`"vulnerabilities"`))], false},
		{"empty", "nvdcve-2.0-2024.json.gz", nil, false},
		{"text", "README", []byte("NVD feeds go here\n"), false},
		{"gzip of text", "notes.gz", inputGzip(t, []byte("hello\n")), false},
		{"gzip magic, then junk", "nvdcve-2.0-2023.json.gz", []byte{0x1f, 0x8b, 0, 0, 0, 0}, false},
		{"zip of two feeds", "two.zip", inputZip(t, inputZipEntry{"a.json", feed}, inputZipEntry{"b.json", feed}), false},
		{"the key past 64 KiB", "x.json", []byte(`{"pad": "` + strings.Repeat("x", 64<<10) + `", "vulnerabilities": []}`), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := IsFeed(writeInputFile(t, tc.file, tc.data))
			if err != nil || got != tc.want {
				t.Errorf("IsFeed = %v, %v; want %v, nil", got, err, tc.want)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "gone.json")
		if got, err := IsFeed(p); got || err == nil || err.Error() != "loader: open "+p+": no such file or directory" {
			t.Errorf("IsFeed = %v, %v; want an error naming %s", got, err, p)
		}
	})
}

func TestFeedFiles(t *testing.T) {
	feed := realFeed(t)
	gz := inputGzip(t, feed)
	dir := t.TempDir()
	files := map[string][]byte{
		"nvdcve-2.0-recent.json.gz":   gz,
		"nvdcve-2.0-modified.json.gz": gz,
		"nvdcve-2.0-2024.json.gz":     gz,
		"nvdcve-2.0-2002.json.zip":    inputZip(t, inputZipEntry{"nvdcve-2.0-2002.json", feed}),
		"mirror.json":                 feed,
		"README":                      []byte("feeds\n"),
		"cwec_v4.15.xml":              []byte(`<?xml version="1.0"?><Weakness_Catalog/>`),
		"nvdcve-2.0-2025.json.gz.sha": []byte("3c5227c1\n"),
		// A download in progress (vulnd fetch's temporary name): a feed
		// by content, but hidden, so skipped.
		".nvdcve-2.0-2025.json.gz.tmp-42": gz,
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "old"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "old", "nvdcve-2.0-2020.json.gz"), gz, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "mirror.json"), filepath.Join(dir, "link.json")); err != nil {
		t.Fatal(err)
	}
	feeds, skipped, err := FeedFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	in := func(names ...string) []string {
		for i, n := range names {
			names[i] = filepath.Join(dir, n)
		}
		return names
	}
	want := in("link.json", "mirror.json", "nvdcve-2.0-2002.json.zip", "nvdcve-2.0-2024.json.gz",
		"nvdcve-2.0-modified.json.gz", "nvdcve-2.0-recent.json.gz")
	if diff := cmp.Diff(want, feeds); diff != "" {
		t.Errorf("feeds (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(in(".nvdcve-2.0-2025.json.gz.tmp-42", "README", "cwec_v4.15.xml", "nvdcve-2.0-2025.json.gz.sha"), skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if _, _, err := FeedFiles(filepath.Join(dir, "nope")); err == nil {
		t.Error("FeedFiles of a missing directory: no error")
	}
}

// TestFeedReadErrorNamesFileOnce: a feed whose gzip stream ends early is
// one error naming the file once, with one "loader: ", not a read error
// naming it again inside the feed's.
func TestFeedReadErrorNamesFileOnce(t *testing.T) {
	sample, err := os.ReadFile(sharedPath(t, "nvd/nvdcve-2.0-sample.json.gz"))
	if err != nil {
		t.Fatal(err)
	}
	path := writeInputFile(t, "cut.json.gz", sample[:len(sample)/2])
	_, err = ReadFeeds([]string{path})
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "loader: feed "+path+": record ") || !strings.HasSuffix(msg, ": read: unexpected EOF") ||
		strings.Count(msg, "loader: ") != 1 || strings.Count(msg, path) != 1 {
		t.Errorf("error %q: want loader: feed %s: record N: read: unexpected EOF", msg, path)
	}
}

// FuzzSniffFeed: sniffFeed never panics, and says yes to every small
// document decodeFeed takes that has no "format" key.
func FuzzSniffFeed(f *testing.F) {
	f.Add([]byte(`{"resultsPerPage": 0, "vulnerabilities": []}`))
	f.Add([]byte(`{"format": "NVD_CVE", "vulnerabilities": [{"cve": {"id": "CVE-2024-0001"}}]}`))
	f.Add([]byte(`{"format": "NVD_CPE", "products": []}`))
	f.Add([]byte(`{"a": [1, {"b": null}], "vulnerabilities": []}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		got := sniffFeed(bytes.NewReader(b))
		// Escapes could spell "format"; skip those.
		if got || len(b) > maxSniffBytes || bytes.Contains(b, []byte("format")) || bytes.ContainsRune(b, '\\') {
			return
		}
		if decodeFeed(bytes.NewReader(b), "fuzz", func(*feedRecord) error { return nil }) == nil {
			t.Errorf("decodeFeed takes %q but sniffFeed says it is no feed", b)
		}
	})
}
