package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"

	"github.com/vulnd/vulnd/loader/fetch"
)

// cmdFetch is vulnd fetch: mirror NVD's feeds and MITRE's catalog.
func cmdFetch(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("fetch")
	dir := fs.String("dir", "", "directory to mirror into, `DIR` (required; must exist)")
	base := fs.String("base-url", fetch.DefaultBaseURL, "where the feeds and their .meta files are, `URL` (a site mirror may serve them)")
	cwe := fs.String("cwe-url", fetch.DefaultCWEURL, "the CWE catalog's `URL`; - to skip it")
	years := fs.String("years", "", "the yearly feeds, `FIRST-LAST` (default 2002 to this year)")
	maxAge := fs.Duration("max-age", fetch.DefaultMaxAge, "check the yearly feeds again when the last full run is older than this (NVD's modified feed covers 8 days)")
	attempts := fs.Int("attempts", fetch.DefaultAttempts, "tries per request, with backoff, on network errors, 429 and 5xx")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if err := checkArgs(fs, "", 0, 0); err != nil {
		return err
	}
	if *dir == "" {
		return usageError{errors.New("-dir is required")}
	}
	opt := fetch.Options{Dir: *dir, BaseURL: *base, CWEURL: *cwe, MaxAge: *maxAge, Attempts: *attempts,
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
	if *years != "" {
		first, last, ok := strings.Cut(*years, "-")
		f, err1 := strconv.Atoi(first)
		l, err2 := strconv.Atoi(last)
		if !ok || err1 != nil || err2 != nil || f < 1999 || f > l {
			return usageError{fmt.Errorf("-years %q: want FIRST-LAST, such as 2002-2026", *years)}
		}
		opt.FirstYear, opt.LastYear = f, l
	}
	// SIGINT or SIGTERM stops the run; the file being fetched is not
	// written, the ones before it are complete.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := fetch.Run(ctx, opt)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %d fetched, %d unchanged\n", *dir, len(res.Fetched), len(res.Unchanged))
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
