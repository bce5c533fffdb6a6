package loader

import (
	"errors"
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
}

// errCVE5Stopped stops a cve5Read whose build has failed.
var errCVE5Stopped = errors.New("loader: reading the CVE JSON 5 records stopped")

// startCVE5Read starts reading the records of paths, keeping of each what
// keep keeps.
func startCVE5Read(paths []string, keep *cve5Keep) *cve5Read {
	rd := &cve5Read{done: make(chan struct{})}
	go func() {
		defer close(rd.done)
		rd.recs, rd.infos, rd.err = readCVE5FilesStopped(paths, keep, &rd.stop)
	}()
	return rd
}

// wait returns what readCVE5Files returns, once the reading is over.
func (rd *cve5Read) wait() ([]*CVE5Record, []FileInfo, error) {
	<-rd.done
	recs, infos, err := rd.recs, rd.infos, rd.err
	rd.recs, rd.infos = nil, nil
	return recs, infos, err
}

// cancel stops the reading, if it is still going, and waits for it to
// end: a build that fails before it waits leaves nothing running.
func (rd *cve5Read) cancel() {
	rd.stop.Store(true)
	<-rd.done
	rd.recs, rd.infos = nil, nil
}
