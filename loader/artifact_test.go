package loader

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/vulnd/vulnd/index"
)

// TestWriteArtifact: WriteArtifact writes through the one durable writer,
// so a second write replaces the first (it does not fail on the file being
// there) and leaves no temporary file; ReadArtifact reads back the last.
func TestWriteArtifact(t *testing.T) {
	dir := t.TempDir()
	for _, digest := range []string{"sha256:aa", "sha256:bb"} {
		a := index.Artifact{Ref: "registry.example/vulnd:latest", Digest: digest, PulledAt: "2026-11-25T06:00:00Z"}
		if err := WriteArtifact(dir, a); err != nil {
			t.Fatalf("WriteArtifact %s: %v", digest, err)
		}
		if got, ok := ReadArtifact(dir); !ok || got != a {
			t.Fatalf("ReadArtifact = %+v, %v; want %+v", got, ok, a)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 || entries[0].Name() != ArtifactName {
		t.Fatalf("directory holds %v, %v; want %s alone", entries, err, ArtifactName)
	}
	fi, err := os.Stat(filepath.Join(dir, ArtifactName))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Fatalf("%s: mode %v, want 0644", ArtifactName, fi.Mode())
	}
}
