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

var (
	cve5Once sync.Once
	cve5Ix   *index.Index
	cve5Err  error
	cve5Dir  string
)

// sampleCVE5Index is sampleIndex's snapshot built with the real CVE JSON
// 5 records of ../shared/data/cve5 among the inputs too, once per test
// binary.
func sampleCVE5Index(t testing.TB) *index.Index {
	t.Helper()
	inputs := []string{
		sharedData(t, "nvd/nvdcve-2.0-sample.json.gz"),
		sharedData(t, "cve5/cvelistV5-sample.json.gz"),
		sharedData(t, "cve5/vulnrichment-sample.json.gz"),
	}
	cwe := sharedData(t, "cwe/cwec_v4.15.xml.zip")
	cve5Once.Do(func() {
		dir, err := os.MkdirTemp("", "vulnd-httpapi-cve5-")
		if err != nil {
			cve5Err = err
			return
		}
		cve5Dir = filepath.Join(dir, "snap")
		if _, err := loader.Build(loader.BuildOptions{
			CWECatalog: cwe, Feeds: inputs, Out: cve5Dir,
			Time: time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC),
		}); err != nil {
			cve5Err = err
			return
		}
		cve5Ix, _, cve5Err = loader.Load(cve5Dir)
	})
	if cve5Err != nil {
		t.Fatalf("build sample snapshot with CVE JSON 5 records: %v", cve5Err)
	}
	return cve5Ix
}

var (
	epssOnce sync.Once
	epssIx   *index.Index
	epssErr  error
	epssDir  string
)

// epssDayBefore is the EPSS file of the day before ../shared/data/epss's,
// written for the tests: CVE-1999-0095 scored 0.06317 (0.1 less than the
// real row), CVE-2023-1234 0.1 (0.09293 more than the real 0.00707), the
// other rows as the real file has them.
const epssDayBefore = `#model_version:v2026.06.15,score_date:2026-09-28T12:00:00Z
cve,epss,percentile
CVE-1999-0095,0.06317,0.91
CVE-2023-1234,0.1,0.9
CVE-2023-1235,0.0042,0.3382
CVE-2023-1236,0.00459,0.37329
CVE-2023-1237,0.0044,0.35796
CVE-2023-20116,0.00604,0.46813
CVE-2023-20242,0.00486,0.39415
CVE-2023-20261,0.00529,0.42473
CVE-2023-20266,0.00488,0.39594
CVE-2023-22466,0.00569,0.44924
`

// sampleEPSSIndex is sampleIndex's snapshot built with the real EPSS rows
// of ../shared/data/epss (-epss), and -previous a snapshot of the same
// sample built with epssDayBefore: its one report, 20261122T000000Z, has
// one alert, CVE-1999-0095's "EPSS changed" (up by 0.1;
// CVE-2023-1234's fall of 0.09293 raises none). Once per test binary.
func sampleEPSSIndex(t testing.TB) *index.Index {
	t.Helper()
	cwe := sharedData(t, "cwe/cwec_v4.15.xml.zip")
	feed := sharedData(t, "nvd/nvdcve-2.0-sample.json.gz")
	epss := sharedData(t, "epss/epss-sample.csv")
	epssOnce.Do(func() {
		dir, err := os.MkdirTemp("", "vulnd-httpapi-epss-")
		if err != nil {
			epssErr = err
			return
		}
		before := filepath.Join(dir, "epss_scores-2026-09-28.csv")
		if epssErr = os.WriteFile(before, []byte(epssDayBefore), 0o644); epssErr != nil {
			return
		}
		s1 := filepath.Join(dir, "s1")
		epssDir = filepath.Join(dir, "snap")
		for _, b := range []loader.BuildOptions{
			{CWECatalog: cwe, Feeds: []string{feed}, Out: s1, EPSS: before, Time: time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC)},
			{CWECatalog: cwe, Feeds: []string{feed}, Out: epssDir, EPSS: epss, Previous: s1, Time: time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)},
		} {
			if _, epssErr = loader.Build(b); epssErr != nil {
				return
			}
		}
		epssIx, _, epssErr = loader.Load(epssDir)
	})
	if epssErr != nil {
		t.Fatalf("build sample snapshot with EPSS: %v", epssErr)
	}
	return epssIx
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, dir := range []string{sampleDir, cve5Dir, epssDir} {
		if dir != "" {
			os.RemoveAll(filepath.Dir(dir))
		}
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
