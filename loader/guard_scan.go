package loader

import (
	"bytes"

	"github.com/goccy/go-json"
)

// The stamps of a CVE body without decoding it: every body starts with
// its name, summary, created_at and updated_at, in this order (see
// index.EncodeCVE), so a stamp is read from the first members alone, and
// the rest (most of the body) is not scanned. vulnd publish's refresh
// guard reads two snapshots' stamps; decoding every body took it about 1
// s for 100,000 CVEs on a busy 2-core machine.

// Each member's start in a body, as EncodeCVE writes them.
var (
	stampName      = []byte(`{"name":"`)
	stampSummary   = []byte(`,"summary":"`)
	stampCreatedAt = []byte(`,"created_at":"`)
	stampUpdatedAt = []byte(`,"updated_at":"`)
)

// parseStamp reads line's stamp from its first members, and falls back
// to decoding it whole when they are not as EncodeCVE writes them (or a
// name or time holds an escape): the same result either way.
func parseStamp(line []byte, st *Stamp) error {
	if name, _, updated, ok := bodyHead(line); ok {
		st.Name, st.UpdatedAt = string(name), string(updated)
		return nil
	}
	*st = Stamp{}
	return json.Unmarshal(line, st)
}

// bodyHead reads a body's name, created_at and updated_at from its first
// members, as EncodeCVE writes them; false when they are not so, or one
// of them holds an escape (the body is then to be decoded whole).
func bodyHead(line []byte) (name, created, updated []byte, ok bool) {
	name, rest, ok := stampString(line, stampName)
	if ok {
		_, rest, ok = stampString(rest, stampSummary)
	}
	if ok {
		created, rest, ok = stampString(rest, stampCreatedAt)
	}
	if ok {
		updated, _, ok = stampString(rest, stampUpdatedAt)
	}
	for _, f := range [][]byte{name, created, updated} {
		ok = ok && bytes.IndexByte(f, '\\') < 0
	}
	if !ok {
		return nil, nil, nil, false
	}
	return name, created, updated, true
}

// stampString reads, at the start of b, prefix (which ends in the
// string's opening quote) and a JSON string up to its closing quote: the
// string's raw bytes (escapes left as they are) and what follows it.
func stampString(b, prefix []byte) (raw, rest []byte, ok bool) {
	if !bytes.HasPrefix(b, prefix) {
		return nil, nil, false
	}
	b = b[len(prefix):]
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++ // the escaped byte (of \", \\ or \uXXXX's u)
		case '"':
			return b[:i], b[i+1:], true
		}
	}
	return nil, nil, false
}
