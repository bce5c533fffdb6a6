package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/opencontainers/go-digest"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote/errcode"

	"github.com/vulnd/vulnd/index"
	"github.com/vulnd/vulnd/loader"
	"github.com/vulnd/vulnd/loader/oci"
)

// The outcomes of a poll (vulnd_pull_total{outcome}).
const (
	pullUpdated     = "updated"     // a new snapshot was downloaded, loaded and is served
	pullUnchanged   = "unchanged"   // the tag names what is served
	pullUnreachable = "unreachable" // the registry did not answer, or failed for now (a 5xx): tried again
	pullInvalid     = "invalid"     // the artifact is not a good snapshot: wrong shape, a layer missing or not its size or digest, or it does not load
	pullFailed      = "failed"      // a local problem: the disk, or the directory could not be replaced
)

var pullOutcomes = []string{pullUpdated, pullUnchanged, pullUnreachable, pullInvalid, pullFailed}

// maxPollTime bounds one poll, the download and load included.
const maxPollTime = 30 * time.Minute

// puller keeps a replica on the snapshot a registry tag names: each poll
// resolves the tag and, when it names another artifact than the one
// served, downloads it into a new directory beside the snapshot's,
// loads it (every checksum and consistency check), puts it in the
// snapshot's place on disk, and swaps it in as SIGHUP does. Whatever goes
// wrong, the snapshot served keeps serving.
type puller struct {
	m    *Main
	ref  oci.Ref
	repo oras.ReadOnlyTarget
	// seen is the artifact the tag named at the last poll that found it
	// served (or installed it); bad the last one found not to be a good
	// snapshot, not downloaded again while the tag names it.
	seen, bad digest.Digest
	// moved is what the last download fetched and found on the disk, and
	// movedIn how long it took.
	moved   oci.Transfer
	movedIn time.Duration
}

func newPuller(m *Main) (*puller, error) {
	ref, err := oci.ParseRef(m.Pull)
	if err != nil {
		return nil, err
	}
	repo, err := oci.Repository(ref, oci.Options{PlainHTTP: m.PlainHTTP, UserAgent: userAgent()})
	if err != nil {
		return nil, err
	}
	p := &puller{m: m, ref: ref, repo: repo}
	if a, ok := loader.ReadArtifact(m.Snapshot); ok && a.Ref == ref.String() {
		p.seen = digest.Digest(a.Digest)
	}
	return p, nil
}

// downloadPrefix starts the name of every download directory, beside the
// snapshot directory: hidden, and named after it.
func (p *puller) downloadPrefix() string {
	return "." + filepath.Base(p.m.Snapshot) + ".pull-"
}

// removeStale removes the download directories a killed replica left
// beside the snapshot directory.
func (p *puller) removeStale() {
	stale, _ := filepath.Glob(filepath.Join(filepath.Dir(p.m.Snapshot), p.downloadPrefix()+"*"))
	for _, d := range stale {
		if err := os.RemoveAll(d); err == nil {
			p.m.Log.Info("removed a download a stopped replica left", "dir", d)
		}
	}
}

// run polls at once, then every interval less up to a fifth of it at
// random (so replicas started together drift apart, and a change is
// found within one interval), and whenever now receives, until ctx ends.
func (p *puller) run(ctx context.Context, every time.Duration, now <-chan struct{}) {
	for {
		p.poll(ctx)
		wait := every - time.Duration(rand.Int64N(int64(every)/5+1))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-now:
			t.Stop()
		case <-t.C:
		}
	}
}

// poll checks the tag once; its outcome is logged and counted.
func (p *puller) poll(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, maxPollTime)
	defer cancel()
	start := time.Now()
	outcome, err := p.check(ctx)
	if ctx.Err() != nil && errors.Is(context.Cause(ctx), context.Canceled) {
		return // stopping: nothing to report
	}
	p.m.metrics.pulled(outcome)
	log := p.m.Log.With("ref", p.ref.String(), "outcome", outcome, "duration", time.Since(start).Round(time.Millisecond))
	switch {
	case err != nil:
		log.Error("pull failed; the snapshot served keeps serving", "err", err)
	case outcome == pullUpdated:
		log.Info("pulled a new snapshot", "digest", p.seen.String(), p.movedAttrs())
	}
	if p.m.OnPull != nil {
		p.m.OnPull(outcome, err)
	}
}

// check is one poll's work.
func (p *puller) check(ctx context.Context) (string, error) {
	desc, err := p.repo.Resolve(ctx, p.ref.Reference())
	if err != nil {
		return pullUnreachable, fmt.Errorf("resolving %s: %w", p.ref, err)
	}
	switch desc.Digest {
	case p.seen:
		return pullUnchanged, nil
	case p.bad:
		return pullInvalid, fmt.Errorf("%s still names %s, found bad before", p.ref, desc.Digest)
	}
	a, err := oci.Fetch(ctx, p.repo, desc)
	if err != nil {
		outcome := fetchOutcome(err)
		if outcome == pullInvalid {
			p.bad = desc.Digest
		}
		return outcome, fmt.Errorf("%s@%s: %w", p.ref, desc.Digest, err)
	}
	if cur := p.m.cur.Load(); cur != nil && a.SnapshotID == cur.Meta().ID {
		// Published again (another tag, a moving tag): nothing to fetch.
		p.seen = desc.Digest
		return pullUnchanged, nil
	}
	tmp, outcome, err := p.download(ctx, a)
	if err == nil {
		defer os.RemoveAll(tmp) // gone once installed; a failure's leftovers
		outcome, err = p.loadInstall(tmp)
	}
	if err != nil {
		if outcome == pullInvalid {
			p.bad = desc.Digest
		}
		return outcome, fmt.Errorf("%s@%s: %w", p.ref, desc.Digest, err)
	}
	p.seen = desc.Digest
	return pullUpdated, nil
}

// download writes a's files, and an artifact.json saying where they came
// from, into a new directory beside the snapshot's; the caller removes
// it. On error there is nothing to remove, and the outcome says whose
// fault it was.
func (p *puller) download(ctx context.Context, a *oci.Artifact) (tmp, outcome string, err error) {
	tmp, err = os.MkdirTemp(filepath.Dir(p.m.Snapshot), p.downloadPrefix())
	if err != nil {
		return "", pullFailed, err
	}
	outcome, err = func() (string, error) {
		if err := os.Chmod(tmp, 0o755); err != nil { // as a build makes it
			return pullFailed, err
		}
		start := time.Now()
		t, err := a.Download(ctx, p.repo, tmp, p.m.Snapshot)
		if err != nil {
			return fetchOutcome(err), err
		}
		p.moved, p.movedIn = t, time.Since(start)
		art := index.Artifact{Ref: p.ref.String(), Digest: a.Descriptor.Digest.String(),
			PulledAt: time.Now().UTC().Format(index.TimeLayout)}
		if err := loader.WriteArtifact(tmp, art); err != nil {
			return pullFailed, err
		}
		return "", nil
	}()
	if err != nil {
		os.RemoveAll(tmp)
		return "", outcome, err
	}
	return tmp, "", nil
}

// movedAttrs are the log's account of the last download: the blobs (and
// their bytes) fetched from the registry, and those the snapshot on the
// disk already held, copied from there, each checked against its digest,
// and how long that took (the load is logged apart).
func (p *puller) movedAttrs() slog.Attr {
	t := p.moved
	return slog.Group("", "fetched_blobs", t.Fetched, "fetched_bytes", t.FetchedBytes,
		"reused_blobs", t.Reused, "reused_bytes", t.ReusedBytes, "download", p.movedIn.Round(time.Millisecond))
}

// fetchOutcome says whose fault a failed read of what the tag names (its
// manifest, or a layer the manifest lists) was:
//   - pullFailed: this machine's files (the disk).
//   - pullUnreachable: the registry did not answer, or not for now: no
//     connection, a connection cut mid-way (io.ErrUnexpectedEOF), a
//     timeout, or an error status other than 404 (5xx and 429, after
//     oras-go's retries; 401 and 403, which credentials may mend). The
//     next poll tries again.
//   - pullInvalid: the registry answered, and what it holds is not the
//     artifact the manifest describes: 404 for a layer it lists, bytes
//     that do not match the layer's digest or size, or a 200 whose
//     Content-Length or Docker-Content-Digest is not the layer's (oras-go
//     refuses these before reading, with errors of no type of their own:
//     whatever is not one of the above is such an answer). Asking again
//     gets the same answer, so the digest is not fetched again while the
//     tag names it.
func fetchOutcome(err error) string {
	var resp *errcode.ErrorResponse
	var uerr *url.Error
	var nerr net.Error
	switch {
	case errors.Is(err, oci.ErrNotSnapshot), errors.Is(err, errdef.ErrNotFound):
		return pullInvalid
	case errors.As(err, &resp):
		if resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone {
			return pullInvalid
		}
		return pullUnreachable
	case isLocal(err):
		return pullFailed
	case errors.As(err, &uerr), errors.As(err, &nerr), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		return pullUnreachable
	}
	return pullInvalid
}

// isLocal tells whether err came from this machine's files rather than
// from the network.
func isLocal(err error) bool {
	var pe *os.PathError
	return errors.As(err, &pe)
}

// loadInstall loads the downloaded snapshot in tmp, moves it into the
// snapshot's place on disk, and serves it.
func (p *puller) loadInstall(tmp string) (string, error) {
	m := p.m
	m.loadMu.Lock()
	defer m.loadMu.Unlock()
	// Whichever index is garbage now (the old one, or the failed load's
	// buffers), give its memory back at once, as SIGHUP does.
	defer m.settleMemory()
	start := time.Now()
	ix, man, err := m.loadForServing(tmp)
	took := time.Since(start)
	m.metrics.reloaded(err, took)
	if err != nil {
		return pullInvalid, err
	}
	if err := loader.Install(tmp, m.Snapshot); err != nil {
		// Served from memory only, the snapshot would be lost on a
		// restart: keep the one on disk, try again at the next poll.
		return pullFailed, fmt.Errorf("putting it in place of %s: %w", m.Snapshot, err)
	}
	ix = m.pulledAs(ix)
	m.cur.Store(ix)
	m.logLoaded("snapshot pulled and loaded", ix, man, took)
	m.watchStale(ix)
	m.warm(ix)
	return pullUpdated, nil
}

// firstPull fills a snapshot directory that holds no snapshot (or one
// that does not load) from the registry and serves what it pulled, so a
// new replica needs nothing on its disk. The artifact is loaded before it
// is put in place, so a bad one leaves the directory as it was. Nothing
// is served yet, so what artifact.json said was seen does not count.
func (p *puller) firstPull() error {
	ctx, cancel := context.WithTimeout(context.Background(), maxPollTime)
	defer cancel()
	p.seen = ""
	outcome, err := p.check(ctx)
	p.m.metrics.pulled(outcome)
	if err != nil {
		return fmt.Errorf("no snapshot to serve in %s, and the pull failed (%s): %w", p.m.Snapshot, outcome, err)
	}
	p.m.Log.Info("pulled the first snapshot", "ref", p.ref.String(), "digest", p.seen.String(), "dir", p.m.Snapshot, p.movedAttrs())
	return nil
}
