//go:build race

package loader

// raceEnabled: the race detector adds allocations of its own (sync.Pool
// drops items at random, for one), so allocation limits are not checked
// under it; make test runs every Test...Allocs again without it.
const raceEnabled = true
