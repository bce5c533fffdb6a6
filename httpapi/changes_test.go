package httpapi

import (
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/goccy/go-json"
	"github.com/google/go-cmp/cmp"

	"github.com/vulnd/vulnd/loader"
)

// TestChangeGoldens builds s1 from the real sample plus changes/before and
// s2 with -previous s1 from the sample plus changes/after, serves s2 and
// compares its report, alerts and events with expectations worked out by
// hand from the raw records (testdata/changes, see NOTES.md there). Ids are
// internal numbers: every "id" and "cpe_id" is set to 0 before comparing;
// loader's TestIDsStableAcrossBuilds checks them.
func TestChangeGoldens(t *testing.T) {
	cwe := sharedData(t, "cwe/cwec_v4.15.xml.zip")
	sample := sharedData(t, "nvd/nvdcve-2.0-sample.json.gz")
	before := sharedData(t, "nvd/changes/before.json.gz")
	after := sharedData(t, "nvd/changes/after.json.gz")
	dir := t.TempDir()
	s1, s2 := filepath.Join(dir, "s1"), filepath.Join(dir, "s2")
	if _, err := loader.Build(loader.BuildOptions{CWECatalog: cwe, Feeds: []string{sample, before}, Out: s1,
		Time: time.Date(2026, 11, 21, 6, 0, 0, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	if _, err := loader.Build(loader.BuildOptions{CWECatalog: cwe, Feeds: []string{sample, after}, Out: s2, Previous: s1,
		Time: time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	ix, _, err := loader.Load(s2)
	if err != nil {
		t.Fatal(err)
	}
	srv := newTestServer(t, ix)
	get := func(path string) any {
		t.Helper()
		res, body := do(t, srv, http.MethodGet, path, nil)
		if res.StatusCode != 200 {
			t.Fatalf("GET %s: %d %s", path, res.StatusCode, body)
		}
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	const reportPath = "/reports/20261122T060000Z"

	var want struct {
		Report    any      `json:"report"`
		AlertCVEs []string `json:"alert_cves"`
	}
	readGolden(t, filepath.Join("testdata", "changes", "report.json"), &want)
	report := get(reportPath)
	alertIDs := map[string]string{} // CVE -> alert id, from the served report
	var gotCVEs []string
	for _, a := range report.(map[string]any)["alerts"].([]any) {
		m := a.(map[string]any)
		cve := m["cve"].(string)
		alertIDs[cve] = strconv.FormatFloat(m["id"].(float64), 'f', -1, 64)
		gotCVEs = append(gotCVEs, cve)
	}
	if diff := cmp.Diff(want.AlertCVEs, gotCVEs); diff != "" {
		t.Errorf("CVEs with an alert, in report order (-want +got):\n%s", diff)
	}
	zeroNumbers(report, "id", "cpe_id")
	if diff := cmp.Diff(want.Report, report); diff != "" {
		t.Errorf("GET %s (-want +got):\n%s", reportPath, diff)
	}
	if diff := cmp.Diff([]any{map[string]any{"id": "20261122T060000Z", "created_at": "2026-11-22 06:00:00Z",
		"handlers": want.Report.(map[string]any)["handlers"]}}, get("/reports")); diff != "" {
		t.Errorf("GET /reports (-want +got):\n%s", diff)
	}
	alerts := get(reportPath + "/alerts")
	zeroNumbers(alerts, "id", "cpe_id")
	if diff := cmp.Diff(want.Report.(map[string]any)["alerts"], alerts); diff != "" {
		t.Errorf("GET %s/alerts differs from the report's alerts (-want +got):\n%s", reportPath, diff)
	}

	files, _ := filepath.Glob(filepath.Join("testdata", "changes", "CVE-*.json"))
	if len(files) < 6 {
		t.Fatalf("%d per-CVE change goldens, want at least 6", len(files))
	}
	kinds := map[string]bool{}
	for _, f := range files {
		var g struct {
			CVE      string `json:"cve"`
			Handlers any    `json:"handlers"`
			Events   any    `json:"events"`
		}
		readGolden(t, f, &g)
		t.Run(g.CVE, func(t *testing.T) {
			id, ok := alertIDs[g.CVE]
			if !ok {
				t.Fatalf("%s has no alert in the report", g.CVE)
			}
			events := get(reportPath + "/alerts/" + id)
			for _, e := range events.([]any) {
				kinds[e.(map[string]any)["type"].(string)] = true
			}
			zeroNumbers(events, "id", "cpe_id")
			if diff := cmp.Diff(g.Events, events); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			for _, a := range report.(map[string]any)["alerts"].([]any) {
				if m := a.(map[string]any); m["cve"] == g.CVE {
					if diff := cmp.Diff(g.Handlers, m["handlers"]); diff != "" {
						t.Errorf("handlers (-want +got):\n%s", diff)
					}
				}
			}
		})
	}
	for _, k := range []string{"New CVE", "Summary changed", "CPEs changed", "CVSS changed", "CWEs changed", "References changed"} {
		if !kinds[k] {
			t.Errorf("no golden covers %q", k)
		}
	}
}

func readGolden(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// zeroNumbers sets every number whose member name is one of keys,
// anywhere in v, to 0.
func zeroNumbers(v any, keys ...string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if _, isNum := e.(float64); isNum && slices.Contains(keys, k) {
				x[k] = float64(0)
				continue
			}
			zeroNumbers(e, keys...)
		}
	case []any:
		for _, e := range x {
			zeroNumbers(e, keys...)
		}
	}
}
