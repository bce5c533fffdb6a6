package loader

import (
	"errors"
	"runtime/debug"
	"sync/atomic"
)

// cve5Read is the CVE JSON 5 records of a full build being read on a
// goroutine of its own while NVD's records are packed and written, which
// keeps about one core busy (zstd): the read, on every core, uses the
// other one. What the build keeps of a record (see keptOfCVE5 and
// holdFor) depends only on the feeds' CVEs and the cold store's CPE
// counts, both read by then and only read from then on, and on the
// aliases, never changed: the pack touches none of them. It gives what
// readCVE5Files gives.
type cve5Read struct {
	stop atomic.Bool
	done chan struct{}
	// Set by the reading goroutine, read once done is closed.
	recs  []*CVE5Record
	infos []FileInfo
	err   error
	// restore puts GOGC back once the read is over (nil: unchanged).
	restore func()
}

// errCVE5Stopped stops a cve5Read whose build has failed.
var errCVE5Stopped = errors.New("loader: reading the CVE JSON 5 records stopped")

// startCVE5Read starts reading the records of paths, keeping of each what
// keep keeps.
//
// gcPercent (0: as it is) is the collector's GOGC while the read goes
// on: the read and the pack beside it allocate on both cores at once,
// over a live heap that holds the feeds' CVEs and the packed blocks, and
// at the default of 100 the heap grew to twice that (a 400k build's
// peak RSS 1.45 times NVD alone's instead of 1.08).
func startCVE5Read(paths []string, keep *cve5Keep, gcPercent int) *cve5Read {
	rd := &cve5Read{done: make(chan struct{})}
	if gcPercent > 0 {
		old := debug.SetGCPercent(gcPercent)
		rd.restore = func() { debug.SetGCPercent(old) }
	}
	go func() {
		defer close(rd.done)
		rd.recs, rd.infos, rd.err = readCVE5FilesStopped(paths, keep, &rd.stop)
	}()
	return rd
}

// overlapGCPercent is a full build's GOGC while its records are read
// beside the pack (see startCVE5Read).
var overlapGCPercent = 40

// wait returns what readCVE5Files returns, once the reading is over.
func (rd *cve5Read) wait() ([]*CVE5Record, []FileInfo, error) {
	<-rd.done
	rd.restoreGC()
	recs, infos, err := rd.recs, rd.infos, rd.err
	rd.recs, rd.infos = nil, nil
	return recs, infos, err
}

// cancel stops the reading, if it is still going, and waits for it to
// end: a build that fails before it waits leaves nothing running.
func (rd *cve5Read) cancel() {
	rd.stop.Store(true)
	<-rd.done
	rd.restoreGC()
	rd.recs, rd.infos = nil, nil
}

// restoreGC puts GOGC back as it was before the read, once.
func (rd *cve5Read) restoreGC() {
	if rd.restore != nil {
		rd.restore()
		rd.restore = nil
	}
}
