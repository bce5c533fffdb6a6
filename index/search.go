package index

import (
	"bytes"
	"slices"
	"strings"
	"sync"
)

// searchText finds the items of a name-ordered list (vendors, or one
// vendor's products) whose name or human name holds a string, ignoring
// case: one lower-cased text of every item's "name\x00human_name\x00",
// searched with bytes.Index, so a query costs a pass of a fast substring
// search over a few megabytes at most, never a per-item loop. Lower-cased,
// a human name is the name with "_" turned into " " (see HumanName), so
// it is kept only for names that hold a "_".
type searchText struct {
	text []byte
	ends []int32 // ends[i]: the text offset just past item i
}

// lazySearch is a searchText made on its first use, from the names names
// returns, rather than at load: few snapshots are ever searched, and
// making the vendors' and products' took 0.05 s of a 400k load on one
// core.
type lazySearch struct {
	once  sync.Once
	st    searchText
	names func() []string
}

func (l *lazySearch) get() *searchText {
	l.once.Do(func() {
		l.st = newSearchText(l.names())
		l.names = nil
	})
	return &l.st
}

func newSearchText(names []string) searchText {
	n := 0
	for _, name := range names {
		n += 2*len(name) + 8
	}
	st := searchText{text: make([]byte, 0, n), ends: make([]int32, len(names))}
	for i, name := range names {
		from := len(st.text)
		st.text = appendLower(st.text, name)
		st.text = append(st.text, 0)
		if strings.IndexByte(name, '_') >= 0 {
			to := len(st.text)
			st.text = append(st.text, st.text[from:to]...)
			for j := to; j < len(st.text); j++ {
				if st.text[j] == '_' {
					st.text[j] = ' '
				}
			}
		}
		st.ends[i] = int32(len(st.text))
	}
	st.text = slices.Clip(st.text)
	return st
}

// appendLower appends s lower-cased: byte by byte for ASCII, through
// strings.ToLower otherwise.
func appendLower(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return append(dst, strings.ToLower(s)...)
		}
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// find returns the positions, from lo, of the items lo to hi-1 holding
// q, ascending. An empty q holds nothing here; callers treat it as no
// filter.
func (st *searchText) find(q string, lo, hi int) []int32 {
	out := []int32{}
	needle := []byte(strings.ToLower(q))
	if len(needle) == 0 || bytes.IndexByte(needle, 0) >= 0 || lo >= hi {
		return out
	}
	// Each item's text ends with a 0 byte, which needle has not: a match
	// never spans two items.
	from, end := 0, int(st.ends[hi-1])
	if lo > 0 {
		from = int(st.ends[lo-1])
	}
	ends := st.ends[lo:hi]
	for from < end {
		i := bytes.Index(st.text[from:end], needle)
		if i < 0 {
			break
		}
		at := int32(from + i)
		// The item holding offset at: the first whose end is past it.
		item, _ := slices.BinarySearch(ends, at+1)
		out = append(out, int32(item))
		from = int(ends[item])
	}
	return out
}

// SearchVendors lists the vendors whose name or human_name holds q,
// ignoring case, in name order. An empty q lists every vendor.
func (ix *Index) SearchVendors(q string) List {
	if q == "" {
		return ix.Vendors()
	}
	ix.vendorsReady()
	return List{pk: ix.vendors, ids: ix.vendorSearch.get().find(q, 0, len(ix.vendorRecs)), sub: true}
}

// SearchProducts lists the vendor's products whose name or human_name
// holds q, ignoring case, in name order, or fails with ErrVendorNotFound.
// An empty q lists every product.
func (ix *Index) SearchProducts(vendorName, q string) (List, error) {
	v, err := ix.vendor(vendorName)
	if err != nil {
		return List{}, err
	}
	lo, hi := int(v.prodLo), int(v.prodHi)
	l := List{pk: ix.products.slice(lo, hi)}
	if q != "" {
		l.ids, l.sub = ix.productSearch.get().find(q, lo, hi), true
	}
	return l, nil
}
