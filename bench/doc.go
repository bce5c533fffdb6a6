// Package bench holds vulnd's full-scale benchmarks and what they share
// with the load test (bench/load.sh): PickPaths, which draws real paths of
// every endpoint class from a snapshot.
//
// The benchmarks (bench_test.go) serve every endpoint class through
// httpapi.Server.ServeHTTP, and time the snapshot load and the index
// build, all on one snapshot per run:
//
//	VULND_BENCH_SNAPSHOT=/tmp/snap go test -run '^$' -bench . -benchmem ./bench
//
// The snapshot is VULND_BENCH_SNAPSHOT if set (it must hold a report, that
// is, be built with -previous); otherwise one is generated with bench/synth
// (VULND_BENCH_CVES CVEs, default 400,000: a first day, and a next day
// built with -previous so a report exists) in a temporary directory, once
// per process, the first time a benchmark needs it, and removed at exit.
// Plain go test runs no benchmark and so generates nothing.
//
// Nothing in vulnd imports this package.
package bench
