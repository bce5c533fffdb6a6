package loader

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestReadStampsRecord: ReadStamps marks the CVEs a snapshot serves from
// their JSON 5 record alone (details status ""), and CheckRefresh lets
// NVD take such a CVE over with an older lastModified, while an older
// record of a CVE still served from its record, or an older NVD
// lastModified of a CVE NVD served already, is still going back.
func TestReadStampsRecord(t *testing.T) {
	dir := t.TempDir()
	cwe, _ := smallInputs(t, dir)
	nvd := mustWrite(t, filepath.Join(dir, "nvd.json"), feed(strings.Replace(record("CVE-2024-0001", "2024-01-01T00:00:00.000", "x"),
		`"lastModified"`, `"vulnStatus":"Analyzed","lastModified"`, 1)))
	rec := mustWrite(t, filepath.Join(dir, "rec.json"), cve5JSON("CVE-2024-0002", "2024-02-01T00:00:00Z", "a"))
	out := filepath.Join(dir, "snap")
	if _, err := Build(BuildOptions{CWECatalog: cwe, Feeds: []string{nvd, rec}, Out: out, Time: buildTime}); err != nil {
		t.Fatal(err)
	}
	prev, err := ReadStamps(out)
	if err != nil {
		t.Fatal(err)
	}
	want := []Stamp{{Name: "CVE-2024-0001", UpdatedAt: "2024-01-01 00:00:00Z"}, {Name: "CVE-2024-0002", UpdatedAt: "2024-02-01 00:00:00Z", Record: true}}
	if diff := cmp.Diff(want, prev); diff != "" {
		t.Fatalf("stamps (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		name string
		next []Stamp
		ok   bool
	}{
		{"NVD takes over with an older lastModified", []Stamp{want[0], {Name: "CVE-2024-0002", UpdatedAt: "2024-01-15 00:00:00Z"}}, true},
		{"an older record", []Stamp{want[0], {Name: "CVE-2024-0002", UpdatedAt: "2024-01-15 00:00:00Z", Record: true}}, false},
		{"an older NVD record", []Stamp{{Name: "CVE-2024-0001", UpdatedAt: "2023-12-31 00:00:00Z"}, want[1]}, false},
		{"NVD's record gone back to a JSON 5 record", []Stamp{{Name: "CVE-2024-0001", UpdatedAt: "2023-12-31 00:00:00Z", Record: true}, want[1]}, false},
	} {
		err := CheckRefresh(prev, tc.next, "P")
		if _, refused := errors.AsType[*RefreshError](err); refused == tc.ok {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}
