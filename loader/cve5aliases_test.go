package loader

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/goccy/go-json"
	"github.com/google/go-cmp/cmp"

	"github.com/vulnd/vulnd/index"
)

// TestBuildAliasesOption is issue 26 item 6's "build -aliases FILE
// replaces it" on the real record of CVE-2025-1094 (cvelistV5-sample:
// vendor "n/a", product "PostgreSQL", 16 <= X < 16.7 among its ranges,
// default unaffected; NVD's sample has no configuration for it): the
// default alias file's "*/postgresql postgresql/postgresql" lists it
// under postgresql/postgresql; an empty alias file gives it no vendor
// (n/a names none); one of its own maps n_a/postgresql elsewhere.
func TestBuildAliasesOption(t *testing.T) {
	dir := t.TempDir()
	cwe := sharedPath(t, "cwe/cwec_v4.15.xml.zip")
	feeds := []string{sharedPath(t, "nvd/nvdcve-2.0-sample.json.gz"), sharedPath(t, "cve5/cvelistV5-sample.json.gz")}
	build := func(name, aliases string) *index.Index {
		t.Helper()
		out := filepath.Join(dir, name)
		if _, err := Build(BuildOptions{CWECatalog: cwe, Feeds: feeds, Out: out, Time: buildTime, Aliases: aliases}); err != nil {
			t.Fatal(err)
		}
		ix, _, err := Load(out)
		if err != nil {
			t.Fatal(err)
		}
		return ix
	}
	asked := func(ix *index.Index, vendor, product, version string) ([]string, error) {
		l, err := ix.ProductCVEsAt(vendor, product, version)
		var names []string
		var cs []struct{ Name string }
		if err := json.Unmarshal(l.AppendAll(nil), &cs); err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			names = append(names, c.Name)
		}
		return names, err
	}
	const pg = "CVE-2025-1094"

	ix := build("default", "")
	if got, err := asked(ix, "postgresql", "postgresql", "16.6"); err != nil || !cmp.Equal(got, []string{pg}) {
		t.Errorf("default aliases: postgresql/postgresql?version=16.6: %v, %v, want [%s]", got, err, pg)
	}
	if got, err := asked(ix, "postgresql", "postgresql", "16.7"); err != nil || len(got) != 0 {
		t.Errorf("default aliases: postgresql/postgresql?version=16.7: %v, %v, want none", got, err)
	}

	empty := mustWrite(t, filepath.Join(dir, "empty.txt"), "# no aliases at all\n\n")
	ix = build("empty", empty)
	for _, v := range []string{"postgresql", "n_a", "n/a"} {
		if _, err := ix.Vendor(v); !errors.Is(err, index.ErrVendorNotFound) {
			t.Errorf("no aliases: vendor %q: %v, want not found", v, err)
		}
	}

	own := mustWrite(t, filepath.Join(dir, "own.txt"), "n_a/postgresql example/pg # a test\n")
	ix = build("own", own)
	if got, err := asked(ix, "example", "pg", "13.5"); err != nil || !cmp.Equal(got, []string{pg}) {
		t.Errorf("own aliases: example/pg?version=13.5: %v, %v, want [%s]", got, err, pg)
	}
	if _, err := ix.Vendor("postgresql"); !errors.Is(err, index.ErrVendorNotFound) {
		t.Errorf("own aliases replace the default: vendor postgresql: %v", err)
	}
}

// TestBuildBadAliases: a bad alias file fails the build in one line
// naming the file and the line, before anything is read or written.
func TestBuildBadAliases(t *testing.T) {
	dir := t.TempDir()
	cwe := sharedPath(t, "cwe/cwec_v4.15.xml.zip")
	feed := sharedPath(t, "nvd/nvdcve-2.0-sample.json.gz")
	bad := mustWrite(t, filepath.Join(dir, "bad.txt"), "# aliases\nlinux/linux linux/linux_kernel\nacme widget\n")
	missing := filepath.Join(dir, "missing.txt")
	for _, tc := range []struct{ file, want string }{
		{bad, "loader: aliases " + bad + ":3: want cna-vendor/cna-product nvd-vendor/nvd-product, found \"acme widget\""},
		{missing, "loader: aliases: open " + missing + ": no such file or directory"},
	} {
		out := filepath.Join(dir, "out")
		_, err := Build(BuildOptions{CWECatalog: cwe, Feeds: []string{feed}, Out: out, Time: buildTime, Aliases: tc.file})
		if err == nil || err.Error() != tc.want {
			t.Errorf("%s: %v, want %s", tc.file, err, tc.want)
		} else if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: more than one line: %q", tc.file, err)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%s: the build wrote %s", tc.file, out)
		}
	}
}

// TestSetEntryKeys: the keys of a CVE without CPEs, each once with the
// entries that give it; none for a CVE with CPEs.
func TestSetEntryKeys(t *testing.T) {
	s := func(v string) *string { return &v }
	cves := []index.CVE{
		{Name: "CVE-2024-0001", Affected: []index.AffectedEntry{
			{Source: "cna", Vendor: s("Linux"), Product: s("Linux")},
			{Source: "adp:CISA-ADP", CPEs: []string{"cpe:2.3:a:linux:linux_kernel:*:*:*:*:*:*:*:*", "cpe:2.3:a:acme:tool:*:*:*:*:*:*:*:*"}},
			{Source: "cna", Vendor: s("n/a"), Product: s("n/a")},
			{Source: "cna", Vendor: s("ACME"), Product: s("Tool")},
			{Source: "cna", CPEs: []string{"cpe:/a:bad%0avendor:x"}},
		}},
		{Name: "CVE-2024-0002", CPEs: []index.CPE{{Vendor: "v", Product: "p"}}, Affected: []index.AffectedEntry{{Source: "cna", Vendor: s("A"), Product: s("B")}}},
		{Name: "CVE-2024-0003"},
	}
	aliases, err := ParseAliases("test", strings.NewReader("linux/linux linux/linux_kernel\n"))
	if err != nil {
		t.Fatal(err)
	}
	setEntryKeys(cves, nil, aliases)
	want := []index.EntryKey{
		{Vendor: "linux", Product: "linux_kernel", Entries: []int{0, 1}},
		{Vendor: "acme", Product: "tool", Entries: []int{1, 3}},
	}
	if diff := cmp.Diff(want, cves[0].EntryKeys); diff != "" {
		t.Errorf("CVE-2024-0001 (-want +got):\n%s", diff)
	}
	if cves[1].EntryKeys != nil || cves[2].EntryKeys != nil {
		t.Errorf("keys for a CVE with CPEs (%v) or without entries (%v)", cves[1].EntryKeys, cves[2].EntryKeys)
	}
}

// TestEntryVersionsOnRealRecords: on every affected entry of the real
// records of ../shared/data/cve5, ?version= through the table
// ProductCVEsAt compiles lists the CVE for a version exactly when the
// entry's status of it (VersionStatus, checked by hand on the decisions'
// and cve-schema's examples) is affected; asked: every text of the
// entry's version objects, and each with ".1", "-rc1" and ".0.1" after
// it, and "0".
func TestEntryVersionsOnRealRecords(t *testing.T) {
	recs, _, err := ReadCVE5Files([]string{sharedPath(t, "cve5/cvelistV5-sample.json.gz"), sharedPath(t, "cve5/vulnrichment-sample.json.gz")})
	if err != nil {
		t.Fatal(err)
	}
	d := &index.Data{}
	type asked struct {
		product string
		entry   *index.AffectedEntry
		xs      []string
	}
	var all []asked
	for _, r := range recs {
		c := r.CVE()
		c.CPEs = nil
		for i := range c.Affected {
			e := &c.Affected[i]
			product := strings.ToLower(strings.ReplaceAll(r.ID, "-", "_")) + "_" + strconv.Itoa(i)
			c.EntryKeys = append(c.EntryKeys, index.EntryKey{Vendor: "test", Product: product, Entries: []int{i}})
			xs := []string{"0"}
			for _, v := range e.Versions {
				texts := []string{v.Version}
				for _, p := range []*string{v.LessThan, v.LessThanOrEqual} {
					if p != nil {
						texts = append(texts, *p)
					}
				}
				for _, ch := range v.Changes {
					texts = append(texts, ch.At)
				}
				for _, s := range texts {
					xs = append(xs, s, s+".1", s+"-rc1", s+".0.1")
				}
			}
			all = append(all, asked{product, e, xs})
		}
		d.CVEs = append(d.CVEs, c)
	}
	ix, err := index.Build(d, index.Meta{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, a := range all {
		for _, x := range a.xs {
			l, err := ix.ProductCVEsAt("test", a.product, x)
			if err != nil {
				t.Fatalf("%s: %v", a.product, err)
			}
			if want := a.entry.StatusAt(x) == index.StatusAffected; (l.Len() == 1) != want {
				t.Errorf("%s (%s) version %q: listed %v, status %q", a.product, a.entry.Source, x, l.Len() == 1, a.entry.StatusAt(x))
			}
			n++
		}
	}
	if n < 1000 {
		t.Errorf("asked %d versions, want many more", n)
	}
	t.Logf("%d entries, %d versions asked", len(all), n)
}
