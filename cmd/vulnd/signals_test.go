package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// sharedData is a file under ../shared/data; the tests never skip without
// it.
func sharedData(t *testing.T, rel string) string {
	t.Helper()
	p := filepath.Join("..", "..", "..", "shared", "data", rel)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("real test data missing: %v (the tests read NVD/CWE samples from ../shared/data)", err)
	}
	abs, _ := filepath.Abs(p)
	return abs
}

// buildBinary builds this command as dir/vulnd.
func buildBinary(t *testing.T, dir string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(dir, "vulnd")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// TestBinaryBuildIgnoresSIGHUP: a running build gets SIGHUPs (as from a
// careless pkill -HUP vulnd) and finishes with exit 0. The second feed is
// a FIFO, so the build is surely still running when they arrive.
func TestBinaryBuildIgnoresSIGHUP(t *testing.T) {
	tmp := t.TempDir()
	bin := buildBinary(t, tmp)
	fifo := filepath.Join(tmp, "feed.fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	feed := sharedData(t, "nvd/nvdcve-2.0-sample.json.gz")
	cmd := exec.Command(bin, "build", "-cwe", sharedData(t, "cwe/cwec_v4.15.xml.zip"), "-o", filepath.Join(tmp, "out"), feed, fifo)
	var out syncBuffer
	cmd.Stdout = &out
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	// The first stage line comes after the CWE catalog is read: by then
	// SIGHUP is ignored, and the build waits on the FIFO.
	lines := bufio.NewScanner(stderr)
	if !lines.Scan() || !strings.Contains(lines.Text(), "read CWE catalog") {
		t.Fatalf("first stderr line %q", lines.Text())
	}
	go io.Copy(io.Discard, stderr)
	for i := 0; i < 3; i++ {
		if err := cmd.Process.Signal(syscall.SIGHUP); err != nil {
			t.Fatalf("SIGHUP %d: %v", i, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Still running: now give it the second feed. Opening the FIFO
	// blocks until the build reads it, so it is done aside, and a build
	// that never finishes is killed rather than hanging the test.
	b, err := os.ReadFile(feed)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		if w, err := os.OpenFile(fifo, os.O_WRONLY, 0); err == nil {
			w.Write(b)
			w.Close()
		}
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("build after SIGHUP: %v (want exit 0); stdout %q", err, out.String())
		}
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		// Unblock the writer, if the build never opened the FIFO.
		if r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0); err == nil {
			r.Close()
		}
		t.Fatalf("build still running 60 s after its last feed was written; stdout %q", out.String())
	}
	if !strings.HasPrefix(out.String(), "wrote "+filepath.Join(tmp, "out")+": 186 CVEs") {
		t.Errorf("stdout %q", out.String())
	}
}

// TestBinaryPidFile: serve -pidfile writes its own pid, refuses a second
// server on the same pid file while the first runs, reloads on a SIGHUP to
// that pid, and removes the file on a clean exit.
func TestBinaryPidFile(t *testing.T) {
	tmp := t.TempDir()
	bin := buildBinary(t, tmp)
	snap := filepath.Join(tmp, "snap")
	version(t, snap, "v0", time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC))
	pidFile := filepath.Join(tmp, "run", "vulnd.pid")
	os.Mkdir(filepath.Dir(pidFile), 0o755)
	addr := freePort(t)
	var logs syncBuffer
	cmd := exec.Command(bin, "serve", "-snapshot", snap, "-addr", addr, "-pidfile", pidFile, "-drain-wait", "0s")
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	waitFor(t, &logs, "msg=serving")
	b, err := os.ReadFile(pidFile)
	if want := strconv.Itoa(cmd.Process.Pid) + "\n"; err != nil || string(b) != want {
		t.Fatalf("pid file holds %q (%v), want %q", b, err, want)
	}

	// A second server on the same pid file is refused before loading.
	second := exec.Command(bin, "serve", "-snapshot", snap, "-addr", freePort(t), "-pidfile", pidFile)
	msg, err := second.CombinedOutput()
	want := fmt.Sprintf("vulnd serve: -pidfile %s: names process %d, a running vulnd; stop it or give this one another pid file\n", pidFile, cmd.Process.Pid)
	if code := second.ProcessState.ExitCode(); code != 1 || string(msg) != want {
		t.Errorf("second server: exit %d, %q; want 1, %q", code, msg, want)
	}

	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	version(t, snap, "v1", time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC))
	if err := syscall.Kill(pid, syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, &logs, `built_at="2026-11-23 00:00:00Z"`)
	cmd.Process.Signal(syscall.SIGTERM)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, logs.String())
	}
	if _, err := os.Stat(pidFile); !os.IsNotExist(err) {
		t.Errorf("pid file after a clean exit: %v, want it gone", err)
	}
	// A stale pid file (its process is gone) is taken over.
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(second.Process.Pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	third := exec.Command(bin, "serve", "-snapshot", snap, "-addr", addr, "-pidfile", pidFile)
	var logs3 syncBuffer
	third.Stderr = &logs3
	if err := third.Start(); err != nil {
		t.Fatal(err)
	}
	defer third.Process.Kill()
	waitFor(t, &logs3, "msg=serving")
	if b, _ := os.ReadFile(pidFile); string(b) != strconv.Itoa(third.Process.Pid)+"\n" {
		t.Errorf("stale pid file not taken over: %q", b)
	}
	third.Process.Signal(syscall.SIGTERM)
	third.Wait()
}

// TestMakeRefresh runs make refresh as an operator would: feeds found by
// content whatever their names, and SIGHUP only to the server whose pid
// file is given, not to another vulnd on the same host.
func TestMakeRefresh(t *testing.T) {
	if testing.Short() {
		t.Skip("runs make and builds the binary")
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "bin", "vulnd")
	feeds := filepath.Join(tmp, "feeds")
	os.Mkdir(feeds, 0o755)
	link := func(src, name string) {
		if err := os.Symlink(src, filepath.Join(feeds, name)); err != nil {
			t.Fatal(err)
		}
	}
	// A year feed under a name the old pattern missed, an update feed,
	// the CWE catalog and a note, all in one directory.
	link(sharedData(t, "nvd/nvdcve-2.0-sample.json.gz"), "2024.json.gz")
	link(sharedData(t, "nvd/changes/after.json.gz"), "nvdcve-2.0-modified.json.gz")
	link(sharedData(t, "cwe/cwec_v4.15.xml.zip"), "cwec_v4.15.xml.zip")
	os.WriteFile(filepath.Join(feeds, "README"), []byte("NVD mirror\n"), 0o644)
	snap := filepath.Join(tmp, "srv", "current")
	os.Mkdir(filepath.Dir(snap), 0o755)
	refresh := func(extra ...string) (string, error) {
		args := append([]string{"--no-print-directory", "-C", filepath.Join("..", ".."), "refresh", "BIN=" + bin,
			"FEEDS=" + feeds, "CWE=" + sharedData(t, "cwe/cwec_v4.15.xml.zip"), "SNAP=" + snap}, extra...)
		out, err := exec.Command("make", args...).CombinedOutput()
		return string(out), err
	}

	// First: no snapshot yet, nobody to reload.
	out, err := refresh()
	if err != nil {
		t.Fatalf("first refresh: %v\n%s", err, out)
	}
	for _, w := range []string{
		"vulnd feeds: skipped " + filepath.Join(feeds, "README") + ": not an NVD CVE feed",
		"vulnd feeds: skipped " + filepath.Join(feeds, "cwec_v4.15.xml.zip") + ": not an NVD CVE feed",
		filepath.Join(feeds, "2024.json.gz") + " " + filepath.Join(feeds, "nvdcve-2.0-modified.json.gz"),
		"wrote " + snap + ".next: 191 CVEs", // 186 in the sample, 5 more in after.json.gz
		"reload: no PIDFILE or UNIT given: signalled no server",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("first refresh output lacks %q:\n%s", w, out)
		}
	}

	// Two servers of the snapshot; only a's pid file is given.
	start := func(name string, extra ...string) (*exec.Cmd, *syncBuffer) {
		var logs syncBuffer
		cmd := exec.Command(bin, append([]string{"serve", "-snapshot", snap, "-addr", freePort(t), "-drain-wait", "0s"}, extra...)...)
		cmd.Stderr = &logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		waitFor(t, &logs, "msg=serving")
		return cmd, &logs
	}
	pidFile := filepath.Join(tmp, "a.pid")
	a, logsA := start("a", "-pidfile", pidFile)
	b, logsB := start("b")
	out, err = refresh("PIDFILE=" + pidFile)
	if err != nil {
		t.Fatalf("second refresh: %v\n%s", err, out)
	}
	if !strings.Contains(out, fmt.Sprintf("kill -HUP %d   # %s", a.Process.Pid, pidFile)) || strings.Contains(out, "signalled no server") {
		t.Errorf("second refresh output:\n%s", out)
	}
	if _, err := os.Stat(snap + ".prev"); err != nil {
		t.Errorf("the old snapshot is not kept: %v", err)
	}
	// A got the SIGHUP: it loaded the new snapshot, or found it the same
	// as the one it serves (a rebuild in the same second of the same
	// feeds has the same manifest) and said so. B got nothing.
	loads := func(l *syncBuffer) int {
		return strings.Count(l.String(), "snapshot loaded") + strings.Count(l.String(), "snapshot unchanged")
	}
	for i := 0; i < 100 && loads(logsA) < 2; i++ {
		time.Sleep(25 * time.Millisecond)
	}
	if n := loads(logsA); n != 2 {
		t.Errorf("server a loaded %d times, want 2:\n%s", n, logsA.String())
	}
	time.Sleep(200 * time.Millisecond)
	if n := loads(logsB); n != 1 || b.ProcessState != nil {
		t.Errorf("server b (no pid file given) loaded %d times, want 1:\n%s", n, logsB.String())
	}
	// Both still answer.
	for _, c := range []*exec.Cmd{a, b} {
		if err := c.Process.Signal(syscall.Signal(0)); err != nil {
			t.Errorf("pid %d: %v", c.Process.Pid, err)
		}
	}

	// A pid file of a process that is gone is refused, not signalled.
	stale := filepath.Join(tmp, "stale.pid")
	os.WriteFile(stale, []byte("999999999\n"), 0o644)
	raw, err := exec.Command("make", "--no-print-directory", "-C", filepath.Join("..", ".."), "reload", "PIDFILE="+stale).CombinedOutput()
	if err == nil || !strings.Contains(string(raw), "reload: "+stale+": no process 999999999 (a stale pid file?)") {
		t.Errorf("reload of a stale pid file: %v\n%s", err, raw)
	}
}
