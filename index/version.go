package index

import "strings"

// CompareVersions orders version strings the way the API lists a product's
// versions: each string is split into maximal runs of digits and of
// non-digits, compared run by run (two digit runs by numeric value with
// leading zeros ignored, anything else by bytes), the one that runs out
// first sorts first, and strings still equal are ordered by bytes. So
// 1.9 < 1.10 < 2.0 < 2.0a < 10. It returns -1, 0 or +1.
func CompareVersions(a, b string) int {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ra, na := nextRun(a, i)
		rb, nb := nextRun(b, j)
		i, j = na, nb
		da, db := isDigit(ra[0]), isDigit(rb[0])
		var c int
		if da && db {
			c = compareDigits(ra, rb)
		} else {
			c = strings.Compare(ra, rb)
		}
		if c != 0 {
			return c
		}
	}
	switch {
	case i < len(a):
		return 1
	case j < len(b):
		return -1
	}
	return strings.Compare(a, b)
}

// nextRun returns the maximal run of digits or of non-digits starting at i
// and the position after it. i must be < len(s).
func nextRun(s string, i int) (string, int) {
	d := isDigit(s[i])
	j := i + 1
	for j < len(s) && isDigit(s[j]) == d {
		j++
	}
	return s[i:j], j
}

// compareDigits compares two runs of ASCII digits by numeric value, of any
// length, ignoring leading zeros.
func compareDigits(a, b string) int {
	a = strings.TrimLeft(a, "0")
	b = strings.TrimLeft(b, "0")
	if len(a) != len(b) {
		if len(a) < len(b) {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
