package oci

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"

	"github.com/vulnd/vulnd/index"
	"github.com/vulnd/vulnd/loader"
)

// pushWorkers is how many blobs Publish checks and pushes at once: each
// costs a round trip or three to the registry, most of them a HEAD
// answered "have it".
const pushWorkers = 4

// Published is what Publish pushed.
type Published struct {
	// Manifest is the artifact's manifest descriptor (its digest is the
	// artifact's).
	Manifest ocispec.Descriptor
	// SnapshotID is the snapshot's id (as GET /status shows it).
	SnapshotID string
	// Layers is the number of blobs of the artifact (its manifest.json
	// and each distinct chunk), of Bytes bytes in all; Pushed of them
	// were not in the registry yet, with PushedBytes bytes.
	Layers, Pushed     int
	Bytes, PushedBytes int64
}

// blob is a layer of the artifact and where its bytes are in dir.
type blob struct {
	desc      ocispec.Descriptor
	path      string
	off, size int64
}

// Publish pushes the snapshot in dir to dst as an artifact and tags it
// with each of tags (the first names it; the others are moving tags such
// as "latest"). The snapshot is checked by its sums first
// (loader.VerifySums: the manifest, and every data file's size and
// SHA-256s), so only the bytes a build wrote are published; a caller
// that wants every check of a load runs loader.Validate before. Blobs the
// registry already holds are not sent again. The tags move only once
// every layer and the manifest are in.
func Publish(ctx context.Context, dst oras.Target, dir string, tags []string) (Published, error) {
	if len(tags) == 0 {
		return Published{}, fmt.Errorf("publish %s: no tag", dir)
	}
	m, err := loader.VerifySums(dir)
	if err != nil {
		return Published{}, err
	}
	raw, err := os.ReadFile(filepath.Join(dir, loader.ManifestName))
	if err != nil {
		return Published{}, fmt.Errorf("publish %s: %w", dir, err)
	}
	sum := sha256.Sum256(raw)
	manifestDesc := ocispec.Descriptor{
		MediaType:   MediaTypeManifest,
		Digest:      digest.NewDigestFromBytes(digest.SHA256, sum[:]),
		Size:        int64(len(raw)),
		Annotations: map[string]string{ocispec.AnnotationTitle: loader.ManifestName},
	}
	id := loader.IDFromSum(hex.EncodeToString(sum[:]))
	blobs, err := chunkBlobs(dir, m)
	if err != nil {
		return Published{}, fmt.Errorf("publish %s: %w", dir, err)
	}
	// The manifest's layer comes first: a puller reads it to tell
	// whether it already serves this snapshot, and which chunks it needs.
	blobs = append([]blob{{desc: manifestDesc, path: filepath.Join(dir, loader.ManifestName), size: manifestDesc.Size}}, blobs...)
	layers := make([]ocispec.Descriptor, len(blobs))
	p := Published{SnapshotID: id, Layers: len(blobs)}
	for i, b := range blobs {
		layers[i] = b.desc
		p.Bytes += b.size
	}
	if err := pushBlobs(ctx, dst, blobs, &p); err != nil {
		return p, fmt.Errorf("publish %s: %w", dir, err)
	}
	built, err := time.Parse(index.TimeLayout, m.BuiltAt)
	if err != nil {
		return p, fmt.Errorf("publish %s: built_at %q: %w", dir, m.BuiltAt, err)
	}
	ann := map[string]string{
		ocispec.AnnotationCreated: built.UTC().Format(time.RFC3339),
		ocispec.AnnotationTitle:   "vulnd snapshot " + id,
		AnnotationID:              id,
		AnnotationFormat:          strconv.Itoa(m.Version),
		AnnotationBuiltAt:         m.BuiltAt,
	}
	c := m.Counts
	for kind, n := range map[string]int{"cves": c.CVEs, "cwes": c.CWEs, "vendors": c.Vendors,
		"products": c.Products, "reports": c.Reports, "alerts": c.Alerts} {
		ann[AnnotationCount+kind] = strconv.Itoa(n)
	}
	desc, err := oras.PackManifest(ctx, dst, oras.PackManifestVersion1_1, ArtifactType,
		oras.PackManifestOptions{Layers: layers, ManifestAnnotations: ann})
	if err != nil {
		return p, fmt.Errorf("publish %s: pushing the artifact's manifest: %w", dir, err)
	}
	p.Manifest = desc
	for _, tag := range slices.Compact(slices.Clone(tags)) {
		if err := dst.Tag(ctx, desc, tag); err != nil {
			return p, fmt.Errorf("publish %s: tagging %s: %w", dir, tag, err)
		}
	}
	return p, nil
}

// chunkBlobs are the chunks of m's data files as blobs, in the order of
// the files by name and of their chunks, each distinct chunk once.
func chunkBlobs(dir string, m loader.Manifest) ([]blob, error) {
	files := make([]loader.FileInfo, 0, len(m.Files))
	for _, fi := range m.Files {
		files = append(files, fi)
	}
	slices.SortFunc(files, func(a, b loader.FileInfo) int { return strings.Compare(a.Name, b.Name) })
	seen := map[digest.Digest]bool{}
	var out []blob
	for _, fi := range files {
		var off int64
		for _, c := range fi.Chunks {
			d := digest.NewDigestFromEncoded(digest.SHA256, c.SHA256)
			if err := d.Validate(); err != nil {
				return nil, fmt.Errorf("%s: chunk sha256 %q: %w", fi.Name, c.SHA256, err)
			}
			if !seen[d] {
				seen[d] = true
				out = append(out, blob{
					desc: ocispec.Descriptor{MediaType: MediaTypeChunk, Digest: d, Size: c.Size},
					path: filepath.Join(dir, fi.Name), off: off, size: c.Size,
				})
			}
			off += c.Size
		}
	}
	return out, nil
}

// pushBlobs pushes each blob dst does not hold yet, pushWorkers at a
// time, counting what it sent in p. The first error stops the rest.
func pushBlobs(ctx context.Context, dst oras.Target, blobs []blob, p *Published) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next         atomic.Int64
		pushed, sent atomic.Int64
		mu           sync.Mutex
		first        error
		wg           sync.WaitGroup
	)
	for range min(pushWorkers, len(blobs)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(blobs) && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				b := blobs[i]
				ok, err := pushBlob(ctx, dst, b)
				if err != nil {
					mu.Lock()
					if first == nil {
						first = fmt.Errorf("%s: %w", blobName(b), err)
					}
					mu.Unlock()
					cancel()
					return
				}
				if ok {
					pushed.Add(1)
					sent.Add(b.size)
				}
			}
		})
	}
	wg.Wait()
	p.Pushed, p.PushedBytes = int(pushed.Load()), sent.Load()
	if first != nil {
		return first
	}
	return ctx.Err()
}

// blobName names a blob in an error: its file, and where in it.
func blobName(b blob) string {
	if b.desc.MediaType == MediaTypeManifest {
		return filepath.Base(b.path)
	}
	return fmt.Sprintf("%s chunk at %d (%s)", filepath.Base(b.path), b.off, b.desc.Digest)
}

// pushBlob pushes b unless dst has it; pushed tells whether it was sent.
func pushBlob(ctx context.Context, dst oras.Target, b blob) (pushed bool, err error) {
	ok, err := dst.Exists(ctx, b.desc)
	if err != nil {
		return false, err
	}
	if ok {
		return false, nil
	}
	f, err := os.Open(b.path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	if err := dst.Push(ctx, b.desc, io.NewSectionReader(f, b.off, b.size)); err != nil {
		return false, err
	}
	return true, nil
}
