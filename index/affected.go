package index

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"sync"
)

// ProductCVEsAt lists the CVEs of the vendor-and-product pair that have a
// vulnerable CPE match covering version, in the list order of ProductCVEs
// and each once. vendorOK and ok are as for ProductCVEs: ok is false when
// the product is unknown, vendorOK when the vendor is. It is safe for
// concurrent use.
//
// Only CPEs marked vulnerable count, and only those naming exactly this
// vendor and product (CPE escaping removed, as in the product's name).
// Other components of the CPE (update, edition, target software, ...) are
// not looked at: a CVE listing "2.0" with update "rc1" is listed for 2.0.
// Versions are compared without regard to ASCII letter case (CPE
// attribute values are case-insensitive): the asked version, each CPE's
// version and each bound are folded to lower case first. A CPE covers
// version when its version component is
//
//   - a concrete value (not "*", "-" or empty) equal to version: the same
//     string, letter case aside, as CPE 2.3 name matching compares
//     values (so "2.0" does not cover "2.00" or "2.0.0"). Should such a
//     CPE also have range bounds (NVD puts them only on "*"), both must
//     hold: it covers its own version only if that version is within them;
//   - "*" (ANY) without bounds: it covers every version;
//   - "*" with bounds: version is within all of them, by CompareVersions
//     (the order the product's versions are listed in):
//     version_start_including <= version, version_start_excluding <
//     version, version <= version_end_including, version <
//     version_end_excluding. Bounds are NVD's text with its CPE escaping
//     removed ("11.5\(1\)" is 11.5(1)), as the version component is;
//   - "-" (NA, not applicable) or empty: it covers no version.
//
// An empty version matches nothing.
//
// The answer costs one binary search among the product's distinct exact
// versions, one among its distinct range bounds, a pass over its ranges
// comparing integers, and one allocation when it merges several sources.
func (ix *Index) ProductCVEsAt(vendorName, productName, version string) (l List, vendorOK, ok bool) {
	p, vendorOK := ix.product(vendorName, productName)
	if p == nil {
		return List{}, vendorOK, false
	}
	return ix.cveList(p.aff.match(version), false), true, true
}

// affected is what ProductCVEsAt needs of one product: its vulnerable
// CPEs, as three sets of CVE positions (each ascending and without
// repeats).
type affected struct {
	// keys are the distinct folded concrete versions, in byte order; the
	// CVEs of keys[i] are exact[at[i]:at[i+1]].
	keys  []string
	at    []int32
	exact []int32
	// any holds the CVEs with an unbounded "*".
	any []int32
	// bounds are the distinct folded and unescaped range bounds, in
	// CompareVersions order, and spans the ranges as ranks among them,
	// ordered by CVE position. A version's rank is 2i+1 when it is
	// bounds[i] and 2i when it sorts between bounds[i-1] and bounds[i],
	// so a span covers the version when lo <= rank < hi.
	bounds []string
	spans  []span
}

type span struct{ lo, hi, pos int32 }

// matchAcc collects a product's vulnerable CPEs while the CVEs are walked
// in list order.
type matchAcc struct {
	exact  []versionAt
	any    []int32
	ranges []rangeAt
}

type versionAt struct {
	version string // folded
	pos     int32
}

type rangeAt struct {
	bounds *cpeBounds
	pos    int32
}

// addMatch adds r, a vulnerable CPE of the CVE at list position pos.
func (m *matchAcc) addMatch(r *cpeRef, pos int32) {
	switch {
	case IsName(r.version):
		v := foldVersion(r.version)
		if r.bounds == nil || r.bounds.cover(v) {
			m.exact = append(m.exact, versionAt{v, pos})
		}
	case r.version != "*":
		// NA or empty: no version.
	case r.bounds == nil:
		if !lastIs(m.any, pos) {
			m.any = append(m.any, pos)
		}
	default:
		m.ranges = append(m.ranges, rangeAt{r.bounds, pos})
	}
}

// join appends what o collected, for CVEs after m's.
func (m *matchAcc) join(o *matchAcc) {
	m.exact = append(m.exact, o.exact...)
	m.any = append(m.any, o.any...)
	m.ranges = append(m.ranges, o.ranges...)
}

// build returns the product's affected, or nil when it has no vulnerable
// CPE. m must not be used afterwards.
func (m *matchAcc) build() *affected {
	if len(m.exact) == 0 && len(m.any) == 0 && len(m.ranges) == 0 {
		return nil
	}
	a := &affected{any: slices.Clip(m.any)}
	if len(m.exact) > 0 {
		ex := m.exact
		slices.SortFunc(ex, func(x, y versionAt) int {
			return cmp.Or(strings.Compare(x.version, y.version), cmp.Compare(x.pos, y.pos))
		})
		ex = slices.Compact(ex)
		n := 1
		for i := 1; i < len(ex); i++ {
			if ex[i].version != ex[i-1].version {
				n++
			}
		}
		a.keys = make([]string, 0, n)
		a.at = make([]int32, 0, n+1)
		a.exact = make([]int32, len(ex))
		for i, e := range ex {
			if i == 0 || e.version != ex[i-1].version {
				a.keys = append(a.keys, e.version)
				a.at = append(a.at, int32(i))
			}
			a.exact[i] = e.pos
		}
		a.at = append(a.at, int32(len(ex)))
	}
	if len(m.ranges) > 0 {
		a.buildSpans(m.ranges)
	}
	return a
}

// buildSpans ranks the bounds of the ranges and stores each range as a
// span; ranges holds CVE positions ascending.
func (a *affected) buildSpans(ranges []rangeAt) {
	fb := make([][4]string, len(ranges))
	var all []string
	for i, r := range ranges {
		fb[i] = r.bounds.folded()
		for _, s := range fb[i] {
			if s != "" {
				all = append(all, s)
			}
		}
	}
	slices.SortFunc(all, CompareVersions)
	a.bounds = slices.Clip(slices.Compact(all))
	rankOf := func(s string) int32 { // s is one of a.bounds
		i, _ := slices.BinarySearchFunc(a.bounds, s, CompareVersions)
		return int32(2*i + 1)
	}
	a.spans = make([]span, 0, len(ranges))
	for i, r := range ranges {
		b := &fb[i]
		sp := span{lo: 0, hi: math.MaxInt32, pos: r.pos}
		if b[0] != "" { // start including: rank >= its rank
			sp.lo = max(sp.lo, rankOf(b[0]))
		}
		if b[1] != "" { // start excluding: rank > its rank
			sp.lo = max(sp.lo, rankOf(b[1])+1)
		}
		if b[2] != "" { // end including: rank <= its rank
			sp.hi = min(sp.hi, rankOf(b[2])+1)
		}
		if b[3] != "" { // end excluding: rank < its rank
			sp.hi = min(sp.hi, rankOf(b[3]))
		}
		if sp.lo < sp.hi {
			a.spans = append(a.spans, sp)
		}
	}
	// One CVE may repeat a range (for several target platforms, say).
	slices.SortFunc(a.spans, func(x, y span) int {
		return cmp.Or(cmp.Compare(x.pos, y.pos), cmp.Compare(x.lo, y.lo), cmp.Compare(x.hi, y.hi))
	})
	a.spans = slices.Clip(slices.Compact(a.spans))
}

// rank is where the folded version v falls among a.bounds (see spans).
func (a *affected) rank(v string) int32 {
	i, found := slices.BinarySearchFunc(a.bounds, v, CompareVersions)
	if found {
		return int32(2*i + 1)
	}
	return int32(2 * i)
}

// hitsPool holds scratch slices for the CVE positions of matching spans.
var hitsPool = sync.Pool{New: func() any { return new([]int32) }}

// match returns the positions of the CVEs covering version, ascending.
// It may return a slice a holds; callers must not change it.
func (a *affected) match(version string) []int32 {
	if a == nil || !IsName(version) {
		return nil
	}
	v := foldVersion(version)
	var exact []int32
	if i, found := slices.BinarySearch(a.keys, v); found {
		exact = a.exact[a.at[i]:a.at[i+1]]
	}
	if len(a.spans) == 0 {
		switch {
		case len(exact) == 0:
			return a.any
		case len(a.any) == 0:
			return exact
		}
		return merge(nil, exact, a.any, nil)
	}
	hp := hitsPool.Get().(*[]int32)
	hits := (*hp)[:0]
	r := a.rank(v)
	for i := range a.spans {
		if sp := &a.spans[i]; sp.lo <= r && r < sp.hi && !lastIs(hits, sp.pos) {
			hits = append(hits, sp.pos)
		}
	}
	var out []int32
	if len(exact)+len(a.any)+len(hits) > 0 {
		out = merge(make([]int32, 0, len(exact)+len(a.any)+len(hits)), exact, a.any, hits)
	}
	*hp = hits
	hitsPool.Put(hp)
	return out
}

// merge appends to dst the union of three ascending lists, ascending and
// without repeats.
func merge(dst, x, y, z []int32) []int32 {
	if dst == nil {
		dst = make([]int32, 0, len(x)+len(y)+len(z))
	}
	for len(x)+len(y)+len(z) > 0 {
		m := int32(math.MaxInt32)
		for _, l := range [3][]int32{x, y, z} {
			if len(l) > 0 {
				m = min(m, l[0])
			}
		}
		dst = append(dst, m)
		for len(x) > 0 && x[0] == m {
			x = x[1:]
		}
		for len(y) > 0 && y[0] == m {
			y = y[1:]
		}
		for len(z) > 0 && z[0] == m {
			z = z[1:]
		}
	}
	return dst
}

// folded returns the four bounds with CPE escaping removed and folded to
// lower case.
func (b *cpeBounds) folded() [4]string {
	return [4]string{
		foldVersion(unescapeCPE(b.startIncluding)), foldVersion(unescapeCPE(b.startExcluding)),
		foldVersion(unescapeCPE(b.endIncluding)), foldVersion(unescapeCPE(b.endExcluding)),
	}
}

// cover reports whether the folded version v is within the bounds.
func (b *cpeBounds) cover(v string) bool {
	f := b.folded()
	return (f[0] == "" || CompareVersions(v, f[0]) >= 0) &&
		(f[1] == "" || CompareVersions(v, f[1]) > 0) &&
		(f[2] == "" || CompareVersions(v, f[2]) <= 0) &&
		(f[3] == "" || CompareVersions(v, f[3]) < 0)
}

// foldVersion returns s with ASCII letters in lower case; s itself when
// it has none in upper case.
func foldVersion(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// unescapeCPE removes CPE 2.3 escaping: each backslash stands for the
// character after it. It returns s itself when s has no backslash.
func unescapeCPE(s string) string {
	if strings.IndexByte(s, '\\') < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b = append(b, s[i])
	}
	return string(b)
}
