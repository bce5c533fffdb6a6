package index

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
)

// A build with -previous whose CVE JSON 5 record files did not change
// carries over what the previous snapshot's details keep of each record
// (its affected entries, SSVC decision and entry keys) as the texts they
// are, rather than reading every record again: HeldParts gives them, and
// HeldTextFrom makes them a HeldText again, the same bytes as
// MakeHeldText made of the record.

// HeldParts returns the texts d keeps of the i-th CVE's record: the JSON
// of its affected entries and how many there are, the JSON of its SSVC
// decision and its entry keys' stored form (see appendEntryKeys), each
// empty for none. The error is for an affected text that is not a JSON
// array (Check refuses such details).
func (d *Details) HeldParts(i int) (affected, ssvc, keys []byte, entries int, err error) {
	r := d.cves[i]
	affected, ssvc, keys = d.appendText(nil, r.affected), d.appendText(nil, r.ssvc), d.appendText(nil, r.keys)
	if len(affected) > 0 {
		var ok bool
		if entries, ok = jsonArrayLen(affected); !ok {
			return nil, nil, nil, 0, fmt.Errorf("%w %d: affected is not a JSON array", ErrDetails, i+1)
		}
	}
	return affected, ssvc, keys, entries, nil
}

// HeldTextFrom returns the HeldText of texts as HeldParts gives them.
func HeldTextFrom(affected, ssvc, keys []byte, entries int) HeldText {
	text := slices.Concat(affected, ssvc, keys)
	return HeldText{text: text, ssvc: uint32(len(affected)), keys: uint32(len(affected) + len(ssvc)), entries: uint32(entries)}
}

// EntryKeysText is the stored form of keys (see appendEntryKeys).
func EntryKeysText(keys []EntryKey) []byte { return appendEntryKeys(nil, keys) }

// ParseEntryKeys returns the keys of their stored form (see
// appendEntryKeys): nil for "", an error for a text validEntryKeys
// refuses.
func ParseEntryKeys(text []byte) ([]EntryKey, error) {
	s := string(text)
	if !validEntryKeys(s, -1) {
		return nil, fmt.Errorf("%w: bad entry keys %q", ErrDetails, s)
	}
	var keys []EntryKey
	it := entryKeysIter{s: s}
	for it.next() {
		k := EntryKey{Vendor: it.vendor, Product: it.product}
		it.eachEntry(func(e int) bool {
			k.Entries = append(k.Entries, e)
			return true
		})
		keys = append(keys, k)
	}
	return keys, nil
}

// EntryKeys returns the entry keys h holds (nil for none).
func (h *HeldDetails) EntryKeys() ([]EntryKey, error) {
	_, _, keys, _, err := h.parts()
	if err != nil {
		return nil, err
	}
	return ParseEntryKeys(keys)
}

// jsonArrayLen is the number of elements of a JSON array as valid JSON
// writes it (white space allowed); false when text is not an array.
func jsonArrayLen(text []byte) (int, bool) {
	t := bytes.TrimSpace(text)
	if len(t) < 2 || t[0] != '[' || t[len(t)-1] != ']' {
		return 0, false
	}
	inner := t[1 : len(t)-1]
	if strings.TrimSpace(string(inner)) == "" {
		return 0, true
	}
	n, depth, inStr, esc := 1, 0, false, false
	for _, c := range inner {
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '[' || c == '{':
			depth++
		case c == ']' || c == '}':
			depth--
			if depth < 0 {
				return 0, false
			}
		case c == ',' && depth == 0:
			n++
		}
	}
	return n, depth == 0 && !inStr
}
