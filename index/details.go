package index

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/goccy/go-json"
)

// KEV is a CVE's entry in CISA's Known Exploited Vulnerabilities
// catalog, as NVD copies it into the record (cisaExploitAdd and its
// siblings). Dates are YYYY-MM-DD; a missing field is "".
type KEV struct {
	DateAdded         string
	ActionDue         string
	RequiredAction    string
	VulnerabilityName string
}

// Details holds what GET /cve/{name}/details serves of every CVE (NVD's
// status, the KEV entry, every CVSS metric with its vector and severity,
// and the affected entries and SSVC decision of its CVE JSON 5 record) in
// a compact form, kept apart from the CVE bodies: the texts
// once each in one table (vectors, sources and statuses repeat
// massively), and per CVE and per metric small records of indexes into
// it, so that the GC has no pointers to follow in them. The body is
// written per request (AppendDetails).
type Details struct {
	strs []string // strs[0] is ""
	// far are the JSON texts of a loaded Details, kept compressed (see
	// farTexts): nil in a built one.
	far  *farTexts
	cves []detailRef
	// metrics are kept in the pieces they were parsed in (one per chunk of
	// the stored file), so loading never copies them into one array.
	metrics [][]metricRec
	kevs    [][4]uint32 // into strs: date_added, action_due, required_action, vulnerability_name
	mu      sync.Mutex  // guards kevs while chunks are parsed
	// held, in a Details built with KeepHeldFar, is by text id the held
	// record whose affected entries' JSON the text is, left in its
	// HeldStore ("" in strs); nil, or nil at an id, for a text in strs.
	held []*HeldDetails
	// prevIDs are, in a Details built carrying a previous table's texts
	// (see DetailsBuilder.CarryFrom), 1 + the previous table's id of each
	// text taken by id; 0 for the others. Nil otherwise.
	prevIDs []uint32
}

type detailRef struct {
	first  uint32 // metrics[piece][first : first+n]
	status uint32 // into strs
	kev    int32  // into kevs; -1 for none
	n      uint16
	piece  uint16
	// affected and ssvc are, into strs, the JSON of the CVE's affected
	// entries (an array) and of its SSVC decision (an object): 0 ("") for
	// none, served as [] and null.
	affected, ssvc uint32
	// keys is, into strs, the stored form of the CVE's entry keys (see
	// appendEntryKeys): 0 for none.
	keys uint32
}

// metricsOf returns the metrics of r.
func (d *Details) metricsOf(r detailRef) []metricRec {
	return d.metrics[r.piece][r.first : r.first+uint32(r.n)]
}

type metricRec struct {
	source, vector, typ, severity uint32 // into strs
	score                         uint16 // tenths
	version                       uint8  // into metricVersions
}

// metricVersions are the CVSS versions, newest first: the order details
// lists metrics in.
var metricVersions = [...]string{"4.0", "3.1", "3.0", "2.0"}

func versionCode(v string) (uint8, bool) {
	for i, x := range metricVersions {
		if x == v {
			return uint8(i), true
		}
	}
	return 0, false
}

// DetailsBuilder makes a Details one CVE after the other.
type DetailsBuilder struct {
	d   Details
	ids map[string]uint32
	// carry: the previous table whose texts are taken by id (see
	// CarryFrom); nil for none.
	carry *carrying
	// far, with KeepHeldFar, are the texts left in a HeldStore, by
	// heldKey.
	far map[heldKey]uint32
}

// heldKey is what tells two texts left in a HeldStore apart: the first
// half of their SHA-256, which two different texts do not share (a
// collision of 128 bits of SHA-256 among some millions of texts is
// beyond what any input makes, by chance or on purpose).
type heldKey [16]byte

func heldKeyOf(p []byte) heldKey {
	sum := sha256.Sum256(p)
	return heldKey(sum[:16])
}

// KeepHeldFar makes b leave the JSON of the affected entries of a CVE
// whose record is held (CVE.Held) in its HeldStore, compressed, rather
// than hold it whole in its text table, and likewise every text equal to
// one of them: at 400k CVEs, 150 MB that a build held whole from the
// details' making until their files were written, where the stores hold
// 15 MB. The Details it makes are for writing a snapshot (Len, AppendLine,
// TextCount, Text): the HeldStores are kept until they are let go.
//
// A builder taking a previous table's texts by id (CarryFrom) holds
// only the few texts given by value, so it does not leave them far:
// KeepHeldFar does nothing to it.
func (b *DetailsBuilder) KeepHeldFar() *DetailsBuilder {
	if b.carry == nil {
		b.far = map[heldKey]uint32{}
	}
	return b
}

// NewDetailsBuilder returns an empty builder.
func NewDetailsBuilder() *DetailsBuilder {
	return &DetailsBuilder{d: Details{strs: []string{""}, metrics: [][]metricRec{nil}}, ids: map[string]uint32{"": 0}}
}

func (b *DetailsBuilder) intern(s string) uint32 {
	if id, ok := b.ids[s]; ok {
		return id
	}
	// A text equal to one left in a HeldStore (a JSON array) is that one.
	if len(b.far) > 0 && len(s) > 0 && s[0] == '[' {
		if id, ok := b.far[heldKeyOf(unsafe.Slice(unsafe.StringData(s), len(s)))]; ok {
			return id
		}
	}
	id := uint32(len(b.d.strs))
	if c := b.carry; c != nil {
		// The same text may be the previous table's, given by id
		// before or after.
		if j, ok := c.same(s); ok && int(j) < len(c.remap) {
			if r := c.remap[j]; r != 0 {
				b.ids[s] = r - 1
				return r - 1
			}
			c.remap[j] = id + 1
		}
		b.d.prevIDs = append(b.d.prevIDs, 0)
	}
	b.d.strs = append(b.d.strs, s)
	b.ids[s] = id
	return id
}

// internBytes is intern of the text p, which is not written to again
// (encode's): held as it is, not copied, when it is new, which is what
// the affected entries of a CVE of a CVE JSON 5 record mostly are.
func (b *DetailsBuilder) internBytes(p []byte) uint32 {
	if id, ok := b.ids[string(p)]; ok {
		return id
	}
	return b.intern(unsafe.String(unsafe.SliceData(p), len(p)))
}

// internCopy is intern of a copy of p, made only when p is new.
func (b *DetailsBuilder) internCopy(p []byte) uint32 {
	if id, ok := b.ids[string(p)]; ok {
		return id
	}
	return b.intern(string(p))
}

// internHeld is intern of p, the JSON of h's affected entries, left in
// h's HeldStore when it is new (see KeepHeldFar).
func (b *DetailsBuilder) internHeld(p []byte, h *HeldDetails) uint32 {
	if id, ok := b.ids[string(p)]; ok {
		return id
	}
	key := heldKeyOf(p)
	if id, ok := b.far[key]; ok {
		return id
	}
	id := uint32(len(b.d.strs))
	b.d.strs = append(b.d.strs, "")
	if n := int(id) - len(b.d.held); n > 0 {
		b.d.held = append(b.d.held, make([]*HeldDetails, n)...)
	}
	b.d.held = append(b.d.held, h)
	b.far[key] = id
	return id
}

// Add appends the details of the next CVE: its metrics are listed newest
// version first, in record order within a version; its affected entries
// and SSVC decision are kept as the JSON details serves.
func (b *DetailsBuilder) Add(c *CVE) error {
	if len(c.Metrics) > math.MaxUint16 {
		return fmt.Errorf("%s: %d CVSS metrics", c.Name, len(c.Metrics))
	}
	ms := b.d.metrics[0]
	if len(ms) > math.MaxUint32-len(c.Metrics) {
		return fmt.Errorf("%s: too many CVSS metrics in all", c.Name)
	}
	ref := detailRef{first: uint32(len(ms)), status: b.intern(c.Status), kev: -1, n: uint16(len(c.Metrics))}
	if h := c.Held; h != nil {
		if len(c.Affected) > 0 || c.SSVC != nil || len(c.EntryKeys) > 0 {
			return fmt.Errorf("%s: affected entries both held and not", c.Name)
		}
		var err error
		if h.from != nil {
			err = b.addHeldFrom(c, h.from, &ref)
		} else {
			err = b.addHeldTexts(c, h, &ref)
		}
		if err != nil {
			return err
		}
	}
	if len(c.Affected) > 0 {
		ref.affected = b.internBytes(encode(c.Affected))
	}
	if c.SSVC != nil {
		ref.ssvc = b.intern(string(encode(c.SSVC)))
	}
	if len(c.EntryKeys) > 0 {
		text := string(appendEntryKeys(nil, c.EntryKeys))
		if err := checkEntryKeys(c, text, len(c.Affected)); err != nil {
			return err
		}
		ref.keys = b.intern(text)
	}
	if c.KEV != nil {
		k := c.KEV
		ref.kev = int32(len(b.d.kevs))
		b.d.kevs = append(b.d.kevs, [4]uint32{b.intern(k.DateAdded), b.intern(k.ActionDue), b.intern(k.RequiredAction), b.intern(k.VulnerabilityName)})
	}
	start := len(ms)
	for _, m := range c.Metrics {
		v, ok := versionCode(m.Version)
		if !ok {
			return fmt.Errorf("%s: CVSS version %q", c.Name, m.Version)
		}
		if math.IsNaN(m.Score) || m.Score < 0 || m.Score > 10 {
			return fmt.Errorf("%s: CVSS score %v", c.Name, m.Score)
		}
		ms = append(ms, metricRec{
			source: b.intern(m.Source), vector: b.intern(m.Vector), typ: b.intern(m.Type),
			severity: b.intern(m.Severity), score: uint16(math.Round(m.Score * 10)), version: v,
		})
	}
	slices.SortStableFunc(ms[start:], func(x, y metricRec) int { return int(x.version) - int(y.version) })
	b.d.metrics[0] = ms
	b.d.cves = append(b.d.cves, ref)
	return nil
}

// addHeldTexts is Add's part for the texts h holds, interned by value.
func (b *DetailsBuilder) addHeldTexts(c *CVE, h *HeldDetails, ref *detailRef) error {
	affected, ssvc, keys, n, err := h.parts()
	if err != nil {
		return fmt.Errorf("%s: %w", c.Name, err)
	}
	// intern holds a text of parts' array as it is: with the affected
	// entries left in the store (KeepHeldFar), the other two are
	// copied, not holding the array.
	internPart := b.internBytes
	if b.far != nil {
		internPart = b.internCopy
	}
	if len(affected) > 0 {
		if b.far != nil {
			ref.affected = b.internHeld(affected, h)
		} else {
			ref.affected = b.internBytes(affected)
		}
	}
	if len(ssvc) > 0 {
		ref.ssvc = internPart(ssvc)
	}
	if len(keys) > 0 {
		if err := checkEntryKeys(c, string(keys), n); err != nil {
			return err
		}
		ref.keys = internPart(keys)
	}
	return nil
}

// checkEntryKeys checks keys, the stored form of c's entry keys, made of
// its n affected entries: a CVE whose vendors and products come from
// NVD's CPEs takes none of its entries.
func checkEntryKeys(c *CVE, keys string, n int) error {
	if len(c.CPEs) > 0 {
		return fmt.Errorf("%s: vendors and products from affected entries, but NVD's CPEs too", c.Name)
	}
	if !validEntryKeys(keys, n) {
		return fmt.Errorf("%s: bad vendors and products from affected entries %q", c.Name, keys)
	}
	return nil
}

// Details returns what was added; the builder is not to be used again
// (its map of the texts is let go: the details outlive it).
func (b *DetailsBuilder) Details() *Details {
	d := &b.d
	d.strs, d.cves, d.metrics[0], d.kevs = slices.Clip(d.strs), slices.Clip(d.cves), slices.Clip(d.metrics[0]), slices.Clip(d.kevs)
	b.ids, b.far, b.carry = nil, nil, nil
	return d
}

// Reorderable returns details that BuildEntries may put in list order
// while d keeps the order it was built in: the CVEs' small records are
// copied, the texts, metrics and KEV entries (which BuildEntries never
// changes) are shared. A build writes d and checks the copy, rather than
// building the details twice.
func (d *Details) Reorderable() *Details {
	return &Details{strs: d.strs, cves: slices.Clone(d.cves), metrics: d.metrics, kevs: d.kevs}
}

// emptyDetails is the details of n CVEs without status, KEV or metrics.
func emptyDetails(n int) *Details {
	d := &Details{strs: []string{""}, cves: make([]detailRef, n)}
	for i := range d.cves {
		d.cves[i].kev = -1
	}
	return d
}

// Len is the number of CVEs d holds.
func (d *Details) Len() int { return len(d.cves) }

// Strings is d's text table, for a snapshot file: line i of the stored
// form refers to it by index. For a loaded Details, it is a copy with
// every far text decoded; likewise for one built with KeepHeldFar, with
// the texts left in HeldStores read (one that cannot be read is "": Text
// says why).
func (d *Details) Strings() []string {
	if d.held != nil {
		out := slices.Clone(d.strs)
		for id := range d.held {
			out[id], _ = d.Text(id)
		}
		return out
	}
	if d.far == nil {
		return d.strs
	}
	out := slices.Clone(d.strs)
	for id := range out {
		if d.far.isFar(uint32(id)) {
			out[id] = string(d.appendText(nil, uint32(id)))
		}
	}
	return out
}

// TextCount is how many texts d's table holds (len(Strings())).
func (d *Details) TextCount() int { return len(d.strs) }

// Text is text id of d's table (Strings()[id]), read from its HeldStore
// when it was left there (see KeepHeldFar) or decoded when it is far.
func (d *Details) Text(id int) (string, error) {
	if id < len(d.held) && d.held[id] != nil {
		affected, _, _, _, err := d.held[id].parts()
		if err != nil {
			return "", err
		}
		// parts' array is its own.
		return unsafe.String(unsafe.SliceData(affected), len(affected)), nil
	}
	if d.far.isFar(uint32(id)) {
		return string(d.appendText(nil, uint32(id))), nil
	}
	return d.strs[id], nil
}

// AppendLine appends the stored form of the i-th CVE's details: decimal
// numbers separated by spaces, "status kev [date_added action_due
// required_action vulnerability_name] n (version source type vector
// severity score)*n affected ssvc keys", where kev is 0 or 1 (1: the
// four texts follow), texts are indexes into Strings, version indexes
// 4.0, 3.1, 3.0, 2.0, score is in tenths, affected and ssvc are the
// texts of their JSON and keys that of the entry keys (see
// appendEntryKeys; 0: none). Lines of snapshot format 4 end before
// affected, those of format 5 before keys (see NewDetailsLoader).
func (d *Details) AppendLine(dst []byte, i int) []byte {
	r := d.cves[i]
	dst = strconv.AppendUint(dst, uint64(r.status), 10)
	if r.kev < 0 {
		dst = append(dst, " 0"...)
	} else {
		dst = append(dst, " 1"...)
		for _, v := range d.kevs[r.kev] {
			dst = append(dst, ' ')
			dst = strconv.AppendUint(dst, uint64(v), 10)
		}
	}
	dst = append(dst, ' ')
	dst = strconv.AppendUint(dst, uint64(r.n), 10)
	for _, m := range d.metricsOf(r) {
		for _, v := range [...]uint32{uint32(m.version), m.source, m.typ, m.vector, m.severity, uint32(m.score)} {
			dst = append(dst, ' ')
			dst = strconv.AppendUint(dst, uint64(v), 10)
		}
	}
	dst = append(dst, ' ')
	dst = strconv.AppendUint(dst, uint64(r.affected), 10)
	dst = append(dst, ' ')
	dst = strconv.AppendUint(dst, uint64(r.ssvc), 10)
	dst = append(dst, ' ')
	return strconv.AppendUint(dst, uint64(r.keys), 10)
}

// ErrDetails is wrapped by the errors of a details record.
var ErrDetails = errors.New("index: bad details record")

// DetailsLoader rebuilds a Details from its stored form (see AppendLine):
// the text table, then the lines of the CVEs in pieces (the chunks of a
// snapshot file), which may be parsed at the same time on several
// goroutines. Every index is checked.
type DetailsLoader struct {
	d    *Details
	seen []bool // per piece
	// noAffected: the lines end after the metrics (snapshot format 4);
	// noKeys: after ssvc (format 5).
	noAffected, noKeys bool
	// plain are the far texts (see farTexts) that a line names where a
	// plain text is read (a status, a vector...): they get a string too,
	// once every piece is parsed. Guarded by d.mu.
	plain []uint32
}

// NewDetailsLoader starts a Details of cves CVEs stored in pieces pieces,
// in the lines AppendLine writes.
func NewDetailsLoader(strs []string, cves, pieces int) (*DetailsLoader, error) {
	if len(strs) == 0 || strs[0] != "" {
		return nil, fmt.Errorf("%w: the text table does not start with \"\"", ErrDetails)
	}
	if pieces > math.MaxUint16+1 || len(strs) > math.MaxUint32 {
		return nil, fmt.Errorf("%w: %d pieces, %d texts", ErrDetails, pieces, len(strs))
	}
	d := &Details{strs: strs, cves: make([]detailRef, cves), metrics: make([][]metricRec, pieces)}
	return &DetailsLoader{d: d, seen: make([]bool, pieces)}, nil
}

// WithoutAffected makes l read lines that end after the metrics, as
// snapshot format 4 wrote them (before CVE JSON 5 records were read):
// every CVE has no affected entries and no SSVC decision.
func (l *DetailsLoader) WithoutAffected() *DetailsLoader {
	l.noAffected, l.noKeys = true, true
	return l
}

// WithoutEntryKeys makes l read lines that end after the SSVC decision,
// as snapshot format 5 wrote them (before vendors and products were taken
// from affected entries): every CVE has no entry keys.
func (l *DetailsLoader) WithoutEntryKeys() *DetailsLoader {
	l.noKeys = true
	return l
}

// ParsePiece parses piece p, whose lines (each ending in a newline) are
// the CVEs from first on. The metrics are counted first, so the piece's
// array is allocated once at its exact size.
func (l *DetailsLoader) ParsePiece(p, first int, data []byte) error {
	d := l.d
	if p < 0 || p >= len(d.metrics) || l.seen[p] {
		return fmt.Errorf("%w: piece %d", ErrDetails, p)
	}
	l.seen[p] = true
	total := 0
	for rest := data; len(rest) > 0; {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			return fmt.Errorf("%w: piece %d does not end in a newline", ErrDetails, p)
		}
		pp := numParser{b: rest[:i]}
		pp.next(math.MaxUint32)
		if pp.next(1) == 1 {
			for range 4 {
				pp.next(math.MaxUint32)
			}
		}
		total += int(pp.next(math.MaxUint16))
		rest = rest[i+1:]
	}
	if total > math.MaxUint32 {
		return fmt.Errorf("%w: piece %d holds %d metrics", ErrDetails, p, total)
	}
	ms := make([]metricRec, 0, total)
	n := uint64(len(d.strs))
	for k := first; len(data) > 0; k++ {
		i := bytes.IndexByte(data, '\n')
		if k >= len(d.cves) {
			return fmt.Errorf("%w: more lines than the %d CVEs", ErrDetails, len(d.cves))
		}
		var err error
		if d.cves[k], ms, err = l.parseLine(data[:i], n, uint16(p), ms); err != nil {
			return fmt.Errorf("%w %d: %v", ErrDetails, k+1, err)
		}
		data = data[i+1:]
	}
	d.metrics[p] = ms
	return nil
}

// parseLine parses one CVE's line, appending its metrics to ms.
func (l *DetailsLoader) parseLine(line []byte, n uint64, piece uint16, ms []metricRec) (detailRef, []metricRec, error) {
	p := numParser{b: line}
	far := l.d.far
	text := func() uint32 {
		id := uint32(p.next(n - 1))
		if far.isFar(id) {
			l.d.mu.Lock()
			l.plain = append(l.plain, id)
			l.d.mu.Unlock()
		}
		return id
	}
	jsonText := func() uint32 { return uint32(p.next(n - 1)) }
	r := detailRef{status: text(), kev: -1, piece: piece}
	if p.next(1) == 1 && p.err == nil {
		k := [4]uint32{text(), text(), text(), text()}
		l.d.mu.Lock()
		r.kev = int32(len(l.d.kevs))
		l.d.kevs = append(l.d.kevs, k)
		l.d.mu.Unlock()
	}
	cnt := p.next(math.MaxUint16)
	r.n, r.first = uint16(cnt), uint32(len(ms))
	for range cnt {
		if p.err != nil {
			break
		}
		m := metricRec{version: uint8(p.next(uint64(len(metricVersions) - 1))), source: text(), typ: text(), vector: text(), severity: text()}
		m.score = uint16(p.next(100))
		if k := len(ms); k > int(r.first) && ms[k-1].version > m.version {
			p.fail("metrics not newest version first")
		}
		if len(ms) == cap(ms) {
			p.fail("more metrics than counted")
			break
		}
		ms = append(ms, m)
	}
	if !l.noAffected {
		r.affected, r.ssvc = jsonText(), jsonText()
		if p.err == nil && !l.d.textShaped(r.affected, '[', ']') {
			p.fail("affected text is not a JSON array")
		}
		if p.err == nil && !l.d.textShaped(r.ssvc, '{', '}') {
			p.fail("ssvc text is not a JSON object")
		}
	}
	if !l.noKeys {
		r.keys = text()
		if p.err == nil && r.keys != 0 && (r.affected == 0 || far.isFar(r.keys) || !validEntryKeys(l.d.strs[r.keys], -1)) {
			p.fail("keys text is not vendors and products of affected entries")
		}
	}
	if p.err == nil && len(p.b) > 0 {
		p.fail("trailing bytes")
	}
	return r, ms, p.err
}

// jsonShaped reports whether s is "" (none) or starts with open and ends
// with close: the cheap check of a stored JSON text at load; Check
// decodes it.
func jsonShaped(s string, open, close byte) bool {
	return s == "" || len(s) >= 2 && s[0] == open && s[len(s)-1] == close
}

// Check decodes every CVE's affected entries and SSVC decision and
// requires each to encode back to exactly its stored text, so that what
// details serves is valid JSON of the documented shape (what vulnd
// validate checks beyond a load). The error names the CVE by its
// position in d, from 1.
func (d *Details) Check() error {
	if err := d.far.check(); err != nil {
		return err
	}
	var buf []byte
	for i, r := range d.cves {
		if buf = d.appendText(buf[:0], r.affected); len(buf) > 0 {
			var es []AffectedEntry
			if err := json.Unmarshal(buf, &es); err != nil || len(es) == 0 || !bytes.Equal(encode(es), buf) {
				return fmt.Errorf("%w %d: affected is not the JSON of affected entries", ErrDetails, i+1)
			}
			if !validEntryKeys(d.strs[r.keys], len(es)) {
				return fmt.Errorf("%w %d: keys name an affected entry the CVE does not have", ErrDetails, i+1)
			}
		}
		if buf = d.appendText(buf[:0], r.ssvc); len(buf) > 0 {
			var s SSVC
			if err := json.Unmarshal(buf, &s); err != nil || !bytes.Equal(encode(&s), buf) {
				return fmt.Errorf("%w %d: ssvc is not the JSON of an SSVC decision", ErrDetails, i+1)
			}
		}
	}
	return nil
}

// Details returns the Details once every piece is parsed.
func (l *DetailsLoader) Details() (*Details, error) {
	for p, ok := range l.seen {
		if !ok {
			return nil, fmt.Errorf("%w: piece %d not parsed", ErrDetails, p)
		}
	}
	d := l.d
	for _, id := range l.plain {
		if d.strs[id] == "" {
			d.strs[id] = string(d.appendText(nil, id))
		}
	}
	l.plain = nil
	return d, nil
}

// numParser reads space-separated decimal numbers.
type numParser struct {
	b   []byte
	k   int // numbers read
	err error
}

func (p *numParser) fail(msg string) {
	if p.err == nil {
		p.err = errors.New(msg)
	}
}

// next reads the next number, which must be at most max.
func (p *numParser) next(max uint64) uint64 {
	if p.err != nil {
		return 0
	}
	if p.k > 0 {
		if len(p.b) == 0 || p.b[0] != ' ' {
			p.fail("missing number")
			return 0
		}
		p.b = p.b[1:]
	}
	p.k++
	i, v := 0, uint64(0)
	for i < len(p.b) && isDigit(p.b[i]) && i < 10 {
		v = v*10 + uint64(p.b[i]-'0')
		i++
	}
	if i == 0 || i == 10 || v > max {
		p.fail("number missing or out of range")
		return 0
	}
	p.b = p.b[i:]
	return v
}

// permute reorders d's CVEs in place: the one at order[p] moves to p.
// It is how the index puts them in list order, without a second array.
func (d *Details) permute(order []int32) {
	done := make([]bool, len(order))
	for start := range order {
		if done[start] {
			continue
		}
		// Follow the cycle: position p takes what was at order[p].
		tmp := d.cves[start]
		p := start
		for {
			done[p] = true
			from := int(order[p])
			if from == start {
				d.cves[p] = tmp
				break
			}
			d.cves[p] = d.cves[from]
			p = from
		}
	}
}

// kevAt reports whether the CVE at list position p has a KEV entry.
func (ix *Index) kevAt(p int32) bool {
	return ix.details != nil && ix.details.cves[p].kev >= 0
}

// AppendDetails appends the body of GET /cve/{name}/details:
// {"name","status","kev","metrics","affected","ssvc","epss"}, or fails with ErrCVENotFound and
// dst unchanged.
func (ix *Index) AppendDetails(dst []byte, name string) ([]byte, error) {
	p, ok := ix.cvePos(name)
	if !ok {
		return dst, ErrCVENotFound
	}
	var buf [32]byte
	key, _ := upper(buf[:0], name) // a CVE name: short and ASCII
	d := ix.details
	s := d.strs
	r := d.cves[p]
	dst = append(dst, `{"name":"`...)
	dst = append(dst, key...) // the canonical name: CVE-, digits and a dash
	dst = append(dst, '"')
	dst = append(dst, `,"status":`...)
	dst = appendJSONString(dst, s[r.status])
	dst = append(dst, `,"kev":`...)
	if r.kev < 0 {
		dst = append(dst, "null"...)
	} else {
		for i, key := range [4]string{`{"date_added":`, `,"action_due":`, `,"required_action":`, `,"vulnerability_name":`} {
			dst = append(dst, key...)
			dst = appendJSONString(dst, s[d.kevs[r.kev][i]])
		}
		dst = append(dst, '}')
	}
	dst = append(dst, `,"metrics":[`...)
	for i, m := range d.metricsOf(r) {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"version":"`...)
		dst = append(dst, metricVersions[m.version]...)
		dst = append(dst, `","source":`...)
		dst = appendJSONString(dst, s[m.source])
		dst = append(dst, `,"type":`...)
		dst = appendJSONString(dst, s[m.typ])
		dst = append(dst, `,"vector":`...)
		dst = appendJSONString(dst, s[m.vector])
		dst = append(dst, `,"base_score":`...)
		dst = strconv.AppendFloat(dst, float64(m.score)/10, 'f', -1, 64)
		dst = append(dst, `,"base_severity":`...)
		dst = appendJSONString(dst, s[m.severity])
		dst = append(dst, '}')
	}
	dst = append(dst, `],"affected":`...)
	var far farReader
	if d.far != nil {
		far = d.far.reader()
		defer far.release()
	}
	if r.affected == 0 {
		dst = append(dst, "[]"...)
	} else {
		dst = d.appendTextWith(&far, dst, r.affected)
	}
	dst = append(dst, `,"ssvc":`...)
	if r.ssvc == 0 {
		dst = append(dst, "null"...)
	} else {
		dst = d.appendTextWith(&far, dst, r.ssvc)
	}
	dst = append(dst, `,"epss":`...)
	dst = ix.appendEPSS(dst, p)
	return append(dst, '}'), nil
}

// appendJSONString appends s as a JSON string, escaped as encoding/json
// escapes it (HTML-safe; invalid UTF-8 becomes U+FFFD).
func appendJSONString(dst []byte, s string) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			if r == utf8.RuneError {
				dst = append(dst, `\ufffd`...)
			} else {
				dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xF])
			}
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
