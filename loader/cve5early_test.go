package loader

import (
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// TestBuildReadsCVE5RecordsWhilePacking: a full build reads its CVE JSON
// 5 records while NVD's records are packed, on the core the pack leaves
// idle, not after: a record file is being read before the stage "pack
// NVD records" ends (the stage waits for it, up to 10 s), and the
// snapshot is the same as ever (TestBuildWithCVE5Records).
func TestBuildReadsCVE5RecordsWhilePacking(t *testing.T) {
	dir := t.TempDir()
	cwe := sharedPath(t, "cwe/cwec_v4.15.xml.zip")
	nvd := sharedPath(t, "nvd/nvdcve-2.0-sample.json.gz")
	var files []cve5ZipFile
	for i := range 20 {
		id := fmt.Sprintf("CVE-2031-%04d", 1000+i)
		files = append(files, cve5ZipFile{name: id + ".json", data: []byte(cve5JSON(id, "2031-02-01T00:00:00.000Z", "d"))})
	}
	records := mustWrite(t, filepath.Join(dir, "cves.zip"), string(cve5Zip(t, files...)))
	started := make(chan struct{})
	var once sync.Once
	cve5EntryHook = func() { once.Do(func() { close(started) }) }
	defer func() { cve5EntryHook = nil }()
	during := false
	m, err := Build(BuildOptions{CWECatalog: cwe, Feeds: []string{nvd, records}, Out: filepath.Join(dir, "snap"), Time: buildTime,
		Stage: func(name string, _ time.Duration, _ string) {
			if name != "pack NVD records" {
				return
			}
			select {
			case <-started:
				during = true
			case <-time.After(10 * time.Second):
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if !during {
		t.Error("the records were not being read by the end of the stage \"pack NVD records\"")
	}
	if m.Counts.CVEs != 186+20 {
		t.Errorf("%d CVEs, want %d", m.Counts.CVEs, 186+20)
	}
}

// TestCVE5ReadCancel: a build that fails while its records are read
// stops the read at the next record and waits for it, rather than
// leaving it running.
func TestCVE5ReadCancel(t *testing.T) {
	var files []cve5ZipFile
	for i := range 200 {
		id := fmt.Sprintf("CVE-2031-%04d", 1000+i)
		files = append(files, cve5ZipFile{name: id + ".json", data: []byte(cve5JSON(id, "2031-02-01T00:00:00.000Z", "d"))})
	}
	path := mustWrite(t, filepath.Join(t.TempDir(), "cves.zip"), string(cve5Zip(t, files...)))
	release := make(chan struct{})
	var once sync.Once
	started := make(chan struct{})
	cve5EntryHook = func() {
		once.Do(func() { close(started) })
		<-release
	}
	defer func() { cve5EntryHook = nil }()
	rd := startCVE5Read([]string{path}, nil, 0)
	<-started
	rd.stop.Store(true)
	close(release)
	rd.cancel()
	if !errors.Is(rd.err, errCVE5Stopped) {
		t.Errorf("read ended with %v, want %v", rd.err, errCVE5Stopped)
	}
	if rd.recs != nil {
		t.Errorf("%d records still held", len(rd.recs))
	}
}
