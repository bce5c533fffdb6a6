package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote/errcode"

	"github.com/vulnd/vulnd/index"
	"github.com/vulnd/vulnd/loader"
	"github.com/vulnd/vulnd/loader/oci"
)

// registry is the CNCF distribution registry (Debian's docker-registry),
// started on 127.0.0.1 with its storage in a temporary directory.
type registry struct {
	addr string
	// root is its storage: blobs are under docker/registry/v2/blobs.
	root string
	cmd  *exec.Cmd
}

// startRegistry starts a registry, or skips the test when docker-registry
// is not installed (.ci/run installs it, so CI never skips).
func startRegistry(t *testing.T) *registry {
	t.Helper()
	bin, err := exec.LookPath("docker-registry")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("docker-registry is not installed; .ci/run installs it")
		}
		t.Skip("docker-registry is not installed (apt-get install docker-registry)")
	}
	dir := t.TempDir()
	r := &registry{addr: freePort(t), root: filepath.Join(dir, "data")}
	conf := fmt.Sprintf("version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: %s\nhttp:\n  addr: %s\n", r.root, r.addr)
	if err := os.WriteFile(filepath.Join(dir, "config.yml"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	r.cmd = exec.Command(bin, "serve", filepath.Join(dir, "config.yml"))
	r.cmd.Stdout, r.cmd.Stderr = io.Discard, io.Discard
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.stop)
	for i := 0; ; i++ {
		res, err := http.Get("http://" + r.addr + "/v2/")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return r
			}
		}
		if i == 200 {
			t.Fatalf("the registry on %s never answered: %v", r.addr, err)
		}
		time.Sleep(25 * time.Millisecond)
	}
}

func (r *registry) stop() {
	if r.cmd.Process != nil && r.cmd.ProcessState == nil {
		r.cmd.Process.Kill()
		r.cmd.Wait()
	}
}

// publish runs vulnd publish and returns the digest it printed.
func publish(t *testing.T, ref, dir string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run([]string{"publish", "-plain-http", "-to", ref, dir}, &out, &errb); code != 0 {
		t.Fatalf("vulnd publish %s %s: exit %d: %s", ref, dir, code, errb.String())
	}
	_, after, ok := strings.Cut(strings.Fields(out.String())[0], "@")
	if !ok {
		t.Fatalf("vulnd publish printed %q, want REF@DIGEST ...", out.String())
	}
	return after
}

// statusOf GETs /status.
func statusOf(t *testing.T, m *Main) (id string, artifact map[string]string) {
	t.Helper()
	res, err := http.Get("http://" + m.APIAddr() + "/status")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var st struct {
		SnapshotID string            `json:"snapshot_id"`
		Artifact   map[string]string `json:"artifact"`
	}
	if err := json.NewDecoder(res.Body).Decode(&st); err != nil {
		t.Fatal(err)
	}
	return st.SnapshotID, st.Artifact
}

// pushBad pushes, under tag, an artifact with a snapshot's layer names in
// which cves.jsonl.zst holds other bytes: well formed, so every byte of it
// arrives, but it does not load.
func pushBad(t *testing.T, ref oci.Ref, tag, good string) {
	t.Helper()
	ctx := context.Background()
	repo, err := oci.Repository(ref, oci.Options{PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	var layers []ocispec.Descriptor
	for _, name := range append([]string{loader.ManifestName}, loader.DataFileNames()...) {
		b, err := os.ReadFile(filepath.Join(good, name))
		if err != nil {
			t.Fatal(err)
		}
		mt := oci.MediaTypeData
		if name == loader.ManifestName {
			mt = oci.MediaTypeManifest
		}
		if name == "cves.jsonl.zst" {
			b = append(b, "trailing garbage"...)
		}
		d := content.NewDescriptorFromBytes(mt, b)
		d.Annotations = map[string]string{ocispec.AnnotationTitle: name}
		if err := repo.Push(ctx, d, bytes.NewReader(b)); err != nil {
			t.Fatal(err)
		}
		layers = append(layers, d)
	}
	// The layout of a layer per file, which replicas still read: the bad
	// file arrives whole, and fails the load.
	desc, err := oras.PackManifest(ctx, repo, oras.PackManifestVersion1_1, oci.ArtifactTypeFiles, oras.PackManifestOptions{Layers: layers})
	if err != nil {
		t.Fatal(err)
	}
	if err := repo.Tag(ctx, desc, tag); err != nil {
		t.Fatal(err)
	}
}

// TestPullFollowsTag runs a replica against a real registry: it fills an
// empty directory from the tag, moves to each new artifact published,
// keeps serving through a bad artifact and a registry that is gone, and
// starts again from its disk without the registry.
func TestPullFollowsTag(t *testing.T) {
	reg := startRegistry(t)
	base := "oci://" + reg.addr + "/vulnd/snapshots"
	tmp := t.TempDir()
	v1, v2 := filepath.Join(tmp, "v1"), filepath.Join(tmp, "v2")
	version(t, v1, "v1", time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	version(t, v2, "v2", time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC))
	id1, _ := loader.ID(v1)
	id2, _ := loader.ID(v2)
	d1 := publish(t, base+":2026-11-22", v1) // and latest

	dir := filepath.Join(tmp, "replica", "snapshot")
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	// A download a killed replica left behind.
	stale := filepath.Join(filepath.Dir(dir), ".snapshot.pull-123")
	os.Mkdir(stale, 0o700)
	outcomes := make(chan string, 100)
	var logs syncBuffer
	newMain := func() *Main {
		return &Main{Snapshot: dir, Addr: "127.0.0.1:0", AdminAddr: "127.0.0.1:0", Log: slog.New(slog.NewTextHandler(&logs, nil)),
			Pull: base + ":latest", PullEvery: 100 * time.Millisecond, PlainHTTP: true,
			OnPull: func(outcome string, err error) { outcomes <- outcome }}
	}
	waitOutcome := func(want string) {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			select {
			case got := <-outcomes:
				if got == want {
					return
				}
			case <-deadline:
				t.Fatalf("no poll ended %s in 20 s:\n%s", want, logs.String())
			}
		}
	}
	m := newMain()
	if err := m.Open(); err != nil {
		t.Fatal(err)
	}
	defer func() { m.Close() }()
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale download %s is still there (%v)", stale, err)
	}
	id, art := statusOf(t, m)
	if id != id1 || art["digest"] != d1 || art["ref"] != base+":latest" {
		t.Fatalf("first pull: serving %s %v, want %s from %s", id, art, id1, d1)
	}
	waitOutcome(pullUnchanged)

	d2 := publish(t, base+":2026-11-23", v2)
	waitOutcome(pullUpdated)
	if id, art := statusOf(t, m); id != id2 || art["digest"] != d2 {
		t.Fatalf("after the second publish: serving %s %v, want %s from %s", id, art, id2, d2)
	}
	if got, _ := loader.ID(dir); got != id2 {
		t.Errorf("the snapshot on disk is %s, want %s", got, id2)
	}
	if a, ok := loader.ReadArtifact(dir); !ok || a.Digest != d2 {
		t.Errorf("artifact.json on disk: %+v %v, want digest %s", a, ok, d2)
	}

	// A bad artifact under the tag: counted, the old one serves, and it
	// is not downloaded again at every poll.
	ref, _ := oci.ParseRef(base + ":latest")
	pushBad(t, ref, "latest", v1)
	waitOutcome(pullInvalid)
	waitOutcome(pullInvalid)
	if id, _ := statusOf(t, m); id != id2 {
		t.Fatalf("after a bad artifact: serving %s, want %s", id, id2)
	}
	if n := strings.Count(logs.String(), "snapshot pulled and loaded"); n != 2 {
		t.Errorf("%d loads, want 2 (the bad artifact loaded once, never swapped in):\n%s", n, logs.String())
	}
	if got := testutil.ToFloat64(m.metrics.pulls.WithLabelValues(pullInvalid)); got < 2 {
		t.Errorf("vulnd_pull_total{outcome=invalid} = %v, want at least 2", got)
	}
	if entries, _ := os.ReadDir(filepath.Dir(dir)); len(entries) != 1 {
		t.Errorf("beside the snapshot: %v, want only it (failed downloads removed)", entries)
	}

	// The registry gone: counted, the snapshot keeps serving.
	reg.stop()
	waitOutcome(pullUnreachable)
	if id, _ := statusOf(t, m); id != id2 {
		t.Fatalf("with the registry gone: serving %s, want %s", id, id2)
	}
	m.Close()

	// A restart without the registry serves what is on disk.
	m = newMain()
	if err := m.Open(); err != nil {
		t.Fatalf("restart without the registry: %v", err)
	}
	if id, art := statusOf(t, m); id != id2 || art["digest"] != d2 {
		t.Fatalf("after a restart: serving %s %v, want %s from %s", id, art, id2, d2)
	}
}

// TestPullFirstStartFails: an empty directory and no registry is a clear
// start-up error, and the directory stays empty.
func TestPullFirstStartFails(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "snapshot")
	m := &Main{Snapshot: dir, Addr: "127.0.0.1:0", Pull: "oci://" + freePort(t) + "/vulnd/snapshots:latest", PlainHTTP: true}
	err := m.Open()
	if err == nil {
		m.Close()
		t.Fatal("Open succeeded with no snapshot and no registry")
	}
	if !strings.Contains(err.Error(), "no snapshot to serve in "+dir) || !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("error %q, want it to say there is no snapshot and the registry is unreachable", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s exists after a failed first pull", dir)
	}
}

// TestPullRepairsDamagedDisk: a snapshot on disk that does not load is
// replaced by the tag's at start, instead of the replica failing.
func TestPullRepairsDamagedDisk(t *testing.T) {
	reg := startRegistry(t)
	ref := "oci://" + reg.addr + "/vulnd/snapshots:latest"
	tmp := t.TempDir()
	good := filepath.Join(tmp, "good")
	version(t, good, "good", time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	d := publish(t, ref, good)
	dir := filepath.Join(tmp, "snapshot")
	corrupt(t, dir)
	var logs syncBuffer
	m := &Main{Snapshot: dir, Addr: "127.0.0.1:0", Pull: ref, PullEvery: time.Hour, PlainHTTP: true,
		Log: slog.New(slog.NewTextHandler(&logs, nil))}
	if err := m.Open(); err != nil {
		t.Fatalf("Open with a damaged snapshot and a good tag: %v", err)
	}
	defer m.Close()
	want, _ := loader.ID(good)
	if id, art := statusOf(t, m); id != want || art["digest"] != d {
		t.Fatalf("serving %s %v, want %s from %s", id, art, want, d)
	}
	if got, _ := loader.ID(dir); got != want {
		t.Errorf("the snapshot on disk is %s, want the pulled %s", got, want)
	}
	if !strings.Contains(logs.String(), "the snapshot on disk does not load") {
		t.Errorf("the log does not say why it pulled:\n%s", logs.String())
	}
}

// blobProxy stands in front of a registry, counting the GETs of blobs
// (the layers a replica downloads) and, when fail is set, answering them
// with that status instead.
type blobProxy struct {
	addr string
	gets atomic.Int64
	fail atomic.Int64
}

func startBlobProxy(t *testing.T, registryAddr string) *blobProxy {
	t.Helper()
	p := &blobProxy{}
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: registryAddr})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/") {
			p.gets.Add(1)
			if code := int(p.fail.Load()); code != 0 {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(code)
				fmt.Fprintf(w, `{"errors":[{"code":"UNKNOWN","message":"%s"}]}`, http.StatusText(code))
				return
			}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p.addr = srv.Listener.Addr().String()
	return p
}

// TestPullBadLayerNotFetchedAgain: a layer the registry serves cut short
// (its file truncated in the registry's storage) or answers 404 for is a
// bad artifact: counted invalid once, and not downloaded again while the
// tag names it. A 5xx is the registry's trouble, not the artifact's:
// unreachable, and tried again at the next poll.
func TestPullBadLayerNotFetchedAgain(t *testing.T) {
	reg := startRegistry(t)
	proxy := startBlobProxy(t, reg.addr)
	base := "oci://" + reg.addr + "/vulnd/snapshots"
	tmp := t.TempDir()
	snaps := map[string]string{}
	for i, v := range []string{"v1", "v2", "v3", "v4"} {
		snaps[v] = filepath.Join(tmp, v)
		version(t, snaps[v], v, time.Date(2026, 11, 22+i, 0, 0, 0, 0, time.UTC))
	}
	publish(t, base+":v1", snaps["v1"]) // and latest
	// push puts a snapshot under its own tag only; retag moves latest to it.
	push := func(v string) {
		t.Helper()
		var out, errb bytes.Buffer
		if code := run([]string{"publish", "-plain-http", "-also-tag", "", "-to", base + ":" + v, snaps[v]}, &out, &errb); code != 0 {
			t.Fatalf("vulnd publish %s: exit %d: %s", v, code, errb.String())
		}
	}
	ref, _ := oci.ParseRef(base + ":latest")
	repo, err := oci.Repository(ref, oci.Options{PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	retag := func(v string) {
		t.Helper()
		ctx := context.Background()
		desc, err := repo.Resolve(ctx, v)
		if err != nil {
			t.Fatal(err)
		}
		if err := repo.Tag(ctx, desc, "latest"); err != nil {
			t.Fatal(err)
		}
	}

	type poll struct {
		outcome string
		err     error
	}
	polls := make(chan poll, 1000)
	var logs syncBuffer
	m := &Main{Snapshot: filepath.Join(tmp, "replica"), Addr: "127.0.0.1:0", AdminAddr: "127.0.0.1:0",
		Log:  slog.New(slog.NewTextHandler(&logs, nil)),
		Pull: "oci://" + proxy.addr + "/vulnd/snapshots:latest", PullEvery: 100 * time.Millisecond, PlainHTTP: true,
		OnPull: func(outcome string, err error) { polls <- poll{outcome, err} }}
	// next is the outcome of the next poll that does not end in one of
	// skip (what polls started before the last change say).
	next := func(skip ...string) poll {
		t.Helper()
		deadline := time.After(30 * time.Second)
		for {
			select {
			case p := <-polls:
				if !slices.Contains(skip, p.outcome) {
					return p
				}
			case <-deadline:
				t.Fatalf("no poll ended other than %v in 30 s:\n%s", skip, logs.String())
			}
		}
	}
	if err := m.Open(); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	id1, _ := loader.ID(snaps["v1"])
	if p := next(); p.outcome != pullUnchanged {
		t.Fatalf("first poll after start: %s (%v), want %s", p.outcome, p.err, pullUnchanged)
	}

	// v2 with a layer of its own cut to 1000 bytes in the registry's
	// storage, then tagged latest.
	push("v2")
	truncateLayer(t, reg, snaps["v2"], snaps["v1"])
	retag("v2")
	p := next(pullUnchanged)
	if p.outcome != pullInvalid || strings.Contains(p.err.Error(), "found bad before") {
		t.Fatalf("the poll that found a layer cut short: %s (%v), want %s, downloaded once", p.outcome, p.err, pullInvalid)
	}
	gets := proxy.gets.Load()
	for range 3 {
		if p := next(); p.outcome != pullInvalid || !strings.Contains(p.err.Error(), "found bad before") {
			t.Fatalf("a later poll: %s (%v), want %s without downloading", p.outcome, p.err, pullInvalid)
		}
	}
	if got := proxy.gets.Load(); got != gets {
		t.Errorf("%d layers downloaded again after the artifact was found bad, want none", got-gets)
	}
	if id, _ := statusOf(t, m); id != id1 {
		t.Errorf("serving %s after the bad artifact, want %s", id, id1)
	}

	// v3, its layers answered 503: unreachable, and tried again.
	proxy.fail.Store(http.StatusServiceUnavailable)
	push("v3")
	retag("v3")
	if p := next(pullInvalid); p.outcome != pullUnreachable {
		t.Fatalf("a poll whose layer gets 503: %s (%v), want %s", p.outcome, p.err, pullUnreachable)
	}
	gets = proxy.gets.Load()
	if p := next(); p.outcome != pullUnreachable {
		t.Fatalf("the next poll whose layer gets 503: %s (%v), want %s", p.outcome, p.err, pullUnreachable)
	}
	if proxy.gets.Load() == gets {
		t.Errorf("after a 503, the next poll did not try the layers again")
	}
	// Then 404: invalid, and not fetched again once the registry is
	// well again.
	proxy.fail.Store(http.StatusNotFound)
	if p := next(pullUnreachable); p.outcome != pullInvalid {
		t.Fatalf("a poll whose layer gets 404: %s (%v), want %s", p.outcome, p.err, pullInvalid)
	}
	proxy.fail.Store(0)
	gets = proxy.gets.Load()
	if p := next(); p.outcome != pullInvalid || !strings.Contains(p.err.Error(), "found bad before") {
		t.Fatalf("a poll after the 404: %s (%v), want %s without downloading", p.outcome, p.err, pullInvalid)
	}
	if got := proxy.gets.Load(); got != gets {
		t.Errorf("%d layers downloaded again after a 404, want none", got-gets)
	}

	// A good v4 is pulled as usual.
	push("v4")
	retag("v4")
	if p := next(pullInvalid); p.outcome != pullUpdated {
		t.Fatalf("after a good publish: %s (%v), want %s", p.outcome, p.err, pullUpdated)
	}
	id4, _ := loader.ID(snaps["v4"])
	if id, _ := statusOf(t, m); id != id4 {
		t.Errorf("serving %s, want %s", id, id4)
	}
	if got := testutil.ToFloat64(m.metrics.pulls.WithLabelValues(pullUnreachable)); got < 2 {
		t.Errorf("vulnd_pull_total{outcome=unreachable} = %v, want at least 2", got)
	}
}

// truncateLayer cuts, in the registry's storage, the largest file of the
// snapshot in dir that the snapshot in other does not share to 1000
// bytes (half its size when smaller).
func truncateLayer(t *testing.T, reg *registry, dir, other string) {
	t.Helper()
	shared := map[string]bool{}
	sums := func(d string) map[string]int64 {
		out := map[string]int64{}
		for _, name := range append([]string{loader.ManifestName}, loader.DataFileNames()...) {
			b, err := os.ReadFile(filepath.Join(d, name))
			if err != nil {
				t.Fatal(err)
			}
			out[fmt.Sprintf("%x", sha256.Sum256(b))] = int64(len(b))
		}
		return out
	}
	for sum := range sums(other) {
		shared[sum] = true
	}
	var pick string
	var size int64
	for sum, n := range sums(dir) {
		if !shared[sum] && n > size {
			pick, size = sum, n
		}
	}
	if pick == "" {
		t.Fatalf("%s shares every file with %s", dir, other)
	}
	path := filepath.Join(reg.root, "docker", "registry", "v2", "blobs", "sha256", pick[:2], pick, "data")
	if err := os.Truncate(path, min(1000, size/2)); err != nil {
		t.Fatal(err)
	}
}

// TestFetchOutcome: whose fault a failed read of the tag's artifact is.
func TestFetchOutcome(t *testing.T) {
	refused := &url.Error{Op: "Get", URL: "http://127.0.0.1:1/v2/", Err: &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}}
	status := func(code int) error {
		return fmt.Errorf("layer x: %w", &errcode.ErrorResponse{Method: "GET", StatusCode: code})
	}
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"connection refused", fmt.Errorf("layer x: %w", refused), pullUnreachable},
		{"cut mid-way", fmt.Errorf("layer x: %w", io.ErrUnexpectedEOF), pullUnreachable},
		{"timeout", fmt.Errorf("layer x: %w", context.DeadlineExceeded), pullUnreachable},
		{"503", status(503), pullUnreachable},
		{"429", status(429), pullUnreachable},
		{"401", status(401), pullUnreachable},
		{"404 status", status(404), pullInvalid},
		{"404", fmt.Errorf("layer x: sha256:ab: %w", errdef.ErrNotFound), pullInvalid},
		{"wrong bytes", fmt.Errorf("layer x: %w: %v", oci.ErrNotSnapshot, content.ErrMismatchedDigest), pullInvalid},
		{"wrong Content-Length", errors.New(`layer x: GET "http://r/v2/x/blobs/sha256:ab": mismatch Content-Length`), pullInvalid},
		{"disk", fmt.Errorf("layer x: %w", &os.PathError{Op: "write", Path: "/x", Err: syscall.ENOSPC}), pullFailed},
	} {
		if got := fetchOutcome(c.err); got != c.want {
			t.Errorf("%s (%v): %s, want %s", c.name, c.err, got, c.want)
		}
	}
}

// TestPublishUnreachable: a publish to a registry that does not answer
// fails with exit 1 and one line that names the registry once.
func TestPublishUnreachable(t *testing.T) {
	snap := filepath.Join(t.TempDir(), "snap")
	version(t, snap, "v1", time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	addr := freePort(t) // nothing listens there
	var out, errb bytes.Buffer
	code := run([]string{"publish", "-plain-http", "-to", "oci://" + addr + "/vulnd/snapshots:x", snap}, &out, &errb)
	if code != 1 {
		t.Fatalf("exit %d, want 1; stderr %q", code, errb.String())
	}
	line := errb.String()
	if strings.Count(line, "\n") != 1 || out.Len() != 0 {
		t.Errorf("stdout %q, stderr %q: want nothing, and one line", out.String(), line)
	}
	for _, once := range []string{addr, "publish", snap} {
		if n := strings.Count(line, once); n != 1 {
			t.Errorf("%q is %d times in %q, want once", once, n, line)
		}
	}
	if !strings.Contains(line, "connection refused") {
		t.Errorf("%q does not say why", line)
	}
}

// readSnapshotManifest reads the manifest of the snapshot in dir.
func readSnapshotManifest(t *testing.T, dir string) loader.Manifest {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, loader.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	m, err := loader.ParseManifest(raw)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestStatusArtifactOnlyWhenPulled: a snapshot directory copied from a
// replica, artifact.json and all, is not "pulled" by the server it is
// copied to: /status's artifact is null and vulnd_snapshot_artifact_info
// absent under a plain serve, and under a serve -pull of another
// reference. docs/API.md: "null when the snapshot was built or copied
// onto the replica's disk".
func TestStatusArtifactOnlyWhenPulled(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "snap")
	version(t, dir, "v1", time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	copied := "oci://registry.example.com/vulnd/snapshots:latest"
	if err := loader.WriteArtifact(dir, index.Artifact{Ref: copied,
		Digest: "sha256:" + strings.Repeat("d", 64), PulledAt: "2026-11-22 06:00:00Z"}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, pull string }{
		{"plain serve", ""},
		{"serve -pull of another tag", "oci://" + freePort(t) + "/vulnd/snapshots:latest"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := &Main{Snapshot: dir, Addr: "127.0.0.1:0", AdminAddr: "127.0.0.1:0", Pull: c.pull, PullEvery: time.Hour, PlainHTTP: true}
			if err := m.Open(); err != nil {
				t.Fatal(err)
			}
			defer m.Close()
			if _, art := statusOf(t, m); art != nil {
				t.Errorf("/status artifact %v, want null", art)
			}
			if _, _, metrics := adminDo(t, m, "GET", "/metrics"); strings.Contains(metrics, "vulnd_snapshot_artifact_info{") {
				t.Errorf("/metrics has vulnd_snapshot_artifact_info for a copied snapshot")
			}
		})
	}
}

// TestPublishSaysWhatItSent: publish's stderr line gives what it sent in
// a unit that reads true (a snapshot of some kB is not "0.0 MB"), and
// says nothing was sent when the registry had every file.
func TestPublishSaysWhatItSent(t *testing.T) {
	reg := startRegistry(t)
	snap := filepath.Join(t.TempDir(), "snap")
	version(t, snap, "v1", time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	// A blob per distinct chunk (chunks of the same bytes are sent
	// once), and manifest.json.
	chunks := map[string]bool{}
	for _, fi := range readSnapshotManifest(t, snap).Files {
		for _, c := range fi.Chunks {
			chunks[c.SHA256] = true
		}
	}
	n := len(chunks) + 1
	for i, want := range []string{
		`^vulnd publish: ` + regexp.QuoteMeta(snap) + fmt.Sprintf(`: sent all %d blobs, \d+\.\d kB, tagged x, latest, in \S+\n$`, n),
		`^vulnd publish: ` + regexp.QuoteMeta(snap) + fmt.Sprintf(`: sent none of its %d blobs, \d+\.\d kB \(the registry had them all\), tagged y, latest, in \S+\n$`, n),
	} {
		var out, errb bytes.Buffer
		tag := []string{"x", "y"}[i]
		if code := run([]string{"publish", "-plain-http", "-to", "oci://" + reg.addr + "/vulnd/snapshots:" + tag, snap}, &out, &errb); code != 0 {
			t.Fatalf("publish %d: exit %d: %s", i+1, code, errb.String())
		}
		if !regexp.MustCompile(want).MatchString(errb.String()) {
			t.Errorf("publish %d said %q, want it to match %s", i+1, errb.String(), want)
		}
	}
}
