// Package index holds one loaded snapshot as immutable, query-ready data.
//
// Build takes the records a snapshot holds (Data) and computes, once,
// everything a request needs: every body pre-encoded as JSON, every list in
// the order the API defines, and the relations (CWE → CVEs, vendor → CVEs,
// product → CVEs, vendor → products, CVSS band → CVEs) as sorted slices of
// positions. A page of a list is then a sub-slice joined into a buffer.
// The many small pieces (vendor and product bodies, their lists) are
// packed into a few large slices without pointers (packed.go), so that
// the garbage collector, which runs while requests are served, has
// almost nothing of an index to mark.
//
// An *Index is never changed after Build returns, so it is safe for
// concurrent use by any number of goroutines. The package does no I/O.
package index
