package loader

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// BenchmarkReadCVE5Zip reads the records of $VULND_BUILD_PROFILE/cves.zip
// (bench/synth's output) as a build over its feeds does: what a build's
// records cost, without the rest of it. Skipped without it. "part" keeps
// of a record of a CVE of NVD its part (keptOfCVE5); "held", as a build
// without -previous does, holds that part as the details keep it (its
// NVD CVEs' summaries, CWEs and references in a cold store, the default
// aliases).
func BenchmarkReadCVE5Zip(b *testing.B) {
	dir := os.Getenv("VULND_BUILD_PROFILE")
	if dir == "" {
		b.Skip("VULND_BUILD_PROFILE not set")
	}
	feeds, _ := filepath.Glob(filepath.Join(dir, "nvdcve-2.0-*.json.gz"))
	f, err := os.CreateTemp(b.TempDir(), "cold")
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	cold := newColdStore(f)
	cves, _, _, err := readFeedsAt(feeds, nil, nil, cold)
	if err != nil {
		b.Fatal(err)
	}
	aliases, _, err := readAliases("")
	if err != nil {
		b.Fatal(err)
	}
	zip := filepath.Join(dir, "cves.zip")
	for _, bc := range []struct {
		name string
		keep func() *cve5Keep
	}{
		{"part", func() *cve5Keep { return keptOfCVE5(cves) }},
		{"held", func() *cve5Keep { return keptOfCVE5(cves).holdFor(cves, cold, aliases) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			var before, after syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &before)
			for b.Loop() {
				if _, _, err := readCVE5Files([]string{zip}, bc.keep()); err != nil {
					b.Fatal(err)
				}
			}
			// The machine may be shared: the CPU time is the steadier
			// figure.
			syscall.Getrusage(syscall.RUSAGE_SELF, &after)
			cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
			b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
		})
	}
}
