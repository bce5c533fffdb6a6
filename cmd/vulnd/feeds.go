package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/vulnd/vulnd/loader"
	"github.com/vulnd/vulnd/loader/fetch"
)

var feedsHelp = help{
	usage: "feeds [-epss] DIR...",
	about: `Prints the input files directly in each DIR that vulnd build takes as
FEED..., one path a line, found by content, not by name: first the NVD
CVE API 2.0 feeds (gzip, zstd, zip or plain JSON holding an NVD CVE feed
object) by name, then those whose name holds "modified", then "recent",
the order vulnd build should read them in; given several DIRs, each DIR's
by name, one DIR after the other, then the modified feeds of all, then
the recent ones. Then the CVE JSON 5 record files (a record, an array of
records, compressed or not, or a zip of record files at any depth, as
vulnd fetch keeps cvelistV5's bundles), each DIR's by name, so a day's
baseline comes before its deltas, in hour order.
EPSS files (their first line #model_version:...,score_date:...) are not
FEED... inputs and not listed; with -epss, only the newest of them (by
score_date; on a tie, the later DIR's) is printed, for vulnd build -epss.
Other files, and hidden ones (a name starting with ".", as vulnd fetch
names a download in progress), are named on stderr as skipped, except
those vulnd fetch keeps beside the feeds: NAME.meta, .vulnd-fetch.json,
cwec_latest.xml.zip and a bundle's unfinished .NAME.part. Exit 1 if the
DIRs hold no feed and no record file (with -epss: no EPSS file).`,
	args: [][2]string{{"DIR...", "directories to look in, one or more (not recursive)"}},
}

func cmdFeeds(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("feeds")
	epssOnly := fs.Bool("epss", false, "print only the newest EPSS file, for vulnd build -epss")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if err := checkArgs(fs, "DIR", 1, -1); err != nil {
		return err
	}
	var all, records []string
	var epss string
	var epssDate time.Time
	for _, dir := range fs.Args() {
		feeds, others, err := loader.FeedFiles(dir)
		if err != nil {
			return err
		}
		var recs []string
		for _, p := range others {
			name := filepath.Base(p)
			// What vulnd fetch keeps beside the feeds (their .meta, its
			// state, the catalog, a bundle half downloaded) is expected
			// there, not news.
			if fetch.Keeps(name) {
				continue
			}
			if !strings.HasPrefix(name, ".") {
				ok, err := loader.IsCVE5(p)
				if err != nil {
					return err
				}
				if ok {
					recs = append(recs, p)
					continue
				}
				if d, ok := fetch.EPSSHeader(p); ok {
					if epss == "" || !d.Before(epssDate) {
						epss, epssDate = p, d
					}
					continue
				}
			}
			if !*epssOnly {
				fmt.Fprintf(stderr, "vulnd feeds: skipped %s: not an NVD CVE feed, CVE JSON 5 record or EPSS file\n", p)
			}
		}
		if len(feeds) == 0 && len(recs) == 0 && !*epssOnly {
			return fmt.Errorf("no NVD CVE feed or CVE JSON 5 record files in %s", dir)
		}
		all = append(all, feeds...)
		records = append(records, recs...) // by name, as FeedFiles lists them
	}
	if *epssOnly {
		if epss == "" {
			return errors.New("no EPSS file in " + strings.Join(fs.Args(), " "))
		}
		fmt.Fprintln(stdout, epss)
		return nil
	}
	// modified and recent last across all the directories, not within
	// each: they must win over every yearly feed.
	loader.SortFeeds(all)
	for _, p := range append(all, records...) {
		fmt.Fprintln(stdout, p)
	}
	return nil
}
