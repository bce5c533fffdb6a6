package index

import (
	"bytes"
	"cmp"
	"slices"
	"strings"

	"github.com/goccy/go-json"
)

// entryTable is what ProductCVEsAt reads of the CVEs of one product that
// are listed under it through their affected entries (CVE JSON 5, for
// CVEs without NVD CPEs): those entries, compiled once, on the product's
// first query, so that a query neither decodes JSON nor parses a version
// or a comparison text again.
//
// Every condition a version object puts on a version x is a comparison
// with a point of one total order: a text the object compares with (a
// bound, a single version, a comparison's version, a change's "at"), in
// the one version order; or the edge of a series P.* (x's first n
// tokens, n those of P, <= P: x is below the point just past every
// version that starts with P; >= P: above the point just before them).
// The table ranks the product's distinct points once, as affected ranks
// NVD's bounds, and a query ranks x among them with one binary search.
// Then, as x's status under an entry depends only on its rank (unless x
// is a pre-release of a point, see below), each entry is stored as the
// rank ranges where it gives "affected" (spans), worked out at build by
// asking the entry once per range of ranks its conditions tell apart; a
// query stabs the spans as it does NVD's ranges. A pre-release x whose
// release is a point compares as that release against it (the rule of
// VersionStatus): for such a query, the CVEs some condition of which
// names that point are asked again, entry by entry.
// It answers exactly as VersionStatus does (see the table's tests).
type entryTable struct {
	points []point // distinct, in order
	spans  []span  // by CVE position, then rank: where an entry gives affected
	// exact[exactEnds[i-1]:exactEnds[i]] are, ascending, the CVEs whose
	// span is the rank of points[i] alone (a single version), kept apart
	// from spans as affected keeps NVD's exact versions, so that the pass
	// over spans is over ranges only.
	exact, exactEnds []int32
	// refs[refEnds[i-1]:refEnds[i]] are, ascending, the indexes in cves
	// of the CVEs some condition or change of which names points[i]:
	// those whose spans may not hold for a pre-release of that point.
	refs, refEnds []int32
	cves          []entryCVE // by list position, ascending
	// The entries of cves, the objects of the entries, the conditions
	// and changes of the objects, each a part of the one slice.
	entries []entryRec
	objs    []objRec
	conds   []condRec
	changes []changeRec
}

// pointKind tells a version from the edges of a series.
type pointKind int8

const (
	pointFloor pointKind = iota - 1 // just below every version that starts with the series
	pointText                       // the version itself
	pointCap                        // just above every version that starts with the series
)

// point is a point of the order conditions compare with: a version, or
// an edge of the series of the n tokens of text.
type point struct {
	text string
	kind pointKind
}

// comparePoints orders points: versions as CompareVersions does; a series
// edge as its tokens followed by tokens above (a cap) or below (a floor)
// every token.
func comparePoints(a, b point) int {
	i, j := 0, 0
	for {
		ta, ni, oka := nextToken(a.text, i)
		tb, nj, okb := nextToken(b.text, j)
		switch {
		case !oka && !okb:
			return cmp.Compare(a.kind, b.kind)
		case !oka:
			if a.kind != pointText {
				return int(a.kind)
			}
			ta = zeroToken
		case !okb:
			if b.kind != pointText {
				return -int(b.kind)
			}
			tb = zeroToken
		}
		if c := ta.compare(tb); c != 0 {
			return c
		}
		i, j = ni, nj
	}
}

type entryCVE struct {
	pos            int32
	entLo, entHiEx int32 // entries[entLo:entHiEx]
}

type entryRec struct {
	objLo, objHiEx int32 // objs[objLo:objHiEx], in record order
	defAffected    bool  // the default status is "affected"
}

// objRec is one version object, source-control ones left out (they match
// nothing): it matches when all its conditions hold, and then gives
// affected, or that of its last change that holds (changes are in
// increasing "at").
type objRec struct {
	condLo, condHiEx int32
	chLo, chHiEx     int32
	affected         bool
}

// condRec is a condition x op points[i] (op one of opEQ, opLT, opLE, opGT,
// opGE); while the table is built, i is the point's id.
type condRec struct {
	op condOp
	i  int32
}

// changeRec is a change: from points[at] on (x >= it, a pre-release
// counting as its release), the status is affected or not.
type changeRec struct {
	at       int32
	affected bool
}

// entryTableBuilder compiles entries into an entryTable: the points first
// by id, ranked once all are known.
type entryTableBuilder struct {
	t        entryTable
	pointIDs map[point]int32
	points   []point // by id
}

func newEntryTableBuilder() *entryTableBuilder {
	return &entryTableBuilder{pointIDs: map[point]int32{}}
}

func (b *entryTableBuilder) pointID(p point) int32 {
	id, ok := b.pointIDs[p]
	if !ok {
		id = int32(len(b.points))
		b.pointIDs[p] = id
		b.points = append(b.points, p)
	}
	return id
}

// addCond adds the condition c (as condFor made it).
func (b *entryTableBuilder) addCond(c cond) {
	add := func(op condOp, p point) { b.t.conds = append(b.t.conds, condRec{op, b.pointID(p)}) }
	switch c.op {
	case opSeriesLE: // x's first tokens <= P: below the cap
		add(opLT, point{c.v, pointCap})
	case opSeriesGT:
		add(opGT, point{c.v, pointCap})
	case opSeriesEQ:
		add(opGT, point{c.v, pointFloor})
		add(opLT, point{c.v, pointCap})
	default:
		add(c.op, point{c.v, pointText})
	}
}

// add adds the CVE at pos with its entries es, those that give the
// product its key.
func (b *entryTableBuilder) add(pos int32, es []AffectedEntry) {
	t := &b.t
	c := entryCVE{pos: pos, entLo: int32(len(t.entries))}
	for i := range es {
		e := &es[i]
		r := entryRec{objLo: int32(len(t.objs)), defAffected: e.DefaultStatus != nil && *e.DefaultStatus == StatusAffected}
		for k := range e.Versions {
			v := &e.Versions[k]
			if isSourceControl(v.VersionType) {
				continue // matches no version: as if it were not there
			}
			o := objRec{condLo: int32(len(t.conds)), affected: v.Status == StatusAffected}
			for _, c := range objectConds(v) {
				b.addCond(c)
			}
			o.condHiEx, o.chLo = int32(len(t.conds)), int32(len(t.changes))
			for _, ch := range v.Changes {
				if hasDigit(ch.At) {
					t.changes = append(t.changes, changeRec{at: b.pointID(point{ch.At, pointText}), affected: ch.Status == StatusAffected})
				}
			}
			o.chHiEx = int32(len(t.changes))
			t.objs = append(t.objs, o)
		}
		r.objHiEx = int32(len(t.objs))
		t.entries = append(t.entries, r)
	}
	c.entHiEx = int32(len(t.entries))
	t.cves = append(t.cves, c)
}

// objectConds are the conditions a version object's match asks of x, as
// AffectedVersion.matches reads it (a source-control object aside).
func objectConds(v *AffectedVersion) condList {
	cs, comparisons := parseComparisons(v.Version)
	if v.LessThan == nil && v.LessThanOrEqual == nil {
		if comparisons {
			return cs
		}
		return condList(nil).add(opEQ, v.Version)
	}
	var out condList
	switch {
	case comparisons:
		out = cs
	case !noLowerBound(v.Version):
		out = out.add(opGE, v.Version)
	}
	if v.LessThan != nil {
		return out.add(opLT, *v.LessThan)
	}
	return out.add(opLE, *v.LessThanOrEqual)
}

// table ranks the points, works out the spans and returns the table; nil
// when it has no CVE.
func (b *entryTableBuilder) table() *entryTable {
	t := &b.t
	if len(t.cves) == 0 {
		return nil
	}
	byValue := make([]int32, len(b.points))
	for i := range byValue {
		byValue[i] = int32(i)
	}
	slices.SortFunc(byValue, func(x, y int32) int { return comparePoints(b.points[x], b.points[y]) })
	index := make([]int32, len(b.points)) // of each id in t.points
	for _, i := range byValue {
		if n := len(t.points); n == 0 || comparePoints(t.points[n-1], b.points[i]) != 0 {
			t.points = append(t.points, b.points[i])
		}
		index[i] = int32(len(t.points) - 1)
	}
	for i := range t.conds {
		t.conds[i].i = index[t.conds[i].i]
	}
	for i := range t.changes {
		t.changes[i].at = index[t.changes[i].at]
	}
	// Each object's changes in increasing "at"; on equal ones the later
	// in the record last, as statusAt picks them.
	for i := range t.objs {
		o := &t.objs[i]
		slices.SortStableFunc(t.changes[o.chLo:o.chHiEx], func(x, y changeRec) int { return cmp.Compare(x.at, y.at) })
	}
	var cuts []int32
	for _, c := range t.cves {
		for k := c.entLo; k < c.entHiEx; k++ {
			cuts = t.appendSpans(&t.entries[k], c.pos, cuts)
		}
	}
	// A CVE's entries may cover the same ranks: its spans, sorted, are
	// merged where they overlap or touch.
	slices.SortFunc(t.spans, func(x, y span) int { return cmp.Or(cmp.Compare(x.pos, y.pos), cmp.Compare(x.lo, y.lo)) })
	merged := t.spans[:0]
	for _, sp := range t.spans {
		if n := len(merged); n > 0 && merged[n-1].pos == sp.pos && sp.lo <= merged[n-1].hi {
			merged[n-1].hi = max(merged[n-1].hi, sp.hi)
			continue
		}
		merged = append(merged, sp)
	}
	// Single versions apart: a lookup, not a pass.
	single := func(sp span) bool { return sp.hi == sp.lo+1 && sp.lo%2 == 1 }
	t.exactEnds = make([]int32, len(t.points))
	for _, sp := range merged {
		if single(sp) {
			t.exactEnds[(sp.lo-1)/2]++
		}
	}
	var total int32
	for i, c := range t.exactEnds {
		t.exactEnds[i], total = total, total+c // each part's start, for now
	}
	t.exact = make([]int32, total)
	ranges := make([]span, 0, len(merged)-int(total))
	for _, sp := range merged {
		if !single(sp) {
			ranges = append(ranges, sp)
			continue
		}
		i := (sp.lo - 1) / 2
		t.exact[t.exactEnds[i]] = sp.pos // merged is by position: each part ascends
		t.exactEnds[i]++                 // ends up at the part's end
	}
	t.spans = ranges
	t.refs, t.refEnds = t.pointRefs()
	t.entries, t.objs, t.conds, t.changes = slices.Clip(t.entries), slices.Clip(t.objs), slices.Clip(t.conds), slices.Clip(t.changes)
	return t
}

// appendSpans appends to t.spans the ranks where the entry e of the CVE
// at pos gives a version that is no pre-release of a point the status
// affected: between two ranks where one of its conditions or changes
// turns, every rank gets the same status, so the entry is asked once per
// such range. cuts is scratch space.
func (t *entryTable) appendSpans(e *entryRec, pos int32, cuts []int32) []int32 {
	cuts = append(cuts[:0], 0)
	turn := func(i int32) { cuts = append(cuts, 2*i+1, 2*i+2) } // x op point i changes at its rank and past it
	for _, o := range t.objs[e.objLo:e.objHiEx] {
		for _, c := range t.conds[o.condLo:o.condHiEx] {
			turn(c.i)
		}
		for _, ch := range t.changes[o.chLo:o.chHiEx] {
			turn(ch.at)
		}
	}
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	for k, lo := range cuts {
		q := entryQuery{r: lo, k: -1}
		if !t.affectedAt(e, &q) {
			continue
		}
		hi := int32(noEnd)
		if k+1 < len(cuts) {
			hi = cuts[k+1]
		}
		if n := len(t.spans); n > 0 && t.spans[n-1].pos == pos && t.spans[n-1].hi == lo {
			t.spans[n-1].hi = hi
			continue
		}
		t.spans = append(t.spans, span{lo: lo, hi: hi, pos: pos})
	}
	return cuts
}

// entryQuery is a version ranked among a table's points, as rankQuery
// ranks one among NVD's bounds.
type entryQuery = rankQuery

// query ranks version among t's points.
func (t *entryTable) query(version string) entryQuery {
	x := point{version, pointText}
	i, found := slices.BinarySearchFunc(t.points, x, comparePoints)
	q := entryQuery{r: int32(2 * i), k: -1}
	if found {
		q.r++
	}
	if rel, ok := release(version); ok {
		if i, found := slices.BinarySearchFunc(t.points, point{rel, pointText}, comparePoints); found {
			q.k, q.rel = int32(i), int32(2*i+1)
		}
	}
	return q
}

// holds reports whether the condition holds for the version q ranks.
func (c condRec) holds(q *entryQuery) bool {
	e := 2*c.i + 1 // the rank of the point itself
	if c.op == opEQ {
		return q.r == e // equal in the version order, no pre-release rule
	}
	r := q.at(e)
	switch c.op {
	case opLT:
		return r < e
	case opLE:
		return r <= e
	case opGT:
		return r > e
	}
	return r >= e // opGE
}

// affectedAt reports whether the entry gives the version q ranks the
// status affected.
func (t *entryTable) affectedAt(e *entryRec, q *entryQuery) bool {
	for _, o := range t.objs[e.objLo:e.objHiEx] {
		ok := true
		for _, c := range t.conds[o.condLo:o.condHiEx] {
			if !c.holds(q) {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		affected := o.affected
		for _, ch := range t.changes[o.chLo:o.chHiEx] {
			if q.at(2*ch.at+1) >= 2*ch.at+1 {
				affected = ch.affected
			}
		}
		return affected
	}
	return e.defAffected
}

// match returns the positions of the CVEs some entry of which gives
// version the status affected, ascending, in a new slice.
func (t *entryTable) match(version string) []int32 {
	if t == nil || !hasToken(version) {
		return nil
	}
	q := t.query(version)
	out := t.stab(q.r)
	if q.r%2 == 1 {
		if ex := part(t.exact, t.exactEnds, (q.r-1)/2); len(ex) > 0 {
			// A CVE's spans are merged: no CVE is in both.
			out = union(make([]int32, 0, len(out)+len(ex)), out, ex)
		}
	}
	if q.k < 0 {
		return out
	}
	// A pre-release of point k compares as k's release against k: the
	// spans hold for every CVE none of whose conditions names k; those
	// that name it are asked again, entry by entry.
	refs := part(t.refs, t.refEnds, q.k)
	if len(refs) == 0 {
		return out
	}
	fixed := make([]int32, 0, len(out)+len(refs))
	i := 0
	for _, ci := range refs {
		c := &t.cves[ci]
		for i < len(out) && out[i] < c.pos {
			fixed = append(fixed, out[i])
			i++
		}
		if i < len(out) && out[i] == c.pos {
			i++ // asked again below
		}
		for k := c.entLo; k < c.entHiEx; k++ {
			if t.affectedAt(&t.entries[k], &q) {
				fixed = append(fixed, c.pos)
				break
			}
		}
	}
	return append(fixed, out[i:]...)
}

// part returns part i of all, whose parts end at ends.
func part(all, ends []int32, i int32) []int32 {
	var from int32
	if i > 0 {
		from = ends[i-1]
	}
	return all[from:ends[i]]
}

// pointRefs returns, per point, the indexes in cves of the CVEs some
// condition or change of which names it, packed as refs and refEnds.
func (t *entryTable) pointRefs() (refs, ends []int32) {
	counts := make([]int32, len(t.points))
	last := make([]int32, len(t.points)) // the last CVE counted, plus 1
	each := func(f func(ci, point int32)) {
		for ci, c := range t.cves {
			for k := c.entLo; k < c.entHiEx; k++ {
				e := &t.entries[k]
				for _, o := range t.objs[e.objLo:e.objHiEx] {
					for _, cd := range t.conds[o.condLo:o.condHiEx] {
						f(int32(ci), cd.i)
					}
					for _, ch := range t.changes[o.chLo:o.chHiEx] {
						f(int32(ci), ch.at)
					}
				}
			}
		}
	}
	each(func(ci, p int32) {
		if last[p] != ci+1 {
			last[p] = ci + 1
			counts[p]++
		}
	})
	ends = make([]int32, len(t.points))
	var total int32
	for i, n := range counts {
		ends[i], total = total, total+n // each part's start, for now
	}
	refs = make([]int32, total)
	clear(last)
	each(func(ci, p int32) {
		if last[p] != ci+1 {
			last[p] = ci + 1
			refs[ends[p]] = ci
			ends[p]++ // ends up at the part's end
		}
	})
	return refs, ends
}

// stab returns the positions of the CVEs with a span holding rank r,
// ascending, in a new slice: one pass over the spans, as affected.stab.
func (t *entryTable) stab(r int32) []int32 {
	sc := scratchPool.Get().(*matchScratch)
	dst := slices.Grow(sc.hits[:0], len(t.spans))[:len(t.spans)]
	n := 0
	for _, sp := range t.spans {
		dst[n] = sp.pos
		if uint32(r-sp.lo) < uint32(sp.hi-sp.lo) {
			n++
		}
	}
	// A CVE's spans are merged: no position twice.
	var out []int32
	if n > 0 {
		out = slices.Clone(dst[:n])
	}
	sc.hits = dst[:0]
	scratchPool.Put(sc)
	return out
}

// entryRules is what an entry table reads of an affected entry: its
// default status and version objects. Decoding only them leaves the
// names, CPEs and platforms undecoded, which would be garbage at once: a
// product's first query decodes the entries of each of its CVEs, and
// WarmVersionTables does it for the biggest products right after a load.
type entryRules struct {
	DefaultStatus *string           `json:"default_status"`
	Versions      []AffectedVersion `json:"versions"`
}

// entryTable builds the table of the product named vendorName and
// productName from the CVEs at positions cves (those listed through
// their entries among them).
func (ix *Index) entryTable(cves []int32, vendorName, productName string) *entryTable {
	b := newEntryTableBuilder()
	d := ix.details
	var (
		all    []entryRules
		picked []AffectedEntry
		text   []byte
		dec    rulesDecoder
	)
	for _, pos := range cves {
		r := d.cves[pos]
		if r.keys == 0 {
			continue
		}
		it := entryKeysIter{s: d.strs[r.keys]}
		for it.next() {
			if it.vendor != vendorName || it.product != productName {
				continue
			}
			text = d.appendText(text[:0], r.affected)
			var ok bool
			if all, ok = dec.decode(text); !ok {
				// A fresh slice: decoding into a used one keeps the members
				// an element's JSON lacks (lessThan) from the last.
				all = nil
				if err := json.Unmarshal(text, &all); err != nil {
					break // Check refuses such a snapshot; a load does not decode it
				}
			}
			picked = picked[:0]
			it.eachEntry(func(i int) bool {
				if i < len(all) {
					picked = append(picked, AffectedEntry{DefaultStatus: all[i].DefaultStatus, Versions: all[i].Versions})
				}
				return true
			})
			b.add(pos, picked)
			break
		}
	}
	return b.table()
}

// rulesDecoder decodes the JSON of a CVE's affected entries into
// []entryRules, as json.Unmarshal decodes it into a new []entryRules
// (but that an empty array may come out nil): strings are new, the
// slices are the decoder's, reused from one text to the next, so that an
// entry table leaves no garbage but its strings. What it decodes is good
// until its next decode.
type rulesDecoder struct {
	s    scanner
	dst  []entryRules
	vers []AffectedVersion
	chs  []StatusChange
	// Where each entry's versions are in vers and each version's changes
	// in chs (from -1: null), made views once vers and chs are whole.
	verSpans, chSpans []rulesSpan
}

type rulesSpan struct{ from, to int }

// decode decodes text; ok is false for what it may not read as
// json.Unmarshal does (a member named in another case or with an escape,
// a member twice, a value of another type, trailing bytes), which the
// caller then decodes with json.Unmarshal.
func (d *rulesDecoder) decode(text []byte) (_ []entryRules, ok bool) {
	d.s = scanner{b: text}
	d.dst, d.vers, d.chs, d.verSpans, d.chSpans = d.dst[:0], d.vers[:0], d.chs[:0], d.verSpans[:0], d.chSpans[:0]
	null, ok := d.array(d.entry)
	d.s.ws()
	if !ok || null || d.s.i != len(text) {
		return nil, false
	}
	for i, sp := range d.chSpans {
		d.vers[i].Changes = nil
		if sp.from >= 0 {
			d.vers[i].Changes = d.chs[sp.from:sp.to:sp.to]
		}
	}
	for i, sp := range d.verSpans {
		d.dst[i].Versions = nil
		if sp.from >= 0 {
			d.dst[i].Versions = d.vers[sp.from:sp.to:sp.to]
		}
	}
	return d.dst, true
}

// array reads null, or an array whose elements each reads.
func (d *rulesDecoder) array(each func() bool) (null, ok bool) {
	d.s.ws()
	if d.s.literal("null") {
		return true, true
	}
	started := false
	for {
		more, ok := d.s.arrayNext(&started)
		if !ok || !more {
			return false, ok
		}
		if !each() {
			return false, false
		}
	}
}

// members reads an object, calling member with each name, which reads
// the value; a name with an escape, or met twice, fails.
func (d *rulesDecoder) members(member func(key []byte) bool) bool {
	s := &d.s
	if !s.eat('{') {
		return false
	}
	if s.eat('}') {
		return true
	}
	var seen [8][]byte
	n := 0
	for {
		key, ok := s.key()
		if !ok || bytes.IndexByte(key, '\\') >= 0 {
			return false
		}
		for _, k := range seen[:n] {
			if bytes.Equal(k, key) {
				return false
			}
		}
		if n < len(seen) {
			seen[n] = key
			n++
		}
		if !member(key) {
			return false
		}
		if s.eat(',') {
			continue
		}
		return s.eat('}')
	}
}

// other skips the value of a member that is none of names, and fails for
// one that names one of them in another case (json.Unmarshal's match).
func (d *rulesDecoder) other(key []byte, names ...string) bool {
	for _, n := range names {
		if strings.EqualFold(string(key), n) {
			return false
		}
	}
	return d.s.value(0)
}

// str reads a string or null.
func (d *rulesDecoder) str() (*string, bool) {
	d.s.ws()
	if d.s.literal("null") {
		return nil, true
	}
	v, ok := d.s.text()
	if !ok {
		return nil, false
	}
	t := string(v)
	return &t, true
}

// text reads a string or null (which leaves *dst as it is) into dst.
func (d *rulesDecoder) text(dst *string) bool {
	d.s.ws()
	if d.s.literal("null") {
		return true
	}
	v, ok := d.s.text()
	if ok {
		*dst = string(v)
	}
	return ok
}

func (d *rulesDecoder) entry() bool {
	d.dst = append(d.dst, entryRules{})
	d.verSpans = append(d.verSpans, rulesSpan{-1, -1})
	return d.members(d.entryMember)
}

func (d *rulesDecoder) entryMember(key []byte) bool {
	i := len(d.dst) - 1
	switch string(key) {
	case "default_status":
		var ok bool
		d.dst[i].DefaultStatus, ok = d.str()
		return ok
	case "versions":
		from := len(d.vers)
		null, ok := d.array(d.version)
		if !null {
			d.verSpans[i] = rulesSpan{from, len(d.vers)}
		}
		return ok
	}
	return d.other(key, "default_status", "versions")
}

func (d *rulesDecoder) version() bool {
	d.vers = append(d.vers, AffectedVersion{})
	d.chSpans = append(d.chSpans, rulesSpan{-1, -1})
	return d.members(d.versionMember)
}

func (d *rulesDecoder) versionMember(key []byte) bool {
	i := len(d.vers) - 1
	v := &d.vers[i]
	var ok bool
	switch string(key) {
	case "version":
		return d.text(&v.Version)
	case "status":
		return d.text(&v.Status)
	case "versionType":
		return d.text(&v.VersionType)
	case "lessThan":
		v.LessThan, ok = d.str()
		return ok
	case "lessThanOrEqual":
		v.LessThanOrEqual, ok = d.str()
		return ok
	case "changes":
		from := len(d.chs)
		null, ok := d.array(d.change)
		if !null {
			d.chSpans[i] = rulesSpan{from, len(d.chs)}
		}
		return ok
	}
	return d.other(key, "version", "status", "versionType", "lessThan", "lessThanOrEqual", "changes")
}

func (d *rulesDecoder) change() bool {
	d.chs = append(d.chs, StatusChange{})
	return d.members(d.changeMember)
}

func (d *rulesDecoder) changeMember(key []byte) bool {
	c := &d.chs[len(d.chs)-1]
	switch string(key) {
	case "at":
		return d.text(&c.At)
	case "status":
		return d.text(&c.Status)
	}
	return d.other(key, "at", "status")
}
