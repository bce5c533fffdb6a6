package main

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// writePidFile writes this process's id and a newline to path, through a
// temporary file in the same directory renamed into place, so a reader
// never sees a partial file. It refuses when path names another running
// vulnd, which would then no longer get its reloads.
func writePidFile(path string) error {
	if pid, ok := readPidFile(path); ok && pid != os.Getpid() && isVulnd(pid) {
		return fmt.Errorf("-pidfile %s: names process %d, a running vulnd; stop it or give this one another pid file", path, pid)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("-pidfile: %w", err)
	}
	_, err = fmt.Fprintf(tmp, "%d\n", os.Getpid())
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("-pidfile: %w", err)
	}
	return nil
}

// removePidFile removes path if it still holds this process's id: a
// newer process may have taken it over.
func removePidFile(path string, log *slog.Logger) {
	if pid, ok := readPidFile(path); !ok || pid != os.Getpid() {
		return
	}
	if err := os.Remove(path); err != nil && log != nil {
		log.Warn("could not remove the pid file", "path", path, "err", err)
	}
}

// readPidFile returns the process id path holds, if it holds one.
func readPidFile(path string) (int, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid, err == nil && pid > 0
}

// isVulnd tells whether pid is a running process of the same program as
// this one (by /proc's comm, where there is one; else whether it runs at
// all).
func isVulnd(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	self, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		return true
	}
	other, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	return bytes.Equal(self, other)
}
