package index

import (
	"bytes"
	"fmt"
	"slices"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// A build holds the records of NVD's CVEs in the form the details keep
// them (see DetailsBuilder.Add) from the moment each is read, rather
// than the affected entries' objects until the details are built (those
// were the largest part of what a build with records held beside NVD's
// CVEs): HeldText makes the texts, on any goroutine, and a HeldStore
// holds them compressed in blocks of consecutive records (a tenth of
// their size: the entries of a CVE's neighbours repeat its vendor,
// products and versions), until the details read them back.

// HeldText is the texts the details keep of a CVE's affected entries,
// SSVC decision and entry keys, back to back: the JSON of the entries,
// then that of the SSVC decision, then the entry keys' stored form.
type HeldText struct {
	text []byte
	// ssvc and keys are where those texts start in text; entries is how
	// many affected entries the JSON holds.
	ssvc, keys, entries uint32
}

// MakeHeldText returns the texts that the details keep of entries, ssvc
// and keys, the same bytes as DetailsBuilder.Add makes of them as fields
// of a CVE.
func MakeHeldText(entries []AffectedEntry, ssvc *SSVC, keys []EntryKey) HeldText {
	var a, s []byte
	if len(entries) > 0 {
		a = encode(entries)
	}
	if ssvc != nil {
		s = encode(ssvc)
	}
	text := a
	if len(s) > 0 || len(keys) > 0 {
		text = appendEntryKeys(append(slices.Clip(a), s...), keys)
	}
	return HeldText{text: text, ssvc: uint32(len(a)), keys: uint32(len(a) + len(s)), entries: uint32(len(entries))}
}

// Empty reports whether t holds nothing: no entry, SSVC decision or key.
func (t HeldText) Empty() bool { return len(t.text) == 0 }

// HeldDetails is a CVE's HeldText in a HeldStore, or the texts a
// previous Details holds of one of its CVEs (see HeldFrom).
type HeldDetails struct {
	store *HeldStore
	// block and at are where its text starts in the store, size its
	// length; ssvc, keys and entries are its HeldText's.
	block, at, size     uint32
	ssvc, keys, entries uint32
	// from, when set, is the previous Details whose texts are the CVE's
	// (store is then nil): see heldFrom.
	from *heldFrom
}

// WithoutKeys returns what h holds without its entry keys (nil when
// nothing else is left): the texts of a CVE whose record was held before
// it was known that NVD's configurations give it its CPEs, which leave
// it no entry keys. Only for texts held in a HeldStore: h itself when it
// names a previous Details' texts.
func (h *HeldDetails) WithoutKeys() *HeldDetails {
	if h == nil || h.from != nil || h.keys == h.size {
		return h
	}
	if h.keys == 0 {
		return nil
	}
	w := *h
	w.size = w.keys
	return &w
}

// heldBlockSize is the size at which a HeldStore compresses its open
// block: a read decodes one (some microseconds).
const heldBlockSize = 64 << 10

// HeldStore holds HeldTexts compressed, in blocks of consecutive texts:
// a build holds each in the order read (its records', in archive order,
// mostly by name) and the details read them back by name, through the
// few blocks decoded last. Safe for concurrent use.
type HeldStore struct {
	mu     sync.Mutex
	blocks [][]byte // compressed
	open   []byte   // the block being filled
	// scratch is what seal compresses into, used again.
	scratch []byte
	enc     *zstd.Encoder
	dec     *zstd.Decoder
	// cache are the blocks decoded last, next the one to replace.
	cache [8]struct {
		block int
		text  []byte
	}
	next int
}

// NewHeldStore returns an empty store.
func NewHeldStore() (*HeldStore, error) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true))
	if err != nil {
		return nil, err
	}
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true))
	if err != nil {
		return nil, err
	}
	s := &HeldStore{enc: enc, dec: dec}
	for i := range s.cache {
		s.cache[i].block = -1
	}
	return s, nil
}

// Hold adds t to the store; nil for an empty t.
func (s *HeldStore) Hold(t HeldText) *HeldDetails {
	if t.Empty() {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.open) > 0 && len(s.open)+len(t.text) > heldBlockSize {
		s.seal()
	}
	h := &HeldDetails{store: s, block: uint32(len(s.blocks)), at: uint32(len(s.open)), size: uint32(len(t.text)),
		ssvc: t.ssvc, keys: t.keys, entries: t.entries}
	s.open = append(s.open, t.text...)
	return h
}

// Seal compresses the open block: what a build calls once every text is
// held, so that none is held uncompressed.
func (s *HeldStore) Seal() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.open) > 0 {
		s.seal()
	}
	s.open, s.scratch = nil, nil
}

// seal compresses the open block into the encoder's scratch array, then
// holds a copy of exactly its bytes: the array EncodeAll grows as it
// writes is several times what the block compresses to (at 400k records,
// 69 MB held through a build's write for some 15 MB of blocks), and a
// clipped slice of it would keep all of it.
func (s *HeldStore) seal() {
	s.scratch = s.enc.EncodeAll(s.open, s.scratch[:0])
	s.blocks = append(s.blocks, append(make([]byte, 0, len(s.scratch)), s.scratch...))
	s.open = s.open[:0]
}

// text returns h's text, in an array of its own.
func (s *HeldStore) text(h *HeldDetails) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b := s.open
	if k := int(h.block); k < len(s.blocks) {
		var err error
		if b, err = s.decoded(k); err != nil {
			return nil, err
		}
	} else if k > len(s.blocks) {
		return nil, fmt.Errorf("held details: block %d of %d", k, len(s.blocks))
	}
	if int(h.at)+int(h.size) > len(b) {
		return nil, fmt.Errorf("held details: %d bytes at %d of a block of %d", h.size, h.at, len(b))
	}
	return bytes.Clone(b[h.at : h.at+h.size]), nil
}

// decoded returns block k decoded, from the cache when it is there.
func (s *HeldStore) decoded(k int) ([]byte, error) {
	for i := range s.cache {
		if s.cache[i].block == k {
			return s.cache[i].text, nil
		}
	}
	c := &s.cache[s.next]
	s.next = (s.next + 1) % len(s.cache)
	text, err := s.dec.DecodeAll(s.blocks[k], c.text[:0])
	if err != nil {
		c.block, c.text = -1, nil
		return nil, fmt.Errorf("held details: block %d: %w", k, err)
	}
	c.block, c.text = k, text
	return text, nil
}

// parts returns the JSON of the entries ("" for none), that of the SSVC
// decision ("" for none), the entry keys' stored form and how many
// entries there are, in one array of their own.
func (h *HeldDetails) parts() (affected, ssvc, keys []byte, entries int, err error) {
	if h.from != nil {
		return h.from.parts()
	}
	text, err := h.store.text(h)
	if err != nil {
		return nil, nil, nil, 0, err
	}
	if len(text) < int(h.keys) || h.ssvc > h.keys {
		return nil, nil, nil, 0, fmt.Errorf("held details: %d bytes, texts at %d and %d", len(text), h.ssvc, h.keys)
	}
	return text[:h.ssvc], text[h.ssvc:h.keys], text[h.keys:], int(h.entries), nil
}
