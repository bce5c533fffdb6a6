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
	if p.SnapshotID != id || p.Layers != 11 || p.Pushed != 11 {
		t.Errorf("published %+v, want snapshot %s, 11 layers, 11 pushed", p, id)
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
		"dev.vulnd.snapshot.format-version": "6",
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
	if m.ArtifactType != "application/vnd.vulnd.snapshot.v1" || m.Config.MediaType != ocispec.MediaTypeEmptyJSON {
		t.Errorf("artifactType %q, config %q", m.ArtifactType, m.Config.MediaType)
	}
	sm := readManifest(t, demo)
	var titles []string
	for i, l := range m.Layers {
		name := l.Annotations[ocispec.AnnotationTitle]
		titles = append(titles, name)
		if i == 0 {
			continue
		}
		var fi loader.FileInfo
		for _, f := range sm.Files {
			if f.Name == name {
				fi = f
			}
		}
		if l.MediaType != MediaTypeData || l.Digest.String() != "sha256:"+fi.SHA256 || l.Size != fi.Size {
			t.Errorf("layer %s: %s %s %d, want the manifest's sha256 %s and size %d", name, l.MediaType, l.Digest, l.Size, fi.SHA256, fi.Size)
		}
	}
	// The demo has EPSS scores: their optional file comes last.
	wantTitles := []string{"manifest.json", "cves.jsonl.zst", "cwes.jsonl.zst", "details.txt.zst", "ids.jsonl.zst",
		"metrics.jsonl.zst", "nvd.zst", "nvdfacts.jsonl.zst", "reports.jsonl.zst", "strings.jsonl.zst", "epss.csv.zst"}
	if diff := cmp.Diff(wantTitles, titles); diff != "" {
		t.Errorf("layers (-want +got):\n%s", diff)
	}

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
	dir := t.TempDir()
	if err := a.Download(ctx, store, dir); err != nil {
		t.Fatal(err)
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
	desc, err := oras.PackManifest(ctx, store, oras.PackManifestVersion1_1, artifactType, oras.PackManifestOptions{Layers: layers})
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
		{"a path for a name", ArtifactType, replace(3, "../cves.jsonl.zst"), `named "../cves.jsonl.zst"`},
		{"an absolute path", ArtifactType, replace(3, "/etc/passwd"), `named "/etc/passwd"`},
		{"no name", ArtifactType, replace(3, ""), `named ""`},
		{"a name twice", ArtifactType, replace(3, names[2]), "two layers are named"},
		{"a file missing", ArtifactType, names[:len(names)-1], fmt.Sprintf("has %d layers, want %d", len(names)-1, len(names))},
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
	bad := corrupting{store, digest.Digest("sha256:" + sm.Files["cves"].SHA256)}
	err = a.Download(ctx, bad, t.TempDir())
	if !errors.Is(err, ErrNotSnapshot) || !strings.Contains(err.Error(), "cves.jsonl.zst") {
		t.Errorf("Download: %v, want ErrNotSnapshot naming cves.jsonl.zst", err)
	}
}
