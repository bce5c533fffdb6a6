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
// are, rather than reading every record again: HeldFrom names them by
// their ids in the previous table (see below); HeldParts gives them, and
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

// A build with -previous carries most CVEs' texts over as they are: the
// CVE's HeldDetails then names its texts by their ids in the previous
// snapshot's table (HeldFrom) rather than holding them, and a
// DetailsBuilder that carries that table's texts (CarryFrom) interns
// them by id, without reading them: the new table lists, for each such
// text, the previous table's text it is (Details.PrevText), which a
// build writes as it was stored. The table is the same, text for text
// and in the same order, as a builder given the texts themselves makes.

// heldFrom is the texts the i-th CVE of a previous Details holds, by id
// into its table; with ownKeys, the entry keys are keys instead (their
// stored form, nil for none; entries is then the number of affected
// entries, which keys may name).
type heldFrom struct {
	d       *Details
	i       int
	ownKeys bool
	keys    []byte
	entries int
}

// HeldFrom returns the HeldDetails of the texts d holds of its i-th CVE
// (see HeldParts), named by their ids in d's table; with ownKeys, the
// entry keys are keys instead (their stored form, nil for none, of
// entries affected entries). Nil when that is no text at all.
func HeldFrom(d *Details, i int, ownKeys bool, keys []byte, entries int) *HeldDetails {
	r := d.cves[i]
	if r.affected == 0 && r.ssvc == 0 && (ownKeys && len(keys) == 0 || !ownKeys && r.keys == 0) {
		return nil
	}
	return &HeldDetails{from: &heldFrom{d: d, i: i, ownKeys: ownKeys, keys: keys, entries: entries}}
}

// HeldKinds reports which texts d holds of its i-th CVE: affected
// entries, an SSVC decision, entry keys.
func (d *Details) HeldKinds(i int) (affected, ssvc, keys bool) {
	r := d.cves[i]
	return r.affected != 0, r.ssvc != 0, r.keys != 0
}

// parts is HeldDetails.parts of texts held by id.
func (f *heldFrom) parts() (affected, ssvc, keys []byte, entries int, err error) {
	if affected, ssvc, keys, entries, err = f.d.HeldParts(f.i); err != nil {
		return nil, nil, nil, 0, err
	}
	if f.ownKeys {
		keys = f.keys
	}
	return affected, ssvc, keys, entries, nil
}

// carrying is what a DetailsBuilder carrying a previous table's texts
// (see CarryFrom) keeps: which text of its own each of them is, and
// which of the previous table each of its own texts is.
type carrying struct {
	from *Details
	// remap[j] is 1 + the builder's id of the previous table's text j;
	// 0 until it has one.
	remap []uint32
	// same reports which text of the previous table is text, if any.
	same func(text string) (uint32, bool)
}

// CarryFrom makes b take the texts of CVEs whose HeldDetails name texts
// of prev (HeldFrom) by their ids: texts is the number of texts in
// prev's table, and same reports which of them is a given text, if any
// (the builder asks it once for each text it is given by value, so that
// a text given both ways is listed once). To be called before the first
// Add.
func (b *DetailsBuilder) CarryFrom(prev *Details, texts int, same func(text string) (uint32, bool)) {
	c := &carrying{from: prev, remap: make([]uint32, texts), same: same}
	if texts > 0 {
		c.remap[0] = 1 // "" is text 0 of every table
	}
	b.carry = c
	b.far = nil // see KeepHeldFar
	b.d.prevIDs = make([]uint32, len(b.d.strs))
}

// internPrev is intern of the previous table's text j.
func (b *DetailsBuilder) internPrev(j uint32) (uint32, error) {
	c := b.carry
	if int(j) >= len(c.remap) {
		return 0, fmt.Errorf("text %d of a table of %d", j, len(c.remap))
	}
	if r := c.remap[j]; r != 0 {
		return r - 1, nil
	}
	id := uint32(len(b.d.strs))
	b.d.strs = append(b.d.strs, "") // written as the previous table's
	b.d.prevIDs = append(b.d.prevIDs, j+1)
	c.remap[j] = id + 1
	return id, nil
}

// addHeldFrom is Add's part for texts held by id: those of the previous
// table b carries, interned by id, or, of another Details, by value.
func (b *DetailsBuilder) addHeldFrom(c *CVE, f *heldFrom, ref *detailRef) error {
	if b.carry == nil || b.carry.from != f.d {
		return b.addHeldTexts(c, c.Held, ref)
	}
	r := f.d.cves[f.i]
	var err error
	if r.affected != 0 {
		if ref.affected, err = b.internPrev(r.affected); err != nil {
			return fmt.Errorf("%s: affected: %w", c.Name, err)
		}
	}
	if r.ssvc != 0 {
		if ref.ssvc, err = b.internPrev(r.ssvc); err != nil {
			return fmt.Errorf("%s: ssvc: %w", c.Name, err)
		}
	}
	switch {
	case f.ownKeys && len(f.keys) > 0:
		if err := checkEntryKeys(c, string(f.keys), f.entries); err != nil {
			return err
		}
		ref.keys = b.internBytes(f.keys)
	case !f.ownKeys && r.keys != 0:
		// Checked (validEntryKeys) when the previous table was read.
		if len(c.CPEs) > 0 {
			return fmt.Errorf("%s: vendors and products from affected entries, but NVD's CPEs too", c.Name)
		}
		if ref.keys, err = b.internPrev(r.keys); err != nil {
			return fmt.Errorf("%s: keys: %w", c.Name, err)
		}
	}
	return nil
}

// PrevText reports which text of the previous table (see
// DetailsBuilder.CarryFrom) text id of d's table is, when it was taken
// by id: d's Strings then holds "" for it, and its stored form is the
// previous table's.
func (d *Details) PrevText(id int) (uint32, bool) {
	if id >= len(d.prevIDs) || d.prevIDs[id] == 0 {
		return 0, false
	}
	return d.prevIDs[id] - 1, true
}
