package loader

import (
	"bytes"
	"fmt"

	"github.com/vulnd/vulnd/index"
)

// MaxShrinkPercent is how much of the previous snapshot's CVE count a
// refresh may lose, in percent, before CheckRefresh refuses it. NVD
// rejects CVEs now and then but never deletes them: the feeds keep a
// rejected CVE as a record of status "Rejected", so a real refresh loses
// none, and a feed that is empty, cut short or missing a year loses many.
const MaxShrinkPercent = 5

// Stamp is a CVE's name and its NVD lastModified, as served (updated_at,
// index.TimeLayout, which sorts as it compares). Record tells that the
// snapshot serves the CVE from its CVE JSON 5 record alone (NVD has not
// published it: its details status is ""), so UpdatedAt is the record's
// dateUpdated; ReadStamps sets it, StampsOf does not (a build compares
// the records' own dateUpdated instead: see refreshStamps).
type Stamp struct {
	Name      string `json:"name"`
	UpdatedAt string `json:"updated_at"`
	Record    bool   `json:"-"`
}

// StampsOf returns the stamps of cves, in their order.
func StampsOf(cves []index.CVE) []Stamp {
	out := make([]Stamp, len(cves))
	for i := range cves {
		out[i] = Stamp{Name: cves[i].Name, UpdatedAt: cves[i].UpdatedAt}
	}
	return out
}

// StampFiles are the files of a snapshot that ReadStamps reads.
func StampFiles() []string { return []string{ManifestName, fileCVEs, fileCVEsLayout, fileDetails} }

// ReadStamps reads the CVEs' stamps of the snapshot in dir, in the
// snapshot's order, checking the manifest and every chunk of the files
// it decodes; it reads no other data file, so dir needs only the manifest,
// cves.jsonl.zst and details.txt.zst (which a snapshot of format 3 has
// not: its stamps have no Record).
func ReadStamps(dir string) ([]Stamp, error) {
	o, err := openSnapshot(dir, true)
	if err != nil {
		return nil, err
	}
	fi := o.m.Files[keyCVEs]
	lay, err := readCVEsLayout(dir, o.m, o.dec)
	if err != nil {
		return nil, fmt.Errorf("loader: snapshot %s: %w", dir, err)
	}
	out := make([]Stamp, lay.cves)
	if err := eachRecord(dir, fi, o.dec, func(n int, line []byte) error {
		if p := lay.owners[n]; p >= 0 {
			return parseStamp(line, &out[p])
		}
		return nil
	}); err != nil {
		return nil, o.wrap(keyCVEs, err)
	}
	di, ok := o.m.Files[keyDetails]
	if !ok {
		return out, nil
	}
	if di.Records != len(out) {
		return nil, o.wrap(keyDetails, fmt.Errorf("%d records for %d CVEs", di.Records, len(out)))
	}
	// A details line starts with its status as an index into the text
	// table, whose text 0 is "": the CVE NVD has not published.
	if err := eachRecord(dir, di, o.dec, func(n int, line []byte) error {
		out[n].Record = bytes.HasPrefix(line, []byte("0 "))
		return nil
	}); err != nil {
		return nil, o.wrap(keyDetails, err)
	}
	return out, nil
}

// RefreshError is CheckRefresh's refusal: the new CVEs are not what a
// refresh of the previous ones can be.
type RefreshError struct {
	// Prev names the previous snapshot in the message ("-previous
	// /data/snap").
	Prev string
	// Before and After are the CVE counts.
	Before, After int
	// When the count is fine, First is the first CVE (by name) whose
	// lastModified went back, from Was to Now; Older counts them all.
	First, Was, Now string
	Older           int
}

func (e *RefreshError) Error() string {
	if e.Older == 0 {
		return fmt.Sprintf("loader: refusing a refresh that loses %.1f %% of the CVEs, more than %d %%: %d CVEs, %s has %d (an empty or partial feed?); -force lets it through",
			float64(e.Before-e.After)*100/float64(e.Before), MaxShrinkPercent, e.After, e.Prev, e.Before)
	}
	more := ""
	if e.Older > 1 {
		more = fmt.Sprintf(", and %d more CVEs went back too", e.Older-1)
	}
	return fmt.Sprintf("loader: refusing a refresh that goes back in time: %s was last modified %s in %s, %s now%s (an older feed? NVD never goes back); -force lets it through",
		e.First, e.Was, e.Prev, e.Now, more)
}

// CheckRefresh tells whether next may follow prev, the CVEs of the
// snapshot named prevName: it refuses, with a *RefreshError, a next that
// has more than MaxShrinkPercent fewer CVEs than prev, or in which any
// CVE's lastModified is older than in prev (a rollback to an older feed,
// which a diff would report as ordinary changes). NVD never goes back in
// time, so either is a broken or stale download, not news. A CVE that
// prev serves from its record (Record) and next from NVD is NVD taking
// over, whatever the dates: the record's dateUpdated is often later than
// NVD's lastModified (see refreshStamps).
func CheckRefresh(prev, next []Stamp, prevName string) error {
	if len(prev) > 0 && (len(prev)-len(next))*100 > MaxShrinkPercent*len(prev) {
		return &RefreshError{Prev: prevName, Before: len(prev), After: len(next)}
	}
	was := make(map[string]Stamp, len(prev))
	for _, s := range prev {
		was[s.Name] = s
	}
	e := &RefreshError{Prev: prevName, Before: len(prev), After: len(next)}
	for _, s := range next {
		p, ok := was[s.Name]
		w := p.UpdatedAt
		if !ok || w <= s.UpdatedAt || p.Record && !s.Record {
			continue
		}
		if e.Older == 0 || s.Name < e.First {
			e.First, e.Was, e.Now = s.Name, w, s.UpdatedAt
		}
		e.Older++
	}
	if e.Older > 0 {
		return e
	}
	return nil
}
