package loader

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vulnd/vulnd/index"
)

// entry is an affected entry of source with vendor and product and one
// version object "0" <= X < lessThan, affected.
func entry(source, vendor, product, lessThan string) index.AffectedEntry {
	return index.AffectedEntry{Source: source, Vendor: sp(vendor), Product: sp(product),
		Versions: []index.AffectedVersion{{Version: "0", Status: "affected", VersionType: "semver", LessThan: sp(lessThan)}}}
}

// entryJSON is entry's JSON form, as details serves it.
func entryJSON(source, vendor, product, lessThan string) string {
	return `{"source":"` + source + `","vendor":"` + vendor + `","product":"` + product + `","cpes":null,"default_status":null,` +
		`"versions":[{"version":"0","status":"affected","versionType":"semver","lessThan":"` + lessThan + `"}],"platforms":null}`
}

// cloneEntries copies a CVE with its affected entries (clone drops them:
// they are not part of the stored body).
func cloneEntries(c index.CVE) index.CVE {
	out := clone(c)
	out.Affected = append([]index.AffectedEntry(nil), c.Affected...)
	return out
}

// TestDiffAffected is issue 26 item 7 (2): a change of a CVE's affected
// entries is an "Affected changed" event, entries compared whole by their
// JSON form, added in the new record's order and removed in the old's;
// a CVE with NVD CPEs gets it too, its handlers staying NVD's.
func TestDiffAffected(t *testing.T) {
	a := entry("cna", "Acme", "Widget", "2.0")
	b := entry("cna", "Acme", "Gadget", "1.5")
	adp := entry("adp:CISA-ADP", "acme", "widget", "2.0")
	adp.CPEs = []string{"cpe:2.3:a:acme:widget:*:*:*:*:*:*:*:*"}
	adpJSON := `{"source":"adp:CISA-ADP","vendor":"acme","product":"widget","cpes":["cpe:2.3:a:acme:widget:*:*:*:*:*:*:*:*"],"default_status":null,` +
		`"versions":[{"version":"0","status":"affected","versionType":"semver","lessThan":"2.0"}],"platforms":null}`
	base := index.CVE{Name: "CVE-2024-0010", Summary: "s", Affected: []index.AffectedEntry{a, b}}
	event := func(added, removed string) string {
		return `[{"type":"Affected changed","created_at":"` + at + `","details":{"added":[` + added + `],"removed":[` + removed + `]}}]`
	}
	for _, tc := range []struct {
		name string
		edit func(c *index.CVE)
		want string
	}{
		{"entries unchanged", func(c *index.CVE) {}, `[]`},
		{"only the order changed", func(c *index.CVE) { c.Affected = []index.AffectedEntry{b, a} }, `[]`},
		{"packageName is not part of an entry", func(c *index.CVE) { c.Affected[0].PackageName = sp("widget-pkg") }, `[]`},
		{"an ADP entry added after the CNA's", func(c *index.CVE) { c.Affected = append(c.Affected, adp) },
			event(adpJSON, ``)},
		{"versions changed: one removed, one added", func(c *index.CVE) { c.Affected[1] = entry("cna", "Acme", "Gadget", "1.6") },
			event(entryJSON("cna", "Acme", "Gadget", "1.6"), entryJSON("cna", "Acme", "Gadget", "1.5"))},
		{"all entries gone", func(c *index.CVE) { c.Affected = nil },
			event(``, entryJSON("cna", "Acme", "Widget", "2.0")+","+entryJSON("cna", "Acme", "Gadget", "1.5"))},
		{"a second copy of an entry is added, in the new order", func(c *index.CVE) {
			c.Affected = []index.AffectedEntry{a, entry("cna", "Acme", "Gadget", "1.6"), a}
		}, event(entryJSON("cna", "Acme", "Gadget", "1.6")+","+entryJSON("cna", "Acme", "Widget", "2.0"), entryJSON("cna", "Acme", "Gadget", "1.5"))},
		{"cpes [] is not cpes null", func(c *index.CVE) { c.Affected[0].CPEs = []string{} },
			event(`{"source":"cna","vendor":"Acme","product":"Widget","cpes":[],"default_status":null,`+
				`"versions":[{"version":"0","status":"affected","versionType":"semver","lessThan":"2.0"}],"platforms":null}`,
				entryJSON("cna", "Acme", "Widget", "2.0"))},
		{"a status change inside a version object", func(c *index.CVE) {
			c.Affected[0].Versions = []index.AffectedVersion{{Version: "0", Status: "affected", VersionType: "semver", LessThan: sp("2.0"),
				Changes: []index.StatusChange{{At: "1.2", Status: "unaffected"}}}}
		}, event(`{"source":"cna","vendor":"Acme","product":"Widget","cpes":null,"default_status":null,`+
			`"versions":[{"version":"0","status":"affected","versionType":"semver","lessThan":"2.0","changes":[{"at":"1.2","status":"unaffected"}]}],"platforms":null}`,
			entryJSON("cna", "Acme", "Widget", "2.0"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			old, n := cloneEntries(base), cloneEntries(base)
			n.Affected = append([]index.AffectedEntry(nil), n.Affected...)
			tc.edit(&n)
			ids := newIDTables()
			ids.assign([]index.CVE{old, n})
			events := diffCVE(&old, &n, ids, at)
			if events == nil {
				events = []index.Event{}
			}
			if diff := cmp.Diff(parseJSON(t, tc.want), eventsJSON(t, events)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}

	// NVD analysed it: the entries still count, the handlers are NVD's.
	old := cloneEntries(base)
	old.CPEs = []index.CPE{cpeOf("cpe:2.3:a:acme_corp:widget:1.0:*:*:*:*:*:*:*")}
	n := cloneEntries(old)
	n.Affected = append(n.Affected, adp)
	ids := newIDTables()
	ids.assign([]index.CVE{old, n})
	alerts, err := diffCVEs([]index.CVE{old}, []index.CVE{n}, ids, at, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(alerts) != 1 {
		t.Fatalf("%d alerts, want 1", len(alerts))
	}
	if diff := cmp.Diff(parseJSON(t, event(adpJSON, ``)), eventsJSON(t, alerts[0].Events)); diff != "" {
		t.Errorf("events of an analysed CVE (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(index.Handlers{Products: []string{"widget"}, Vendors: []string{"acme_corp"}}, alerts[0].Handlers); diff != "" {
		t.Errorf("handlers of an analysed CVE (-want +got):\n%s", diff)
	}
}

// TestAlertHandlersFromEntries is issue 26 item 7 (1): a CVE without
// CPEs reaches the vendors and products of its affected entries, through
// the aliases (the default file's linux/linux), CPEs of entries as they
// are, no key for n/a; a new one's "New CVE" alert has them, and its
// entries are "added" from nothing.
func TestAlertHandlersFromEntries(t *testing.T) {
	kernel := entry("cna", "Linux", "Linux", "6.8")
	na := entry("cna", "n/a", "n/a", "1")
	adp := entry("adp:CISA-ADP", "linux", "linux_kernel", "6.8")
	adp.CPEs = []string{"cpe:2.3:o:linux:linux_kernel:*:*:*:*:*:*:*:*", "cpe:/a:kernel.org:linux:-"}
	n := index.CVE{Name: "CVE-2024-0020", Summary: "s", Affected: []index.AffectedEntry{kernel, na, adp}}
	ids := newIDTables()
	ids.assign([]index.CVE{n})
	alerts, err := diffCVEs(nil, []index.CVE{n}, ids, at, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(alerts) != 1 {
		t.Fatalf("%d alerts, want 1", len(alerts))
	}
	want := index.Handlers{Products: []string{"linux", "linux_kernel"}, Vendors: []string{"kernel.org", "linux"}}
	if diff := cmp.Diff(want, alerts[0].Handlers); diff != "" {
		t.Errorf("handlers (-want +got):\n%s", diff)
	}
	adpJSON := `{"source":"adp:CISA-ADP","vendor":"linux","product":"linux_kernel","cpes":["cpe:2.3:o:linux:linux_kernel:*:*:*:*:*:*:*:*","cpe:/a:kernel.org:linux:-"],"default_status":null,` +
		`"versions":[{"version":"0","status":"affected","versionType":"semver","lessThan":"6.8"}],"platforms":null}`
	events := `[
		{"type":"New CVE","created_at":"` + at + `","details":{}},
		{"type":"Affected changed","created_at":"` + at + `","details":{"added":[` +
		entryJSON("cna", "Linux", "Linux", "6.8") + `,` + entryJSON("cna", "n/a", "n/a", "1") + `,` + adpJSON + `],"removed":[]}}]`
	if diff := cmp.Diff(parseJSON(t, events), eventsJSON(t, alerts[0].Events)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}

	// Another alias file: its names, not the default's.
	aliases, err := ParseAliases("test", strings.NewReader("linux/linux torvalds/linux # a test\n"))
	if err != nil {
		t.Fatal(err)
	}
	n.Affected = []index.AffectedEntry{kernel}
	alerts, err = diffCVEs(nil, []index.CVE{n}, ids, at, aliases)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(index.Handlers{Products: []string{"linux"}, Vendors: []string{"torvalds"}}, alerts[0].Handlers); diff != "" {
		t.Errorf("handlers with -aliases (-want +got):\n%s", diff)
	}
}

// TestAlertWhenNVDTakesOver is issue 26 item 7 (3): NVD's configurations
// arrive for a CVE served from its entries: "CPEs changed" adds them, as
// for any CVE, and the handlers are the entries' vendors and products as
// well as the CPEs', so the teams told of the CVE hear of the change.
// When the CPEs go again, the entries' teams are told too.
func TestAlertWhenNVDTakesOver(t *testing.T) {
	cna := entry("cna", "OpenPrinting", "cups-filters", "2.0.2")
	adp := entry("adp:CISA-ADP", "openprinting", "cpdb-libs", "2.0.2")
	adp.CPEs = []string{"cpe:2.3:a:openprinting:cpdb-libs:*:*:*:*:*:*:*:*"}
	old := index.CVE{Name: "CVE-2024-0030", Summary: "s", Affected: []index.AffectedEntry{cna, adp}}
	n := cloneEntries(old)
	uri := "cpe:2.3:a:openprinting:cups-filters:*:*:*:*:*:*:*:*"
	n.CPEs = []index.CPE{cpeOf(uri), cpeOf("cpe:2.3:o:debian:debian_linux:12.0:*:*:*:*:*:*:*")}
	ids := newIDTables()
	ids.assign([]index.CVE{old, n})
	alerts, err := diffCVEs([]index.CVE{old}, []index.CVE{n}, ids, at, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(alerts) != 1 {
		t.Fatalf("%d alerts, want 1", len(alerts))
	}
	want := `[{"type":"CPEs changed","created_at":"` + at + `","details":{"added":[
		{"cpe_id":1,"product":"cups-filters","uri":"` + uri + `","vendor":"openprinting","version":"*"},
		{"cpe_id":2,"product":"debian_linux","uri":"cpe:2.3:o:debian:debian_linux:12.0:*:*:*:*:*:*:*","vendor":"debian","version":"12.0"}],"removed":[]}}]`
	if diff := cmp.Diff(parseJSON(t, want), eventsJSON(t, alerts[0].Events)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	handlers := index.Handlers{Products: []string{"cpdb-libs", "cups-filters", "debian_linux"}, Vendors: []string{"debian", "openprinting"}}
	if diff := cmp.Diff(handlers, alerts[0].Handlers); diff != "" {
		t.Errorf("handlers (-want +got):\n%s", diff)
	}
	// And back: NVD's CPEs removed, the entries list the CVE again.
	alerts, err = diffCVEs([]index.CVE{n}, []index.CVE{old}, ids, at, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(alerts) != 1 {
		t.Fatalf("%d alerts, want 1", len(alerts))
	}
	if diff := cmp.Diff(handlers, alerts[0].Handlers); diff != "" {
		t.Errorf("handlers when the CPEs go (-want +got):\n%s", diff)
	}
}

// TestSameEntryIsSameJSON: the allocation-free comparison that lets an
// unchanged CVE skip the diff says "same" exactly when the two entries'
// JSON forms (what details serves, and what diffAffected matches) are
// equal, on entries that differ in one member each, null against empty
// against a value.
func TestSameEntryIsSameJSON(t *testing.T) {
	var variants []index.AffectedEntry
	base := entry("cna", "Acme", "Widget", "2.0")
	vary := func(edit func(e *index.AffectedEntry)) {
		e := base
		e.Versions = append([]index.AffectedVersion(nil), base.Versions...)
		edit(&e)
		variants = append(variants, e)
	}
	vary(func(e *index.AffectedEntry) {})
	vary(func(e *index.AffectedEntry) { e.Source = "adp:CISA-ADP" })
	vary(func(e *index.AffectedEntry) { e.Vendor = nil })
	vary(func(e *index.AffectedEntry) { e.Vendor = sp("") })
	vary(func(e *index.AffectedEntry) { e.Product = sp("widget") })
	vary(func(e *index.AffectedEntry) { e.PackageName = sp("widget") }) // not served: the same
	vary(func(e *index.AffectedEntry) { e.CPEs = []string{} })
	vary(func(e *index.AffectedEntry) { e.CPEs = []string{"cpe:2.3:a:acme:widget:*:*:*:*:*:*:*:*"} })
	vary(func(e *index.AffectedEntry) { e.DefaultStatus = sp("unaffected") })
	vary(func(e *index.AffectedEntry) { e.Platforms = []string{} })
	vary(func(e *index.AffectedEntry) { e.Platforms = []string{"Linux"} })
	vary(func(e *index.AffectedEntry) { e.Versions = nil })
	vary(func(e *index.AffectedEntry) { e.Versions = []index.AffectedVersion{} })
	vary(func(e *index.AffectedEntry) { e.Versions[0].LessThan = nil })
	vary(func(e *index.AffectedEntry) { e.Versions[0].LessThan = sp("") })
	vary(func(e *index.AffectedEntry) { e.Versions[0].LessThanOrEqual = sp("2.0") })
	vary(func(e *index.AffectedEntry) { e.Versions[0].VersionType = "" })
	vary(func(e *index.AffectedEntry) { e.Versions[0].Status = "unaffected" })
	vary(func(e *index.AffectedEntry) { e.Versions[0].Changes = []index.StatusChange{} }) // omitted when empty: the same
	vary(func(e *index.AffectedEntry) {
		e.Versions[0].Changes = []index.StatusChange{{At: "1.5", Status: "unaffected"}}
	})
	forms := entryForms(variants)
	for i := range variants {
		for j := range variants {
			if got, want := sameEntry(&variants[i], &variants[j]), forms[i] == forms[j]; got != want {
				t.Errorf("sameEntry(%d, %d) = %v, JSON forms equal %v:\n%s\n%s", i, j, got, want, forms[i], forms[j])
			}
		}
	}
}
