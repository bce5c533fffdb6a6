package durable

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	for _, content := range []string{"first\n", "second, longer\n", ""} {
		if err := WriteFile(path, []byte(content)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || string(got) != content {
			t.Fatalf("read back %q, %v; want %q", got, err, content)
		}
		fi, err := os.Stat(path)
		if err != nil || fi.Mode().Perm() != 0o644 {
			t.Fatalf("mode %v, %v; want 0644", fi.Mode(), err)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 {
		t.Fatalf("directory holds %v, %v; want state.json alone (no temporary file left)", entries, err)
	}
}

func TestWriteFileFails(t *testing.T) {
	dir := t.TempDir()
	// A directory where the file should go: the rename fails, and the
	// temporary file goes.
	path := filepath.Join(dir, "taken")
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(path, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("b")); err == nil {
		t.Fatal("WriteFile over a non-empty directory: no error")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("directory holds %v after a failed write; want the directory alone", entries)
	}
	if err := WriteFile(filepath.Join(dir, "missing", "f"), []byte("b")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("WriteFile into a missing directory: %v", err)
	}
}

func TestSyncDir(t *testing.T) {
	if err := SyncDir(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	// A directory that cannot be opened is an error, not a silent no-op.
	if err := SyncDir(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("SyncDir of a missing directory: %v, want not exist", err)
	}
}

// TestSyncErr: a sync that fails is an error (the renames may be lost),
// but a file system that cannot sync a directory (EINVAL, EROFS, ENOTSUP:
// as os.File.Sync reports them, in an *fs.PathError) is not.
func TestSyncErr(t *testing.T) {
	sync := func(errno syscall.Errno) error { return &fs.PathError{Op: "sync", Path: "/d", Err: errno} }
	for _, tc := range []struct {
		err  error
		fail bool
	}{
		{nil, false},
		{sync(syscall.EINVAL), false},
		{sync(syscall.ENOTSUP), false},
		{sync(syscall.EOPNOTSUPP), false},
		{sync(syscall.EIO), true},
		{sync(syscall.ENOSPC), true},
		{sync(syscall.EBADF), true},
		{sync(syscall.EROFS), false},
	} {
		err := syncErr(tc.err)
		if (err != nil) != tc.fail {
			t.Errorf("syncErr(%v) = %v, want failure %v", tc.err, err, tc.fail)
		}
		if err != nil && !errors.Is(err, tc.err) {
			t.Errorf("syncErr(%v) = %v, does not wrap it", tc.err, err)
		}
	}
}
