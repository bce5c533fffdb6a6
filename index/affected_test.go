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
// end excluding; "" for none); its update is "*".
func vcpe(vendor, product, version string, vulnerable bool, bounds ...string) CPE {
	return vcpeU(vendor, product, version, "*", vulnerable, bounds...)
}

// vcpeU is vcpe with the update component given.
func vcpeU(vendor, product, version, update string, vulnerable bool, bounds ...string) CPE {
	b := make([]string, 4)
	copy(b, bounds)
	return CPE{
		URI:    "cpe:2.3:a:" + vendor + ":" + product + ":" + version + ":" + update + ":*:*:*:*:*:*:" + strings.Join(b, "/"),
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
		/* M */ {vcpe("v", "p", "2.0", yes, "", "", "", "1.0")}, // bounds on a concrete version: not looked at
		/* N */ {vcpe("v", "p", "2.0", yes, "1.0", "", "", "")},
		/* O */ {vcpe("v", "p", "*", yes, "5.0", "5.0", "", "")}, // both start bounds: both hold
		/* Q */ {vcpe("v", "p", "*", yes, "1.0-BETA", "", "", "2.0")},
		/* R */ {vcpe("v", "p", "*", yes, "2.0", "", "", "1.0")}, // empty range
		/* U */ {vcpeU("v", "p", "6.8", "rc1", yes)}, // 6.8-rc1
		/* V */ {vcpeU("v", "p", "4.0", "-", yes)}, // 4.0, no update
		/* W */ {vcpe("v", "p", "3.1", yes)}, // 3.1 and 3.1 followed by a word
	}
	const letters = "ABCDEFGHIJKLMNOQRUVW"
	d := &Data{}
	for i, cpes := range cves {
		letter := letters[i]
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
// doc comment and the version order: 0.9 < 1.0-alpha < 1.0-beta < 1.0 =
// 1.00 = 1 < 1.1 < 1.2-rc1 < 1.2 < 1.3 < 1.3.5 < 1.4 < 1.5-beta < 1.5 <
// 1.10 < 2.0-beta9 < 2.0rc1 < 2.0 < 3.0-rc1 < 3.0 < 3.0.1 < 3.1-beta2 <
// 3.1 = 3.1.0 < 3.1a < 3.1.1 < 4.0-beta1 < 4.0 < 5.0 < 5.0.1 < 6.8-rc1 <
// 6.8 < 11.5 = 11.5(0) < 11.5(1), and beta below every number, a above.
// E ("*", no bounds) covers every version; C (not vulnerable) and D
// (NA) none.
func TestProductCVEsAtRules(t *testing.T) {
	ix := affectedFixture(t)
	for _, tc := range []struct {
		vendor, product, version string
		want                     string
		why                      string
	}{
		{"v", "p", "1.0", "AEJLQ", "A exact; J in [1.0,1.1); L < 11.5(1); Q: 1.0 > 1.0-beta"},
		{"v", "p", "1.00", "AEJLQ", "1.00 is 1.0"},
		{"v", "p", "1", "AEJLQ", "1 is 1.0"},
		{"v", "p", "1.2", "EFLQ", "at F's start-including bound; G starts excluding 1.2"},
		{"v", "p", "1.5", "EGLQ", "at G's end-including bound; F ends excluding 1.5"},
		{"v", "p", "1.10", "ELQ", "1.10 > 1.5 (10 > 5): past F and G; in no range of J"},
		{"v", "p", "1.3.5", "EFGJLQ", "J by exact version and by two equal ranges: once"},
		{"v", "p", "0.9", "EHL", "at H's end-including bound"},
		{"v", "p", "0.9.1", "EL", "just past H's end"},
		{"v", "p", "2.0rc1", "BELMN", "B: 2.0RC1, letter case aside; M and N: 2.0 (update *) and a word; Q: a pre-release of 2.0 against < 2.0"},
		{"v", "p", "2.0RC1", "BELMN", "the asked version in upper case"},
		{"v", "p", "2.0.Rc.1", "BELMN", "any mix of cases and separators"},
		{"v", "p", "2.0", "ELMN", "M's and N's bounds are not looked at; Q ends excluding 2.0; R is empty"},
		{"v", "p", "2.0.0", "ELMN", "2.0.0 is 2.0"},
		{"v", "p", "2.0-beta9", "ELMN", "M and N: 2.0 and a word; not Q (< 2.0) nor R (>= 2.0 holds, < 1.0 not)"},
		{"v", "p", "3.0", "EL", "I starts excluding 3.0"},
		{"v", "p", "3.0.1", "EIL", "just past I's start"},
		{"v", "p", "3.0-rc1", "EL", "a pre-release of 3.0 is not > 3.0"},
		{"v", "p", "3.0.1-rc1", "EIL", "its release 3.0.1 is no bound: 3.0.1-rc1 > 3.0"},
		{"v", "p", "11.5", "EILO", `L's bound 11.5\(1\) is 11.5(1) = 11.5.1; past O's 5.0`},
		{"v", "p", "11.5(1)", "EIO", "at L's end-excluding bound"},
		{"v", "p", "11.5(0)", "EILO", "11.5(0) is 11.5"},
		{"v", "p", `11.5\(1\)`, "EIO", "the asked version is taken as it is: a backslash only separates"},
		{"v", "p", "5.0", "EIL", "O needs >= 5.0 and > 5.0"},
		{"v", "p", "5.0.1", "EILO", "in O"},
		{"v", "p", "1.0-beta", "AEJLQ", "A: 1.0 and a word; J: as 1.0 against its start 1.0; Q: at its start 1.0-BETA"},
		{"v", "p", "1.0-BETA", "AEJLQ", "likewise"},
		{"v", "p", "1.0-alpha", "AEJL", "1.0-alpha < 1.0-beta: before Q"},
		{"v", "p", "1.2-rc1", "EFLQ", "as 1.2 against F's start including and G's start excluding 1.2"},
		{"v", "p", "1.5-beta", "EGLQ", "as 1.5 against F's end excluding and G's end including 1.5"},
		{"v", "p", "6.8-rc1", "EILOU", "U: 6.8 with update rc1"},
		{"v", "p", "6.8.RC1", "EILOU", "the same version"},
		{"v", "p", "6.8", "EILO", "U is 6.8-rc1, not 6.8"},
		{"v", "p", "4.0", "EILV", "V: 4.0 with update -"},
		{"v", "p", "4.0.0", "EILV", "4.0.0 is 4.0"},
		{"v", "p", "4.0-beta1", "EIL", "V's update is -, not *: no word after it"},
		{"v", "p", "3.1", "EILW", "W exact"},
		{"v", "p", "3.1-beta2", "EILW", "W: 3.1 (update *) and a word"},
		{"v", "p", "3.1a", "EILW", "W: a word is any word"},
		{"v", "p", "3.1.0-rc1", "EILW", "W: 3.1.0 is 3.1"},
		{"v", "p", "3.1.1", "EIL", "not W: 3.1 followed by a number"},
		{"v", "p", "beta", "EHL", "below every number: <= 0.9 and < 11.5(1); no release, no prefix"},
		{"v", "p", "a", "EIO", "above every number"},
		{"v", "q", "1.0", "K", "only v/q's CPEs: K by \"*\" and by 1.0, once"},
		{"v", "q", "7", "K", "K's \"*\""},
		{"w", "z", "1.0", "", "w/z is named, never vulnerable"},
		{"v", "p", "", "", "an empty version matches nothing"},
		{"v", "p", "*", "", "\"*\" is not a version"},
		{"v", "p", "-", "", "\"-\" is not a version"},
		{"v", "p", "..", "", "nor is anything without a letter or digit"},
	} {
		l, err := ix.ProductCVEsAt(tc.vendor, tc.product, tc.version)
		if err != nil {
			t.Errorf("%s/%s: %v", tc.vendor, tc.product, err)
			continue
		}
		want := []string{}
		for _, c := range tc.want {
			want = append(want, fmt.Sprintf("CVE-2024-%04d", 1000+int(c)))
		}
		if diff := cmp.Diff(want, listNames(t, l.List)); diff != "" {
			t.Errorf("%s/%s at %q (%s) (-want +got):\n%s", tc.vendor, tc.product, tc.version, tc.why, diff)
		}
	}
	if _, err := ix.ProductCVEsAt("v", "nope", "1.0"); err != ErrProductNotFound {
		t.Errorf("unknown product: %v", err)
	}
	if _, err := ix.ProductCVEsAt("nope", "p", "1.0"); err != ErrVendorNotFound {
		t.Errorf("unknown vendor: %v", err)
	}
}

// TestProductVersions: a product's versions are its distinct version
// components (never joined with the update), in version order, those
// the order finds equal in byte order.
func TestProductVersions(t *testing.T) {
	d := &Data{CVEs: []CVE{
		cve("CVE-2024-0001", "2024-01-02 00:00:00Z",
			vcpe("v", "p", "10", true), vcpeU("v", "p", "2.0", "beta9", true), vcpe("v", "p", "1.10", false),
			vcpe("v", "p", "5.5.0", true), vcpe("v", "p", "*", true), vcpe("v", "p", "-", false)),
		cve("CVE-2024-0002", "2024-01-01 00:00:00Z",
			vcpe("v", "p", "2.0a", true), vcpe("v", "p", "1.9", false), vcpeU("v", "p", "2.0", "rc1", false),
			vcpe("v", "p", "5.5", true), vcpe("v", "p", "2.0-beta9", true), vcpe("v", "p", "10", true)),
	}}
	ix, err := Build(d, Meta{ID: "t"})
	if err != nil {
		t.Fatal(err)
	}
	body, err := ix.Product("v", "p")
	if err != nil {
		t.Fatal("no v/p")
	}
	var got struct{ Versions []string }
	if err := json.Unmarshal(body, &got); err != nil {
		t.Fatal(err)
	}
	want := []string{"1.9", "1.10", "2.0-beta9", "2.0", "2.0a", "5.5", "5.5.0", "10"}
	if diff := cmp.Diff(want, got.Versions); diff != "" {
		t.Errorf("versions (-want +got):\n%s", diff)
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
		{"p", "2.0RC1", 1},
		{"p", "2.0-beta9", 1}, // a pre-release, against its release
		{"p", "3.1a", 1},      // and a prefix
	} {
		if n := testing.AllocsPerRun(100, func() { ix.ProductCVEsAt("v", tc.product, tc.version) }); n > tc.max {
			t.Errorf("v/%s at %s: %v allocs, want <= %v", tc.product, tc.version, n, tc.max)
		}
	}
}

// TestProductCVEsAtAgainstRules compares ProductCVEsAt with a plain
// reading of the rules, CVE by CVE, on random CPEs over a small set of
// versions, so that bounds, updates and asked versions often meet
// exactly, pre-releases and their releases included.
func TestProductCVEsAtAgainstRules(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	vs := []string{"1", "1.0", "1.0.0", "1.00", "1.1", "1.2", "1.10", "1.2a", "1.2A", "2", "2.0-rc1", "2.0", `2.0\(1\)`, "2.0(1)", "10", "a", "B",
		"2.0-beta", "2.0.0-rc1", "1.0-alpha", "1.0rc2", "2.0a", "10-dev"}
	pick := func() string { return vs[r.IntN(len(vs))] }
	maybe := func() string {
		if r.IntN(3) == 0 {
			return pick()
		}
		return ""
	}
	d := &Data{}
	for i := range 400 {
		var cpes []CPE
		for range r.IntN(6) {
			version := []string{"*", "*", "-", "", pick(), pick()}[r.IntN(6)]
			update := []string{"*", "*", "-", "", "rc1", "beta", "a", "2"}[r.IntN(8)]
			var bounds []string
			if version == "*" || r.IntN(8) == 0 {
				bounds = []string{maybe(), maybe(), maybe(), maybe()}
			}
			cpes = append(cpes, vcpeU("v", []string{"p", "q"}[r.IntN(2)], version, update, r.IntN(4) > 0, bounds...))
		}
		d.CVEs = append(d.CVEs, cve(fmt.Sprintf("CVE-2020-%04d", i), fmt.Sprintf("2020-01-01 %02d:%02d:%02d", r.IntN(24), r.IntN(60), r.IntN(60))+"Z", cpes...))
	}
	// And v/r: every combination of four bounds from a few versions, a
	// pre-release and its release among them, each its own CVE.
	bs := []string{"", "2.0-rc1", "2.0", "1.0"}
	for i := range 256 {
		c := vcpe("v", "r", "*", true, bs[i&3], bs[i>>2&3], bs[i>>4&3], bs[i>>6])
		d.CVEs = append(d.CVEs, cve(fmt.Sprintf("CVE-2021-%04d", i), fmt.Sprintf("2021-01-01 00:%02d:%02d", i/60, i%60)+"Z", c))
	}
	ix, err := Build(d, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	unescape := func(s string) string { return strings.ReplaceAll(s, `\`, "") } // no "\\" among vs
	isVersion := func(v string) bool { return len(plainTokens(v)) > 0 }
	// release: the leading numbers, when a pre-release word follows them.
	release := func(v string) (string, bool) {
		t := plainTokens(v)
		n := 0
		for n < len(t) && t[n].class == 1 {
			n++
		}
		if n == 0 || n == len(t) || t[n].class != 0 {
			return "", false
		}
		rel := make([]string, n)
		for i := range rel {
			rel[i] = "0" + t[i].text // never empty; a leading zero changes nothing
		}
		return strings.Join(rel, "."), true
	}
	// followedByWord: asked is version followed by a word and anything
	// after it.
	followedByWord := func(asked, version string) bool {
		t := plainTokens(asked)
		for i := 1; i < len(t); i++ {
			if t[i].class == 1 {
				continue
			}
			head := t[:i]
			for len(head) > 0 && head[len(head)-1] == (plainToken{1, ""}) {
				head = head[:len(head)-1]
			}
			if slices.Equal(head, canonical(version)) {
				return true
			}
		}
		return false
	}
	covers := func(c CPE, asked string) bool {
		if !c.Vulnerable || !isVersion(asked) {
			return false
		}
		update, anyUpdate := uriUpdate(c.URI)
		switch c.Version {
		case "*":
			meets := func(bound string, ok func(int) bool) bool {
				if bound == "" {
					return true
				}
				b, x := unescape(bound), asked
				if rel, pre := release(asked); pre && CompareVersions(rel, b) == 0 {
					x = rel
				}
				return ok(CompareVersions(x, b))
			}
			return meets(c.VersionStartIncluding, func(x int) bool { return x >= 0 }) &&
				meets(c.VersionStartExcluding, func(x int) bool { return x > 0 }) &&
				meets(c.VersionEndIncluding, func(x int) bool { return x <= 0 }) &&
				meets(c.VersionEndExcluding, func(x int) bool { return x < 0 })
		case "-", "":
			return false
		}
		version := c.Version
		if update != "" {
			version += "-" + update
		}
		if CompareVersions(asked, version) == 0 {
			return true
		}
		return anyUpdate && followedByWord(asked, c.Version)
	}
	for _, product := range []string{"p", "q", "r"} {
		all, _ := ix.ProductCVEs("v", product)
		allNames := listNames(t, all.List)
		byName := map[string]*CVE{}
		for i := range d.CVEs {
			byName[d.CVEs[i].Name] = &d.CVEs[i]
		}
		asks := append(slices.Clone(vs), "0", "1.5", "3", "2.0(0)", "2.0(2)", "z", "*", "-", "", "2.0-rc1-a", "2.0.rc1", "1.2a.beta",
			"2.0-alpha", "2.0-rc2", "1.0-beta", "10-rc1", "1.2b", "1.2-rc1", "2.0b-rc1", "beta", "2-a", "2.0.1-rc1")
		for _, asked := range asks {
			want := []string{}
			for _, name := range allNames {
				if slices.ContainsFunc(byName[name].CPEs, func(c CPE) bool { return c.Product == product && covers(c, asked) }) {
					want = append(want, name)
				}
			}
			l, _ := ix.ProductCVEsAt("v", product, asked)
			if diff := cmp.Diff(want, listNames(t, l.List)); diff != "" {
				t.Errorf("v/%s at %q (-want +got):\n%s", product, asked, diff)
			}
		}
	}
}

// TestWarmVersionTables: warming builds the tables of the vulnerable
// products, the biggest first, stops when told, and changes no answer.
func TestWarmVersionTables(t *testing.T) {
	cold, warm := affectedFixture(t), affectedFixture(t)
	product := func(ix *Index, v, p string) uint32 {
		k, err := ix.product(v, p)
		if err != nil {
			t.Fatalf("no product %s/%s", v, p)
		}
		return k
	}
	for k := range warm.productRecs {
		v, p := warm.productNames(uint32(k))
		if product(warm, v, p) != uint32(k) {
			t.Errorf("productNames(%d) = %s/%s, which is another product", k, v, p)
		}
	}
	calls := 0
	stopSecond := func() bool { calls++; return calls > 1 }
	if n := warm.WarmVersionTables(1, stopSecond); n != 1 {
		t.Fatalf("stopped before the second product: built %d, want 1", n)
	}
	// v/p is in every CVE of the fixture, v/q in one: v/p comes first.
	if warm.affs[product(warm, "v", "p")].aff == nil || warm.affs[product(warm, "v", "q")].aff != nil {
		t.Errorf("the first product warmed is not the biggest")
	}
	if n := warm.WarmVersionTables(100, func() bool { return false }); n != 0 {
		t.Errorf("no product has 100 CVEs, yet %d were built", n)
	}
	// w/z has no vulnerable CPE: nothing to build.
	if n := warm.WarmVersionTables(1, func() bool { return false }); n != 2 {
		t.Errorf("built %d products, want 2 (v/p and v/q)", n)
	}
	if warm.affs[product(warm, "v", "q")].aff == nil {
		t.Errorf("v/q not built")
	}
	for _, pair := range [][2]string{{"v", "p"}, {"v", "q"}, {"w", "z"}} {
		for _, version := range []string{"1.0", "1.3.5", "2.0-rc1", "11.5(1)", "6.8-rc1", "0", "*", ""} {
			c, _ := cold.ProductCVEsAt(pair[0], pair[1], version)
			w, _ := warm.ProductCVEsAt(pair[0], pair[1], version)
			if got, want := listNames(t, w.List), listNames(t, c.List); !cmp.Equal(got, want) {
				t.Errorf("%s/%s at %q: warmed %v, cold %v", pair[0], pair[1], version, got, want)
			}
		}
	}
}
