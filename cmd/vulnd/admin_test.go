package main

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// adminDo sends method to path on m's admin listener.
func adminDo(t *testing.T, m *Main, method, path string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+m.adminLn.Addr().String()+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header.Get("Content-Type"), string(b)
}

// TestAdminListener: pprof only with -pprof, JSON 404s and 405s, and API
// 405s counted under their route in /metrics.
func TestAdminListener(t *testing.T) {
	type answer struct {
		Status      int
		ContentType string
		Body        string
	}
	notFound := answer{404, "application/json", `{"message":"endpoint not found"}`}
	for _, pprof := range []bool{false, true} {
		m := &Main{AdminAddr: "127.0.0.1:0", Pprof: pprof}
		startMain(t, m)
		got := func(method, path string) answer {
			code, ct, body := adminDo(t, m, method, path)
			return answer{code, ct, body}
		}
		if pprof {
			for _, p := range []string{"/debug/pprof/", "/debug/pprof/cmdline", "/debug/pprof/heap?debug=1"} {
				if a := got("GET", p); a.Status != 200 {
					t.Errorf("-pprof: GET %s: %d %s", p, a.Status, a.Body)
				}
			}
			// The API listener never serves profiles.
			res, err := http.Get("http://" + m.APIAddr() + "/debug/pprof/")
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != 404 {
				t.Errorf("-pprof: API listener GET /debug/pprof/: %d, want 404", res.StatusCode)
			}
			continue
		}
		for _, tc := range []struct {
			method, path string
			want         answer
		}{
			{"GET", "/debug/pprof/", notFound},
			{"GET", "/debug/pprof/cmdline", notFound},
			{"GET", "/nope", notFound},
			{"POST", "/readyz", answer{405, "application/json", `{"message":"method not allowed: use GET or HEAD"}`}},
		} {
			if diff := cmp.Diff(tc.want, got(tc.method, tc.path)); diff != "" {
				t.Errorf("%s %s (-want +got):\n%s", tc.method, tc.path, diff)
			}
		}
		for _, r := range []struct{ method, path string }{{"POST", "/cve/CVE-2024-0001"}, {"DELETE", "/cve"}, {"PUT", "/nope"}} {
			req, _ := http.NewRequest(r.method, "http://"+m.APIAddr()+r.path, nil)
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
		}
		_, _, metrics := adminDo(t, m, "GET", "/metrics")
		for _, w := range []string{
			`vulnd_http_requests_total{code="405",route="/cve/:name"} 1`,
			`vulnd_http_requests_total{code="405",route="/cve"} 1`,
			`vulnd_http_requests_total{code="404",route="none"} 1`,
		} {
			if !strings.Contains(metrics, w) {
				t.Errorf("/metrics lacks %s", w)
			}
		}
		if strings.Contains(metrics, `code="405",route="none"`) {
			t.Errorf("/metrics counts a 405 under route none")
		}
	}
}

// TestRequestHeadLimit: a request head (request line, headers, blank
// line) of 16 KiB is served; one byte more is net/http's 431, as
// docs/API.md says.
func TestRequestHeadLimit(t *testing.T) {
	m := &Main{}
	startMain(t, m)
	head := func(total int) string {
		const start = "GET /cve/CVE-2024-0001 HTTP/1.1\r\nHost: x\r\nConnection: close\r\nX-Pad: "
		return start + strings.Repeat("p", total-len(start)-len("\r\n\r\n")) + "\r\n\r\n"
	}
	for _, tc := range []struct {
		size, status int
	}{
		{16 << 10, 200},
		{16<<10 + 1, 431},
		{20 << 10, 431}, // what net/http's own slack let through before
	} {
		raw := head(tc.size)
		if len(raw) != tc.size {
			t.Fatalf("head of %d bytes, want %d", len(raw), tc.size)
		}
		if got := sendRaw(t, m.APIAddr(), "GET", raw).res.StatusCode; got != tc.status {
			t.Errorf("head of %d bytes: %d, want %d", tc.size, got, tc.status)
		}
	}
}
