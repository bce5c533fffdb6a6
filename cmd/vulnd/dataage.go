package main

import (
	"time"

	"github.com/vulnd/vulnd/index"
)

// The data's age (serve -max-data-age): a snapshot is stale once its
// newest input (index.DataTime: the newest of its input sources' dates,
// whichever source that is) is more than MaxDataAge before now. Stale is
// judged anew at each look, so it turns true as time passes without a
// reload: by GET /status, by each scrape of vulnd_snapshot_stale, by
// /readyz under -stale-unready, and by a timer set at each swap for the
// moment the data turns stale, so the one warning is logged then even
// when nobody asks. A stale snapshot keeps serving.

// now is the clock staleness is judged by.
func (m *Main) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// stale tells whether ix's data is older than MaxDataAge, logging one
// warning the first time it finds so for the snapshot swapped in last.
func (m *Main) stale(ix *index.Index) bool {
	if m.MaxDataAge <= 0 || ix == nil {
		return false
	}
	t, ok := ix.DataTime()
	if !ok {
		return false // no date to judge by (a loaded snapshot always has its build time)
	}
	now := m.now()
	if now.Sub(t) <= m.MaxDataAge {
		return false
	}
	if m.staleWarned.CompareAndSwap(false, true) {
		d := ix.Meta().InputDates
		m.Log.Warn("the snapshot's data is older than -max-data-age; still serving it", "id", ix.Meta().ID,
			"newest_input", t.UTC().Format(index.TimeLayout), "age", now.Sub(t).Round(time.Second), "max_data_age", m.MaxDataAge,
			"nvd", d.NVD, "cve5", d.CVE5, "epss", d.EPSS, "cwe", d.CWE)
	}
	return true
}

// watchStale is called after each swap (under loadMu): the new snapshot
// gets its own warning, logged now if it is stale already, else by a
// timer when it turns stale.
func (m *Main) watchStale(ix *index.Index) {
	if m.MaxDataAge <= 0 {
		return
	}
	m.staleMu.Lock()
	defer m.staleMu.Unlock()
	if m.staleTimer != nil {
		m.staleTimer.Stop()
		m.staleTimer = nil
	}
	m.staleWarned.Store(false)
	if m.stale(ix) || m.closed.Load() {
		return
	}
	t, ok := ix.DataTime()
	if !ok {
		return
	}
	var check func()
	check = func() {
		m.staleMu.Lock()
		defer m.staleMu.Unlock()
		if m.closed.Load() || m.cur.Load() != ix || m.stale(ix) {
			return
		}
		// Early by the clock Now gives: look again when it says.
		m.staleTimer = time.AfterFunc(max(t.Add(m.MaxDataAge).Sub(m.now()), 0)+time.Second, check)
	}
	m.staleTimer = time.AfterFunc(t.Add(m.MaxDataAge).Sub(m.now())+time.Second, check)
}

// stopStale stops the timer of watchStale.
func (m *Main) stopStale() {
	m.staleMu.Lock()
	defer m.staleMu.Unlock()
	if m.staleTimer != nil {
		m.staleTimer.Stop()
	}
}
