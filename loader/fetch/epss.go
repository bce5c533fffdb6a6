package fetch

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/vulnd/vulnd/loader"
	"github.com/vulnd/vulnd/loader/internal/durable"
)

// DefaultEPSSURL is FIRST's daily EPSS file under its stable name, which
// redirects to the day's epss_scores-YYYY-MM-DD.csv.gz (the host was
// epss.cyentia.com until 2025).
const DefaultEPSSURL = "https://epss.empiricalsecurity.com/epss_scores-current.csv.gz"

// epssName is the name Run keeps an EPSS file under: FIRST's dated name,
// the date being the file's score_date (UTC).
var epssName = regexp.MustCompile(`^epss_scores-\d{4}-\d{2}-\d{2}\.csv\.gz$`)

// IsEPSSName reports whether name is one Run keeps an EPSS file under.
func IsEPSSName(name string) bool { return epssName.MatchString(name) }

// EPSSHeader reads the first line of the EPSS file at path (gzip or
// plain), "#model_version:...,score_date:...", and returns its score
// date; ok is false when the file does not start so. It reads only the
// start of the file: a cheap test of what a file is, not a check of it.
func EPSSHeader(path string) (date time.Time, ok bool) {
	fh, err := os.Open(path)
	if err != nil {
		return time.Time{}, false
	}
	defer fh.Close()
	br := bufio.NewReader(fh)
	var r io.Reader = br
	if head, _ := br.Peek(2); bytes.Equal(head, []byte{0x1f, 0x8b}) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return time.Time{}, false
		}
		defer zr.Close()
		r = zr
	}
	line, _ := bufio.NewReader(io.LimitReader(r, 4096)).ReadString('\n')
	line = strings.TrimPrefix(strings.TrimRight(line, "\r\n"), "\ufeff")
	rest, ok := strings.CutPrefix(line, "#model_version:")
	if !ok {
		return time.Time{}, false
	}
	_, d, ok := strings.Cut(rest, ",score_date:")
	if !ok {
		return time.Time{}, false
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05-0700"} {
		if t, err := time.Parse(layout, d); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

// epss brings the directory's EPSS file up to date with a conditional
// GET. A new file must be gzip and read whole as vulnd build -epss reads
// it (loader.ReadEPSS); it is kept as epss_scores-DATE.csv.gz, DATE its
// score_date, and the older ones are removed. A file older than the one
// kept is not taken.
func (f *fetcher) epss(ctx context.Context, st *state) (name string, fetched bool, err error) {
	kept := ""
	if st.EPSSFile != "" && IsEPSSName(st.EPSSFile) {
		if fi, err := os.Stat(filepath.Join(f.opt.Dir, st.EPSSFile)); err == nil && fi.Mode().IsRegular() {
			kept = st.EPSSFile
		}
	}
	hdr := http.Header{}
	if kept != "" {
		if st.EPSSETag != "" {
			hdr.Set("If-None-Match", st.EPSSETag)
		}
		if st.EPSSLastModified != "" {
			hdr.Set("If-Modified-Since", st.EPSSLastModified)
		}
	}
	start := time.Now()
	src := f.opt.EPSSURL
	copyBody := func(tmp io.Writer, body io.Reader) error {
		_, err := io.Copy(tmp, body)
		return err
	}
	tmpName, resHdr, n, err := f.downloadTemp(ctx, src, f.opt.Dir, "epss_scores.csv.gz", hdr, -1, copyBody, nil)
	if errors.Is(err, ErrNotModified) {
		f.opt.Log("unchanged " + kept)
		return kept, false, nil
	}
	if err != nil {
		return "", false, err
	}
	defer os.Remove(tmpName) // once renamed, a no-op
	e, err := checkEPSS(tmpName)
	if err != nil {
		return "", false, fmt.Errorf("%s: refused: %s (the EPSS file kept is unchanged)", src, strings.ReplaceAll(err.Error(), tmpName, "the file"))
	}
	name = "epss_scores-" + e.Date.UTC().Format("2006-01-02") + ".csv.gz"
	if kept != "" && name < kept {
		f.opt.Log(fmt.Sprintf("kept %s: %s holds the scores of %s, older", kept, src, e.Date.UTC().Format("2006-01-02")))
		return kept, false, nil
	}
	if err := os.Rename(tmpName, filepath.Join(f.opt.Dir, name)); err != nil {
		return "", false, err
	}
	if err := durable.SyncDir(f.opt.Dir); err != nil {
		return "", false, err
	}
	// The older files only once the new one is in place.
	if es, err := os.ReadDir(f.opt.Dir); err == nil {
		for _, de := range es {
			if IsEPSSName(de.Name()) && de.Name() != name && de.Type().IsRegular() {
				if err := os.Remove(filepath.Join(f.opt.Dir, de.Name())); err == nil {
					f.opt.Log("removed " + de.Name() + ": superseded")
				}
			}
		}
	}
	st.EPSSFile, st.EPSSETag, st.EPSSLastModified = name, resHdr.Get("ETag"), resHdr.Get("Last-Modified")
	f.opt.Log(fmt.Sprintf("fetched %s: %s, %d scores of %s in %s", name, ByteSize(n), e.Len(), e.Date.UTC().Format("2006-01-02"), took(time.Since(start))))
	return name, true, f.writeState(*st)
}

// checkEPSS checks a downloaded EPSS file: gzip (FIRST's form), starting
// with its #model_version line, and every row valid as vulnd build reads
// it.
func checkEPSS(path string) (*loader.EPSS, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	var head [2]byte
	_, err = io.ReadFull(fh, head[:])
	fh.Close()
	if err != nil || head != [2]byte{0x1f, 0x8b} {
		return nil, errors.New("not gzip")
	}
	if _, ok := EPSSHeader(path); !ok {
		return nil, errors.New("its first line is not #model_version:...,score_date:...")
	}
	return loader.ReadEPSS(path)
}
