package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

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
		if res.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%s %q: Content-Type %q", method, target, res.Header.Get("Content-Type"))
		}
		if res.StatusCode != 304 && res.Header.Get("Content-Length") != strconv.Itoa(w.Body.Len()) && method != "HEAD" {
			t.Fatalf("%s %q: Content-Length %q for %d bytes", method, target, res.Header.Get("Content-Length"), w.Body.Len())
		}
		if method != "HEAD" && !json.Valid(w.Body.Bytes()) {
			t.Fatalf("%s %q: body is not JSON: %q", method, target, w.Body.Bytes())
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
