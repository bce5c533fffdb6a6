// Package httpapi serves the vulnd API over HTTP from an *index.Index.
//
// Every endpoint is a handler that returns a body or an error; one wrapper
// (Server.serve) writes every response: Content-Type, Vary, ETag,
// Content-Length, HEAD, 304 and JSON errors. Routes are matched on the
// escaped request path so names holding an escaped "/" stay reachable.
package httpapi

import (
	"log/slog"
	"net/http"
	"net/url"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/vulnd/vulnd/httpapi/wire"
	"github.com/vulnd/vulnd/index"
)

// DefaultPageSize is the number of items on a page of every paged list.
const DefaultPageSize = 20

// Options tune a Server.
type Options struct {
	// PageSize is the number of items per page; DefaultPageSize when 0.
	PageSize int
	// Log receives one line per panic recovered in a handler; nothing is
	// logged when it is nil.
	Log *slog.Logger
	// AccessLog, if set, receives one line per request answered.
	AccessLog *slog.Logger
	// Metrics, if set, counts and times every request.
	Metrics *Metrics
	// CacheControl is the Cache-Control header of every 200 and 304; none
	// when empty.
	CacheControl string
	// Draining, if set and true, makes every response say
	// "Connection: close", so clients and balancers stop reusing their
	// connections before the listener closes.
	Draining func() bool
	// Stale, if set, tells whether a snapshot's data is too old (vulnd
	// serve -max-data-age): GET /status shows it as stale.
	Stale func(*index.Index) bool
}

// Server answers API requests from whatever index its source returns at the
// start of each request. It is safe for concurrent use.
type Server struct {
	index        func() *index.Index
	pageSize     int
	log          *slog.Logger
	accessLog    *slog.Logger
	metrics      *Metrics
	noRoute      *routeMetrics
	cacheControl []string
	draining     func() bool
	stale        func(*index.Index) bool
	router       *httprouter.Router
	// static holds the routes without parameters, matched by a map
	// lookup before the router, which cannot hold /cve/batch beside
	// /cve/:name.
	static map[string]httprouter.Handle
	snap   atomic.Pointer[snapHeaders]
	zcache atomic.Pointer[zcache]
	pcache atomic.Pointer[pcache]
}

// New returns a Server that reads the live index from current once per
// request (typically an atomic.Pointer's Load).
func New(current func() *index.Index, opt Options) *Server {
	s := &Server{index: current, pageSize: opt.PageSize, log: opt.Log,
		accessLog: opt.AccessLog, metrics: opt.Metrics, draining: opt.Draining, stale: opt.Stale}
	if s.pageSize <= 0 {
		s.pageSize = DefaultPageSize
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if opt.CacheControl != "" {
		s.cacheControl = []string{opt.CacheControl}
	}
	if s.metrics != nil {
		s.noRoute = s.metrics.route(routeNone)
	}
	// The router is used only through Lookup, so its redirects, automatic
	// OPTIONS and 405 handling never run: those rules are ours.
	s.router = httprouter.New()
	s.router.RedirectTrailingSlash = false
	s.router.RedirectFixedPath = false
	s.router.HandleMethodNotAllowed = false
	s.router.HandleOPTIONS = false
	s.static = map[string]httprouter.Handle{}
	for _, rt := range routes {
		s.handle(rt.path, rt.h, rt.post)
	}
	return s
}

// handle routes GET (and so HEAD) requests for path to h through serve,
// and POST ones too when post is set.
func (s *Server) handle(path string, h handler, post bool) {
	var rm *routeMetrics
	if s.metrics != nil {
		rm = s.metrics.route(path)
	}
	handle := func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead && (r.Method != http.MethodPost || !post) {
			// Counted under this route: the path is one of ours.
			if post {
				w.Header()["Allow"] = allowPostHeader
				s.refuseAt(w, r, errMethodPost, rm)
			} else {
				w.Header()["Allow"] = allowHeader
				s.refuseAt(w, r, errMethod, rm)
			}
			return
		}
		s.serve(w, r, ps, h, rm, nil, nil)
	}
	if !strings.ContainsAny(path, ":*") {
		s.static[path] = handle
		return
	}
	s.router.GET(path, handle)
}

// handler computes one endpoint's answer, into dst when it builds a body
// (AppendX style: see result.appended).
type handler func(c call, dst []byte) (result, error)

// result is everything a handler answers, for serve to write: a JSON
// body or, when stream is set, that list streamed as NDJSON instead; for
// a page (page > 0), the page facts and the query parameters its links
// keep. It is kept small: every answer zeroes and copies it (with an
// index.List in it, 192 bytes, that was some 4% of BenchmarkServe's
// one-CVE request), so the rare NDJSON export pays an allocation for its
// list instead.
type result struct {
	body []byte
	// appended: body was appended to the handler's dst, so serve takes it
	// back as its buffer once written. Otherwise body is the snapshot's
	// (or its own) and is only read.
	appended bool
	// stale: the body is /status of a snapshot that turned stale, which
	// differs from the one served while it was not: it has an ETag of its
	// own (the snapshot's with "-stale"), If-Modified-Since does not make
	// it a 304, and its compressed form is not cached.
	stale bool
	// page is the page number of a page of a list of total items, else 0.
	page, total int
	// links are the query parameters (each followed by "&") the page's
	// Link header keeps besides page.
	links string
	// stream, if set, is the answer: a list of full bodies, as NDJSON.
	stream *index.List
}

// call is what a handler gets: the snapshot to answer from (read once per
// request), the request, its path parameters and the page size.
type call struct {
	ix       *index.Index
	r        *http.Request
	ps       httprouter.Params
	pageSize int
	stale    func(*index.Index) bool // Options.Stale
}

// param returns the named path parameter, percent-decoded. The router
// matched on the escaped path and ServeHTTP checked the escapes, so
// decoding cannot fail here.
func (c call) param(name string) string {
	v := c.ps.ByName(name)
	if d, err := url.PathUnescape(v); err == nil {
		return d
	}
	return v
}

// page answers page p of l, appended to dst; links are the query
// parameters its links keep.
func (c call) page(dst []byte, l index.List, p int, links string) (result, error) {
	return result{body: l.AppendPage(dst, p, c.pageSize), appended: true, page: p, total: l.Len(), links: links}, nil
}

// buffers are serve's, pooled: the body a handler appends to and the
// compressed body. Nothing of a snapshot stays in them but copies.
type buffers struct {
	body, z []byte
}

var bufPool = sync.Pool{New: func() any { return &buffers{body: make([]byte, 0, 16<<10)} }}

// maxPooledBuf keeps rare huge pages from pinning memory in the pool.
const maxPooledBuf = 1 << 20

// maxPath and maxQuery are the longest escaped path and raw query served;
// longer ones get 414. The listener marks targets by the same limits.
const (
	maxPath  = wire.MaxPath
	maxQuery = wire.MaxQuery
)

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if n := s.metrics.inFlightCount(); n != nil {
		n.Add(1)
		defer n.Add(-1)
	}
	if s.draining != nil && s.draining() {
		w.Header()["Connection"] = connClose
	}
	// A page kept for this very target needs no routing: the target
	// passed every check below when it was composed, and the same target
	// always takes the same route.
	if e, ix := s.cachedPage(r); e != nil {
		s.serve(w, r, nil, nil, e.rm, ix, e)
		return
	}
	path := r.URL.EscapedPath()
	// wire.NewListener rewrites a request line that net/http would refuse, or
	// that is too long to hold, to one of the marker targets, so the
	// answer is ours. Its choice of marker follows the order of these
	// checks.
	switch {
	case len(path) > maxPath || path == wire.PathTooLongTarget:
		s.refuse(w, r, errPathTooLong)
		return
	case len(r.URL.RawQuery) > maxQuery || path == wire.QueryTooLongTarget:
		s.refuse(w, r, errQueryTooLong)
		return
	case path == wire.BadEscapeTarget || !wire.ValidEscapes(path):
		s.refuse(w, r, errBadEscape)
		return
	case path == wire.BadQueryTarget:
		s.refuse(w, r, errBadQuery)
		return
	}
	var (
		h  httprouter.Handle
		ps httprouter.Params
	)
	if st, ok := s.static[path]; ok {
		h = st
	} else if h, ps, _ = s.router.Lookup(http.MethodGet, path); h == nil {
		s.refuse(w, r, errNoEndpoint)
		return
	}
	// h answers a method it does not serve with 405.
	h(w, r, ps)
}

// refuse answers a request that reached no route with err.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, err error) {
	s.refuseAt(w, r, err, s.noRoute)
}

// refuseAt answers a request with err, counted under rm.
func (s *Server) refuseAt(w http.ResponseWriter, r *http.Request, err error, rm *routeMetrics) {
	start := s.now()
	if ix := s.index(); ix != nil {
		w.Header()["X-Snapshot-Id"] = s.snapHeaders(ix).id
	}
	status, n := writeError(w, r, err)
	s.finish(r, rm, status, n, start)
}

var (
	jsonType    = []string{"application/json"}
	varyAccept  = []string{"Accept"}
	allowHeader = []string{"GET, HEAD"}
	connClose   = []string{"close"}
	// allowPostHeader is /cve/batch's.
	allowPostHeader = []string{"GET, HEAD, POST"}
)

// serve runs one endpoint's handler and writes its answer: the one
// writer of every answer. A panic in the handler, or anywhere in serve,
// is recovered here: see recovered. rm, if not nil, counts the answer.
// With hit, the page kept for r's target in the page cache of ix, the
// answer is that page and h is not run.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, ps httprouter.Params, h handler, rm *routeMetrics, ix *index.Index, hit *pageEntry) {
	start := s.now()
	if hit == nil {
		ix = s.index()
	}
	if ix == nil {
		status, n := writeError(w, r, errNotLoaded)
		s.finish(r, rm, status, n, start)
		return
	}
	sh := s.snapHeaders(ix)
	hdr := w.Header()
	hdr["X-Snapshot-Id"] = sh.id
	// The pooled buffers are taken only when something is composed or
	// compressed: a kept page sent as it is needs none, and a pool's Get
	// and Put were a fifth of such an answer's own work.
	var (
		bufs      *buffers
		status, n int
		wrote     bool // the response header may be out
	)
	defer func() {
		v := recover()
		if bufs != nil && cap(bufs.body) <= maxPooledBuf && cap(bufs.z) <= maxPooledBuf {
			bufPool.Put(bufs)
		}
		if v != nil {
			status, n = s.recovered(w, r, v, wrote)
		}
		s.finish(r, rm, status, n, start)
	}()
	var (
		res      result
		err      error
		pageHdrs *[2]string // a page's X-Total-Count and Link values
		fresh    bool       // res is no cached page: keep it if it is one
	)
	if hit != nil {
		res, pageHdrs = result{body: hit.body, page: hit.page, total: hit.total}, hit.headerValues()
	} else {
		bufs = bufPool.Get().(*buffers)
		res, err = h(call{ix: ix, r: r, ps: ps, pageSize: s.pageSize, stale: s.stale}, bufs.body[:0])
		if res.appended {
			bufs.body = res.body[:0] // take back what came out
		}
		fresh = true
	}
	if err != nil {
		wrote = true
		status, n = writeError(w, r, err)
		return
	}
	if res.page > 0 && pageHdrs == nil {
		pageHdrs = pageHeaderValues(r.URL.EscapedPath(), res.links, res.page, res.total, s.pageSize)
		if fresh && res.stream == nil && !res.stale {
			s.keepPage(r, ix.ETag(), &res, pageHdrs, rm)
		}
	}
	// Headers, validators, 304, HEAD and Content-Length alike, then the
	// body whole or, for NDJSON, streamed.
	body, size, coding := res.body, len(res.body), identity
	switch {
	case res.stream != nil:
		// NDJSON exports are never compressed: they stream.
		hdr["Content-Type"] = ndjsonType
		hdr["Vary"] = varyAccept
		hdr["X-Total-Count"] = []string{strconv.Itoa(res.stream.Len())}
		size = streamSize(*res.stream)
	case len(body) >= minCompress:
		// A body this size is compressed for clients that ask, so its URL
		// varies by Accept-Encoding; a smaller one never is.
		hdr["Content-Type"] = jsonType
		hdr["Vary"] = varyEncoding
		coding = chooseCoding(r.Header["Accept-Encoding"])
	default:
		hdr["Content-Type"] = jsonType
		hdr["Vary"] = varyAccept
	}
	// A compressed body is another representation: its tag is weak, as
	// nginx makes it, and If-None-Match compares tags weakly either way.
	tag, etag, weak, modTime := ix.ETag(), sh.etag, sh.weakETag, sh.modTime
	if res.stale {
		tag, modTime = sh.staleETag[0], time.Time{}
		etag, weak = sh.staleETag, sh.staleWeakETag
	}
	if coding == identity {
		s.setValidators(hdr, sh, etag)
	} else {
		s.setValidators(hdr, sh, weak)
	}
	if r.Method != http.MethodPost && notModified(r, tag, modTime) {
		wrote, status = true, http.StatusNotModified
		w.WriteHeader(status)
		return
	}
	if coding != identity && bufs == nil {
		bufs = bufPool.Get().(*buffers)
	}
	switch {
	case coding != identity && res.stale:
		body = compress(bufs.z[:0], body, coding)
		bufs.z, size = body, len(body)
		hdr["Content-Encoding"] = contentEncoding[coding]
	case coding != identity:
		body, bufs.z = s.compressed(bufs.z[:0], r, ix.ETag(), body, coding)
		size = len(body)
		hdr["Content-Encoding"] = contentEncoding[coding]
	}
	if hit != nil && coding == identity {
		hdr["Content-Length"] = hit.vals[2:3:3]
	} else {
		hdr["Content-Length"] = contentLength(size)
	}
	if res.page > 0 {
		hdr["X-Total-Count"] = pageHdrs[0:1:1]
		hdr["Link"] = pageHdrs[1:2:2]
	}
	wrote, status = true, http.StatusOK
	w.WriteHeader(status)
	switch {
	case r.Method == http.MethodHead:
	case res.stream != nil:
		n, bufs.body = stream(w, *res.stream, bufs.body[:0])
	default:
		n, _ = w.Write(body)
	}
}

var ndjsonType = []string{"application/x-ndjson"}

// streamChunk is how much of an ndjson export is written at a time; each
// write gets writeGrace more to finish, so a long export is bounded by the
// client's pace, not by the server's WriteTimeout.
const (
	streamChunk = 256 << 10
	writeGrace  = 30 * time.Second
)

// streamSize is the length of l's NDJSON export: each body and a newline.
func streamSize(l index.List) int {
	size := 0
	for i := 0; i < l.Len(); i++ {
		size += len(l.Item(i)) + 1
	}
	return size
}

// stream writes l, a list of full CVE bodies, as NDJSON: one body and a
// newline each, through buf in pieces of about streamChunk bytes, each
// with a fresh write deadline, so a large export to a slow client is not
// cut by the server's WriteTimeout while it keeps reading. It returns the
// bytes written and buf as grown; it stops at the first failed write.
func stream(w http.ResponseWriter, l index.List, buf []byte) (n int, grown []byte) {
	rc := http.NewResponseController(w)
	flush := func() bool {
		rc.SetWriteDeadline(time.Now().Add(writeGrace)) // not every writer can; then the server's limit holds
		m, err := w.Write(buf)
		n += m
		buf = buf[:0]
		return err == nil
	}
	for i := 0; i < l.Len(); i++ {
		buf = append(buf, l.Item(i)...)
		buf = append(buf, '\n')
		if len(buf) >= streamChunk && !flush() {
			break
		}
	}
	if len(buf) > 0 {
		flush()
	}
	return n, buf
}

// compressed returns body in coding: from the cache when this target of
// this snapshot was compressed before, else compressed into dst (and
// kept for next time, for GET and HEAD). It returns dst as grown, to be
// used again.
func (s *Server) compressed(dst []byte, r *http.Request, tag string, body []byte, coding coding) (out, grown []byte) {
	cacheable := r.Method != http.MethodPost && r.RequestURI != ""
	z := s.zcache.Load()
	if cacheable && z != nil && z.tag == tag {
		if b, ok := z.get(coding, r.RequestURI); ok {
			return b, dst
		}
	}
	dst = compress(dst, body, coding)
	if !cacheable {
		return dst, dst
	}
	if z == nil || z.tag != tag {
		nz := newZcache(tag)
		if s.zcache.CompareAndSwap(z, nz) {
			z = nz
		} else if z = s.zcache.Load(); z == nil || z.tag != tag {
			return dst, dst
		}
	}
	if !z.put(coding, r.RequestURI, dst) {
		s.zcache.CompareAndSwap(z, newZcache(tag)) // full: start over
	}
	return dst, dst
}

// now is the start time of a request when something will measure it.
func (s *Server) now() time.Time {
	if s.metrics == nil && s.accessLog == nil {
		return time.Time{}
	}
	return time.Now()
}

// finish counts and logs one answer: status, n body bytes written.
func (s *Server) finish(r *http.Request, rm *routeMetrics, status, n int, start time.Time) {
	if rm == nil && s.accessLog == nil {
		return
	}
	d := time.Since(start)
	if rm != nil {
		rm.observe(status, d)
	}
	if s.accessLog != nil {
		s.accessLog.LogAttrs(r.Context(), slog.LevelInfo, "request",
			slog.String("method", r.Method), slog.String("path", r.URL.EscapedPath()),
			slog.String("query", r.URL.RawQuery), slog.Int("status", status),
			slog.Int("bytes", n), slog.Duration("duration", d), slog.String("remote", r.RemoteAddr))
	}
}

// recovered handles the panic value v of a request: it logs one line with
// the value, the request and the stack, then answers 500 "internal error"
// in JSON. If the response header may already be out (wrote), a second one
// would corrupt the response, so it panics with http.ErrAbortHandler
// instead: net/http then cuts the connection without logging again, and the
// client cannot take a cut response for a whole one.
func (s *Server) recovered(w http.ResponseWriter, r *http.Request, v any, wrote bool) (status, n int) {
	if v == http.ErrAbortHandler {
		panic(v) // an abort asked for on purpose: net/http's to handle
	}
	s.log.Error("panic serving request", "panic", v, "method", r.Method,
		"path", r.URL.EscapedPath(), "query", r.URL.RawQuery, "wrote_header", wrote,
		"stack", string(debug.Stack()))
	if wrote {
		panic(http.ErrAbortHandler)
	}
	return writeError(w, r, errInternal)
}
