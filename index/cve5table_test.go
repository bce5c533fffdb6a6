package index

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/goccy/go-json"
)

// randomVersionTexts are what CNAs write in version objects, and versions
// asked: releases, pre-releases, series, "*", words, comparisons.
var randomVersionTexts = []string{
	"0", "1", "1.0", "1.0.0", "1.2", "1.2.3", "1.2.3-rc1", "1.2.3-beta", "1.2.4", "1.3", "1.x", "1.2.*",
	"2", "2.0", "2.0.1", "2.0.1a", "2.0.2", "2.*", "2.0.x", "10.0", "6.1.78", "6.1.*", "6.1", "6.6.17",
	"*", "n/a", "unspecified", "All versions", "",
	"< 2.0.1", "<= 2.0.1", ">= 1.2, < 2.0", "> 1.*", "1.0 - 2.0", "1.2 and earlier", "2.0 and later",
	"before 1.3", "= 1.2.3", ">=1.0 <2.0", "< *",
}

var randomStatuses = []string{"affected", "unaffected", "unknown"}

func randomEntry(r *rand.Rand) AffectedEntry {
	pick := func(s []string) string { return s[r.IntN(len(s))] }
	var e AffectedEntry
	if r.IntN(2) == 0 {
		e.DefaultStatus = sp(pick(randomStatuses))
	}
	for range r.IntN(5) {
		v := AffectedVersion{Version: pick(randomVersionTexts), Status: pick(randomStatuses)}
		switch r.IntN(6) {
		case 0:
			v.VersionType = "git"
		case 1:
			v.VersionType = "semver"
		}
		switch r.IntN(3) {
		case 0:
			v.LessThan = sp(pick(randomVersionTexts))
		case 1:
			v.LessThanOrEqual = sp(pick(randomVersionTexts))
		}
		for range r.IntN(3) {
			v.Changes = append(v.Changes, StatusChange{At: pick(randomVersionTexts), Status: pick(randomStatuses)})
		}
		e.Versions = append(e.Versions, v)
	}
	return e
}

// TestEntryTableMatchesVersionStatus: for random entries made of what
// CNAs write, the compiled table covers a version exactly when some
// entry's VersionStatus is affected.
func TestEntryTableMatchesVersionStatus(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 5))
	asked := append(slices.Clone(randomVersionTexts), "0.9", "1.2.2", "1.2.3-rc2", "1.2.3.1", "1.9.9", "2.0.0", "2.0.1-rc1", "2.1", "3", "6.1.100", "6.2", "1.2.3-RC1", "v1.2", "abc")
	for round := range 300 {
		b := newEntryTableBuilder()
		var cves [][]AffectedEntry
		for pos := range 1 + r.IntN(6) {
			es := make([]AffectedEntry, 1+r.IntN(3))
			for i := range es {
				es[i] = randomEntry(r)
			}
			cves = append(cves, es)
			b.add(int32(pos), es)
		}
		tab := b.table()
		for _, x := range asked {
			var want []int32
			for pos, es := range cves {
				for i := range es {
					if es[i].StatusAt(x) == StatusAffected {
						want = append(want, int32(pos))
						break
					}
				}
			}
			if got := tab.match(x); !slices.Equal(got, want) {
				t.Fatalf("round %d, version %q: table %v, VersionStatus %v; entries %+v", round, x, got, want, cves)
			}
		}
	}
}

// FuzzEntryTable: any entry and version: the table answers as
// VersionStatus does, and never panics.
func FuzzEntryTable(f *testing.F) {
	f.Add("<= 2.0.1", "", "", "2.0.1", "affected", "")
	f.Add("0", "2.0.1", "", "1.0", "affected", "1.5")
	f.Add("6.1.78", "", "6.1.*", "6.1.80", "unaffected", "")
	f.Add("1.x", "", "", "1.9.2", "affected", "1.5-rc1")
	f.Fuzz(func(t *testing.T, version, lessThan, lessOrEqual, x, status, at string) {
		v := AffectedVersion{Version: version, Status: status}
		if lessThan != "" {
			v.LessThan = &lessThan
		} else if lessOrEqual != "" {
			v.LessThanOrEqual = &lessOrEqual
		}
		if at != "" {
			v.Changes = []StatusChange{{At: at, Status: "affected"}, {At: x, Status: "unaffected"}}
		}
		e := AffectedEntry{Versions: []AffectedVersion{v, {Version: at, Status: "affected"}}, DefaultStatus: sp(status)}
		b := newEntryTableBuilder()
		b.add(0, []AffectedEntry{e})
		got := len(b.table().match(x)) == 1
		if want := e.StatusAt(x) == StatusAffected; got != want {
			t.Errorf("%+v at %q: table %v, VersionStatus %v", e, x, got, want)
		}
	})
}

// TestProductCVEsAtFromEntries: through the whole index (entries stored
// as details' JSON, decoded once for the product's table), random
// entries of several CVEs of one product answer ?version= as their
// VersionStatus does, and a CVE's entries of another product do not
// count.
func TestProductCVEsAtFromEntries(t *testing.T) {
	r := rand.New(rand.NewPCG(26, 6))
	asked := append(slices.Clone(randomVersionTexts), "0.9", "1.2.2", "1.2.3-rc2", "1.9.9", "2.0.1-rc1", "2.1", "3", "6.1.100")
	vendor := "ACME"
	for round := range 60 {
		var d Data
		var entries [][]AffectedEntry // by CVE, the entries of acme/widget
		n := 1 + r.IntN(8)
		for i := range n {
			c := CVE{Name: fmt.Sprintf("CVE-2024-%04d", i+1), Summary: "s", CreatedAt: "2024-01-01 00:00:00Z",
				UpdatedAt: fmt.Sprintf("2024-01-%02d 00:00:00Z", 1+r.IntN(28))}
			var mine []AffectedEntry
			key := EntryKey{Vendor: "acme", Product: "widget"}
			other := EntryKey{Vendor: "acme", Product: "gadget"}
			for k := range 1 + r.IntN(3) {
				e := randomEntry(r)
				e.Source, e.Vendor = "cna", &vendor
				c.Affected = append(c.Affected, e)
				if r.IntN(4) == 0 {
					other.Entries = append(other.Entries, k)
					continue
				}
				key.Entries = append(key.Entries, k)
				mine = append(mine, e)
			}
			for _, k := range []EntryKey{key, other} {
				if len(k.Entries) > 0 {
					c.EntryKeys = append(c.EntryKeys, k)
				}
			}
			d.CVEs = append(d.CVEs, c)
			entries = append(entries, mine)
		}
		ix, err := Build(&d, Meta{})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range asked {
			want := []string{}
			for i, es := range entries {
				for k := range es {
					if es[k].StatusAt(x) == StatusAffected {
						want = append(want, d.CVEs[i].Name)
						break
					}
				}
			}
			l, err := ix.ProductCVEsAt("acme", "widget", x)
			if errors.Is(err, ErrProductNotFound) && len(want) == 0 {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for i := range l.Len() {
				var c struct{ Name string }
				if err := json.Unmarshal(append(l.Item(i), '}'), &c); err != nil {
					t.Fatal(err)
				}
				got = append(got, c.Name)
			}
			slices.Sort(got)
			if got == nil {
				got = []string{}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("round %d, version %q: listed %v, want %v; CVEs %+v", round, x, got, want, d.CVEs)
			}
		}
	}
}
