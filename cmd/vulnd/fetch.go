package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/vulnd/vulnd/loader/fetch"
)

var fetchHelp = help{
	usage: "fetch -dir DIR [-base-url URL] [-cwe-url URL] [-epss-url URL] [-cve5-url URL] [-years FIRST-LAST|all] [-max-age 8d] [flags]",
	about: `Mirrors NVD's CVE API 2.0 feed files (nvdcve-2.0-YYYY.json.gz, -modified,
-recent), MITRE's CWE catalog (cwec_latest.xml.zip), FIRST's daily EPSS
file and the CVE Program's cvelistV5 bundles of CVE JSON 5 records into
DIR, which must exist. Each feed's .meta is read first and the feed
downloaded only when it changed; as it streams in, its content must match
the meta's size and SHA-256 before it replaces the old copy (temporary
file, fsync, rename), then the meta is written beside it. The yearly feeds are checked
on the first run and when the last full run is older than -max-age (or
checked fewer years than -years asks for); the catalog by a conditional
GET, and it must be a zip of one XML file.
EPSS (-epss-url): a conditional GET; the file must be gzip and read whole
as build -epss reads it; kept as epss_scores-DATE.csv.gz (DATE its
score_date), the older one removed, an older one than kept passed over.
CVE JSON 5 (-cve5-url BASE): BASE/releases/latest describes the newest
cvelistV5 release (GitHub's API; asked for conditionally); of its assets,
the newest YYYY-MM-DD_all_CVEs_at_midnight.zip.zip and, for its day and
each later day, the newest YYYY-MM-DD_delta_CVEs_at_HHMMZ.zip (or
_at_end_of_day) are kept, the others removed once these are in place.
Each must match the size and SHA-256 the release gives and be a zip of
records build reads whole; a download cut short is kept as .NAME.part
and resumed (Range) by the next try or run. The baseline is some 600 MB
and new each day. Give - to -epss-url or -cve5-url to skip that source.
Network errors, timeouts, 429 and 5xx are tried again with backoff,
honouring Retry-After. One line per file on stderr (a progress line on a
terminal), the counts on stdout. On a failure among NVD's feeds, or
SIGINT/SIGTERM, exit 1 with one line naming the URL or file: that file
keeps its old copy and meta, and the files fetched before it are complete
and checked, so a run again goes on from there. When NVD's feeds are all
current but the catalog, the EPSS file or the bundles failed, the sources
after the one that failed are still fetched, and the exit status is 3,
with one line naming each failure: each keeps its old copy, and a build
from what the directory holds may go on (make refresh does). Then run vulnd build on what vulnd feeds DIR
lists (the NVD feeds and the record files), with -epss $(vulnd feeds
-epss DIR).`,
}

// cmdFetch is vulnd fetch: mirror NVD's feeds and MITRE's catalog.
func cmdFetch(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("fetch")
	dir := fs.String("dir", "", "directory to mirror into, `DIR` (required; must exist)")
	base := fs.String("base-url", fetch.DefaultBaseURL, "where the feeds and their .meta files are, `URL` (a site mirror may serve them)")
	cwe := fs.String("cwe-url", fetch.DefaultCWEURL, "the CWE catalog's `URL`; - to skip it")
	epss := fs.String("epss-url", fetch.DefaultEPSSURL, "FIRST's daily EPSS file, `URL` (a mirror may serve it); - to skip it")
	cve5 := fs.String("cve5-url", fetch.DefaultCVE5URL, "where BASE/releases/latest describes the newest cvelistV5 release, `BASE` (GitHub's API; a mirror may serve it); - to skip the CVE JSON 5 bundles")
	years := fs.String("years", "all", "the yearly feeds: `FIRST-LAST`, one year, or all (2002 to this year)")
	maxAge := days(fetch.DefaultMaxAge)
	fs.Var(&maxAge, "max-age", "check the yearly feeds again when the last full run is older than `AGE`: days (8d) or a duration (36h); NVD's modified feed covers 8 days")
	timeout := fs.Duration("timeout", fetch.DefaultTimeout, "give up a request, its download included, after this long (and try again)")
	attempts := fs.Int("attempts", fetch.DefaultAttempts, "tries per request, with backoff, on network errors, timeouts, 429 and 5xx")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if err := checkArgs(fs, "", 0, 0); err != nil {
		return err
	}
	switch {
	case *dir == "":
		return usageError{errors.New("-dir is required")}
	case *attempts < 1:
		return usageError{errors.New("-attempts must be at least 1")}
	case *timeout <= 0:
		return usageError{errors.New("-timeout must be more than 0")}
	case maxAge <= 0:
		return usageError{errors.New("-max-age must be more than 0")}
	}
	first, last, err := parseYears(*years, time.Now().UTC().Year())
	if err != nil {
		return usageError{err}
	}
	if err := checkURL("-base-url", *base); err != nil {
		return err
	}
	for _, u := range []struct{ flag, url string }{{"-cwe-url", *cwe}, {"-epss-url", *epss}, {"-cve5-url", *cve5}} {
		if u.url != "-" {
			if err := checkURL(u.flag, u.url); err != nil {
				return err
			}
		}
	}
	// Looked at last, so that the checks above need no directory.
	switch fi, err := os.Stat(*dir); {
	case errors.Is(err, iofs.ErrNotExist):
		return usageError{fmt.Errorf("-dir %s does not exist; create it first", *dir)}
	case err != nil:
		return usageError{fmt.Errorf("-dir %s: %w", *dir, err)}
	case !fi.IsDir():
		return usageError{fmt.Errorf("-dir %s is not a directory", *dir)}
	}
	opt := fetch.Options{Dir: *dir, BaseURL: *base, CWEURL: *cwe, EPSSURL: *epss, CVE5URL: *cve5, FirstYear: first, LastYear: last,
		MaxAge: time.Duration(maxAge), Timeout: *timeout, Attempts: *attempts,
		Log: func(line string) { fmt.Fprintln(stderr, "vulnd fetch: "+line) }}
	if isTerminal(stderr) {
		// On a terminal, a progress line rewritten in place; the file's
		// log line then replaces it.
		opt.Progress = func(file string, done, total int64) {
			if total > 0 {
				fmt.Fprintf(stderr, "\rvulnd fetch: %s %.1f/%.1f MB\x1b[K", file, float64(done)/1e6, float64(total)/1e6)
			} else {
				fmt.Fprintf(stderr, "\rvulnd fetch: %s %.1f MB\x1b[K", file, float64(done)/1e6)
			}
		}
		log := opt.Log
		opt.Log = func(line string) { fmt.Fprint(stderr, "\r\x1b[K"); log(line) }
	}
	// SIGINT or SIGTERM stops the run: the file being fetched keeps its
	// old copy, the ones before it are complete.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := fetch.Run(ctx, opt)
	if err != nil && opt.Progress != nil {
		fmt.Fprint(stderr, "\r\x1b[K")
	}
	var se *fetch.SourceError
	if err != nil && !errors.As(err, &se) {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d fetched, %d unchanged\n", *dir, len(res.Fetched), len(res.Unchanged))
	if se != nil {
		return exitError{fmt.Errorf("%w (NVD's feeds are current; each source that failed keeps its old copy)", se), exitSourceFailed}
	}
	return nil
}

// exitSourceFailed is vulnd fetch's exit status when NVD's feeds are
// current but another source failed: a build may go on.
const exitSourceFailed = 3

// parseYears reads -years: "FIRST-LAST", one year, or "all" (2002 to
// this year).
func parseYears(s string, thisYear int) (first, last int, err error) {
	if s == "all" {
		return fetch.FirstYear, thisYear, nil
	}
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		b = a
	}
	first, err1 := strconv.Atoi(a)
	last, err2 := strconv.Atoi(b)
	switch {
	case err1 != nil || err2 != nil:
		return 0, 0, fmt.Errorf("-years %q: want FIRST-LAST (such as 2002-%d), one year, or all", s, thisYear)
	case first < fetch.FirstYear:
		return 0, 0, fmt.Errorf("-years %q: NVD's yearly feeds start at %d (which holds 1999 to 2002)", s, fetch.FirstYear)
	case first > last:
		return 0, 0, fmt.Errorf("-years %q: the first is after the last", s)
	case last > thisYear:
		return 0, 0, fmt.Errorf("-years %q: %d is in the future; NVD's last yearly feed is %d's", s, last, thisYear)
	}
	return first, last, nil
}

// days is a flag.Value for a duration given in days ("8d", "1.5d") or as
// Go writes durations ("36h").
type days time.Duration

func (d *days) String() string {
	if *d > 0 && time.Duration(*d)%(24*time.Hour) == 0 {
		return strconv.FormatInt(int64(time.Duration(*d)/(24*time.Hour)), 10) + "d"
	}
	return time.Duration(*d).String()
}

func (d *days) Set(s string) error {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		f, err := strconv.ParseFloat(n, 64)
		if err != nil || f < 0 || f > 100*365 {
			return fmt.Errorf("%q is not a number of days", s)
		}
		*d = days(time.Duration(f * float64(24*time.Hour)))
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is neither days (8d) nor a duration (36h)", s)
	}
	*d = days(v)
	return nil
}

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// checkURL refuses, as a bad command line, a URL flag's value that is not
// an absolute http or https URL with a host: it could never be fetched,
// and trying it five times over ten seconds says nothing more.
func checkURL(flag, s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return usageError{fmt.Errorf("%s %q is not a URL: %v", flag, s, errors.Unwrap(err))}
	case u.Scheme != "http" && u.Scheme != "https" || u.Host == "":
		return usageError{fmt.Errorf("%s %q is not an http:// or https:// URL", flag, s)}
	}
	return nil
}
