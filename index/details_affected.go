package index

import (
	"fmt"

	"github.com/goccy/go-json"
)

// Affected returns the i-th CVE's affected entries as d stores them (the
// JSON details serves), decoded: nil for none. PackageName is not stored,
// so it is nil in every entry. The error is for a text that is not the
// JSON of affected entries (Check refuses such a Details).
func (d *Details) Affected(i int) ([]AffectedEntry, error) {
	t := d.appendText(nil, d.cves[i].affected)
	if len(t) == 0 {
		return nil, nil
	}
	var es []AffectedEntry
	if err := json.Unmarshal(t, &es); err != nil {
		return nil, fmt.Errorf("%w %d: affected: %v", ErrDetails, i+1, err)
	}
	return es, nil
}
