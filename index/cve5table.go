package index

import (
	"cmp"
	"slices"

	"github.com/goccy/go-json"
)

// entryTable is what ProductCVEsAt reads of the CVEs of one product that
// are listed under it through their affected entries (CVE JSON 5, for
// CVEs without NVD CPEs): those entries, compiled once, on the product's
// first query, so that a query neither decodes JSON nor parses a version
// or a comparison text again. Every text a version object compares with
// (a bound, a single version, a comparison's version, a change's "at") is
// ranked among the product's distinct texts in the one version order, as
// affected ranks NVD's bounds, and every series P.* among the series of
// as many tokens; a query ranks the asked version once among them (one
// binary search, two for a pre-release, one per series length) and then
// compares integers. It answers exactly as VersionStatus does (see
// entryTable's test, which checks it against VersionStatus on real
// records).
type entryTable struct {
	bounds []string      // distinct texts, CompareVersions order
	series []seriesGroup // the series texts, by their number of tokens
	cves   []entryCVE    // by list position, ascending
	// The entries of cves, the objects of the entries, the conditions
	// and changes of the objects, each a part of the one slice.
	entries []entryRec
	objs    []objRec
	conds   []condRec
	changes []changeRec
}

// seriesGroup are the distinct series texts P (of P.*) of n tokens, in
// CompareVersions order: a version x is compared with them by its first
// n tokens (see leadingTokens).
type seriesGroup struct {
	n      int
	values []string
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

// condRec is a condition x op text, text being bounds[i] or, when group
// >= 0, series[group].values[i].
type condRec struct {
	op    condOp
	group int32
	i     int32
}

// changeRec is a change: from bounds[at] on (x >= it, a pre-release
// counting as its release), the status is affected or not.
type changeRec struct {
	at       int32
	affected bool
}

// entryQuery is a version ranked among a table's texts: r and k, rel as
// rankQuery has them over bounds, series[g] its rank in series group g.
type entryQuery struct {
	rankQuery
	series []int32
}

// entryTableBuilder compiles entries into an entryTable: the texts first
// by id, ranked once all are known.
type entryTableBuilder struct {
	t        entryTable
	boundIDs map[string]int32 // text -> id; the conditions hold ids until rank
	bounds   []string         // by id
	series   map[int]map[string]int32
	seriesBy map[int][]string
}

func newEntryTableBuilder() *entryTableBuilder {
	return &entryTableBuilder{boundIDs: map[string]int32{}, series: map[int]map[string]int32{}, seriesBy: map[int][]string{}}
}

func (b *entryTableBuilder) boundID(text string) int32 {
	id, ok := b.boundIDs[text]
	if !ok {
		id = int32(len(b.bounds))
		b.boundIDs[text] = id
		b.bounds = append(b.bounds, text)
	}
	return id
}

// tokenCount is the number of version tokens of p.
func tokenCount(p string) int {
	n := 0
	for i := 0; ; n++ {
		_, next, ok := nextToken(p, i)
		if !ok {
			return n
		}
		i = next
	}
}

// addCond adds the condition c (as condFor made it).
func (b *entryTableBuilder) addCond(c cond) {
	switch c.op {
	case opSeriesLE, opSeriesEQ, opSeriesGT:
		n := tokenCount(c.v)
		ids := b.series[n]
		if ids == nil {
			ids = map[string]int32{}
			b.series[n] = ids
		}
		id, ok := ids[c.v]
		if !ok {
			id = int32(len(b.seriesBy[n]))
			ids[c.v] = id
			b.seriesBy[n] = append(b.seriesBy[n], c.v)
		}
		// group holds n until rank turns it into the group's index.
		b.t.conds = append(b.t.conds, condRec{op: c.op, group: int32(n), i: id})
	default:
		b.t.conds = append(b.t.conds, condRec{op: c.op, group: -1, i: b.boundID(c.v)})
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
					t.changes = append(t.changes, changeRec{at: b.boundID(ch.At), affected: ch.Status == StatusAffected})
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

// table ranks the texts and returns the table; nil when it has no CVE.
func (b *entryTableBuilder) table() *entryTable {
	t := &b.t
	if len(t.cves) == 0 {
		return nil
	}
	boundIdx := rankTexts(b.bounds, &t.bounds)
	groups := slices.Sorted(func(yield func(int) bool) {
		for n := range b.seriesBy {
			if !yield(n) {
				return
			}
		}
	})
	groupIdx := map[int]int32{}
	seriesIdx := make([][]int32, len(groups))
	for g, n := range groups {
		groupIdx[n] = int32(g)
		t.series = append(t.series, seriesGroup{n: n})
		seriesIdx[g] = rankTexts(b.seriesBy[n], &t.series[g].values)
	}
	for i := range t.conds {
		c := &t.conds[i]
		if c.group < 0 {
			c.i = boundIdx[c.i]
			continue
		}
		g := groupIdx[int(c.group)]
		c.group, c.i = g, seriesIdx[g][c.i]
	}
	for i := range t.changes {
		t.changes[i].at = boundIdx[t.changes[i].at]
	}
	// Each object's changes in increasing "at"; on equal ones the later
	// in the record last, as statusAt picks them.
	for i := range t.objs {
		o := &t.objs[i]
		slices.SortStableFunc(t.changes[o.chLo:o.chHiEx], func(x, y changeRec) int { return cmp.Compare(x.at, y.at) })
	}
	t.entries, t.objs, t.conds, t.changes = slices.Clip(t.entries), slices.Clip(t.objs), slices.Clip(t.conds), slices.Clip(t.changes)
	return t
}

// rankTexts puts the distinct values of texts (by id) in CompareVersions
// order into *sorted, texts equal in that order once, and returns the
// index there of each id.
func rankTexts(texts []string, sorted *[]string) []int32 {
	byValue := make([]int, len(texts))
	for i := range byValue {
		byValue[i] = i
	}
	slices.SortFunc(byValue, func(x, y int) int { return CompareVersions(texts[x], texts[y]) })
	index := make([]int32, len(texts))
	for _, i := range byValue {
		if n := len(*sorted); n == 0 || CompareVersions((*sorted)[n-1], texts[i]) != 0 {
			*sorted = append(*sorted, texts[i])
		}
		index[i] = int32(len(*sorted) - 1)
	}
	return index
}

// rankAmong is where v falls among the sorted texts: 2i+1 when it equals
// sorted[i], 2i when it sorts between sorted[i-1] and sorted[i].
func rankAmong(sorted []string, v string) int32 {
	i, found := slices.BinarySearchFunc(sorted, v, CompareVersions)
	if found {
		return int32(2*i + 1)
	}
	return int32(2 * i)
}

// query ranks version among t's texts; series has room for the ranks.
func (t *entryTable) query(version string, series []int32) entryQuery {
	q := entryQuery{rankQuery: rankQuery{r: rankAmong(t.bounds, version), k: -1}}
	if len(t.bounds) > 0 {
		if rel, ok := release(version); ok {
			if i, found := slices.BinarySearchFunc(t.bounds, rel, CompareVersions); found {
				q.k, q.rel = int32(i), int32(2*i+1)
			}
		}
	}
	q.series = series[:0]
	for _, g := range t.series {
		q.series = append(q.series, rankAmong(g.values, leadingN(version, g.n)))
	}
	return q
}

// leadingN returns x up to the end of its n-th token (all of x when it
// has fewer), as leadingTokens does for a p of n tokens.
func leadingN(x string, n int) string {
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

// holds reports whether the condition holds for the version q ranks.
func (c condRec) holds(q *entryQuery) bool {
	e := 2*c.i + 1 // the rank of the text itself
	if c.group >= 0 {
		s := q.series[c.group]
		switch c.op {
		case opSeriesLE:
			return s <= e
		case opSeriesEQ:
			return s == e
		}
		return s > e // opSeriesGT
	}
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
	var buf [8]int32
	q := t.query(version, buf[:0])
	var out []int32
	for _, c := range t.cves {
		for k := c.entLo; k < c.entHiEx; k++ {
			if t.affectedAt(&t.entries[k], &q) {
				out = append(out, c.pos)
				break
			}
		}
	}
	return out
}

// entryTable builds the table of the product named vendorName and
// productName from the CVEs at positions cves (those listed through
// their entries among them).
func (ix *Index) entryTable(cves []int32, vendorName, productName string) *entryTable {
	b := newEntryTableBuilder()
	d := ix.details
	var all, picked []AffectedEntry
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
			all = all[:0]
			if err := json.Unmarshal([]byte(d.strs[r.affected]), &all); err != nil {
				break // Check refuses such a snapshot; a load does not decode it
			}
			picked = picked[:0]
			it.eachEntry(func(i int) bool {
				if i < len(all) {
					picked = append(picked, all[i])
				}
				return true
			})
			b.add(pos, picked)
			break
		}
	}
	return b.table()
}
