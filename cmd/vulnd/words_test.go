package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuildOutputReadsRight: build's and validate's lines say "1 CVE",
// "1 report", "1 alert", and a stage line with nothing to add ends with
// its time, not a space.
func TestBuildOutputReadsRight(t *testing.T) {
	tmp := t.TempDir()
	cwe := sharedData(t, "cwe/cwec_v4.15.xml.zip")
	feed := func(name, modified, summary string) string {
		p := filepath.Join(tmp, name)
		body := fmt.Sprintf(`{"format":"NVD_CVE","version":"2.0","vulnerabilities":[{"cve":{"id":"CVE-2024-0001",`+
			`"published":"2024-01-01T00:00:00.000","lastModified":%q,"vulnStatus":"Analyzed",`+
			`"descriptions":[{"lang":"en","value":%q}],"references":[],`+
			`"configurations":[{"nodes":[{"operator":"OR","negate":false,"cpeMatch":[{"vulnerable":true,"criteria":"cpe:2.3:a:acme:widget:1.0:*:*:*:*:*:*:*","matchCriteriaId":"00000000-0000-0000-0000-000000000001"}]}]}]}}]}`,
			modified, summary)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	build := func(args ...string) (string, string) {
		t.Helper()
		var out, errb bytes.Buffer
		if code := run(append([]string{"build", "-cwe", cwe}, args...), &out, &errb); code != 0 {
			t.Fatalf("vulnd build %v: exit %d: %s", args, code, errb.String())
		}
		return out.String(), errb.String()
	}
	s1, s2 := filepath.Join(tmp, "s1"), filepath.Join(tmp, "s2")
	out, stages := build("-o", s1, "-time", "2026-11-22T06:00:00Z", feed("day1.json", "2024-01-02T00:00:00.000", "before"))
	if want := "wrote " + s1 + ": 1 CVE, 1427 CWEs, 1 vendor, 1 product, 0 reports, 0 alerts in "; !strings.HasPrefix(out, want) {
		t.Errorf("first build printed %q, want it to start %q", out, want)
	}
	out2, stages2 := build("-previous", s1, "-o", s2, "-time", "2026-11-23T06:00:00Z", feed("day2.json", "2024-01-03T00:00:00.000", "after"))
	if want := "wrote " + s2 + ": 1 CVE, 1427 CWEs, 1 vendor, 1 product, 1 report, 1 alert in "; !strings.HasPrefix(out2, want) {
		t.Errorf("second build printed %q, want it to start %q", out2, want)
	}
	for _, want := range []string{"read feeds: ", " 1 CVE from 1 file\n", "read previous: ", " 1 CVE, 0 reports\n", "diff: ", " 1 alert\n"} {
		if !strings.Contains(stages2, want) {
			t.Errorf("stage lines lack %q:\n%s", want, stages2)
		}
	}
	for _, line := range strings.Split(strings.TrimSuffix(stages+stages2, "\n"), "\n") {
		if strings.HasSuffix(line, " ") {
			t.Errorf("stage line %q ends with a space", line)
		}
	}
	var vout, verr bytes.Buffer
	if code := run([]string{"validate", s2}, &vout, &verr); code != 0 {
		t.Fatalf("validate: exit %d: %s", code, verr.String())
	}
	if want := "1 CVE, 1427 CWEs, 1 vendor, 1 product, 1 report\n"; !strings.HasSuffix(vout.String(), want) {
		t.Errorf("validate printed %q, want it to end %q", vout.String(), want)
	}
}

func TestByteSize(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0 bytes", 1: "1 byte", 999: "999 bytes", 1000: "1.0 kB", 40960: "41.0 kB",
		999_949: "999.9 kB", 1_000_000: "1.0 MB", 123_456_789: "123.5 MB", 4_500_000_000: "4.5 GB",
	} {
		if got := byteSize(n); got != want {
			t.Errorf("byteSize(%d) = %q, want %q", n, got, want)
		}
	}
}
