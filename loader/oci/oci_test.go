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
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2"
	"oras.land/oras-go/v2/content"
	"oras.land/oras-go/v2/content/memory"

	"github.com/vulnd/vulnd/loader"
)

// demo is the bundled demo snapshot: format 5, 2,003 CVEs, built
// 2026-11-23 06:00:00Z.
const demo = "../../snapshots/demo"

func readManifest(t *testing.T, dir string) loader.Manifest {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, loader.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	var m loader.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestParseRef(t *testing.T) {
	for _, tc := range []struct{ in, registry, reference, err string }{
		{in: "oci://127.0.0.1:5000/vulnd/snapshots:2026-11-25", registry: "127.0.0.1:5000", reference: "2026-11-25"},
		{in: "oci://ghcr.io/acme/vulnd:latest", registry: "ghcr.io", reference: "latest"},
		{in: "oci://localhost:5000/v@sha256:" + strings.Repeat("ab", 32), registry: "localhost:5000", reference: "sha256:" + strings.Repeat("ab", 32)},
		{in: "127.0.0.1:5000/vulnd:latest", err: "is not an oci://"},
		{in: "oci://127.0.0.1:5000/vulnd", err: "names no tag or digest"},
		{in: "oci://127.0.0.1:5000/Upper:tag", err: "invalid"},
		{in: "oci://", err: "invalid"},
	} {
		r, err := ParseRef(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseRef(%q) = %v, want an error with %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseRef(%q): %v", tc.in, err)
			continue
		}
		if r.Registry() != tc.registry || r.Reference() != tc.reference || r.String() != tc.in {
			t.Errorf("ParseRef(%q) = %s %s %s", tc.in, r.Registry(), r.Reference(), r)
		}
	}
}

// TestPublishFetchDownload publishes the demo, reads the artifact back as
// a replica would and checks every file arrives as it was.
func TestPublishFetchDownload(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	p, err := Publish(ctx, store, demo, []string{"2026-11-23", "latest"})
	if err != nil {
		t.Fatal(err)
	}
	id, err := loader.ID(demo)
	if err != nil {
		t.Fatal(err)
	}
	sm := readManifest(t, demo)
	chunks := demoChunks(sm)
	if p.SnapshotID != id || p.Layers != 1+len(chunks) || p.Pushed != p.Layers {
		t.Errorf("published %+v, want snapshot %s, %d layers (manifest.json and each chunk), all pushed", p, id, 1+len(chunks))
	}
	for _, tag := range []string{"2026-11-23", "latest"} {
		d, err := store.Resolve(ctx, tag)
		if err != nil || d.Digest != p.Manifest.Digest {
			t.Errorf("tag %s: %v %v, want %s", tag, d.Digest, err, p.Manifest.Digest)
		}
	}

	// The manifest as a registry stores it.
	raw, err := content.FetchAll(ctx, store, p.Manifest)
	if err != nil {
		t.Fatal(err)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	wantAnn := map[string]string{
		"org.opencontainers.image.created":  "2026-11-23T06:00:00Z",
		"org.opencontainers.image.title":    "vulnd snapshot " + id,
		"dev.vulnd.snapshot.id":             id,
		"dev.vulnd.snapshot.format-version": "11",
		"dev.vulnd.snapshot.built-at":       "2026-11-23 06:00:00Z",
		"dev.vulnd.snapshot.count.cves":     "2003",
		"dev.vulnd.snapshot.count.cwes":     "104",
		"dev.vulnd.snapshot.count.vendors":  "267",
		"dev.vulnd.snapshot.count.products": "1159",
		"dev.vulnd.snapshot.count.reports":  "1",
		"dev.vulnd.snapshot.count.alerts":   "85",
	}
	if diff := cmp.Diff(wantAnn, m.Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	if m.ArtifactType != "application/vnd.vulnd.snapshot.v2" || m.Config.MediaType != ocispec.MediaTypeEmptyJSON {
		t.Errorf("artifactType %q, config %q", m.ArtifactType, m.Config.MediaType)
	}
	// manifest.json first, then every chunk of the files by name, in
	// their order: the files' bytes, a blob per chunk.
	raw0, _ := os.ReadFile(filepath.Join(demo, loader.ManifestName))
	want := []ocispec.Descriptor{{MediaType: "application/vnd.vulnd.snapshot.manifest.v1+json",
		Digest: digest.FromBytes(raw0), Size: int64(len(raw0)),
		Annotations: map[string]string{"org.opencontainers.image.title": "manifest.json"}}}
	for _, c := range chunks {
		want = append(want, ocispec.Descriptor{MediaType: "application/vnd.vulnd.snapshot.chunk.v1+zstd",
			Digest: digest.Digest("sha256:" + c.SHA256), Size: c.Size})
	}
	if diff := cmp.Diff(want, m.Layers); diff != "" {
		t.Errorf("layers (-want +got):\n%s", diff)
	}
	wantTitles := []string{"manifest.json", "cves.jsonl.zst", "cwes.jsonl.zst", "details.txt.zst", "ids.jsonl.zst",
		"metrics.jsonl.zst", "nvd.zst", "nvdfacts.txt.zst", "nvdfrom.txt.zst", "nvdstrings.jsonl.zst", "reports.jsonl.zst", "strings.jsonl.zst", "epss.csv.zst", "nvdlayout.txt.zst", "cveslayout.txt.zst", "cve5from.txt.zst"}

	// The same snapshot again: nothing sent, the same artifact.
	again, err := Publish(ctx, store, demo, []string{"again"})
	if err != nil {
		t.Fatal(err)
	}
	if again.Pushed != 0 || again.Manifest.Digest != p.Manifest.Digest {
		t.Errorf("second publish: pushed %d, digest %s; want 0 and %s", again.Pushed, again.Manifest.Digest, p.Manifest.Digest)
	}

	desc, err := store.Resolve(ctx, "latest")
	if err != nil {
		t.Fatal(err)
	}
	a, err := Fetch(ctx, store, desc)
	if err != nil {
		t.Fatal(err)
	}
	if a.SnapshotID != id || a.BuiltAt != "2026-11-23 06:00:00Z" {
		t.Errorf("fetched snapshot %s built %s, want %s", a.SnapshotID, a.BuiltAt, id)
	}
	var size int64
	for _, l := range m.Layers {
		size += l.Size
	}
	if a.Size() != size {
		t.Errorf("Size %d, want %d", a.Size(), size)
	}
	// Into an empty disk: every blob fetched; beside the demo: only
	// manifest.json, every chunk copied from the demo's files.
	for _, c := range []struct {
		name, reuse string
		want        Transfer
	}{
		{"nothing on the disk", "", Transfer{Fetched: 1 + len(chunks), FetchedBytes: size}},
		{"the demo on the disk", demo, Transfer{Fetched: 1, FetchedBytes: int64(len(raw0)), Reused: len(chunks), ReusedBytes: size - int64(len(raw0))}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			got, err := a.Download(ctx, store, dir, c.reuse)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("Download moved %+v, want %+v", got, c.want)
			}
			for _, name := range wantTitles {
				want, _ := os.ReadFile(filepath.Join(demo, name))
				got, err := os.ReadFile(filepath.Join(dir, name))
				if err != nil || !bytes.Equal(got, want) {
					t.Errorf("%s: downloaded %d bytes (%v), want the demo's %d", name, len(got), err, len(want))
				}
			}
			if _, _, err := loader.Load(dir); err != nil {
				t.Errorf("the downloaded snapshot does not load: %v", err)
			}
		})
	}
}

// demoChunks are the chunks of the snapshot manifest m's files, by file
// name and in their order (none of the demo's chunks is in two places).
func demoChunks(m loader.Manifest) []loader.Chunk {
	var names []string
	for _, fi := range m.Files {
		names = append(names, fi.Name)
	}
	slices.Sort(names)
	var out []loader.Chunk
	for _, name := range names {
		for _, fi := range m.Files {
			if fi.Name == name {
				out = append(out, fi.Chunks...)
			}
		}
	}
	return out
}

// TestPublishRefusesBadSnapshot: a snapshot that would not load is never
// pushed, so no tag moves to it.
func TestPublishRefusesBadSnapshot(t *testing.T) {
	dir := t.TempDir()
	entries, err := os.ReadDir(demo) // the demo's files, of its format version
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		b, err := os.ReadFile(filepath.Join(demo, name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "cwes.jsonl.zst" {
			b[len(b)/2] ^= 0xff
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	store := memory.New()
	_, err = Publish(context.Background(), store, dir, []string{"latest"})
	if err == nil || !strings.Contains(err.Error(), "cwes.jsonl.zst") {
		t.Fatalf("Publish of a damaged snapshot: %v, want an error naming cwes.jsonl.zst", err)
	}
	if _, err := store.Resolve(context.Background(), "latest"); err == nil {
		t.Error("the tag latest exists after a refused publish")
	}
}

// pushArtifact packs layers (pushed from bodies) into a manifest of
// artifactType, tagged "bad".
func pushArtifact(t *testing.T, store *memory.Store, artifactType string, names []string, bodies [][]byte) ocispec.Descriptor {
	t.Helper()
	return pushAnnotated(t, store, artifactType, names, bodies, nil)
}

// pushAnnotated is pushArtifact with the manifest's annotations.
func pushAnnotated(t *testing.T, store *memory.Store, artifactType string, names []string, bodies [][]byte, annotations map[string]string) ocispec.Descriptor {
	t.Helper()
	ctx := context.Background()
	var layers []ocispec.Descriptor
	for i, name := range names {
		mt := MediaTypeData
		if name == loader.ManifestName {
			mt = MediaTypeManifest
		}
		d := content.NewDescriptorFromBytes(mt, bodies[i])
		d.Annotations = map[string]string{ocispec.AnnotationTitle: name}
		if ok, _ := store.Exists(ctx, d); !ok {
			if err := store.Push(ctx, d, bytes.NewReader(bodies[i])); err != nil {
				t.Fatal(err)
			}
		}
		layers = append(layers, d)
	}
	desc, err := oras.PackManifest(ctx, store, oras.PackManifestVersion1_1, artifactType, oras.PackManifestOptions{Layers: layers, ManifestAnnotations: annotations})
	if err != nil {
		t.Fatal(err)
	}
	return desc
}

// TestFetchRefusesBadArtifacts: every artifact that is not a snapshot
// Download could write safely is refused before a byte of it is fetched,
// and named as a bad artifact (ErrNotSnapshot).
func TestFetchRefusesBadArtifacts(t *testing.T) {
	names := append([]string{loader.ManifestName}, loader.DataFileNames()...)
	bodies := make([][]byte, len(names))
	for i := range names {
		bodies[i] = []byte("file " + names[i])
	}
	replace := func(i int, name string) []string {
		n := append([]string{}, names...)
		n[i] = name
		return n
	}
	for _, tc := range []struct {
		name, artifactType string
		names              []string
		want               string
	}{
		{"other artifact type", "application/vnd.example.thing", names, "artifact type"},
		{"a path for a name", ArtifactTypeFiles, replace(3, "../cves.jsonl.zst"), `named "../cves.jsonl.zst"`},
		{"an absolute path", ArtifactTypeFiles, replace(3, "/etc/passwd"), `named "/etc/passwd"`},
		{"no name", ArtifactTypeFiles, replace(3, ""), `named ""`},
		{"a name twice", ArtifactTypeFiles, replace(3, names[2]), "two layers are named"},
		{"a file missing", ArtifactTypeFiles, names[:len(names)-1], fmt.Sprintf("has %d layers, want %d", len(names)-1, len(names))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := memory.New()
			desc := pushArtifact(t, store, tc.artifactType, tc.names, bodies[:len(tc.names)])
			_, err := Fetch(context.Background(), store, desc)
			if !errors.Is(err, ErrNotSnapshot) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Fetch: %v, want ErrNotSnapshot saying %q", err, tc.want)
			}
		})
	}
	t.Run("not a manifest", func(t *testing.T) {
		store := memory.New()
		d := content.NewDescriptorFromBytes(ocispec.MediaTypeImageIndex, []byte(`{"schemaVersion":2,"manifests":[]}`))
		if err := store.Push(context.Background(), d, bytes.NewReader([]byte(`{"schemaVersion":2,"manifests":[]}`))); err != nil {
			t.Fatal(err)
		}
		if _, err := Fetch(context.Background(), store, d); !errors.Is(err, ErrNotSnapshot) {
			t.Errorf("Fetch of an index: %v, want ErrNotSnapshot", err)
		}
	})
}

// corrupting serves one blob with a byte changed, as a broken registry or
// a tampered one would.
type corrupting struct {
	oras.ReadOnlyTarget
	digest digest.Digest
}

func (c corrupting) Fetch(ctx context.Context, d ocispec.Descriptor) (io.ReadCloser, error) {
	rc, err := c.ReadOnlyTarget.Fetch(ctx, d)
	if err != nil || d.Digest != c.digest {
		return rc, err
	}
	b, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		return nil, err
	}
	b[len(b)/2] ^= 1
	return io.NopCloser(bytes.NewReader(b)), nil
}

// TestDownloadRefusesCorruptLayer: a file whose bytes are not its
// digest's fails the download, as a bad artifact.
func TestDownloadRefusesCorruptLayer(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	p, err := Publish(ctx, store, demo, []string{"latest"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := Fetch(ctx, store, p.Manifest)
	if err != nil {
		t.Fatal(err)
	}
	sm := readManifest(t, demo)
	bad := corrupting{store, digest.Digest("sha256:" + sm.Files["cves"].Chunks[0].SHA256)}
	_, err = a.Download(ctx, bad, t.TempDir(), "")
	if !errors.Is(err, ErrNotSnapshot) || !strings.Contains(err.Error(), "cves.jsonl.zst") {
		t.Errorf("Download: %v, want ErrNotSnapshot naming cves.jsonl.zst", err)
	}
}

// pushFiles pushes the snapshot in dir as vulnd published it before
// chunks were blobs (ArtifactTypeFiles: a layer per file).
func pushFiles(t *testing.T, store *memory.Store, dir string) ocispec.Descriptor {
	t.Helper()
	sm := readManifest(t, dir)
	names := []string{loader.ManifestName}
	for _, fi := range sm.Files {
		names = append(names, fi.Name)
	}
	bodies := make([][]byte, len(names))
	for i, name := range names {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		bodies[i] = b
	}
	// Its format version, as publish annotated it: the files it holds.
	return pushAnnotated(t, store, ArtifactTypeFiles, names, bodies, map[string]string{AnnotationFormat: strconv.Itoa(sm.Version)})
}

// copyDir copies the files of src into a new directory.
func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// sameFiles checks that dir holds each file of the snapshot in want, byte
// for byte.
func sameFiles(t *testing.T, dir, want string) {
	t.Helper()
	sm := readManifest(t, want)
	names := []string{loader.ManifestName}
	for _, fi := range sm.Files {
		names = append(names, fi.Name)
	}
	for _, name := range names {
		w, _ := os.ReadFile(filepath.Join(want, name))
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || !bytes.Equal(got, w) {
			t.Errorf("%s: downloaded %d bytes (%v), want %d", name, len(got), err, len(w))
		}
	}
}

// TestDownloadFilesLayout: an artifact of a layer per file, as vulnd
// published before chunks were blobs, is still read, and a file the disk
// holds is copied from there.
func TestDownloadFilesLayout(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	desc := pushFiles(t, store, demo)
	a, err := Fetch(ctx, store, desc)
	if err != nil {
		t.Fatal(err)
	}
	id, _ := loader.ID(demo)
	if a.SnapshotID != id {
		t.Errorf("snapshot %s, want %s", a.SnapshotID, id)
	}
	n := len(readManifest(t, demo).Files) + 1
	for _, c := range []struct {
		name, reuse string
		want        Transfer
	}{
		{"nothing on the disk", "", Transfer{Fetched: n, FetchedBytes: a.Size()}},
		// manifest.json is no data file: fetched.
		{"the demo on the disk", demo, Transfer{Fetched: 1, Reused: n - 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			got, err := a.Download(ctx, store, dir, c.reuse)
			if err != nil {
				t.Fatal(err)
			}
			if got.Fetched != c.want.Fetched || got.Reused != c.want.Reused || (c.want.FetchedBytes != 0 && got.FetchedBytes != c.want.FetchedBytes) {
				t.Errorf("Download moved %+v, want %+v", got, c.want)
			}
			sameFiles(t, dir, demo)
			if _, _, err := loader.Load(dir); err != nil {
				t.Errorf("the downloaded snapshot does not load: %v", err)
			}
		})
	}
}

// TestDownloadDamagedDisk: a chunk the snapshot on the disk holds with
// other bytes than its digest's is fetched from the registry instead, so
// a damaged disk costs a download, never a wrong byte.
func TestDownloadDamagedDisk(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	p, err := Publish(ctx, store, demo, []string{"latest"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := Fetch(ctx, store, p.Manifest)
	if err != nil {
		t.Fatal(err)
	}
	local := copyDir(t, demo)
	path := filepath.Join(local, "cves.jsonl.zst")
	b, _ := os.ReadFile(path)
	b[100] ^= 1 // in its first chunk
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	got, err := a.Download(ctx, store, dir, local)
	if err != nil {
		t.Fatal(err)
	}
	mraw, _ := os.ReadFile(filepath.Join(demo, loader.ManifestName))
	dm, err := loader.ParseManifest(mraw)
	if err != nil {
		t.Fatal(err)
	}
	if got.Fetched != 2 || got.FetchedBytes != int64(len(mraw))+dm.Files["cves"].Chunks[0].Size || got.Reused != p.Layers-2 {
		t.Errorf("Download moved %+v, want manifest.json and cves.jsonl.zst's chunk fetched, %d chunks reused", got, p.Layers-2)
	}
	sameFiles(t, dir, demo)
}

// TestDownloadRefusesChunksNotListed: a chunked artifact whose
// manifest.json lists a chunk that is no layer, or whose layers hold a
// chunk manifest.json does not list, is not a snapshot.
func TestDownloadRefusesChunksNotListed(t *testing.T) {
	ctx := context.Background()
	store := memory.New()
	p, err := Publish(ctx, store, demo, []string{"latest"})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := content.FetchAll(ctx, store, p.Manifest)
	if err != nil {
		t.Fatal(err)
	}
	var m ocispec.Manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	extra := []byte("not a chunk of the demo")
	extraDesc := content.NewDescriptorFromBytes(MediaTypeChunk, extra)
	if err := store.Push(ctx, extraDesc, bytes.NewReader(extra)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		layers []ocispec.Descriptor
		want   string
	}{
		{"a chunk missing", slices.Delete(slices.Clone(m.Layers), 2, 3), "which is no layer of the artifact"},
		{"a chunk more", append(slices.Clone(m.Layers), extraDesc), "1 of its"},
	} {
		t.Run(c.name, func(t *testing.T) {
			desc, err := oras.PackManifest(ctx, store, oras.PackManifestVersion1_1, ArtifactType, oras.PackManifestOptions{Layers: c.layers})
			if err != nil {
				t.Fatal(err)
			}
			a, err := Fetch(ctx, store, desc)
			if err != nil {
				t.Fatal(err)
			}
			_, err = a.Download(ctx, store, t.TempDir(), "")
			if !errors.Is(err, ErrNotSnapshot) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Download: %v, want ErrNotSnapshot saying %q", err, c.want)
			}
		})
	}
}
