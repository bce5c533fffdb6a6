package loader

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/goccy/go-json"
)

// maxSniffBytes is how much of a file's decompressed content IsFeed reads
// at most: an NVD feed's "format" and "vulnerabilities" keys come within
// its first hundred bytes.
const maxSniffBytes = 64 << 10

// IsFeed tells whether the file at path is an NVD CVE API 2.0 feed, by its
// content and whatever its name: decompressed as Build would (gzip, zstd,
// a zip of one file, or plain), it is a JSON object whose top-level keys
// reach "vulnerabilities" holding an array within the first 64 KiB, with
// no "format" other than "NVD_CVE" before it. Anything else, including a
// file that does not decompress, is not a feed. The error is for a file
// that cannot be opened or read at all.
func IsFeed(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, fmt.Errorf("loader: %w", err)
	}
	defer f.Close()
	rc, _, err := decompressInput(path, f, f)
	if err != nil {
		var ie *inputError
		if errors.As(err, &ie) {
			return false, ie
		}
		return false, nil // a compressed file that does not open
	}
	defer rc.Close()
	return sniffFeed(io.LimitReader(rc, maxSniffBytes)), nil
}

// sniffFeed reads the top level of a JSON object from r up to its
// "vulnerabilities" key; see IsFeed.
func sniffFeed(r io.Reader) bool {
	dec := json.NewDecoder(r)
	if expectDelim(dec, '{') != nil {
		return false
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		switch key, _ := tok.(string); key {
		case "vulnerabilities":
			return expectDelim(dec, '[') == nil
		case "format":
			var format string
			if dec.Decode(&format) != nil || format != "NVD_CVE" {
				return false
			}
		default:
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return false
			}
		}
	}
	return false
}

// FeedFiles returns the NVD feed files (see IsFeed) directly in dir, in the
// order a build should read them: by name, then any whose name holds
// "modified", then "recent", so that on equal lastModified the update
// feeds win. skipped are the other regular files, by name, hidden ones
// (a name starting with ".", as vulnd fetch names a download in progress)
// among them whatever they hold; subdirectories are left out.
func FeedFiles(dir string) (feeds, skipped []string, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("loader: %w", err)
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		if strings.HasPrefix(e.Name(), ".") {
			if e.Type().IsRegular() {
				skipped = append(skipped, p)
			}
			continue
		}
		st, err := os.Stat(p) // follows symlinks
		if err != nil {
			return nil, nil, fmt.Errorf("loader: %w", err)
		}
		if !st.Mode().IsRegular() {
			continue
		}
		ok, err := IsFeed(p)
		if err != nil {
			return nil, nil, err
		}
		if ok {
			feeds = append(feeds, p)
		} else {
			skipped = append(skipped, p)
		}
	}
	SortFeeds(feeds)
	return feeds, skipped, nil
}

// SortFeeds puts the feed files whose name holds "modified", then those
// whose name holds "recent", after the others, keeping the order within
// each group: given the feeds of several directories one after the other
// (each by name, as FeedFiles lists them), the update feeds of every
// directory come after all the yearly ones, so that they win on equal
// lastModified whichever directory they are in.
func SortFeeds(paths []string) {
	rank := func(p string) int {
		switch name := filepath.Base(p); {
		case strings.Contains(name, "recent"):
			return 2
		case strings.Contains(name, "modified"):
			return 1
		}
		return 0
	}
	sort.SliceStable(paths, func(i, j int) bool { return rank(paths[i]) < rank(paths[j]) })
}
