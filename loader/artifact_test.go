package loader

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// TestVerifySums: VerifySums passes the demo snapshot and refuses, naming
// the file, one whose data file has a byte changed, is cut short or has
// a byte more; it does not decode, so a manifest whose counts lie (the
// files untouched) passes it, and only Validate refuses that.
func TestVerifySums(t *testing.T) {
	const demo = "../snapshots/demo"
	if _, err := VerifySums(demo); err != nil {
		t.Fatalf("VerifySums(demo): %v", err)
	}
	copyDemo := func(t *testing.T, edit func(name string, b []byte) []byte) string {
		t.Helper()
		dir := t.TempDir()
		entries, err := os.ReadDir(demo)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(demo, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, e.Name()), edit(e.Name(), b), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	for _, c := range []struct {
		name string
		edit func([]byte) []byte
		want string
	}{
		{"a byte changed", func(b []byte) []byte { b[len(b)/2] ^= 1; return b }, "sha256"},
		{"cut short", func(b []byte) []byte { return b[:len(b)-1] }, "manifest says"},
		{"a byte more", func(b []byte) []byte { return append(b, 0) }, "manifest says"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := copyDemo(t, func(name string, b []byte) []byte {
				if name == fileStrings {
					return c.edit(b)
				}
				return b
			})
			_, err := VerifySums(dir)
			if err == nil || !strings.Contains(err.Error(), fileStrings) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("VerifySums: %v, want an error naming %s and saying %q", err, fileStrings, c.want)
			}
		})
	}
	t.Run("counts that lie", func(t *testing.T) {
		dir := copyDemo(t, func(name string, b []byte) []byte {
			if name == ManifestName {
				return bytes.Replace(b, []byte(`"cves": 2003,`), []byte(`"cves": 2004,`), 1)
			}
			return b
		})
		if _, err := VerifySums(dir); err != nil {
			t.Errorf("VerifySums: %v, want none (it checks sums, not counts)", err)
		}
		if _, err := Validate(dir); err == nil || !strings.Contains(err.Error(), "counts") {
			t.Errorf("Validate: %v, want an error about the counts", err)
		}
	})
}

// TestParseManifest: ParseManifest takes the demo's manifest, and refuses
// one of an unknown format version or over the size limit.
func TestParseManifest(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("../snapshots/demo", ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseManifest(raw)
	if err != nil || m.Counts.CVEs != 2003 || len(m.Files[keyCVEs].Chunks) == 0 {
		t.Fatalf("ParseManifest(demo) = %d CVEs, %v", m.Counts.CVEs, err)
	}
	if _, err := ParseManifest(bytes.Replace(raw, fmt.Appendf(nil, `"version": %d`, m.Version), []byte(`"version": 99`), 1)); err == nil || !strings.Contains(err.Error(), "99") {
		t.Errorf("version 99: %v, want an error naming it", err)
	}
	if _, err := ParseManifest(append(raw, make([]byte, maxManifestBytes)...)); err == nil || !strings.Contains(err.Error(), "larger") {
		t.Errorf("a manifest over the limit: %v, want an error", err)
	}
}
