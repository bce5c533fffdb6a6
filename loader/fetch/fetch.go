// Package fetch mirrors NVD's CVE API 2.0 feed files and MITRE's CWE
// catalog into a directory, downloading only what changed: each feed's
// .meta file says when it changed and the SHA-256 of its content, which
// every download is checked against before it replaces the old copy.
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
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/klauspost/compress/gzip"
)

// Defaults of Options.
const (
	DefaultBaseURL = "https://nvd.nist.gov/feeds/json/cve/2.0/"
	DefaultCWEURL  = "https://cwe.mitre.org/data/xml/cwec_latest.xml.zip"
	// DefaultMaxAge: NVD's modified feed covers the last eight days, so
	// a mirror older than that must check every yearly feed again.
	DefaultMaxAge   = 8 * 24 * time.Hour
	DefaultAttempts = 5
	firstYear       = 2002
	// StateName is the file in the directory that remembers the last full
	// run and the catalog's validators.
	StateName = ".vulnd-fetch.json"
	// CWEName is the catalog's file name in the directory.
	CWEName = "cwec_latest.xml.zip"
)

// Options say what to mirror where. Only Dir is required.
type Options struct {
	Dir     string
	BaseURL string // the feeds' directory URL, ending in "/"
	CWEURL  string // "" for the default; "-" to skip the catalog
	// Years are the yearly feeds, from FirstYear to LastYear (0: 2002 and
	// the current year).
	FirstYear, LastYear int
	MaxAge              time.Duration // 0: DefaultMaxAge
	Attempts            int           // tries per request; 0: DefaultAttempts
	Client              *http.Client  // nil: a client with a 2-minute timeout per request
	// Log gets one line per file.
	Log func(string)
	// Progress, if set, is told of a download's progress now and then:
	// the file, the bytes so far, and the total (-1 when unknown).
	Progress func(file string, done, total int64)
	// Now and Sleep are the clock, replaceable in tests.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
}

// Result lists the files written and those found unchanged.
type Result struct {
	Fetched, Unchanged []string
	Full               bool // the yearly feeds were checked too
}

// state is StateName's content.
type state struct {
	LastFull        time.Time `json:"last_full,omitzero"`
	CWEETag         string    `json:"cwe_etag,omitempty"`
	CWELastModified string    `json:"cwe_last_modified,omitempty"`
}

// Run mirrors the feeds into opt.Dir. It stops at the first failure with
// an error naming the URL or file.
//
// A run is all or nothing: every download is checked into a temporary
// file beside its target, and only when all of them (and the catalog)
// succeeded are they renamed into place, feeds before their metas. A
// failed run leaves the directory as it was.
func Run(ctx context.Context, opt Options) (res Result, err error) {
	f, err := newFetcher(opt)
	if err != nil {
		return Result{}, err
	}
	defer func() {
		if err != nil {
			f.discard()
		}
	}()
	st := f.readState()
	now := f.opt.Now()
	full := st.LastFull.IsZero() || now.Sub(st.LastFull) > f.opt.MaxAge
	res.Full = full
	var names []string
	if full {
		for y := f.opt.FirstYear; y <= f.opt.LastYear; y++ {
			names = append(names, "nvdcve-2.0-"+strconv.Itoa(y))
		}
	}
	names = append(names, "nvdcve-2.0-modified", "nvdcve-2.0-recent")
	for _, n := range names {
		fetched, err := f.feed(ctx, n)
		if err != nil {
			return res, err
		}
		if fetched {
			res.Fetched = append(res.Fetched, n+".json.gz")
		} else {
			res.Unchanged = append(res.Unchanged, n+".json.gz")
		}
	}
	if f.opt.CWEURL != "-" {
		fetched, err := f.cwe(ctx, &st)
		if err != nil {
			return res, err
		}
		if fetched {
			res.Fetched = append(res.Fetched, CWEName)
		} else {
			res.Unchanged = append(res.Unchanged, CWEName)
		}
	}
	if full {
		st.LastFull = now
	}
	if err := f.commit(); err != nil {
		return res, err
	}
	return res, f.writeState(st)
}

type fetcher struct {
	opt Options
	// staged are the checked temporary files of this run and the names
	// they take on commit, in that order.
	staged []staged
}

type staged struct{ tmp, final string }

// commit renames every staged file into place, then syncs the directory.
func (f *fetcher) commit() error {
	for i, s := range f.staged {
		if err := os.Rename(s.tmp, s.final); err != nil {
			f.staged = f.staged[i:]
			return err
		}
	}
	f.staged = nil
	return syncDir(f.opt.Dir)
}

// discard removes the staged files of a failed run.
func (f *fetcher) discard() {
	for _, s := range f.staged {
		os.Remove(s.tmp)
	}
	f.staged = nil
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
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.FirstYear == 0 {
		opt.FirstYear = firstYear
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
	if opt.Attempts <= 0 {
		opt.Attempts = DefaultAttempts
	}
	if opt.Client == nil {
		opt.Client = &http.Client{Timeout: 2 * time.Minute}
	}
	if opt.Log == nil {
		opt.Log = func(string) {}
	}
	if opt.Sleep == nil {
		opt.Sleep = func(ctx context.Context, d time.Duration) error {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-t.C:
				return nil
			}
		}
	}
	return &fetcher{opt: opt}, nil
}

// feed brings name.json.gz up to date with its meta; it reports whether it
// downloaded it.
func (f *fetcher) feed(ctx context.Context, name string) (bool, error) {
	metaURL := f.opt.BaseURL + name + ".meta"
	raw, err := f.getSmall(ctx, metaURL)
	if err != nil {
		return false, err
	}
	meta, err := ParseMeta(raw)
	if err != nil {
		return false, fmt.Errorf("%s: %w", metaURL, err)
	}
	file := filepath.Join(f.opt.Dir, name+".json.gz")
	metaFile := filepath.Join(f.opt.Dir, name+".meta")
	if old, err := os.ReadFile(metaFile); err == nil {
		if om, err := ParseMeta(old); err == nil && om.SHA256 == meta.SHA256 && om.LastModified == meta.LastModified {
			if _, err := os.Stat(file); err == nil {
				f.opt.Log("unchanged " + name + ".json.gz")
				return false, nil
			}
		}
	}
	start := time.Now()
	url := f.opt.BaseURL + name + ".json.gz"
	n, err := f.download(ctx, url, file, func(tmp *os.File) error { return checkFeed(tmp, meta) })
	if err != nil {
		return false, err
	}
	if err := f.stage(metaFile, raw); err != nil {
		return false, err
	}
	f.opt.Log(fmt.Sprintf("fetched %s.json.gz: %.1f MB in %s", name, float64(n)/1e6, time.Since(start).Round(time.Millisecond)))
	return true, nil
}

// checkFeed checks that the gzip file tmp decompresses to meta's size and
// SHA-256.
func checkFeed(tmp *os.File, meta Meta) error {
	if _, err := tmp.Seek(0, io.SeekStart); err != nil {
		return err
	}
	zr, err := gzip.NewReader(bufio.NewReader(tmp))
	if err != nil {
		return fmt.Errorf("not gzip: %w", err)
	}
	h := sha256.New()
	n, err := io.Copy(h, zr)
	if err != nil {
		return fmt.Errorf("gzip: %w", err)
	}
	if got := strings.ToUpper(hex.EncodeToString(h.Sum(nil))); got != meta.SHA256 {
		return fmt.Errorf("sha256 of the content is %s, the meta says %s", got, meta.SHA256)
	}
	if meta.Size > 0 && n != meta.Size {
		return fmt.Errorf("content is %d bytes, the meta says %d", n, meta.Size)
	}
	return nil
}

// cwe brings the catalog up to date with a conditional GET.
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
	var res *http.Response
	n, err := f.downloadWith(ctx, f.opt.CWEURL, file, hdr, func(tmp *os.File) error { return checkCatalog(tmp) }, &res)
	if errors.Is(err, errNotModified) {
		f.opt.Log("unchanged " + CWEName)
		return false, nil
	}
	if err != nil {
		return false, err
	}
	st.CWEETag, st.CWELastModified = res.Header.Get("ETag"), res.Header.Get("Last-Modified")
	f.opt.Log(fmt.Sprintf("fetched %s: %.1f MB in %s", CWEName, float64(n)/1e6, time.Since(start).Round(time.Millisecond)))
	return true, nil
}

// checkCatalog checks that tmp is a zip archive holding one XML file.
func checkCatalog(tmp *os.File) error {
	fi, err := tmp.Stat()
	if err != nil {
		return err
	}
	zr, err := zip.NewReader(tmp, fi.Size())
	if err != nil {
		return fmt.Errorf("not a zip archive: %w", err)
	}
	var xml int
	for _, zf := range zr.File {
		if strings.HasSuffix(strings.ToLower(zf.Name), ".xml") {
			xml++
		}
	}
	if xml != 1 {
		return fmt.Errorf("the archive holds %d XML files, want 1", xml)
	}
	return nil
}

var errNotModified = errors.New("not modified")

func (f *fetcher) download(ctx context.Context, url, file string, check func(*os.File) error) (int64, error) {
	return f.downloadWith(ctx, url, file, nil, check, nil)
}

// downloadWith GETs url into a temporary file beside file, checks it and
// syncs it, and stages it to be renamed into place when the run commits.
// A 304 is errNotModified. It returns the bytes written.
func (f *fetcher) downloadWith(ctx context.Context, url, file string, hdr http.Header, check func(*os.File) error, resp **http.Response) (int64, error) {
	var n int64
	err := f.retry(ctx, url, hdr, func(res *http.Response) error {
		if res.StatusCode == http.StatusNotModified {
			return errNotModified
		}
		tmp, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".tmp-*")
		if err != nil {
			return permanent{err}
		}
		done := false
		defer func() {
			if !done {
				tmp.Close()
				os.Remove(tmp.Name())
			}
		}()
		var body io.Reader = res.Body
		if f.opt.Progress != nil {
			body = &progressReader{r: res.Body, name: filepath.Base(file), total: res.ContentLength, report: f.opt.Progress}
		}
		if n, err = io.Copy(tmp, body); err != nil {
			return fmt.Errorf("%s: %w", url, err) // a cut transfer: try again
		}
		if err := check(tmp); err != nil {
			return permanent{fmt.Errorf("%s: %w", url, err)}
		}
		if err := tmp.Sync(); err != nil {
			return permanent{err}
		}
		if err := tmp.Close(); err != nil {
			return permanent{err}
		}
		if err := os.Chmod(tmp.Name(), 0o644); err != nil {
			return permanent{err}
		}
		done = true
		f.staged = append(f.staged, staged{tmp.Name(), file})
		if resp != nil {
			*resp = res
		}
		return nil
	})
	return n, err
}

// stage writes b to a synced temporary file that commit renames to path.
func (f *fetcher) stage(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return err
	}
	f.staged = append(f.staged, staged{tmp.Name(), path})
	return nil
}

// progressReader reports every progressStep bytes read.
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
	if p.done-p.last >= progressStep || err == io.EOF {
		p.last = p.done
		p.report(p.name, p.done, p.total)
	}
	return n, err
}

// getSmall GETs a small document (a .meta file) whole.
func (f *fetcher) getSmall(ctx context.Context, url string) ([]byte, error) {
	var b []byte
	err := f.retry(ctx, url, nil, func(res *http.Response) error {
		var err error
		b, err = io.ReadAll(io.LimitReader(res.Body, 64<<10))
		if err != nil {
			return fmt.Errorf("%s: %w", url, err)
		}
		return nil
	})
	return b, err
}

// permanent marks an error that another try would not mend.
type permanent struct{ error }

func (p permanent) Unwrap() error { return p.error }

// retry GETs url and hands a 200 (or 304) to use, trying again with
// backoff on network errors, 429 and 5xx (honouring Retry-After) and
// when use fails with a non-permanent error, up to Attempts tries.
func (f *fetcher) retry(ctx context.Context, url string, hdr http.Header, use func(*http.Response) error) error {
	var last error
	for attempt := 0; attempt < f.opt.Attempts; attempt++ {
		if attempt > 0 {
			wait := backoff(attempt)
			var ra retryAfter
			if errors.As(last, &ra) {
				wait = ra.d
			}
			if err := f.opt.Sleep(ctx, wait); err != nil {
				return err
			}
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		for k, v := range hdr {
			req.Header[k] = v
		}
		req.Header.Set("User-Agent", "vulnd-fetch")
		res, err := f.opt.Client.Do(req)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			last = fmt.Errorf("%s: %w", url, err)
			continue
		}
		err = func() error {
			defer res.Body.Close()
			switch {
			case res.StatusCode == http.StatusOK, res.StatusCode == http.StatusNotModified && hdr != nil:
				return use(res)
			case res.StatusCode == http.StatusTooManyRequests || res.StatusCode >= 500:
				err := fmt.Errorf("%s: %s", url, res.Status)
				if d, ok := parseRetryAfter(res.Header.Get("Retry-After"), f.opt.Now()); ok {
					return retryAfter{err, d}
				}
				return err
			default:
				return permanent{fmt.Errorf("%s: %s", url, res.Status)}
			}
		}()
		var p permanent
		switch {
		case err == nil, errors.Is(err, errNotModified):
			return err
		case errors.As(err, &p):
			return p.error
		}
		last = err
	}
	return fmt.Errorf("%w (after %d tries)", last, f.opt.Attempts)
}

// retryAfter is a refusal that said when to come back.
type retryAfter struct {
	error
	d time.Duration
}

// maxRetryAfter bounds a server's Retry-After.
const maxRetryAfter = 10 * time.Minute

// parseRetryAfter reads Retry-After: seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && s >= 0 {
		return min(time.Duration(s)*time.Second, maxRetryAfter), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return min(max(t.Sub(now), 0), maxRetryAfter), true
	}
	return 0, false
}

// backoff is the wait before try attempt+1: 1 s doubling to at most a
// minute, with up to 50 % jitter so a fleet does not retry in step.
func backoff(attempt int) time.Duration {
	d := min(time.Second<<(attempt-1), time.Minute)
	return d/2 + time.Duration(rand.Int64N(int64(d/2)+1))
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
	return writeAtomic(filepath.Join(f.opt.Dir, StateName), append(b, '\n'))
}

// writeAtomic writes b to path through a synced temporary file.
func writeAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return permanent{err}
	}
	return nil
}

// Meta is an NVD feed's .meta file.
type Meta struct {
	LastModified string // lastModifiedDate, as written
	Size         int64  // of the uncompressed JSON
	SHA256       string // of the uncompressed JSON, upper-case hex
}

// ParseMeta reads a .meta file: "key:value" lines, of which
// lastModifiedDate and sha256 (64 hex digits) are required and size, if
// present, is a whole number. Other keys (zipSize, gzSize) are ignored.
func ParseMeta(b []byte) (Meta, error) {
	var m Meta
	for _, line := range bytes.Split(b, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return Meta{}, fmt.Errorf("meta line %q has no colon", line)
		}
		switch string(k) {
		case "lastModifiedDate":
			m.LastModified = string(v)
		case "size":
			n, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil || n < 0 {
				return Meta{}, fmt.Errorf("meta size %q is not a whole number", v)
			}
			m.Size = n
		case "sha256":
			s := strings.ToUpper(string(v))
			if _, err := hex.DecodeString(s); err != nil || len(s) != 64 {
				return Meta{}, fmt.Errorf("meta sha256 %q is not 64 hex digits", v)
			}
			m.SHA256 = s
		}
	}
	switch {
	case m.LastModified == "":
		return Meta{}, errors.New("meta has no lastModifiedDate")
	case m.SHA256 == "":
		return Meta{}, errors.New("meta has no sha256")
	}
	return m, nil
}
