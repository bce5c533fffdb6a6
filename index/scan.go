package index

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"sync"
	"unicode/utf8"
	"unsafe"

	"github.com/goccy/go-json"
)

// CVEEntry is one CVE as an Index takes it in: the API body, already
// encoded, and what the index's orders and relations need, read from that
// body by ScanCVE. It holds views into the body, so the body must never
// change afterwards.
//
// A snapshot stores each CVE as exactly the bytes GET /cve/{name} serves.
// Loading then costs one pass over those bytes that picks out a few fields
// (name, updated_at, score, the CWE names and each CPE's vendor, product,
// version and vulnerable flag) without decoding the rest,
// instead of decoding every record into structs and encoding it again.
type CVEEntry struct {
	body       []byte
	name       string
	year, num  int
	updated    uint64 // updated_at's digits, YYYYMMDDHHMMSS: sorts like the time
	published  uint64 // created_at's digits, likewise
	summaryEnd int    // body[:summaryEnd] + "}" is the CVE summary object
	band       Band
	cvss10     uint8 // cvss.score in tenths, 0 to 100 (for sort=risk)
	cpes       []cpeRef
	cwes       []byte // the raw "cwes" array
}

// cpeRef is what the index needs of one CPE at load (see gatherVendors):
// views into the body (or, for a value with JSON escapes, a decoded
// copy) and the vulnerable flag. The range bounds and the update are read
// again from the body when a product's affected versions are first asked
// for (see vulnerableCPEs), so ScanCVE neither parses nor keeps them.
type cpeRef struct {
	vendor, product, version string
	vulnerable               bool
}

// cpeBounds are a CPE's range bounds, NVD's text as the body holds it
// (maybe CPE-escaped); "" is no bound. update is the URI's update
// component, CPE escaping removed, when it is concrete (not "*", "-" or
// empty), else "".
type cpeBounds struct {
	startIncluding, startExcluding, endIncluding, endExcluding string
	update                                                     string
}

// Name is the CVE's name, as served.
func (e *CVEEntry) Name() string { return e.name }

// Body is the CVE's API body.
func (e *CVEEntry) Body() []byte { return e.body }

// EncodeCVE returns the API body of c: the object GET /cve/{name} serves,
// without the change-tracking metrics. It is safe for concurrent use.
func EncodeCVE(c *CVE) []byte {
	return encode(cveBody{
		Name: c.Name, Summary: c.Summary, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt,
		CPEs: orEmpty(c.CPEs), CWEs: orEmpty(c.CWEs), CVSS: c.CVSS,
		References: orEmpty(c.References),
	})
}

// cpeSlabs holds, for cpeIter.all, what is left of the slabs it carves
// each CVE's cpeRefs from. Until the pool drops one, it keeps its slab,
// whose cpeRefs the entries of a load hold anyway.
var cpeSlabs = sync.Pool{New: func() any { return new(cpeRefs) }}

type cpeRefs []cpeRef

// cpeSlab is the number of cpeRefs allocated at once for ScanCVE's
// results: a 400k-CVE snapshot has about 2M of them, and one allocation
// per CVE was 400k allocations per load, all garbage once the index is
// built.
const cpeSlab = 4096

// ErrNotCVEBody is wrapped by ScanCVE's errors.
var ErrNotCVEBody = errors.New("index: not a CVE body")

// summaryKeys are the first members of every CVE body, in this order; they
// are also, in this order, the members of a CVE summary.
var summaryKeys = [...]string{"name", "summary", "created_at", "updated_at"}

// ScanCVE reads what an Index needs from body, a CVE object as EncodeCVE
// writes it: name, summary, created_at and updated_at first, in that order,
// then cpes, cwes, cvss and references in any order. It checks the JSON
// syntax of the whole object but decodes only those fields; the entry keeps
// views into body. It is safe for concurrent use.
func ScanCVE(body []byte) (CVEEntry, error) {
	e := CVEEntry{body: body}
	s := scanner{b: body}
	if !s.eat('{') {
		return e.fail(&s, "no object")
	}
	var seenCVSS bool
	for k := 0; ; k++ {
		key, ok := s.key()
		if !ok {
			return e.fail(&s, "bad member name")
		}
		if k < len(summaryKeys) && string(key) != summaryKeys[k] {
			return e.fail(&s, "member "+strconv.Itoa(k+1)+" is not "+summaryKeys[k])
		}
		switch string(key) {
		case "name":
			raw, esc, ok := s.str()
			if !ok || esc {
				return e.fail(&s, "bad name")
			}
			e.name = view(raw)
			if e.year, e.num, ok = cveNumber(e.name); !ok || !isUpperASCII(raw) {
				return e.fail(&s, fmt.Sprintf("name %q is not CVE-<year>-<number>", raw))
			}
		case "created_at":
			raw, _, ok := s.str()
			if e.published, ok = timestampDigits(raw); !ok {
				return e.fail(&s, fmt.Sprintf("created_at %q is not YYYY-MM-DD HH:MM:SSZ", raw))
			}
		case "updated_at":
			raw, _, ok := s.str()
			if e.updated, ok = timestampDigits(raw); !ok {
				return e.fail(&s, fmt.Sprintf("updated_at %q is not YYYY-MM-DD HH:MM:SSZ", raw))
			}
		case "cpes":
			it := cpeIter{s: s}
			e.cpes = it.all()
			if it.err != nil {
				return e.fail(&it.s, "bad cpes")
			}
			s = it.s
		case "cwes":
			s.ws()
			from := s.i
			if s.peek() != '[' || !s.value(0) {
				return e.fail(&s, "bad cwes")
			}
			e.cwes = body[from:s.i]
		case "cvss":
			score, ok := s.cvssScore()
			if !ok {
				return e.fail(&s, "bad cvss")
			}
			e.band = bandOf(score)
			e.cvss10 = scoreTenths(score)
			seenCVSS = true
		default:
			if !s.value(0) {
				return e.fail(&s, "bad value of "+string(key))
			}
		}
		if k == len(summaryKeys)-1 {
			e.summaryEnd = s.i
		}
		if s.eat(',') {
			continue
		}
		if !s.eat('}') {
			return e.fail(&s, "object not closed")
		}
		break
	}
	s.ws()
	if s.i != len(body) {
		return e.fail(&s, "data after the object")
	}
	if e.summaryEnd == 0 || e.updated == 0 || e.published == 0 || e.cpes == nil || e.cwes == nil || !seenCVSS {
		return e.fail(&s, "missing members (cpes, cwes or cvss)")
	}
	return e, nil
}

func (e *CVEEntry) fail(s *scanner, what string) (CVEEntry, error) {
	if e.name != "" {
		return CVEEntry{}, fmt.Errorf("%w: %s: %s at byte %d", ErrNotCVEBody, e.name, what, s.i)
	}
	return CVEEntry{}, fmt.Errorf("%w: %s at byte %d", ErrNotCVEBody, what, s.i)
}

// view returns b as a string without copying; b must never change.
func view(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// timestampDigits returns the 14 digits of a served timestamp
// "YYYY-MM-DD HH:MM:SSZ" as a number, which orders like the time.
func timestampDigits(b []byte) (uint64, bool) {
	const layout = "dddd-dd-dd dd:dd:ddZ"
	if len(b) != len(layout) {
		return 0, false
	}
	var n uint64
	for i := 0; i < len(layout); i++ {
		if layout[i] != 'd' {
			if b[i] != layout[i] {
				return 0, false
			}
			continue
		}
		if !isDigit(b[i]) {
			return 0, false
		}
		n = n*10 + uint64(b[i]-'0')
	}
	return n, true
}

func isUpperASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 || ('a' <= c && c <= 'z') {
			return false
		}
	}
	return true
}

// cvssScore reads the cvss object and returns its score (0 when absent).
func (s *scanner) cvssScore() (float64, bool) {
	if !s.eat('{') {
		return 0, false
	}
	score := 0.0
	if s.eat('}') {
		return 0, true
	}
	for {
		key, ok := s.key()
		if !ok {
			return 0, false
		}
		if string(key) == "score" {
			s.ws()
			from := s.i
			if !s.value(0) {
				return 0, false
			}
			f, err := strconv.ParseFloat(string(s.b[from:s.i]), 64)
			if err != nil {
				return 0, false
			}
			score = f
		} else if !s.value(0) {
			return 0, false
		}
		if s.eat(',') {
			continue
		}
		return score, s.eat('}')
	}
}

// arrayNext moves to an array's next element: past its "[" the first time
// (when *started is false), past a "," after that. more is false at the
// closing "]"; ok is false on anything else.
func (s *scanner) arrayNext(started *bool) (more, ok bool) {
	if !*started {
		*started = true
		if !s.eat('[') {
			return false, false
		}
		return !s.eat(']'), true
	}
	if s.eat(',') {
		return true, true
	}
	return false, s.eat(']')
}

// cpeIter walks a "cpes" array, checking its syntax and yielding each
// element's vendor, product and version (CPE escaping already removed by
// the loader; JSON escapes removed here), its vulnerable flag, its
// range bounds (start including, start excluding, end including, end
// excluding; empty when absent) and the update component of its "uri"
// (see cpeUpdate). vulnerable must be true or false and each bound and
// the uri a string, as strictly as the components.
type cpeIter struct {
	s                        scanner
	vendor, product, version []byte
	bounds                   [4][]byte
	update                   string
	vulnerable, anyUpdate    bool
	err                      error
	started                  bool
	// noUpdate skips reading the update from the uri (which is still
	// checked to be a string): update and anyUpdate stay zero.
	noUpdate bool
}

// cpeKeys are the members of a CPE that EncodeCVE writes first, in its
// order, as the body holds them: next tries them first.
var cpeKeys = [...]string{`"cpe_id":`, `"uri":`, `"vendor":`, `"product":`, `"version":`, `"vulnerable":`}

func (it *cpeIter) next() bool {
	if it.err != nil {
		return false
	}
	s := &it.s
	if more, ok := s.arrayNext(&it.started); !ok {
		return it.fail()
	} else if !more {
		return false
	}
	it.vendor, it.product, it.version = nil, nil, nil
	it.bounds, it.vulnerable = [4][]byte{}, false
	it.update, it.anyUpdate = "", false
	if !s.eat('{') {
		return it.fail()
	}
	if s.eat('}') {
		return true
	}
	for k := 0; ; k++ {
		var key []byte
		var ok bool
		if k < len(cpeKeys) && bytes.HasPrefix(s.b[s.i:], []byte(cpeKeys[k])) {
			// The member EncodeCVE writes next, name and colon: they
			// need no checking.
			key, ok = s.b[s.i+1:s.i+len(cpeKeys[k])-2], true
			s.i += len(cpeKeys[k])
		} else if key, ok = s.key(); !ok {
			return it.fail()
		}
		switch string(key) {
		case "vendor":
			it.vendor, ok = s.text()
		case "product":
			it.product, ok = s.text()
		case "version":
			it.version, ok = s.text()
		case "vulnerable":
			it.vulnerable, ok = s.boolean()
		case "uri":
			var raw []byte
			raw, _, ok = s.str()
			if ok && !it.noUpdate {
				it.update, it.anyUpdate = cpeUpdate(raw)
			}
		case "version_start_including":
			it.bounds[0], ok = s.text()
		case "version_start_excluding":
			it.bounds[1], ok = s.text()
		case "version_end_including":
			it.bounds[2], ok = s.text()
		case "version_end_excluding":
			it.bounds[3], ok = s.text()
		default:
			ok = s.value(0)
		}
		if !ok {
			return it.fail()
		}
		if s.eat(',') {
			continue
		}
		if !s.eat('}') {
			return it.fail()
		}
		return true
	}
}

// all reads the rest of the array and returns its CPEs, without their
// bounds and update (it sets noUpdate). It writes them straight into a
// slab and hands out the part they fill, its capacity limited so that
// appending to one CVE's CPEs never touches the next's: one allocation
// per cpeSlab CPEs rather than one or more per CVE. When a CVE's CPEs
// outgrow what is left of the slab, they move to a new one.
func (it *cpeIter) all() []cpeRef {
	it.noUpdate = true
	sc := cpeSlabs.Get().(*cpeRefs)
	slab, n := *sc, 0
	for it.next() {
		if n == len(slab) {
			slab = append(make([]cpeRef, 0, max(cpeSlab, 2*n)), slab[:n]...)
			slab = slab[:cap(slab)]
		}
		slab[n] = cpeRef{vendor: view(it.vendor), product: view(it.product), version: view(it.version),
			vulnerable: it.vulnerable}
		n++
	}
	out := slab[:n:n]
	if n == 0 {
		out = make([]cpeRef, 0) // not nil: ScanCVE tells a missing cpes by nil
	}
	if it.err != nil {
		clear(out) // to be written again
		n = 0
	}
	*sc = slab[n:]
	cpeSlabs.Put(sc)
	return out
}

func (it *cpeIter) fail() bool {
	it.err = fmt.Errorf("%w: bad cpes at byte %d", ErrNotCVEBody, it.s.i)
	return false
}

// cpeUpdate reads the update component of a CPE 2.3 formatted string,
// given as the raw contents of its JSON string: the 7th of its
// colon-separated fields ("cpe:2.3:a:apache:log4j:2.0:beta9:..." has
// beta9), a colon escaped by a backslash not ending one. It returns the
// update with CPE escaping removed when it is concrete, else "" and
// whether it is "*". A URI with fewer fields has no update. Only an
// update holding a backslash (in the JSON text) is copied.
func cpeUpdate(raw []byte) (update string, any bool) {
	field, start := 0, 0
	end := -1
	for i := 0; i < len(raw); i++ {
		switch raw[i] {
		case '\\':
			// A JSON escape; \\ is a backslash, the CPE escape, which
			// makes the character after it (maybe a JSON escape too)
			// literal.
			i += jsonEscapeLen(raw, i) - 1
			if raw[i] == '\\' && i+1 < len(raw) {
				i++
				i += jsonEscapeLen(raw, i) - 1
			}
		case ':':
			field++
			if field == 6 {
				start = i + 1
			} else if field == 7 {
				end = i
			}
		}
		if end >= 0 {
			break
		}
	}
	switch {
	case field < 6:
		return "", false
	case end < 0:
		end = len(raw)
	}
	f := raw[start:end]
	switch string(f) {
	case "*":
		return "", true
	case "", "-":
		return "", false
	}
	if bytes.IndexByte(f, '\\') < 0 {
		return view(f), false
	}
	var v string
	if err := json.Unmarshal(append(append([]byte{'"'}, f...), '"'), &v); err != nil {
		return "", false
	}
	switch v = unescapeCPE(v); v {
	case "*":
		return "", true
	case "", "-":
		return "", false
	}
	return v, false
}

// jsonEscapeLen returns the length of the JSON text at raw[i]: 1 for a
// plain byte, 2 or 6 for an escape (raw holds valid escapes).
func jsonEscapeLen(raw []byte, i int) int {
	switch {
	case raw[i] != '\\' || i+1 >= len(raw):
		return 1
	case raw[i+1] == 'u':
		return min(6, len(raw)-i)
	}
	return 2
}

// stringIter walks a raw JSON array of strings ("cwes").
type stringIter struct {
	s       scanner
	val     []byte
	err     error
	started bool
}

func (it *stringIter) next() bool {
	if it.err != nil {
		return false
	}
	s := &it.s
	if more, ok := s.arrayNext(&it.started); !ok {
		return it.fail()
	} else if !more {
		return false
	}
	v, ok := s.text()
	if !ok {
		return it.fail()
	}
	it.val = v
	return true
}

func (it *stringIter) fail() bool {
	it.err = fmt.Errorf("%w: bad string array at byte %d", ErrNotCVEBody, it.s.i)
	return false
}

// maxDepth bounds the nesting scanner.value accepts.
const maxDepth = 32

// scanner is a minimal JSON reader over bytes: it checks syntax while
// skipping values and returns strings as views into the input. It never
// panics on any input.
type scanner struct {
	b []byte
	i int
}

func (s *scanner) ws() {
	// What EncodeCVE writes has no white space: the first test ends it.
	for s.i < len(s.b) && s.b[s.i] <= ' ' {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) peek() byte {
	if s.i < len(s.b) {
		return s.b[s.i]
	}
	return 0
}

// eat skips white space and then c, reporting whether c was there.
func (s *scanner) eat(c byte) bool {
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

// key reads a member name and the colon after it.
func (s *scanner) key() ([]byte, bool) {
	raw, _, ok := s.str()
	if !ok || !s.eat(':') {
		return nil, false
	}
	return raw, true
}

// str reads a string and returns its raw contents (between the quotes)
// and whether they hold escapes. It checks, in the same pass that finds
// the closing quote, that every escape is one of JSON's and that no byte
// is a control byte, and then, only when some byte is not ASCII, that
// the contents are valid UTF-8.
//
// The pass tests eight bytes at a time: a word has a byte equal to 0 when
// (x - 0x01...01) &^ x & 0x80...80 is not 0, and one below 0x20 when
// (x - 0x20...20) &^ x & 0x80...80 is not 0; in either, the lowest bit
// set marks the first such byte exactly (the borrows that make higher
// bits wrong start at it). A word with no quote, backslash, control byte
// or (until one is seen) non-ASCII byte is skipped whole: this is where
// the loader spends most of its scanning time.
func (s *scanner) str() (raw []byte, esc, ok bool) {
	s.ws()
	b := s.b
	if s.i >= len(b) || b[s.i] != '"' {
		return nil, false, false
	}
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	start := s.i + 1
	j := start
	var high uint64 = highs // flags non-ASCII bytes until one is found
	for j < len(b) {
		for j+8 <= len(b) {
			x := binary.LittleEndian.Uint64(b[j:])
			q, bs := x^('"'*ones), x^('\\'*ones)
			m := ((q-ones)&^q | (bs-ones)&^bs | (x-0x20*ones)&^x | x&high) & highs
			if m != 0 {
				j += bits.TrailingZeros64(m) >> 3
				break
			}
			j += 8
		}
		if j >= len(b) {
			break
		}
		switch c := b[j]; {
		case c == '"':
			raw = b[start:j]
			if high == 0 && !utf8.Valid(raw) {
				return nil, false, false
			}
			s.i = j + 1
			return raw, esc, true
		case c == '\\':
			esc = true
			n := escapeLen(b[j:])
			if n == 0 {
				return nil, false, false
			}
			j += n
		case c < 0x20:
			return nil, false, false
		case c >= 0x80:
			high = 0
			j++
		default:
			j++
		}
	}
	return nil, false, false
}

// escapeLen returns the length of the JSON escape b starts with (at its
// backslash), or 0 when it is not one.
func escapeLen(b []byte) int {
	if len(b) < 2 {
		return 0
	}
	switch b[1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return 2
	case 'u':
		if len(b) < 6 {
			return 0
		}
		for _, h := range b[2:6] {
			if !isDigit(h) && !('a' <= h && h <= 'f') && !('A' <= h && h <= 'F') {
				return 0
			}
		}
		return 6
	}
	return 0
}

// text reads a string and returns its value: a view into the input, or a
// decoded copy when it holds escapes.
func (s *scanner) text() ([]byte, bool) {
	from := s.i
	raw, esc, ok := s.str()
	if !ok || !esc {
		return raw, ok
	}
	var v string
	if err := json.Unmarshal(s.b[from:s.i], &v); err != nil {
		return nil, false
	}
	return []byte(v), true
}

// value skips one JSON value, checking its syntax.
func (s *scanner) value(depth int) bool {
	s.ws()
	if s.i >= len(s.b) {
		return false
	}
	switch c := s.b[s.i]; {
	case c == '"':
		_, _, ok := s.str()
		return ok
	case c == '{' || c == '[':
		if depth >= maxDepth {
			return false
		}
		s.i++
		end := byte(']')
		if c == '{' {
			end = '}'
		}
		if s.eat(end) {
			return true
		}
		for {
			if c == '{' {
				if _, ok := s.key(); !ok {
					return false
				}
			}
			if !s.value(depth + 1) {
				return false
			}
			if s.eat(',') {
				continue
			}
			return s.eat(end)
		}
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	case c == '-' || isDigit(c):
		return s.number()
	}
	return false
}

// boolean reads true or false.
func (s *scanner) boolean() (v, ok bool) {
	s.ws()
	if s.literal("true") {
		return true, true
	}
	return false, s.literal("false")
}

func (s *scanner) literal(lit string) bool {
	if len(s.b)-s.i < len(lit) || string(s.b[s.i:s.i+len(lit)]) != lit {
		return false
	}
	s.i += len(lit)
	return true
}

// number skips a JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number() bool {
	b, i := s.b, s.i
	if i < len(b) && b[i] == '-' {
		i++
	}
	digits := func() bool {
		from := i
		for i < len(b) && isDigit(b[i]) {
			i++
		}
		return i > from
	}
	if i < len(b) && b[i] == '0' {
		i++
	} else if !digits() {
		return false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	s.i = i
	return true
}
