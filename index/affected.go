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
// The asked version is taken as it is (no CPE unescaping); an empty one,
// "*" or "-" is no version and matches nothing.
//
// The answer costs one binary search among the product's distinct exact
// versions, one among its distinct range bounds, a pass over its ranges
// comparing integers, and at most one allocation, to merge the three
// sources (one more when version has upper-case letters). The product's
// first query builds those tables, once, from the CPEs kept at load.
func (ix *Index) ProductCVEsAt(vendorName, productName, version string) (l List, vendorOK, ok bool) {
	p, vendorOK := ix.product(vendorName, productName)
	if p == nil {
		return List{}, vendorOK, false
	}
	return ix.cveList(p.affected().match(version), false), true, true
}

// affected returns p's affected, building it on first use.
func (p *product) affected() *affected {
	p.affOnce.Do(func() {
		if src := p.affSrc; src != nil {
			p.aff = new(affBuilder).build(src.versions, &src.stars)
			p.affSrc = nil
		}
	})
	return p.aff
}

// affected is what ProductCVEsAt needs of one product: its vulnerable
// CPEs, as three sets of CVE positions, each ascending and without
// repeats: by exact version, with an unbounded "*", and by range.
type affected struct {
	// keys are the distinct folded exact versions, in byte order. ids
	// holds len(keys)+1 offsets into ids itself, then the CVEs of each key
	// in turn, then those with an unbounded "*": the CVEs of keys[i] are
	// ids[ids[i]:ids[i+1]], the unbounded ones ids[ids[len(keys)]:]. One
	// slice rather than three keeps the 150,000-odd products of a full
	// snapshot small.
	keys []string
	ids  []int32
	// bounds are the distinct folded and unescaped range bounds, in
	// CompareVersions order, and spans the ranges as ranks among them,
	// ordered by CVE position. A version's rank is 2i+1 when it is
	// bounds[i] and 2i when it sorts between bounds[i-1] and bounds[i],
	// so a span covers the version when lo <= rank < hi.
	bounds []string
	spans  []span
}

type span struct{ lo, hi, pos int32 }

// exactCVEs returns the CVEs whose vulnerable CPEs name the folded
// version v.
func (a *affected) exactCVEs(v string) []int32 {
	if i, found := slices.BinarySearch(a.keys, v); found {
		return a.ids[a.ids[i]:a.ids[i+1]]
	}
	return nil
}

// anyCVEs returns the CVEs with a vulnerable unbounded "*".
func (a *affected) anyCVEs() []int32 { return a.ids[a.ids[len(a.keys)]:] }

// rank is where the folded version v falls among a.bounds (see spans).
func (a *affected) rank(v string) int32 {
	i, found := slices.BinarySearchFunc(a.bounds, v, CompareVersions)
	if found {
		return int32(2*i + 1)
	}
	return int32(2 * i)
}

// versionAt is a concrete version named by a CPE of the CVE at list
// position pos; vulnerable when the CPE is and, should it have range
// bounds, the version is within them.
type versionAt struct {
	version    string
	pos        int32
	vulnerable bool
}

func newVersionAt(r *cpeRef, pos int32) versionAt {
	return versionAt{r.version, pos, r.vulnerable && (r.bounds == nil || r.bounds.cover(foldVersion(r.version)))}
}

// starAcc collects a product's vulnerable CPEs with version "*" while
// gatherVendors walks the CVEs in list order.
type starAcc struct {
	any    []int32   // without bounds, each CVE once
	ranges []rangeAt // with bounds
}

type rangeAt struct {
	bounds *cpeBounds
	pos    int32
}

func (m *starAcc) add(r *cpeRef, pos int32) {
	if r.bounds != nil {
		m.ranges = append(m.ranges, rangeAt{r.bounds, pos})
	} else if !lastIs(m.any, pos) {
		m.any = append(m.any, pos)
	}
}

// join appends what o collected, for CVEs after m's.
func (m *starAcc) join(o *starAcc) {
	m.any = append(m.any, o.any...)
	m.ranges = append(m.ranges, o.ranges...)
}

// affBuilder builds the affected of products, one after the other, on
// one goroutine, keeping its scratch space from one product to the next.
type affBuilder struct {
	versions []string
	folded   []versionAt

	// A product's distinct range bounds, by their text as NVD wrote it:
	// textID maps it to its index in texts (in a product with more than
	// a few), ranges refer to them by index, -1 for none.
	textID map[string]int32
	texts  []boundText
	byRank []int32
	ranges [][4]int32
}

type boundText struct {
	text, folded string // folded: unescaped and folded
	rank         int32
}

// distinct returns the distinct versions of vs, sorted by version: in
// ab's scratch space, valid until its next use.
func (ab *affBuilder) distinct(vs []versionAt) []string {
	out := ab.versions[:0]
	for i := range vs {
		if i == 0 || vs[i].version != vs[i-1].version {
			out = append(out, vs[i].version)
		}
	}
	ab.versions = out
	return out
}

// build returns the affected of a product whose concrete versions are vs,
// sorted by version and then CVE, and whose vulnerable "*" CPEs are
// stars; nil when no version can match. The exact versions come grouped from the
// sort newVendor does anyway for the product's versions, so only versions
// with upper-case letters (folded, they may join another group) cost a
// sort of their own.
func (ab *affBuilder) build(vs []versionAt, stars *starAcc) *affected {
	n, upper := 0, false
	for i := range vs {
		if vs[i].vulnerable {
			n++
			upper = upper || foldVersion(vs[i].version) != vs[i].version
		}
	}
	if n == 0 && len(stars.any) == 0 && len(stars.ranges) == 0 {
		return nil
	}
	if upper {
		f := ab.folded[:0]
		for _, v := range vs {
			if v.vulnerable {
				f = append(f, versionAt{foldVersion(v.version), v.pos, true})
			}
		}
		slices.SortFunc(f, func(x, y versionAt) int {
			return cmp.Or(strings.Compare(x.version, y.version), cmp.Compare(x.pos, y.pos))
		})
		vs, ab.folded = f, f
	}
	// Count the distinct keys and (key, CVE) pairs, then fill.
	keys, pairs := 0, 0
	var last *versionAt
	for i := range vs {
		v := &vs[i]
		if !v.vulnerable {
			continue
		}
		if last == nil || v.version != last.version {
			keys++
			pairs++
		} else if v.pos != last.pos {
			pairs++
		}
		last = v
	}
	a := &affected{
		keys: make([]string, 0, keys),
		ids:  make([]int32, keys+1, keys+1+pairs+len(stars.any)),
	}
	last = nil
	for i := range vs {
		v := &vs[i]
		if !v.vulnerable {
			continue
		}
		if last == nil || v.version != last.version {
			a.ids[len(a.keys)] = int32(len(a.ids))
			a.keys = append(a.keys, v.version)
			a.ids = append(a.ids, v.pos)
		} else if v.pos != last.pos {
			a.ids = append(a.ids, v.pos)
		}
		last = v
	}
	a.ids[keys] = int32(len(a.ids))
	a.ids = append(a.ids, stars.any...)
	if len(stars.ranges) > 0 {
		ab.buildSpans(a, stars.ranges)
	}
	return a
}

// boundID returns the index in ab.texts of a bound's text, -1 for none.
func (ab *affBuilder) boundID(text string) int32 {
	if text == "" {
		return -1
	}
	if len(ab.texts) <= 8 {
		// Most products have a few: a map costs more.
		for i := range ab.texts {
			if ab.texts[i].text == text {
				return int32(i)
			}
		}
		if len(ab.texts) == 8 {
			for i := range ab.texts {
				ab.textID[ab.texts[i].text] = int32(i)
			}
		}
	} else if id, ok := ab.textID[text]; ok {
		return id
	}
	id := int32(len(ab.texts))
	if id >= 8 {
		ab.textID[text] = id
	}
	ab.texts = append(ab.texts, boundText{text: text, folded: foldVersion(unescapeCPE(text))})
	return id
}

// buildSpans ranks the bounds of ranges and stores each range in a as a
// span.
func (ab *affBuilder) buildSpans(a *affected, ranges []rangeAt) {
	// A map that grew for a big product would cost its size to clear
	// for each one after it.
	if len(ab.textID) > 64 || ab.textID == nil {
		ab.textID = map[string]int32{}
	} else {
		clear(ab.textID)
	}
	ab.texts, ab.ranges = ab.texts[:0], ab.ranges[:0]
	for _, r := range ranges {
		b := r.bounds
		ab.ranges = append(ab.ranges, [4]int32{
			ab.boundID(b.startIncluding), ab.boundID(b.startExcluding),
			ab.boundID(b.endIncluding), ab.boundID(b.endExcluding),
		})
	}
	// Rank the distinct texts by their folded value; texts that fold to
	// the same value share a rank.
	ab.byRank = slices.Grow(ab.byRank[:0], len(ab.texts))[:len(ab.texts)]
	for i := range ab.byRank {
		ab.byRank[i] = int32(i)
	}
	slices.SortFunc(ab.byRank, func(x, y int32) int { return CompareVersions(ab.texts[x].folded, ab.texts[y].folded) })
	bounds := make([]string, 0, len(ab.texts))
	for _, id := range ab.byRank {
		if f := ab.texts[id].folded; len(bounds) == 0 || bounds[len(bounds)-1] != f {
			bounds = append(bounds, f)
		}
		ab.texts[id].rank = int32(2*len(bounds) - 1)
	}
	a.bounds = slices.Clip(bounds)
	rankOf := func(id int32) int32 { return ab.texts[id].rank }
	spans := make([]span, 0, len(ranges))
	for i := range ranges {
		b := &ab.ranges[i]
		sp := span{lo: 0, hi: math.MaxInt32, pos: ranges[i].pos}
		if b[0] >= 0 { // start including: rank >= its rank
			sp.lo = max(sp.lo, rankOf(b[0]))
		}
		if b[1] >= 0 { // start excluding: rank > its rank
			sp.lo = max(sp.lo, rankOf(b[1])+1)
		}
		if b[2] >= 0 { // end including: rank <= its rank
			sp.hi = min(sp.hi, rankOf(b[2])+1)
		}
		if b[3] >= 0 { // end excluding: rank < its rank
			sp.hi = min(sp.hi, rankOf(b[3]))
		}
		if sp.lo < sp.hi {
			spans = append(spans, sp)
		}
	}
	// One CVE may repeat a range (for several target platforms, say).
	slices.SortFunc(spans, func(x, y span) int {
		return cmp.Or(cmp.Compare(x.pos, y.pos), cmp.Compare(x.lo, y.lo), cmp.Compare(x.hi, y.hi))
	})
	if spans = slices.Compact(spans); len(spans) > 0 {
		a.spans = slices.Clip(spans)
	}
}

// scratchPool holds scratch slices of CVE positions for match.
var scratchPool = sync.Pool{New: func() any { return new([]int32) }}

// match returns the positions of the CVEs covering version, ascending.
// It may return a slice a holds; callers must not change it.
func (a *affected) match(version string) []int32 {
	if a == nil || !IsName(version) {
		return nil
	}
	v := foldVersion(version)
	exact, unbounded := a.exactCVEs(v), a.anyCVEs()
	if len(a.spans) == 0 {
		switch {
		case len(exact) == 0:
			return unbounded
		case len(unbounded) == 0:
			return exact
		}
		return union(make([]int32, 0, len(exact)+len(unbounded)), exact, unbounded)
	}
	hp := scratchPool.Get().(*[]int32)
	hits := a.stab(a.rank(v), *hp)
	var out []int32
	switch {
	case len(exact)+len(unbounded)+len(hits) == 0:
	case len(exact) == 0 || len(unbounded) == 0:
		x := exact
		if len(x) == 0 {
			x = unbounded
		}
		out = union(make([]int32, 0, len(x)+len(hits)), x, hits)
	default:
		tp := scratchPool.Get().(*[]int32)
		t := union((*tp)[:0], exact, unbounded)
		out = union(make([]int32, 0, len(t)+len(hits)), t, hits)
		*tp = t
		scratchPool.Put(tp)
	}
	*hp = hits
	scratchPool.Put(hp)
	return out
}

// stab returns in dst (its contents replaced) the positions of the spans
// that hold rank r, ascending and without repeats.
func (a *affected) stab(r int32, dst []int32) []int32 {
	dst = slices.Grow(dst[:0], len(a.spans))[:len(a.spans)]
	n := 0
	for _, sp := range a.spans {
		// lo <= r < hi in one unsigned comparison, and no branch (the
		// compiler makes the increment a conditional move): whether a
		// span holds r is anybody's guess.
		dst[n] = sp.pos
		if uint32(r-sp.lo) < uint32(sp.hi-sp.lo) {
			n++
		}
	}
	// A CVE's several ranges are next to each other.
	return slices.Compact(dst[:n])
}

// union appends to dst the union of x and y, each ascending and without
// repeats, ascending and without repeats.
func union(dst, x, y []int32) []int32 {
	i, j := 0, 0
	for i < len(x) && j < len(y) {
		switch a, b := x[i], y[j]; {
		case a < b:
			dst = append(dst, a)
			i++
		case a > b:
			dst = append(dst, b)
			j++
		default:
			dst = append(dst, a)
			i++
			j++
		}
	}
	dst = append(dst, x[i:]...)
	return append(dst, y[j:]...)
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
