package oci

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"

	"github.com/vulnd/vulnd/index"
	"github.com/vulnd/vulnd/loader"
)

// Published is what Publish pushed.
type Published struct {
	// Manifest is the artifact's manifest descriptor (its digest is the
	// artifact's).
	Manifest ocispec.Descriptor
	// SnapshotID is the snapshot's id (as GET /status shows it).
	SnapshotID string
	// Layers is the number of files in the artifact; Pushed of them
	// were not in the registry yet, with PushedBytes bytes.
	Layers, Pushed int
	PushedBytes    int64
}

// Publish pushes the snapshot in dir to dst as an artifact and tags it
// with each of tags (the first names it; the others are moving tags such
// as "latest"). The snapshot is checked whole first (loader.Validate), so
// only a snapshot that would load is published. Files the registry
// already holds are not sent again. The tags move only once every layer
// and the manifest are in.
func Publish(ctx context.Context, dst oras.Target, dir string, tags []string) (Published, error) {
	if len(tags) == 0 {
		return Published{}, fmt.Errorf("publish %s: no tag", dir)
	}
	m, err := loader.Validate(dir)
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
	// The manifest's layer comes first: a puller reads it to tell
	// whether it already serves this snapshot.
	layers := []ocispec.Descriptor{manifestDesc}
	byName := map[string]loader.FileInfo{}
	for _, fi := range m.Files {
		byName[fi.Name] = fi
	}
	names := loader.DataFileNamesOf(m.Version)
	for _, name := range loader.OptionalDataFileNames() {
		if _, ok := byName[name]; ok {
			names = append(names, name) // the EPSS scores, when it has them
		}
	}
	for _, name := range names {
		fi, ok := byName[name]
		if !ok {
			return Published{}, fmt.Errorf("publish %s: the manifest lists no %s", dir, name)
		}
		layers = append(layers, ocispec.Descriptor{
			MediaType:   MediaTypeData,
			Digest:      digest.Digest("sha256:" + fi.SHA256),
			Size:        fi.Size,
			Annotations: map[string]string{ocispec.AnnotationTitle: name},
		})
	}
	p := Published{SnapshotID: id, Layers: len(layers)}
	for _, l := range layers {
		pushed, err := pushFile(ctx, dst, l, filepath.Join(dir, l.Annotations[ocispec.AnnotationTitle]))
		if err != nil {
			return p, fmt.Errorf("publish %s: %s: %w", dir, l.Annotations[ocispec.AnnotationTitle], err)
		}
		if pushed {
			p.Pushed++
			p.PushedBytes += l.Size
		}
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

// pushFile pushes the file at path as the blob desc unless dst has it;
// pushed tells whether it was sent.
func pushFile(ctx context.Context, dst oras.Target, desc ocispec.Descriptor, path string) (pushed bool, err error) {
	ok, err := dst.Exists(ctx, desc)
	if err != nil {
		return false, err
	}
	if ok {
		return false, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	if err := dst.Push(ctx, desc, f); err != nil {
		return false, err
	}
	return true, nil
}
