package fetch

import (
	"bufio"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vulnd/vulnd/loader"
	"github.com/vulnd/vulnd/loader/internal/durable"
)

// The CVE Program publishes its CVE JSON 5 records as release assets of
// github.com/CVEProject/cvelistV5, a release an hour (tag
// cve_YYYY-MM-DD_HHMMZ), each with
//
//	YYYY-MM-DD_all_CVEs_at_midnight.zip.zip  every record at that day's midnight (UTC):
//	                                         a zip holding cves.zip, which holds cves/YYYY/NNxxx/CVE-*.json
//	YYYY-MM-DD_delta_CVEs_at_HHMMZ.zip       every record added or changed since that midnight
//	                                         (deltaCves/CVE-*.json), so each hour's replaces the one before
//
// and, once a day is over, YYYY-MM-DD_delta_CVEs_at_end_of_day.zip. The
// GitHub API describes the newest release (its assets' names, sizes and,
// since 2025, SHA-256 digests) at repos/CVEProject/cvelistV5/releases/latest.

// DefaultCVE5URL is where the description of the newest cvelistV5
// release is, as BASE + "releases/latest" (GitHub's REST API).
const DefaultCVE5URL = "https://api.github.com/repos/CVEProject/cvelistV5/"

// CVE5ReleasePath is the release description's path under the CVE5 URL.
const CVE5ReleasePath = "releases/latest"

var (
	// cve5FullName is a baseline bundle's name; the CVE Program named it
	// .zip until mid-2024, .zip.zip since.
	cve5FullName = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2})_all_CVEs_at_midnight\.zip(\.zip)?$`)
	// cve5DeltaName is a delta bundle's name.
	cve5DeltaName = regexp.MustCompile(`^(\d{4}-\d{2}-\d{2})_delta_CVEs_at_(\d{4}Z|end_of_day)\.zip$`)
)

// IsCVE5Bundle reports whether name is that of a cvelistV5 bundle, a
// baseline or a delta, as Run keeps them.
func IsCVE5Bundle(name string) bool {
	return cve5FullName.MatchString(name) || cve5DeltaName.MatchString(name)
}

// maxReleaseBytes bounds a release description: GitHub's, with its three
// assets, is a few kB.
const maxReleaseBytes = 1 << 20

// release is what Run reads of a GitHub release description.
type release struct {
	Tag    string  `json:"tag_name"`
	Assets []asset `json:"assets"`
}

type asset struct {
	Name string `json:"name"`
	// URL is where to download it; relative to the description's URL
	// in a mirror's.
	URL  string `json:"browser_download_url"`
	Size int64  `json:"size"` // 0: not given
	// Digest is "sha256:HEX" (GitHub gives one for assets uploaded since
	// June 2025); "": none.
	Digest string `json:"digest"`
}

// assetState is a bundle a run kept, in the state file.
type assetState struct {
	Name   string `json:"name"`
	Size   int64  `json:"size,omitempty"`
	SHA256 string `json:"sha256,omitempty"` // lower-case hex; "": none given
	// Empty: a delta holding no record, not written (vulnd build would
	// take it for something else), but not fetched again.
	Empty bool `json:"empty,omitempty"`
}

// partState is the bundle whose download a run left unfinished in
// .NAME.part, to be resumed with a Range request.
type partState struct {
	assetState
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"last_modified,omitempty"`
}

// sha256Of returns a's digest as lower-case hex, "" if it gives none.
func (a asset) sha256Of() (string, error) {
	if a.Digest == "" {
		return "", nil
	}
	algo, sum, _ := strings.Cut(a.Digest, ":")
	if algo != "sha256" {
		return "", nil // another algorithm: not checked
	}
	if b, err := hex.DecodeString(sum); err != nil || len(b) != sha256.Size {
		return "", fmt.Errorf("asset %s: digest %q is not sha256: and 64 hex digits", a.Name, a.Digest)
	}
	return strings.ToLower(sum), nil
}

// pickCVE5 chooses from a release's assets the bundles to keep: the
// newest baseline and, for its day and each day after it, the newest
// delta of that day (a delta holds every change since its day's
// midnight, so a later one of the same day replaces it; end_of_day is
// the day's last).
func pickCVE5(assets []asset) ([]asset, error) {
	var full *asset
	for i, a := range assets {
		if m := cve5FullName.FindStringSubmatch(a.Name); m != nil {
			if full == nil || a.Name > full.Name {
				full = &assets[i]
			}
		}
	}
	if full == nil {
		return nil, errors.New("the release has no YYYY-MM-DD_all_CVEs_at_midnight.zip.zip asset")
	}
	day := full.Name[:10]
	newest := map[string]asset{}
	for _, a := range assets {
		if m := cve5DeltaName.FindStringSubmatch(a.Name); m != nil && m[1] >= day {
			if old, ok := newest[m[1]]; !ok || a.Name > old.Name { // "end_of_day" > "2300Z"
				newest[m[1]] = a
			}
		}
	}
	out := []asset{*full}
	for _, d := range slices.Sorted(maps.Keys(newest)) {
		out = append(out, newest[d])
	}
	for _, a := range out {
		if a.URL == "" {
			return nil, fmt.Errorf("asset %s has no browser_download_url", a.Name)
		}
		if a.Size < 0 {
			return nil, fmt.Errorf("asset %s has size %d", a.Name, a.Size)
		}
		if _, err := a.sha256Of(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// cve5 brings the directory's cvelistV5 bundles up to date: the release
// description by a conditional GET, then each bundle it names that is
// not already there, then the bundles no longer wanted are removed. It
// appends what it fetched and found unchanged to res.
func (f *fetcher) cve5(ctx context.Context, st *state, note func(string, bool)) error {
	relURL := f.opt.CVE5URL + CVE5ReleasePath
	hdr := http.Header{}
	if f.keptCVE5(st.CVE5Assets) {
		if st.CVE5ETag != "" {
			hdr.Set("If-None-Match", st.CVE5ETag)
		}
		if st.CVE5LastModified != "" {
			hdr.Set("If-Modified-Since", st.CVE5LastModified)
		}
	}
	var raw []byte
	var resHdr http.Header
	err := f.get.Get(ctx, relURL, hdr, func(res *http.Response) error {
		var err error
		raw, err = io.ReadAll(io.LimitReader(res.Body, maxReleaseBytes+1))
		resHdr = res.Header
		return err
	})
	if errors.Is(err, ErrNotModified) {
		for _, a := range st.CVE5Assets {
			if !a.Empty {
				f.opt.Log("unchanged " + a.Name)
				note(a.Name, false)
			}
		}
		return nil
	}
	if err != nil {
		return err
	}
	if len(raw) > maxReleaseBytes {
		return fmt.Errorf("%s: more than %s: not a release description", relURL, ByteSize(maxReleaseBytes))
	}
	var rel release
	if err := json.Unmarshal(raw, &rel); err != nil {
		return fmt.Errorf("%s: not a GitHub release description: %v", relURL, err)
	}
	want, err := pickCVE5(rel.Assets)
	if err != nil {
		return fmt.Errorf("%s: %w", relURL, err)
	}
	base, _ := url.Parse(relURL)
	var kept []assetState
	for _, a := range want {
		as, fetched, err := f.cve5Bundle(ctx, st, base, a)
		if err != nil {
			return err
		}
		kept = append(kept, as)
		if !as.Empty {
			note(a.Name, fetched)
		}
	}
	// Only once the new bundles are in place: the ones they replace.
	if err := f.removeOtherBundles(kept); err != nil {
		return err
	}
	st.CVE5Assets, st.CVE5Part = kept, nil
	st.CVE5ETag, st.CVE5LastModified = resHdr.Get("ETag"), resHdr.Get("Last-Modified")
	return f.writeState(*st)
}

// keptCVE5 reports whether the bundles a run kept are all still there,
// whole by their size: then the release description may be asked for
// conditionally.
func (f *fetcher) keptCVE5(kept []assetState) bool {
	if len(kept) == 0 {
		return false
	}
	for _, a := range kept {
		if a.Empty {
			continue
		}
		fi, err := os.Stat(filepath.Join(f.opt.Dir, a.Name))
		if err != nil || !fi.Mode().IsRegular() || a.Size > 0 && fi.Size() != a.Size {
			return false
		}
	}
	return true
}

// cve5Bundle brings one bundle into the directory unless the last run
// kept the same one (name, size and digest) and it is still there. A
// download goes to .NAME.part and resumes one an earlier run left.
func (f *fetcher) cve5Bundle(ctx context.Context, st *state, base *url.URL, a asset) (assetState, bool, error) {
	sum, _ := a.sha256Of()
	as := assetState{Name: a.Name, Size: a.Size, SHA256: sum}
	for _, k := range st.CVE5Assets {
		if k.Name == as.Name && k.Size == as.Size && k.SHA256 == as.SHA256 && (k.Empty || f.keptCVE5([]assetState{k})) {
			if !k.Empty {
				f.opt.Log("unchanged " + a.Name)
			}
			return k, false, nil
		}
	}
	u, err := base.Parse(a.URL)
	if err != nil || u.Scheme != "http" && u.Scheme != "https" {
		return as, false, fmt.Errorf("%s: asset %s: download URL %q is not an http:// or https:// URL", base, a.Name, a.URL)
	}
	src := u.String()
	target := filepath.Join(f.opt.Dir, a.Name)
	part := filepath.Join(f.opt.Dir, "."+a.Name+".part")
	start := time.Now()
	resumed, err := f.downloadPart(ctx, st, src, part, as)
	if err != nil {
		return as, false, err
	}
	// Checked whole before it is put in place; a bad one is removed, so
	// the next run starts it over, and the bundles kept stay as they were.
	records, err := checkBundle(ctx, part, as)
	if err != nil && ctx.Err() != nil {
		// Stopped while checking: the whole download stays, for the
		// next run to check.
		return as, false, fmt.Errorf("%s: interrupted while checking it: %w", src, ctx.Err())
	}
	if err != nil {
		os.Remove(part)
		st.CVE5Part = nil
		f.writeState(*st)
		return as, false, fmt.Errorf("%s: refused: %s (the bundles kept are unchanged)", src, strings.ReplaceAll(err.Error(), part, a.Name))
	}
	if records == 0 {
		if cve5FullName.MatchString(a.Name) {
			os.Remove(part)
			return as, false, fmt.Errorf("%s: refused: the bundle holds no CVE JSON 5 record (the bundles kept are unchanged)", src)
		}
		// A delta of an hour with no change: nothing to keep.
		os.Remove(part)
		as.Empty = true
		f.opt.Log("fetched " + a.Name + ": no record in it; not kept")
		return as, true, nil
	}
	if err := os.Rename(part, target); err != nil {
		return as, false, err
	}
	if err := durable.SyncDir(f.opt.Dir); err != nil {
		return as, false, err
	}
	fi, _ := os.Stat(target)
	line := fmt.Sprintf("fetched %s: %s, %d records in %s", a.Name, ByteSize(fi.Size()), records, took(time.Since(start)))
	if resumed > 0 {
		line += fmt.Sprintf(" (resumed at %s)", ByteSize(resumed))
	}
	f.opt.Log(line)
	return as, true, nil
}

// downloadPart downloads src into part, resuming at part's size with a
// Range request when the state says part is the start of this very
// asset (and a validator or digest makes a mixed file detectable). A
// transfer cut short is resumed from where it stopped on the next try.
// On failure part is kept, synced, for the next run. It returns the
// offset the download resumed at (0: from the start).
func (f *fetcher) downloadPart(ctx context.Context, st *state, src, part string, as assetState) (int64, error) {
	var off int64
	p := st.CVE5Part
	if p != nil && p.assetState == as && as.Size > 0 && (p.ETag != "" || p.LastModified != "" || as.SHA256 != "") {
		if fi, err := os.Stat(part); err == nil && fi.Mode().IsRegular() && fi.Size() <= as.Size {
			off = fi.Size()
		}
	}
	if off > 0 && off == as.Size {
		return off, nil // downloaded whole by a run stopped before its check ended
	}
	if off == 0 {
		p = &partState{assetState: as}
		if err := os.Remove(part); err != nil && !errors.Is(err, os.ErrNotExist) {
			return 0, err
		}
	}
	st.CVE5Part = p
	resumedAt := off
	hdr := http.Header{}
	setRange := func(from int64) {
		hdr.Del("Range")
		hdr.Del("If-Range")
		if from > 0 {
			hdr.Set("Range", "bytes="+strconv.FormatInt(from, 10)+"-")
			if v := cmp.Or(p.ETag, p.LastModified); v != "" && !strings.HasPrefix(v, "W/") {
				hdr.Set("If-Range", v)
			}
		}
	}
	setRange(off)
	err := f.get.Get(ctx, src, hdr, func(res *http.Response) error {
		from := int64(0)
		if res.StatusCode == http.StatusPartialContent {
			s, err := contentRangeStart(res.Header.Get("Content-Range"))
			if err != nil || s > off {
				return fmt.Errorf("answer to bytes=%d- has Content-Range %q", off, res.Header.Get("Content-Range"))
			}
			from, resumedAt = s, s
		} else {
			// The whole file: a server that ignores Range, or a file that
			// changed (If-Range): start over with its validators.
			p.ETag, p.LastModified = res.Header.Get("ETag"), res.Header.Get("Last-Modified")
			resumedAt = 0
		}
		// Remembered before the body, so that a run killed in the middle
		// resumes.
		if err := f.writeState(*st); err != nil {
			return err
		}
		pf, err := os.OpenFile(part, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		defer pf.Close()
		if err := pf.Truncate(from); err != nil {
			return err
		}
		if _, err := pf.Seek(from, io.SeekStart); err != nil {
			return err
		}
		var body io.Reader = res.Body
		if f.opt.Progress != nil {
			body = &progressReader{r: body, name: as.Name, done: from, last: from, total: cmp.Or(as.Size, -1), report: f.opt.Progress}
		}
		bw := bufio.NewWriterSize(pf, 256<<10)
		n, cerr := io.Copy(bw, body)
		ferr := bw.Flush()
		serr := pf.Sync()
		off = from + n
		setRange(off) // for the next try, if this one was cut
		return errors.Join(cerr, ferr, serr)
	})
	return resumedAt, err
}

// contentRangeStart reads the first byte position of a Content-Range
// "bytes FIRST-LAST/LENGTH".
func contentRangeStart(v string) (int64, error) {
	r, ok := strings.CutPrefix(v, "bytes ")
	first, _, ok2 := strings.Cut(r, "-")
	n, err := strconv.ParseInt(first, 10, 64)
	if !ok || !ok2 || err != nil || n < 0 {
		return 0, fmt.Errorf("bad Content-Range %q", v)
	}
	return n, nil
}

// checkBundle checks a downloaded bundle: its size and SHA-256 when the
// release gives them, then that it is a zip of CVE JSON 5 records that
// vulnd build reads whole (every record decoded). It returns how many
// records it holds.
func checkBundle(ctx context.Context, path string, as assetState) (int, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	if as.Size > 0 && fi.Size() != as.Size {
		return 0, fmt.Errorf("%d bytes, the release says %d", fi.Size(), as.Size)
	}
	if as.SHA256 != "" {
		fh, err := os.Open(path)
		if err != nil {
			return 0, err
		}
		h := sha256.New()
		_, err = io.Copy(h, fh)
		fh.Close()
		if err != nil {
			return 0, err
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != as.SHA256 {
			return 0, fmt.Errorf("sha256 %s, the release says %s", got, as.SHA256)
		}
	}
	var head [4]byte
	if fh, err := os.Open(path); err == nil {
		fh.ReadAt(head[:], 0)
		fh.Close()
	}
	if string(head[:]) != "PK\x03\x04" {
		return 0, errors.New("not a zip archive")
	}
	n := 0
	err = loader.ReadCVE5(path, func(*loader.CVE5Record) error {
		if n++; n%1024 == 0 {
			return ctx.Err() // a baseline takes a while: SIGINT stops it
		}
		return nil
	})
	return n, err
}

// removeOtherBundles removes the cvelistV5 bundles in the directory that
// are not among kept, and any download of one left unfinished.
func (f *fetcher) removeOtherBundles(kept []assetState) error {
	es, err := os.ReadDir(f.opt.Dir)
	if err != nil {
		return err
	}
	for _, e := range es {
		name := e.Name()
		part := false
		if n, ok := strings.CutPrefix(name, "."); ok {
			if n, ok = strings.CutSuffix(n, ".part"); !ok {
				continue
			}
			name, part = n, true
		}
		if !e.Type().IsRegular() || !IsCVE5Bundle(name) {
			continue
		}
		if !part && slices.ContainsFunc(kept, func(k assetState) bool { return k.Name == name && !k.Empty }) {
			continue
		}
		if err := os.Remove(filepath.Join(f.opt.Dir, e.Name())); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		if !part {
			f.opt.Log("removed " + name + ": superseded")
		}
	}
	return durable.SyncDir(f.opt.Dir)
}
