package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/vulnd/vulnd/index"
	"github.com/vulnd/vulnd/loader"
)

// version writes a snapshot whose CVEs all carry tag in their summary, so
// a response shows which snapshot it came from.
func version(t *testing.T, dir, tag string, at time.Time) {
	t.Helper()
	d := &index.Data{CWEs: []index.CWE{{Name: "CWE-79", Description: "x", Type: "Weakness Base", CreatedAt: "2006-07-19 00:00:00Z", UpdatedAt: "2006-07-19 00:00:00Z"}}}
	for i := 0; i < 50; i++ {
		d.CVEs = append(d.CVEs, index.CVE{
			Name: fmt.Sprintf("CVE-2024-%04d", i+1), Summary: tag,
			CreatedAt: "2024-01-01 00:00:00Z", UpdatedAt: "2024-01-01 00:00:00Z",
			CPEs: []index.CPE{{ID: 1, URI: "cpe:2.3:a:v:p:1:*:*:*:*:*:*:*", Vendor: "v", Product: "p", Version: "1"}},
			CWEs: []string{"CWE-79"},
		})
	}
	if _, err := loader.Write(dir, d, at, nil); err != nil {
		t.Fatal(err)
	}
}

// corrupt puts a snapshot at dir whose CVE file has a flipped byte.
func corrupt(t *testing.T, dir string) {
	t.Helper()
	version(t, dir, "corrupt", time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC))
	p := filepath.Join(dir, "cves.jsonl.zst")
	b, _ := os.ReadFile(p)
	b[len(b)/2] ^= 0xff
	os.WriteFile(p, b, 0o644)
}

func TestReloadUnderLoad(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "current")
	base := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	version(t, dir, "v0", base)
	reloads := make(chan error, 1)
	m := &Main{Snapshot: dir, Addr: "127.0.0.1:0", OnReload: func(err error) { reloads <- err }}
	if err := m.Open(); err != nil {
		t.Fatal(err)
	}
	<-reloads // the initial load
	sigs := make(chan os.Signal)
	done := make(chan error, 1)
	go func() { done <- m.Run(sigs) }()

	// etags maps each snapshot's ETag to the tag its CVEs carry; a response
	// must carry a body of the snapshot its ETag names.
	var mu sync.Mutex
	etags := map[string]string{}
	// register records the ETag of the snapshot now in dir before it is
	// swapped in: the ETag is the quoted snapshot id.
	register := func(tag string) {
		s, err := loader.Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		etags[`"`+s.ID+`"`] = tag
		mu.Unlock()
	}
	register("v0")

	stop := make(chan struct{})
	var requests, failures atomic.Int64
	var wg sync.WaitGroup
	client := &http.Client{Timeout: 10 * time.Second}
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			paths := []string{"/cve/CVE-2024-0001", "/cve?page=2", "/vendors/v/cve?page=3", "/cwe/CWE-79/cve"}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				res, err := client.Get("http://" + m.APIAddr() + paths[(g+i)%len(paths)])
				if err != nil {
					failures.Add(1)
					t.Errorf("request failed: %v", err)
					continue
				}
				body, _ := io.ReadAll(res.Body)
				res.Body.Close()
				requests.Add(1)
				if res.StatusCode != 200 {
					failures.Add(1)
					t.Errorf("status %d: %s", res.StatusCode, body)
					continue
				}
				mu.Lock()
				// net/http's client asks for gzip: big bodies come
				// compressed, with the weak form of the tag.
				tag, known := etags[strings.TrimPrefix(res.Header.Get("ETag"), "W/")]
				mu.Unlock()
				// Every summary in the body must be that snapshot's tag.
				for _, other := range []string{"v0", "v1", "v2", "corrupt"} {
					if bytes.Contains(body, []byte(`"summary":"`+other+`"`)) && (!known || other != tag) {
						failures.Add(1)
						t.Errorf("ETag %s (%s) with a body holding %s", res.Header.Get("ETag"), tag, other)
					}
				}
			}
		}(g)
	}

	hup := func() error {
		sigs <- syscall.SIGHUP
		return <-reloads
	}
	for i := 1; i <= 10; i++ {
		tag := fmt.Sprintf("v%d", 1+i%2)
		version(t, dir, tag, base.Add(time.Duration(i)*time.Minute))
		register(tag)
		if err := hup(); err != nil {
			t.Fatalf("reload %d: %v", i, err)
		}
		if i == 5 {
			before := m.cur.Load()
			corrupt(t, dir)
			if err := hup(); err == nil {
				t.Fatal("reload of a corrupt snapshot succeeded")
			}
			if m.cur.Load() != before {
				t.Fatal("a failed reload replaced the index")
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	sigs <- syscall.SIGTERM
	if err := <-done; err != nil {
		t.Fatalf("drain: %v", err)
	}
	if requests.Load() < 50 || failures.Load() != 0 {
		t.Errorf("%d requests, %d failures", requests.Load(), failures.Load())
	}
	t.Logf("%d requests across 11 reloads, %d failures", requests.Load(), failures.Load())
}

// TestBinarySignals runs the real binary: build, validate, serve, a real
// SIGHUP to a corrupt snapshot (refused, old one kept), SIGTERM (exit 0).
func TestBinarySignals(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "vulnd")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	snap := filepath.Join(tmp, "snap")
	version(t, snap, "v0", time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	if out, err := exec.Command(bin, "validate", snap).CombinedOutput(); err != nil || !strings.Contains(string(out), "ok") {
		t.Fatalf("validate: %v %s", err, out)
	}

	port, admin := freePort(t), freePort(t)
	var logs syncBuffer
	cmd := exec.Command(bin, "serve", "-snapshot", snap, "-addr", port, "-admin-addr", admin,
		"-log-format", "json", "-drain-wait", "2s")
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	get := func() (string, int) {
		res, err := http.Get("http://" + port + "/cve/CVE-2024-0001")
		if err != nil {
			return "", 0
		}
		res.Body.Close()
		return res.Header.Get("ETag"), res.StatusCode
	}
	var etag string
	for i := 0; i < 100; i++ {
		if e, code := get(); code == 200 {
			etag = e
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if etag == "" {
		t.Fatalf("server did not answer; log:\n%s", logs.String())
	}
	// A path net/http itself would refuse still gets our JSON 400.
	conn, err := net.Dial("tcp", port)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprint(conn, "GET /cve/%ZZ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	raw, _ := io.ReadAll(conn)
	conn.Close()
	for _, want := range []string{"HTTP/1.1 400 ", "Content-Type: application/json", "Vary: Accept", `{"message":"path is not valid percent-encoding"}`} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("GET /cve/%%ZZ: response lacks %q:\n%s", want, raw)
		}
	}

	adminGet := func(path string) (int, string) {
		res, err := http.Get("http://" + admin + path)
		if err != nil {
			return 0, err.Error()
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	wantMetrics := func(when string, want ...string) {
		t.Helper()
		code, body := adminGet("/metrics")
		if code != 200 {
			t.Fatalf("%s: /metrics %d", when, code)
		}
		for _, w := range want {
			if strings.HasPrefix(w, "!") {
				if strings.Contains(body, w[1:]) {
					t.Errorf("%s: /metrics has %q", when, w[1:])
				}
			} else if !strings.Contains(body, w) {
				t.Errorf("%s: /metrics lacks %q", when, w)
			}
		}
	}
	// The warm-up after the load says when it is over.
	waitFor(t, &logs, `"msg":"warm-up done"`)
	for _, p := range []string{"/healthz", "/readyz"} {
		if code, body := adminGet(p); code != 200 {
			t.Errorf("%s: %d %s", p, code, body)
		}
	}
	wantMetrics("after the first load",
		`vulnd_reloads_total{outcome="success"} 1`, `vulnd_reloads_total{outcome="failure"} 0`,
		`vulnd_snapshot_records{kind="cves"} 50`, `vulnd_snapshot_build_timestamp_seconds 1.7953056e+09`,
		`vulnd_http_requests_total{code="200",route="/cve/:name"} 1`,
		`vulnd_http_requests_total{code="400",route="none"} 1`,
		`vulnd_http_request_duration_seconds_bucket{route="/cve/:name",le="+Inf"} 1`,
		"vulnd_http_requests_in_flight 0", "vulnd_snapshot_load_duration_seconds", "go_goroutines", "process_resident_memory_bytes",
		"!vulnd_reload_last_failure_info")

	if res, err := http.Get("http://" + port + "/cve/CVE-2024-0001"); err != nil || res.Close {
		t.Errorf("before draining: %v, Connection: close %v", err, err == nil && res.Close)
	} else {
		res.Body.Close()
	}
	corrupt(t, snap)
	cmd.Process.Signal(syscall.SIGHUP)
	waitFor(t, &logs, `"msg":"reload failed; keeping the current snapshot"`)
	if e, code := get(); code != 200 || e != etag {
		t.Errorf("after a failed reload: %d %s, want 200 %s", code, e, etag)
	}
	wantMetrics("after a failed reload", `vulnd_reloads_total{outcome="failure"} 1`,
		`vulnd_reload_last_failure_info{error="loader: `, `vulnd_snapshot_records{kind="cves"} 50`)
	version(t, snap, "v1", time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC))
	cmd.Process.Signal(syscall.SIGHUP)
	waitFor(t, &logs, `"built_at":"2026-11-23`)
	if e, _ := get(); e == etag {
		t.Error("ETag unchanged after a good reload")
	}
	wantMetrics("after a good reload", `vulnd_reloads_total{outcome="success"} 2`, "!vulnd_reload_last_failure_info",
		`vulnd_snapshot_build_timestamp_seconds 1.795392e+09`)

	// SIGTERM: /readyz turns 503 at once while the API keeps answering
	// for -drain-wait; then the process exits 0.
	cmd.Process.Signal(syscall.SIGTERM)
	waitFor(t, &logs, `"msg":"draining"`)
	if code, _ := adminGet("/readyz"); code != 503 {
		t.Errorf("/readyz while draining: %d, want 503", code)
	}
	if _, code := get(); code != 200 {
		t.Errorf("API while draining: %d, want 200", code)
	}
	// ... and tells keep-alive clients to go elsewhere.
	if res, err := http.Get("http://" + port + "/cve/CVE-2024-0001"); err != nil || !res.Close {
		t.Errorf("API while draining: %v, Connection: close %v", err, err == nil && res.Close)
	} else {
		res.Body.Close()
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v; log:\n%s", err, logs.String())
	}
	// Every log line is one JSON object; each load says its counts.
	loads := 0
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Errorf("log line is not JSON: %s", line)
			continue
		}
		if rec["msg"] == "snapshot loaded" {
			loads++
			if rec["cves"] != 50.0 || rec["duration"] == nil {
				t.Errorf("load line without counts or duration: %s", line)
			}
		}
	}
	if loads != 2 {
		t.Errorf("%d load lines, want 2:\n%s", loads, logs.String())
	}
	// The log ends by saying the drain is over and the exit clean, and
	// how long it took from the signal (at least -drain-wait).
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	var last struct {
		Msg      string `json:"msg"`
		Duration int64  `json:"duration"`
	}
	json.Unmarshal([]byte(lines[len(lines)-1]), &last)
	if last.Msg != "drained; exiting cleanly" || time.Duration(last.Duration) < 2*time.Second {
		t.Errorf("last log line %s, want \"drained; exiting cleanly\" with its duration", lines[len(lines)-1])
	}
}

func waitFor(t *testing.T, logs *syncBuffer, s string) {
	t.Helper()
	for i := 0; i < 200; i++ {
		if strings.Contains(logs.String(), s) {
			return
		}
		time.Sleep(25 * time.Millisecond)
	}
	t.Fatalf("log never said %q:\n%s", s, logs.String())
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestReloadUnchanged: a SIGHUP that finds the snapshot served (same
// manifest) does not load it again; a changed one is loaded.
// openMain opens a server of the snapshot in dir on free loopback ports,
// logging to the buffer it returns, and closes it when t ends.
func openMain(t *testing.T, dir string) (*Main, *syncBuffer) {
	t.Helper()
	logs := new(syncBuffer)
	m := &Main{Snapshot: dir, Addr: "127.0.0.1:0", AdminAddr: "127.0.0.1:0", Log: slog.New(slog.NewTextHandler(logs, nil))}
	if err := m.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m, logs
}

func TestReloadUnchanged(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "current")
	version(t, dir, "v0", time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	m, logs := openMain(t, dir)
	first := m.cur.Load()
	swapped, err := m.reload()
	if err != nil || swapped || m.cur.Load() != first {
		t.Fatalf("reload of the same snapshot: swapped %v, err %v, same index %v", swapped, err, m.cur.Load() == first)
	}
	if !strings.Contains(logs.String(), "snapshot unchanged; not loaded again") {
		t.Errorf("log lacks the skip:\n%s", logs.String())
	}
	if got := testutil.ToFloat64(m.metrics.reloads.WithLabelValues("unchanged")); got != 1 {
		t.Errorf("reloads{outcome=unchanged} = %v, want 1", got)
	}
	version(t, dir, "v1", time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC))
	if swapped, err := m.reload(); err != nil || !swapped || m.cur.Load() == first {
		t.Fatalf("reload of a new snapshot: swapped %v, err %v", swapped, err)
	}
}

// TestReloadMakesVendorsBeforeSwap: a load leaves the vendor and product
// tables for later, but a reload makes them before the new snapshot
// takes the served one's place: a snapshot whose manifest gives other
// counts than its tables hold is refused and the served one stays (it
// would be served, and the error only logged, if the tables were made
// after the swap), and a good one then serves.
func TestReloadMakesVendorsBeforeSwap(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "current")
	version(t, dir, "v0", time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	m, _ := openMain(t, dir)
	first := m.cur.Load()

	version(t, dir, "v1", time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC))
	p := filepath.Join(dir, loader.ManifestName)
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var man map[string]any
	if err := json.Unmarshal(raw, &man); err != nil {
		t.Fatal(err)
	}
	man["counts"].(map[string]any)["vendors"] = 2 // it has one, "v"
	if raw, err = json.Marshal(man); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	swapped, err := m.reload()
	if err == nil || swapped || m.cur.Load() != first {
		t.Fatalf("reload of a snapshot counting 2 vendors for 1: swapped %v, err %v, same index %v", swapped, err, m.cur.Load() == first)
	}
	if !strings.Contains(err.Error(), "1 vendors and 1 products, the snapshot says 2 and 1") {
		t.Errorf("error %q does not say which counts differ", err)
	}

	version(t, dir, "v2", time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC))
	if swapped, err := m.reload(); err != nil || !swapped || m.cur.Load() == first {
		t.Fatalf("reload of a good snapshot: swapped %v, err %v", swapped, err)
	}
}
