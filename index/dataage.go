package index

import "time"

// InputDates are how current each input source of a snapshot is, in the
// API's form ("YYYY-MM-DD HH:MM:SSZ"): NVD the newest lastModified of its
// feeds' records, CVE5 the newest dateUpdated of the CVE JSON 5 records,
// EPSS the EPSS file's score_date, CWE the catalog's Date (at 00:00:00Z).
// "" when the snapshot had no such input, or does not say (format 5 and
// older).
type InputDates struct {
	NVD, CVE5, EPSS, CWE string
}

// Newest is the newest of the dates, "" when there is none: what the
// data's age is measured from (vulnd serve -max-data-age).
func (d InputDates) Newest() string {
	return max(d.NVD, d.CVE5, d.EPSS, d.CWE) // the form sorts as it compares
}

// DataTime is when the snapshot's data is current to: the newest of its
// input dates; for a snapshot that does not give them (format 5 and
// older), the newest updated_at of any CVE, else the build time. ok is
// false when none is known.
func (ix *Index) DataTime() (t time.Time, ok bool) {
	s := ix.meta.InputDates.Newest()
	if s == "" && len(ix.updated) > 0 {
		s = formatTimeKey(ix.updated[0])
	}
	if s == "" {
		return ix.meta.BuiltTime()
	}
	t, err := time.Parse(TimeLayout, s)
	return t, err == nil
}
