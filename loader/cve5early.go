package loader

import (
	"errors"
	"fmt"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/vulnd/vulnd/index"
)

// cve5Early is a full build's read of its CVE JSON 5 record files while
// NVD's feeds are read. The feeds are read on one goroutine (a file after
// another, as their records' order asks), which leaves most of a second
// core idle for as long as they take; read after them, the records were
// a seventh of a full build's time at 400k, on both cores.
//
// What a build keeps of a record depends on the feeds (see keptOfCVE5 and
// cve5Keep.holdFor), which are not read yet: every record is read as the
// part kept of a CVE of NVD, held with the entry keys that it has when
// NVD gives its CVE no CPEs, and kept in a cve5Part. Once the feeds are
// read, finish makes that what the build would have kept: a CVE whose
// NVD record gives it CPEs loses its entry keys, and the record of a CVE
// not in the feeds (served from its record) is read again whole, only
// the archive files that hold such records opened.
type cve5Early struct {
	paths []string
	// workers is how many goroutines decode an archive's files: every
	// core but the one the feeds' read takes while it lasts, every core
	// after.
	workers atomic.Int32
	stop    atomic.Bool
	done    chan struct{}
	// What the read gave, once done: the parts in the order read, the
	// files' sizes and SHA-256, or the error that stopped it.
	parts []cve5Part
	infos []FileInfo
	err   error
	// gcPercent is GOGC before the read lowered it, when gcSet.
	gcPercent int
	gcSet     bool
	// whole are the records read again whole (see finish), by their
	// parts' places.
	whole map[int]*CVE5Record
}

// cve5EarlyProcs is how many cores a full build needs to read its
// records early: on one, the read would only take from the feeds' (and
// hold the records longer).
var cve5EarlyProcs = 2

// cve5Part is what a build keeps of a record of a CVE of NVD (see
// keptPart and cve5Keep.hold), in a third of a CVE5Record: 400k of them
// are held while the feeds' read ends, the build's highest point then.
type cve5Part struct {
	id, state, published, updated string
	modified                      time.Time
	held                          *index.HeldDetails
	loc                           cve5Loc
	input                         int32
	byPackage                     bool
}

// record is p as a CVE5Record.
func (p *cve5Part) record(r *CVE5Record) {
	*r = CVE5Record{ID: p.id, State: p.state, Published: p.published, Updated: p.updated, Modified: p.modified,
		Held: p.held, Input: p.input, ByPackage: p.byPackage, loc: p.loc}
}

// errCVE5Stopped is what an early read stopped by its build gives.
var errCVE5Stopped = errors.New("loader: the read of CVE JSON 5 records was stopped")

// readCVE5Early starts reading the record files at paths, for a build
// with the aliases given.
func readCVE5Early(paths []string, aliases *Aliases) *cve5Early {
	e := &cve5Early{paths: paths, done: make(chan struct{})}
	e.workers.Store(int32(max(1, runtime.GOMAXPROCS(0)-1)))
	go func() {
		defer close(e.done)
		e.err = e.read(aliases)
		if e.err != nil {
			e.parts = nil
			return
		}
		// The read's garbage goes back to the OS now, and the heap
		// grows by less until the feeds are read (see
		// cve5EarlyGCPercent).
		debug.FreeOSMemory()
		e.gcPercent = debug.SetGCPercent(cve5EarlyGCPercent)
		e.gcSet = true
	}()
	return e
}

// cve5EarlyGCPercent is GOGC from the end of an early read of records to
// the end of the feeds' read: collections then run on the core the feeds
// leave idle, and what the records hold does not raise the heap's goal
// by twice itself just as the feeds' read reaches its highest.
const cve5EarlyGCPercent = 50

// read reads the files into e.parts and e.infos.
func (e *cve5Early) read(aliases *Aliases) error {
	keep := &cve5Keep{
		partOf: func(string) bool { return true },
		keysOf: func(_ string, es []index.AffectedEntry) []index.EntryKey { return entryKeysOf(es, aliases) },
	}
	held, err := index.NewHeldStore()
	if err != nil {
		return fmt.Errorf("loader: zstd: %w", err)
	}
	rd := &cve5Reader{keep: keep, workers: &e.workers}
	e.infos = make([]FileInfo, len(e.paths))
	for i, path := range e.paths {
		fi, err := rd.file(path, func(r *CVE5Record) error {
			if e.stop.Load() {
				return errCVE5Stopped
			}
			if r.Affected != nil || r.SSVC != nil { // keep.keep holds every part
				return fmt.Errorf("loader: cve5 %s: %s: not held", path, r.ID)
			}
			p := cve5Part{id: r.ID, state: r.State, published: r.Published, updated: r.Updated, modified: r.Modified,
				loc: r.loc, input: int32(i), byPackage: r.ByPackage}
			if r.HeldText != nil {
				p.held = held.Hold(*r.HeldText)
			}
			e.parts = append(e.parts, p)
			return nil
		})
		if err != nil {
			return err
		}
		e.infos[i] = fi
	}
	held.Seal()
	e.parts = slices.Clip(e.parts)
	return nil
}

// restoreGC puts GOGC back as it was before the read lowered it. Only
// once done.
func (e *cve5Early) restoreGC() {
	if e.gcSet {
		debug.SetGCPercent(e.gcPercent)
		e.gcSet = false
	}
}

// abandon stops the read, for a build that failed, and waits for it.
// Safe to call after finish, and on a nil *cve5Early.
func (e *cve5Early) abandon() {
	if e == nil {
		return
	}
	e.stop.Store(true)
	<-e.done
	e.restoreGC()
}

// finish waits for the read, on every core from now on, and makes what
// it gave what the build keeps of the records for cves (by name
// ascending, their NVD CPEs spilled in cold): the records of CVEs not in
// cves are read again whole.
func (e *cve5Early) finish(cves []index.CVE, cold *coldStore) error {
	e.workers.Store(int32(runtime.GOMAXPROCS(0)))
	<-e.done
	e.restoreGC()
	if e.err != nil {
		return e.err
	}
	// By ID ascending, two of one CVE merged as mergeCVE5Sorted merges
	// them (the later Modified wins; on a tie, the one read later).
	slices.SortStableFunc(e.parts, func(a, b cve5Part) int { return strings.Compare(a.id, b.id) })
	out := e.parts[:0]
	for _, p := range e.parts {
		if n := len(out); n > 0 && out[n-1].id == p.id {
			if !out[n-1].modified.After(p.modified) {
				out[n-1] = p
			}
			continue
		}
		out = append(out, p)
	}
	clear(e.parts[len(out):])
	e.parts = out
	// whole[f] are the places in parts of the records of file f to read
	// again whole.
	whole := make([][]int, len(e.paths))
	i := 0
	for j := range e.parts {
		p := &e.parts[j]
		for i < len(cves) && cves[i].Name < p.id {
			i++
		}
		if i < len(cves) && cves[i].Name == p.id {
			if p.held != nil && cold.cpeCount(&cves[i]) > 0 {
				p.held = p.held.WithoutKeys()
			}
			continue
		}
		whole[p.input] = append(whole[p.input], j)
	}
	e.whole = map[int]*CVE5Record{}
	for f, js := range whole {
		if len(js) > 0 {
			if err := e.readWhole(f, js); err != nil {
				return err
			}
		}
	}
	return nil
}

// readWhole reads again, whole, the records of file f whose parts are
// e.parts[js].
func (e *cve5Early) readWhole(f int, js []int) error {
	want := cve5Want{}
	for _, j := range js {
		want.add(e.parts[j].loc)
	}
	got := make(map[cve5Loc]*CVE5Record, len(js))
	fi, err := (&cve5Reader{want: want}).file(e.paths[f], func(r *CVE5Record) error {
		got[r.loc] = r
		return nil
	})
	if err != nil {
		return err
	}
	changed := fmt.Errorf("loader: %s changed while the build read it", e.paths[f])
	if fi.Size != e.infos[f].Size || fi.SHA256 != e.infos[f].SHA256 {
		return changed
	}
	strs := newInterner()
	for _, j := range js {
		r := got[e.parts[j].loc]
		if r == nil || r.ID != e.parts[j].id {
			return changed
		}
		r.Input = int32(f)
		strs.record(r)
		e.whole[j] = r
	}
	return nil
}

// records returns, once finished, what the build keeps of the records
// as readCVE5Files returns it (by ID ascending), with the files' sizes
// and SHA-256, and lets go of them.
func (e *cve5Early) records() ([]*CVE5Record, []FileInfo) {
	recs := make([]*CVE5Record, len(e.parts))
	block := make([]CVE5Record, len(e.parts)-len(e.whole))
	for j := range e.parts {
		if r, ok := e.whole[j]; ok {
			recs[j] = r
			continue
		}
		r := &block[0]
		block = block[1:]
		e.parts[j].record(r)
		recs[j] = r
	}
	infos := e.infos
	e.parts, e.whole, e.infos = nil, nil, nil
	return recs, infos
}
