package loader

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestCheckRefresh(t *testing.T) {
	stamps := func(n int, at string) []Stamp {
		out := make([]Stamp, n)
		for i := range out {
			out[i] = Stamp{Name: fmt.Sprintf("CVE-2024-%04d", i+1), UpdatedAt: at}
		}
		return out
	}
	const day1, day2 = "2024-01-01 00:00:00Z", "2024-01-02 00:00:00Z"
	for _, tc := range []struct {
		name       string
		prev, next []Stamp
		want       *RefreshError // nil: let through
	}{
		{"same", stamps(100, day1), stamps(100, day1), nil},
		{"newer and more", stamps(100, day1), stamps(120, day2), nil},
		{"5 % fewer", stamps(100, day1), stamps(95, day1), nil},
		{"more than 5 % fewer", stamps(100, day1), stamps(94, day1), &RefreshError{Prev: "P", Before: 100, After: 94}},
		{"empty", stamps(100, day1), nil, &RefreshError{Prev: "P", Before: 100, After: 0}},
		{"from nothing", nil, stamps(3, day1), nil},
		{"older", stamps(3, day2), stamps(3, day1),
			&RefreshError{Prev: "P", Before: 3, After: 3, First: "CVE-2024-0001", Was: day2, Now: day1, Older: 3}},
		{"one older", stamps(3, day1), append(stamps(2, day1), Stamp{Name: "CVE-2024-0003", UpdatedAt: "2023-12-31 23:59:59Z"}),
			&RefreshError{Prev: "P", Before: 3, After: 3, First: "CVE-2024-0003", Was: day1, Now: "2023-12-31 23:59:59Z", Older: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckRefresh(tc.prev, tc.next, "P")
			var got *RefreshError
			if err != nil && !errors.As(err, &got) {
				t.Fatalf("error %v is not a *RefreshError", err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("CheckRefresh (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRefreshGuard is issue 24 item 2: a build with -previous from an
// empty feed, or from an older feed than -previous was built from, is
// refused with one line naming what tripped, and writes nothing; Force
// lets both through.
func TestRefreshGuard(t *testing.T) {
	cwe := sharedPath(t, "cwe/cwec_v4.15.xml.zip")
	sample := sharedPath(t, "nvd/nvdcve-2.0-sample.json.gz")
	before := sharedPath(t, "nvd/changes/before.json.gz")
	after := sharedPath(t, "nvd/changes/after.json.gz")
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.json")
	if err := os.WriteFile(empty, []byte(feed()), 0o644); err != nil {
		t.Fatal(err)
	}
	// prev holds the sample (186 CVEs) and after.json.gz, whose 15 CVEs
	// are all newer than the sample's and before.json.gz's: 191 CVEs.
	prev := filepath.Join(dir, "prev")
	if _, err := Build(BuildOptions{CWECatalog: cwe, Feeds: []string{sample, after}, Out: prev,
		Time: time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		feeds []string
		want  string
		cves  int // with Force
	}{
		{"empty feed", []string{empty},
			"loader: refusing a refresh that loses 100.0 % of the CVEs, more than 5 %: 0 CVEs, -previous " + prev + " has 191 (an empty or partial feed?); -force lets it through", 0},
		// before.json.gz has 12 CVEs, each older than in after.json.gz;
		// the first by name is CVE-2021-44200 (lastModified
		// 2026-06-17T04:12:02.513 in after, 2021-11-30T13:42:50.947 in
		// before). 3 CVEs of after's are not in before: 188 CVEs, 1.6 %
		// fewer, which the count lets through.
		{"older feed", []string{sample, before},
			"loader: refusing a refresh that goes back in time: CVE-2021-44200 was last modified 2026-06-17 04:12:02Z in -previous " + prev +
				", 2021-11-30 13:42:50Z now, and 11 more CVEs went back too (an older feed? NVD never goes back); -force lets it through", 188},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "next")
			opt := BuildOptions{CWECatalog: cwe, Feeds: tc.feeds, Out: out, Previous: prev, Time: time.Date(2026, 11, 23, 6, 0, 0, 0, time.UTC)}
			_, err := Build(opt)
			if err == nil || err.Error() != tc.want {
				t.Fatalf("Build error:\n got %v\nwant %s", err, tc.want)
			}
			if _, err := os.Lstat(out); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("a refused build left %s (%v)", out, err)
			}
			opt.Force = true
			m, err := Build(opt)
			if err != nil {
				t.Fatalf("with Force: %v", err)
			}
			if m.Counts.CVEs != tc.cves {
				t.Errorf("with Force: %d CVEs, want %d", m.Counts.CVEs, tc.cves)
			}
			// The guard did not hold: nothing for publish to trust.
			if m.RefreshOf != "" {
				t.Errorf("with Force: refresh_of %q, want none", m.RefreshOf)
			}
		})
	}
}

// TestRefreshOfRecordsTheGuard: a build with -previous whose refresh guard
// held names the previous snapshot in its manifest's refresh_of (what
// publish then trusts for a tag naming it); a build without -previous
// names none. The manifest read back says the same.
func TestRefreshOfRecordsTheGuard(t *testing.T) {
	cwe := sharedPath(t, "cwe/cwec_v4.15.xml.zip")
	sample := sharedPath(t, "nvd/nvdcve-2.0-sample.json.gz")
	before := sharedPath(t, "nvd/changes/before.json.gz")
	after := sharedPath(t, "nvd/changes/after.json.gz")
	dir := t.TempDir()
	prev, next := filepath.Join(dir, "prev"), filepath.Join(dir, "next")
	m, err := Build(BuildOptions{CWECatalog: cwe, Feeds: []string{sample, before}, Out: prev, Time: time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	if m.RefreshOf != "" {
		t.Errorf("a build without -previous: refresh_of %q, want none", m.RefreshOf)
	}
	prevID, err := ID(prev)
	if err != nil {
		t.Fatal(err)
	}
	if m, err = Build(BuildOptions{CWECatalog: cwe, Feeds: []string{sample, after}, Out: next, Previous: prev, Time: time.Date(2026, 11, 23, 6, 0, 0, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	if m.RefreshOf != prevID {
		t.Errorf("refresh_of %q, want the previous snapshot's id %q", m.RefreshOf, prevID)
	}
	read, _, err := ReadManifest(next)
	if err != nil {
		t.Fatal(err)
	}
	if read.RefreshOf != prevID {
		t.Errorf("refresh_of read back %q, want %q", read.RefreshOf, prevID)
	}
}

// TestReadStamps reads the stamps of a snapshot from its manifest and CVE
// file alone, as publish does with the tag's.
func TestReadStamps(t *testing.T) {
	cwe := sharedPath(t, "cwe/cwec_v4.15.xml.zip")
	before := sharedPath(t, "nvd/changes/before.json.gz")
	snap := filepath.Join(t.TempDir(), "snap")
	if _, err := Build(BuildOptions{CWECatalog: cwe, Feeds: []string{before}, Out: snap, Time: time.Now()}); err != nil {
		t.Fatal(err)
	}
	only := t.TempDir()
	for _, name := range StampFiles() {
		b, err := os.ReadFile(filepath.Join(snap, name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(only, name), b, 0o644)
	}
	got, err := ReadStamps(only)
	if err != nil {
		t.Fatal(err)
	}
	s, err := Read(snap)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(StampsOf(s.Data.CVEs), got); diff != "" {
		t.Errorf("ReadStamps (-Read +ReadStamps):\n%s", diff)
	}
	// before.json.gz's CVE-2023-6069: lastModified 2023-11-10T01:15:07.623.
	if !hasStamp(got, Stamp{Name: "CVE-2023-6069", UpdatedAt: "2023-11-10 01:15:07Z"}) {
		t.Errorf("no stamp CVE-2023-6069 2023-11-10 01:15:07Z in %v", got)
	}
}

func hasStamp(list []Stamp, s Stamp) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestRefreshOfRefusedWhenNoID: a manifest's refresh_of that is not a
// snapshot id (24 lowercase hex digits) is refused in one line, as every
// other malformed manifest field is; a well-formed one loads.
func TestRefreshOfRefusedWhenNoID(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "snap")
	smallSnapshot(t, dir, out)
	for _, tc := range []struct{ refreshOf, want string }{
		{"0123456789abcdef01234567", ""},
		{"0123456789ABCDEF01234567", `manifest.json: refresh_of "0123456789ABCDEF01234567" is not a snapshot id (24 lowercase hex digits)`},
		{"0123456789abcdef0123456", `manifest.json: refresh_of "0123456789abcdef0123456" is not a snapshot id (24 lowercase hex digits)`},
		{"../../etc/passwd", `manifest.json: refresh_of "../../etc/passwd" is not a snapshot id (24 lowercase hex digits)`},
	} {
		var m map[string]any
		readManifestJSON(t, out, &m)
		m["refresh_of"] = tc.refreshOf
		writeManifestJSON(t, out, m)
		_, man, err := Load(out)
		switch {
		case tc.want == "" && (err != nil || man.RefreshOf != tc.refreshOf):
			t.Errorf("%q: %v, refresh_of %q", tc.refreshOf, err, man.RefreshOf)
		case tc.want != "" && (err == nil || !strings.HasSuffix(err.Error(), tc.want)):
			t.Errorf("%q: error %v, want one ending %s", tc.refreshOf, err, tc.want)
		}
	}
}
