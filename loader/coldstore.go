package loader

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"sort"

	"github.com/vulnd/vulnd/index"
)

// coldStore keeps, in a spill file beside -o, the fields of a build's
// NVD CVEs that only their API body and the id tables read (Summary,
// CWEs, References, CPEs): a full build holds every CVE from the feeds
// to the write, and these are two thirds of what it holds (at 100k CVEs,
// 20 MB of summaries, 25 MB of links, 26 MB of Reference structs, 60 MB
// of CPE structs and 22 MB of CPE URIs). readFeedsAt writes each
// winning record's fields as it is read and clears them; the ids are
// assigned from the URIs read back (see idTables.assign), and the write
// reads the fields back, a CVE at a time, for its body (see eachBody,
// which gives each CPE its id from cpeIDs) and its references' ids (see
// writeIDs).
//
// A CVE the store does not hold (one served from its JSON 5 record)
// keeps its fields in memory. A nil *coldStore holds nothing.
type coldStore struct {
	f   *os.File
	w   *bufio.Writer
	end int64 // bytes written
	err error // the first write error

	// Sorted by name (see index): where each CVE's fields are, how
	// long, and how many references it has.
	names []string
	at    []int64
	size  []uint32
	refs  []uint32
	cpes  []uint32

	// cpeIDs is the id of each CPE URI (idTables.cpe, which assign
	// sets here; the write lets it go once the bodies are written).
	cpeIDs map[string]int64
}

func newColdStore(f *os.File) *coldStore {
	return &coldStore{f: f, w: bufio.NewWriterSize(f, 1<<20)}
}

// coldRef is where put wrote a CVE's fields.
type coldRef struct {
	at   int64
	size uint32
	refs uint32
	cpes uint32
}

// put writes c's cold fields to the file and clears them in c.
func (s *coldStore) put(c *index.CVE) coldRef {
	var b []byte
	b = appendColdString(b, c.Summary)
	b = binary.AppendUvarint(b, uint64(len(c.CWEs)))
	for _, w := range c.CWEs {
		b = appendColdString(b, w)
	}
	b = binary.AppendUvarint(b, uint64(len(c.References)))
	for i := range c.References {
		r := &c.References[i]
		b = appendColdString(b, r.Description)
		b = appendColdString(b, r.Link)
		b = appendColdString(b, r.Source)
		b = appendColdString(b, r.Type)
	}
	b = binary.AppendUvarint(b, uint64(len(c.CPEs)))
	for i := range c.CPEs {
		p := &c.CPEs[i]
		b = appendColdString(b, p.URI)
		vulnerable := byte(0)
		if p.Vulnerable {
			vulnerable = 1
		}
		b = append(b, vulnerable)
		b = appendColdString(b, p.VersionStartIncluding)
		b = appendColdString(b, p.VersionStartExcluding)
		b = appendColdString(b, p.VersionEndIncluding)
		b = appendColdString(b, p.VersionEndExcluding)
	}
	ref := coldRef{at: s.end, size: uint32(len(b)), refs: uint32(len(c.References)), cpes: uint32(len(c.CPEs))}
	if s.err == nil {
		_, s.err = s.w.Write(b)
	}
	s.end += int64(len(b))
	c.Summary, c.CWEs, c.References, c.CPEs = "", nil, nil, nil
	return ref
}

func appendColdString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// index flushes the file and records where each CVE's fields are: refs
// in the order of names, which are ascending.
func (s *coldStore) index(names []string, refs []coldRef) error {
	if s.err == nil {
		s.err = s.w.Flush()
	}
	s.w = nil
	if s.err != nil {
		return fmt.Errorf("loader: spilling CVEs: %w", s.err)
	}
	s.names = names
	s.at, s.size, s.refs, s.cpes = make([]int64, len(refs)), make([]uint32, len(refs)), make([]uint32, len(refs)), make([]uint32, len(refs))
	for i, r := range refs {
		s.at[i], s.size[i], s.refs[i], s.cpes[i] = r.at, r.size, r.refs, r.cpes
	}
	return nil
}

// find returns the place of the CVE name in the store, -1 for none.
func (s *coldStore) find(name string) int {
	if s == nil {
		return -1
	}
	i := sort.SearchStrings(s.names, name)
	if i < len(s.names) && s.names[i] == name {
		return i
	}
	return -1
}

// refCount is the number of references of c, held or in the store.
func (s *coldStore) refCount(c *index.CVE) int {
	if i := s.find(c.Name); i >= 0 {
		return int(s.refs[i])
	}
	return len(c.References)
}

// cpeCount is the number of CPEs of c, held or in the store.
func (s *coldStore) cpeCount(c *index.CVE) int {
	if i := s.find(c.Name); i >= 0 {
		return int(s.cpes[i])
	}
	return len(c.CPEs)
}

// fill sets c's cold fields from the store (c is left as it is when the
// store does not hold it); buf is reused for the bytes read and returned.
func (s *coldStore) fill(c *index.CVE, buf []byte) ([]byte, error) {
	i := s.find(c.Name)
	if i < 0 {
		return buf, nil
	}
	buf, err := s.read(i, c.Name, buf)
	if err != nil {
		return buf, err
	}
	r := coldReader{b: buf}
	c.Summary = r.str()
	c.CWEs = make([]string, r.n())
	for k := range c.CWEs {
		c.CWEs[k] = r.str()
	}
	c.References = make([]index.Reference, r.n())
	for k := range c.References {
		ref := &c.References[k]
		ref.Description, ref.Link, ref.Source, ref.Type = r.str(), r.str(), r.str(), r.str()
	}
	if n := r.n(); n > 0 {
		c.CPEs = make([]index.CPE, n)
		for k := range c.CPEs {
			p := &c.CPEs[k]
			p.URI = r.str()
			p.Vulnerable = r.byte() == 1
			p.VersionStartIncluding, p.VersionStartExcluding, p.VersionEndIncluding, p.VersionEndExcluding = r.str(), r.str(), r.str(), r.str()
			if r.bad {
				break
			}
			var err error
			if p.Vendor, p.Product, p.Version, err = parseCPE(p.URI); err != nil {
				return buf, fmt.Errorf("loader: reading spilled CVE %s: %w", c.Name, err)
			}
			p.ID = s.cpeIDs[p.URI]
		}
	}
	if r.bad || len(r.b) != 0 {
		return buf, fmt.Errorf("loader: reading spilled CVE %s: %w", c.Name, errColdRecord)
	}
	return buf, nil
}

// refsOf is c's references, held or from the store (see fill); their
// descriptions, sources and types are left empty.
func (s *coldStore) refsOf(c *index.CVE, buf []byte) ([]index.Reference, []byte, error) {
	i := s.find(c.Name)
	if i < 0 {
		return c.References, buf, nil
	}
	buf, err := s.read(i, c.Name, buf)
	if err != nil {
		return nil, buf, err
	}
	r := coldReader{b: buf}
	r.skip()
	for range r.n() {
		r.skip()
	}
	refs := make([]index.Reference, r.n())
	for k := range refs {
		r.skip()
		refs[k].Link = r.str()
		r.skip()
		r.skip()
	}
	if r.bad {
		return nil, buf, fmt.Errorf("loader: reading spilled CVE %s: %w", c.Name, errColdRecord)
	}
	return refs, buf, nil
}

// eachCPEURI passes the URI of each CPE of the i-th CVE to f, as bytes
// valid during the call.
func (s *coldStore) eachCPEURI(i int, buf []byte, f func(uri []byte)) ([]byte, error) {
	buf, err := s.read(i, s.names[i], buf)
	if err != nil {
		return buf, err
	}
	r := coldReader{b: buf}
	r.skip()
	for range r.n() {
		r.skip()
	}
	for range 4 * r.n() {
		r.skip()
	}
	for range r.n() {
		n := r.n()
		if r.bad || n > len(r.b) {
			break
		}
		f(r.b[:n])
		r.b = r.b[n:]
		r.byte()
		for range 4 {
			r.skip()
		}
	}
	if r.bad || len(r.b) != 0 {
		return buf, fmt.Errorf("loader: reading spilled CVE %s: %w", s.names[i], errColdRecord)
	}
	return buf, nil
}

// read reads the i-th CVE's record into buf (reused when large enough).
func (s *coldStore) read(i int, name string, buf []byte) ([]byte, error) {
	if cap(buf) < int(s.size[i]) {
		buf = make([]byte, s.size[i])
	}
	buf = buf[:s.size[i]]
	if _, err := s.f.ReadAt(buf, s.at[i]); err != nil {
		return buf, fmt.Errorf("loader: reading spilled CVE %s: %w", name, err)
	}
	return buf, nil
}

var errColdRecord = errors.New("bad record")

type coldReader struct {
	b   []byte
	bad bool
}

func (r *coldReader) n() int {
	v, k := binary.Uvarint(r.b)
	if k <= 0 || v > uint64(len(r.b)) {
		r.bad, r.b = true, nil
		return 0
	}
	r.b = r.b[k:]
	return int(v)
}

func (r *coldReader) byte() byte {
	if len(r.b) == 0 {
		r.bad = true
		return 0
	}
	v := r.b[0]
	r.b = r.b[1:]
	return v
}

func (r *coldReader) skip() {
	n := r.n()
	if n > len(r.b) {
		r.bad, r.b = true, nil
		return
	}
	r.b = r.b[n:]
}

func (r *coldReader) str() string {
	n := r.n()
	if n > len(r.b) {
		r.bad, r.b = true, nil
		return ""
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s
}
