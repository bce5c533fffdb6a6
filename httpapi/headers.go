package httpapi

// The headers of an answer: validators and conditional requests, the
// values every response of one snapshot shares, lengths and paging.

import (
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/vulnd/vulnd/index"
)

// setValidators sets what a 200 or 304 says about its snapshot's version:
// the ETag (etag: sh's strong or weak form), Last-Modified and the
// operator's Cache-Control.
func (s *Server) setValidators(hdr http.Header, sh *snapHeaders, etag []string) {
	hdr["Etag"] = etag
	hdr["Last-Modified"] = sh.lastModified
	if s.cacheControl != nil {
		hdr["Cache-Control"] = s.cacheControl
	}
}

// notModified evaluates If-None-Match, or when it is absent
// If-Modified-Since (RFC 9110, 13.2.2), against the snapshot's tag and
// build time.
func notModified(r *http.Request, etag string, modTime time.Time) bool {
	if inm := r.Header["If-None-Match"]; inm != nil {
		return etagMatches(inm, etag)
	}
	ims := r.Header["If-Modified-Since"]
	if len(ims) == 0 || modTime.IsZero() {
		return false
	}
	t, err := http.ParseTime(ims[0])
	return err == nil && !modTime.After(t)
}

// snapHeaders are the header values every response from one snapshot
// shares. net/http never changes a header's value slice, so one slice per
// snapshot serves all its responses.
type snapHeaders struct {
	tag      string
	etag     []string // the strong tag
	weakETag []string // W/ and the tag, for compressed bodies
	// staleETag and staleWeakETag are those of /status once the snapshot
	// is stale (see result.stale).
	staleETag, staleWeakETag []string
	id                       []string // X-Snapshot-Id
	lastModified             []string // the build time, in HTTP's form
	modTime                  time.Time
}

// snapHeaders returns the header values of ix, made when the first request
// sees a new snapshot. The cache is keyed by the tag, not the index, so it
// never keeps a replaced snapshot in memory.
func (s *Server) snapHeaders(ix *index.Index) *snapHeaders {
	tag := ix.ETag()
	if sh := s.snap.Load(); sh != nil && sh.tag == tag {
		return sh
	}
	meta := ix.Meta()
	stale := strings.TrimSuffix(tag, `"`) + `-stale"`
	sh := &snapHeaders{tag: tag, etag: []string{tag}, weakETag: []string{"W/" + tag}, id: []string{meta.ID},
		staleETag: []string{stale}, staleWeakETag: []string{"W/" + stale}}
	if t, ok := meta.BuiltTime(); ok {
		sh.modTime = t
		sh.lastModified = []string{t.UTC().Format(http.TimeFormat)}
	}
	s.snap.Store(sh)
	return sh
}

// contentLengths holds the Content-Length header value of every length
// below len(contentLengths), each made on first use and then shared like
// jsonType, so writing a response's length allocates nothing. It stays
// because it measurably matters: with []string{strconv.Itoa(n)} instead,
// BenchmarkServe's one CVE went from 1 to 3 allocs/op and 342 to 387
// ns/op (a page from 2 to 4 and 1293 to 1640), and TestServeAllocs fails.
var contentLengths [1 << 16]atomic.Pointer[[]string]

// contentLength returns the Content-Length header value for n bytes.
func contentLength(n int) []string {
	if n >= len(contentLengths) {
		return []string{strconv.Itoa(n)}
	}
	if v := contentLengths[n].Load(); v != nil {
		return *v
	}
	v := []string{strconv.Itoa(n)}
	contentLengths[n].Store(&v)
	return v
}

// pageHeaderValues are the X-Total-Count (the list's length) and Link (RFC 8288:
// first, prev, next and last pages, as paths relative to this server) for
// page p of a list of total items, size to a page. prev is left out on
// page 1 and next on the last page; past the end, prev is the last page.
// params are the query parameters the links keep, each ending in "&".
// Both values are built on the stack and copied out in one string: two
// allocations a page (that string and the values' array), made once per
// page kept in the page cache.
func pageHeaderValues(path, params string, p, total, size int) *[2]string {
	last := max(1, (total+size-1)/size)
	var buf [512]byte
	b := strconv.AppendInt(buf[:0], int64(total), 10)
	n := len(b)
	link := func(b []byte, page int, rel string) []byte {
		if len(b) > n {
			b = append(b, ", "...)
		}
		b = append(b, '<')
		b = append(b, path...)
		b = append(b, '?')
		b = append(b, params...)
		b = append(b, "page="...)
		b = strconv.AppendInt(b, int64(page), 10)
		b = append(b, ">; rel=\""...)
		b = append(b, rel...)
		return append(b, '"')
	}
	b = link(b, 1, "first")
	if p > 1 {
		b = link(b, min(p-1, last), "prev")
	}
	if p < last {
		b = link(b, p+1, "next")
	}
	b = link(b, last, "last")
	s := string(b)
	return &[2]string{s[:n], s[n:]}
}

// etagMatches implements If-None-Match's weak comparison against our tag:
// "*" or any listed tag equal to ours, with or without W/.
func etagMatches(headers []string, etag string) bool {
	for _, h := range headers {
		for len(h) > 0 {
			for len(h) > 0 && (h[0] == ' ' || h[0] == '\t' || h[0] == ',') {
				h = h[1:]
			}
			if len(h) == 0 {
				break
			}
			if h[0] == '*' {
				return true
			}
			if len(h) > 2 && h[0] == 'W' && h[1] == '/' {
				h = h[2:]
			}
			if len(h) == 0 || h[0] != '"' {
				return false // malformed: stop, no match
			}
			end := 1
			for end < len(h) && h[end] != '"' {
				end++
			}
			if end == len(h) {
				return false
			}
			if h[:end+1] == etag {
				return true
			}
			h = h[end+1:]
		}
	}
	return false
}
