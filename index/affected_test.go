package index

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-json"
	"github.com/google/go-cmp/cmp"
)

// vcpe is a CPE of a test CVE: vendor, product, version, the vulnerable
// flag and the bounds (start including, start excluding, end including,
// end excluding; "" for none).
func vcpe(vendor, product, version string, vulnerable bool, bounds ...string) CPE {
	b := make([]string, 4)
	copy(b, bounds)
	return CPE{
		URI:    "cpe:2.3:a:" + vendor + ":" + product + ":" + version + ":*:*:*:*:*:*:*:" + strings.Join(b, "/"),
		Vendor: vendor, Product: product, Version: version, Vulnerable: vulnerable,
		VersionStartIncluding: b[0], VersionStartExcluding: b[1], VersionEndIncluding: b[2], VersionEndExcluding: b[3],
	}
}

func listNames(t testing.TB, l List) []string {
	t.Helper()
	var items []struct{ Name string }
	if err := json.Unmarshal(l.AppendAll(nil), &items); err != nil {
		t.Fatal(err)
	}
	out := []string{}
	for _, it := range items {
		out = append(out, it.Name)
	}
	return out
}

// affectedFixture has one CVE per rule, named by letter, updated one day
// apart so that the list order is the order below (A newest).
func affectedFixture(t testing.TB) *Index {
	t.Helper()
	const yes, no = true, false
	cves := [][]CPE{
		/* A */ {vcpe("v", "p", "1.0", yes)},
		/* B */ {vcpe("v", "p", "2.0RC1", yes)}, // upper case in the data
		/* C */ {vcpe("v", "p", "1.0", no), vcpe("v", "p", "*", no), vcpe("v", "p", "*", no, "", "", "", "9")},
		/* D */ {vcpe("v", "p", "-", yes)},
		/* E */ {vcpe("v", "p", "*", yes)},
		/* F */ {vcpe("v", "p", "*", yes, "1.2", "", "", "1.5")},
		/* G */ {vcpe("v", "p", "*", yes, "", "1.2", "1.5", "")},
		/* H */ {vcpe("v", "p", "*", yes, "", "", "0.9", "")},
		/* I */ {vcpe("v", "p", "*", yes, "", "3.0", "", "")},
		/* J */ {vcpe("v", "p", "*", yes, "1.0", "", "", "1.1"), vcpe("v", "p", "*", yes, "1.3", "", "", "1.4"),
			vcpe("v", "p", "1.3.5", yes), vcpe("v", "p", "*", yes, "1.3", "", "", "1.4")},
		/* K */ {vcpe("v", "p", "1.0", no), vcpe("v", "q", "*", yes), vcpe("v", "q", "1.0", yes), vcpe("w", "z", "1.0", no)},
		/* L */ {vcpe("v", "p", "*", yes, "", "", "", `11.5\(1\)`)}, // CPE-escaped, as NVD writes some
		/* M */ {vcpe("v", "p", "2.0", yes, "", "", "", "1.0")}, // bounds exclude its own version
		/* N */ {vcpe("v", "p", "2.0", yes, "1.0", "", "", "")},
		/* O */ {vcpe("v", "p", "*", yes, "5.0", "5.0", "", "")}, // both start bounds: both hold
		/* Q */ {vcpe("v", "p", "*", yes, "1.0-BETA", "", "", "2.0")},
		/* R */ {vcpe("v", "p", "*", yes, "2.0", "", "", "1.0")}, // empty range
	}
	d := &Data{}
	for i, cpes := range cves {
		letter := "ABCDEFGHIJKLMNOQR"[i]
		updated := fmt.Sprintf("2024-%02d-%02d 00:00:00Z", 12-i/28, 28-i%28)
		d.CVEs = append(d.CVEs, cve(fmt.Sprintf("CVE-2024-%04d", 1000+int(letter)), updated, cpes...))
	}
	ix, err := Build(d, Meta{ID: "t"})
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// TestProductCVEsAtRules checks each matching rule on the fixture; the
// letters name its CVEs. Every answer is worked out from the rules in the
// doc comment, with CompareVersions' order: 1.0 < 1.00 < 1.0-beta < 1.1 <
// 1.2 < 1.3 < 1.3.5 < 1.4 < 1.5 < 1.10 < 2.0 < 2.0rc1 < 3.0 < 3.0.1 < 5.0
// < 5.0.1 < 11.5 < 11.5(1).
func TestProductCVEsAtRules(t *testing.T) {
	ix := affectedFixture(t)
	// E ("*", no bounds) covers every version; C (not vulnerable) and D
	// (NA) none.
	for _, tc := range []struct {
		vendor, product, version string
		want                     string
		why                      string
	}{
		{"v", "p", "1.0", "AEJL", "A exact; J in [1.0,1.1); L < 11.5(1); not Q (1.0 < 1.0-beta)"},
		{"v", "p", "1.00", "EJL", "no exact match: 1.00 is not the string 1.0; in J's [1.0,1.1)"},
		{"v", "p", "1", "EL", "no exact match: 1 is not 1.0; 1 < 1.0, below J"},
		{"v", "p", "1.2", "EFLQ", "at F's start-including bound; G starts excluding 1.2"},
		{"v", "p", "1.5", "EGLQ", "at G's end-including bound; F ends excluding 1.5"},
		{"v", "p", "1.10", "ELQ", "1.10 > 1.5 (10 > 5): past F and G; in no range of J"},
		{"v", "p", "1.3.5", "EFGJLQ", "J by exact version and by two equal ranges: once"},
		{"v", "p", "0.9", "EHL", "at H's end-including bound"},
		{"v", "p", "0.9.1", "EL", "just past H's end"},
		{"v", "p", "2.0rc1", "BEL", "B's version folded to lower case; 2.0rc1 > 2.0, past Q"},
		{"v", "p", "2.0RC1", "BEL", "the asked version folded too"},
		{"v", "p", "2.0Rc1", "BEL", "any mix of cases"},
		{"v", "p", "2.0", "ELN", "N's bound holds; M's excludes its own version; Q ends excluding 2.0"},
		{"v", "p", "3.0", "EL", "I starts excluding 3.0"},
		{"v", "p", "3.0.1", "EIL", "just past I's start"},
		{"v", "p", "11.5", "EILO", `L's bound 11.5\(1\) is 11.5(1); 11.5 is shorter, so before it; past O's 5.0`},
		{"v", "p", "11.5(1)", "EIO", "at L's end-excluding bound"},
		{"v", "p", "11.5(0)", "EILO", "just inside L"},
		{"v", "p", `11.5\(0\)`, "EIO", "the asked version is taken as it is, never unescaped: 11.5\\ > 11.5("},
		{"v", "p", "5.0", "EIL", "O needs >= 5.0 and > 5.0"},
		{"v", "p", "5.0.1", "EILO", "in O"},
		{"v", "p", "1.0-beta", "EJLQ", "at Q's start bound 1.0-BETA, folded"},
		{"v", "p", "1.0-BETA", "EJLQ", "likewise"},
		{"v", "p", "1.0-alpha", "EJL", "1.0-alpha < 1.0-beta"},
		{"v", "q", "1.0", "K", "only v/q's CPEs: K by \"*\" and by 1.0, once"},
		{"v", "q", "7", "K", "K's \"*\""},
		{"w", "z", "1.0", "", "w/z is named, never vulnerable"},
		{"v", "p", "", "", "an empty version matches nothing"},
		{"v", "p", "*", "", "\"*\" is not a version"},
		{"v", "p", "-", "", "\"-\" is not a version"},
	} {
		l, vendorOK, ok := ix.ProductCVEsAt(tc.vendor, tc.product, tc.version)
		if !vendorOK || !ok {
			t.Errorf("%s/%s: vendorOK %v ok %v", tc.vendor, tc.product, vendorOK, ok)
			continue
		}
		want := []string{}
		for _, c := range tc.want {
			want = append(want, fmt.Sprintf("CVE-2024-%04d", 1000+int(c)))
		}
		if diff := cmp.Diff(want, listNames(t, l)); diff != "" {
			t.Errorf("%s/%s at %q (%s) (-want +got):\n%s", tc.vendor, tc.product, tc.version, tc.why, diff)
		}
	}
	if _, vendorOK, ok := ix.ProductCVEsAt("v", "nope", "1.0"); !vendorOK || ok {
		t.Errorf("unknown product: vendorOK %v ok %v", vendorOK, ok)
	}
	if _, vendorOK, ok := ix.ProductCVEsAt("nope", "p", "1.0"); vendorOK || ok {
		t.Errorf("unknown vendor: vendorOK %v ok %v", vendorOK, ok)
	}
}

// TestProductCVEsAtAllocs: an exact or unbounded match alone costs no
// allocation, a merge of several sources one.
func TestProductCVEsAtAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	ix := affectedFixture(t)
	for _, tc := range []struct {
		product, version string
		max              float64
	}{
		{"q", "1.0", 1}, // exact and "*": merged
		{"q", "8", 0},   // "*" alone
		{"p", "1.3.5", 1},
		{"p", "2.0rc1", 1},
		{"p", "2.0RC1", 2}, // and the folded copy
	} {
		if n := testing.AllocsPerRun(100, func() { ix.ProductCVEsAt("v", tc.product, tc.version) }); n > tc.max {
			t.Errorf("v/%s at %s: %v allocs, want <= %v", tc.product, tc.version, n, tc.max)
		}
	}
}

// TestProductCVEsAtAgainstRules compares ProductCVEsAt with a plain
// reading of the rules, CVE by CVE, on random CPEs over a small set of
// versions, so that bounds and asked versions often meet exactly.
func TestProductCVEsAtAgainstRules(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	vs := []string{"1", "1.0", "1.0.0", "1.00", "1.1", "1.2", "1.10", "1.2a", "1.2A", "2", "2.0-rc1", "2.0", `2.0\(1\)`, "2.0(1)", "10", "a", "B"}
	pick := func() string { return vs[r.IntN(len(vs))] }
	maybe := func() string {
		if r.IntN(3) == 0 {
			return pick()
		}
		return ""
	}
	d := &Data{}
	for i := range 300 {
		var cpes []CPE
		for range r.IntN(6) {
			version := []string{"*", "*", "-", "", pick()}[r.IntN(5)]
			var bounds []string
			if version == "*" || r.IntN(8) == 0 {
				bounds = []string{maybe(), maybe(), maybe(), maybe()}
			}
			cpes = append(cpes, vcpe("v", []string{"p", "q"}[r.IntN(2)], version, r.IntN(4) > 0, bounds...))
		}
		d.CVEs = append(d.CVEs, cve(fmt.Sprintf("CVE-2020-%04d", i), fmt.Sprintf("2020-01-01 00:%02d:%02d", r.IntN(60), r.IntN(60))+"Z", cpes...))
	}
	ix, err := Build(d, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	lower := func(s string) string {
		b := []byte(s)
		for i, c := range b {
			if 'A' <= c && c <= 'Z' {
				b[i] = c + 'a' - 'A'
			}
		}
		return string(b)
	}
	unescape := func(s string) string { return strings.ReplaceAll(s, `\`, "") } // no "\\" among vs
	covers := func(c CPE, asked string) bool {
		v := lower(asked)
		if !c.Vulnerable || v == "" || v == "*" || v == "-" {
			return false
		}
		in := func(bound string, ok func(int) bool) bool {
			return bound == "" || ok(CompareVersions(v, lower(unescape(bound))))
		}
		within := in(c.VersionStartIncluding, func(x int) bool { return x >= 0 }) &&
			in(c.VersionStartExcluding, func(x int) bool { return x > 0 }) &&
			in(c.VersionEndIncluding, func(x int) bool { return x <= 0 }) &&
			in(c.VersionEndExcluding, func(x int) bool { return x < 0 })
		switch c.Version {
		case "*":
			return within
		case "-", "":
			return false
		}
		return lower(c.Version) == v && within
	}
	for _, product := range []string{"p", "q"} {
		all, _, _ := ix.ProductCVEs("v", product)
		allNames := listNames(t, all)
		byName := map[string]*CVE{}
		for i := range d.CVEs {
			byName[d.CVEs[i].Name] = &d.CVEs[i]
		}
		for _, asked := range append(vs, "0", "1.5", "3", "2.0(0)", "2.0(2)", "z", "*", "-", "") {
			want := []string{}
			for _, name := range allNames {
				if slices.ContainsFunc(byName[name].CPEs, func(c CPE) bool { return c.Product == product && covers(c, asked) }) {
					want = append(want, name)
				}
			}
			l, _, _ := ix.ProductCVEsAt("v", product, asked)
			if diff := cmp.Diff(want, listNames(t, l)); diff != "" {
				t.Errorf("v/%s at %q (-want +got):\n%s", product, asked, diff)
			}
		}
	}
}
