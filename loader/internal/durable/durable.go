// Package durable writes files so that they survive a crash: the data is
// synced before a file takes its name, and the directory is synced after,
// so the name survives too. The snapshot writer (loader) and the feed
// fetcher (loader/fetch) both write through it.
//
// Its functions are safe for concurrent use on different paths.
package durable

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// WriteFile writes b to path, atomically and durably: into a temporary
// file beside path, which is synced, given mode 0644 and renamed to path
// (replacing any file there); then path's directory is synced. On an
// error the temporary file is removed and path is as it was, unless only
// the directory's sync failed (path then holds b, but a crash may still
// lose it).
func WriteFile(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o644)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return SyncDir(filepath.Dir(path))
}

// SyncDir makes the changes to dir's entries (files created, renamed or
// removed in it) durable. An error opening or syncing dir is returned,
// except that a file system which cannot sync a directory at all is not
// an error: there is nothing more to do there.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return syncErr(d.Sync())
}

// syncErr is SyncDir's answer for err, the error of syncing its directory
// (an *fs.PathError naming it). A file system that cannot sync a directory
// says so with EINVAL or EROFS (fsync(2): "fd is bound to a special file
// which does not support synchronization") or ENOTSUP; os.ErrInvalid
// matches none of them.
func syncErr(err error) error {
	if err == nil || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.EROFS) ||
		errors.Is(err, errors.ErrUnsupported) {
		return nil
	}
	return err
}
