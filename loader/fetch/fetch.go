// Package fetch mirrors NVD's CVE API 2.0 feed files, MITRE's CWE
// catalog, FIRST's daily EPSS file and the CVE Program's cvelistV5
// bundles of CVE JSON 5 records into a directory, downloading only what
// changed: each feed's .meta file says when it changed and the SHA-256 of
// its content, which every download is checked against, as it streams in,
// before it replaces the old copy. The catalog and the EPSS file are
// asked for with a conditional GET; the bundles are those the newest
// cvelistV5 release names (its description asked for conditionally),
// checked against the size and SHA-256 it gives and read whole, and a
// bundle's download cut short is resumed where it stopped.
//
// Each file is replaced on its own, atomically (temporary file beside it,
// fsync, rename, fsync of the directory; a feed's meta after the feed), so
// a run that fails or is stopped leaves the file it was at as it was, and
// every file it fetched before is complete and checked.
//
// Getter, the HTTP part (retries with backoff, Retry-After, a timeout per
// try), is usable on its own.
package fetch

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"

	"github.com/vulnd/vulnd/loader/internal/durable"
)

// Defaults of Options.
const (
	DefaultBaseURL = "https://nvd.nist.gov/feeds/json/cve/2.0/"
	DefaultCWEURL  = "https://cwe.mitre.org/data/xml/cwec_latest.xml.zip"
	// DefaultMaxAge: NVD's modified feed covers the last eight days, so
	// a mirror older than that must check every yearly feed again.
	DefaultMaxAge = 8 * 24 * time.Hour
	// FirstYear is the first yearly feed: nvdcve-2.0-2002 also holds
	// the CVEs of 1999 to 2001.
	FirstYear = 2002
	// StateName is the file in the directory that remembers the last full
	// run and the catalog's validators.
	StateName = ".vulnd-fetch.json"
	// CWEName is the catalog's file name in the directory.
	CWEName = "cwec_latest.xml.zip"
)

// Keeps reports whether a file of this name is one Run keeps in its
// directory beside the feeds, not a feed nor a record file: a feed's
// .meta (nvdcve-2.0-*.meta), the state file (StateName), the CWE catalog
// (CWEName), or the unfinished download of a cvelistV5 bundle that the
// next run resumes (.NAME.part). vulnd feeds does not name them as
// skipped.
func Keeps(name string) bool {
	if n, ok := strings.CutPrefix(name, "."); ok {
		if n, ok := strings.CutSuffix(n, ".part"); ok && IsCVE5Bundle(n) {
			return true
		}
	}
	return name == StateName || name == CWEName ||
		strings.HasPrefix(name, "nvdcve-2.0-") && strings.HasSuffix(name, ".meta")
}

// Options say what to mirror where. Only Dir is required.
type Options struct {
	Dir     string
	BaseURL string // the feeds' directory URL; "": DefaultBaseURL
	CWEURL  string // "": DefaultCWEURL; "-" to skip the catalog
	// EPSSURL is FIRST's daily EPSS file ("": DefaultEPSSURL; "-" to
	// skip it).
	EPSSURL string
	// CVE5URL is where BASE/releases/latest describes the newest
	// cvelistV5 release ("": DefaultCVE5URL; "-" to skip the bundles).
	CVE5URL string
	// The yearly feeds are those from FirstYear to LastYear (0: 2002 and
	// the current year).
	FirstYear, LastYear int
	MaxAge              time.Duration // 0: DefaultMaxAge
	Attempts            int           // tries per request; 0: DefaultAttempts
	Timeout             time.Duration // per try, the body included; 0: DefaultTimeout
	Client              *http.Client  // nil: http.DefaultClient
	// Log gets one line per file: "fetched NAME: 12.3 MB in 4.1s" or
	// "unchanged NAME".
	Log func(string)
	// Progress, if set, is told of a download's progress now and then:
	// the file, the bytes so far, and the total (-1 when unknown).
	Progress func(file string, done, total int64)
	// Now and Sleep are the clock, replaceable in tests.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
}

// Result lists the files written and those found unchanged, in the order
// they were checked.
type Result struct {
	Fetched, Unchanged []string
	Full               bool // the yearly feeds were checked too
}

// state is StateName's content.
type state struct {
	LastFull time.Time `json:"last_full,omitzero"`
	// The yearly feeds that run checked: a later run asking for more
	// checks them all, as the older ones may not have been checked for
	// longer than the modified feed covers.
	FullFirstYear   int    `json:"full_first_year,omitempty"`
	FullLastYear    int    `json:"full_last_year,omitempty"`
	CWEETag         string `json:"cwe_etag,omitempty"`
	CWELastModified string `json:"cwe_last_modified,omitempty"`
	// The EPSS file kept and the validators of the answer it came in.
	EPSSFile         string `json:"epss_file,omitempty"`
	EPSSETag         string `json:"epss_etag,omitempty"`
	EPSSLastModified string `json:"epss_last_modified,omitempty"`
	// The cvelistV5 bundles kept, the validators of the release
	// description that named them, and the bundle left half downloaded.
	CVE5Assets       []assetState `json:"cve5_assets,omitempty"`
	CVE5ETag         string       `json:"cve5_etag,omitempty"`
	CVE5LastModified string       `json:"cve5_last_modified,omitempty"`
	CVE5Part         *partState   `json:"cve5_part,omitempty"`
}

// Run brings opt.Dir up to date: the yearly feeds (on the first run, when
// one is missing, when the last full run is more than opt.MaxAge old or
// checked fewer years than asked for now),
// then modified and recent, then the catalog, the EPSS file and the
// cvelistV5 bundles (each unless its URL is "-"). A failure among NVD's
// feeds stops it with an error naming the URL or file; the files fetched
// before it are in place, complete and checked, and the one that failed
// keeps its old copy and meta. A failure of one of the other sources
// does not stop the ones after it: Run ends with a *SourceError listing
// them, each source that failed keeping its old copy. Run is safe to call again after a failure: what is
// already there is not downloaded again, and it first removes the
// temporary files a killed run left. It must not run twice at once on one
// directory.
func Run(ctx context.Context, opt Options) (Result, error) {
	f, err := newFetcher(opt)
	if err != nil {
		return Result{}, err
	}
	if err := removeStale(f.opt.Dir); err != nil {
		return Result{}, err
	}
	st := f.readState()
	now := f.opt.Now()
	full := st.LastFull.IsZero() || now.Sub(st.LastFull) > f.opt.MaxAge ||
		f.opt.FirstYear < st.FullFirstYear || f.opt.LastYear > st.FullLastYear || f.missingYear()
	res := Result{Full: full}
	var names []string
	if full {
		for y := f.opt.FirstYear; y <= f.opt.LastYear; y++ {
			names = append(names, "nvdcve-2.0-"+strconv.Itoa(y))
		}
	}
	names = append(names, "nvdcve-2.0-modified", "nvdcve-2.0-recent")
	note := func(file string, fetched bool) {
		if fetched {
			res.Fetched = append(res.Fetched, file)
		} else {
			res.Unchanged = append(res.Unchanged, file)
		}
	}
	for _, n := range names {
		fetched, err := f.feed(ctx, n)
		if err != nil {
			return res, err
		}
		note(n+".json.gz", fetched)
	}
	// The other sources each keep their own old copy on a failure, so one
	// that fails (GitHub or FIRST down) does not keep the others, or a
	// build from NVD's fresh feeds, from going on.
	var failed []error
	source := func(err error) error {
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return err // stopped: no further source
		}
		failed = append(failed, err)
		return nil
	}
	if f.opt.CWEURL != "-" {
		fetched, err := f.cwe(ctx, &st)
		if err == nil {
			note(CWEName, fetched)
			err = f.writeState(st)
		}
		if err := source(err); err != nil {
			return res, err
		}
	}
	if f.opt.EPSSURL != "-" {
		name, fetched, err := f.epss(ctx, &st)
		if err == nil {
			note(name, fetched)
		}
		if err := source(err); err != nil {
			return res, err
		}
	}
	if f.opt.CVE5URL != "-" {
		if err := source(f.cve5(ctx, &st, note)); err != nil {
			return res, err
		}
	}
	if full {
		st.LastFull, st.FullFirstYear, st.FullLastYear = now, f.opt.FirstYear, f.opt.LastYear
	}
	if err := f.writeState(st); err != nil {
		return res, err
	}
	if len(failed) > 0 {
		return res, &SourceError{Errs: failed}
	}
	return res, nil
}

// SourceError is Run's error when NVD's feeds are all in place and
// current but another source (the CWE catalog, the EPSS file, cvelistV5's
// bundles) failed: each of those kept its old copy, and the sources after
// it were still fetched.
type SourceError struct {
	Errs []error
}

func (e *SourceError) Error() string {
	msgs := make([]string, len(e.Errs))
	for i, err := range e.Errs {
		msgs[i] = err.Error()
	}
	return strings.Join(msgs, "; ")
}

func (e *SourceError) Unwrap() []error { return e.Errs }

type fetcher struct {
	opt Options
	get *Getter
}

func newFetcher(opt Options) (*fetcher, error) {
	if opt.Dir == "" {
		return nil, errors.New("no directory given")
	}
	if fi, err := os.Stat(opt.Dir); err != nil {
		return nil, err
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", opt.Dir)
	}
	if opt.BaseURL == "" {
		opt.BaseURL = DefaultBaseURL
	}
	if !strings.HasSuffix(opt.BaseURL, "/") {
		opt.BaseURL += "/"
	}
	if opt.CWEURL == "" {
		opt.CWEURL = DefaultCWEURL
	}
	if opt.EPSSURL == "" {
		opt.EPSSURL = DefaultEPSSURL
	}
	if opt.CVE5URL == "" {
		opt.CVE5URL = DefaultCVE5URL
	}
	if opt.CVE5URL != "-" && !strings.HasSuffix(opt.CVE5URL, "/") {
		opt.CVE5URL += "/"
	}
	// Anything but http(s) fails every try alike: refuse it before any.
	for _, u := range []struct{ what, url string }{{"base URL", opt.BaseURL}, {"catalog URL", opt.CWEURL},
		{"EPSS URL", opt.EPSSURL}, {"CVE JSON 5 URL", opt.CVE5URL}} {
		if u.url == "-" && u.what != "base URL" {
			continue
		}
		if p, err := url.Parse(u.url); err != nil || p.Scheme != "http" && p.Scheme != "https" || p.Host == "" {
			return nil, fmt.Errorf("%s %q is not an http:// or https:// URL", u.what, u.url)
		}
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.FirstYear == 0 {
		opt.FirstYear = FirstYear
	}
	if opt.LastYear == 0 {
		opt.LastYear = opt.Now().UTC().Year()
	}
	if opt.FirstYear > opt.LastYear {
		return nil, fmt.Errorf("years %d-%d: the first is after the last", opt.FirstYear, opt.LastYear)
	}
	if opt.MaxAge == 0 {
		opt.MaxAge = DefaultMaxAge
	}
	if opt.Log == nil {
		opt.Log = func(string) {}
	}
	g := &Getter{Client: opt.Client, Attempts: opt.Attempts, Timeout: opt.Timeout, Now: opt.Now, Sleep: opt.Sleep}
	return &fetcher{opt: opt, get: g}, nil
}

// removeStale removes the temporary files a run that was killed (or a
// host that went down) left in dir: a half-downloaded feed there would
// otherwise be taken for one by vulnd feeds and break the build. Only the
// names this package writes are touched.
func removeStale(dir string) error {
	es, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range es {
		hidden, ok := strings.CutPrefix(e.Name(), ".")
		base, _, tmp := strings.Cut(hidden, ".tmp-")
		if !ok || !tmp || !e.Type().IsRegular() {
			continue
		}
		switch {
		case strings.HasPrefix(base, "nvdcve-2.0-") && (strings.HasSuffix(base, ".json.gz") || strings.HasSuffix(base, ".meta")),
			base == CWEName, base == StateName, base == "epss_scores.csv.gz":
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}

// missingYear reports whether a yearly feed is not in the directory: a
// first run, or one with a wider -years than the last.
func (f *fetcher) missingYear() bool {
	for y := f.opt.FirstYear; y <= f.opt.LastYear; y++ {
		if _, err := os.Stat(filepath.Join(f.opt.Dir, "nvdcve-2.0-"+strconv.Itoa(y)+".json.gz")); err != nil {
			return true
		}
	}
	return false
}

// feed brings name.json.gz up to date with its meta; it reports whether it
// downloaded it.
func (f *fetcher) feed(ctx context.Context, name string) (bool, error) {
	metaURL := f.opt.BaseURL + name + ".meta"
	var raw []byte
	err := f.get.Get(ctx, metaURL, nil, func(res *http.Response) error {
		var err error
		raw, err = io.ReadAll(io.LimitReader(res.Body, maxMetaBytes+1))
		return err
	})
	if err != nil {
		return false, err
	}
	meta, err := ParseMeta(raw)
	if err != nil {
		return false, fmt.Errorf("%s: %w", metaURL, err)
	}
	file := filepath.Join(f.opt.Dir, name+".json.gz")
	metaFile := filepath.Join(f.opt.Dir, name+".meta")
	if f.upToDate(file, metaFile, meta) {
		// The same content; a meta that moved only its date is kept in
		// step.
		if old, _ := os.ReadFile(metaFile); !bytes.Equal(old, raw) {
			if err := durable.WriteFile(metaFile, raw); err != nil {
				return false, err
			}
		}
		f.opt.Log("unchanged " + name + ".json.gz")
		return false, nil
	}
	start := time.Now()
	url := f.opt.BaseURL + name + ".json.gz"
	_, n, err := f.download(ctx, url, file, nil, meta.GzSize, func(tmp io.Writer, body io.Reader) error {
		return copyFeed(tmp, body, meta)
	}, nil)
	if err != nil {
		return false, err
	}
	// The meta only once its feed is in place: a crash in between leaves
	// the old meta, and the next run downloads the feed again.
	if err := durable.WriteFile(metaFile, raw); err != nil {
		return false, err
	}
	f.opt.Log(fmt.Sprintf("fetched %s.json.gz: %s in %s", name, ByteSize(n), took(time.Since(start))))
	return true, nil
}

// upToDate reports whether file holds the content meta describes, going
// by the meta kept beside it (same SHA-256 and size) and file's own size.
func (f *fetcher) upToDate(file, metaFile string, meta Meta) bool {
	b, err := os.ReadFile(metaFile)
	if err != nil {
		return false
	}
	old, err := ParseMeta(b)
	if err != nil || old.SHA256 != meta.SHA256 || old.Size != meta.Size || old.GzSize != meta.GzSize {
		return false
	}
	fi, err := os.Stat(file)
	return err == nil && fi.Mode().IsRegular() && (meta.GzSize == 0 || fi.Size() == meta.GzSize)
}

// copyFeed copies the gzip file body into dst, decompressing it on the way
// to check that it is whole and matches meta's sizes and SHA-256.
func copyFeed(dst io.Writer, body io.Reader, meta Meta) error {
	cw := &countWriter{w: dst}
	zr, err := gzip.NewReader(io.TeeReader(body, cw))
	if err != nil {
		return fmt.Errorf("not gzip: %w", err)
	}
	h := sha256.New()
	n, err := io.Copy(h, zr)
	if err != nil {
		return fmt.Errorf("truncated or damaged gzip: %w", err)
	}
	if _, err := io.Copy(cw, body); err != nil { // nothing, normally
		return err
	}
	switch got := strings.ToUpper(hex.EncodeToString(h.Sum(nil))); {
	case got != meta.SHA256:
		return fmt.Errorf("sha256 of the content is %s, the meta says %s", got, meta.SHA256)
	case meta.Size > 0 && n != meta.Size:
		return fmt.Errorf("content is %d bytes, the meta says %d", n, meta.Size)
	case meta.GzSize > 0 && cw.n != meta.GzSize:
		return fmt.Errorf("file is %d bytes, the meta's gzSize says %d", cw.n, meta.GzSize)
	}
	return nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}

// cwe brings the catalog up to date with a conditional GET, keeping its
// validators in st.
func (f *fetcher) cwe(ctx context.Context, st *state) (bool, error) {
	file := filepath.Join(f.opt.Dir, CWEName)
	hdr := http.Header{}
	if _, err := os.Stat(file); err == nil {
		if st.CWEETag != "" {
			hdr.Set("If-None-Match", st.CWEETag)
		}
		if st.CWELastModified != "" {
			hdr.Set("If-Modified-Since", st.CWELastModified)
		}
	}
	start := time.Now()
	h, n, err := f.download(ctx, f.opt.CWEURL, file, hdr, -1, func(tmp io.Writer, body io.Reader) error {
		_, err := io.Copy(tmp, body)
		return err
	}, checkCatalog)
	if errors.Is(err, ErrNotModified) {
		f.opt.Log("unchanged " + CWEName)
		return false, nil
	}
	if err != nil {
		return false, err
	}
	st.CWEETag, st.CWELastModified = h.Get("ETag"), h.Get("Last-Modified")
	f.opt.Log(fmt.Sprintf("fetched %s: %s in %s", CWEName, ByteSize(n), took(time.Since(start))))
	return true, nil
}

// checkCatalog checks that the file at path is a zip archive holding one
// XML file, which decompresses whole (its CRC-32 checked).
func checkCatalog(path string) error {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return fmt.Errorf("not a zip archive: %w", err)
	}
	defer zr.Close()
	var xml []*zip.File
	for _, zf := range zr.File {
		if strings.HasSuffix(strings.ToLower(zf.Name), ".xml") {
			xml = append(xml, zf)
		}
	}
	if len(xml) != 1 {
		return fmt.Errorf("the archive holds %d XML files, want 1", len(xml))
	}
	rc, err := xml[0].Open()
	if err != nil {
		return fmt.Errorf("%s in the archive: %w", xml[0].Name, err)
	}
	defer rc.Close()
	br := bufio.NewReader(rc)
	start, _ := br.Peek(64)
	if !bytes.HasPrefix(bytes.TrimLeft(bytes.TrimPrefix(start, []byte("\xef\xbb\xbf")), " \t\r\n"), []byte("<")) {
		return fmt.Errorf("%s in the archive is not XML", xml[0].Name)
	}
	if _, err := io.Copy(io.Discard, br); err != nil {
		return fmt.Errorf("%s in the archive: %w", xml[0].Name, err)
	}
	return nil
}

// download GETs url into a temporary file beside target through fill,
// which copies the body and checks it on the way, then checks the whole
// file with check (if not nil). The checked file is synced and renamed to
// target, and the directory synced. total is the expected size for
// progress reports (-1: the Content-Length). A failure removes the
// temporary file and leaves target as it was. It returns the answer's
// headers and the bytes written; a 304 is ErrNotModified.
func (f *fetcher) download(ctx context.Context, url, target string, hdr http.Header, total int64,
	fill func(tmp io.Writer, body io.Reader) error, check func(path string) error) (http.Header, int64, error) {
	tmpName, h, n, err := f.downloadTemp(ctx, url, filepath.Dir(target), filepath.Base(target), hdr, total, fill, check)
	if err != nil {
		return nil, 0, err
	}
	if err := os.Rename(tmpName, target); err != nil {
		os.Remove(tmpName)
		return nil, 0, err
	}
	return h, n, durable.SyncDir(filepath.Dir(target))
}

// downloadTemp is download up to the rename: it leaves the checked,
// synced file under a temporary name in dir (starting ".name.tmp-", name
// also naming it in progress reports) and returns that name, for a caller
// that names the target from the file's content. The caller renames or
// removes it.
func (f *fetcher) downloadTemp(ctx context.Context, url, dir, name string, hdr http.Header, total int64,
	fill func(tmp io.Writer, body io.Reader) error, check func(path string) error) (string, http.Header, int64, error) {
	var h http.Header
	var n int64
	var tmpName string
	err := f.get.Get(ctx, url, hdr, func(res *http.Response) error {
		tmp, err := os.CreateTemp(dir, "."+name+".tmp-*")
		if err != nil {
			return err
		}
		ok := false
		defer func() {
			if !ok {
				tmp.Close()
				os.Remove(tmp.Name())
			}
		}()
		var body io.Reader = res.Body
		if f.opt.Progress != nil {
			if total <= 0 {
				total = res.ContentLength
			}
			body = &progressReader{r: body, name: name, total: total, report: f.opt.Progress}
		}
		bw := bufio.NewWriterSize(tmp, 256<<10)
		cw := &countWriter{w: bw}
		if err := fill(cw, body); err != nil {
			return err
		}
		if err := bw.Flush(); err != nil {
			return err
		}
		if check != nil {
			if err := check(tmp.Name()); err != nil {
				return err
			}
		}
		if err := tmp.Sync(); err != nil {
			return err
		}
		if err := tmp.Close(); err != nil {
			return err
		}
		if err := os.Chmod(tmp.Name(), 0o644); err != nil {
			return err
		}
		ok, h, n, tmpName = true, res.Header, cw.n, tmp.Name()
		return nil
	})
	if err != nil {
		return "", nil, 0, err
	}
	return tmpName, h, n, nil
}

// progressReader reports every progressStep bytes read, and at the end.
type progressReader struct {
	r          io.Reader
	name       string
	done, last int64
	total      int64
	report     func(string, int64, int64)
}

const progressStep = 1 << 20

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	p.done += int64(n)
	if p.done-p.last >= progressStep || err == io.EOF && p.done != p.last {
		p.last = p.done
		p.report(p.name, p.done, p.total)
	}
	return n, err
}

// ByteSize formats n bytes as a person reads it, in the unit that keeps
// it between 1 and 1000 (decimal): "182 bytes", "41.0 kB", "12.3 MB",
// "1.2 GB". The commands' other lines use it too.
func ByteSize(n int64) string {
	switch {
	case n == 1:
		return "1 byte"
	case n < 1000:
		return fmt.Sprintf("%d bytes", n)
	}
	v, unit := float64(n)/1000, "kB"
	for _, bigger := range []string{"MB", "GB"} {
		if v < 999.95 { // prints below 1000.0
			break
		}
		v, unit = v/1000, bigger
	}
	return fmt.Sprintf("%.1f %s", v, unit)
}

// took formats a duration for a log line: "4.1s", "230ms".
func took(d time.Duration) string {
	if d >= time.Second {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Millisecond).String()
}

func (f *fetcher) readState() state {
	var st state
	if b, err := os.ReadFile(filepath.Join(f.opt.Dir, StateName)); err == nil {
		json.Unmarshal(b, &st) // a damaged state only means a full run
	}
	return st
}

func (f *fetcher) writeState(st state) error {
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	return durable.WriteFile(filepath.Join(f.opt.Dir, StateName), append(b, '\n'))
}
