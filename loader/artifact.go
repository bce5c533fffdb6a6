package loader

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

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

// ParseManifest decodes the bytes of a snapshot's manifest.json and
// checks all it claims that can be checked without its data files: the
// format, a version this vulnd serves, the file names, and each file's
// chunks tiling it within the limits. A puller reads the files and chunks
// to fetch from it before it fetches any.
func ParseManifest(raw []byte) (Manifest, error) {
	if len(raw) > maxManifestBytes {
		return Manifest{}, fmt.Errorf("%s is larger than %d bytes", ManifestName, maxManifestBytes)
	}
	return parseManifest(raw, false)
}

// ReadManifest reads and checks the manifest of the snapshot in dir, as
// ParseManifest does, and gives the snapshot's id.
func ReadManifest(dir string) (Manifest, string, error) {
	return readManifest(dir, false)
}

// VerifySums checks the snapshot in dir by its checksums alone: its
// manifest as Load reads it, and each data file's size, every chunk's
// SHA-256 and the whole file's, without decoding a byte. It tells that the
// files are the very bytes the build wrote (a build checks what it
// writes), at the speed of reading them: what vulnd publish checks before
// it pushes. Validate decodes and checks everything.
func VerifySums(dir string) (Manifest, error) {
	m, _, err := readManifest(dir, false)
	if err != nil {
		return Manifest{}, err
	}
	files := make([]FileInfo, 0, len(m.Files))
	for _, key := range sortedKeys(m.dataFiles()) {
		files = append(files, m.Files[key])
	}
	// The largest first, one file per core.
	slices.SortStableFunc(files, func(a, b FileInfo) int { return cmp.Compare(b.Size, a.Size) })
	errs := make([]error, len(files))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(files)) {
		wg.Go(func() {
			for i := int(next.Add(1) - 1); i < len(files); i = int(next.Add(1) - 1) {
				errs[i] = verifyFile(dir, files[i])
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return Manifest{}, fmt.Errorf("loader: snapshot %s: %s: %w", dir, files[i].Name, err)
		}
	}
	return m, nil
}
