package loader

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/goccy/go-json"

	"github.com/vulnd/vulnd/index"
	"github.com/vulnd/vulnd/loader/internal/durable"
)

// ArtifactName is the file vulnd serve -pull writes into a snapshot
// directory it pulled: the OCI artifact the snapshot came from. The
// manifest does not list it and a build never writes it; Load reads it
// into the index's Meta (GET /status shows it).
const ArtifactName = "artifact.json"

// maxArtifactBytes bounds artifact.json.
const maxArtifactBytes = 16 << 10

// WriteArtifact writes a into dir's artifact.json, atomically and synced
// (replacing one already there).
func WriteArtifact(dir string, a index.Artifact) error {
	b, err := json.Marshal(a)
	if err != nil {
		return err
	}
	if err := durable.WriteFile(filepath.Join(dir, ArtifactName), append(b, '\n')); err != nil {
		return fmt.Errorf("loader: snapshot %s: %w", dir, err)
	}
	return nil
}

// ReadArtifact reads dir's artifact.json; ok is false when there is none,
// or when it is not one WriteArtifact wrote (it only tells where a
// snapshot came from, so a damaged one is ignored, never an error).
func ReadArtifact(dir string) (a index.Artifact, ok bool) {
	f, err := os.Open(filepath.Join(dir, ArtifactName))
	if err != nil {
		return a, false
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxArtifactBytes+1))
	if err != nil || len(raw) > maxArtifactBytes || json.Unmarshal(raw, &a) != nil ||
		!strings.HasPrefix(a.Digest, "sha256:") || a.Ref == "" {
		return index.Artifact{}, false
	}
	return a, true
}

// DataFileNames are the names of the data files a snapshot of this
// vulnd's format holds beside its manifest, sorted.
func DataFileNames() []string { return DataFileNamesOf(FormatVersion) }

// OptionalDataFileNames are the data files a snapshot holds only when its
// manifest lists them (the EPSS scores, from format 6 on), sorted.
func OptionalDataFileNames() []string { return []string{fileEPSS} }

// DataFileNamesOf are the data files of a snapshot of format version v,
// sorted: a snapshot of an older format still served (5 has no NVD
// records) is published and pulled with its own files. nil for a
// version this vulnd does not serve.
func DataFileNamesOf(v int) []string {
	if v < servedVersion || v > FormatVersion {
		return nil
	}
	files := dataFilesOf(v)
	names := make([]string, 0, len(files))
	for _, n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
