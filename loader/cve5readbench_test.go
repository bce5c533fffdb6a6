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
// records cost, without the rest of it. Skipped without it.
func BenchmarkReadCVE5Zip(b *testing.B) {
	dir := os.Getenv("VULND_BUILD_PROFILE")
	if dir == "" {
		b.Skip("VULND_BUILD_PROFILE not set")
	}
	feeds, _ := filepath.Glob(filepath.Join(dir, "nvdcve-2.0-*.json.gz"))
	cves, _, _, err := readFeeds(feeds, nil)
	if err != nil {
		b.Fatal(err)
	}
	zip := filepath.Join(dir, "cves.zip")
	var before, after syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &before)
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := readCVE5Files([]string{zip}, keptOfCVE5(cves)); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	// The machine may be shared: the CPU time is the steadier figure.
	syscall.Getrusage(syscall.RUSAGE_SELF, &after)
	cpu := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
}
