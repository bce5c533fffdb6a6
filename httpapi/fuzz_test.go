package httpapi

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/goccy/go-json"

	"github.com/vulnd/vulnd/index"
)

// FuzzServe sends arbitrary paths and queries through the real handler:
// it must never panic, every answer is JSON with Content-Length, and no
// answer is a 5xx.
func FuzzServe(f *testing.F) {
	for _, s := range []string{
		"/cve", "/cve?page=2&cvss=high", "/cve/cve-2023-0001", "/vendors/a%2Fb/products/x%20y%2Bz%25/cve?page=1",
		"/reports/20261122T000000Z/alerts/1", "/cwe/CWE-79/cve?page=%31", "/cve?page=99999999999999999999",
		"/vendors/%", "/cve?page=1&page=2", "/%00", "/vendors/..%2F..", "//cve",
		"/cve?updated_since=2024-01-01T00:00:00Z&cwe=CWE-79&vendor=acme&product=widget&cvss=low",
		"/cve?format=ndjson&published_since=2024-01-01+00:00:00Z", "/vendors?q=%C3%A9", "/vendors/acme/products?q=",
		"/vendors/acme/products/widget/cve?version=1.2&format=ndjson", "/cve/batch?names=CVE-2024-1001,,x", "/status",
	} {
		f.Add("GET", s)
	}
	f.Add("POST", "/cve")
	ix := handData(f)
	s := New(func() *index.Index { return ix }, Options{})
	f.Fuzz(func(t *testing.T, method, target string) {
		if !validMethod(method) {
			return
		}
		req, err := http.NewRequest(method, "http://x"+target, nil)
		if err != nil || req.URL.Host != "x" {
			return // not a request net/http would hand us
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, req)
		res := w.Result()
		if res.StatusCode >= 500 {
			t.Fatalf("%s %q: %d %s", method, target, res.StatusCode, w.Body.Bytes())
		}
		checkFuzzAnswer(t, method+" "+target, method, res, w.Body.Bytes())
	})
}

// checkFuzzAnswer checks what every answer must be: no 5xx, JSON (or
// NDJSON, a JSON value per line), and a Content-Length that is the body's.
func checkFuzzAnswer(t *testing.T, what, method string, res *http.Response, body []byte) {
	t.Helper()
	if res.StatusCode >= 500 {
		t.Fatalf("%s: %d %s", what, res.StatusCode, body)
	}
	ct := res.Header.Get("Content-Type")
	if ct != "application/json" && (ct != "application/x-ndjson" || res.StatusCode != 200) {
		t.Fatalf("%s: Content-Type %q", what, ct)
	}
	if res.StatusCode != 304 && res.Header.Get("Content-Length") != strconv.Itoa(len(body)) && method != "HEAD" {
		t.Fatalf("%s: Content-Length %q for %d bytes", what, res.Header.Get("Content-Length"), len(body))
	}
	if method == "HEAD" || res.StatusCode == 304 {
		return
	}
	if ct == "application/x-ndjson" {
		for _, line := range bytes.SplitAfter(body, []byte("\n")) {
			if len(line) > 0 && (line[len(line)-1] != '\n' || !json.Valid(line)) {
				t.Fatalf("%s: NDJSON line %q", what, line)
			}
		}
		return
	}
	if !json.Valid(body) {
		t.Fatalf("%s: body is not JSON: %q", what, body)
	}
}

// FuzzServeRequest adds what FuzzServe leaves out: an Accept-Encoding
// header and a request body (for POST /cve/batch). Every answer must
// follow checkFuzzAnswer's rules once decoded, and a compressed body must
// decode to exactly the identity answer.
func FuzzServeRequest(f *testing.F) {
	f.Add("POST", "/cve/batch", "gzip", `{"names":["CVE-2024-1001","cve-2023-0001","x"]}`)
	f.Add("POST", "/cve/batch", "", `{"names":[]}`)
	f.Add("POST", "/cve/batch", "zstd;q=0.5, gzip;q=0.6", `{"names":"x"}`)
	f.Add("GET", "/vendors/acme/cve?page=2", "zstd", "")
	f.Add("GET", "/cve?format=ndjson", "gzip, zstd", "")
	f.Add("HEAD", "/cve", "*;q=0", "")
	ix := handData(f)
	s := New(func() *index.Index { return ix }, Options{})
	f.Fuzz(func(t *testing.T, method, target, accept, body string) {
		if !validMethod(method) || len(body) > 1<<20 {
			return
		}
		serve := func(accept string) (*http.Response, []byte) {
			req, err := http.NewRequest(method, "http://x"+target, strings.NewReader(body))
			if err != nil || req.URL.Host != "x" {
				return nil, nil
			}
			if accept != "" {
				req.Header.Set("Accept-Encoding", accept)
			}
			w := httptest.NewRecorder()
			s.ServeHTTP(w, req)
			return w.Result(), w.Body.Bytes()
		}
		plain, plainBody := serve("")
		if plain == nil {
			return
		}
		what := method + " " + target
		checkFuzzAnswer(t, what, method, plain, plainBody)
		res, got := serve(accept)
		switch res.Header.Get("Content-Encoding") {
		case "":
		case "gzip":
			zr, err := gzip.NewReader(bytes.NewReader(got))
			if err != nil {
				t.Fatalf("%s: gzip: %v", what, err)
			}
			if got, err = io.ReadAll(zr); err != nil {
				t.Fatalf("%s: gzip: %v", what, err)
			}
		case "zstd":
			zr, _ := zstd.NewReader(nil)
			defer zr.Close()
			var err error
			if got, err = zr.DecodeAll(got, nil); err != nil {
				t.Fatalf("%s: zstd: %v", what, err)
			}
		default:
			t.Fatalf("%s: Content-Encoding %q", what, res.Header.Get("Content-Encoding"))
		}
		if res.StatusCode != plain.StatusCode || !bytes.Equal(got, plainBody) {
			t.Fatalf("%s with Accept-Encoding %q: %d, %d bytes decoded; identity %d, %d bytes", what, accept, res.StatusCode, len(got), plain.StatusCode, len(plainBody))
		}
	})
}

func validMethod(m string) bool {
	if m == "" {
		return false
	}
	for i := 0; i < len(m); i++ {
		c := m[i]
		if c <= ' ' || c >= 0x7f || c == '(' || c == ')' || c == '/' || c == ':' || c == '"' {
			return false
		}
	}
	return true
}

// queryValueRef is query.value without splitQuery's shortcuts: every key
// is decoded and compared, pair by pair, for the one key asked.
func queryValueRef(raw, key string) (string, bool, error) {
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		k, v, _ := strings.Cut(pair, "=")
		if dk, err := url.QueryUnescape(k); err != nil || dk != key {
			continue
		}
		dv, err := url.QueryUnescape(v)
		if err != nil {
			return "", true, errBadQuery
		}
		return dv, true, nil
	}
	return "", false, nil
}

// FuzzQueryValue: reading the query once (splitQuery, then value) gives
// every parameter exactly what looking for it alone, pair by pair, gives.
func FuzzQueryValue(f *testing.F) {
	for _, s := range []string{"page=2", "%70age=3", "p%61ge=4&page=5", "pa+ge=1", "kev=true&version=1.0", "version=%zz", "%zz=1&page=2", "pagee=1", "=&&page"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q := splitQuery(raw)
		for p, key := range params {
			v, ok, err := q.value(param(p))
			rv, rok, rerr := queryValueRef(raw, key)
			if v != rv || ok != rok || (err == nil) != (rerr == nil) {
				t.Fatalf("value of %q in %q = %q %v %v; decoding every key gives %q %v %v", key, raw, v, ok, err, rv, rok, rerr)
			}
		}
	})
}
