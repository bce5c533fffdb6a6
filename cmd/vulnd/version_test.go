package main

import (
	"bytes"
	"runtime/debug"
	"strings"
	"testing"
)

func TestVersionLine(t *testing.T) {
	bi := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/vulnd/vulnd", Version: "v1.2.3"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "76bfc89c1a2b3c4d5e6f708192a3b4c5d6e7f809"},
			{Key: "vcs.time", Value: "2026-11-22T23:04:06Z"},
			{Key: "vcs.modified", Value: "true"},
		},
	}
	for _, tc := range []struct {
		bi   *debug.BuildInfo
		ok   bool
		want string
	}{
		{bi, true, "vulnd v1.2.3 rev 76bfc89c1a2b+dirty 2026-11-22T23:04:06Z go1.26.8"},
		{&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}}, true, "vulnd (devel) go1.26.8"},
		{nil, false, "vulnd (no build info)"},
	} {
		if got := versionLine(tc.bi, tc.ok); got != tc.want {
			t.Errorf("versionLine = %q, want %q", got, tc.want)
		}
	}
}

func TestVersionCommand(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"version"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
	if got := out.String(); !strings.HasPrefix(got, "vulnd ") || !strings.Contains(got, " go1.") || strings.Count(got, "\n") != 1 {
		t.Errorf("version printed %q", got)
	}
	if code := run([]string{"version", "x"}, &out, &errb); code != 2 {
		t.Errorf("version x: exit %d, want 2", code)
	}
}
