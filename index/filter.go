package index

import (
	"slices"
	"sort"
	"time"
)

// The CVE lists (every CVE, a band, a CWE's, a vendor's, a product's) are
// position lists: ascending positions into one order, newest updated_at
// first. So "updated since t" is a prefix of any of them, found by binary
// search, and the conjunction of two filters is the intersection of two
// sorted lists. Nothing here scans every CVE.

// TimeKey returns the key of t that the since filters take: its UTC
// digits YYYYMMDDHHMMSS, which order like the times they name. Fractions
// of a second are dropped, so "since 10:00:00.5" includes 10:00:00.
func TimeKey(t time.Time) uint64 {
	t = t.UTC()
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	if y < 0 || y > 9999 {
		if y < 0 {
			return 0
		}
		return 99991231235959
	}
	return ((((uint64(y)*100+uint64(mo))*100+uint64(d))*100+uint64(h))*100+uint64(mi))*100 + uint64(s)
}

// isCVEList reports whether l is a list of an index (not the zero CVEList).
func (l CVEList) isCVEList() bool { return l.ix != nil }

// positions returns l's CVE positions: its ids, or for the whole list
// (or a prefix of it) every position below its length.
func (l CVEList) positions() ([]int32, bool) {
	if l.sub {
		return l.ids, true
	}
	return nil, false
}

// UpdatedSince returns the CVEs of l whose updated_at is at or after the
// time key t (see TimeKey). It allocates nothing: the result is a prefix
// of l. l must be a CVE list; other lists come back unchanged.
func (l CVEList) UpdatedSince(t uint64) CVEList {
	if !l.isCVEList() || t == 0 {
		return l
	}
	updated := l.ix.updated
	if ids, ok := l.positions(); ok {
		n := sort.Search(len(ids), func(i int) bool { return updated[ids[i]] < t })
		l.ids = ids[:n:n]
		return l
	}
	n := sort.Search(len(l.src), func(i int) bool { return updated[i] < t })
	l.src = l.src[:n:n]
	return l
}

// PublishedSince returns the CVEs of l whose created_at is at or after the
// time key t. When no CVE of the index was created after it was last
// updated (NVD's records never are), only the CVEs updated since t can
// qualify, so only that prefix of l is looked at.
func (l CVEList) PublishedSince(t uint64) CVEList {
	if !l.isCVEList() || t == 0 {
		return l
	}
	if t <= l.ix.minPublished {
		return l // every CVE qualifies: no list to build
	}
	if l.ix.createdNotAfterUpdated {
		l = l.UpdatedSince(t)
	}
	published := l.ix.published
	var out []int32
	if ids, ok := l.positions(); ok {
		for _, p := range ids {
			if published[p] >= t {
				out = append(out, p)
			}
		}
	} else {
		for p := range l.src {
			if published[p] >= t {
				out = append(out, int32(p))
			}
		}
	}
	return l.ix.cveList(orEmpty(out), false)
}

// InBand returns the CVEs of l in band b, in list order; l itself for
// BandNone. It looks up each CVE's band, so it costs what l's length
// costs: on a short list, less than intersecting with the band's list.
func (l CVEList) InBand(b Band) CVEList {
	if !l.isCVEList() || b == BandNone {
		return l
	}
	if ids, ok := l.positions(); ok {
		var out []int32
		for _, p := range ids {
			if at := l.ix.bandAt[p]; at == b || b == BandHigh && at == BandCritical {
				out = append(out, p)
			}
		}
		return l.ix.cveList(orEmpty(out), false)
	}
	// A prefix of the whole list: the band's list, cut at its end.
	return l.And(l.ix.CVEs(b))
}

// WithKEV returns the CVEs of l that have a KEV entry (want) or have none
// (!want), in list order. The first is an intersection with the short
// list of KEV CVEs; the second looks at each CVE of l.
func (l CVEList) WithKEV(want bool) CVEList {
	if !l.isCVEList() {
		return l
	}
	ix := l.ix
	if want {
		return l.And(ix.cveList(ix.kevs, false))
	}
	var out []int32
	if ids, ok := l.positions(); ok {
		for _, p := range ids {
			if !ix.kevAt(p) {
				out = append(out, p)
			}
		}
	} else {
		for p := range int32(len(l.src)) {
			if !ix.kevAt(p) {
				out = append(out, p)
			}
		}
	}
	return ix.cveList(orEmpty(out), false)
}

// CitingCWE returns the CVEs of l that cite the CWE named name (matched as
// CWECVEs matches it), in list order, or no CVE and ErrCWENotFound when
// the catalog has no such CWE. It looks at each CVE's own CWEs, so it
// costs what l's length costs: on a list much shorter than the CWE's,
// less than And.
func (l CVEList) CitingCWE(name string) (CVEList, error) {
	if !l.isCVEList() {
		return l, nil
	}
	ix := l.ix
	c, ok := ix.cwePos(name)
	if !ok {
		return ix.NoCVEs(), ErrCWENotFound
	}
	var out []int32
	visit := func(p int32) {
		for _, x := range ix.cweAt[ix.cweOff[p]:ix.cweOff[p+1]] {
			if x == c {
				out = append(out, p)
				return
			}
		}
	}
	if ids, ok := l.positions(); ok {
		for _, p := range ids {
			visit(p)
		}
	} else {
		for p := range int32(len(l.src)) {
			visit(p)
		}
	}
	return ix.cveList(orEmpty(out), false), nil
}

// And returns the CVEs in both l and m, two CVE lists of one index, in
// list order. The smaller list is walked and each of its positions looked
// up in the larger with a galloping search, so the cost follows the
// smaller list's length.
func (l CVEList) And(m CVEList) CVEList {
	if !l.isCVEList() || !m.isCVEList() {
		return l
	}
	a, aok := l.positions()
	b, bok := m.positions()
	switch {
	case !aok && !bok: // two prefixes of the whole list: the shorter
		if len(m.src) < len(l.src) {
			return m
		}
		return l
	case !aok: // a prefix of the whole list: m's positions below its end
		n, _ := slices.BinarySearch(b, int32(len(l.src)))
		m.ids = b[:n:n]
		return m
	case !bok:
		return m.And(l)
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	var out []int32
	lo := 0
	for _, p := range a {
		// Gallop: double the step until b[lo+step] >= p, then binary search.
		step := 1
		for lo+step < len(b) && b[lo+step] < p {
			step *= 2
		}
		hi := min(lo+step+1, len(b))
		i, found := slices.BinarySearch(b[lo:hi], p)
		lo += i
		if found {
			out = append(out, p)
		}
		if lo >= len(b) {
			break
		}
	}
	return l.ix.cveList(orEmpty(out), false)
}

// Bodies returns the full CVE bodies of the list's items, in order.
func (l CVEList) Bodies() List {
	if !l.isCVEList() {
		return l.List
	}
	b := l.List
	b.cut = nil
	return b
}

// Item returns the i-th item's bytes (0 <= i < Len), without the closing
// brace of an open summary: see AppendPage for whole items.
func (l List) Item(i int) []byte { return l.item(i) }

// CVEFilter says which CVEs SelectCVEs lists: every part that is set
// narrows the list, and all hold together (AND). The zero CVEFilter
// selects every CVE.
type CVEFilter struct {
	// Band keeps the CVEs in a CVSS band; BandNone keeps all.
	Band Band
	// CWE, when HasCWE, keeps the CVEs citing the CWE of that name
	// (matched as CWECVEs matches it).
	CWE    string
	HasCWE bool
	// Vendor, when HasVendor, keeps the CVEs naming the vendor in some
	// CPE; Product, when HasProduct too, those naming that product of
	// it; Version, when HasVersion too, those of the product's CVEs
	// whose vulnerable CPEs cover that version (see ProductCVEsAt).
	Vendor, Product, Version          string
	HasVendor, HasProduct, HasVersion bool
	// KEV keeps the CVEs with a KEV entry (KEVOnly) or without one
	// (KEVNone); KEVAny keeps all.
	KEV KEVFilter
	// UpdatedSince and PublishedSince keep the CVEs updated, or
	// published, at or after a time key (see TimeKey); 0 keeps all.
	UpdatedSince, PublishedSince uint64
	// EPSSMin, when HasEPSSMin, keeps the CVEs whose EPSS score is at
	// least EPSSMin; PercentileMin, when HasPercentileMin, those whose
	// EPSS percentile is at least PercentileMin (both in millionths). A
	// CVE without an EPSS score is kept by neither, even at 0.
	EPSSMin, PercentileMin       uint32
	HasEPSSMin, HasPercentileMin bool
	// Sort is the order of the list; SortUsual (the zero value) is the
	// API's usual order.
	Sort CVESort
}

// KEVFilter is CVEFilter's choice about KEV entries.
type KEVFilter uint8

// The choices of CVEFilter.KEV.
const (
	KEVAny KEVFilter = iota
	KEVOnly
	KEVNone
)

// SelectCVEs lists the CVEs that f selects, in list order. When f names a
// CWE, vendor or product the index does not hold, it lists no CVE and
// fails with ErrCWENotFound, ErrVendorNotFound or ErrProductNotFound
// (which, for a filter, callers may take for an empty answer).
//
// The vendor's (or product's) list is narrowed by the CWE and then the
// band CVE by CVE, which costs what the vendor's list costs; a CWE or
// band alone is its own list. A CWE list much shorter than the vendor's
// is intersected with it instead. Then come KEV, UpdatedSince (a prefix)
// and PublishedSince, then the EPSS filters, and last the order (Sort).
func (ix *Index) SelectCVEs(f CVEFilter) (CVEList, error) {
	var cweList, vendorList CVEList
	if f.HasCWE {
		m, err := ix.CWECVEs(f.CWE)
		if err != nil {
			return ix.NoCVEs(), err
		}
		cweList = m
	}
	if f.HasVendor {
		var (
			m   CVEList
			err error
		)
		switch {
		case f.HasProduct && f.HasVersion:
			m, err = ix.ProductCVEsAt(f.Vendor, f.Product, f.Version)
		case f.HasProduct:
			m, err = ix.ProductCVEs(f.Vendor, f.Product)
		default:
			m, err = ix.VendorCVEs(f.Vendor)
		}
		if err != nil {
			return ix.NoCVEs(), err
		}
		vendorList = m
	}
	var l CVEList
	switch {
	case !f.HasVendor && !f.HasCWE:
		l = ix.CVEs(f.Band)
	case !f.HasVendor:
		l = cweList
	case !f.HasCWE:
		l = vendorList
	case cweList.Len() < vendorList.Len()/8:
		l = cweList.And(vendorList)
	default:
		l, _ = vendorList.CitingCWE(f.CWE) // the CWE exists: CWECVEs found it
	}
	if f.Band != BandNone && (f.HasVendor || f.HasCWE) {
		l = l.InBand(f.Band)
	}
	// Each filter is applied only when set: a CVEList is 17 words, and
	// copying it through a filter that keeps all shows in a request.
	if f.KEV != KEVAny {
		l = l.WithKEV(f.KEV == KEVOnly)
	}
	if f.UpdatedSince != 0 {
		l = l.UpdatedSince(f.UpdatedSince)
	}
	if f.PublishedSince != 0 {
		l = l.PublishedSince(f.PublishedSince)
	}
	if f.HasEPSSMin || f.HasPercentileMin {
		l = l.WithEPSS(f.EPSSMin, f.HasEPSSMin, f.PercentileMin, f.HasPercentileMin)
	}
	if f.Sort != SortUsual {
		l = l.Sorted(f.Sort)
	}
	return l, nil
}
