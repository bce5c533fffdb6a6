package httpapi

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/goccy/go-json"

	"github.com/vulnd/vulnd/index"
)

// TestStatusStale: /status shows each input's date and, through
// Options.Stale, whether the data is too old; it turns stale without
// another snapshot, so a stale /status has validators of its own: a
// client or cache holding the fresh one does not get a 304 for it, and
// a compressed fresh body kept in the cache is not served for it. Every
// other answer keeps the snapshot's ETag.
func TestStatusStale(t *testing.T) {
	// The dates of the sample built with its JSON 5 records, read by hand
	// (see loader's TestManifestInputDates); no EPSS input.
	_, raw := do(t, newTestServer(t, sampleCVE5Index(t)), "GET", "/status", nil)
	var sample struct {
		InputDates map[string]*string `json:"input_dates"`
		Stale      bool               `json:"stale"`
	}
	if err := json.Unmarshal(raw, &sample); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"nvd": "2026-09-19 15:16:56Z", "cve5": "2026-09-19 14:21:50Z", "epss": "", "cwe": "2024-07-16 00:00:00Z"}
	for k, v := range want {
		got, ok := sample.InputDates[k]
		if !ok || (got == nil) != (v == "") || got != nil && *got != v {
			t.Errorf("input_dates.%s = %v, want %q (null for \"\")", k, got, v)
		}
	}
	if len(sample.InputDates) != 4 || sample.Stale {
		t.Errorf("sample: %s", raw)
	}

	// A snapshot listing enough inputs for its /status to be compressed.
	meta := index.Meta{ID: "stale", BuiltAt: "2024-03-02 00:00:00Z", InputDates: index.InputDates{NVD: "2024-03-01 00:00:00Z"}}
	for range 12 {
		meta.Inputs = append(meta.Inputs, index.Input{Name: "nvdcve-2.0-2024.json.gz", Size: 1, SHA256: "d2a994896a6282e9eb0f7f091fad1340f3d78bacf4aba603962f7b262c9171d1"})
	}
	ix, err := index.Build(&index.Data{}, meta)
	if err != nil {
		t.Fatal(err)
	}
	var stale atomic.Bool
	srv := httptest.NewServer(New(func() *index.Index { return ix }, Options{Stale: func(got *index.Index) bool {
		if got != ix {
			t.Errorf("Stale asked about another index")
		}
		return stale.Load()
	}}))
	t.Cleanup(srv.Close)
	type body struct {
		InputDates map[string]*string `json:"input_dates"`
		Stale      *bool              `json:"stale"`
	}
	get := func(hdr map[string]string) (*http.Response, body) {
		t.Helper()
		res, raw := do(t, srv, "GET", "/status", hdr)
		var b body
		if res.StatusCode == 200 {
			if res.Header.Get("Content-Encoding") == "gzip" {
				zr, err := gzip.NewReader(bytes.NewReader(raw))
				if err != nil {
					t.Fatal(err)
				}
				if raw, err = io.ReadAll(zr); err != nil {
					t.Fatal(err)
				}
			}
			if err := json.Unmarshal(raw, &b); err != nil || b.Stale == nil {
				t.Fatalf("/status: %v %s", err, raw)
			}
		}
		return res, b
	}
	tag := ix.ETag()
	staleTag := tag[:len(tag)-1] + `-stale"`

	res, b := get(nil)
	if *b.Stale || res.Header.Get("ETag") != tag || *b.InputDates["nvd"] != "2024-03-01 00:00:00Z" {
		t.Errorf("fresh: input_dates %v, stale %v, ETag %s", b.InputDates, *b.Stale, res.Header.Get("ETag"))
	}
	if res, _ := get(map[string]string{"If-None-Match": tag}); res.StatusCode != 304 {
		t.Errorf("fresh, If-None-Match its tag: %d", res.StatusCode)
	}
	// The compressed fresh body goes into the cache.
	if res, b := get(map[string]string{"Accept-Encoding": "gzip"}); res.Header.Get("Content-Encoding") != "gzip" || *b.Stale {
		t.Fatalf("fresh, gzip: %s, stale %v", res.Header.Get("Content-Encoding"), *b.Stale)
	}

	stale.Store(true)
	res, b = get(nil)
	if !*b.Stale || res.Header.Get("ETag") != staleTag || res.Header.Get("X-Snapshot-Id") != ix.Meta().ID {
		t.Errorf("stale: stale %v, ETag %s, X-Snapshot-Id %s", *b.Stale, res.Header.Get("ETag"), res.Header.Get("X-Snapshot-Id"))
	}
	for _, hdr := range []map[string]string{
		{"If-None-Match": tag}, {"If-None-Match": "W/" + tag}, {"If-Modified-Since": "Fri, 01 Jan 2100 00:00:00 GMT"},
	} {
		if res, b := get(hdr); res.StatusCode != 200 || !*b.Stale {
			t.Errorf("stale, %v: %d, want the stale body", hdr, res.StatusCode)
		}
	}
	if res, _ := get(map[string]string{"If-None-Match": staleTag}); res.StatusCode != 304 || res.Header.Get("ETag") != staleTag {
		t.Errorf("stale, If-None-Match its own tag: %d %s", res.StatusCode, res.Header.Get("ETag"))
	}
	if res, b := get(map[string]string{"Accept-Encoding": "gzip"}); res.Header.Get("Content-Encoding") != "gzip" || !*b.Stale || res.Header.Get("ETag") != "W/"+staleTag {
		t.Errorf("stale, gzip: %s, stale %v, ETag %s", res.Header.Get("Content-Encoding"), *b.Stale, res.Header.Get("ETag"))
	}
	if res, _ := do(t, srv, "GET", "/cwe", map[string]string{"If-None-Match": tag}); res.StatusCode != 304 {
		t.Errorf("/cwe of the stale snapshot, If-None-Match its tag: %d", res.StatusCode)
	}
}
