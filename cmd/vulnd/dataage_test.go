package main

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// dataAgeSnapshot builds a snapshot from the real CWE catalog (Date
// 2024-07-16), NVD sample (newest lastModified 2026-09-19T15:16:56.530)
// and vulnrichment sample (newest dateUpdated 2025-01-23T22:24:17.771Z):
// its newest input is NVD's, 2026-09-19 15:16:56Z.
func dataAgeSnapshot(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "snap")
	if _, e, code := vulndRun("build", "-cwe", sharedData(t, "cwe/cwec_v4.15.xml.zip"), "-o", dir, "-time", "2026-11-22T06:00:00Z",
		sharedData(t, "nvd/nvdcve-2.0-sample.json.gz"), sharedData(t, "cve5/vulnrichment-sample.json.gz")); code != 0 {
		t.Fatalf("build: %s", e)
	}
	return dir
}

var newestInput = time.Date(2026, 9, 19, 15, 16, 56, 0, time.UTC)

// apiGet answers GET path on m's API listener.
func apiGet(t *testing.T, m *Main, path string) (int, []byte) {
	t.Helper()
	res, err := http.Get("http://" + m.APIAddr() + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, b
}

type statusAge struct {
	InputDates map[string]*string `json:"input_dates"`
	Stale      bool               `json:"stale"`
}

func ageOf(t *testing.T, m *Main) statusAge {
	t.Helper()
	code, b := apiGet(t, m, "/status")
	var s statusAge
	if err := json.Unmarshal(b, &s); code != 200 || err != nil {
		t.Fatalf("/status: %d %v %s", code, err, b)
	}
	return s
}

// TestServeMaxDataAge is issue 28 item 3 on a clock the test moves: the
// snapshot turns stale once its newest input is more than -max-data-age
// old, without a reload: /status stale, vulnd_snapshot_stale 1, one
// warning however often it is asked; it keeps serving and stays ready.
// Under -stale-unready /readyz answers 503 while it is stale, and the API
// still answers.
func TestServeMaxDataAge(t *testing.T) {
	dir := dataAgeSnapshot(t)
	var clock atomic.Pointer[time.Time]
	set := func(at time.Time) { clock.Store(&at) }
	set(newestInput.Add(47 * time.Hour))
	logs := &syncBuffer{}
	m := &Main{Snapshot: dir, Addr: "127.0.0.1:0", AdminAddr: "127.0.0.1:0", MaxDataAge: 48 * time.Hour,
		Now: func() time.Time { return *clock.Load() }, Log: slog.New(slog.NewTextHandler(logs, nil))}
	if err := m.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	metric := func(name string) string {
		t.Helper()
		_, _, body := adminDo(t, m, "GET", "/metrics")
		for _, l := range strings.Split(body, "\n") {
			if v, ok := strings.CutPrefix(l, name+" "); ok {
				return v
			}
		}
		return ""
	}

	s := ageOf(t, m)
	want := map[string]string{"nvd": "2026-09-19 15:16:56Z", "cve5": "2025-01-23 22:24:17Z", "epss": "", "cwe": "2024-07-16 00:00:00Z"}
	for k, v := range want {
		got, ok := s.InputDates[k]
		if !ok || (got == nil) != (v == "") || got != nil && *got != v {
			t.Errorf("input_dates.%s = %v, want %q (null for \"\")", k, got, v)
		}
	}
	if s.Stale || metric("vulnd_snapshot_stale") != "0" || strings.Contains(logs.String(), "WARN") {
		t.Errorf("47 h old: stale %v, metric %s, log:\n%s", s.Stale, metric("vulnd_snapshot_stale"), logs)
	}
	if v := metric(`vulnd_snapshot_input_timestamp_seconds{source="nvd"}`); v != "1.789831016e+09" {
		t.Errorf("nvd input timestamp %s, want %d", v, newestInput.Unix())
	}
	if v := metric(`vulnd_snapshot_input_timestamp_seconds{source="epss"}`); v != "" {
		t.Errorf("epss input timestamp %s, want none", v)
	}

	set(newestInput.Add(48*time.Hour + time.Second))
	for range 3 {
		if s := ageOf(t, m); !s.Stale {
			t.Error("48 h and 1 s old: not stale")
		}
	}
	if v := metric("vulnd_snapshot_stale"); v != "1" {
		t.Errorf("stale metric %s", v)
	}
	if code, _, _ := adminDo(t, m, "GET", "/readyz"); code != 200 {
		t.Errorf("stale without -stale-unready: /readyz %d, want 200", code)
	}
	if code, _ := apiGet(t, m, "/cve/CVE-2021-44228"); code != 200 {
		t.Errorf("stale: /cve/CVE-2021-44228 %d", code)
	}
	if n := strings.Count(logs.String(), "level=WARN"); n != 1 || !strings.Contains(logs.String(), `msg="the snapshot's data is older than -max-data-age; still serving it"`) ||
		!strings.Contains(logs.String(), "newest_input=\"2026-09-19 15:16:56Z\" age=48h0m1s max_data_age=48h0m0s") {
		t.Errorf("%d warnings, want 1:\n%s", n, logs)
	}

	// An unchanged reload keeps its one warning; -stale-unready takes the
	// replica out of the balancer while stale, and back once fresh.
	if err := m.Reload(); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(logs.String(), "level=WARN"); n != 1 {
		t.Errorf("after an unchanged reload, %d warnings:\n%s", n, logs)
	}
	m.Close()
	u := &Main{Snapshot: dir, Addr: "127.0.0.1:0", AdminAddr: "127.0.0.1:0", MaxDataAge: 48 * time.Hour, StaleUnready: true,
		Now: func() time.Time { return *clock.Load() }}
	if err := u.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { u.Close() })
	if code, _, _ := adminDo(t, u, "GET", "/readyz"); code != 503 {
		t.Errorf("stale with -stale-unready: /readyz %d, want 503", code)
	}
	if code, _ := apiGet(t, u, "/cve/CVE-2021-44228"); code != 200 {
		t.Errorf("stale and unready: /cve/CVE-2021-44228 %d, want it still served", code)
	}
	set(newestInput)
	if code, _, _ := adminDo(t, u, "GET", "/readyz"); code != 200 || ageOf(t, u).Stale {
		t.Errorf("fresh with -stale-unready: /readyz %d", code)
	}
}

// TestServeTurnsStale: on the real clock, a snapshot that turns stale
// while served is logged as such when it does, with no request asking,
// once; a reload of another snapshot that is stale already warns again
// at once.
func TestServeTurnsStale(t *testing.T) {
	dir := dataAgeSnapshot(t)
	logs := &syncBuffer{}
	// The data turns stale margin after the start. A loaded machine can
	// take longer than that to open the snapshot: then the test cannot
	// tell "warned when it turned stale" from "warned at once", and says so
	// instead of failing.
	const margin = 2 * time.Second
	start := time.Now()
	m := &Main{Snapshot: dir, Addr: "127.0.0.1:0", MaxDataAge: time.Since(newestInput) + margin,
		Log: slog.New(slog.NewTextHandler(logs, nil))}
	if err := m.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	if took := time.Since(start); took > margin*3/4 {
		t.Skipf("opening the snapshot took %v of the %v margin: too loaded a machine to time the warning", took, margin)
	}
	if strings.Contains(logs.String(), "level=WARN") {
		t.Fatalf("warned at once:\n%s", logs)
	}
	waitFor(t, logs, "the snapshot's data is older than -max-data-age")
	if !ageOf(t, m).Stale {
		t.Error("/status not stale after the warning")
	}
	time.Sleep(100 * time.Millisecond)
	if n := strings.Count(logs.String(), "level=WARN"); n != 1 {
		t.Errorf("%d warnings:\n%s", n, logs)
	}
	version(t, dir, "old", time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)) // its newest CVE: 2024-01-01
	if err := m.Reload(); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(logs.String(), "level=WARN"); n != 2 || !strings.Contains(logs.String(), `newest_input="2024-01-01 00:00:00Z"`) {
		t.Errorf("after reloading a stale snapshot, %d warnings:\n%s", n, logs)
	}
}

// TestServeDataAgeFlags: the flags' errors.
func TestServeDataAgeFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-max-data-age", "-1h"}, "-max-data-age must not be negative"},
		{[]string{"-stale-unready"}, "-stale-unready needs -max-data-age and -admin-addr"},
		{[]string{"-stale-unready", "-max-data-age", "48h"}, "-stale-unready needs -max-data-age and -admin-addr"},
		{[]string{"-max-data-age", "two days"}, `invalid value "two days" for flag -max-data-age`},
	} {
		_, e, code := vulndRun(append([]string{"serve", "-snapshot", t.TempDir()}, tc.args...)...)
		if code != 2 || !strings.Contains(e, tc.want) {
			t.Errorf("%v: exit %d, %s, want 2 and %q", tc.args, code, e, tc.want)
		}
	}
}
