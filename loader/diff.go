package loader

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"

	"github.com/goccy/go-json"

	"github.com/vulnd/vulnd/index"
)

// Event details, in the API's shapes. Field order follows the spec.

type cpeChange struct {
	CPEID   int64  `json:"cpe_id"`
	Product string `json:"product"`
	URI     string `json:"uri"`
	Vendor  string `json:"vendor"`
	Version string `json:"version"`
}

type cpesDetails struct {
	Added   []cpeChange `json:"added"`
	Removed []cpeChange `json:"removed"`
}

type cvssDetails struct {
	Action   string `json:"action"`
	ID       int64  `json:"id"`
	NewScore string `json:"new_score"`
	OldScore string `json:"old_score"`
}

type cwesDetails struct {
	Added   []string `json:"added"`
	Removed []string `json:"removed"`
}

type refChange struct {
	ID       int64  `json:"id"`
	Key      string `json:"key"`
	Link     string `json:"link"`
	NewValue string `json:"new_value"`
	OldValue string `json:"old_value"`
}

type refsDetails struct {
	Added   []index.Reference `json:"added"`
	Changed []refChange       `json:"changed"`
	Removed []index.Reference `json:"removed"`
}

type summaryDetails struct {
	Old string `json:"old"`
	New string `json:"new"`
}

// diffCVEs compares the new build's CVEs with the previous snapshot's and
// returns one alert per CVE that is new or changed in a tracked field, in
// the order of cves, with ids from ids. at is the build time as served.
// ids must already hold every id of both builds' records (assign).
// aliases map the names of affected entries onto NVD's names for the
// handlers of CVEs without CPEs (nil: DefaultAliases); prev must carry
// its affected entries (previousAffected).
func diffCVEs(prev, cves []index.CVE, ids *idTables, at string, aliases *Aliases) ([]index.Alert, error) {
	return diffCVEsEPSS(prev, cves, ids, at, aliases, nil)
}

// diffCVEsEPSS is diffCVEs with the EPSS scores that moved enough for an
// alert (see epssChanges; nil: none): a CVE of cves among them gets an
// "EPSS changed" event, after its other events.
func diffCVEsEPSS(prev, cves []index.CVE, ids *idTables, at string, aliases *Aliases, epss map[string]epssChange) ([]index.Alert, error) {
	if aliases == nil {
		var err error
		if aliases, err = DefaultAliases(); err != nil {
			return nil, err
		}
	}
	old := make(map[string]*index.CVE, len(prev))
	for i := range prev {
		old[prev[i].Name] = &prev[i]
	}
	var alerts []index.Alert
	for i := range cves {
		c := &cves[i]
		events := diffCVE(old[c.Name], c, ids, at)
		if ch, ok := epss[c.Name]; ok {
			events = append(events, epssEvent(ch, at))
		}
		if len(events) == 0 {
			continue
		}
		alerts = append(alerts, index.Alert{
			ID:        ids.alertID(),
			CVE:       c.Name,
			CreatedAt: at,
			Handlers:  handlersOf(old[c.Name], c, aliases),
			Events:    events,
		})
	}
	return alerts, nil
}

// diffCVE returns the events of one CVE: from nothing when o is nil (a new
// CVE), else one per kind of change, in the event-type order.
func diffCVE(o, n *index.CVE, ids *idTables, at string) []index.Event {
	if o != nil && sameTracked(o, n) {
		return nil
	}
	var events []index.Event
	add := func(typ string, details any) {
		b, err := json.MarshalWithOption(details, json.DisableHTMLEscape())
		if err != nil {
			panic(err) // plain structs of strings and numbers
		}
		events = append(events, index.Event{Type: typ, CreatedAt: at, Details: b})
	}
	if o == nil {
		add(index.EventNewCVE, struct{}{})
		o = &index.CVE{Name: n.Name, Summary: n.Summary}
	} else if o.Summary != n.Summary {
		add(index.EventSummaryChanged, summaryDetails{Old: o.Summary, New: n.Summary})
	}
	if d := diffCPEs(o.CPEs, n.CPEs); len(d.Added)+len(d.Removed) > 0 {
		add(index.EventCPEsChanged, d)
	}
	for _, d := range diffMetrics(o, n, ids) {
		add(index.EventCVSSChanged, d)
	}
	if d := diffCWEs(o.CWEs, n.CWEs); len(d.Added)+len(d.Removed) > 0 {
		add(index.EventCWEsChanged, d)
	}
	if d := diffRefs(n.Name, o.References, n.References, ids); len(d.Added)+len(d.Changed)+len(d.Removed) > 0 {
		add(index.EventReferencesChanged, d)
	}
	if d := diffAffected(o.Affected, n.Affected); len(d.Added)+len(d.Removed) > 0 {
		add(index.EventAffectedChanged, d)
	}
	return events
}

// sameTracked reports whether two versions of a CVE agree, element by
// element, in every tracked field: the common case, which must cost no
// allocation. A false answer only means the full comparison runs.
func sameTracked(o, n *index.CVE) bool {
	if o.Summary != n.Summary || len(o.CPEs) != len(n.CPEs) || len(o.Metrics) != len(n.Metrics) ||
		len(o.CWEs) != len(n.CWEs) || len(o.References) != len(n.References) || len(o.Affected) != len(n.Affected) {
		return false
	}
	for i := range o.CPEs {
		if o.CPEs[i].URI != n.CPEs[i].URI {
			return false
		}
	}
	for i := range o.Metrics {
		a, b := &o.Metrics[i], &n.Metrics[i]
		if a.Version != b.Version || a.Source != b.Source || tenths(a.Score) != tenths(b.Score) {
			return false
		}
	}
	for i := range o.CWEs {
		if o.CWEs[i] != n.CWEs[i] {
			return false
		}
	}
	for i := range o.References {
		if o.References[i] != n.References[i] {
			return false
		}
	}
	return sameAffected(o.Affected, n.Affected)
}

// diffCPEs compares the sets of CPE URIs: added in the new record's order,
// removed in the old record's order, each URI once.
func diffCPEs(o, n []index.CPE) cpesDetails {
	d := cpesDetails{Added: []cpeChange{}, Removed: []cpeChange{}}
	in := func(list []index.CPE) map[string]bool {
		m := make(map[string]bool, len(list))
		for _, c := range list {
			m[c.URI] = true
		}
		return m
	}
	oldSet, newSet := in(o), in(n)
	collect := func(list []index.CPE, other map[string]bool) []cpeChange {
		out := []cpeChange{}
		seen := map[string]bool{}
		for _, c := range list {
			if other[c.URI] || seen[c.URI] {
				continue
			}
			seen[c.URI] = true
			out = append(out, cpeChange{CPEID: c.ID, Product: c.Product, URI: c.URI, Vendor: c.Vendor, Version: c.Version})
		}
		return out
	}
	d.Added = collect(n, oldSet)
	d.Removed = collect(o, newSet)
	return d
}

// diffMetrics compares each CVSS metric, one per (version, source), by base
// score, and returns one change per metric that changed, ordered by id.
func diffMetrics(o, n *index.CVE, ids *idTables) []cvssDetails {
	type pair struct {
		id       int64
		old, new *index.Metric
	}
	byKey := map[cvssKey]*pair{}
	var order []cvssKey
	note := func(c *index.CVE, isNew bool) {
		for k := range c.Metrics {
			m := &c.Metrics[k]
			key := cvssKey{n.Name, m.Version, m.Source}
			p := byKey[key]
			if p == nil {
				p = &pair{id: ids.cvss[key]}
				byKey[key] = p
				order = append(order, key)
			}
			// The first metric of a (version, source) stands for it.
			if isNew && p.new == nil {
				p.new = m
			} else if !isNew && p.old == nil {
				p.old = m
			}
		}
	}
	note(o, false)
	note(n, true)
	var out []cvssDetails
	for _, key := range order {
		p := byKey[key]
		switch {
		case p.old == nil:
			out = append(out, cvssDetails{Action: "added", ID: p.id, NewScore: score(p.new.Score), OldScore: ""})
		case p.new == nil:
			out = append(out, cvssDetails{Action: "removed", ID: p.id, NewScore: "", OldScore: score(p.old.Score)})
		case tenths(p.old.Score) != tenths(p.new.Score):
			out = append(out, cvssDetails{Action: "changed", ID: p.id, NewScore: score(p.new.Score), OldScore: score(p.old.Score)})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// tenths is a score in tenths of a point, as compared and shown.
func tenths(s float64) int64 { return int64(math.Round(s * 10)) }

// score writes a base score with one digit after the point ("5.0").
func score(s float64) string { return strconv.FormatFloat(s, 'f', 1, 64) }

// diffCWEs compares the sets of CWE names; both lists come ascending by
// number, and so do the results.
func diffCWEs(o, n []string) cwesDetails {
	d := cwesDetails{Added: []string{}, Removed: []string{}}
	has := func(list []string, s string) bool {
		for _, x := range list {
			if x == s {
				return true
			}
		}
		return false
	}
	for _, s := range n {
		if !has(o, s) {
			d.Added = append(d.Added, s)
		}
	}
	for _, s := range o {
		if !has(n, s) {
			d.Removed = append(d.Removed, s)
		}
	}
	return d
}

// diffRefs matches references by link: the n-th reference with a link in
// the old record pairs with the n-th with that link in the new one (NVD
// repeats a link under a second source; each entry is a reference of its
// own). New ones without a partner are added (new order), old ones without
// one removed (old order); for each pair, each of type, source and
// description that differs is one change, in the new record's order.
func diffRefs(cve string, o, n []index.Reference, ids *idTables) refsDetails {
	d := refsDetails{Added: []index.Reference{}, Changed: []refChange{}, Removed: []index.Reference{}}
	oldKeys, newKeys := refKeys(cve, o), refKeys(cve, n)
	oldBy := make(map[refKey]*index.Reference, len(o))
	for i, k := range oldKeys {
		oldBy[k] = &o[i]
	}
	newBy := make(map[refKey]bool, len(n))
	for i, k := range newKeys {
		newBy[k] = true
		r := &n[i]
		was, ok := oldBy[k]
		if !ok {
			d.Added = append(d.Added, *r)
			continue
		}
		for _, f := range [...]struct{ key, old, new string }{
			{"type", was.Type, r.Type},
			{"source", was.Source, r.Source},
			{"description", was.Description, r.Description},
		} {
			if f.old != f.new {
				d.Changed = append(d.Changed, refChange{ID: ids.ref[k], Key: f.key, Link: r.Link, NewValue: f.new, OldValue: f.old})
			}
		}
	}
	for i, k := range oldKeys {
		if !newBy[k] {
			d.Removed = append(d.Removed, o[i])
		}
	}
	return d
}

// handlersOf lists the distinct vendor and product names of a CVE's keys
// before (o, may be nil) and after the change, each in byte order: the
// vendors and products of its CPEs, or, for a version of the CVE without
// CPEs, those of its affected entries (EntryKeys, through aliases), as
// the CVE is listed under them. So the teams a CVE reached from its
// entries hear of NVD's analysis taking over, and those of the CPEs it
// lost hear of that.
func handlersOf(o, n *index.CVE, aliases *Aliases) index.Handlers {
	vendors, products := map[string]bool{}, map[string]bool{}
	for _, c := range []*index.CVE{o, n} {
		if c == nil {
			continue
		}
		for _, p := range c.CPEs {
			if index.IsName(p.Vendor) {
				vendors[p.Vendor] = true
			}
			if index.IsName(p.Product) {
				products[p.Product] = true
			}
		}
		if len(c.CPEs) > 0 {
			continue // NVD's analysis supersedes the entries
		}
		if c.EntryKeys != nil {
			// Those of its entries (setEntryKeys), which may come from
			// packageNames that the previous details do not keep.
			for _, k := range c.EntryKeys {
				vendors[k.Vendor] = true
				products[k.Product] = true
			}
			continue
		}
		for i := range c.Affected {
			for _, k := range EntryKeys(&c.Affected[i], aliases) {
				if !storableName(k.Vendor) || !storableName(k.Product) {
					continue // as setEntryKeys: never listed, so no handler
				}
				vendors[k.Vendor] = true
				products[k.Product] = true
			}
		}
	}
	// Never nil: an alert without names stores [] like the API shows it.
	sorted := func(m map[string]bool) []string {
		names := slices.AppendSeq([]string{}, maps.Keys(m))
		slices.Sort(names)
		return names
	}
	return index.Handlers{Products: sorted(products), Vendors: sorted(vendors)}
}

// epssDetails are the details of an "EPSS changed" event: the CVE's EPSS
// score and percentile in the previous build and in this one, JSON
// numbers as FIRST writes them (0.16317), null where the CVE had no row.
type epssDetails struct {
	OldScore      json.RawMessage `json:"old_score"`
	NewScore      json.RawMessage `json:"new_score"`
	OldPercentile json.RawMessage `json:"old_percentile"`
	NewPercentile json.RawMessage `json:"new_percentile"`
}

// epssChange is a CVE's EPSS scores in the previous build ([0]) and in
// this one ([1]), and whether it had a row in each.
type epssChange struct {
	s   [2]EPSSScore
	has [2]bool
}

// epssEvent is the "EPSS changed" event of a CVE whose scores changed
// as ch says.
func epssEvent(ch epssChange, at string) index.Event {
	num := func(i int, v EPSSValue) json.RawMessage {
		if !ch.has[i] {
			return json.RawMessage("null")
		}
		return v.AppendDecimal(nil)
	}
	d := epssDetails{
		OldScore: num(0, ch.s[0].Score), NewScore: num(1, ch.s[1].Score),
		OldPercentile: num(0, ch.s[0].Percentile), NewPercentile: num(1, ch.s[1].Percentile),
	}
	b, err := json.MarshalWithOption(d, json.DisableHTMLEscape())
	if err != nil {
		panic(err) // numbers and null
	}
	return index.Event{Type: index.EventEPSSChanged, CreatedAt: at, Details: b}
}

// epssChanges are the CVEs whose EPSS score moved by 0.1 or more (see
// EPSSChanged) between the previous build's scores and this one's, with
// both: nil, with a reason for the log, when there is nothing to compare
// (no scores in either) or when FIRST's model changed in between, which
// moves most scores at once: that day's alerts would bury the real ones.
func epssChanges(prev, cur *EPSS) (map[string]epssChange, string) {
	switch {
	case prev == nil || cur == nil:
		return nil, ""
	case prev.Model != cur.Model:
		return nil, fmt.Sprintf("EPSS model changed from %s to %s: no EPSS alerts in this build", prev.Model, cur.Model)
	}
	out := map[string]epssChange{}
	for name, s := range EPSSChanges(prev, cur) {
		_, had := prev.Lookup(name)
		_, has := cur.Lookup(name)
		out[name] = epssChange{s, [2]bool{had, has}}
	}
	return out, ""
}
