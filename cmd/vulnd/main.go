// Command vulnd builds, checks and serves vulnd snapshots.
//
//	vulnd build -cwe CWE_CATALOG -o OUT_DIR [-previous PREV_DIR] [-time RFC3339] FEED...
//	vulnd serve -snapshot DIR -addr HOST:PORT [-admin-addr HOST:PORT] [-page-size N] [-drain-wait D] ...
//	vulnd validate DIR
//	vulnd version
//
// serve reloads the snapshot directory on SIGHUP (keeping the old one if
// the new one does not load) and drains and exits 0 on SIGTERM or SIGINT.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"time"

	"github.com/vulnd/vulnd/loader"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `usage:
  vulnd build -cwe CWE_CATALOG -o OUT_DIR [-previous PREV_DIR] [-time RFC3339] [-keep-reports N] FEED...
  vulnd serve -snapshot DIR -addr HOST:PORT [-admin-addr HOST:PORT] [-page-size N]
              [-drain-wait D] [-drain-timeout D] [-log-format text|json] [-access-log] [-cache-control V]
  vulnd validate DIR
  vulnd version
`

// run executes one command line and returns the exit status.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "build":
		err = cmdBuild(args[1:], stdout, stderr)
	case "serve":
		err = cmdServe(args[1:], stderr)
	case "validate":
		err = cmdValidate(args[1:], stdout, stderr)
	case "version":
		err = cmdVersion(args[1:], stdout)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "vulnd: unknown command %q\n%s", args[0], usage)
		return 2
	}
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "vulnd %s: %v\n", args[0], err)
		return 2
	default:
		fmt.Fprintf(stderr, "vulnd %s: %v\n", args[0], err)
		return 1
	}
}

// cmdVersion prints what the binary was built from: module version, VCS
// revision and time (with "+dirty" for uncommitted changes) and Go
// version, all from the build info the Go toolchain embeds.
func cmdVersion(args []string, stdout io.Writer) error {
	if len(args) > 0 {
		return usageError{fmt.Errorf("takes no arguments, got %q", args)}
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

// usageError is a bad command line (exit 2) rather than a failure (exit 1).
type usageError struct{ error }

func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return usageError{errors.New("help requested")}
		}
		return usageError{err}
	}
	return nil
}

func cmdBuild(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("build", stderr)
	cwe := fs.String("cwe", "", "MITRE CWE catalog (cwec_v*.xml or .xml.zip)")
	out := fs.String("o", "", "snapshot directory to write")
	prev := fs.String("previous", "", "previous snapshot directory to compare with")
	at := fs.String("time", "", "build time, RFC 3339 (default: now)")
	keep := fs.Int("keep-reports", loader.DefaultKeepReports, "how many reports to keep, newest first")
	force := fs.Bool("force", false, "replace OUT_DIR even if it is a non-empty directory that is not a vulnd snapshot, deleting what it holds (never a file, an input or PREV_DIR)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	switch {
	case *cwe == "":
		return usageError{errors.New("-cwe is required")}
	case *out == "":
		return usageError{errors.New("-o is required")}
	case fs.NArg() == 0:
		return usageError{errors.New("no NVD feed files given")}
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
		CWECatalog: *cwe, Feeds: fs.Args(), Out: *out, Previous: *prev, KeepReports: *keep, Time: t, Force: *force,
		Stage: func(name string, took time.Duration, detail string) {
			fmt.Fprintf(stderr, "vulnd build: %s: %s %s\n", name, took.Round(time.Millisecond), detail)
		},
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %s: %d CVEs, %d CWEs, %d vendors, %d products, %d reports, %d alerts in %s\n",
		*out, m.Counts.CVEs, m.Counts.CWEs, m.Counts.Vendors, m.Counts.Products, m.Counts.Reports, m.Counts.Alerts,
		time.Since(start).Round(time.Millisecond))
	return nil
}

func cmdValidate(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("validate", stderr)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError{errors.New("want exactly one snapshot directory")}
	}
	m, err := loader.Validate(fs.Arg(0))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: ok: format %d, built %s, %d CVEs, %d CWEs, %d vendors, %d products, %d reports\n",
		fs.Arg(0), m.Version, m.BuiltAt, m.Counts.CVEs, m.Counts.CWEs, m.Counts.Vendors, m.Counts.Products, m.Counts.Reports)
	return nil
}
