package loader

import (
	"os"
	"runtime"
	"testing"
)

// BenchmarkLoad loads the snapshot named by VULND_BENCH_SNAPSHOT (for
// example one built from bench/synth output); it is skipped without it.
func BenchmarkLoad(b *testing.B) {
	dir := os.Getenv("VULND_BENCH_SNAPSHOT")
	if dir == "" {
		b.Skip("set VULND_BENCH_SNAPSHOT to a snapshot directory")
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		ix, _, err := Load(dir)
		if err != nil {
			b.Fatal(err)
		}
		runtime.KeepAlive(ix)
	}
}
