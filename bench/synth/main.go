// Command synth writes a synthetic, deterministic data set for vulnd
// benchmarks and tests:
//
//	go run -C bench ./synth -o DIR -cves N [-seed S] [-next [-change-rate R]]
//	                        [-cve5 [-awaiting R] [-analysed-rate R]]
//
// Into DIR (created if missing) it writes
//
//   - nvdcve-2.0-YYYY.json.gz for every CVE year 1999..2026: gzip JSON
//     documents in the shape of NVD's CVE API 2.0 feed files
//     ({"resultsPerPage", "startIndex", "totalResults", "format",
//     "version", "timestamp", "vulnerabilities": [{"cve": {...}}]}),
//     N records in all, spread over the years roughly as NVD's are;
//   - cwec_synth.xml: a small CWE catalog in MITRE's XML schema holding
//     every CWE id the records cite except CWE-1321, left out on purpose.
//   - epss_scores-2026-11-22.csv.gz: FIRST's daily EPSS file for the
//     records that are not rejected (gzip CSV, "#model_version:…,
//     score_date:…" first): most scores tiny, a long tail, records with a
//     KEV entry high, percentiles those of the scores' ranks (epss.go).
//   - with -cve5, cves.zip: the CVE Program's JSON 5 record of every CVE
//     as the cvelistV5 bundle holds them (cves/YYYY/NNxxx/CVE-….json,
//     compact CVE JSON 5.1), CNA and ADP containers written as real CNAs
//     and CISA's ADP write them (cve5.go). A share of the CVEs is then
//     NVD's backlog: no configurations (nor NVD metrics or weaknesses) in
//     the feeds, so that their vendors and products come from the records.
//
// Flags:
//
//	-o DIR          output directory (required)
//	-cves N         total number of CVE records, 1..10000000 (required)
//	-seed S         data set seed, an unsigned integer (default 1)
//	-next           write the feeds of the next day instead (see below)
//	-change-rate R  with -next: share of the N records that change, 0..1
//	                (default 0.01)
//	-cve5           also write the records (default off: the feeds, the
//	                catalog and the EPSS file are then byte for byte those
//	                synth wrote before it had records)
//	-awaiting R     with -cve5: share of the records drawn into NVD's
//	                backlog, 0..1 (default 0.16: with the fifth of live
//	                CVEs that have no configurations anyway, a third)
//	-analysed-rate R  with -cve5 -next: share of the backlog NVD
//	                analyses on the next day, 0..1 (default 0.05)
//
// With -next the files are those of the day after, for change-tracking
// tests and benchmarks: feed timestamp 2026-11-23, the same N records of
// which round(R*N) changed on 2026-11-22 (a later lastModified and one
// or more of: description edited; CPE matches added, removed or all
// removed; a CVSS metric added, re-scored or removed; a CWE added or
// replaced; references added, removed or re-tagged; only vulnStatus
// moved on; rejected), plus max(3, round(N/1000)) new records numbered
// after the last 2026 id, at the end of nvdcve-2.0-2026.json.gz. Every
// other record is byte-identical to the one written without -next, and
// the catalog is the same. next.go details the changes and their odds.
// The EPSS file is epss_scores-2026-11-23.csv.gz: without the rows of
// the records rejected that day, with the new records', a few scores
// moved by 0.1 or more and many by less (epss.go). With -cve5, the
// records whose CNA or ADP side changed that day, and a share R of the
// others (new versions found affected), are updated on 2026-11-22; the
// new CVEs have records and no configurations; a share (-analysed-rate)
// of the backlog gets its configurations (Analyzed), its record as it was.
//
// The same flags always give byte-identical files. Records are
// generated and encoded one at a time, straight into the gzip streams,
// so memory does not grow with N but for the 4 bytes per record the EPSS
// file's percentiles take and, with -cve5, the zip's central directory
// (some 250 bytes a record); years are written in parallel, and the
// records' zip by batches made on every core.
//
// Bad flags print an error to stderr and exit with status 2; a failure
// while writing exits with status 1.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is the whole command; it returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("synth", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	out := fs.String("o", "", "output directory (required)")
	cves := fs.Int("cves", 0, fmt.Sprintf("total number of CVE records, 1..%d (required)", MaxCVEs))
	seed := fs.Uint64("seed", 1, "data set seed")
	next := fs.Bool("next", false, "write the feeds of the next day: some records changed, a few new")
	rate := fs.Float64("change-rate", DefaultChangeRate, "with -next: share of the records that change, 0..1")
	cve5 := fs.Bool("cve5", false, "also write the CVE JSON 5 record of every CVE, in "+CVE5Name)
	awaiting := fs.Float64("awaiting", DefaultAwaiting, "with -cve5: share of the records NVD has not analysed (no configurations), 0..1")
	analysed := fs.Float64("analysed-rate", DefaultAnalysedRate, "with -cve5 -next: share of those NVD analyses on the next day, 0..1")
	usage := func(err error) int {
		fmt.Fprintf(stderr, "synth: %v\nusage: synth -o DIR -cves N [-seed S] [-next [-change-rate R]] [-cve5 [-awaiting R] [-analysed-rate R]]\n", err)
		fs.SetOutput(stderr)
		fs.PrintDefaults()
		return 2
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return usage(errors.New("help requested"))
		}
		return usage(err)
	}
	switch {
	case fs.NArg() > 0:
		return usage(fmt.Errorf("unexpected argument %q", fs.Arg(0)))
	case *out == "":
		return usage(errors.New("-o DIR is required"))
	case *cves < 1 || *cves > MaxCVEs:
		return usage(fmt.Errorf("-cves must be in 1..%d, got %d", MaxCVEs, *cves))
	case !(*rate >= 0 && *rate <= 1):
		return usage(fmt.Errorf("-change-rate must be in 0..1, got %v", *rate))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case set["change-rate"] && !*next:
		return usage(errors.New("-change-rate needs -next"))
	case set["awaiting"] && !*cve5:
		return usage(errors.New("-awaiting needs -cve5"))
	case set["analysed-rate"] && !(*cve5 && *next):
		return usage(errors.New("-analysed-rate needs -cve5 and -next"))
	case !(*awaiting >= 0 && *awaiting <= 1):
		return usage(fmt.Errorf("-awaiting must be in 0..1, got %v", *awaiting))
	case !(*analysed >= 0 && *analysed <= 1):
		return usage(fmt.Errorf("-analysed-rate must be in 0..1, got %v", *analysed))
	}
	start := time.Now()
	cfg := Config{CVEs: *cves, Seed: *seed, Next: *next, ChangeRate: *rate}
	if *cve5 {
		cfg.CVE5, cfg.Awaiting, cfg.AnalysedRate = true, *awaiting, *analysed
	}
	plan, err := NewPlan(cfg)
	if err != nil {
		return usage(err)
	}
	if err := plan.WriteAll(*out); err != nil {
		fmt.Fprintf(stderr, "synth: %v\n", err)
		return 1
	}
	what := fmt.Sprintf("%d CVEs (seed %d)", *cves, *seed)
	if *next {
		what = fmt.Sprintf("%d CVEs (seed %d, next day: %d changed, %d new)", plan.Total(), *seed, plan.Changed(), plan.Added())
	}
	fmt.Fprintf(stdout, "synth: wrote %s to %s in %v\n", what, *out, time.Since(start).Round(time.Millisecond))
	return 0
}
