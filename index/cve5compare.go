package index

import "strings"

// parseComparisons reads a version written with comparisons, as some CNAs
// write a version object's "version": it returns the conditions, all of
// which must hold, and whether s is such a text at all. It knows:
//
//   - clauses of an operator (<, <=, >, >=, =, ==) and a version,
//     separated by commas, "&&" or only spaces: "< 8.8.2", "<= 2.0.1",
//     ">= 4.0.0, < 4.1.2", ">=1.0 <2.0";
//   - "A - B", with spaces around the hyphen: ">= A, <= B";
//   - "A and earlier", "A or earlier" (also prior, before, below, lower,
//     older): "<= A"; "A and later", "A or later" (also after, above,
//     higher, newer, greater): ">= A";
//   - "before A", "prior to A", after words without a digit ("All
//     versions before 3.2"): "< A".
//
// Every version in it must hold a digit (or be a series P.*); anything
// else, "||" among it, is not a comparison text (ok false), and the caller
// takes s as a plain version. It never panics, and allocates only the
// result.
func parseComparisons(s string) (cs condList, ok bool) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, false
	}
	switch s[0] {
	case '<', '>', '=':
		return parseClauses(s)
	}
	if strings.IndexByte(s, ' ') < 0 {
		return nil, false // every other form has a space: a plain version
	}
	if a, b, found := strings.Cut(s, " - "); found {
		a, b = strings.TrimSpace(a), strings.TrimSpace(b)
		if !isBoundText(a) || !isBoundText(b) || strings.Contains(b, " - ") {
			return nil, false
		}
		return condList(nil).add(opGE, a).add(opLE, b), true
	}
	if cs, ok := parseWordSuffix(s); ok {
		return cs, true
	}
	return parseWordPrefix(s)
}

// parseClauses reads operator-and-version clauses.
func parseClauses(s string) (condList, bool) {
	var cs condList
	for i := 0; ; {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == ',') {
			i++
		}
		if strings.HasPrefix(s[i:], "&&") {
			i += 2
			continue
		}
		if i == len(s) {
			break
		}
		var op condOp
		switch {
		case strings.HasPrefix(s[i:], "<="):
			op, i = opLE, i+2
		case strings.HasPrefix(s[i:], ">="):
			op, i = opGE, i+2
		case strings.HasPrefix(s[i:], "=="):
			op, i = opEQ, i+2
		case s[i] == '<':
			op, i = opLT, i+1
		case s[i] == '>':
			op, i = opGT, i+1
		case s[i] == '=':
			op, i = opEQ, i+1
		default:
			return nil, false
		}
		end := i
		for end < len(s) && !strings.ContainsRune("<>=,&|", rune(s[end])) {
			end++
		}
		if end < len(s) && s[end] == '|' {
			return nil, false // "||": either, which a conjunction cannot say
		}
		v := strings.TrimSpace(s[i:end])
		if !isBoundText(v) {
			return nil, false
		}
		if op != opEQ || v != "*" { // "= *": any version
			cs = cs.add(op, v)
		}
		i = end
	}
	if cs == nil {
		// Every clause was an unbounded "*" (as "< *"): no condition,
		// but a comparison all the same, matching every version.
		return condList{}, true
	}
	return cs, true
}

// Words that, after a version, make it an upper or a lower bound.
var (
	wordsUpTo = []string{"earlier", "prior", "before", "below", "lower", "older"}
	wordsFrom = []string{"later", "after", "above", "higher", "newer", "greater"}
)

// parseWordSuffix reads "A and earlier", "A or later" and their kin.
func parseWordSuffix(s string) (condList, bool) {
	sp := strings.LastIndexByte(s, ' ')
	if sp < 0 {
		return nil, false
	}
	last := asciiLower(s[sp+1:])
	rest := strings.TrimSpace(s[:sp])
	sp = strings.LastIndexByte(rest, ' ')
	if sp < 0 {
		return nil, false
	}
	conj := asciiLower(rest[sp+1:])
	if conj != "and" && conj != "or" {
		return nil, false
	}
	a := strings.TrimSpace(rest[:sp])
	if !isBoundText(a) {
		return nil, false
	}
	for _, w := range wordsUpTo {
		if last == w {
			return condList(nil).add(opLE, a), true
		}
	}
	for _, w := range wordsFrom {
		if last == w {
			return condList(nil).add(opGE, a), true
		}
	}
	return nil, false
}

// parseWordPrefix reads "before A" and "prior to A", possibly after words
// without a digit ("All versions prior to 3.2").
func parseWordPrefix(s string) (condList, bool) {
	lower := asciiLower(s) // same length as s
	for _, w := range []string{"before ", "prior to "} {
		i := strings.LastIndex(lower, w)
		if i < 0 || i > 0 && lower[i-1] != ' ' || hasDigit(s[:i]) {
			continue
		}
		a := strings.TrimSpace(s[i+len(w):])
		if !isBoundText(a) || strings.IndexByte(a, ' ') >= 0 {
			return nil, false
		}
		return condList(nil).add(opLT, a), true
	}
	return nil, false
}

// isBoundText reports whether t can be a bound in a comparison text: a
// version with a digit, or "*" (no bound).
func isBoundText(t string) bool { return t == "*" || hasDigit(t) }

// asciiLower returns s with its ASCII capitals in lower case, byte for
// byte (strings.ToLower may change the length of invalid UTF-8).
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
