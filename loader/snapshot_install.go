package loader

// Installing a snapshot: a complete directory replaces the one at the
// target in one rename.

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/vulnd/vulnd/loader/internal/durable"
)

// Install moves the complete snapshot directory tmp to dir, replacing
// the snapshot there as a build does: dir is moved aside only once tmp is
// complete, and only when it is a vulnd snapshot or empty, so no reader
// ever finds a half-written dir. tmp should be beside dir (same file
// system) for the rename.
func Install(tmp, dir string) error {
	return replaceDir(tmp, dir, false)
}

// replaceDir renames the complete directory tmp to dir. An existing dir is
// first checked again (checkReplace: a vulnd snapshot or an empty
// directory, or with force any directory, never a file or a symbolic
// link), moved aside, and removed after the rename, so at no point is a
// half-written directory at dir; if the rename fails, it is moved back.
// The rename is made durable (dir's parent synced) before the old
// directory goes; if that sync fails, the old directory stays beside dir.
func replaceDir(tmp, dir string, force bool) error {
	if err := checkReplace(dir, force); err != nil {
		return err
	}
	old := ""
	if _, err := os.Lstat(dir); err == nil {
		old = tmp + ".old"
		if err := os.Rename(dir, old); err != nil {
			return fmt.Errorf("loader: build %s: %w", dir, err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		if old != "" {
			os.Rename(old, dir)
		}
		return fmt.Errorf("loader: build %s: %w", dir, err)
	}
	if err := durable.SyncDir(filepath.Dir(dir)); err != nil {
		// The new snapshot is in place, but a crash may still undo the
		// rename: keep the old one, which the error names.
		if old != "" {
			return fmt.Errorf("loader: build %s: %w (the old snapshot is kept as %s)", dir, err, old)
		}
		return fmt.Errorf("loader: build %s: %w", dir, err)
	}
	if old != "" {
		if err := os.RemoveAll(old); err != nil {
			return fmt.Errorf("loader: build %s: removing the old snapshot: %w", dir, err)
		}
	}
	return nil
}
