package loader

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/goccy/go-json"
)

// A build never deletes what it did not make. It writes its snapshot at
// OUT_DIR only when OUT_DIR does not exist, is an empty directory, or is a
// vulnd snapshot (a manifest.json of format vulnd-snapshot, any version,
// and nothing but the files that manifest lists and the artifact.json a
// pull writes); with -force, also a non-empty directory that is not a
// snapshot. It never replaces a file, a symbolic link, the current
// directory or one holding it, an input of the build or the -previous
// snapshot (or a directory holding one), nor writes inside -previous.
// checkOutDir checks all of this before the build reads anything;
// replaceDir checks the target again (checkReplace) just before it moves
// it aside.

// checkOutDir checks that a build reading inputs (files) and previous (a
// snapshot directory, or "") may write its snapshot at out. The error is
// one line naming out and the reason.
func checkOutDir(out string, inputs []string, previous string, force bool) error {
	if out == "" {
		return errors.New("loader: no output directory given (-o)")
	}
	o, err := locate(out)
	if err != nil {
		return fmt.Errorf("loader: -o %s: %w", out, err)
	}
	if err := checkNotCwd(out, o); err != nil {
		return err
	}
	for _, in := range inputs {
		if in == "" {
			continue
		}
		p, err := locate(in)
		if err != nil {
			return fmt.Errorf("loader: %s: %w", in, err)
		}
		switch {
		case same(p, o):
			return fmt.Errorf("loader: -o %s is the input %s; a build never replaces its inputs", out, in)
		case within(p, o):
			return fmt.Errorf("loader: -o %s holds the input %s; a build never replaces its inputs", out, in)
		}
	}
	if previous != "" {
		p, err := locate(previous)
		if err != nil {
			return fmt.Errorf("loader: -previous %s: %w", previous, err)
		}
		switch {
		case same(p, o):
			return fmt.Errorf("loader: -o %s is the -previous snapshot the build reads; write a new directory (such as %s.next) and move it into place", out, filepath.Clean(out))
		case within(p, o):
			return fmt.Errorf("loader: -o %s holds the -previous snapshot %s; a build never replaces its inputs", out, previous)
		case within(o, p):
			return fmt.Errorf("loader: -o %s is inside the -previous snapshot %s; a build never writes into its inputs", out, previous)
		}
	}
	if err := checkReplace(out, force); err != nil {
		return err
	}
	if _, err := os.Lstat(out); errors.Is(err, fs.ErrNotExist) {
		parent := filepath.Dir(filepath.Clean(out))
		fi, err := os.Stat(parent)
		switch {
		case err != nil:
			return fmt.Errorf("loader: -o %s: %w", out, err)
		case !fi.IsDir():
			return fmt.Errorf("loader: -o %s: %s is not a directory", out, parent)
		}
	}
	return nil
}

// checkReplace checks that a new snapshot may be put at dir, replacing
// what is there: nothing, an empty directory or a vulnd snapshot, or with
// force any directory; never a file, a symbolic link or the current
// directory (or one holding it).
func checkReplace(dir string, force bool) error {
	o, err := locate(dir)
	if err != nil {
		return fmt.Errorf("loader: -o %s: %w", dir, err)
	}
	if err := checkNotCwd(dir, o); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("loader: -o %s: %w", dir, err)
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("loader: -o %s is a symbolic link; a build replaces only a vulnd snapshot directory, give it or a new path", dir)
	case !fi.IsDir():
		return fmt.Errorf("loader: -o %s is a file, not a snapshot directory; a build never replaces a file", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("loader: -o %s: %w", dir, err)
	}
	if len(entries) == 0 || force {
		return nil
	}
	made, isSnapshot := snapshotFiles(dir)
	if !isSnapshot {
		return fmt.Errorf("loader: -o %s is a directory that is neither empty nor a vulnd snapshot (no %s of format %s); refusing to replace it (-force would)",
			dir, ManifestName, formatName)
	}
	for _, e := range entries {
		if !made[e.Name()] || !e.Type().IsRegular() {
			return fmt.Errorf("loader: -o %s is a vulnd snapshot but also holds %q, which no build made; refusing to replace it (-force would)", dir, e.Name())
		}
	}
	return nil
}

// checkNotCwd refuses the current directory and those holding it: a
// build cannot move them aside.
func checkNotCwd(dir string, o place) error {
	cwd, err := os.Getwd()
	if err != nil {
		return nil // no current directory to protect
	}
	if c, err := locate(cwd); err == nil && (same(c, o) || within(c, o)) {
		return fmt.Errorf("loader: -o %s is the current directory or holds it; a build cannot replace it, write a new directory instead", dir)
	}
	return nil
}

// snapshotFiles reads dir's manifest leniently, as any format version
// wrote it, and returns the names of the files a build made there: the
// manifest and the data files it lists. ok is false when dir has no
// manifest of format vulnd-snapshot. ArtifactName, which serve -pull
// writes beside a pulled snapshot, counts as made.
func snapshotFiles(dir string) (made map[string]bool, ok bool) {
	f, err := os.Open(filepath.Join(dir, ManifestName))
	if err != nil {
		return nil, false
	}
	defer f.Close()
	raw, err := io.ReadAll(io.LimitReader(f, maxManifestBytes+1))
	if err != nil || len(raw) > maxManifestBytes {
		return nil, false
	}
	var m struct {
		Format string `json:"format"`
		Files  map[string]struct {
			Name string `json:"name"`
		} `json:"files"`
	}
	if json.Unmarshal(raw, &m) != nil || m.Format != formatName {
		return nil, false
	}
	made = map[string]bool{ManifestName: true, ArtifactName: true}
	for _, fi := range m.Files {
		if fi.Name != "" && fi.Name == filepath.Base(fi.Name) && fi.Name != "." && fi.Name != ".." {
			made[fi.Name] = true
		}
	}
	return made, true
}

// place is a path made absolute with every symbolic link of its existing
// part resolved, and what it names (nil when it does not exist).
type place struct {
	path string
	fi   os.FileInfo
}

func locate(p string) (place, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return place{}, err
	}
	pl := place{path: resolve(abs)}
	if fi, err := os.Stat(pl.path); err == nil {
		pl.fi = fi
	}
	return pl, nil
}

// resolve resolves the symbolic links of the longest part of the absolute
// path abs that exists, and keeps the rest as it is.
func resolve(abs string) string {
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		return r
	}
	parent := filepath.Dir(abs)
	if parent == abs {
		return abs
	}
	return filepath.Join(resolve(parent), filepath.Base(abs))
}

// same tells whether a and b are one file: the same resolved path, or
// (through a bind mount, or a file system that ignores case) the same
// file on disk.
func same(a, b place) bool {
	return a.path == b.path || (a.fi != nil && b.fi != nil && os.SameFile(a.fi, b.fi))
}

// within tells whether p is inside the directory dir, at any depth.
func within(p, dir place) bool {
	for q := p.path; ; {
		up := filepath.Dir(q)
		if up == q {
			return false
		}
		q = up
		if q == dir.path {
			return true
		}
		if dir.fi != nil {
			if fi, err := os.Stat(q); err == nil && os.SameFile(fi, dir.fi) {
				return true
			}
		}
	}
}

// reportsIn is the number of reports the manifest of the snapshot at dir
// counts (any format version), or 0 when dir holds no snapshot.
func reportsIn(dir string) int {
	raw, err := readManifestBytes(dir)
	if err != nil {
		return 0
	}
	var m struct {
		Format string `json:"format"`
		Counts struct {
			Reports int `json:"reports"`
		} `json:"counts"`
	}
	if json.Unmarshal(raw, &m) != nil || m.Format != formatName {
		return 0
	}
	return m.Counts.Reports
}
