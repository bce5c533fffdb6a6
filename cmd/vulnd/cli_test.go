package main

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestHelp: every way of asking for help prints it on stdout, exits 0 and
// names every argument and flag of what it describes.
func TestHelp(t *testing.T) {
	top := []string{"vulnd build -cwe CWE_CATALOG -o OUT_DIR", "FEED...", "vulnd serve -snapshot DIR",
		"vulnd validate DIR", "vulnd feeds [-epss] DIR...", "vulnd version", "vulnd help [COMMAND]"}
	build := []string{"Usage: vulnd build", "FEED...", "-cwe CWE_CATALOG", "-o OUT_DIR", "-previous PREV_DIR",
		"-time RFC3339", "-keep-reports int", "(default 100)"}
	serve := []string{"Usage: vulnd serve", "-snapshot DIR", "-addr HOST:PORT", `(default "127.0.0.1:8080")`,
		"-admin-addr HOST:PORT", "-page-size int", "-drain-wait duration", "-drain-timeout duration",
		"-log-format format", "-access-log", "-cache-control string", "-pidfile PATH", "-pprof"}
	validate := []string{"Usage: vulnd validate DIR", "Arguments:\n  DIR\n", "Flags: none"}
	feeds := []string{"Usage: vulnd feeds [-epss] DIR...", "Arguments:\n  DIR...\n", "modified", "recent", "CVE JSON 5 record", "  -epss\n"}
	version := []string{"Usage: vulnd version", "Flags: none"}
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{nil, top},
		{[]string{"help"}, top},
		{[]string{"-h"}, top},
		{[]string{"--help"}, top},
		{[]string{"help", "help"}, top},
		{[]string{"help", "build"}, build},
		{[]string{"build", "-h"}, build},
		{[]string{"build", "-cwe", "x", "-help"}, build},
		{[]string{"help", "serve"}, serve},
		{[]string{"serve", "-h"}, serve},
		{[]string{"serve", "--help"}, serve},
		{[]string{"help", "validate"}, validate},
		{[]string{"validate", "-h"}, validate},
		{[]string{"help", "feeds"}, feeds},
		{[]string{"feeds", "-h"}, feeds},
		{[]string{"help", "version"}, version},
		{[]string{"version", "-h"}, version},
	} {
		t.Run(strings.Join(append([]string{"vulnd"}, tc.args...), " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run(tc.args, &out, &errb); code != 0 || errb.Len() != 0 {
				t.Errorf("exit %d, stderr %q; want 0 and nothing", code, errb.String())
			}
			for _, w := range tc.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("help lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
	for _, args := range [][]string{{"--version"}, {"-version"}, {"version"}} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 0 || errb.Len() != 0 || !strings.HasPrefix(out.String(), "vulnd ") || strings.Count(out.String(), "\n") != 1 {
			t.Errorf("vulnd %s: exit %d, stdout %q, stderr %q; want 0 and one line", args[0], code, out.String(), errb.String())
		}
	}
}

// TestBadCommandLine: each is exit 2 with one line on stderr, nothing on
// stdout.
func TestBadCommandLine(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "-snapshot", "s", "extra"}, `vulnd serve: unexpected argument "extra"; see vulnd help serve`},
		{[]string{"serve", "snapshots/demo"}, `vulnd serve: unexpected argument "snapshots/demo": the snapshot is -snapshot DIR; see vulnd help serve`},
		{[]string{"serve", "-x"}, `vulnd serve: flag provided but not defined: -x; see vulnd help serve`},
		{[]string{"serve", "-snapshot"}, `vulnd serve: flag needs an argument: -snapshot; see vulnd help serve`},
		{[]string{"serve", "-snapshot", "s", "-page-size", "x"}, `vulnd serve: invalid value "x" for flag -page-size: parse error; see vulnd help serve`},
		{[]string{"serve"}, `vulnd serve: -snapshot is required; see vulnd help serve`},
		{[]string{"serve", "-snapshot", "s", "-pprof"}, `vulnd serve: -pprof needs -admin-addr: profiles are served on the admin listener only; see vulnd help serve`},
		{[]string{"serve", "-snapshot", "s", "-addr", "127.0.0.1:8080", "-admin-addr", "127.0.0.1:8080"},
			`vulnd serve: -admin-addr 127.0.0.1:8080 is -addr 127.0.0.1:8080: the admin listener needs a port of its own; see vulnd help serve`},
		{[]string{"serve", "-snapshot", "s", "-addr", ":8080", "-admin-addr", "0.0.0.0:8080"},
			`vulnd serve: -admin-addr 0.0.0.0:8080 is -addr :8080: the admin listener needs a port of its own; see vulnd help serve`},
		{[]string{"version", "extra"}, `vulnd version: unexpected argument "extra"; see vulnd help version`},
		{[]string{"--version", "extra"}, `vulnd version: unexpected argument "extra"; see vulnd help version`},
		{[]string{"version", "-v"}, `vulnd version: flag provided but not defined: -v; see vulnd help version`},
		{[]string{"validate"}, `vulnd validate: no DIR given; see vulnd help validate`},
		{[]string{"validate", "a", "b"}, `vulnd validate: unexpected argument "b"; see vulnd help validate`},
		{[]string{"feeds"}, `vulnd feeds: no DIR given; see vulnd help feeds`},
		{[]string{"build", "-cwe", "c.xml", "-o", "out"}, `vulnd build: no NVD feed or CVE JSON 5 files given; see vulnd help build`},
		{[]string{"build", "-cwe", "c.xml", "feed.json", "-o", "out"}, `vulnd build: flag -o after FEED...: flags go first; see vulnd help build`},
		{[]string{"build", "-cwe", "c.xml", "-o", "out", "-time", "today", "f.json"}, `vulnd build: -time "today" is not RFC 3339 (e.g. 2026-11-22T06:00:00Z); see vulnd help build`},
		{[]string{"nope"}, `vulnd: unknown command "nope"; vulnd help lists the commands`},
		{[]string{"help", "nope"}, `vulnd help: unknown command "nope"; vulnd help lists the commands`},
		{[]string{"help", "build", "serve"}, `vulnd help: unexpected argument "serve"; vulnd help takes one command name`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(tc.args, &out, &errb)
			if diff := cmp.Diff(struct {
				Code           int
				Stdout, Stderr string
			}{2, "", tc.want + "\n"}, struct {
				Code           int
				Stdout, Stderr string
			}{code, out.String(), errb.String()}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestErrorLines: a failure is one line naming the file and the problem,
// with no package prefix.
func TestErrorLines(t *testing.T) {
	dir := t.TempDir()
	sample, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "data", "nvd", "nvdcve-2.0-sample.json.gz"))
	if err != nil {
		t.Fatalf("real test data missing: %v", err)
	}
	cut := filepath.Join(dir, "cut.json.gz")
	if err := os.WriteFile(cut, sample[:len(sample)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	cwe := filepath.Join("..", "..", "..", "shared", "data", "cwe", "cwec_v4.15.xml.zip")
	missing := filepath.Join(dir, "missing")
	aliases := filepath.Join(dir, "aliases.txt")
	if err := os.WriteFile(aliases, []byte("linux/linux linux/linux_kernel # fine\nacme/widget\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		prefix string // of the last stderr line
		suffix string
	}{
		{"bad alias file", []string{"build", "-cwe", cwe, "-o", filepath.Join(dir, "out"), "-aliases", aliases, cut},
			"vulnd build: aliases " + aliases + ":2: want cna-vendor/cna-product nvd-vendor/nvd-product, found 1 fields", ""},
		{"cut feed", []string{"build", "-cwe", cwe, "-o", filepath.Join(dir, "out"), cut},
			"vulnd build: feed " + cut + ": record ", ": read: unexpected EOF"},
		{"missing feed", []string{"build", "-cwe", cwe, "-o", filepath.Join(dir, "out"), missing},
			"vulnd build: open " + missing + ": no such file or directory", ""},
		{"missing snapshot", []string{"validate", missing},
			"vulnd validate: snapshot " + missing + ": open " + missing + "/manifest.json: no such file or directory", ""},
		{"serve, first load fails", []string{"serve", "-snapshot", missing, "-addr", "127.0.0.1:0"},
			"vulnd serve: load failed: snapshot " + missing + ": open " + missing + "/manifest.json: no such file or directory", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run(tc.args, &out, &errb); code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			lines := strings.Split(strings.TrimSuffix(errb.String(), "\n"), "\n")
			last := lines[len(lines)-1]
			if !strings.HasPrefix(last, tc.prefix) || !strings.HasSuffix(last, tc.suffix) || strings.Contains(last, "loader:") {
				t.Errorf("last line %q, want %q...%q", last, tc.prefix, tc.suffix)
			}
			if strings.Contains(errb.String(), "reload failed") {
				t.Errorf("a first load reported as a reload:\n%s", errb.String())
			}
		})
	}
}

// TestFirstLoadFails: Main.Open says a first load failed, and does not
// log it as a reload that kept a snapshot it never had.
func TestFirstLoadFails(t *testing.T) {
	var logs bytes.Buffer
	m := &Main{Snapshot: filepath.Join(t.TempDir(), "none"), Addr: "127.0.0.1:0", Log: slog.New(slog.NewTextHandler(&logs, nil))}
	err := m.Open()
	if err == nil {
		m.Close()
		t.Fatal("Open of a missing snapshot: no error")
	}
	if !strings.HasPrefix(err.Error(), "load failed: ") {
		t.Errorf("error %q does not say the load failed", err)
	}
	if strings.Contains(logs.String(), "reload failed") || strings.Contains(logs.String(), "keeping the current snapshot") {
		t.Errorf("logged as a reload:\n%s", logs.String())
	}
	// Refused before loading: the same address twice.
	m = &Main{Snapshot: m.Snapshot, Addr: "127.0.0.1:18080", AdminAddr: "127.0.0.1:18080"}
	if err := m.Open(); err == nil || !strings.HasPrefix(err.Error(), "-admin-addr 127.0.0.1:18080 is -addr") {
		t.Errorf("Open with -admin-addr equal to -addr: %v", err)
	}
}

func TestSameListenAddr(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"127.0.0.1:8080", "127.0.0.1:8080", true},
		{":8080", "0.0.0.0:8080", true},
		{":8080", "127.0.0.1:8080", true},
		{"[::]:8080", "127.0.0.1:8080", true},
		{"127.0.0.1:80", "127.0.0.1:http", true},
		{"[::1]:8080", "[0:0:0:0:0:0:0:1]:8080", true},
		{"localhost:8080", "LOCALHOST:8080", true},
		{"127.0.0.1:8080", "127.0.0.1:9090", false},
		{"127.0.0.1:8080", "127.0.0.2:8080", false},
		{"127.0.0.1:0", "127.0.0.1:0", false},
		{":0", ":0", false},
	} {
		if got := sameListenAddr(tc.a, tc.b); got != tc.want {
			t.Errorf("sameListenAddr(%q, %q) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}
