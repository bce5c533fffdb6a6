package oci

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/opencontainers/go-digest"
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
	// maxSnapshotManifestBytes bounds manifest.json (as loader does).
	maxSnapshotManifestBytes = 1 << 20
	// maxChunkBytes bounds a chunk (loader's limit on a chunk), and
	// maxChunkLayers their number (far more than the data's decoded
	// limit of 16 GB, at 4 MB a chunk, makes).
	maxChunkBytes  = 64 << 20
	maxChunkLayers = 20000
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
	// chunked: a blob per chunk (ArtifactType), else a layer per file
	// (ArtifactTypeFiles).
	chunked bool
	layers  []ocispec.Descriptor
}

// Size is the bytes of all its blobs: what Download fetches when no
// snapshot on the disk shares any.
func (a *Artifact) Size() int64 {
	var n int64
	for _, l := range a.layers {
		n += l.Size
	}
	return n
}

// Transfer is what a Download (or Stamps) moved: the blobs fetched from
// the registry, and those a snapshot on the disk held, copied from there
// (each checked against its digest all the same).
type Transfer struct {
	Fetched, Reused           int
	FetchedBytes, ReusedBytes int64
}

// Fetch reads the manifest desc names from src and checks that it is a
// vulnd snapshot artifact that Download can write safely: an OCI image
// manifest of ArtifactType whose first layer is manifest.json and whose
// others are chunks (or of ArtifactTypeFiles: one layer named
// manifest.json and one for each data file of its format), each with its
// media type, a sha256 digest and a size within bounds, and nothing else.
// The manifest's own digest and size are checked as it is read. A failing
// check wraps ErrNotSnapshot. Which chunks make which file is manifest.json's
// to say: Download checks it lists exactly the chunk layers.
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
	if m.MediaType != ocispec.MediaTypeImageManifest || (m.ArtifactType != ArtifactType && m.ArtifactType != ArtifactTypeFiles) {
		return nil, fmt.Errorf("%w: manifest %s has media type %q and artifact type %q, want %q and %q",
			ErrNotSnapshot, desc.Digest, m.MediaType, m.ArtifactType, ocispec.MediaTypeImageManifest, ArtifactType)
	}
	a := &Artifact{Descriptor: desc, BuiltAt: m.Annotations[AnnotationBuiltAt], layers: m.Layers,
		chunked: m.ArtifactType == ArtifactType}
	if a.chunked {
		err = a.checkChunkLayers(desc)
	} else {
		err = a.checkFileLayers(desc, m.Annotations[AnnotationFormat])
	}
	if err != nil {
		return nil, err
	}
	var total int64
	for _, l := range a.layers {
		total += l.Size
	}
	if total > maxTotalBytes {
		return nil, fmt.Errorf("%w: its layers add up to %d bytes (limit %d)", ErrNotSnapshot, total, int64(maxTotalBytes))
	}
	return a, nil
}

// checkLayer checks a layer's media type, digest and size.
func checkLayer(l ocispec.Descriptor, what, wantType string, limit int64) error {
	switch {
	case l.MediaType != wantType:
		return fmt.Errorf("%w: layer %s has media type %q, want %q", ErrNotSnapshot, what, l.MediaType, wantType)
	case l.Digest.Validate() != nil || l.Digest.Algorithm() != digest.SHA256:
		return fmt.Errorf("%w: layer %s has digest %q, want a sha256 digest", ErrNotSnapshot, what, l.Digest)
	case l.Size < 0 || l.Size > limit:
		return fmt.Errorf("%w: layer %s has size %d (limit %d)", ErrNotSnapshot, what, l.Size, limit)
	}
	return nil
}

// checkChunkLayers checks a chunked artifact's layers: manifest.json
// first, then distinct chunks.
func (a *Artifact) checkChunkLayers(desc ocispec.Descriptor) error {
	if len(a.layers) == 0 || a.layers[0].Annotations[ocispec.AnnotationTitle] != loader.ManifestName {
		return fmt.Errorf("%w: manifest %s: its first layer is not %s", ErrNotSnapshot, desc.Digest, loader.ManifestName)
	}
	if len(a.layers) > maxChunkLayers+1 {
		return fmt.Errorf("%w: manifest %s has %d layers (limit %d)", ErrNotSnapshot, desc.Digest, len(a.layers), maxChunkLayers+1)
	}
	if err := checkLayer(a.layers[0], loader.ManifestName, MediaTypeManifest, maxSnapshotManifestBytes); err != nil {
		return err
	}
	a.SnapshotID = loader.IDFromSum(a.layers[0].Digest.Encoded())
	seen := map[digest.Digest]bool{}
	for i, l := range a.layers[1:] {
		if err := checkLayer(l, fmt.Sprintf("%d", i+2), MediaTypeChunk, maxChunkBytes); err != nil {
			return err
		}
		if seen[l.Digest] {
			return fmt.Errorf("%w: the chunk %s is listed twice", ErrNotSnapshot, l.Digest)
		}
		seen[l.Digest] = true
	}
	return nil
}

// checkFileLayers checks the layers of an artifact of a layer per file
// (ArtifactTypeFiles), of the format version format says.
func (a *Artifact) checkFileLayers(desc ocispec.Descriptor, format string) error {
	// The files of the snapshot's format version, as published (the
	// current one's when the annotation says none).
	files := loader.DataFileNames()
	if v, err := strconv.Atoi(format); err == nil && loader.DataFileNamesOf(v) != nil {
		files = loader.DataFileNamesOf(v)
	}
	want := append([]string{loader.ManifestName}, files...)
	optional := loader.OptionalDataFileNames()
	if len(a.layers) < len(want) || len(a.layers) > len(want)+len(optional) {
		return fmt.Errorf("%w: manifest %s has %d layers, want %d (%s and the data files)",
			ErrNotSnapshot, desc.Digest, len(a.layers), len(want), loader.ManifestName)
	}
	seen := map[string]bool{}
	for i, l := range a.layers {
		name := l.Annotations[ocispec.AnnotationTitle]
		wantType, limit := MediaTypeData, int64(maxLayerBytes)
		if name == loader.ManifestName {
			wantType, limit = MediaTypeManifest, maxSnapshotManifestBytes
		}
		switch {
		case !slices.Contains(want, name) && !slices.Contains(optional, name):
			return fmt.Errorf("%w: layer %d is named %q, which is no file of a snapshot", ErrNotSnapshot, i+1, name)
		case seen[name]:
			return fmt.Errorf("%w: two layers are named %q", ErrNotSnapshot, name)
		}
		if err := checkLayer(l, name, wantType, limit); err != nil {
			return err
		}
		seen[name] = true
		if name == loader.ManifestName {
			a.SnapshotID = loader.IDFromSum(l.Digest.Encoded())
		}
	}
	for _, name := range want {
		if !seen[name] {
			return fmt.Errorf("%w: no layer is named %q", ErrNotSnapshot, name)
		}
	}
	return nil
}

// Download writes the artifact's files into dir, which must exist and be
// empty (a new directory beside the snapshot served). A blob that the
// snapshot in reuse (the one served; "" for none) holds, a chunk or a
// whole file of the same digest, is copied from there, the others are
// fetched from src, pullWorkers at a time; each is checked against its
// digest and size as it is written, and each file synced. On error dir
// may hold part of the files: the caller removes it.
func (a *Artifact) Download(ctx context.Context, src oras.ReadOnlyTarget, dir, reuse string) (Transfer, error) {
	return a.download(ctx, src, dir, reuse, nil)
}

// Stamps downloads the artifact's manifest.json, CVE and details files
// (only those, see loader.StampFiles) into a temporary directory, taking
// the blobs the snapshot in reuse holds from there ("" for none), reads
// the CVEs' names and lastModified from them (loader.ReadStamps) and
// removes the directory: what publish compares a new snapshot with.
func (a *Artifact) Stamps(ctx context.Context, src oras.ReadOnlyTarget, reuse string) ([]loader.Stamp, Transfer, error) {
	dir, err := os.MkdirTemp("", "vulnd-stamps-")
	if err != nil {
		return nil, Transfer{}, err
	}
	defer os.RemoveAll(dir)
	t, err := a.download(ctx, src, dir, reuse, loader.StampFiles())
	if err != nil {
		return nil, t, err
	}
	s, err := loader.ReadStamps(dir)
	return s, t, err
}

// piece is a blob to write at off in the file at path.
type piece struct {
	desc ocispec.Descriptor
	path string
	off  int64
}

// download is Download of only the files named in only (all when nil).
func (a *Artifact) download(ctx context.Context, src oras.ReadOnlyTarget, dir, reuse string, only []string) (Transfer, error) {
	want := func(name string) bool { return only == nil || slices.Contains(only, name) }
	var pieces []piece
	var t Transfer
	if !a.chunked {
		for _, l := range a.layers {
			if name := l.Annotations[ocispec.AnnotationTitle]; want(name) {
				pieces = append(pieces, piece{desc: l, path: filepath.Join(dir, name)})
			}
		}
	} else {
		// manifest.json says which chunks make which file.
		ml := a.layers[0]
		raw, err := fetchBlob(ctx, src, ml)
		if err != nil {
			return t, fmt.Errorf("layer %s (%s): %w", loader.ManifestName, ml.Digest, err)
		}
		t.Fetched, t.FetchedBytes = 1, ml.Size
		if err := writeFile(filepath.Join(dir, loader.ManifestName), raw); err != nil {
			return t, err
		}
		if pieces, err = a.chunkPieces(raw, dir, want); err != nil {
			return t, err
		}
	}
	got, err := fetchPieces(ctx, src, pieces, localBlobs(reuse))
	t.Fetched += got.Fetched
	t.FetchedBytes += got.FetchedBytes
	t.Reused, t.ReusedBytes = got.Reused, got.ReusedBytes
	return t, err
}

// chunkPieces reads the files and chunks the snapshot's manifest.json
// (raw) lists, checks that they are exactly the artifact's chunk layers,
// and returns the chunks of the files want keeps, where each goes in dir.
func (a *Artifact) chunkPieces(raw []byte, dir string, want func(string) bool) ([]piece, error) {
	m, err := loader.ParseManifest(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrNotSnapshot, loader.ManifestName, err)
	}
	layers := map[digest.Digest]int64{}
	for _, l := range a.layers[1:] {
		layers[l.Digest] = l.Size
	}
	listed := map[digest.Digest]bool{}
	var pieces []piece
	for _, fi := range m.Files {
		var off int64
		for i, c := range fi.Chunks {
			d := digest.NewDigestFromEncoded(digest.SHA256, c.SHA256)
			size, ok := layers[d]
			if !ok || size != c.Size {
				return nil, fmt.Errorf("%w: %s lists chunk %d of %s (%s, %d bytes), which is no layer of the artifact",
					ErrNotSnapshot, loader.ManifestName, i+1, fi.Name, d, c.Size)
			}
			listed[d] = true
			if want(fi.Name) {
				pieces = append(pieces, piece{desc: ocispec.Descriptor{MediaType: MediaTypeChunk, Digest: d, Size: c.Size},
					path: filepath.Join(dir, fi.Name), off: off})
			}
			off += c.Size
		}
		if want(fi.Name) && len(fi.Chunks) == 0 {
			// An empty file: no chunk, but the file.
			pieces = append(pieces, piece{path: filepath.Join(dir, fi.Name)})
		}
	}
	if len(listed) != len(layers) {
		return nil, fmt.Errorf("%w: %d of its %d chunk layers are no chunk %s lists", ErrNotSnapshot,
			len(layers)-len(listed), len(layers), loader.ManifestName)
	}
	return pieces, nil
}

// A local blob: where a snapshot on the disk holds a chunk or a file.
type localBlob struct {
	path      string
	off, size int64
}

// localBlobs indexes the chunks and whole files of the snapshot in dir by
// digest, from its manifest; nil when there is none or it does not read
// (the files are checked against their digests as they are copied, so a
// damaged snapshot costs a download, never a wrong byte).
func localBlobs(dir string) map[digest.Digest]localBlob {
	if dir == "" {
		return nil
	}
	raw, err := os.ReadFile(filepath.Join(dir, loader.ManifestName))
	if err != nil {
		return nil
	}
	m, err := loader.ParseManifest(raw)
	if err != nil {
		return nil
	}
	out := map[digest.Digest]localBlob{}
	for _, fi := range m.Files {
		path := filepath.Join(dir, fi.Name)
		out[digest.NewDigestFromEncoded(digest.SHA256, fi.SHA256)] = localBlob{path: path, size: fi.Size}
		var off int64
		for _, c := range fi.Chunks {
			out[digest.NewDigestFromEncoded(digest.SHA256, c.SHA256)] = localBlob{path: path, off: off, size: c.Size}
			off += c.Size
		}
	}
	return out
}

// pullWorkers is how many blobs Download fetches at once.
const pullWorkers = 4

// fetchPieces writes each piece into its file: copied from local when it
// holds the blob and its bytes match the digest, else fetched from src.
// The files are created (they must not exist), written at the pieces'
// offsets by pullWorkers goroutines, synced and closed. The first error
// stops the rest.
func fetchPieces(ctx context.Context, src oras.ReadOnlyTarget, pieces []piece, local map[digest.Digest]localBlob) (Transfer, error) {
	files := map[string]*os.File{}
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	for _, p := range pieces {
		if files[p.path] != nil {
			continue
		}
		f, err := os.OpenFile(p.path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			closeAll()
			return Transfer{}, err
		}
		files[p.path] = f
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next                      atomic.Int64
		fetched, reused           atomic.Int64
		fetchedBytes, reusedBytes atomic.Int64
		mu                        sync.Mutex
		first                     error
		wg                        sync.WaitGroup
	)
	for range min(pullWorkers, len(pieces)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(pieces) && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				p := pieces[i]
				if p.desc.Digest == "" {
					continue // an empty file
				}
				w := io.NewOffsetWriter(files[p.path], p.off)
				if lb, ok := local[p.desc.Digest]; ok && lb.size == p.desc.Size && copyLocal(w, lb, p.desc) == nil {
					reused.Add(1)
					reusedBytes.Add(p.desc.Size)
					continue
				}
				w = io.NewOffsetWriter(files[p.path], p.off) // from the start again
				if err := fetchTo(ctx, src, p.desc, w); err != nil {
					mu.Lock()
					if first == nil {
						first = fmt.Errorf("layer %s (%s): %w", pieceName(p), p.desc.Digest, err)
					}
					mu.Unlock()
					cancel()
					return
				}
				fetched.Add(1)
				fetchedBytes.Add(p.desc.Size)
			}
		})
	}
	wg.Wait()
	t := Transfer{Fetched: int(fetched.Load()), FetchedBytes: fetchedBytes.Load(),
		Reused: int(reused.Load()), ReusedBytes: reusedBytes.Load()}
	err := first
	if err == nil {
		err = ctx.Err()
	}
	for _, f := range files {
		if err == nil {
			err = f.Sync()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	return t, err
}

// pieceName names a piece in an error: its file, and the chunk's place in
// it.
func pieceName(p piece) string {
	name := filepath.Base(p.path)
	if p.desc.MediaType == MediaTypeChunk {
		return fmt.Sprintf("%s chunk at %d", name, p.off)
	}
	return name
}

// copyLocal copies the local blob lb into w, checking its bytes are d's.
func copyLocal(w io.Writer, lb localBlob, d ocispec.Descriptor) error {
	f, err := os.Open(lb.path)
	if err != nil {
		return err
	}
	defer f.Close()
	vr := content.NewVerifyReader(io.NewSectionReader(f, lb.off, lb.size), d)
	if _, err := io.Copy(w, vr); err != nil {
		return err
	}
	return vr.Verify()
}

// fetchTo fetches the blob d from src into w, checked against its digest
// and size.
func fetchTo(ctx context.Context, src oras.ReadOnlyTarget, d ocispec.Descriptor, w io.Writer) error {
	rc, err := src.Fetch(ctx, d)
	if err != nil {
		return err
	}
	defer rc.Close()
	vr := content.NewVerifyReader(rc, d)
	if _, err := io.Copy(w, vr); err != nil {
		return err
	}
	if err := vr.Verify(); err != nil {
		return fmt.Errorf("%w: %v", ErrNotSnapshot, err)
	}
	return nil
}

// fetchBlob fetches the small blob d (manifest.json) from src, checked.
func fetchBlob(ctx context.Context, src oras.ReadOnlyTarget, d ocispec.Descriptor) ([]byte, error) {
	var buf bytes.Buffer
	if err := fetchTo(ctx, src, d, &buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeFile writes a new file and syncs it.
func writeFile(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
