// Command vulnd builds, checks and serves vulnd snapshots.
//
//	vulnd build -cwe CWE_CATALOG -o OUT_DIR [flags] FEED...
//	vulnd serve -snapshot DIR [-addr HOST:PORT] [-admin-addr HOST:PORT] [flags]
//	vulnd validate DIR
//	vulnd feeds [-epss] DIR...
//	vulnd fetch -dir DIR [flags]
//	vulnd publish -to oci://REGISTRY/REPOSITORY:TAG SNAPSHOT
//	vulnd version
//	vulnd help [COMMAND]
//
// serve reloads the snapshot directory on SIGHUP (keeping the old one if
// the new one does not load) and drains and exits 0 on SIGTERM or SIGINT.
// build, validate, feeds, fetch and publish ignore SIGHUP, so a reload
// meant for servers does not kill them.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/vulnd/vulnd/loader"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// usage is what vulnd, vulnd help and vulnd -h print.
const usage = `vulnd serves NVD's CVE records and MITRE's CWE catalog as a read-only
HTTP/JSON API, from a snapshot directory that vulnd build makes.

Usage:
  vulnd build -cwe CWE_CATALOG -o OUT_DIR [flags] FEED...
  vulnd serve -snapshot DIR [-addr HOST:PORT] [-admin-addr HOST:PORT] [flags]
  vulnd validate DIR
  vulnd feeds [-epss] DIR...
  vulnd fetch -dir DIR [flags]
  vulnd publish -to oci://REGISTRY/REPOSITORY:TAG SNAPSHOT
  vulnd version
  vulnd help [COMMAND]

Commands:
  build     build a snapshot directory from NVD feeds, CVE JSON 5 records and the CWE catalog
  serve     serve a snapshot; SIGHUP loads it again, SIGTERM drains and exits
  validate  check a snapshot without serving it; exit 0 if it would load
  feeds     list the NVD feeds and CVE JSON 5 record files in directories, in the order build wants
  fetch     mirror NVD's feeds, MITRE's CWE catalog, FIRST's EPSS and cvelistV5's bundles, only what changed
  publish   push a snapshot to an OCI registry, for replicas that serve -pull
  version   print what this binary was built from (also: vulnd --version)
  help      print this, or with COMMAND, that command's arguments and flags

"vulnd help COMMAND" or "vulnd COMMAND -h" describes one command.
`

// commands are the commands by name.
var commands = map[string]func(args []string, stdout, stderr io.Writer) error{
	"build":    cmdBuild,
	"serve":    cmdServe,
	"validate": cmdValidate,
	"feeds":    cmdFeeds,
	"fetch":    cmdFetch,
	"publish":  cmdPublish,
	"version":  cmdVersion,
}

// run executes one command line and returns the exit status: 0 on
// success (help included), 1 when the command failed, 2 for a bad command
// line. Failures and bad command lines are one line on stderr.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		// A person who types just "vulnd" wants to know what it does.
		fmt.Fprint(stdout, usage)
		return 0
	}
	name, rest := args[0], args[1:]
	switch name {
	case "help", "-h", "-help", "--help":
		return runHelp(rest, stdout, stderr)
	case "-version", "--version":
		name = "version"
	}
	cmd, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "vulnd: unknown command %q; vulnd help lists the commands\n", name)
		return 2
	}
	if name != "serve" {
		// make refresh, or a careless "pkill -HUP vulnd", must not kill a
		// build or a check: only serve acts on SIGHUP.
		signal.Ignore(syscall.SIGHUP)
	}
	err := cmd(rest, stdout, stderr)
	var ue usageError
	var xe exitError
	switch {
	case err == nil, errors.Is(err, errHelpShown):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "vulnd %s: %v; see vulnd help %s\n", name, err, name)
		return 2
	case errors.As(err, &xe):
		fmt.Fprintf(stderr, "vulnd %s: %s\n", name, errorLine(err))
		return xe.code
	default:
		fmt.Fprintf(stderr, "vulnd %s: %s\n", name, errorLine(err))
		return 1
	}
}

// errorLine is err's message for the command line. The loader's errors
// start "loader: ", which the line's "vulnd COMMAND: " replaces.
func errorLine(err error) string {
	return strings.Replace(err.Error(), "loader: ", "", 1)
}

// runHelp is vulnd help [COMMAND].
func runHelp(args []string, stdout, stderr io.Writer) int {
	switch {
	case len(args) == 0 || len(args) == 1 && args[0] == "help":
		fmt.Fprint(stdout, usage)
		return 0
	case len(args) > 1:
		fmt.Fprintf(stderr, "vulnd help: unexpected argument %q; vulnd help takes one command name\n", args[1])
		return 2
	}
	if _, ok := commands[args[0]]; !ok {
		fmt.Fprintf(stderr, "vulnd help: unknown command %q; vulnd help lists the commands\n", args[0])
		return 2
	}
	return run([]string{args[0], "-h"}, stdout, stderr)
}

// cmdVersion prints what the binary was built from: module version, VCS
// revision and time (with "+dirty" for uncommitted changes) and Go
// version, all from the build info the Go toolchain embeds.
func cmdVersion(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if err := checkArgs(fs, "", 0, 0); err != nil {
		return err
	}
	fmt.Fprintln(stdout, versionLine(debug.ReadBuildInfo()))
	return nil
}

// versionLine formats build info as one line, for example
// "vulnd (devel) rev 76bfc89c1a2b+dirty 2026-11-22T23:04:06Z go1.26.8".
func versionLine(bi *debug.BuildInfo, ok bool) string {
	if !ok {
		return "vulnd (no build info)"
	}
	line := "vulnd " + bi.Main.Version
	settings := map[string]string{}
	for _, s := range bi.Settings {
		settings[s.Key] = s.Value
	}
	if rev := settings["vcs.revision"]; rev != "" {
		line += " rev " + rev[:min(12, len(rev))]
		if settings["vcs.modified"] == "true" {
			line += "+dirty"
		}
	}
	if t := settings["vcs.time"]; t != "" {
		line += " " + t
	}
	return line + " " + bi.GoVersion
}

// exitError is a failure with an exit status of its own, which the
// command's help explains.
type exitError struct {
	error
	code int
}

// usageError is a bad command line (exit 2) rather than a failure (exit 1).
type usageError struct{ error }

// errHelpShown is returned by parseFlags once it printed the command's
// help for -h: exit 0.
var errHelpShown = errors.New("help shown")

// help is what vulnd help COMMAND prints around the command's flags.
type help struct {
	usage string      // the command line, after "vulnd "
	about string      // what the command does
	args  [][2]string // each argument and what it is
}

var helps = map[string]help{
	"build": {
		usage: "build -cwe CWE_CATALOG -o OUT_DIR [-previous PREV_DIR] [-epss EPSS_CSV] [-time RFC3339] [flags] FEED...",
		about: `Reads NVD CVE API 2.0 feed files, the CVE Program's CVE JSON 5 records
(cvelistV5, CISA's vulnrichment) and MITRE's CWE catalog and writes the
snapshot directory OUT_DIR, atomically: a failed build leaves no
half-written OUT_DIR. With -previous, compares with the snapshot in
PREV_DIR, keeps its reports and adds one for what changed; the new report
is kept even when -time is older than the kept ones. PREV_DIR cannot be
OUT_DIR: build aside (-o DIR.next) and move it into place. Replacing a
snapshot that has reports without -previous starts the report history
over, and says so on stderr.

The refresh guard: with -previous, a build is refused (exit 1, one line
saying what tripped) when it has more than 5 % fewer CVEs than PREV_DIR
(an empty, cut-short or partial feed), or when any CVE's lastModified is
older than in PREV_DIR (an older feed: NVD never goes back in time; a
CVE with a CVE JSON 5 record counts its record's dateUpdated when that is
later, so NVD's record taking over from it is no step back).
-force lets such a build through.

EPSS: -epss reads FIRST's daily file (its "#model_version:…,score_date:…"
line first; a bad row stops the build with one line naming the file and
line) and keeps the scores of the snapshot's CVEs, served in
/cve/{name}/details and used by epss_min, percentile_min, sort=epss and
sort=risk. Without -epss, a build with -previous keeps PREV_DIR's scores
(a refresh of the CVEs alone does not drop them). With both, a CVE whose
score moved by 0.1 or more gets an "EPSS changed" event, except when
PREV_DIR had no scores or FIRST's model_version changed (then none, and a
warning on stderr).

Flags go before the feed files. Prints the counts on stdout and each
stage's time on stderr; on failure, one line naming the file and the
problem.`,
		args: [][2]string{
			{"FEED...", "NVD CVE API 2.0 feed files and CVE JSON 5 record files, one or more.\nFeeds: plain JSON, gzip, zstd, or a zip holding one JSON; the format is\nfound from the content, not the name.\nWhen a CVE is in several, the latest lastModified wins, and on a tie the\nfile given later (vulnd feeds DIR lists a directory's in that order).\nAmong them, CVE JSON 5 record files, found by content too: a record, a\nJSON array of records, either compressed, or a zip of record files at\nany depth (cvelistV5's bundle). Two records of a CVE: the latest\ndateUpdated wins, on a tie the file given later. A CVE NVD has keeps\nNVD's fields and gains its record's affected entries and SSVC (in\n/cve/{name}/details); a CVE only a record has is served from it. A pipe\nis read as an NVD feed."},
		},
	},
	"serve": {
		usage: "serve -snapshot DIR [-addr HOST:PORT] [-admin-addr HOST:PORT] [-pull oci://REGISTRY/REPOSITORY:TAG] [flags]",
		about: `Loads the snapshot in DIR, then serves the API on -addr; the API port
answers only once the snapshot is loaded. The admin listener (-admin-addr)
serves /healthz, /readyz and /metrics. SIGHUP loads DIR again and swaps
it in; if it does not load, the error is logged and the old snapshot
keeps serving. SIGTERM or SIGINT: /readyz turns 503, serving goes on for
-drain-wait, then the listeners close, in-flight requests finish (up to
-drain-timeout) and vulnd exits 0. A first load that fails exits 1.
With -pull oci://REGISTRY/REPOSITORY:TAG (what vulnd publish pushed), the
tag is checked at start, every -pull-every and on SIGHUP; a new snapshot
is downloaded beside DIR, loaded with every check, put in DIR's place and
swapped in, so a restart finds it without the registry. An empty DIR is
filled from the tag first. A registry that is down or a bad artifact is
logged and counted (vulnd_pull_total) and the old snapshot keeps serving.`,
	},
	"validate": {
		usage: "validate DIR",
		about: `Checks the snapshot in DIR (format version, checksums, decodability,
internal consistency) without serving it. Exit 0, with its counts on
stdout, if serve would load it; otherwise 1, with one line saying why.`,
		args: [][2]string{{"DIR", "a snapshot directory, as vulnd build -o writes"}},
	},
	"feeds":   feedsHelp,
	"fetch":   fetchHelp,
	"publish": publishHelp,
	"version": {
		usage: "version",
		about: `Prints the module version, VCS revision and time, and Go version this
binary was built from, on one line. vulnd --version does the same.`,
	},
}

// newFlagSet returns a FlagSet that prints nothing itself: parseFlags and
// run say what went wrong, in one line.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parseFlags parses args into fs. -h or -help prints the command's help on
// stdout and returns errHelpShown; a bad flag is a usageError.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	err := fs.Parse(args)
	switch {
	case errors.Is(err, flag.ErrHelp):
		printHelp(stdout, fs)
		return errHelpShown
	case err != nil:
		return usageError{err}
	}
	return nil
}

// printHelp prints fs's command's help: usage, what it does, its
// arguments and every flag with its default.
func printHelp(w io.Writer, fs *flag.FlagSet) {
	h := helps[fs.Name()]
	fmt.Fprintf(w, "Usage: vulnd %s\n\n%s\n", h.usage, h.about)
	if len(h.args) > 0 {
		fmt.Fprintf(w, "\nArguments:\n")
		for _, a := range h.args {
			fmt.Fprintf(w, "  %s\n    \t%s\n", a[0], strings.ReplaceAll(a[1], "\n", "\n    \t"))
		}
	}
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		fmt.Fprintf(w, "\nFlags: none\n")
		return
	}
	fmt.Fprintf(w, "\nFlags:\n")
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// checkArgs checks fs's arguments after the flags: at least min and at
// most max (-1: no limit). what names them in messages ("DIR"). A flag
// after them (which the flag package leaves unparsed) is refused too.
func checkArgs(fs *flag.FlagSet, what string, min, max int) error {
	for _, a := range fs.Args() {
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && (fs.Lookup(name) != nil || name == "h" || name == "help") {
			if what == "" {
				what = "the arguments"
			}
			return usageError{fmt.Errorf("flag %s after %s: flags go first", a, what)}
		}
	}
	switch {
	case fs.NArg() < min:
		return usageError{fmt.Errorf("no %s given", what)}
	case max >= 0 && fs.NArg() > max:
		return usageError{fmt.Errorf("unexpected argument %q", fs.Arg(max))}
	}
	return nil
}

func cmdBuild(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("build")
	cwe := fs.String("cwe", "", "MITRE's CWE catalog, `CWE_CATALOG`: cwec_v*.xml or the .xml.zip MITRE ships (required)")
	out := fs.String("o", "", "snapshot directory to write, `OUT_DIR` (required)")
	prev := fs.String("previous", "", "previous snapshot directory, `PREV_DIR`, to compare with and keep the reports of")
	epss := fs.String("epss", "", "FIRST's daily EPSS file, `EPSS_CSV` (epss_scores-DATE.csv, plain or .gz): the scores of the snapshot's CVEs; without it, -previous's scores are kept")
	at := fs.String("time", "", "build time of the new report, `RFC3339` (default: now)")
	keep := fs.Int("keep-reports", loader.DefaultKeepReports, "how many reports to keep: the new one, then the newest of the others")
	aliases := fs.String("aliases", "", "alias file, `FILE`, mapping the vendor and product names of CVE JSON 5 affected entries onto NVD's CPE names, one \"cna-vendor/cna-product nvd-vendor/nvd-product # reason\" a line; replaces the default one (loader/aliases.txt)")
	full := fs.Bool("full", false, "with -previous, read every input even when only some feeds changed since PREV_DIR was built (the snapshot is the same, byte for byte)")
	force := fs.Bool("force", false, "build even a refresh the guard refuses (see above); and replace OUT_DIR even if it is a non-empty directory that is not a vulnd snapshot, deleting what it holds (never a file, an input or PREV_DIR)")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if err := checkArgs(fs, "FEED...", 0, -1); err != nil {
		return err
	}
	switch {
	case *cwe == "":
		return usageError{errors.New("-cwe is required")}
	case *out == "":
		return usageError{errors.New("-o is required")}
	case fs.NArg() == 0:
		return usageError{errors.New("no NVD feed or CVE JSON 5 files given")}
	}
	if *keep < 1 {
		return usageError{errors.New("-keep-reports must be at least 1")}
	}
	t := time.Now().UTC().Truncate(time.Second)
	if *at != "" {
		var err error
		if t, err = time.Parse(time.RFC3339, *at); err != nil {
			return usageError{fmt.Errorf("-time %q is not RFC 3339 (e.g. 2026-11-22T06:00:00Z)", *at)}
		}
	}
	start := time.Now()
	m, err := loader.Build(loader.BuildOptions{
		CWECatalog: *cwe, Feeds: fs.Args(), Out: *out, Previous: *prev, EPSS: *epss, KeepReports: *keep, Time: t, Force: *force, Aliases: *aliases, Full: *full,
		Stage: func(name string, took time.Duration, detail string) {
			if detail != "" {
				detail = " " + detail
			}
			fmt.Fprintf(stderr, "vulnd build: %s: %s%s\n", name, took.Round(time.Millisecond), detail)
		},
		Warn: func(line string) { fmt.Fprintf(stderr, "vulnd build: warning: %s\n", line) },
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: %s, %s in %s\n", *out, countsLine(m.Counts),
		plural(m.Counts.Alerts, "alert", "alerts"), time.Since(start).Round(time.Millisecond))
	return nil
}

func cmdValidate(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("validate")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if err := checkArgs(fs, "DIR", 1, 1); err != nil {
		return err
	}
	m, err := loader.Validate(fs.Arg(0))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: ok: format %d, built %s, %s\n", fs.Arg(0), m.Version, m.BuiltAt, countsLine(m.Counts))
	return nil
}
