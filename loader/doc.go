// Package loader turns upstream data into snapshots and snapshots into
// indexes: it reads NVD's CVE API 2.0 feed files and MITRE's CWE catalog
// (whatever their compression, found by content), builds and writes a
// snapshot directory atomically (Build, Write), compares a build with the
// previous snapshot to make reports (diff.go), and reads a snapshot back,
// checking every size and checksum before decoding (Load for serving,
// Validate for a full check, Read for -previous). The layout is
// snapshots/FORMAT.md. It does no HTTP and holds no state between calls
// but one shared zstd decoder.
package loader
