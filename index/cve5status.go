package index

import "strings"

// StatusAt returns the status of version x for the entry: the CVE 5
// status algorithm (cve-schema's docs/versions.md) on the entry's
// versions and default status; see VersionStatus. It is safe for
// concurrent use.
func (e *AffectedEntry) StatusAt(x string) string {
	return VersionStatus(e.Versions, e.DefaultStatus, x)
}

// VersionStatus returns the status of version x under a list of version
// objects and a default status, as the CVE 5 status algorithm decides
// it: the first version object that matches x gives its status, then
// each of its changes in increasing "at" with at <= x gives its own (on
// equal "at", the later in the list wins); when no object matches, the
// default status, or "unknown" when there is none. An x without any
// ASCII letter or digit ("", "*", "-") is no version: its status is
// "unknown".
//
// Versions compare in the one version order of CompareVersions. Against
// a bound (a range's start or end, a comparison, a change's "at"), a
// pre-release counts as its release when that release equals the bound,
// as npm reads ranges: lessThan 1.6.3 does not cover 1.6.3-rc1, and
// version 1.6.3 (as a start) does. An object matches x:
//
//   - never when its versionType is a source-control one (git, hg, svn,
//     bzr, darcs, fossil, cvs; any letter case): its versions are
//     commits, not releases;
//   - with lessThan or lessThanOrEqual (a range): when start <= x and x <
//     lessThan (x <= lessThanOrEqual). A start with no digit ("n/a",
//     "unspecified", "*", "All versions") or equal to 0 is no lower bound;
//     an end with no digit ("*") is no upper bound; an end P.* or P.x
//     covers every x whose leading tokens, as many as P has, are <= P
//     (lessThanOrEqual 6.1.* covers all of 6.1.x, lessThan 2.* all of
//     2.x); a start P.* or P.x is P;
//   - otherwise (a single version): when x equals version; a version P.*
//     or P.x covers the series P (1.x covers 1.0 and 1.9.2, not 2.0).
//
// A version (of a range's start or of a single version) written with
// comparisons, as some CNAs do, is those comparisons, all of which must
// hold: "< 8.8.2", "<= 2.0.1", ">= 4.0.0, < 4.1.2" (clauses separated by
// commas, "&&" or only spaces), "A - B" (spaces around the hyphen) is
// ">= A, <= B", "A and earlier" (or "and prior", "and below", "or
// earlier", ...) is "<= A", "A and later" (or "and above", "or higher",
// ...) is ">= A", "before A" and "prior to A" are "< A". See
// parseComparisons.
func VersionStatus(versions []AffectedVersion, defaultStatus *string, x string) string {
	return explainStatus(versions, defaultStatus, x).status
}

// statusDecision is a status of VersionStatus and what decided it: the
// index of the version object that matched (-1: none, the default
// status or "unknown" decided) and of its change that applied (-1: the
// object's own status).
type statusDecision struct {
	status         string
	object, change int
}

// explainStatus is VersionStatus, with what decided.
func explainStatus(versions []AffectedVersion, defaultStatus *string, x string) statusDecision {
	d := statusDecision{status: StatusUnknown, object: -1, change: -1}
	if !hasToken(x) {
		return d
	}
	if i := matchIndex(versions, x); i >= 0 {
		d.object = i
		d.status, d.change = versions[i].statusAt(x)
		return d
	}
	if defaultStatus != nil {
		d.status = *defaultStatus
	}
	return d
}

// matchIndex returns the index of the first version object that matches
// x, -1 if none does.
func matchIndex(versions []AffectedVersion, x string) int {
	if !hasToken(x) {
		return -1
	}
	for i := range versions {
		if versions[i].matches(x) {
			return i
		}
	}
	return -1
}

// matches reports whether the version object covers x. It allocates
// only for a version written with comparisons.
func (v *AffectedVersion) matches(x string) bool {
	if isSourceControl(v.VersionType) {
		return false
	}
	cs, comparisons := parseComparisons(v.Version)
	if v.LessThan == nil && v.LessThanOrEqual == nil {
		if comparisons {
			return cs.hold(x)
		}
		return holds(opEQ, v.Version, x)
	}
	switch {
	case comparisons:
		if !cs.hold(x) {
			return false
		}
	case !noLowerBound(v.Version):
		if !holds(opGE, v.Version, x) {
			return false
		}
	}
	if v.LessThan != nil {
		return holds(opLT, *v.LessThan, x)
	}
	return holds(opLE, *v.LessThanOrEqual, x)
}

// holds reports whether x op text holds, text read as condFor reads it.
func holds(op condOp, text, x string) bool {
	c, ok := condFor(op, text)
	return !ok || c.holds(x)
}

// statusAt is the status the object gives x, which it matches: its
// status, then that of its greatest change at or below x, and the index
// of that change (-1 for none).
func (v *AffectedVersion) statusAt(x string) (string, int) {
	status, best := v.Status, -1
	for i := range v.Changes {
		at := v.Changes[i].At
		if !hasDigit(at) || compareToBound(x, at) < 0 {
			continue
		}
		if best < 0 || CompareVersions(at, v.Changes[best].At) >= 0 {
			best = i
		}
	}
	if best >= 0 {
		status = v.Changes[best].Status
	}
	return status, best
}

// isSourceControl reports whether a versionType names a source-control
// system, whose versions are commits that match no release.
func isSourceControl(versionType string) bool {
	t := strings.TrimSpace(versionType)
	for _, sc := range [...]string{"git", "hg", "svn", "bzr", "darcs", "fossil", "cvs"} {
		if strings.EqualFold(t, sc) {
			return true
		}
	}
	return false
}

// noLowerBound reports whether a range's start is no bound: it has no
// digit, or it is 0.
func noLowerBound(v string) bool {
	return !hasDigit(v) || CompareVersions(v, "0") == 0 && !hasLetter(v)
}

// compareToBound compares x with a bound b as CompareVersions does,
// except that a pre-release x whose release equals b compares equal.
func compareToBound(x, b string) int {
	c := CompareVersions(x, b)
	if c < 0 {
		if rel, ok := release(x); ok && CompareVersions(rel, b) == 0 {
			return 0
		}
	}
	return c
}

// condOp is the operator of one condition on a version x.
type condOp uint8

const (
	opEQ       condOp = iota // x = v
	opLT                     // x < v
	opLE                     // x <= v
	opGT                     // x > v
	opGE                     // x >= v
	opSeriesLE               // x's leading tokens, as many as v has, <= v
	opSeriesEQ               // x's leading tokens, as many as v has, = v
	opSeriesGT               // x's leading tokens, as many as v has, > v
)

// cond is one condition on a version x: x op v.
type cond struct {
	op condOp
	v  string
}

// condList is a conjunction of conditions.
type condList []cond

// add appends the condition x op text (see condFor), if any.
func (cs condList) add(op condOp, text string) condList {
	if c, ok := condFor(op, text); ok {
		return append(cs, c)
	}
	return cs
}

// condFor returns the condition x op text, reading a series (P.* or P.x)
// and "*" as the decisions say: a start or end without a digit ("*") is
// no bound (ok false); a series end is opSeriesLE P, a series start P, a
// single series opSeriesEQ P, and "> P.*" is opSeriesGT P. An opEQ text
// without a digit is kept as it is (x must equal it).
func condFor(op condOp, text string) (c cond, ok bool) {
	text = strings.TrimSpace(text)
	p, series := seriesOf(text)
	switch op {
	case opEQ:
		if series {
			return cond{opSeriesEQ, p}, true
		}
		return cond{opEQ, text}, true
	case opLT, opLE:
		if !hasDigit(text) {
			return cond{}, false
		}
		if series {
			return cond{opSeriesLE, p}, true
		}
	case opGT, opGE:
		if !hasDigit(text) {
			return cond{}, false
		}
		if series {
			// Past the whole series P (> P.*): x's leading tokens > P;
			// from its start (>= P.*): x >= P.
			if op == opGT {
				return cond{opSeriesGT, p}, true
			}
			return cond{opGE, p}, true
		}
	}
	return cond{op, text}, true
}

// hold reports whether x meets every condition.
func (cs condList) hold(x string) bool {
	for _, c := range cs {
		if !c.holds(x) {
			return false
		}
	}
	return true
}

func (c cond) holds(x string) bool {
	switch c.op {
	case opEQ:
		return CompareVersions(x, c.v) == 0
	case opLT:
		return compareToBound(x, c.v) < 0
	case opLE:
		return compareToBound(x, c.v) <= 0
	case opGT:
		return compareToBound(x, c.v) > 0
	case opGE:
		return compareToBound(x, c.v) >= 0
	case opSeriesLE:
		return CompareVersions(leadingTokens(x, c.v), c.v) <= 0
	case opSeriesEQ:
		return CompareVersions(leadingTokens(x, c.v), c.v) == 0
	case opSeriesGT:
		return CompareVersions(leadingTokens(x, c.v), c.v) > 0
	}
	return false
}

// leadingTokens returns x up to the end of its n-th token, n being the
// number of tokens of p (all of x when it has fewer).
func leadingTokens(x, p string) string {
	n := 0
	for i := 0; ; n++ {
		_, next, ok := nextToken(p, i)
		if !ok {
			break
		}
		i = next
	}
	end := 0
	for k := 0; k < n; k++ {
		_, next, ok := nextToken(x, end)
		if !ok {
			break
		}
		end = next
	}
	return x[:end]
}

// seriesOf reads a series P.* or P.x (also P.X): it returns P and true
// when text is a P with a digit followed by ".*" or ".x".
func seriesOf(text string) (p string, ok bool) {
	if len(text) < 3 || text[len(text)-2] != '.' {
		return "", false
	}
	switch text[len(text)-1] {
	case '*', 'x', 'X':
	default:
		return "", false
	}
	p = strings.TrimSpace(text[:len(text)-2])
	if !hasDigit(p) {
		return "", false
	}
	return p, true
}

// hasDigit reports whether s holds an ASCII digit.
func hasDigit(s string) bool {
	for i := 0; i < len(s); i++ {
		if isDigit(s[i]) {
			return true
		}
	}
	return false
}

// hasLetter reports whether s holds an ASCII letter.
func hasLetter(s string) bool {
	for i := 0; i < len(s); i++ {
		if isLetter(s[i]) {
			return true
		}
	}
	return false
}
