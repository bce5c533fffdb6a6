package main

import (
	"runtime"
	"runtime/debug"
	"testing"
)

func TestGCPercent(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct {
		live, headroom uint64
		want           int
	}{
		{1000 * mib, 256 * mib, 25}, // all of NVD: a quarter
		{100 * mib, 256 * mib, 100}, // small: never more than Go's default
		{10_000 * mib, 256 * mib, 10},
		{0, 256 * mib, 100},
		{1000 * mib, 100 * mib, 10},
	} {
		if got := gcPercent(tc.live, tc.headroom); got != tc.want {
			t.Errorf("gcPercent(%d MiB, %d MiB) = %d, want %d", tc.live/mib, tc.headroom/mib, got, tc.want)
		}
	}
}

// TestSettleMemorySetsGCPercent: after a load, the GC percent follows the
// live heap, and GOGC in the environment or -gc-headroom 0 leave it alone.
func TestSettleMemorySetsGCPercent(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	ballast := make([]byte, 64<<20) // live: at least 64 MiB
	t.Setenv("GOGC", "")

	(&Main{GCHeadroomMiB: 1}).settleMemory()
	if got := debug.SetGCPercent(100); got != 10 {
		t.Errorf("1 MiB of headroom over 64 MiB live: GC percent %d, want 10", got)
	}
	(&Main{GCHeadroomMiB: 16 << 10}).settleMemory()
	if got := debug.SetGCPercent(77); got != 100 {
		t.Errorf("16 GiB of headroom: GC percent %d, want 100", got)
	}
	(&Main{GCHeadroomMiB: 0}).settleMemory()
	if got := debug.SetGCPercent(77); got != 77 {
		t.Errorf("-gc-headroom 0: GC percent %d, want 77 (untouched)", got)
	}
	t.Setenv("GOGC", "77")
	(&Main{GCHeadroomMiB: 1}).settleMemory()
	if got := debug.SetGCPercent(100); got != 77 {
		t.Errorf("GOGC set: GC percent %d, want 77 (untouched)", got)
	}
	runtime.KeepAlive(ballast)
}
