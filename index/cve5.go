package index

import (
	"slices"
	"strconv"
	"strings"
)

// The affected entries of CVE JSON 5 records (the CVE Program's format):
// what a CVE's CNA and ADPs say is affected, for CVEs that NVD has not
// analysed yet. See the API decisions, "CVE records of the CVE Program,
// JSON 5"; the status algorithm is in cve5status.go.

// AffectedEntry is one item of an "affected" list of a CVE JSON 5 record,
// of the CNA container or of an ADP container. Its JSON form is the
// object of /cve/{name}/details' "affected" list: a field the record
// lacks is null. PackageName is not served; it only gives the entry a
// product key when the record has no product. An AffectedEntry is a
// plain value; it is safe for concurrent reads.
type AffectedEntry struct {
	// Source is "cna", or "adp:" and the ADP's providerMetadata.shortName
	// ("adp:CISA-ADP").
	Source        string            `json:"source"`
	Vendor        *string           `json:"vendor"`
	Product       *string           `json:"product"`
	PackageName   *string           `json:"-"`
	CPEs          []string          `json:"cpes"`
	DefaultStatus *string           `json:"default_status"`
	Versions      []AffectedVersion `json:"versions"`
	Platforms     []string          `json:"platforms"`
}

// AffectedVersion is one version object of an affected entry, with the
// record's field names; the optional ones are left out when the record
// has none.
type AffectedVersion struct {
	Version         string         `json:"version"`
	Status          string         `json:"status"`
	VersionType     string         `json:"versionType,omitempty"`
	LessThan        *string        `json:"lessThan,omitempty"`
	LessThanOrEqual *string        `json:"lessThanOrEqual,omitempty"`
	Changes         []StatusChange `json:"changes,omitempty"`
}

// StatusChange is one element of a version object's "changes": from
// version At on (within the object's range), the status is Status.
type StatusChange struct {
	At     string `json:"at"`
	Status string `json:"status"`
}

// SSVC is an ADP's SSVC decision (a metrics[].other of type "ssvc"), as
// /cve/{name}/details serves it; an option the decision lacks is null.
// Timestamp is the decision's own, as written.
type SSVC struct {
	Exploitation    *string `json:"exploitation"`
	Automatable     *string `json:"automatable"`
	TechnicalImpact *string `json:"technical_impact"`
	Timestamp       *string `json:"timestamp"`
}

// The statuses of CVE JSON 5.
const (
	StatusAffected   = "affected"
	StatusUnaffected = "unaffected"
	StatusUnknown    = "unknown"
)

// EntryKey is a vendor and product that the affected entries of a CVE's
// JSON 5 record give it, when NVD has given the CVE no CPE (see the
// loader's EntryKeys: the entry's cpes, else its names through the alias
// file), with the entries that give it, by their index in the CVE's
// Affected, ascending. The CVE is listed under that vendor and product,
// and ?version= asks those entries (see ProductCVEsAt).
type EntryKey struct {
	Vendor, Product string
	Entries         []int
}

// appendEntryKeys appends the stored form of a CVE's entry keys, a text
// of the details' table: one line a key, "vendor TAB product TAB i,j"
// (the entries' indexes), lines joined by a newline.
func appendEntryKeys(dst []byte, keys []EntryKey) []byte {
	for i, k := range keys {
		if i > 0 {
			dst = append(dst, '\n')
		}
		dst = append(dst, k.Vendor...)
		dst = append(dst, '\t')
		dst = append(dst, k.Product...)
		dst = append(dst, '\t')
		for j, e := range k.Entries {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = strconv.AppendInt(dst, int64(e), 10)
		}
	}
	return dst
}

// entryKeysIter walks the stored form of a CVE's entry keys (see
// appendEntryKeys) without allocating: vendor, product and entries are
// views into the text.
type entryKeysIter struct {
	s                        string
	vendor, product, entries string
}

// next moves to the next key; false at the end or at a malformed line
// (validEntryKeys refuses a text with one at load).
func (it *entryKeysIter) next() bool {
	if it.s == "" {
		return false
	}
	line, rest, _ := strings.Cut(it.s, "\n")
	it.s = rest
	v, tail, ok1 := strings.Cut(line, "\t")
	p, entries, ok2 := strings.Cut(tail, "\t")
	if !ok1 || !ok2 {
		it.s = ""
		return false
	}
	it.vendor, it.product, it.entries = v, p, entries
	return true
}

// eachEntry calls f with each entry index of the current key, as long
// as it returns true.
func (it *entryKeysIter) eachEntry(f func(int) bool) {
	for s := it.entries; s != ""; {
		var d string
		d, s, _ = strings.Cut(s, ",")
		n, ok := parseDecimal(d)
		if !ok || !f(n) {
			return
		}
	}
}

// validEntryKeys reports whether s is "" or the stored form of entry
// keys: each line a vendor and a product that name something (IsName,
// without control characters) and entry indexes, ascending, each below
// maxEntry (when maxEntry >= 0), and no key twice.
func validEntryKeys(s string, maxEntry int) bool {
	if s == "" {
		return true
	}
	lines := strings.Count(s, "\n") + 1
	it := entryKeysIter{s: s}
	n := 0
	for it.next() {
		n++
		if !validKeyName(it.vendor) || !validKeyName(it.product) || it.entries == "" {
			return false
		}
		last, ok := -1, true
		for d := range strings.SplitSeq(it.entries, ",") {
			e, isNum := parseDecimal(d)
			if !isNum || e <= last || maxEntry >= 0 && e >= maxEntry || len(d) > 1 && d[0] == '0' {
				ok = false
				break
			}
			last = e
		}
		if !ok {
			return false
		}
	}
	return n == lines && (lines == 1 || distinctKeys(s))
}

// distinctKeys reports whether no vendor and product pair is on two lines.
func distinctKeys(s string) bool {
	var seen []string
	it := entryKeysIter{s: s}
	for it.next() {
		k := it.vendor + "\t" + it.product
		if slices.Contains(seen, k) {
			return false
		}
		seen = append(seen, k)
	}
	return true
}

// validKeyName reports whether a stored vendor or product name names
// something: IsName, and no control character (which would break the
// stored form's lines).
func validKeyName(s string) bool {
	if !IsName(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] == 0x7f {
			return false
		}
	}
	return true
}
