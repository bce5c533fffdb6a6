package index

import (
	"slices"
	"sync/atomic"
)

// Vendor and product bodies are made on their first request, not at load:
// a product's body lists the distinct versions of its CPEs in version
// order, and gathering, sorting and writing those of every product was
// about a fifth of a 400k load on one core (0.6 s), for bodies few are
// ever asked. Each is made once it is asked, from the index's own data
// (a vendor's from its products' names, a product's from the CPEs of its
// CVEs, read again from their bodies as gatherVendors read them at load),
// byte for byte what the load wrote before (TestLazyBodiesEqualEager).

// lazyBody is a vendor's or product's body once made; nil until then.
// Two requests that both find it nil make the same bytes: the first to
// store them wins and both serve those.
type lazyBody struct{ p atomic.Pointer[[]byte] }

// get returns the body, making it with make on first use.
func (l *lazyBody) get(make func() []byte) []byte {
	if b := l.p.Load(); b != nil {
		return *b
	}
	b := make()
	if !l.p.CompareAndSwap(nil, &b) {
		return *l.p.Load()
	}
	return b
}

// vendorBody is the body of the vendor at i: {"name","human_name",
// "products"}, its products by name.
func (ix *Index) vendorBody(i uint32) []byte {
	return ix.vendorBodies[i].get(func() []byte {
		v := &ix.vendorRecs[i]
		name := view(v.key.of(ix.keys))
		pnames := make([]string, 0, v.prodHi-v.prodLo)
		for k := v.prodLo; k < v.prodHi; k++ {
			_, pname := ix.productNames(k)
			pnames = append(pnames, pname)
		}
		return appendNameSummary(make([]byte, 0, summarySize(name, pnames)), name, "products", pnames)
	})
}

// productBody is the body of the product at k: {"name","human_name",
// "versions"}, the distinct concrete version components of the CPEs that
// name the product, in version order.
func (ix *Index) productBody(k uint32) []byte {
	return ix.productBodies[k].get(func() []byte {
		vendorName, productName := ix.productNames(k)
		versions := ix.productVersions(ix.productRecs[k].cves.ints(ix.vpCVEs), vendorName, productName)
		// The distinct version components, by bytes first (the cheaper
		// comparison, for the many repeats), then in version order.
		slices.Sort(versions)
		versions = slices.Compact(versions)
		slices.SortFunc(versions, versionOrder)
		versions = orEmpty(versions)
		return appendNameSummary(make([]byte, 0, summarySize(productName, versions)), productName, "versions", versions)
	})
}

// productVersions reads the CPEs of the CVEs at positions cves again from
// their bodies and returns the concrete versions (see IsName) of those
// naming vendorName and productName, with repeats: views into the bodies,
// or copies of values with JSON escapes.
func (ix *Index) productVersions(cves []int32, vendorName, productName string) []string {
	var versions []string
	ix.eachCPE(cves, true, func(_ int32, it *cpeIter) {
		if v := view(it.version); IsName(v) && string(it.vendor) == vendorName && string(it.product) == productName {
			versions = append(versions, v)
		}
	})
	return versions
}
