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
// NVD CVEs that only their API body and the id table of references read
// (Summary, CWEs, References): a full build holds every CVE from the
// feeds to the write, and these are a third of what it holds (at 100k
// CVEs, 20 MB of summaries, 25 MB of links and 26 MB of Reference
// structs). readFeedsAt writes each winning record's fields as it is
// read and clears them; the write reads them back, a CVE at a time, for
// its body (see eachBody) and its references' ids (see writeIDs).
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
}

func newColdStore(f *os.File) *coldStore {
	return &coldStore{f: f, w: bufio.NewWriterSize(f, 1<<20)}
}

// coldRef is where put wrote a CVE's fields.
type coldRef struct {
	at   int64
	size uint32
	refs uint32
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
	ref := coldRef{at: s.end, size: uint32(len(b)), refs: uint32(len(c.References))}
	if s.err == nil {
		_, s.err = s.w.Write(b)
	}
	s.end += int64(len(b))
	c.Summary, c.CWEs, c.References = "", nil, nil
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
	s.at, s.size, s.refs = make([]int64, len(refs)), make([]uint32, len(refs)), make([]uint32, len(refs))
	for i, r := range refs {
		s.at[i], s.size[i], s.refs[i] = r.at, r.size, r.refs
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
	if r.bad || len(r.b) != 0 {
		return nil, buf, fmt.Errorf("loader: reading spilled CVE %s: %w", c.Name, errColdRecord)
	}
	return refs, buf, nil
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
