package httpapi

import (
	"bytes"
	"net/http"
	"strconv"
	"sync"

	"github.com/vulnd/vulnd/index"
)

// pcache keeps the pages of lists one snapshot answered, composed, by
// request target: a page is assembled from 20 or so bodies that lie
// anywhere in the index (a copy of each, the filter's work, its Link and
// X-Total-Count values), and clients that poll ask for the same pages
// again and again (page 1 of the newest CVEs, a vendor's CVEs). A hit
// answers with the kept body and header values, shared and never
// written, so it costs no allocation. Only pages are kept: single items
// are the snapshot's own bytes already, and errors are cheap. Like
// zcache, it belongs to one snapshot (its ETag) and starts over empty
// when full, so its memory is bounded by pcacheMax.
type pcache struct {
	tag  string
	mu   sync.RWMutex
	m    map[string]*pageEntry
	size int
}

// pageEntry is a page as serve writes it.
type pageEntry struct {
	body        []byte
	page, total int
	// vals are the X-Total-Count, Link and (for the body as it is)
	// Content-Length values. Their bytes and the target the page is kept
	// under are one string, and the values' array is in the entry: a hit
	// reads a few cache lines besides the body, as the Go ceiling of make
	// bench-load does, where values kept apart cost a cache miss each on
	// a busy machine. In the string, Content-Length and X-Total-Count
	// follow the target, and Link, the long one, comes last: the map's
	// key comparison has just read the target, and net/http parses
	// Content-Length as soon as the header is written, so the two short
	// values share the target's cache line (at 400k CVEs, with that line
	// behind Link, parsing Content-Length took 90 ns a hit in perf
	// against the Go ceiling's 20).
	vals [3]string
	// rm counts the answers of the page's route (nil without metrics).
	rm *routeMetrics
}

// newPageEntry copies res, the page answering target, with its
// X-Total-Count and Link values hdrs; key is target, in the entry's
// string.
func newPageEntry(target string, res *result, hdrs *[2]string, rm *routeMetrics) (key string, e *pageEntry) {
	clen := strconv.Itoa(len(res.body))
	text := target + clen + hdrs[0] + hdrs[1]
	key, text = text[:len(target)], text[len(target):]
	e = &pageEntry{body: bytes.Clone(res.body), page: res.page, total: res.total, rm: rm}
	e.vals[2], text = text[:len(clen)], text[len(clen):]
	e.vals[0], e.vals[1] = text[:len(hdrs[0])], text[len(hdrs[0]):]
	return key, e
}

// headerValues are e's X-Total-Count and Link values, as serve takes them.
func (e *pageEntry) headerValues() *[2]string { return (*[2]string)(e.vals[:2]) }

// pcacheMax bounds the bytes one pcache holds (bodies, targets and
// header values); 64 MB is some 10,000 pages of 20 CVE summaries.
const pcacheMax = 64 << 20

func newPcache(tag string) *pcache {
	return &pcache{tag: tag, m: map[string]*pageEntry{}}
}

func (p *pcache) get(target string) (*pageEntry, bool) {
	p.mu.RLock()
	e, ok := p.m[target]
	p.mu.RUnlock()
	return e, ok
}

// put keeps a copy of res's page under target; false when the cache is
// full.
func (p *pcache) put(target string, res *result, hdrs *[2]string, rm *routeMetrics) bool {
	cost := len(res.body) + len(target) + len(hdrs[0]) + len(hdrs[1])
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.size+cost > pcacheMax {
		return false
	}
	if _, ok := p.m[target]; !ok {
		key, e := newPageEntry(target, res, hdrs, rm)
		p.m[key] = e
		p.size += cost
	}
	return true
}

// pageCacheable tells whether r's answer may come from, and go to, the
// page cache: a GET or HEAD with a request target to key it by.
func pageCacheable(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) && r.RequestURI != ""
}

// cachedPage returns the page kept for r's target, and the snapshot it
// was kept for, when that snapshot is the one served; nil otherwise. It is
// asked before routing: a kept target passed the router and every check of
// ServeHTTP, and the same target always does.
func (s *Server) cachedPage(r *http.Request) (*pageEntry, *index.Index) {
	if !pageCacheable(r) {
		return nil, nil
	}
	p := s.pcache.Load()
	if p == nil {
		return nil, nil
	}
	e, ok := p.get(r.RequestURI)
	if !ok {
		return nil, nil
	}
	ix := s.index()
	if ix == nil || ix.ETag() != p.tag {
		return nil, nil
	}
	return e, ix
}

// keepPage keeps res, a page of the snapshot tagged tag answering r, with
// its header values and its route's metrics.
func (s *Server) keepPage(r *http.Request, tag string, res *result, hdrs *[2]string, rm *routeMetrics) {
	if !pageCacheable(r) {
		return
	}
	p := s.pcache.Load()
	if p == nil || p.tag != tag {
		np := newPcache(tag)
		if s.pcache.CompareAndSwap(p, np) {
			p = np
		} else if p = s.pcache.Load(); p == nil || p.tag != tag {
			return
		}
	}
	if !p.put(r.RequestURI, res, hdrs, rm) {
		s.pcache.CompareAndSwap(p, newPcache(tag)) // full: start over
	}
}
