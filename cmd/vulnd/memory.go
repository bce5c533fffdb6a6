package main

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
	"time"

	"github.com/vulnd/vulnd/index"
)

// defaultGCHeadroomMiB is -gc-headroom's default: at 400k CVEs, about a
// quarter of the live index, and some seconds of allocation at full load.
const defaultGCHeadroomMiB = 256

// settleMemory runs after every load attempt, once the new index (or
// none) is swapped in. It hands what the load left (its buffers, the
// replaced index) back to the OS at once, so RSS returns to one
// snapshot's worth instead of waiting for the scavenger, which a reload
// storm outruns. Then it paces the GC for the index now live (see
// gcPercent), unless GOGC is set in the environment.
func (m *Main) settleMemory() {
	debug.FreeOSMemory() // a full collection: the live heap is exact below
	if m.GCHeadroomMiB <= 0 || os.Getenv("GOGC") != "" {
		return
	}
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	debug.SetGCPercent(gcPercent(s[0].Value.Uint64(), uint64(m.GCHeadroomMiB)<<20))
}

// gcPercent is the GOGC that lets a heap of live bytes grow by about
// headroom before the next collection. Go's default, 100, lets it double:
// with a 1 GB index that is 1 GB of garbage between collections, and
// RSS twice the index under sustained load. The index is mostly bytes
// without pointers, so a collection costs little whatever its size, and
// collecting more often is cheaper than the memory. The percent stays
// between 10, so a huge index still leaves room, and 100, so a small one
// is never given more than Go would give it.
func gcPercent(live, headroom uint64) int {
	if live == 0 {
		return 100
	}
	return int(min(100, max(10, headroom*100/live)))
}

// warmMinCVEs is the size from which a product's ?version= tables are
// built after the load rather than by its first query: at 400k CVEs, the
// 334 products of 50 CVEs or more, whose first queries took 2.6 ms on
// average and up to some 60 ms, in about 0.9 s of CPU and 5 MB. A
// smaller product's first query costs a fraction of a millisecond.
const warmMinCVEs = 50

// warm makes ix's vendor and product tables, which the load leaves to
// it, then builds the ?version= tables of ix's biggest products (see
// index.WarmVersionTables), on a goroutine of its own, so that few
// queries wait for them, until ix is replaced or serve closes.
func (m *Main) warm(ix *index.Index) {
	m.warming.Add(1)
	go func() {
		defer m.warming.Done()
		start := time.Now()
		// The vendor and product tables first: the load leaves them to
		// this (see index.BuildEntriesDeferVendors), and a request for
		// them that comes before waits for them.
		if err := ix.WarmVendors(); err != nil {
			m.Log.Error("snapshot's vendor and product tables", "dir", m.Snapshot, "id", ix.Meta().ID, "err", err)
		}
		m.Log.Debug("vendor and product tables made", "duration", time.Since(start).Round(time.Millisecond))
		n := ix.WarmVersionTables(warmMinCVEs, func() bool { return m.closed.Load() || m.cur.Load() != ix })
		if m.closed.Load() || m.cur.Load() != ix {
			return // replaced or closing: stopped
		}
		if n > 0 {
			// Building them left garbage (28 MB at 100k CVEs with JSON 5
			// records) that settleMemory, run before, did not see: hand
			// it back now rather than at the next collection.
			debug.FreeOSMemory()
		}
		// From here on the process holds what it serves with: the line
		// to wait for before reading its memory.
		m.Log.Info("warm-up done", "id", ix.Meta().ID, "products", n, "min_cves", warmMinCVEs, "duration", time.Since(start).Round(time.Millisecond))
	}()
}
