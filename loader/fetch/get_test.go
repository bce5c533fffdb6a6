package fetch

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestParseRetryAfter: both forms of RFC 9110's Retry-After, capped; a
// value of neither form is none.
func TestParseRetryAfter(t *testing.T) {
	now := time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"120", 2 * time.Minute, true},
		{" 0 ", 0, true},
		{"86400", maxRetryAfter, true},
		{"99999999999999999999", 0, false}, // overflows: neither form
		{"Sat, 21 Nov 2026 00:00:30 GMT", 30 * time.Second, true},
		{"Saturday, 21-Nov-26 00:00:30 GMT", 30 * time.Second, true}, // RFC 850, obsolete but allowed
		{"Fri, 20 Nov 2026 23:00:00 GMT", 0, true},                   // past: no wait
		{"Sun, 22 Nov 2026 00:00:00 GMT", maxRetryAfter, true},
		{"", 0, false},
		{"-5", 0, false},
		{"1.5", 0, false},
		{"soon", 0, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			d, ok := parseRetryAfter(tc.in, now)
			if diff := cmp.Diff([2]any{tc.want, tc.ok}, [2]any{d, ok}); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestBackoff: each wait is a random point in the upper half of 1 s
// doubling per try, capped at a minute.
func TestBackoff(t *testing.T) {
	for attempt, base := range map[int]time.Duration{1: time.Second, 2: 2 * time.Second, 4: 8 * time.Second, 7: time.Minute, 40: time.Minute} {
		for range 50 {
			if d := backoff(attempt); d < base/2 || d > base {
				t.Errorf("backoff(%d) = %s, want within [%s, %s]", attempt, d, base/2, base)
			}
		}
	}
}

// TestGetterNotModified: a 304 is ErrNotModified only for a conditional
// request; otherwise it is a failure like any other 3xx that is not a
// redirect.
func TestGetterNotModified(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusNotModified)
	}))
	defer srv.Close()
	g := &Getter{Client: srv.Client()}
	used := false
	use := func(*http.Response) error { used = true; return nil }
	if err := g.Get(context.Background(), srv.URL, http.Header{"If-None-Match": {`"x"`}}, use); !errors.Is(err, ErrNotModified) {
		t.Errorf("conditional: err %v, want ErrNotModified", err)
	}
	if err := g.Get(context.Background(), srv.URL, nil, use); err == nil || err.Error() != srv.URL+": 304 Not Modified" {
		t.Errorf("unconditional: err %v", err)
	}
	if used {
		t.Error("use was called for a 304")
	}
}

// TestGetterUseError: an error of use that is not a failed read ends the
// tries at once.
func TestGetterUseError(t *testing.T) {
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { n++; w.Write([]byte("body")) }))
	defer srv.Close()
	g := &Getter{Client: srv.Client()}
	bad := errors.New("bad content")
	err := g.Get(context.Background(), srv.URL, nil, func(*http.Response) error { return bad })
	if !errors.Is(err, bad) || err.Error() != srv.URL+": bad content" || n != 1 {
		t.Errorf("err %v after %d requests, want %q after 1", err, n, srv.URL+": bad content")
	}
}
