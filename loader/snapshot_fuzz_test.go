package loader

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

var (
	fuzzSnapOnce sync.Once
	fuzzSnap     string // a good snapshot the fuzz targets copy and break
	fuzzSnapErr  error
)

// goodSnapshot writes, once per process, the good snapshot the fuzz
// targets start from.
func goodSnapshot() (string, error) {
	fuzzSnapOnce.Do(func() {
		dir, err := os.MkdirTemp("", "vulnd-fuzz-")
		if err != nil {
			fuzzSnapErr = err
			return
		}
		fuzzSnap = filepath.Join(dir, "good")
		_, fuzzSnapErr = Write(fuzzSnap, smallData(), buildTime, nil)
	})
	return fuzzSnap, fuzzSnapErr
}

// fuzzCopy returns a copy of the good snapshot in a new directory.
func fuzzCopy(t *testing.T) string {
	if _, err := goodSnapshot(); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "snap")
	if err := os.CopyFS(dst, os.DirFS(fuzzSnap)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// FuzzParseManifest: any manifest bytes are refused or accepted without
// panicking, and an accepted manifest's limits hold.
func FuzzParseManifest(f *testing.F) {
	dir, err := goodSnapshot()
	if err != nil {
		f.Fatal(err)
	}
	good, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"format":"vulnd-snapshot","version":3}`))
	f.Add([]byte(`{"format":"vulnd-snapshot","version":4}`))
	f.Add([]byte(`{"format":"vulnd-snapshot","version":5}`))
	f.Add([]byte(`{"files":{"cves":{"chunks":[{"size":-1}]}}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := parseManifest(raw, true)
		if err != nil {
			return
		}
		if m.Version < previousVersion || m.Version > FormatVersion {
			t.Fatalf("accepted version %d", m.Version)
		}
		for key, fi := range m.Files {
			if fi.Name != dataFilesOf(m.Version)[key] || fi.Bytes > maxDecodedBytes || checkChunks(fi) != nil {
				t.Fatalf("accepted %s file %+v", key, fi)
			}
		}
	})
}

// FuzzLoadCVEFile puts arbitrary bytes in a snapshot's CVE file, once as
// the decoded lines (compressed by us) and once as the compressed chunk
// itself, with the manifest made to match so every check before decoding
// passes. Load and Validate must refuse or accept without panicking; what
// Load accepts, Validate must not find more CVEs in.
func FuzzLoadCVEFile(f *testing.F) {
	f.Add(append(EncodeCVEForTest(), '\n'))
	f.Add([]byte("{}\n"))
	f.Add([]byte("\n\n"))
	f.Add([]byte{0x28, 0xb5, 0x2f, 0xfd, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := bytes.Count(data, []byte{'\n'})
		for _, compressed := range []bool{false, true} {
			dir := fuzzCopy(t)
			if compressed {
				setChunks(t, dir, keyCVEs, [][]byte{data}, []int64{int64(len(data)) * 4}, []int{lines})
			} else {
				setChunks(t, dir, keyCVEs, [][]byte{zstdFrame(t, data)}, []int64{int64(len(data))}, []int{lines})
			}
			ix, m, err := Load(dir)
			if err == nil && ix.Counts() != m.Counts {
				t.Fatalf("loaded counts %+v, manifest %+v", ix.Counts(), m.Counts)
			}
			Validate(dir)
		}
	})
}

func TestMain(m *testing.M) {
	code := m.Run()
	if fuzzSnap != "" {
		os.RemoveAll(filepath.Dir(fuzzSnap))
	}
	os.Exit(code)
}
