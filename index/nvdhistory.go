package index

// NVD's CVE Change History API 2.0 (GET /rest/json/cvehistory/2.0),
// answered from the reports the snapshot keeps: each alert that concerns
// NVD's record is one change, its events the change's details. The
// changes are listed once per snapshot (buildHistory: a small record per
// alert, no JSON read); a page composes its changes from the alerts'
// stored events.

import (
	"cmp"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-json"
)

// The event names of NVD's history: those vulnd makes, and those it knows
// from NVD's documentation and data but never makes.
const (
	// HistoryReceivedName is the eventName of a new CVE's change, as NVD
	// writes it in its data ("CVE Received" in its documentation, which
	// eventName also takes).
	HistoryReceivedName = "New CVE Received"
	// HistoryModifiedName is the eventName of every other change.
	HistoryModifiedName = "CVE Modified"
)

// HistoryEvent is what an eventName asks for.
type HistoryEvent uint8

// The events a query can ask for.
const (
	HistoryAny      HistoryEvent = iota // no eventName
	HistoryReceived                     // New CVE Received (or CVE Received)
	HistoryModified                     // CVE Modified
	HistoryNever                        // an event of NVD's that vulnd never makes
)

// historyNames are NVD's event names (any letter case), with what each
// asks for.
var historyNames = map[string]HistoryEvent{
	"cve received":          HistoryReceived,
	"new cve received":      HistoryReceived,
	"cve modified":          HistoryModified,
	"initial analysis":      HistoryNever,
	"reanalysis":            HistoryNever,
	"modified analysis":     HistoryNever,
	"cve translated":        HistoryNever,
	"vendor comment":        HistoryNever,
	"cve source update":     HistoryNever,
	"cpe deprecation remap": HistoryNever,
	"cwe remap":             HistoryNever,
	"reference tag update":  HistoryNever,
	"cve rejected":          HistoryNever,
	"cve unrejected":        HistoryNever,
	"cve cisa kev update":   HistoryNever,
}

// ParseHistoryEvent reads an eventName, any letter case; ok is false
// when it is none of NVD's.
func ParseHistoryEvent(name string) (e HistoryEvent, ok bool) {
	e, ok = historyNames[strings.ToLower(name)]
	return e, ok
}

// histRec is one change: one alert that concerns NVD's record.
type histRec struct {
	at     int64  // the alert's created_at, Unix milliseconds
	key    uint64 // cveKey of the CVE; 0 when its name is not a CVE id
	alert  int64
	cve    string
	events []byte // the alert's events as /reports/{id}/alerts/{id} serves them
	// desc is, for a new CVE, where its description is: the position of
	// the change whose "Summary changed" holds it as its old summary, or
	// histDescCurrent or histDescNone.
	desc  int32
	isNew bool
	// summary: the alert has a "Summary changed".
	summary bool
}

const (
	histDescCurrent = -1 // the CVE's summary as served now
	histDescNone    = -2 // not known: no detail
)

// histInput is what buildReports hands buildHistory of one alert.
type histInput struct {
	a      *Alert
	events []byte
}

// buildHistory lists the changes of the alerts in, in the order served:
// created oldest first, then CVE year and number ascending, then alert id
// ascending. An alert whose every event is an "EPSS changed" is no change
// of NVD's record and is left out.
func (ix *Index) buildHistory(in []histInput) {
	recs := make([]histRec, 0, len(in))
	for _, h := range in {
		r := histRec{alert: h.a.ID, cve: h.a.CVE, events: h.events, desc: histDescNone}
		if t, err := time.Parse(TimeLayout, h.a.CreatedAt); err == nil {
			r.at = t.UnixMilli()
		}
		if y, n, ok := cveNumber(h.a.CVE); ok {
			r.key = cveKey(y, len(h.a.CVE)-len("CVE-yyyy-"), n)
		}
		nvd := false
		for _, e := range h.a.Events {
			switch e.Type {
			case EventNewCVE:
				r.isNew, nvd = true, true
			case EventSummaryChanged:
				r.summary, nvd = true, true
			case EventEPSSChanged:
			default:
				nvd = true
			}
		}
		if nvd {
			recs = append(recs, r)
		}
	}
	slices.SortFunc(recs, func(a, b histRec) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.key>>40, b.key>>40), cmp.Compare(uint32(a.key), uint32(b.key)),
			cmp.Compare(a.cve, b.cve), cmp.Compare(a.alert, b.alert))
	})
	// A new CVE's description is the old summary of its next "Summary
	// changed", or, when none came after, its summary now. The kept
	// reports are the newest ones, so none between is missing.
	pending := map[string]int32{} // CVE -> its last new change still without a description
	for i := range recs {
		r := &recs[i]
		if p, ok := pending[r.cve]; ok && (r.isNew || r.summary) {
			if !r.isNew {
				recs[p].desc = int32(i)
			}
			delete(pending, r.cve)
		}
		if r.isNew {
			pending[r.cve] = int32(i)
		}
	}
	for _, p := range pending {
		if _, ok := ix.cveByName[recs[p].key]; ok && recs[p].key != 0 {
			recs[p].desc = histDescCurrent
		}
	}
	ix.history = recs
}

// HistoryQuery is a checked query of NVD's history API: its zero value
// matches every change. Times are Unix milliseconds, both ends inclusive.
type HistoryQuery struct {
	CVEID      string // upper case
	Start, End int64
	HasDates   bool
	Event      HistoryEvent
}

// HistoryResult is the changes a query matched, in the order served.
type HistoryResult struct {
	lo, hi int     // without ids: the changes recs[lo:hi]
	ids    []int32 // with a filter beyond dates: the positions
	picked bool
}

// Len is the number of changes matched.
func (r HistoryResult) Len() int {
	if r.picked {
		return len(r.ids)
	}
	return r.hi - r.lo
}

func (r HistoryResult) at(i int) int32 {
	if r.picked {
		return r.ids[i]
	}
	return int32(r.lo + i)
}

// SearchHistory returns the changes that match q.
func (ix *Index) SearchHistory(q *HistoryQuery) HistoryResult {
	recs := ix.history
	if q.Event == HistoryNever {
		return HistoryResult{}
	}
	lo, hi := 0, len(recs)
	if q.HasDates {
		lo, _ = slices.BinarySearchFunc(recs, q.Start, func(r histRec, t int64) int { return cmp.Compare(r.at, t) })
		hi, _ = slices.BinarySearchFunc(recs, q.End+1, func(r histRec, t int64) int { return cmp.Compare(r.at, t) })
		hi = max(hi, lo)
	}
	if q.CVEID == "" && q.Event == HistoryAny {
		return HistoryResult{lo: lo, hi: hi}
	}
	var key uint64
	if q.CVEID != "" {
		y, n, ok := cveNumber(q.CVEID)
		if !ok {
			return HistoryResult{}
		}
		key = cveKey(y, len(q.CVEID)-len("CVE-yyyy-"), n)
	}
	res := HistoryResult{picked: true}
	for i := lo; i < hi; i++ {
		r := &recs[i]
		if q.CVEID != "" && r.key != key {
			continue
		}
		if q.Event == HistoryReceived && !r.isNew || q.Event == HistoryModified && r.isNew {
			continue
		}
		res.ids = append(res.ids, int32(i))
	}
	return res
}

// HistoryChangeID is the cveChangeId of the change of alert id: UUID
// shaped (RFC 9562 version 8), the alert id in hexadecimal in its last
// group (its bits above 48 in the second): 42 is
// 00000000-0000-8000-8000-00000000002A.
func HistoryChangeID(id int64) string {
	return string(appendChangeID(nil, id))
}

func appendChangeID(dst []byte, id int64) []byte {
	const hex = "0123456789ABCDEF"
	u := uint64(id)
	dst = append(dst, "00000000-"...)
	for s := 12; s >= 0; s -= 4 {
		dst = append(dst, hex[u>>(48+s)&0xF])
	}
	dst = append(dst, "-8000-8000-"...)
	for s := 44; s >= 0; s -= 4 {
		dst = append(dst, hex[u>>s&0xF])
	}
	return dst
}

// AppendHistoryPage appends NVD's answer to dst: the envelope with at
// most size changes of r from start, and timestamp as its timestamp.
func (ix *Index) AppendHistoryPage(dst []byte, r HistoryResult, start, size int, timestamp time.Time) ([]byte, error) {
	var from, to int
	dst, from, to = appendNVDEnvelope(dst, "NVD_CVEHistory", "cveChanges", r.Len(), start, size, timestamp)
	var dec histDecoder
	for i := from; i < to; i++ {
		if i > from {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = ix.appendChange(dst, r.at(i), &dec); err != nil {
			return dst, err
		}
	}
	return append(dst, "]}"...), nil
}

// appendChange appends the change of recs[p]: {"change": {...}}.
func (ix *Index) appendChange(dst []byte, p int32, dec *histDecoder) ([]byte, error) {
	r := &ix.history[p]
	dst = append(dst, `{"change":{"cveId":`...)
	dst = appendJSONString(dst, r.cve)
	dst = append(dst, `,"eventName":"`...)
	if r.isNew {
		dst = append(dst, HistoryReceivedName...)
	} else {
		dst = append(dst, HistoryModifiedName...)
	}
	dst = append(dst, `","cveChangeId":"`...)
	dst = appendChangeID(dst, r.alert)
	dst = append(dst, `","sourceIdentifier":`...)
	dst = appendJSONString(dst, ix.nvdSource(r.key))
	dst = append(dst, `,"created":"`...)
	dst = time.UnixMilli(r.at).UTC().AppendFormat(dst, NVDTimestampLayout)
	dst = append(dst, `","details":[`...)
	w := detailWriter{dst: dst}
	if r.isNew {
		switch {
		case r.desc == histDescCurrent:
			if pos, ok := ix.cveByName[r.key]; ok {
				w.add("Added", "Description", "", string(summaryText(ix.cveBodies[pos])))
			}
		case r.desc >= 0:
			old, err := dec.summaryOld(ix.history[r.desc].events)
			if err != nil {
				return dst, err
			}
			w.add("Added", "Description", "", old)
		}
	}
	if err := dec.details(r.events, &w); err != nil {
		return dst, err
	}
	return append(w.dst, "]}}"...), nil
}

// nvdSource is the sourceIdentifier of the NVD record of the CVE of key,
// "" when the snapshot has none.
func (ix *Index) nvdSource(key uint64) string {
	n := ix.nvd
	if n == nil || key == 0 {
		return ""
	}
	p, ok := n.byName[key]
	if !ok {
		return ""
	}
	return n.source[n.recs[p].source]
}

// detailWriter appends the details of one change.
type detailWriter struct {
	dst []byte
	n   int
}

// add appends one detail: oldValue only for Removed and Changed, newValue
// only for Added and Changed, as NVD writes them.
func (w *detailWriter) add(action, typ, old, new string) {
	if w.n > 0 {
		w.dst = append(w.dst, ',')
	}
	w.n++
	w.dst = append(w.dst, `{"action":"`...)
	w.dst = append(w.dst, action...)
	w.dst = append(w.dst, `","type":`...)
	w.dst = appendJSONString(w.dst, typ)
	if action != "Added" {
		w.dst = append(w.dst, `,"oldValue":`...)
		w.dst = appendJSONString(w.dst, old)
	}
	if action != "Removed" {
		w.dst = append(w.dst, `,"newValue":`...)
		w.dst = appendJSONString(w.dst, new)
	}
	w.dst = append(w.dst, '}')
}

// histDecoder reads stored events for one request.
type histDecoder struct {
	events []histEvent
}

type histEvent struct {
	Type    string          `json:"type"`
	Details json.RawMessage `json:"details"`
}

// The shapes of the event details the history reads.
type (
	histSummary struct {
		Old string `json:"old"`
		New string `json:"new"`
	}
	histCPEs struct {
		Added   []histCPE `json:"added"`
		Removed []histCPE `json:"removed"`
	}
	histCPE struct {
		URI string `json:"uri"`
	}
	histCVSS struct {
		Action   string `json:"action"`
		NewScore string `json:"new_score"`
		OldScore string `json:"old_score"`
	}
	histCWEs struct {
		Added   []string `json:"added"`
		Removed []string `json:"removed"`
	}
	histRefs struct {
		Added   []Reference `json:"added"`
		Removed []Reference `json:"removed"`
		Changed []struct {
			Key      string `json:"key"`
			Link     string `json:"link"`
			NewValue string `json:"new_value"`
			OldValue string `json:"old_value"`
		} `json:"changed"`
	}
	histAffected struct {
		Added   []json.RawMessage `json:"added"`
		Removed []json.RawMessage `json:"removed"`
	}
)

func (d *histDecoder) read(events []byte) error {
	d.events = d.events[:0]
	return json.Unmarshal(events, &d.events)
}

// summaryOld is the old summary of the "Summary changed" of events.
func (d *histDecoder) summaryOld(events []byte) (string, error) {
	if err := d.read(events); err != nil {
		return "", err
	}
	for _, e := range d.events {
		if e.Type == EventSummaryChanged {
			var s histSummary
			err := json.Unmarshal(e.Details, &s)
			return s.Old, err
		}
	}
	return "", nil
}

// noTypes is how NVD writes a reference without tags in a "Reference
// Type" detail.
const noTypes = "No Types Assigned"

// details appends the details of events, in the order of the event
// types; within an event, added items, then removed, then changed.
func (d *histDecoder) details(events []byte, w *detailWriter) error {
	if err := d.read(events); err != nil {
		return err
	}
	for _, e := range d.events {
		var err error
		switch e.Type {
		case EventSummaryChanged:
			var s histSummary
			if err = json.Unmarshal(e.Details, &s); err == nil {
				w.add("Changed", "Description", s.Old, s.New)
			}
		case EventCPEsChanged:
			var c histCPEs
			if err = json.Unmarshal(e.Details, &c); err == nil {
				for _, x := range c.Added {
					w.add("Added", "CPE Configuration", "", x.URI)
				}
				for _, x := range c.Removed {
					w.add("Removed", "CPE Configuration", x.URI, "")
				}
			}
		case EventCVSSChanged:
			var c histCVSS
			if err = json.Unmarshal(e.Details, &c); err == nil {
				switch c.Action {
				case "added":
					w.add("Added", "CVSS", "", c.NewScore)
				case "removed":
					w.add("Removed", "CVSS", c.OldScore, "")
				default:
					w.add("Changed", "CVSS", c.OldScore, c.NewScore)
				}
			}
		case EventCWEsChanged:
			var c histCWEs
			if err = json.Unmarshal(e.Details, &c); err == nil {
				for _, x := range c.Added {
					w.add("Added", "CWE", "", x)
				}
				for _, x := range c.Removed {
					w.add("Removed", "CWE", x, "")
				}
			}
		case EventReferencesChanged:
			var c histRefs
			if err = json.Unmarshal(e.Details, &c); err == nil {
				for _, x := range c.Added {
					w.add("Added", "Reference", "", x.Link)
				}
				for _, x := range c.Removed {
					w.add("Removed", "Reference", x.Link, "")
				}
				for _, x := range c.Changed {
					switch x.Key {
					case "description": // NVD's tags, ", "-joined
						w.add("Changed", "Reference Type", x.Link+" "+cmp.Or(x.OldValue, noTypes), x.Link+" "+cmp.Or(x.NewValue, noTypes))
					case "source":
						w.add("Changed", "Reference Source", x.Link+" "+x.OldValue, x.Link+" "+x.NewValue)
					}
					// "type" is the first tag, which "description"
					// already shows.
				}
			}
		case EventAffectedChanged:
			var c histAffected
			if err = json.Unmarshal(e.Details, &c); err == nil {
				for _, x := range c.Added {
					w.add("Added", "Affected", "", string(x))
				}
				for _, x := range c.Removed {
					w.add("Removed", "Affected", string(x), "")
				}
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}
