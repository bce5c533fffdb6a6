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
//
// A snapshot stores each CVE as its API body, the bytes GET /cve/{name}
// serves, so that body is both what the index serves and the snapshot's
// format: EncodeCVE writes it, ScanCVE reads from it what an Index needs
// (into a CVEEntry, on the loader's decoding goroutines), and BuildEntries
// builds an Index from the entries. The loader calls them, but they are
// the index's: the index scans the bodies again at query time with the
// same scanner (a product's affected versions), and a CVEEntry's fields
// are the index's own. Details keeps its stored form beside it for the
// same reason: Strings and AppendLine write it, and DetailsLoader parses
// it straight into the packed records that nothing outside sees.
package index
