package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/signal"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry/remote"

	"github.com/vulnd/vulnd/loader"
	"github.com/vulnd/vulnd/loader/oci"
)

var publishHelp = help{
	usage: "publish -to oci://REGISTRY/REPOSITORY:TAG [-also-tag latest] [-plain-http] [-validate] SNAPSHOT",
	about: `Checks the snapshot in SNAPSHOT by its sums (the manifest, and every data
file's size and SHA-256s: the bytes vulnd build wrote, which it checked;
-validate checks it whole, as vulnd validate does), then pushes it to an
OCI registry as one artifact (type application/vnd.vulnd.snapshot.v2: its
manifest.json, then a blob per chunk of its data files, annotated with its
build time, id, format version and counts) and tags it TAG and each
-also-tag, once every blob is in. Blobs the registry already holds (the
chunks a new snapshot shares with the last one) are not sent again; the
same snapshot always makes the same artifact. Replicas follow a tag with
vulnd serve -pull, and download only the chunks they do not hold.
Credentials: VULND_REGISTRY_USERNAME and VULND_REGISTRY_PASSWORD, else
the Docker configuration (DOCKER_CONFIG or ~/.docker/config.json) that
docker login or oras login wrote. Prints REF@DIGEST snapshot ID on
stdout (the reference pushed, the artifact's manifest digest, the
snapshot's id) and what it sent on stderr. A bad command line (a -to
that is no oci:// reference with a tag, say) exits 2; a failure (a
snapshot that does not validate, a registry that does not answer,
SIGINT/SIGTERM, -timeout) exits 1 with one line, and no tag has moved.

The refresh guard, as in vulnd build -previous: when TAG or an -also-tag
already names another snapshot, its CVEs are downloaded (manifest.json,
cves.jsonl.zst and details.txt.zst only) and the new snapshot is refused
(exit 1, one line saying what tripped, no tag moved) when it has more
than 5 % fewer CVEs, or when any CVE's lastModified is older than in the
tagged one, so a fleet following the tag never pulls an emptied or
rolled-back snapshot. A CVE the tagged snapshot serves from its CVE JSON
5 record alone and the new one from NVD is NVD taking over, not compared
(NVD's lastModified is often older than the record's dateUpdated).
-force publishes it anyway.`,
	args: [][2]string{{"SNAPSHOT", "a snapshot directory, as vulnd build -o writes"}},
}

// tagPattern is the distribution spec's tag grammar.
var tagPattern = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$`)

// cmdPublish is vulnd publish: push a snapshot to an OCI registry.
func cmdPublish(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("publish")
	to := fs.String("to", "", "where to push, `oci://REGISTRY/REPOSITORY:TAG` (required)")
	also := fs.String("also-tag", "latest", "moving `TAGS` (comma-separated) also set to the artifact; none when empty")
	plain := fs.Bool("plain-http", false, "talk HTTP, not HTTPS, to the registry: only for one on localhost or a private network")
	timeout := fs.Duration("timeout", 30*time.Minute, "give up after this long")
	force := fs.Bool("force", false, "publish even a snapshot the refresh guard refuses against what the tags name now (see above)")
	validate := fs.Bool("validate", false, "check the snapshot whole first, as vulnd validate does (decodes every file: seconds to tens of seconds at NVD's scale), not by its sums alone")
	if err := parseFlags(fs, args, stdout); err != nil {
		return err
	}
	if err := checkArgs(fs, "SNAPSHOT", 1, 1); err != nil {
		return err
	}
	if *to == "" {
		return usageError{errors.New("-to is required")}
	}
	ref, err := oci.ParseRef(*to)
	if err != nil {
		return usageError{fmt.Errorf("-to: %w", err)}
	}
	if ref.IsDigest() {
		return usageError{fmt.Errorf("-to %s names a digest; publish needs a tag to set", *to)}
	}
	tags := []string{ref.Reference()}
	for _, t := range strings.Split(*also, ",") {
		if t = strings.TrimSpace(t); t == "" {
			continue
		}
		if !tagPattern.MatchString(t) {
			return usageError{fmt.Errorf("-also-tag %q is not a tag (letters, digits, _ . -, at most 128, not starting with . or -)", t)}
		}
		if !slices.Contains(tags, t) {
			tags = append(tags, t)
		}
	}
	if *timeout <= 0 {
		return usageError{errors.New("-timeout must be more than 0")}
	}
	repo, err := oci.Repository(ref, oci.Options{PlainHTTP: *plain, UserAgent: userAgent()})
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	dir := fs.Arg(0)
	start := time.Now()
	if *validate {
		if _, err := loader.Validate(dir); err != nil {
			return err
		}
	}
	if !*force {
		if err := guardTags(ctx, repo, ref, tags, dir, stderr); err != nil {
			if _, refused := errors.AsType[*loader.RefreshError](err); refused {
				return err
			}
			return publishError(ctx, dir, ref, *timeout, err)
		}
	}
	p, err := oci.Publish(ctx, repo, dir, tags)
	if err != nil {
		return publishError(ctx, dir, ref, *timeout, err)
	}
	var sent string
	switch {
	case p.Pushed == 0:
		sent = fmt.Sprintf("sent none of its %d blobs, %s (the registry had them all)", p.Layers, byteSize(p.Bytes))
	case p.Pushed < p.Layers:
		sent = fmt.Sprintf("sent %d of its %d blobs, %s of %s (the registry had the others)", p.Pushed, p.Layers, byteSize(p.PushedBytes), byteSize(p.Bytes))
	default:
		sent = fmt.Sprintf("sent all %d blobs, %s", p.Layers, byteSize(p.PushedBytes))
	}
	fmt.Fprintf(stderr, "vulnd publish: %s: %s, tagged %s, in %s\n",
		dir, sent, strings.Join(tags, ", "), time.Since(start).Round(time.Millisecond))
	fmt.Fprintf(stdout, "%s@%s snapshot %s\n", ref, p.Manifest.Digest, p.SnapshotID)
	return nil
}

// publishError is a failed publish's one line: the snapshot and where it
// went, then the cause, each said once. oras-go and net/http wrap a
// registry that does not answer in the URL and the address again
// (Head "http://HOST/v2/...": dial tcp HOST: connect: connection
// refused): the reference says where, so only the cause is kept.
func publishError(ctx context.Context, dir string, ref oci.Ref, timeout time.Duration, err error) error {
	var uerr *url.Error
	var op *net.OpError
	var why string
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		why = fmt.Sprintf("gave up after -timeout %s; no tag has moved", timeout)
	case ctx.Err() != nil:
		why = "stopped by a signal; no tag has moved"
	case errors.As(err, &op) && op.Err != nil:
		why = "the registry did not answer: " + op.Err.Error() + "; no tag has moved"
	case errors.As(err, &uerr):
		why = "the registry did not answer: " + uerr.Err.Error() + "; no tag has moved"
	default:
		// oci.Publish starts its errors "publish DIR: ", which this line
		// says already.
		why = strings.TrimPrefix(err.Error(), "publish "+dir+": ")
	}
	return wrapped{fmt.Sprintf("%s to %s: %s", dir, ref, why), err}
}

// wrapped is an error with a message of its own, over the error it
// replaces (for errors.Is and errors.As).
type wrapped struct {
	msg string
	err error
}

func (w wrapped) Error() string { return w.msg }
func (w wrapped) Unwrap() error { return w.err }

// userAgent is what vulnd tells the registries it talks to.
func userAgent() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return "vulnd/" + bi.Main.Version
	}
	return "vulnd"
}

// guardTags checks the snapshot in dir against the snapshot each of tags
// names now in repo (ref's repository), as vulnd build -previous does
// (loader.CheckRefresh): a tag that names nothing yet, this very
// snapshot, or the one it was built from with -previous while the build's
// own guard held (its manifest's refresh_of: the same check, made
// already) passes; one that names an artifact this vulnd cannot read is
// noted on stderr and passes (no replica of this vulnd serves it).
func guardTags(ctx context.Context, repo *remote.Repository, ref oci.Ref, tags []string, dir string, stderr io.Writer) error {
	m, id, err := loader.ReadManifest(dir)
	if err != nil {
		return err
	}
	var next []loader.Stamp
	seen := map[string]bool{}
	base := strings.TrimSuffix(ref.String(), ":"+ref.Reference())
	for _, tag := range tags {
		name := base + ":" + tag
		desc, err := repo.Resolve(ctx, tag)
		switch {
		case errors.Is(err, errdef.ErrNotFound):
			continue
		case err != nil:
			return fmt.Errorf("%s: %w", name, err)
		case seen[desc.Digest.String()]:
			continue
		}
		seen[desc.Digest.String()] = true
		a, err := oci.Fetch(ctx, repo, desc)
		switch {
		case errors.Is(err, oci.ErrNotSnapshot):
			fmt.Fprintf(stderr, "vulnd publish: %s names no snapshot this vulnd reads (%v); not compared with it\n", name, err)
			continue
		case err != nil:
			return fmt.Errorf("%s: %w", name, err)
		case a.SnapshotID == id, a.SnapshotID == m.RefreshOf:
			continue
		}
		// The chunks this snapshot shares with the tagged one are read
		// from dir, not downloaded.
		prev, _, err := a.Stamps(ctx, repo, dir)
		if err != nil {
			return fmt.Errorf("%s: reading the snapshot it names, to compare (-force publishes without): %w", name, err)
		}
		if next == nil {
			if next, err = loader.ReadStamps(dir); err != nil {
				return err
			}
		}
		if err := loader.CheckRefresh(prev, next, "the snapshot "+name+" names"); err != nil {
			return err
		}
	}
	return nil
}
