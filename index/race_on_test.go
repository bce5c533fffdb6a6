//go:build race

package index

// raceEnabled: the race detector adds allocations of its own (sync.Pool
// drops items at random, for one), so allocation counts are not pinned.
const raceEnabled = true
