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
	"math/rand/v2"
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
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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

// recordingProxy stands in front of a registry and records the blobs
// sent through it (the digest of each upload's closing PUT) and fetched
// (GETs of /blobs/DIGEST).
type recordingProxy struct {
	addr       string
	mu         sync.Mutex
	puts, gets []string
}

func startRecordingProxy(t *testing.T, registryAddr string) *recordingProxy {
	t.Helper()
	p := &recordingProxy{}
	rp := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: registryAddr})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		switch _, blob, _ := strings.Cut(r.URL.Path, "/blobs/"); {
		case r.Method == http.MethodPut && strings.HasPrefix(blob, "uploads/"):
			p.puts = append(p.puts, r.URL.Query().Get("digest"))
		case r.Method == http.MethodGet && strings.HasPrefix(blob, "sha256:"):
			p.gets = append(p.gets, blob)
		}
		p.mu.Unlock()
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	p.addr = srv.Listener.Addr().String()
	return p
}

// take returns the digests sent and fetched since the last take, sorted.
func (p *recordingProxy) take() (puts, gets []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	puts, gets = p.puts, p.gets
	p.puts, p.gets = nil, nil
	slices.Sort(puts)
	slices.Sort(gets)
	return puts, gets
}

// chunkySnapshot writes a snapshot of 800 CVEs whose CVE file has
// several chunks (each CVE carries 24 kB of text, a slice of a random
// pool); the first changed CVEs have another text of the same length and
// a later lastModified, so the chunks of the others stay as they are.
func chunkySnapshot(t *testing.T, dir string, changed int, at time.Time) {
	t.Helper()
	d := &index.Data{CWEs: []index.CWE{{Name: "CWE-79", Description: "x", Type: "Weakness Base", CreatedAt: "2006-07-19 00:00:00Z", UpdatedAt: "2006-07-19 00:00:00Z"}}}
	r := rand.New(rand.NewPCG(1, 2))
	pool := make([]byte, 1<<16)
	for k := range pool {
		pool[k] = "abcdefghijklmnopqrstuvwxyz     "[r.IntN(31)]
	}
	const size = 24000
	for i := range 800 {
		off := r.IntN(len(pool) - size)
		c := index.CVE{
			Name: fmt.Sprintf("CVE-2024-%05d", i+1), Summary: string(pool[off : off+size]),
			CreatedAt: "2024-01-01 00:00:00Z", UpdatedAt: "2024-01-01 00:00:00Z",
			CPEs: []index.CPE{{ID: 1, URI: "cpe:2.3:a:v:p:1:*:*:*:*:*:*:*", Vendor: "v", Product: "p", Version: "1"}},
			CWEs: []string{"CWE-79"},
		}
		if i < changed {
			c.Summary = "CHANGED" + c.Summary[len("CHANGED"):]
			c.UpdatedAt = "2024-02-01 00:00:00Z"
		}
		d.CVEs = append(d.CVEs, c)
	}
	if _, err := loader.Write(dir, d, at, nil); err != nil {
		t.Fatal(err)
	}
}

// chunkDigests are the digests of the chunks of the snapshot manifest
// m's files, each once, with their sizes.
func chunkDigests(m loader.Manifest) map[string]int64 {
	out := map[string]int64{}
	for _, fi := range m.Files {
		for _, c := range fi.Chunks {
			out["sha256:"+c.SHA256] = c.Size
		}
	}
	return out
}

// TestPublishPullOnlyChanged: against a real registry, a refresh sends
// only the chunks the registry does not hold yet (and manifest.json),
// its refresh guard downloads only the tagged snapshot's CVE and details
// chunks the new one does not share, and a replica downloads only the
// chunks its snapshot on disk does not hold, copying the others; publish's
// and the pull's log lines say how many blobs and bytes each moved.
func TestPublishPullOnlyChanged(t *testing.T) {
	reg := startRegistry(t)
	// The operator and the replica each through their own proxy, so what
	// each moves is told apart.
	pub, pull := startRecordingProxy(t, reg.addr), startRecordingProxy(t, reg.addr)
	tmp := t.TempDir()
	v1, v2 := filepath.Join(tmp, "v1"), filepath.Join(tmp, "v2")
	chunkySnapshot(t, v1, 0, time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	chunkySnapshot(t, v2, 5, time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC))
	m1, m2 := readSnapshotManifest(t, v1), readSnapshotManifest(t, v2)
	if n := len(m2.Files["cves"].Chunks); n < 4 {
		t.Fatalf("the CVE file has %d chunks, want 4 or more for this test", n)
	}
	c1, c2 := chunkDigests(m1), chunkDigests(m2)
	manifest1, _ := os.ReadFile(filepath.Join(v1, loader.ManifestName))
	manifest2, _ := os.ReadFile(filepath.Join(v2, loader.ManifestName))
	d1, d2 := digestOf(manifest1), digestOf(manifest2)
	// What v2 adds: its manifest.json and the chunks v1 does not have.
	added := []string{d2}
	addedBytes, total := int64(len(manifest2)), int64(len(manifest2))
	for d, size := range c2 {
		total += size
		if _, ok := c1[d]; !ok {
			added = append(added, d)
			addedBytes += size
		}
	}
	slices.Sort(added)
	if cves := len(m2.Files["cves"].Chunks); slices.ContainsFunc(m2.Files["cves"].Chunks[1:], func(c loader.Chunk) bool {
		_, shared := c1["sha256:"+c.SHA256]
		return !shared
	}) {
		t.Fatalf("v2 changes other chunks of its %d CVE chunks than the first; the fixture is not what this test needs", cves)
	}

	base := "oci://" + pub.addr + "/vulnd/snapshots"
	var out, errb bytes.Buffer
	if code := run([]string{"publish", "-plain-http", "-to", base + ":v1", v1}, &out, &errb); code != 0 {
		t.Fatalf("publish v1: exit %d: %s", code, errb.String())
	}
	pub.take()

	var logs syncBuffer
	outcomes := make(chan string, 100)
	m := &Main{Snapshot: filepath.Join(tmp, "replica"), Addr: "127.0.0.1:0", Log: slog.New(slog.NewTextHandler(&logs, nil)),
		Pull: "oci://" + pull.addr + "/vulnd/snapshots:latest", PullEvery: 100 * time.Millisecond, PlainHTTP: true,
		OnPull: func(outcome string, err error) { outcomes <- outcome }}
	if err := m.Open(); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	_, gets := pull.take()
	if want := len(c1) + 1; len(gets) != want {
		t.Errorf("the first pull fetched %d blobs, want all %d", len(gets), want)
	}
	if want := fmt.Sprintf("fetched_blobs=%d fetched_bytes=%d reused_blobs=0 reused_bytes=0", len(c1)+1, int64(len(manifest1))+sum(c1)); !strings.Contains(logs.String(), want) {
		t.Errorf("the first pull's log line does not say %q:\n%s", want, logs.String())
	}

	// The refresh: only what v2 adds is sent.
	out.Reset()
	errb.Reset()
	if code := run([]string{"publish", "-plain-http", "-to", base + ":v2", v2}, &out, &errb); code != 0 {
		t.Fatalf("publish v2: exit %d: %s", code, errb.String())
	}
	puts, gets := pub.take()
	if diff := cmp.Diff(added, puts); diff != "" {
		t.Errorf("the second publish sent other blobs than the chunks v1 has not (-want +got):\n%s", diff)
	}
	wantLine := fmt.Sprintf(": sent %d of its %d blobs, %s of %s (the registry had the others), tagged v2, latest, in ",
		len(added), len(c2)+1, byteSize(addedBytes), byteSize(total))
	if !strings.Contains(errb.String(), wantLine) {
		t.Errorf("publish said %q, want %q", errb.String(), wantLine)
	}
	// The guard compared with v1: its manifest.json, and the chunks of its
	// CVE and details files that v2 does not share.
	wantGets := []string{d1}
	for _, key := range []string{"cves", "details"} {
		for _, c := range m1.Files[key].Chunks {
			if _, ok := c2["sha256:"+c.SHA256]; !ok {
				wantGets = append(wantGets, "sha256:"+c.SHA256)
			}
		}
	}
	slices.Sort(wantGets)
	if diff := cmp.Diff(wantGets, gets); diff != "" {
		t.Errorf("the refresh guard fetched other blobs than v1's it lacks (-want +got):\n%s", diff)
	}

	// The replica: only what v2 adds is downloaded, the rest copied.
	deadline := time.After(20 * time.Second)
	for updated := false; !updated; {
		select {
		case o := <-outcomes:
			updated = o == pullUpdated
		case <-deadline:
			t.Fatalf("the replica did not pull v2 in 20 s:\n%s", logs.String())
		}
	}
	if id, _ := statusOf(t, m); id != m2ID(t, v2) {
		t.Fatalf("serving %s, want v2", id)
	}
	_, gets = pull.take()
	if diff := cmp.Diff(added, gets); diff != "" {
		t.Errorf("the replica fetched other blobs than the chunks it lacks (-want +got):\n%s", diff)
	}
	if want := fmt.Sprintf("fetched_blobs=%d fetched_bytes=%d reused_blobs=%d reused_bytes=%d",
		len(added), addedBytes, len(c2)+1-len(added), total-addedBytes); !strings.Contains(logs.String(), want) {
		t.Errorf("the pull's log line does not say %q:\n%s", want, logs.String())
	}
	// And how long the download took, apart from the load.
	if !regexp.MustCompile(`pulled a new snapshot" .* reused_bytes=[0-9]+ download=[0-9.]+(ms|s)\b`).MatchString(logs.String()) {
		t.Errorf("the pull's log line gives no download time:\n%s", logs.String())
	}
	t.Logf("the refresh sent and the replica fetched %d of %d blobs, %s of %s; the guard fetched %d blobs",
		len(added), len(c2)+1, byteSize(addedBytes), byteSize(total), len(wantGets))
	if 2*(len(added)-1) > len(c2) {
		t.Errorf("%d of %d chunks changed, want fewer than half", len(added)-1, len(c2))
	}
}

func digestOf(b []byte) string { return fmt.Sprintf("sha256:%x", sha256.Sum256(b)) }

func sum(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

func m2ID(t *testing.T, dir string) string {
	t.Helper()
	id, err := loader.ID(dir)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// TestPublishChecksSumsValidateDecodes: publish checks a snapshot by its
// sums, not by decoding it again: a manifest whose counts are not the
// data's (its files untouched) passes, and publish -validate, which
// checks it as vulnd validate does, refuses it (exit 1, one line, no tag).
func TestPublishChecksSumsValidateDecodes(t *testing.T) {
	reg := startRegistry(t)
	snap := filepath.Join(t.TempDir(), "snap")
	version(t, snap, "v1", time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	path := filepath.Join(snap, loader.ManifestName)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lied := bytes.Replace(raw, []byte(`"cves": 50,`), []byte(`"cves": 51,`), 1)
	if bytes.Equal(lied, raw) {
		t.Fatalf("no \"cves\": 50 in %s", raw)
	}
	if err := os.WriteFile(path, lied, 0o644); err != nil {
		t.Fatal(err)
	}
	base := "oci://" + reg.addr + "/vulnd/snapshots"
	var out, errb bytes.Buffer
	if code := run([]string{"publish", "-plain-http", "-validate", "-to", base + ":checked", snap}, &out, &errb); code != 1 {
		t.Fatalf("publish -validate: exit %d, want 1: %s", code, errb.String())
	}
	if line := errb.String(); strings.Count(line, "\n") != 1 || !strings.Contains(line, "counts") {
		t.Errorf("publish -validate said %q, want one line about the counts", line)
	}
	ref, _ := oci.ParseRef(base + ":checked")
	repo, err := oci.Repository(ref, oci.Options{PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Resolve(context.Background(), "checked"); !errors.Is(err, errdef.ErrNotFound) {
		t.Errorf("the tag exists after a refused publish -validate (%v)", err)
	}
	errb.Reset()
	if code := run([]string{"publish", "-plain-http", "-to", base + ":sums", snap}, &out, &errb); code != 0 {
		t.Errorf("publish (by sums): exit %d, want 0: %s", code, errb.String())
	}
}
