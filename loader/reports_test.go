package loader

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/goccy/go-json"
	"github.com/google/go-cmp/cmp"

	"github.com/vulnd/vulnd/index"
)

// servedReportIDs loads the snapshot in dir and returns the ids of its
// reports as the API lists them.
func servedReportIDs(t *testing.T, dir string) []string {
	t.Helper()
	ix, _, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var items []struct{ ID string }
	if err := json.Unmarshal(ix.Reports().AppendAll(nil), &items); err != nil {
		t.Fatal(err)
	}
	ids := []string{}
	for _, it := range items {
		ids = append(ids, it.ID)
	}
	return ids
}

// TestNewReportOnTimeTie is issue 15 item 2: a build given the same -time
// as the newest report of -previous must keep its own report and list it
// first. s1 is before.json.gz; s2 (-previous s1) is after.json.gz, one
// report 20261123T060000Z; s3 (-previous s2, the same -time) goes back to
// before.json.gz, so 11 of its 12 CVEs changed again (CVE-2023-36014 only
// lost a Spanish description, which is not tracked): its report is
// 20261123T060000Z-2, newer than s2's.
func TestNewReportOnTimeTie(t *testing.T) {
	cwe := sharedPath(t, "cwe/cwec_v4.15.xml.zip")
	before := sharedPath(t, "nvd/changes/before.json.gz")
	after := sharedPath(t, "nvd/changes/after.json.gz")
	dir := t.TempDir()
	s1, s2 := filepath.Join(dir, "s1"), filepath.Join(dir, "s2")
	tie := time.Date(2026, 11, 23, 6, 0, 0, 0, time.UTC)
	for _, b := range []BuildOptions{
		{CWECatalog: cwe, Feeds: []string{before}, Out: s1, Time: time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)},
		{CWECatalog: cwe, Feeds: []string{after}, Out: s2, Previous: s1, Time: tie},
	} {
		if _, err := Build(b); err != nil {
			t.Fatalf("build %s: %v", b.Out, err)
		}
	}
	if diff := cmp.Diff([]string{"20261123T060000Z"}, servedReportIDs(t, s2)); diff != "" {
		t.Fatalf("s2 reports (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		keep int
		want []string
	}{
		{1, []string{"20261123T060000Z-2"}},
		{0, []string{"20261123T060000Z-2", "20261123T060000Z"}},
	} {
		t.Run(fmt.Sprintf("keep %d", tc.keep), func(t *testing.T) {
			s3 := filepath.Join(t.TempDir(), "s3")
			// Going back to before.json.gz is a rollback the refresh guard
			// refuses; -force lets it through.
			if _, err := Build(BuildOptions{CWECatalog: cwe, Feeds: []string{before}, Out: s3, Previous: s2, Time: tie, KeepReports: tc.keep, Force: true}); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, servedReportIDs(t, s3)); diff != "" {
				t.Errorf("s3 reports as listed (-want +got):\n%s", diff)
			}
			s, err := Read(s3)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range s.Data.Reports {
				if r.ID == "20261123T060000Z-2" && len(r.Alerts) != 11 {
					t.Errorf("the new report has %d alerts, want one per changed CVE of before.json.gz (11)", len(r.Alerts))
				}
			}
		})
	}
}

// TestReportIDsOnRepeatedTime builds twelve times with the same -time,
// each build changing the one CVE, keeping three reports: every build's
// report is kept and listed first, and an id dropped by -keep-reports is
// not given again (that report would sort as the oldest).
func TestReportIDsOnRepeatedTime(t *testing.T) {
	dir := t.TempDir()
	cwe := filepath.Join(dir, "cwe.xml")
	os.WriteFile(cwe, []byte(`<Weakness_Catalog><Weaknesses></Weaknesses></Weakness_Catalog>`), 0o644)
	at := time.Date(2026, 11, 23, 6, 0, 0, 0, time.UTC)
	const base = "20261123T060000Z"
	prev := ""
	for build := 1; build <= 12; build++ {
		f := filepath.Join(dir, fmt.Sprintf("feed%d.json", build))
		os.WriteFile(f, []byte(feed(record("CVE-2024-0001", "2024-01-01T00:00:00.000", fmt.Sprintf("summary %d", build)))), 0o644)
		out := filepath.Join(dir, fmt.Sprintf("snap%d", build))
		if _, err := Build(BuildOptions{CWECatalog: cwe, Feeds: []string{f}, Out: out, Previous: prev, KeepReports: 3, Time: at}); err != nil {
			t.Fatal(err)
		}
		prev = out
		// Build 2 makes base, build k > 2 makes base-(k-1).
		want := []string{}
		for k := build; k >= max(2, build-2); k-- {
			id := base
			if k > 2 {
				id = fmt.Sprintf("%s-%d", base, k-1)
			}
			want = append(want, id)
		}
		if diff := cmp.Diff(want, servedReportIDs(t, out)); diff != "" {
			t.Errorf("build %d: reports (-want +got):\n%s", build, diff)
		}
	}
}

// TestKeepNewestOrder: keepNewest keeps by the API's order, build numbers
// compared as numbers.
func TestKeepNewestOrder(t *testing.T) {
	const day1, day2 = "2026-11-22 06:00:00Z", "2026-11-23 06:00:00Z"
	in := []index.Report{
		{ID: "20261122T060000Z", CreatedAt: day1},
		{ID: "20261123T060000Z-9", CreatedAt: day2},
		{ID: "20261123T060000Z", CreatedAt: day2},
		{ID: "20261123T060000Z-10", CreatedAt: day2},
	}
	var got []string
	for _, r := range keepNewest(in, 2, "") {
		got = append(got, r.ID)
	}
	if diff := cmp.Diff([]string{"20261123T060000Z-10", "20261123T060000Z-9"}, got); diff != "" {
		t.Errorf("keepNewest (-want +got):\n%s", diff)
	}
}

// TestReportIDNumbersAfterTheHighest: the build number is one more than
// the highest kept, so it stays the newest even when -keep-reports has
// dropped lower ones.
func TestReportIDNumbersAfterTheHighest(t *testing.T) {
	at := time.Date(2026, 11, 23, 6, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		kept []string
		want string
	}{
		{nil, "20261123T060000Z"},
		{[]string{"20261122T060000Z"}, "20261123T060000Z"},
		{[]string{"20261123T060000Z"}, "20261123T060000Z-2"},
		{[]string{"20261123T060000Z-3", "20261123T060000Z-2"}, "20261123T060000Z-4"},
		{[]string{"20261123T060000Z-9", "20261123T060000Z-10"}, "20261123T060000Z-11"},
		{[]string{"20261123T060000Z-x"}, "20261123T060000Z"},
	} {
		var kept []index.Report
		for _, id := range tc.kept {
			kept = append(kept, index.Report{ID: id})
		}
		if got := reportID(at, kept); got != tc.want {
			t.Errorf("reportID(kept %q) = %q, want %q", tc.kept, got, tc.want)
		}
	}
}

// TestKeepReportsOlderTime is issue 24 item 6: a build given a -time
// older than the kept reports keeps the report it made, whatever
// -keep-reports, and the newest of the others beside it.
func TestKeepReportsOlderTime(t *testing.T) {
	dir := t.TempDir()
	cwe := filepath.Join(dir, "cwe.xml")
	os.WriteFile(cwe, []byte(`<Weakness_Catalog><Weaknesses></Weaknesses></Weakness_Catalog>`), 0o644)
	day := func(d int) time.Time { return time.Date(2026, 11, d, 0, 0, 0, 0, time.UTC) }
	// Builds on days 1, 4 and 5, each adding a CVE: reports of days 4
	// and 5.
	var recs []string
	prev := ""
	for i, d := range []int{1, 4, 5} {
		recs = append(recs, record(fmt.Sprintf("CVE-2024-000%d", i+1), "2024-01-01T00:00:00.000", "x"))
		f := filepath.Join(dir, fmt.Sprintf("feed%d.json", i))
		os.WriteFile(f, []byte(feed(recs...)), 0o644)
		out := filepath.Join(dir, fmt.Sprintf("snap%d", i))
		if _, err := Build(BuildOptions{CWECatalog: cwe, Feeds: []string{f}, Out: out, Previous: prev, Time: day(d)}); err != nil {
			t.Fatal(err)
		}
		prev = out
	}
	recs = append(recs, record("CVE-2024-0009", "2024-01-01T00:00:00.000", "x"))
	f := filepath.Join(dir, "feed-late.json")
	os.WriteFile(f, []byte(feed(recs...)), 0o644)
	for _, tc := range []struct {
		keep int
		want []string
	}{
		{1, []string{"20261102T000000Z"}},
		{2, []string{"20261105T000000Z", "20261102T000000Z"}},
		{3, []string{"20261105T000000Z", "20261104T000000Z", "20261102T000000Z"}},
	} {
		t.Run(fmt.Sprint(tc.keep), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "late")
			if _, err := Build(BuildOptions{CWECatalog: cwe, Feeds: []string{f}, Out: out, Previous: prev, Time: day(2), KeepReports: tc.keep}); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, servedReportIDs(t, out)); diff != "" {
				t.Errorf("reports as listed (-want +got):\n%s", diff)
			}
		})
	}
}
