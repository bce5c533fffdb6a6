package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vulnd/vulnd/index"
)

// TestAdmin: the admin listener's answers, with and without -pprof. Every
// answer of ours is JSON; profiles are there only when asked for.
func TestAdmin(t *testing.T) {
	ix := handData(t)
	metrics := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("# metrics\n")) })
	type answer struct {
		Status      int
		ContentType string
		Allow       string
		Body        string // "" when not compared
	}
	const notFound = `{"message":"endpoint not found"}`
	const notAllowed = `{"message":"method not allowed: use GET or HEAD"}`
	json := "application/json"
	for _, tc := range []struct {
		name         string
		pprof        bool
		method, path string
		want         answer
	}{
		{"healthz", false, "GET", "/healthz", answer{200, json, "", `{"status":"ok"}`}},
		{"readyz", false, "GET", "/readyz", answer{200, json, "", `{"status":"ready"}`}},
		{"HEAD readyz", false, "HEAD", "/readyz", answer{200, json, "", ""}},
		{"metrics", false, "GET", "/metrics", answer{200, "", "", "# metrics\n"}},
		{"unknown path", false, "GET", "/nope", answer{404, json, "", notFound}},
		{"root", false, "GET", "/", answer{404, json, "", notFound}},
		{"under healthz", false, "GET", "/healthz/x", answer{404, json, "", notFound}},
		{"HEAD unknown", false, "HEAD", "/nope", answer{404, json, "", ""}},
		{"POST healthz", false, "POST", "/healthz", answer{405, json, "GET, HEAD", notAllowed}},
		{"DELETE metrics", false, "DELETE", "/metrics", answer{405, json, "GET, HEAD", notAllowed}},
		{"pprof off", false, "GET", "/debug/pprof/", answer{404, json, "", notFound}},
		{"pprof off: a profile", false, "GET", "/debug/pprof/heap", answer{404, json, "", notFound}},
		{"pprof off: cmdline", false, "GET", "/debug/pprof/cmdline", answer{404, json, "", notFound}},
		{"pprof on", true, "GET", "/debug/pprof/", answer{200, "text/html; charset=utf-8", "", ""}},
		{"pprof on: cmdline", true, "GET", "/debug/pprof/cmdline", answer{200, "text/plain; charset=utf-8", "", ""}},
		{"pprof on: goroutines", true, "GET", "/debug/pprof/goroutine?debug=1", answer{200, "text/plain; charset=utf-8", "", ""}},
		{"pprof on: still 404 elsewhere", true, "GET", "/nope", answer{404, json, "", notFound}},
		{"pprof on: DELETE", true, "DELETE", "/debug/pprof/", answer{405, json, "GET, HEAD", notAllowed}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := Admin(func() *index.Index { return ix }, func() bool { return true }, AdminOptions{Metrics: metrics, Pprof: tc.pprof})
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(tc.method, tc.path, nil))
			got := answer{rec.Code, rec.Header().Get("Content-Type"), rec.Header().Get("Allow"), rec.Body.String()}
			if tc.want.Body == "" && tc.method != "HEAD" {
				got.Body = ""
			}
			if tc.want.ContentType == "" {
				got.ContentType = ""
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("%s %s (-want +got):\n%s", tc.method, tc.path, diff)
			}
		})
	}
}

// TestAdminNotReady: /readyz is 503 before the first load and while
// draining.
func TestAdminNotReady(t *testing.T) {
	ix := handData(t)
	for _, tc := range []struct {
		name    string
		current *index.Index
		ready   bool
	}{
		{"no snapshot", nil, true},
		{"draining", ix, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := Admin(func() *index.Index { return tc.current }, func() bool { return tc.ready }, AdminOptions{})
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
			if rec.Code != 503 || strings.TrimSpace(rec.Body.String()) != `{"status":"not ready"}` {
				t.Errorf("/readyz: %d %s, want 503 not ready", rec.Code, rec.Body)
			}
		})
	}
}
