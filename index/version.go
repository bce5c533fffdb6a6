package index

import (
	"cmp"
	"strings"
)

// CompareVersions compares two versions in the one version order of the
// API (docs/API.md, "Version order"); it returns -1, 0 or +1.
//
// A version is a list of tokens: maximal runs of ASCII digits (numbers,
// compared by value, of any length, leading zeros ignored) and maximal
// runs of ASCII letters (words, compared without regard to letter case).
// Every other byte only separates tokens, so 2.0-beta9, 2.0.beta9,
// 2.0beta9 and 2.0_Beta9 are one version. Tokens order as: the
// pre-release words dev < alpha < beta < pre = preview < rc, then every
// number by value, then every other word (a single letter included) by
// its lower-case bytes. Two versions compare token by token, the shorter
// one padded with the number 0: so 5.5 = 5.5.0, 2.0-rc1 < 2.0 and
// 2.0.0-rc1 < 2.0 (rc is below 0), 2.0 < 2.0.1 < 2.0.1a (a is above 0).
//
// This is a total order: two versions compare 0 exactly when their
// tokens are the same once words are in lower case, preview is written
// pre, numbers lose their leading zeros and trailing zero numbers are
// dropped. It allocates nothing.
func CompareVersions(a, b string) int {
	i, j := 0, 0
	for {
		ta, ni, oka := nextToken(a, i)
		tb, nj, okb := nextToken(b, j)
		switch {
		case !oka && !okb:
			return 0
		case !oka:
			ta = zeroToken
		case !okb:
			tb = zeroToken
		}
		if c := ta.compare(tb); c != 0 {
			return c
		}
		i, j = ni, nj
	}
}

// versionOrder is the order of a product's versions list: CompareVersions,
// and versions it finds equal in byte order (5.5 < 5.5.0).
func versionOrder(a, b string) int {
	if c := CompareVersions(a, b); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// Token classes, in their order.
const (
	classPre  = iota // a pre-release word; rank orders them
	classNum         // a number; text is its digits without leading zeros
	classWord        // any other word; text is its letters
)

// The ranks of the pre-release words.
const (
	rankDev = iota
	rankAlpha
	rankBeta
	rankPre // pre and preview
	rankRC
)

// token is one token of a version: a view into it, so making one costs
// nothing.
type token struct {
	class, rank int8
	text        string
}

// zeroToken pads the version that runs out first.
var zeroToken = token{class: classNum}

// compare orders two tokens.
func (t token) compare(u token) int {
	switch {
	case t.class != u.class:
		return cmp.Compare(t.class, u.class)
	case t.class == classPre:
		return cmp.Compare(t.rank, u.rank)
	case t.class == classNum:
		if len(t.text) != len(u.text) {
			if len(t.text) < len(u.text) {
				return -1
			}
			return 1
		}
		return strings.Compare(t.text, u.text)
	}
	return compareFolded(t.text, u.text)
}

// compareFolded compares two runs of ASCII letters by their lower-case
// bytes.
func compareFolded(a, b string) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if x, y := a[i]|0x20, b[i]|0x20; x != y {
			if x < y {
				return -1
			}
			return 1
		}
	}
	switch {
	case len(a) < len(b):
		return -1
	case len(a) > len(b):
		return 1
	}
	return 0
}

// nextToken returns the token of v at or after byte i, and the position
// after it; ok is false when v has no more tokens.
func nextToken(v string, i int) (t token, next int, ok bool) {
	start := skipSeparators(v, i)
	if start == len(v) {
		return token{}, start, false
	}
	end := start + 1
	if isDigit(v[start]) {
		for end < len(v) && isDigit(v[end]) {
			end++
		}
		return token{class: classNum, text: strings.TrimLeft(v[start:end], "0")}, end, true
	}
	for end < len(v) && isLetter(v[end]) {
		end++
	}
	w := v[start:end]
	if r, pre := preRank(w); pre {
		return token{class: classPre, rank: r}, end, true
	}
	return token{class: classWord, text: w}, end, true
}

// skipSeparators returns the position of the first digit or ASCII letter
// of v at or after i, len(v) if none.
func skipSeparators(v string, i int) int {
	for i < len(v) && !isDigit(v[i]) && !isLetter(v[i]) {
		i++
	}
	return i
}

// preRank returns the rank of a pre-release word, and whether w is one.
func preRank(w string) (int8, bool) {
	switch len(w) {
	case 2:
		if strings.EqualFold(w, "rc") {
			return rankRC, true
		}
	case 3:
		if strings.EqualFold(w, "dev") {
			return rankDev, true
		}
		if strings.EqualFold(w, "pre") {
			return rankPre, true
		}
	case 4:
		if strings.EqualFold(w, "beta") {
			return rankBeta, true
		}
	case 5:
		if strings.EqualFold(w, "alpha") {
			return rankAlpha, true
		}
	case 7:
		if strings.EqualFold(w, "preview") {
			return rankPre, true
		}
	}
	return 0, false
}

// hasToken reports whether v holds a digit or an ASCII letter: a string
// without is no version ("*", "-", "").
func hasToken(v string) bool { return skipSeparators(v, 0) < len(v) }

// release returns the release of a pre-release version: v up to its first
// pre-release word, when only numbers (one at least) come before that
// word (2.0-beta9 is a pre-release of 2.0; 2.0a-beta and beta1 are no
// pre-release). ok is false for any other version.
func release(v string) (rel string, ok bool) {
	numbers := 0
	for i := 0; ; {
		start := skipSeparators(v, i)
		t, next, more := nextToken(v, i)
		switch {
		case !more || t.class == classWord:
			return "", false
		case t.class == classPre:
			return v[:start], numbers > 0
		}
		numbers++
		i = next
	}
}

func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isLetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }
