package index

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"sync"
	"unsafe"
)

// ProductCVEsAt lists the CVEs of the vendor-and-product pair that have a
// vulnerable CPE match covering version, in the list order of ProductCVEs
// and each once. It fails as ProductCVEs does, with ErrVendorNotFound
// or ErrProductNotFound. It is safe for concurrent use.
//
// Only CPEs marked vulnerable count, and only those naming exactly this
// vendor and product (CPE escaping removed, as in the product's name).
// Versions are compared in the one version order of CompareVersions (so
// letter case aside, 5.5 is 5.5.0 and 2.0-beta9 is 2.0.beta9). A CPE's
// version is its version component followed by "-" and its update
// component when the update is not "*", "-" or empty: log4j:2.0:beta9 is
// 2.0-beta9. A CPE covers version when its version component is
//
//   - a concrete value (not "*", "-" or empty) and version equals the
//     CPE's version: 6.8 with update rc1 covers 6.8-rc1, not 6.8;
//   - a concrete value whose update is "*", and version is that value
//     followed by a word and anything after it: 2.0 with update "*"
//     covers 2.0, 2.0.0, 2.0-beta9 and 2.0a, not 2.0.1. (Range bounds on
//     a concrete version, which NVD never writes, are not looked at:
//     such a CPE covers what its version alone covers.)
//   - "*" (ANY): version meets every range bound the CPE has (none: every
//     version is covered): version_start_including <= version,
//     version_start_excluding < version, version <= version_end_including,
//     version < version_end_excluding. Bounds are NVD's text with its CPE
//     escaping removed ("11.5\(1\)" is 11.5(1)). A pre-release counts as
//     its release against a bound that equals its release, as npm reads
//     ranges: a bound < 2.0 does not cover 2.0-beta9, >= 2.0 does, and
//     against every other bound the pre-release is itself. The release
//     of a version is its leading numbers when a pre-release word (dev,
//     alpha, beta, pre, preview, rc) follows them;
//   - "-" (NA, not applicable) or empty: it covers no version.
//
// The asked version is taken as it is (no CPE unescaping); one without
// any ASCII letter or digit ("", "*", "-") is no version and matches
// nothing.
//
// A CVE listed under the product through its CVE JSON 5 entries (it has
// no CPE; see EntryKey) is covered when some entry of that product gives
// version the status affected (VersionStatus). Those entries are compiled
// once, on the product's first query, into an entryTable.
//
// The answer costs a binary search among the product's distinct exact
// versions for version and one for each prefix of it that ends before a
// word, one among its distinct range bounds (two for a pre-release), a
// pass over its ranges comparing integers, and at most one allocation,
// to merge what several of these found. The product's first query builds
// those tables, once, from the CPEs of the product's CVE bodies.
func (ix *Index) ProductCVEsAt(vendorName, productName, version string) (CVEList, error) {
	k, err := ix.product(vendorName, productName)
	if err != nil {
		return CVEList{}, err
	}
	a := ix.affected(k, vendorName, productName)
	nvd, cna := a.aff.match(version), a.cna.match(version)
	switch {
	case len(cna) == 0:
	case len(nvd) == 0:
		nvd = cna
	default:
		// A CVE is listed through NVD's CPEs or through its entries,
		// never both: the two lists are disjoint.
		nvd = union(make([]int32, 0, len(nvd)+len(cna)), nvd, cna)
	}
	return ix.cveList(nvd, false), nil
}

// affected returns the tables of the product at k, named vendorName and
// productName, building them on first use.
func (ix *Index) affected(k uint32, vendorName, productName string) *productAff {
	a, p := &ix.affs[k], &ix.productRecs[k]
	a.once.Do(func() {
		if p.vulnerable {
			vs, stars := ix.vulnerableCPEs(p.cves.ints(ix.vpCVEs), vendorName, productName)
			a.aff = buildAffected(vs, &stars)
		}
		if p.entries {
			a.cna = ix.entryTable(p.cves.ints(ix.vpCVEs), vendorName, productName)
		}
	})
	return a
}

// WarmVersionTables builds the tables that a product's first
// ProductCVEsAt builds, and its body (see Product), for every product with at least minCVEs CVEs and
// some vulnerable CPE or some CVE listed through its entries, the products with the most CVEs first, so that no
// query waits for them: at 400k CVEs the biggest product's take some
// 60 ms. It checks stop between products and returns early once it says
// so. It returns how many products it built. It is safe to call while
// the index serves, on its own goroutine.
func (ix *Index) WarmVersionTables(minCVEs int, stop func() bool) int {
	ix.vendorsReady()
	var todo []uint32
	for k := range ix.productRecs {
		if p := &ix.productRecs[k]; (p.vulnerable || p.entries) && int(p.cves.to-p.cves.from) >= minCVEs {
			todo = append(todo, uint32(k))
		}
	}
	slices.SortStableFunc(todo, func(a, b uint32) int {
		x, y := &ix.productRecs[a].cves, &ix.productRecs[b].cves
		return cmp.Compare(y.to-y.from, x.to-x.from)
	})
	for i, k := range todo {
		if stop() {
			return i
		}
		vendorName, productName := ix.productNames(k)
		ix.affected(k, vendorName, productName)
		ix.productBody(k) // made on first request too (see vpbodies.go)
	}
	return len(todo)
}

// eachCPE reads the CPEs of the CVEs at positions cves again from their
// bodies (the members after the summary, cpes among them) and calls f
// with each CVE's position and the iterator at each of its CPEs; with
// noUpdate, the iterator skips the update part.
func (ix *Index) eachCPE(cves []int32, noUpdate bool, f func(pos int32, it *cpeIter)) {
	for _, pos := range cves {
		s := scanner{b: ix.cveBodies[pos], i: int(ix.cveSumEnd[pos])}
		for s.eat(',') {
			key, ok := s.key()
			if !ok {
				break
			}
			if string(key) != "cpes" {
				if !s.value(0) {
					break
				}
				continue
			}
			it := cpeIter{s: s, noUpdate: noUpdate}
			for it.next() {
				f(pos, &it)
			}
			break
		}
	}
}

// vulnerableCPEs reads the CPEs of the CVEs at positions cves again from
// their bodies, as gatherVendors saw them at load, and returns those that
// are vulnerable and name vendorName and productName: the ones with a
// concrete version, and those with version "*".
func (ix *Index) vulnerableCPEs(cves []int32, vendorName, productName string) (vs []versionAt, stars starAcc) {
	ix.eachCPE(cves, false, func(pos int32, it *cpeIter) {
		if !it.vulnerable || string(it.vendor) != vendorName || string(it.product) != productName {
			return
		}
		b := cpeBounds{view(it.bounds[0]), view(it.bounds[1]), view(it.bounds[2]), view(it.bounds[3]), it.update}
		if v := view(it.version); IsName(v) {
			vs = appendVersionAt(vs, v, &b, it.anyUpdate, pos)
		} else if v == "*" {
			stars.add(&b, pos)
		}
	})
	return vs, stars
}

// affected is what ProductCVEsAt needs of one product: the tables of
// affectedTables packed into one string and one []int32, so that a
// product costs three allocations, two of them without pointers for the
// GC to follow, rather than two small slices per version and a few more.
// texts holds the keys, then the bounds, back to back. ints holds, in
// this order: the end in texts of each key, the end of each key's eq and
// of its star within their parts (nKeys each), the end in texts of each
// bound (nBounds), then, from the offsets below, the positions of eq, of
// star and of unbounded, the spans and the odd spans.
type affected struct {
	texts                                     string
	ints                                      []int32
	nKeys, nBounds                            int32
	eqAt, starAt, unboundedAt, spansAt, oddAt int32
}

// affectedTables are a product's vulnerable CPEs, as sets of CVE
// positions, each ascending and without repeats, as buildAffected
// gathers them before it packs them into an affected.
type affectedTables struct {
	// keys are the distinct versions of the CPEs with a concrete
	// version, in CompareVersions order (versions it finds equal share a
	// key). eq[i] are the CVEs with such a CPE equal to keys[i], star[i]
	// those of them whose CPE has update "*", which also cover keys[i]
	// followed by a word.
	keys      []string
	eq, star  [][]int32
	unbounded []int32 // the CVEs with a "*" CPE without bounds
	// bounds are the distinct range bounds, unescaped, in CompareVersions
	// order. A version's rank among them is 2i+1 when it equals bounds[i]
	// and 2i when it sorts between bounds[i-1] and bounds[i]. A range
	// covers a version when lo <= rank < hi: lo is 0 without a start
	// bound, 2i+1 for start including bounds[i], 2i+2 for start excluding
	// it; hi is MaxInt32 without an end bound, 2i+2 for end including
	// bounds[i], 2i+1 for end excluding it. So both ends name their bound
	// i as (end-1)/2. spans are the ranges, ordered by CVE position; odd
	// holds those with two start or two end bounds, or with lo >= hi,
	// which a single interval cannot hold once pre-releases count as
	// their release (see rankQuery).
	bounds []string
	spans  []span
	odd    []oddSpan
}

type span struct{ lo, hi, pos int32 }

// oddSpan is a range whose version must hold both lo and both hi ends
// (0 and MaxInt32 where there is no second one).
type oddSpan struct {
	lo, hi [2]int32
	pos    int32
}

const noEnd = math.MaxInt32

// versionAt is the version of a vulnerable CPE with a concrete version,
// of the CVE at list position pos: the version component, joined with
// the update when that is concrete.
type versionAt struct {
	version   string
	pos       int32
	anyUpdate bool // the update is "*"
}

// appendVersionAt appends to vs the version of a vulnerable CPE of the
// CVE at pos whose version component is version, bounds and anyUpdate
// as cpeIter found them.
func appendVersionAt(vs []versionAt, version string, b *cpeBounds, anyUpdate bool, pos int32) []versionAt {
	if b.update != "" {
		version += "-" + b.update
	}
	return append(vs, versionAt{version: version, pos: pos, anyUpdate: anyUpdate})
}

// starAcc collects a product's vulnerable CPEs with version "*", in list
// order.
type starAcc struct {
	any    []int32   // without bounds, each CVE once
	ranges []rangeAt // with bounds
}

type rangeAt struct {
	bounds cpeBounds
	pos    int32
}

func (m *starAcc) add(b *cpeBounds, pos int32) {
	if b.anyBound() {
		m.ranges = append(m.ranges, rangeAt{*b, pos})
	} else if !lastIs(m.any, pos) {
		m.any = append(m.any, pos)
	}
}

// buildAffected returns the affected of a product whose concrete versions
// are vs and whose vulnerable "*" CPEs are stars; nil when no version can
// match.
func buildAffected(exact []versionAt, stars *starAcc) *affected {
	if len(exact) == 0 && len(stars.any) == 0 && len(stars.ranges) == 0 {
		return nil
	}
	a := &affectedTables{unbounded: stars.any}
	// By bytes first, the cheaper comparison, so that the many repeats of
	// one spelling come together; then only the distinct spellings are
	// put in version order.
	slices.SortFunc(exact, func(x, y versionAt) int {
		return cmp.Or(strings.Compare(x.version, y.version), cmp.Compare(x.pos, y.pos))
	})
	type spelling struct{ from, to int } // exact[from:to] share one
	var spellings []spelling
	for i := 0; i < len(exact); {
		j := i + 1
		for j < len(exact) && exact[j].version == exact[i].version {
			j++
		}
		spellings = append(spellings, spelling{i, j})
		i = j
	}
	slices.SortFunc(spellings, func(x, y spelling) int {
		return CompareVersions(exact[x.from].version, exact[y.from].version)
	})
	for i := 0; i < len(spellings); {
		first := exact[spellings[i].from].version
		j := i + 1
		for j < len(spellings) && CompareVersions(first, exact[spellings[j].from].version) == 0 {
			j++
		}
		// Within a key, by CVE.
		var eq, star []int32
		for _, sp := range spellings[i:j] {
			for _, v := range exact[sp.from:sp.to] {
				if !lastIs(eq, v.pos) {
					eq = append(eq, v.pos)
				}
				if v.anyUpdate && !lastIs(star, v.pos) {
					star = append(star, v.pos)
				}
			}
		}
		if j-i > 1 { // several spellings of one version: 5.5 and 5.5.0
			slices.Sort(eq)
			slices.Sort(star)
			eq, star = slices.Compact(eq), slices.Compact(star)
		}
		a.keys = append(a.keys, first)
		a.eq, a.star = append(a.eq, eq), append(a.star, star)
		i = j
	}
	if len(stars.ranges) > 0 {
		a.buildSpans(stars.ranges)
	}
	return a.pack()
}

// pack returns t packed into an affected.
func (t *affectedTables) pack() *affected {
	nk, nb := len(t.keys), len(t.bounds)
	textLen, eqLen, starLen := 0, 0, 0
	for i, k := range t.keys {
		textLen, eqLen, starLen = textLen+len(k), eqLen+len(t.eq[i]), starLen+len(t.star[i])
	}
	for _, b := range t.bounds {
		textLen += len(b)
	}
	a := &affected{nKeys: int32(nk), nBounds: int32(nb), eqAt: int32(3*nk + nb)}
	a.starAt = a.eqAt + int32(eqLen)
	a.unboundedAt = a.starAt + int32(starLen)
	a.spansAt = a.unboundedAt + int32(len(t.unbounded))
	a.oddAt = a.spansAt + 3*int32(len(t.spans))
	ints := make([]int32, int(a.oddAt)+5*len(t.odd))
	var text strings.Builder
	text.Grow(textLen)
	eq, star := ints[a.eqAt:a.starAt], ints[a.starAt:a.unboundedAt]
	eqN, starN := 0, 0
	for i, k := range t.keys {
		text.WriteString(k)
		eqN += copy(eq[eqN:], t.eq[i])
		starN += copy(star[starN:], t.star[i])
		ints[i], ints[nk+i], ints[2*nk+i] = int32(text.Len()), int32(eqN), int32(starN)
	}
	for i, b := range t.bounds {
		text.WriteString(b)
		ints[3*nk+i] = int32(text.Len())
	}
	copy(ints[a.unboundedAt:a.spansAt], t.unbounded)
	a.texts, a.ints = text.String(), ints
	copy(a.spans(), t.spans)
	copy(a.odd(), t.odd)
	return a
}

// spans and odd return the spans and odd spans of a, views of its ints:
// span and oddSpan are int32s only. A stride over ints would do without
// unsafe, but stab's loop then takes a quarter longer.
func (a *affected) spans() []span {
	return int32sAs[span](a.ints[a.spansAt:a.oddAt])
}

func (a *affected) odd() []oddSpan { return int32sAs[oddSpan](a.ints[a.oddAt:]) }

// int32sAs returns s as a slice of T, a struct of int32s only, s's length
// a multiple of T's.
func int32sAs[T span | oddSpan](s []int32) []T {
	var t T
	n := len(s) / int(unsafe.Sizeof(t)/4)
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(s))), n)
}

// eq returns eq[i], star[i] and unbounded of the tables a was packed
// from, each with no spare capacity.
func (a *affected) eq(i int) []int32 {
	return sub(a.ints[a.eqAt:a.starAt], a.ints[int(a.nKeys):2*a.nKeys], i)
}

func (a *affected) star(i int) []int32 {
	return sub(a.ints[a.starAt:a.unboundedAt], a.ints[2*a.nKeys:3*a.nKeys], i)
}

func (a *affected) unbounded() []int32 { return a.ints[a.unboundedAt:a.spansAt:a.spansAt] }

// sub returns part i of all, whose parts end at ends.
func sub(all, ends []int32, i int) []int32 {
	var from int32
	if i > 0 {
		from = ends[i-1]
	}
	return all[from:ends[i]:ends[i]]
}

// find returns the index of the key equal to v.
func (a *affected) find(v string) (int, bool) {
	return searchTexts(a.texts, a.ints[:a.nKeys], 0, v)
}

// findBound returns where v falls among the bounds, and whether it
// equals the bound there.
func (a *affected) findBound(v string) (int, bool) {
	var from int32 // the bounds follow the keys in texts
	if a.nKeys > 0 {
		from = a.ints[a.nKeys-1]
	}
	return searchTexts(a.texts, a.ints[3*a.nKeys:3*a.nKeys+a.nBounds], from, v)
}

// searchTexts returns the index among the texts of texts that end at
// ends, the first starting at from, of the first one not below v in
// CompareVersions order, and whether it equals v, as
// slices.BinarySearchFunc does.
func searchTexts(texts string, ends []int32, from int32, v string) (int, bool) {
	at := func(i int) string {
		start := from
		if i > 0 {
			start = ends[i-1]
		}
		return texts[start:ends[i]]
	}
	lo, hi := 0, len(ends)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if CompareVersions(at(m), v) < 0 {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(ends) && CompareVersions(at(lo), v) == 0
}

// buildSpans ranks the bounds of ranges and stores each range in a as a
// span or an odd span.
func (a *affectedTables) buildSpans(ranges []rangeAt) {
	// The distinct bound texts, as NVD wrote them, then their ranks.
	id := map[string]int{}
	var texts []string
	for _, r := range ranges {
		for _, t := range r.bounds.texts() {
			if _, ok := id[t]; t != "" && !ok {
				id[t] = len(texts)
				texts = append(texts, t)
			}
		}
	}
	values := make([]string, len(texts))
	byValue := make([]int, len(texts))
	for i, t := range texts {
		values[i], byValue[i] = unescapeCPE(t), i
	}
	slices.SortFunc(byValue, func(x, y int) int { return CompareVersions(values[x], values[y]) })
	index := make([]int32, len(texts)) // of each text's value in a.bounds
	for _, i := range byValue {
		if n := len(a.bounds); n == 0 || CompareVersions(a.bounds[n-1], values[i]) != 0 {
			a.bounds = append(a.bounds, values[i])
		}
		index[i] = int32(len(a.bounds) - 1)
	}
	// rank of a bound text, plus 1 when the end it makes is the one past it.
	rank := func(text string, past int32) int32 {
		if text == "" {
			return -1
		}
		return 2*index[id[text]] + 1 + past
	}
	for _, r := range ranges {
		b := &r.bounds
		lo := [2]int32{rank(b.startIncluding, 0), rank(b.startExcluding, 1)}
		hi := [2]int32{rank(b.endIncluding, 1), rank(b.endExcluding, 0)}
		for k := range 2 {
			lo[k], hi[k] = max(lo[k], 0), cmp.Or(max(hi[k], 0), noEnd)
		}
		switch {
		case lo[0] > 0 && lo[1] > 0 && (lo[0]-1)/2 != (lo[1]-1)/2,
			hi[0] != noEnd && hi[1] != noEnd && (hi[0]-1)/2 != (hi[1]-1)/2,
			max(lo[0], lo[1]) >= min(hi[0], hi[1]):
			a.odd = append(a.odd, oddSpan{lo, hi, r.pos})
		default:
			// Both ends of one side name the same bound: the stricter
			// holds for a pre-release too.
			a.spans = append(a.spans, span{max(lo[0], lo[1]), min(hi[0], hi[1]), r.pos})
		}
	}
	// One CVE may repeat a range (for several target platforms, say).
	slices.SortFunc(a.spans, func(x, y span) int {
		return cmp.Or(cmp.Compare(x.pos, y.pos), cmp.Compare(x.lo, y.lo), cmp.Compare(x.hi, y.hi))
	})
	a.spans = slices.Clip(slices.Compact(a.spans))
	a.odd = slices.Clip(a.odd)
}

// rankQuery is a version's rank among a product's bounds. When the
// version is a pre-release whose release equals bounds[k], an end naming
// that bound compares the release's rank (2k+1) instead; k is -1
// otherwise.
type rankQuery struct{ r, k, rel int32 }

func (a *affected) rankOf(version string) rankQuery {
	q := rankQuery{r: a.rank(version), k: -1}
	if a.nBounds == 0 {
		return q
	}
	if rel, ok := release(version); ok {
		if i, found := a.findBound(rel); found {
			q.k, q.rel = int32(i), int32(2*i+1)
		}
	}
	return q
}

// rank is where version falls among the bounds.
func (a *affected) rank(version string) int32 {
	i, found := a.findBound(version)
	if found {
		return int32(2*i + 1)
	}
	return int32(2 * i)
}

// at returns the rank to compare with end e (a lo or hi other than 0 and
// noEnd).
func (q *rankQuery) at(e int32) int32 {
	if q.k >= 0 && (e-1)/2 == q.k {
		return q.rel
	}
	return q.r
}

func (q *rankQuery) meetsLo(lo int32) bool { return lo == 0 || lo <= q.at(lo) }
func (q *rankQuery) meetsHi(hi int32) bool { return hi == noEnd || q.at(hi) < hi }

// matchScratch is match's scratch space, pooled.
type matchScratch struct {
	srcs         [][]int32
	hits, t1, t2 []int32
}

var scratchPool = sync.Pool{New: func() any { return new(matchScratch) }}

// match returns the positions of the CVEs covering version, ascending.
// It may return a slice a holds; callers must not change it.
func (a *affected) match(version string) []int32 {
	if a == nil || !hasToken(version) {
		return nil
	}
	sc := scratchPool.Get().(*matchScratch)
	srcs := append(sc.srcs[:0], a.unbounded())
	if i, ok := a.find(version); ok {
		srcs = append(srcs, a.eq(i))
	}
	// Each prefix of version that ends before a word, and holds a token.
	for i, seen := 0, false; ; seen = true {
		start := skipSeparators(version, i)
		t, next, ok := nextToken(version, i)
		if !ok {
			break
		}
		if t.class != classNum && seen {
			if k, found := a.find(version[:start]); found {
				srcs = append(srcs, a.star(k))
			}
		}
		i = next
	}
	if int(a.spansAt) < len(a.ints) {
		sc.hits = a.stab(a.rankOf(version), sc.hits)
		srcs = append(srcs, sc.hits)
	}
	out := sc.merge(srcs)
	if len(out) > 0 && len(sc.hits) > 0 && &out[0] == &sc.hits[0] {
		out = slices.Clone(out) // sc goes back to the pool
	}
	clear(srcs) // drop the views into a
	sc.srcs = srcs[:0]
	scratchPool.Put(sc)
	return out
}

// merge returns the union of srcs, each ascending and without repeats:
// one of them when only it is not empty, else a new slice.
func (sc *matchScratch) merge(srcs [][]int32) []int32 {
	n, total, last := 0, 0, -1
	for i, s := range srcs {
		if len(s) > 0 {
			n, total, last = n+1, total+len(s), i
		}
	}
	switch n {
	case 0:
		return nil
	case 1:
		return srcs[last]
	}
	var acc []int32
	buf, spare := sc.t1[:0], sc.t2[:0]
	for i, s := range srcs {
		switch {
		case len(s) == 0:
		case acc == nil:
			acc = s
		case i == last:
			acc = union(make([]int32, 0, len(acc)+len(s)), acc, s)
		default:
			buf = union(buf[:0], acc, s)
			acc, buf, spare = buf, spare, buf
		}
	}
	sc.t1, sc.t2 = buf, spare
	return acc
}

// stab returns in dst (its contents replaced) the positions of the ranges
// that cover the version q ranks, ascending and without repeats.
func (a *affected) stab(q rankQuery, dst []int32) []int32 {
	spans, odd := a.spans(), a.odd()
	dst = slices.Grow(dst[:0], len(spans)+len(odd))[:len(spans)]
	n := 0
	if q.k < 0 {
		r := q.r
		for _, sp := range spans {
			// lo <= r < hi in one unsigned comparison, and no branch (the
			// compiler makes the increment a conditional move): whether a
			// span holds r is anybody's guess.
			dst[n] = sp.pos
			if uint32(r-sp.lo) < uint32(sp.hi-sp.lo) {
				n++
			}
		}
	} else {
		for _, sp := range spans {
			if q.meetsLo(sp.lo) && q.meetsHi(sp.hi) {
				dst[n] = sp.pos
				n++
			}
		}
	}
	dst = dst[:n]
	if len(odd) > 0 {
		m := n
		for _, o := range odd {
			if q.meetsLo(o.lo[0]) && q.meetsLo(o.lo[1]) && q.meetsHi(o.hi[0]) && q.meetsHi(o.hi[1]) {
				dst = append(dst, o.pos)
			}
		}
		if len(dst) > m {
			slices.Sort(dst)
		}
	}
	// A CVE's several ranges are next to each other.
	return slices.Compact(dst)
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

// texts returns the four bounds as NVD wrote them, "" for none: start
// including, start excluding, end including, end excluding.
func (b *cpeBounds) texts() [4]string {
	return [4]string{b.startIncluding, b.startExcluding, b.endIncluding, b.endExcluding}
}

// anyBound reports whether b has a range bound (it may hold only an
// update).
func (b *cpeBounds) anyBound() bool {
	return b.startIncluding != "" || b.startExcluding != "" || b.endIncluding != "" || b.endExcluding != ""
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
