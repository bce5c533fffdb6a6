package oci

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"

	"github.com/vulnd/vulnd/loader"
)

// Limits on what a registry may hand a puller.
const (
	// maxManifestBytes bounds the artifact's OCI manifest.
	maxManifestBytes = 1 << 20
	// maxLayerBytes bounds one file of the snapshot; maxTotalBytes all.
	maxLayerBytes = 16 << 30
	maxTotalBytes = 32 << 30
)

// ErrNotSnapshot is wrapped by Fetch's error when the artifact is not a
// vulnd snapshot of this vulnd's format: a bad artifact, not a registry
// that cannot be reached.
var ErrNotSnapshot = errors.New("not a vulnd snapshot artifact")

// Artifact is a vulnd snapshot artifact in a registry, its manifest read
// and checked.
type Artifact struct {
	// Descriptor is the OCI manifest's; its digest names the artifact.
	Descriptor ocispec.Descriptor
	// SnapshotID is the id of the snapshot it holds (from its
	// manifest.json layer's digest, before downloading anything).
	SnapshotID string
	// BuiltAt is its build time, as annotated ("" when not).
	BuiltAt string
	layers  []ocispec.Descriptor
}

// Size is the bytes Download fetches.
func (a *Artifact) Size() int64 {
	var n int64
	for _, l := range a.layers {
		n += l.Size
	}
	return n
}

// Fetch reads the manifest desc names from src and checks that it is a
// vulnd snapshot artifact that Download can write safely: an OCI image
// manifest of ArtifactType, one layer named manifest.json and one for
// each data file of this vulnd's format, each with its media type, a
// sha256 digest and a size within bounds, and nothing else. The manifest's
// own digest and size are checked as it is read. A failing check wraps
// ErrNotSnapshot.
func Fetch(ctx context.Context, src oras.ReadOnlyTarget, desc ocispec.Descriptor) (*Artifact, error) {
	if desc.MediaType != ocispec.MediaTypeImageManifest {
		return nil, fmt.Errorf("%w: %s is a %q, not an OCI image manifest", ErrNotSnapshot, desc.Digest, desc.MediaType)
	}
	if desc.Size <= 0 || desc.Size > maxManifestBytes {
		return nil, fmt.Errorf("%w: manifest %s has size %d (limit %d)", ErrNotSnapshot, desc.Digest, desc.Size, maxManifestBytes)
	}
	raw, err := content.FetchAll(ctx, src, desc)
	if err != nil {
		if errors.Is(err, content.ErrMismatchedDigest) || errors.Is(err, content.ErrTrailingData) {
			return nil, fmt.Errorf("%w: manifest %s: %v", ErrNotSnapshot, desc.Digest, err)
		}
		return nil, err
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%w: manifest %s: %v", ErrNotSnapshot, desc.Digest, err)
	}
	if m.MediaType != ocispec.MediaTypeImageManifest || m.ArtifactType != ArtifactType {
		return nil, fmt.Errorf("%w: manifest %s has media type %q and artifact type %q, want %q and %q",
			ErrNotSnapshot, desc.Digest, m.MediaType, m.ArtifactType, ocispec.MediaTypeImageManifest, ArtifactType)
	}
	// The files of the snapshot's format version, as published (the
	// current one's when the annotation says none).
	files := loader.DataFileNames()
	if v, err := strconv.Atoi(m.Annotations[AnnotationFormat]); err == nil && loader.DataFileNamesOf(v) != nil {
		files = loader.DataFileNamesOf(v)
	}
	want := append([]string{loader.ManifestName}, files...)
	optional := loader.OptionalDataFileNames()
	if len(m.Layers) < len(want) || len(m.Layers) > len(want)+len(optional) {
		return nil, fmt.Errorf("%w: manifest %s has %d layers, want %d (%s and the data files)",
			ErrNotSnapshot, desc.Digest, len(m.Layers), len(want), loader.ManifestName)
	}
	seen := map[string]bool{}
	var total int64
	a := &Artifact{Descriptor: desc, BuiltAt: m.Annotations[AnnotationBuiltAt], layers: m.Layers}
	for i, l := range m.Layers {
		name := l.Annotations[ocispec.AnnotationTitle]
		wantType := MediaTypeData
		if name == loader.ManifestName {
			wantType = MediaTypeManifest
		}
		switch {
		case !slices.Contains(want, name) && !slices.Contains(optional, name):
			return nil, fmt.Errorf("%w: layer %d is named %q, which is no file of a snapshot", ErrNotSnapshot, i+1, name)
		case seen[name]:
			return nil, fmt.Errorf("%w: two layers are named %q", ErrNotSnapshot, name)
		case l.MediaType != wantType:
			return nil, fmt.Errorf("%w: layer %s has media type %q, want %q", ErrNotSnapshot, name, l.MediaType, wantType)
		case l.Digest.Validate() != nil || l.Digest.Algorithm() != "sha256":
			return nil, fmt.Errorf("%w: layer %s has digest %q, want a sha256 digest", ErrNotSnapshot, name, l.Digest)
		case l.Size < 0 || l.Size > maxLayerBytes:
			return nil, fmt.Errorf("%w: layer %s has size %d (limit %d)", ErrNotSnapshot, name, l.Size, int64(maxLayerBytes))
		}
		seen[name] = true
		total += l.Size
		if name == loader.ManifestName {
			a.SnapshotID = loader.IDFromSum(l.Digest.Encoded())
		}
	}
	for _, name := range want {
		if !seen[name] {
			return nil, fmt.Errorf("%w: no layer is named %q", ErrNotSnapshot, name)
		}
	}
	if total > maxTotalBytes {
		return nil, fmt.Errorf("%w: its layers add up to %d bytes (limit %d)", ErrNotSnapshot, total, int64(maxTotalBytes))
	}
	return a, nil
}

// Download writes the artifact's files into dir, which must exist and be
// empty (a new directory beside the snapshot served). Each file is
// checked against its layer's digest and size as it is written, and
// synced. On error dir may hold part of the files: the caller removes it.
func (a *Artifact) Download(ctx context.Context, src oras.ReadOnlyTarget, dir string) error {
	for _, l := range a.layers {
		name := l.Annotations[ocispec.AnnotationTitle]
		if err := downloadFile(ctx, src, l, filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("layer %s (%s): %w", name, l.Digest, err)
		}
	}
	return nil
}

// Stamps downloads the artifact's manifest.json, CVE and details files
// (only those, see loader.StampFiles) into a temporary directory, reads
// the CVEs' names and lastModified from them (loader.ReadStamps) and
// removes the directory: what publish compares a new snapshot with.
func (a *Artifact) Stamps(ctx context.Context, src oras.ReadOnlyTarget) ([]loader.Stamp, error) {
	dir, err := os.MkdirTemp("", "vulnd-stamps-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	for _, l := range a.layers {
		name := l.Annotations[ocispec.AnnotationTitle]
		if !slices.Contains(loader.StampFiles(), name) {
			continue
		}
		if err := downloadFile(ctx, src, l, filepath.Join(dir, name)); err != nil {
			return nil, fmt.Errorf("layer %s (%s): %w", name, l.Digest, err)
		}
	}
	return loader.ReadStamps(dir)
}

func downloadFile(ctx context.Context, src oras.ReadOnlyTarget, l ocispec.Descriptor, path string) error {
	rc, err := src.Fetch(ctx, l)
	if err != nil {
		return err
	}
	defer rc.Close()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	vr := content.NewVerifyReader(rc, l)
	if _, err := io.Copy(f, vr); err != nil {
		f.Close()
		return err
	}
	if err := vr.Verify(); err != nil {
		f.Close()
		return fmt.Errorf("%w: %v", ErrNotSnapshot, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
