package index

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// plainToken is a token of the version order, read plainly: class 0 a
// pre-release word (rank in text), 1 a number (its digits without
// leading zeros), 2 any other word (in lower case).
type plainToken struct {
	class int
	text  string
}

// plainTokens splits v as the decisions say, with no shortcut: maximal
// runs of ASCII digits and of ASCII letters, anything else separating.
func plainTokens(v string) []plainToken {
	var out []plainToken
	for i := 0; i < len(v); {
		c := v[i]
		digit := '0' <= c && c <= '9'
		letter := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !digit && !letter {
			i++
			continue
		}
		j := i
		for j < len(v) && (digit && '0' <= v[j] && v[j] <= '9' ||
			letter && ('a' <= v[j] && v[j] <= 'z' || 'A' <= v[j] && v[j] <= 'Z')) {
			j++
		}
		run := v[i:j]
		i = j
		if digit {
			n := strings.TrimLeft(run, "0")
			out = append(out, plainToken{1, n})
			continue
		}
		w := strings.ToLower(run)
		pre := map[string]string{"dev": "0", "alpha": "1", "beta": "2", "pre": "3", "preview": "3", "rc": "4"}
		if r, ok := pre[w]; ok {
			out = append(out, plainToken{0, r})
		} else {
			out = append(out, plainToken{2, w})
		}
	}
	return out
}

// plainCompare compares token lists as the decisions say: token by token,
// the shorter list padded with the number 0.
func plainCompare(a, b string) int {
	ta, tb := plainTokens(a), plainTokens(b)
	zero := plainToken{1, ""}
	for i := 0; i < max(len(ta), len(tb)); i++ {
		x, y := zero, zero
		if i < len(ta) {
			x = ta[i]
		}
		if i < len(tb) {
			y = tb[i]
		}
		if x.class != y.class {
			return sign(x.class - y.class)
		}
		if x.class == 1 && len(x.text) != len(y.text) {
			return sign(len(x.text) - len(y.text))
		}
		if c := strings.Compare(x.text, y.text); c != 0 {
			return c
		}
	}
	return 0
}

// canonical is the version's canonical form: its plain tokens without
// the trailing zero numbers.
func canonical(v string) []plainToken {
	t := plainTokens(v)
	for len(t) > 0 && t[len(t)-1] == (plainToken{1, ""}) {
		t = t[:len(t)-1]
	}
	return t
}

func sign(x int) int {
	switch {
	case x < 0:
		return -1
	case x > 0:
		return 1
	}
	return 0
}

// TestCompareVersions checks every example of the decisions' sections
// "Ordering of lists" and "Version order and version matching", then
// more: each row holds groups in ascending order, the versions of a
// group equal.
func TestCompareVersions(t *testing.T) {
	for _, row := range [][][]string{
		// Decisions: one version whatever separates its tokens.
		{{"2.0-beta9", "2.0.beta9", "2.0beta9", "2.0_Beta9"}},
		// Decisions: the word ranks, the release, other words.
		{{"1.0-dev"}, {"1.0-alpha"}, {"1.0-beta"}, {"1.0-pre", "1.0-preview"}, {"1.0-rc"}, {"1.0"}, {"1.0-a"}, {"1.0-b"}, {"1.0-zeta"}},
		{{"1.0.2"}, {"1.0.2a"}}, // OpenSSL
		{{"5.5", "5.5.0", "5.5.00"}},
		{{"2.0-rc1"}, {"2.0"}},
		{{"2.0.0-rc1"}, {"2.0"}},
		{{"2.0"}, {"2.0.1"}, {"2.0.1a"}},
		// Decisions, a product's versions.
		{{"1.9"}, {"1.10"}, {"2.0-beta9"}, {"2.0"}, {"2.0a"}, {"10"}},
		// Numbers by value, of any length, leading zeros aside.
		{{"01", "1", "001", "1.0"}, {"1.02", "1.2"}, {"1.10"}},
		{{"99999999999999999999999"}, {"100000000000000000000000"}},
		{{"2.00000000000000000001", "2.1"}, {"10"}},
		// A pre-release word is below every number, even 0; another
		// word above every number.
		{{"1.rc"}, {"1.0", "1"}, {"1.0.0.1"}, {"1.a"}},
		{{"8.0.0-alpha.0"}, {"8.0.0-alpha.3"}, {"8.0.0"}},
		{{"2.0-alpha1"}, {"2.0-alpha2"}, {"2.0-beta1"}, {"2.0.0", "2"}},
		{{"6.8-rc1", "6.8rc1", "6.8.RC1"}, {"6.8", "6.8.0"}, {"6.8.1-rc1"}, {"6.8.1"}},
		// Case aside; other words by their lower-case bytes.
		{{"2.0rc1", "2.0RC1", "2.0Rc1"}},
		{{"1.0a", "1.0A"}, {"1.0B", "1.0b"}, {"1.0ba"}, {"1.0c"}},
		{{"a", "A"}, {"b"}, {"va9"}, {"va10"}},
		{{"12.5(1.10000.22)"}, {"12.5(1)su8", "12.5.1su8"}}, // su is a word, above 10000
		{{"11.5(1)", "11.5.1", `11.5\(1\)`}, {"14su3"}},
		// No token at all: the number 0 padded forever.
		{{"beta"}, {"", "*", "-", "0", "0.0", "é"}, {"0.1"}},
		{{"1.0é1", "1.0.1"}}, // a non-ASCII byte only separates
	} {
		for i, group := range row {
			for _, a := range group {
				for j, other := range row {
					for _, b := range other {
						want := sign(i - j)
						if got := CompareVersions(a, b); got != want {
							t.Errorf("CompareVersions(%q, %q) = %d, want %d", a, b, got, want)
						}
					}
				}
			}
		}
	}
}

// TestVersionOrder: the order of a product's versions list, versions the
// order finds equal in byte order.
func TestVersionOrder(t *testing.T) {
	got := []string{"10", "2.0a", "2.0.beta9", "1.10", "2.0", "5.5.0", "1.9", "2.0-beta9", "5.5", "2.0-RC1", "2.0-rc1"}
	slices.SortFunc(got, versionOrder)
	want := []string{"1.9", "1.10", "2.0-beta9", "2.0.beta9", "2.0-RC1", "2.0-rc1", "2.0", "2.0a", "5.5", "5.5.0", "10"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sorted (-want +got):\n%s", diff)
	}
}

// TestRelease: a pre-release's release is its leading numbers, when a
// pre-release word follows them.
func TestRelease(t *testing.T) {
	for v, want := range map[string]string{
		"2.0-beta9":  "2.0-",
		"2.0beta9":   "2.0",
		"2.0.0-rc1":  "2.0.0-",
		"6.8-RC1":    "6.8-",
		"1.0-dev":    "1.0-",
		"7.preview":  "7.",
		"2.0-rc1-b2": "2.0-",
		"2.0":        "",
		"2.0a-beta1": "", // a word before the pre-release word
		"beta1":      "", // no number before it
		"2.0-a1":     "",
		"":           "",
		"-":          "",
	} {
		got, ok := release(v)
		if got != want || ok != (want != "") {
			t.Errorf("release(%q) = %q, %v, want %q", v, got, ok, want)
		}
	}
}

// TestCompareVersionsAllocs: comparing costs no allocation.
func TestCompareVersionsAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	if n := testing.AllocsPerRun(100, func() {
		CompareVersions("2.0.0-Beta9.preview", "2.0-BETA9.PRE.0.0")
		release("2.0-rc1")
	}); n != 0 {
		t.Errorf("%v allocations", n)
	}
}

// FuzzCompareVersions checks CompareVersions against the plain reading
// of the order, and that the order is one: antisymmetric, transitive on
// every ordering of the three versions, and 0 exactly when the canonical
// forms are the same. versionOrder is 0 only for the same string.
func FuzzCompareVersions(f *testing.F) {
	for _, s := range [][3]string{
		{"1.9", "1.10", "2.0a"},
		{"01", "1", "001"},
		{"2.0-beta9", "2.0", "2.0.0-rc1"},
		{"5.5", "5.5.0", "5.5.00"},
		{"1.0.2", "1.0.2a", "1.0.2-preview"},
		{"2.0_Beta9", "2.0.beta9", "2.0-pre"},
		{"", "*", "beta"},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, a, b, c string) {
		vs := [3]string{a, b, c}
		for _, x := range vs {
			for _, y := range vs {
				xy, yx := CompareVersions(x, y), CompareVersions(y, x)
				if xy != -yx || xy < -1 || xy > 1 {
					t.Fatalf("not antisymmetric: %q %q: %d %d", x, y, xy, yx)
				}
				if want := plainCompare(x, y); xy != want {
					t.Fatalf("CompareVersions(%q, %q) = %d, the plain reading %d", x, y, xy, want)
				}
				if (xy == 0) != slices.Equal(canonical(x), canonical(y)) {
					t.Fatalf("%q %q: compare %d, canonical forms %v %v", x, y, xy, canonical(x), canonical(y))
				}
				if o := versionOrder(x, y); (o == 0) != (x == y) || o != -versionOrder(y, x) {
					t.Fatalf("versionOrder(%q, %q) = %d", x, y, o)
				}
				for _, z := range vs {
					if xy <= 0 && CompareVersions(y, z) <= 0 && CompareVersions(x, z) > 0 {
						t.Fatalf("not transitive: %q <= %q <= %q but %q > %q", x, y, z, x, z)
					}
					if xy < 0 && CompareVersions(y, z) <= 0 && CompareVersions(x, z) >= 0 {
						t.Fatalf("not transitive: %q < %q <= %q but %q >= %q", x, y, z, x, z)
					}
				}
			}
		}
	})
}
