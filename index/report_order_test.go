package index

import (
	"slices"
	"testing"

	"github.com/goccy/go-json"
	"github.com/google/go-cmp/cmp"
)

// reportIDs lists the ids of a list of report summaries, in list order.
func reportIDs(t testing.TB, l List) []string {
	t.Helper()
	var items []struct{ ID string }
	if err := json.Unmarshal(l.AppendAll(nil), &items); err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, it := range items {
		out = append(out, it.ID)
	}
	return out
}

// TestReportOrder: reports are listed created_at newest first, and
// reports of the same created_at (builds given the same -time) by build
// order, newest first: the build numbers its report ids base, base-2,
// base-3..., so -10 is newer than -9 although "-10" < "-9" in byte order.
// The order the reports are stored in does not matter.
func TestReportOrder(t *testing.T) {
	const day1, day2 = "2026-11-22 06:00:00Z", "2026-11-23 06:00:00Z"
	r := func(id, at string) Report { return Report{ID: id, CreatedAt: at} }
	for _, tc := range []struct {
		name string
		in   []Report
		want []string
	}{
		{"created_at newest first",
			[]Report{r("20261122T060000Z", day1), r("20261123T060000Z", day2)},
			[]string{"20261123T060000Z", "20261122T060000Z"}},
		{"same time: the second build first",
			[]Report{r("20261123T060000Z", day2), r("20261123T060000Z-2", day2)},
			[]string{"20261123T060000Z-2", "20261123T060000Z"}},
		{"same time: -10 before -9",
			[]Report{r("20261123T060000Z-9", day2), r("20261123T060000Z", day2), r("20261123T060000Z-10", day2), r("20261123T060000Z-2", day2)},
			[]string{"20261123T060000Z-10", "20261123T060000Z-9", "20261123T060000Z-2", "20261123T060000Z"}},
		{"created_at before build number",
			[]Report{r("20261122T060000Z-3", day1), r("20261123T060000Z", day2), r("20261122T060000Z", day1)},
			[]string{"20261123T060000Z", "20261122T060000Z-3", "20261122T060000Z"}},
		{"not a build number: counts as a first build, then id order",
			[]Report{r("b-x", day2), r("a-2", day2), r("a", day2), r("a-0", day2), r("a-", day2)},
			[]string{"a-2", "a", "a-", "a-0", "b-x"}},
		{"a suffix too large for an int counts as a first build",
			[]Report{r("a-99999999999999999999", day2), r("a-2", day2)},
			[]string{"a-2", "a-99999999999999999999"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, in := range [][]Report{tc.in, reversed(tc.in)} {
				ix, err := Build(&Data{Reports: in}, Meta{})
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(tc.want, reportIDs(t, ix.Reports())); diff != "" {
					t.Errorf("Reports() (-want +got):\n%s", diff)
				}
				sorted := slices.Clone(in)
				SortReports(sorted)
				var got []string
				for _, r := range sorted {
					got = append(got, r.ID)
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("SortReports (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func reversed(in []Report) []Report {
	out := slices.Clone(in)
	slices.Reverse(out)
	return out
}

// FuzzReportOrder: the report order is a total order whatever the ids and
// times (antisymmetric, and only equal reports compare equal), and
// buildNumber never panics.
func FuzzReportOrder(f *testing.F) {
	f.Add("20261123T060000Z-10", "20261123T060000Z-9", "a", "a")
	f.Add("x-", "x-0", "b", "a")
	f.Add("-2", "-99999999999999999999", "", "")
	f.Fuzz(func(t *testing.T, id1, id2, at1, at2 string) {
		a, b := Report{ID: id1, CreatedAt: at1}, Report{ID: id2, CreatedAt: at2}
		ab, ba := compareReports(&a, &b), compareReports(&b, &a)
		if ab != -ba {
			t.Fatalf("compare(%q, %q) = %d, reversed %d", id1, id2, ab, ba)
		}
		if ab == 0 && (id1 != id2 || at1 != at2) {
			t.Fatalf("%+v and %+v compare equal", a, b)
		}
		if n := buildNumber(id1); n < 1 {
			t.Fatalf("buildNumber(%q) = %d", id1, n)
		}
	})
}
