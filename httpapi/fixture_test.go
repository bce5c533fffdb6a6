package httpapi

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/vulnd/vulnd/index"
	"github.com/vulnd/vulnd/loader"
)

// sharedData returns ../shared/data (beside the repository), failing the
// test with a clear message when it is missing: these tests never skip.
func sharedData(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join("..", "..", "shared", "data", rel)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("real test data missing: %v (the tests read NVD/CWE samples from ../shared/data beside the repository)", err)
	}
	return p
}

var (
	sampleOnce sync.Once
	sampleIx   *index.Index
	sampleErr  error
	sampleDir  string
)

// sampleIndex is the index of a snapshot built by our own build from the
// real NVD sample and the real CWE catalog, built once per test binary.
func sampleIndex(t testing.TB) *index.Index {
	t.Helper()
	cwe := sharedData(t, "cwe/cwec_v4.15.xml.zip")
	feed := sharedData(t, "nvd/nvdcve-2.0-sample.json.gz")
	sampleOnce.Do(func() {
		dir, err := os.MkdirTemp("", "vulnd-httpapi-")
		if err != nil {
			sampleErr = err
			return
		}
		sampleDir = filepath.Join(dir, "snap")
		if _, err := loader.Build(loader.BuildOptions{
			CWECatalog: cwe, Feeds: []string{feed}, Out: sampleDir,
			Time: time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC),
		}); err != nil {
			sampleErr = err
			return
		}
		sampleIx, _, sampleErr = loader.Load(sampleDir)
	})
	if sampleErr != nil {
		t.Fatalf("build sample snapshot: %v", sampleErr)
	}
	return sampleIx
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sampleDir != "" {
		os.RemoveAll(filepath.Dir(sampleDir))
	}
	os.Exit(code)
}

// newTestServer serves ix (fixed) through the real handler.
func newTestServer(t testing.TB, ix *index.Index) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(New(func() *index.Index { return ix }, Options{}))
	t.Cleanup(srv.Close)
	return srv
}

// do sends one request; the body is read whole.
func do(t testing.TB, srv *httptest.Server, method, path string, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Keep the path exactly as written, escapes included.
	req.URL.Opaque = ""
	req.Header.Set("Accept", "application/json")
	// Unless a test asks for a coding, ask for none: net/http's client
	// would otherwise ask for gzip and undo it, dropping Content-Length.
	req.Header.Set("Accept-Encoding", "identity")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	body := readAll(t, res)
	return res, body
}
