package loader

import (
	"fmt"
	"slices"

	"github.com/goccy/go-json"

	"github.com/vulnd/vulnd/index"
)

// affectedDetails are the details of an "Affected changed" event: the
// affected entries of the CVE's JSON 5 record that were added and removed,
// each in the JSON form /cve/{name}/details serves.
type affectedDetails struct {
	Added   []index.AffectedEntry `json:"added"`
	Removed []index.AffectedEntry `json:"removed"`
}

// diffAffected compares two lists of affected entries, each entry as a
// whole: two entries match when their JSON forms (what details serves:
// source, vendor, product, cpes, default_status, versions, platforms) are
// the same, so an entry whose versions changed is one removed and one
// added. The n-th copy of an entry in the old list pairs with the n-th
// copy in the new one. New entries without a partner are added, in the
// new record's order; old ones without one are removed, in the old
// record's order. A list that only changed order makes no change.
func diffAffected(o, n []index.AffectedEntry) affectedDetails {
	d := affectedDetails{Added: []index.AffectedEntry{}, Removed: []index.AffectedEntry{}}
	if sameAffected(o, n) {
		return d
	}
	oldKeys, newKeys := entryForms(o), entryForms(n)
	left := make(map[string]int, len(o)) // old copies not yet paired
	for _, k := range oldKeys {
		left[k]++
	}
	paired := make(map[string]int, len(n)) // new copies paired, per form
	for i, k := range newKeys {
		if left[k] > 0 {
			left[k]--
			paired[k]++
			continue
		}
		d.Added = append(d.Added, n[i])
	}
	// The first copies of a form in the old list are the paired ones.
	for i, k := range oldKeys {
		if paired[k] > 0 {
			paired[k]--
			continue
		}
		d.Removed = append(d.Removed, o[i])
	}
	return d
}

// entryForms returns the JSON form of each entry, as details serves it
// (PackageName is not part of it).
func entryForms(es []index.AffectedEntry) []string {
	out := make([]string, len(es))
	for i := range es {
		b, err := json.MarshalWithOption(&es[i], json.DisableHTMLEscape())
		if err != nil {
			panic(err) // plain structs of strings
		}
		out[i] = string(b)
	}
	return out
}

// sameAffected reports whether two lists of affected entries are the same
// entries in the same order, without allocating: true only when their
// JSON forms are equal entry by entry.
func sameAffected(o, n []index.AffectedEntry) bool {
	if len(o) != len(n) {
		return false
	}
	for i := range o {
		if !sameEntry(&o[i], &n[i]) {
			return false
		}
	}
	return true
}

// sameEntry reports whether two entries have the same JSON form: null and
// [] differ, as do a missing optional version field and an empty one;
// "changes" is left out when empty, so nil and [] are the same there.
// PackageName is not part of the form.
func sameEntry(a, b *index.AffectedEntry) bool {
	if a.Source != b.Source || !sameText(a.Vendor, b.Vendor) || !sameText(a.Product, b.Product) ||
		!sameText(a.DefaultStatus, b.DefaultStatus) || !sameList(a.CPEs, b.CPEs) || !sameList(a.Platforms, b.Platforms) ||
		(a.Versions == nil) != (b.Versions == nil) || len(a.Versions) != len(b.Versions) {
		return false
	}
	for i := range a.Versions {
		x, y := &a.Versions[i], &b.Versions[i]
		if x.Version != y.Version || x.Status != y.Status || x.VersionType != y.VersionType ||
			!sameText(x.LessThan, y.LessThan) || !sameText(x.LessThanOrEqual, y.LessThanOrEqual) ||
			!slices.Equal(x.Changes, y.Changes) {
			return false
		}
	}
	return true
}

// sameText reports whether two optional texts are both absent or both
// present and equal.
func sameText(a, b *string) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// sameList reports whether two lists are both null or both present with
// the same items.
func sameList(a, b []string) bool {
	return (a == nil) == (b == nil) && slices.Equal(a, b)
}

// previousAffected puts on each CVE of the previous snapshot s its affected
// entries, which s keeps with the details (format 5 on; none before), so
// that diffCVEs compares them and finds the vendors and products a CVE
// without CPEs was listed under. Entries come back without PackageName,
// which snapshots do not store.
func previousAffected(s *Snapshot) error {
	if s.details == nil {
		return nil
	}
	if s.details.Len() != len(s.Data.CVEs) {
		return fmt.Errorf("loader: snapshot %s: details of %d CVEs for %d", s.Dir, s.details.Len(), len(s.Data.CVEs))
	}
	for i := range s.Data.CVEs {
		es, err := s.details.Affected(i)
		if err != nil {
			return fmt.Errorf("loader: snapshot %s: %s: %w", s.Dir, s.Data.CVEs[i].Name, err)
		}
		s.Data.CVEs[i].Affected = es
	}
	return nil
}

// baselineAffected makes the first build with CVE JSON 5 records a
// baseline, as the first build given -epss is for EPSS: when no CVE of
// the previous snapshot has affected entries (it was built without
// records, or is older than format 5), each of its CVEs takes the entries
// the new build has for it, so that entries never read before raise no
// "Affected changed" (a CVE new to the build still gets them as additions
// to its New CVE alert). It returns how many previous CVEs took entries.
func baselineAffected(prev, cves []index.CVE) int {
	for i := range prev {
		if len(prev[i].Affected) > 0 {
			return 0
		}
	}
	now := make(map[string]int, len(cves))
	for i := range cves {
		if len(cves[i].Affected) > 0 {
			now[cves[i].Name] = i
		}
	}
	n := 0
	for i := range prev {
		if j, ok := now[prev[i].Name]; ok {
			prev[i].Affected = cves[j].Affected
			n++
		}
	}
	return n
}

// changedCVEs are what a build whose unchanged CVEs were carried over as
// bytes (carried, by cves: see readPrevious) compares with the previous
// snapshot s: the previous versions of its CVEs that changed (a nil
// body) and of those whose EPSS score moved, decoded now with their
// affected entries, and those CVEs of cves, in their order (one whose
// score moved alone as the previous snapshot has it: its body is
// carried, the same). A carried CVE is the previous one, byte for byte:
// it raises no event but EPSS's.
func changedCVEs(s *Snapshot, cves []index.CVE, carried [][]byte, moved map[string]epssChange) (olds, news []index.CVE, err error) {
	if s.details != nil && s.details.Len() != len(s.Data.CVEs) {
		return nil, nil, fmt.Errorf("loader: snapshot %s: details of %d CVEs for %d", s.Dir, s.details.Len(), len(s.Data.CVEs))
	}
	at := make(map[string]int, len(s.Data.CVEs))
	for k := range s.Data.CVEs {
		at[s.Data.CVEs[k].Name] = k
	}
	for i := range cves {
		c := &cves[i]
		_, scored := moved[c.Name]
		isCarried := i < len(carried) && carried[i] != nil
		if isCarried && !scored {
			continue
		}
		k, ok := at[c.Name]
		if !ok {
			if isCarried {
				return nil, nil, fmt.Errorf("loader: snapshot %s: %s carried over, not in it", s.Dir, c.Name)
			}
			news = append(news, *c)
			continue
		}
		o, err := s.decodeCVE(k)
		if err != nil {
			return nil, nil, err
		}
		if s.details != nil {
			if o.Affected, err = s.details.Affected(k); err != nil {
				return nil, nil, fmt.Errorf("loader: snapshot %s: %s: %w", s.Dir, o.Name, err)
			}
		}
		olds = append(olds, o)
		n := *c
		if isCarried {
			n = o
			n.Affected = c.Affected
		}
		if c.Held != nil {
			// What its record gave, carried over from s (see
			// carryRecords): the entries as s has them, which the
			// record gives the same, and the entry keys held.
			n.Affected, n.Held = o.Affected, nil
			keys, err := c.Held.EntryKeys()
			if err != nil {
				return nil, nil, fmt.Errorf("loader: %s: %w", c.Name, err)
			}
			n.EntryKeys = keys
			if keys == nil {
				n.EntryKeys = []index.EntryKey{}
			}
		}
		news = append(news, n)
	}
	return olds, news, nil
}
