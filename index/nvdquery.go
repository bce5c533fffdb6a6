package index

// Queries of NVD's CVE API 2.0 over the NVD records (see nvdapi.go).

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-json"
)

// NVDQuery is a checked query of NVD's CVE API: its zero value matches
// every record. Times are Unix milliseconds, both ends inclusive.
type NVDQuery struct {
	CVEID                    string
	LastModStart, LastModEnd int64
	HasLastMod               bool
	PubStart, PubEnd         int64
	HasPub                   bool
	NoRejected               bool
	CWE                      string // upper case
	// Severity of v2, v3 and v4: upper case, "" for any.
	Severity [3]string
	HasKEV   bool
	// KEVStart and KEVEnd bound the date CISA added the CVE (taken as
	// its midnight UTC).
	KEVStart, KEVEnd int64
	HasKEVDates      bool
	// Keywords are keywordSearch's terms; Phrase, with keywordExactMatch,
	// the whole value.
	Keywords []string
	Phrase   string
	Source   string
	Tag      string
	// Metrics are the vector parts of cvssV2Metrics, V3 and V4 ("AV:N",
	// "CVSS:3.1", ...); nil for any.
	Metrics                     [3][]string
	CertAlerts, CertNotes, OVAL bool
	// CPE is cpeName or virtualMatchString; nil for none.
	CPE *NVDCPE
}

// NVDResult is the records a query matched, in the order served.
type NVDResult struct {
	all bool    // every record: ids is nil
	ids []int32 // positions
	n   int
}

// Len is the number of records matched.
func (r NVDResult) Len() int { return r.n }

func (r NVDResult) at(i int) int32 {
	if r.all {
		return int32(i)
	}
	return r.ids[i]
}

// NVD returns the snapshot's NVD records (nil when it has none).
func (ix *Index) NVD() *NVD { return ix.nvd }

// SetNVD gives the index its NVD records; call it before the index is
// shared.
func (ix *Index) SetNVD(n *NVD) { ix.nvd = n }

// SearchNVD returns the records that match q.
func (ix *Index) SearchNVD(q *NVDQuery) NVDResult {
	n := ix.nvd
	if n.Len() == 0 {
		return NVDResult{}
	}
	if q.CPE != nil {
		return ix.searchCPE(q)
	}
	if q.CVEID != "" {
		p, ok := n.pos(q.CVEID)
		if !ok || !ix.nvdMatch(q, p, nil) {
			return NVDResult{}
		}
		return NVDResult{ids: []int32{p}, n: 1}
	}
	if q.isZero() {
		return NVDResult{all: true, n: len(n.recs)}
	}
	m := n.matcher(q)
	if m.none {
		return NVDResult{}
	}
	var ids []int32
	if q.Keywords != nil || q.Phrase != "" {
		if set := ix.keywordCandidates(q); set != nil {
			eachSet(set, func(p int32) {
				if ix.nvdMatch(q, p, &m) {
					ids = append(ids, p)
				}
			})
			return NVDResult{ids: ids, n: len(ids)}
		}
	}
	for p := range n.recs {
		if ix.nvdMatch(q, int32(p), &m) {
			ids = append(ids, int32(p))
		}
	}
	return NVDResult{ids: ids, n: len(ids)}
}

func (q *NVDQuery) isZero() bool {
	return !q.HasLastMod && !q.HasPub && !q.NoRejected && q.CWE == "" && q.Severity == [3]string{} &&
		!q.HasKEV && !q.HasKEVDates && q.Keywords == nil && q.Phrase == "" && q.Source == "" && q.Tag == "" &&
		q.Metrics[0] == nil && q.Metrics[1] == nil && q.Metrics[2] == nil && !q.CertAlerts && !q.CertNotes && !q.OVAL && q.CPE == nil
}

// searchCPE is SearchNVD for a query with a cpeName or a
// virtualMatchString: the records of the CVEs of its vendor and product,
// each decoded and its configurations matched.
func (ix *Index) searchCPE(q *NVDQuery) NVDResult {
	n := ix.nvd
	m := n.matcher(q)
	if m.none {
		return NVDResult{}
	}
	cands := ix.cpeCandidates(q.CPE)
	if q.CVEID != "" {
		p, ok := n.pos(q.CVEID)
		if !ok || !slices.Contains(cands, p) {
			return NVDResult{}
		}
		cands = []int32{p}
	}
	br := blockReader{n: n}
	defer br.release()
	var ids []int32
	var buf []byte
	// In the order of their blocks (each decoded once), the matches put
	// back in the order served after.
	for _, p := range cands {
		if !ix.nvdMatch(q, p, &m) {
			continue
		}
		raw, err := br.record(p)
		if err != nil {
			continue
		}
		if bytes.IndexByte(raw, nvdNewline) >= 0 {
			buf = appendRecord(buf[:0], raw)
			raw = buf
		}
		if cpeMatches(raw, q.CPE) {
			ids = append(ids, p)
		}
	}
	return NVDResult{ids: ids, n: len(ids)}
}

// nvdMatcher is a query resolved against the interned texts.
type nvdMatcher struct {
	none    bool // some wanted text is in no record
	texts   []uint32
	vectors [3]map[uint32]bool // per version with Metrics: the matching vectors
	sevMask uint16
	source  int64 // -1: any
}

func (n *NVD) matcher(q *NVDQuery) nvdMatcher {
	m := nvdMatcher{source: -1}
	want := func(kind byte, s string) {
		id, ok := n.strID[string(kind)+s]
		if !ok {
			m.none = true
		}
		m.texts = append(m.texts, id)
	}
	if q.CWE != "" {
		want(nvdKindCWE, q.CWE)
	}
	if q.Tag != "" {
		want(nvdKindTag, q.Tag)
	}
	for v, sev := range q.Severity {
		if sev != "" {
			m.sevMask |= sevBit(v+2, sev)
		}
	}
	for v, parts := range q.Metrics {
		if parts == nil {
			continue
		}
		set := map[uint32]bool{}
		kind := byte('2' + v)
		for id, s := range n.strs {
			if s[0] == kind && vectorHas(s[1:], parts) {
				set[uint32(id)] = true
			}
		}
		if len(set) == 0 {
			m.none = true
		}
		m.vectors[v] = set
	}
	if q.Source != "" {
		m.source = -2
		for i, s := range n.source {
			if s == q.Source {
				m.source = int64(i)
			}
		}
		if m.source == -2 {
			m.none = true
		}
	}
	return m
}

// vectorHas tells whether every part of parts is a part of vector.
func vectorHas(vector string, parts []string) bool {
	for _, p := range parts {
		found := false
		for rest := vector; rest != "" && !found; {
			var part string
			part, rest, _ = strings.Cut(rest, "/")
			found = part == p
		}
		if !found {
			return false
		}
	}
	return true
}

// nvdMatch tells whether the record at p matches q; m is q resolved
// (nil: resolve it here, for one record).
func (ix *Index) nvdMatch(q *NVDQuery, p int32, m *nvdMatcher) bool {
	n := ix.nvd
	if m == nil {
		mm := n.matcher(q)
		if mm.none {
			return false
		}
		m = &mm
	}
	r := &n.recs[p]
	switch {
	case q.HasLastMod && (r.mod < q.LastModStart || r.mod > q.LastModEnd),
		q.HasPub && (r.pub < q.PubStart || r.pub > q.PubEnd),
		q.NoRejected && r.flags&flagRejected != 0,
		q.HasKEV && r.kev == 0,
		q.CertAlerts && r.flags&flagCertAlerts == 0,
		q.CertNotes && r.flags&flagCertNotes == 0,
		q.OVAL && r.flags&flagOVAL == 0,
		m.source >= 0 && int64(r.source) != m.source:
		return false
	}
	if q.HasKEVDates {
		if r.kev == 0 {
			return false
		}
		at := int64(r.kev-1) * 86400 * 1000
		if at < q.KEVStart || at > q.KEVEnd {
			return false
		}
	}
	for v, sev := range q.Severity {
		if sev != "" && r.sev&sevBit(v+2, sev) == 0 {
			return false
		}
	}
	own := n.pool[r.lo : r.lo+uint32(r.n)]
	for _, id := range m.texts {
		if !containsID(own, id) {
			return false
		}
	}
	for _, set := range m.vectors {
		if set == nil {
			continue
		}
		found := false
		for _, id := range own {
			if set[id] {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	if q.Keywords != nil || q.Phrase != "" {
		return ix.keywordsMatch(q, r.key)
	}
	return true
}

func containsID(ids []uint32, id uint32) bool {
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// keywordsMatch matches keywordSearch against the CVE's description (the
// English one, as the CVE's summary holds it), as NVD does: every term
// starts a word of it ("circle" finds "circles", not "encircle"), in any
// order, letter case ignored; with keywordExactMatch the whole phrase
// does, and ends where a word ends.
func (ix *Index) keywordsMatch(q *NVDQuery, key uint64) bool {
	text := ix.nvdSummary(key) // nil for a CVE the index lacks: no word
	if q.Phrase != "" {
		return findWord(text, q.Phrase, true)
	}
	for _, k := range q.Keywords {
		if !findWord(text, k, false) {
			return false
		}
	}
	return true
}

// summaryText is the summary of a CVE body, unescaped.
func summaryText(body []byte) []byte {
	const key = `"summary":"`
	i := bytes.Index(body, []byte(key))
	if i < 0 {
		return nil
	}
	s := body[i+len(key)-1:]
	end := 1
	escaped := false
	for ; end < len(s); end++ {
		if s[end] == '\\' {
			escaped = true
			end++
			continue
		}
		if s[end] == '"' {
			break
		}
	}
	if end >= len(s) {
		return nil
	}
	if !escaped {
		return s[1:end]
	}
	var out string
	if err := json.Unmarshal(s[:end+1], &out); err != nil {
		return nil
	}
	return []byte(out)
}

func isWordByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80
}

// findWord tells whether w occurs in text, ignoring ASCII letter case,
// starting where a word starts and, with whole, ending where one ends.
func findWord(text []byte, w string, whole bool) bool {
	if w == "" {
		return true
	}
	for i := 0; i+len(w) <= len(text); i++ {
		if i > 0 && isWordByte(text[i-1]) && isWordByte(w[0]) {
			continue
		}
		if !equalFoldASCII(text[i:i+len(w)], w) {
			continue
		}
		if whole && i+len(w) < len(text) && isWordByte(text[i+len(w)]) && isWordByte(w[len(w)-1]) {
			continue
		}
		return true
	}
	return false
}

func equalFoldASCII(b []byte, s string) bool {
	for i := 0; i < len(b); i++ {
		x, y := b[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// NVDTimestampLayout is how NVD writes its times: UTC, milliseconds, no
// zone.
const NVDTimestampLayout = "2006-01-02T15:04:05.000"

// appendNVDEnvelope appends the head of an answer of NVD's APIs, up to
// the opening of its list named list: the paging facts of a page of at
// most size items from start out of total, format, and timestamp. It
// returns the items' range, from and to.
func appendNVDEnvelope(dst []byte, format, list string, total, start, size int, timestamp time.Time) (out []byte, from, to int) {
	from = min(start, total)
	to = min(from+size, total)
	dst = append(dst, `{"resultsPerPage":`...)
	dst = strconv.AppendInt(dst, int64(to-from), 10)
	dst = append(dst, `,"startIndex":`...)
	dst = strconv.AppendInt(dst, int64(start), 10)
	dst = append(dst, `,"totalResults":`...)
	dst = strconv.AppendInt(dst, int64(total), 10)
	dst = append(dst, `,"format":"`...)
	dst = append(dst, format...)
	dst = append(dst, `","version":"2.0","timestamp":"`...)
	dst = timestamp.UTC().AppendFormat(dst, NVDTimestampLayout)
	dst = append(dst, `","`...)
	dst = append(dst, list...)
	dst = append(dst, `":[`...)
	return dst, from, to
}

// AppendNVDPage appends NVD's answer to dst: the envelope with at most
// size records of r from start, and timestamp as its timestamp.
func (ix *Index) AppendNVDPage(dst []byte, r NVDResult, start, size int, timestamp time.Time) ([]byte, error) {
	var from, to int
	dst, from, to = appendNVDEnvelope(dst, "NVD_CVE", "vulnerabilities", r.Len(), start, size, timestamp)
	br := blockReader{n: ix.nvd}
	defer br.release()
	for i := from; i < to; i++ {
		raw, err := br.record(r.at(i))
		if err != nil {
			return dst, err
		}
		if i > from {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"cve":`...)
		dst = appendRecord(dst, raw)
		dst = append(dst, '}')
	}
	return append(dst, "]}"...), nil
}
