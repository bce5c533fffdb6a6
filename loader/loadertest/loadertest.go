// Package loadertest holds what tests of the loader and of the commands
// that call it share: a description of a directory tree, to show that a
// build or check left every file as it was.
package loadertest

import (
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// Tree describes every entry under root (not following links) by path
// relative to root: its kind, its permissions and its content's SHA-256 or
// its link target. Two calls compared with cmp.Diff show what changed in
// between. It fails the test on any error reading the tree, so call it
// from the test's own goroutine.
func Tree(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[rel] = "link to " + target
		case d.IsDir():
			out[rel] = "dir " + fi.Mode().Perm().String()
		default:
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			out[rel] = "file " + fi.Mode().Perm().String() + " " + hex.EncodeToString(sum[:])
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Gunzip is the content of the gzip file at path, read whole; it fails
// the test on any error.
func Gunzip(t testing.TB, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return b
}

// FeedRecords returns the "cve" objects of an NVD CVE API 2.0 feed file
// (gzip), byte for byte as the feed holds them, in the feed's order: what
// a test compares with the records vulnd serves as NVD's API.
func FeedRecords(t testing.TB, path string) []json.RawMessage {
	t.Helper()
	var feed struct {
		Vulnerabilities []struct {
			CVE json.RawMessage `json:"cve"`
		} `json:"vulnerabilities"`
	}
	if err := json.Unmarshal(Gunzip(t, path), &feed); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	out := make([]json.RawMessage, len(feed.Vulnerabilities))
	for i, v := range feed.Vulnerabilities {
		out[i] = v.CVE
	}
	return out
}
