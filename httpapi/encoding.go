package httpapi

import (
	"bytes"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
)

// coding is a response's content coding.
type coding uint8

const (
	identity coding = iota
	codingGzip
	codingZstd
)

// minCompress is the smallest body compressed: below about 1 KiB the
// saving is a packet at most and the cost is the same fixed work.
const minCompress = 1024

var (
	contentEncoding = [...][]string{codingGzip: {"gzip"}, codingZstd: {"zstd"}}
	varyEncoding    = []string{"Accept, Accept-Encoding"}
)

// chooseCoding picks the coding of a response from the request's
// Accept-Encoding values (RFC 9110, 12.5.3): the acceptable coding with
// the highest q, zstd before gzip on a tie, identity when neither is
// acceptable. "*" stands for any coding not listed; "x-gzip" is gzip.
func chooseCoding(headers []string) coding {
	qGzip, qZstd, qAny := -1, -1, -1 // thousandths; -1: not listed
	for _, h := range headers {
		for h != "" {
			var item string
			item, h, _ = strings.Cut(h, ",")
			name, params, _ := strings.Cut(item, ";")
			name = strings.TrimSpace(name)
			q := parseQ(params)
			switch {
			case equalFoldASCII(name, "zstd"):
				qZstd = max(qZstd, q)
			case equalFoldASCII(name, "gzip"), equalFoldASCII(name, "x-gzip"):
				qGzip = max(qGzip, q)
			case name == "*":
				qAny = max(qAny, q)
			}
		}
	}
	if qZstd < 0 {
		qZstd = qAny
	}
	if qGzip < 0 {
		qGzip = qAny
	}
	switch {
	case qZstd > 0 && qZstd >= qGzip:
		return codingZstd
	case qGzip > 0:
		return codingGzip
	}
	return identity
}

// parseQ returns the q parameter of an Accept-Encoding item in
// thousandths: 1000 when absent, 0 when malformed (not acceptable).
func parseQ(params string) int {
	for params != "" {
		var p string
		p, params, _ = strings.Cut(params, ";")
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		if !equalFoldASCII(strings.TrimSpace(k), "q") {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || f < 0 || f > 1 {
			return 0
		}
		return int(f*1000 + 0.5)
	}
	return 1000
}

// zstdEncoder compresses whole bodies; EncodeAll is safe for concurrent
// use. The fastest level: a body is compressed on every request.
var zstdEncoder, _ = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest),
	zstd.WithEncoderConcurrency(0), zstd.WithZeroFrames(true))

var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.BestSpeed)
	return w
}}

// appendWriter is an io.Writer that appends to b.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// compress appends body in coding c to dst.
func compress(dst, body []byte, c coding) []byte {
	if c == codingZstd {
		return zstdEncoder.EncodeAll(body, dst)
	}
	zw := gzipWriters.Get().(*gzip.Writer)
	aw := appendWriter{dst}
	zw.Reset(&aw)
	zw.Write(body) // appendWriter never fails
	zw.Close()
	zw.Reset(nil)
	gzipWriters.Put(zw)
	return aw.b
}

// zcache keeps the compressed bodies of one snapshot by coding and request
// target (path and query as sent), so a page or CVE asked for again by
// clients that take gzip or zstd costs a map lookup instead of a
// compression. The same target of the same snapshot always has the same
// body, and GET and HEAD are the only methods cached. When its bodies
// outgrow zcacheMax it starts over empty: the hot targets come back at
// once, the rest were not worth keeping.
type zcache struct {
	tag  string
	mu   sync.RWMutex
	m    [codingZstd + 1]map[string][]byte
	size int
}

// zcacheMax bounds the compressed bytes one zcache holds.
const zcacheMax = 32 << 20

func newZcache(tag string) *zcache {
	z := &zcache{tag: tag}
	for c := range z.m {
		z.m[c] = map[string][]byte{}
	}
	return z
}

func (z *zcache) get(c coding, target string) ([]byte, bool) {
	z.mu.RLock()
	b, ok := z.m[c][target]
	z.mu.RUnlock()
	return b, ok
}

// put keeps a copy of body; false when the cache is full.
func (z *zcache) put(c coding, target string, body []byte) bool {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.size+len(body)+len(target) > zcacheMax {
		return false
	}
	if _, ok := z.m[c][target]; !ok {
		z.m[c][target] = bytes.Clone(body)
		z.size += len(body) + len(target)
	}
	return true
}
