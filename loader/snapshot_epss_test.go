package loader

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-json"
	"github.com/google/go-cmp/cmp"
)

// epssSample is ../shared/data/epss/epss-sample.csv as a string.
func epssSample(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(sharedPath(t, "epss/epss-sample.csv"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// writeEPSS writes an EPSS file into dir and returns its path.
func writeEPSS(t *testing.T, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// details returns the body of /cve/{name}/details of the snapshot in dir.
func servedDetails(t *testing.T, dir, name string) string {
	t.Helper()
	ix, _, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ix.AppendDetails(nil, name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestBuildEPSS: build -epss keeps the scores of the snapshot's CVEs in
// epss.csv.zst with the manifest's "epss", serve and validate read them
// back, and a build with -previous and no -epss carries them over.
func TestBuildEPSS(t *testing.T) {
	cwe := sharedPath(t, "cwe/cwec_v4.15.xml.zip")
	feed := sharedPath(t, "nvd/nvdcve-2.0-sample.json.gz")
	dir := t.TempDir()
	// One row for a CVE the sample lacks: not stored.
	epss := writeEPSS(t, dir, "epss_scores-2026-09-29.csv", epssSample(t)+"CVE-2099-0001,0.5,0.5\n")
	s1, s2 := filepath.Join(dir, "s1"), filepath.Join(dir, "s2")
	at := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	m, err := Build(BuildOptions{CWECatalog: cwe, Feeds: []string{feed}, Out: s1, EPSS: epss, Time: at})
	if err != nil {
		t.Fatal(err)
	}
	want := &EPSSInfo{File: "epss_scores-2026-09-29.csv", Model: "v2026.06.15", Date: "2026-09-29T12:00:22Z", Rows: 10}
	if diff := cmp.Diff(want, m.EPSS); diff != "" {
		t.Errorf("manifest epss (-want +got):\n%s", diff)
	}
	if m.Version != FormatVersion || m.Files["epss"].Name != "epss.csv.zst" || m.Files["epss"].Records != 10 {
		t.Errorf("version %d, files[epss] %+v", m.Version, m.Files["epss"])
	}
	if last := m.Inputs[len(m.Inputs)-1]; last.Name != filepath.Base(epss) || last.Records != 11 {
		t.Errorf("last input %+v, want the EPSS file with 11 rows", last)
	}
	// The manifest on disk says the same.
	raw, err := os.ReadFile(filepath.Join(s1, ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	var onDisk struct {
		EPSS json.RawMessage `json:"epss"`
	}
	if err := json.Unmarshal(raw, &onDisk); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(strings.Fields(string(onDisk.EPSS)), ""); got != `{"file":"epss_scores-2026-09-29.csv","model":"v2026.06.15","date":"2026-09-29T12:00:22Z","rows":10}` {
		t.Errorf("manifest epss on disk: %s", got)
	}
	wantDetails := map[string]string{
		"CVE-1999-0095":  `"epss":{"score":0.16317,"percentile":0.96858,"date":"2026-09-29","model":"v2026.06.15"}}`,
		"CVE-2023-1234":  `"epss":{"score":0.00707,"percentile":0.5157,"date":"2026-09-29","model":"v2026.06.15"}}`,
		"CVE-2023-1235":  `"epss":{"score":0.0042,"percentile":0.3382,"date":"2026-09-29","model":"v2026.06.15"}}`,
		"CVE-2023-22466": `"epss":{"score":0.00569,"percentile":0.44924,"date":"2026-09-29","model":"v2026.06.15"}}`,
		"CVE-2021-44228": `"epss":null}`,
	}
	check := func(dir string) {
		t.Helper()
		for name, want := range wantDetails {
			if got := servedDetails(t, dir, name); !strings.HasSuffix(got, want) {
				t.Errorf("%s: %s details end %s", dir, name, got[max(0, len(got)-120):])
			}
		}
		if _, err := Validate(dir); err != nil {
			t.Errorf("validate %s: %v", dir, err)
		}
	}
	check(s1)
	// A refresh without -epss keeps the scores and their provenance.
	m2, err := Build(BuildOptions{CWECatalog: cwe, Feeds: []string{feed}, Out: s2, Previous: s1, Time: at.Add(24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, m2.EPSS); diff != "" {
		t.Errorf("carried-over manifest epss (-want +got):\n%s", diff)
	}
	if m2.Counts.Reports != 0 {
		t.Errorf("%d reports, want 0: nothing changed", m2.Counts.Reports)
	}
	check(s2)
	// A manifest whose "epss" does not fit is refused, naming the fault.
	for _, tc := range []struct{ from, to, want string }{
		{`"version": 11`, `"version": 5`, `format version 5 holds no EPSS, but the manifest has "epss"`},
		{`"rows": 10`, `"rows": 9`, "epss: 9 rows, but epss.csv.zst holds 10 records"},
		{`"model": "v2026.06.15"`, `"model": ""`, `epss: model "" is not 1 to 64 printable characters`},
		{`"date": "2026-09-29T12:00:22Z"`, `"date": "2026-09-29"`, `epss: date "2026-09-29" is not an RFC 3339 time`},
	} {
		bad := filepath.Join(t.TempDir(), "bad")
		if err := os.CopyFS(bad, os.DirFS(s1)); err != nil {
			t.Fatal(err)
		}
		edited := strings.Replace(string(raw), tc.from, tc.to, 1)
		if edited == string(raw) {
			t.Fatalf("%s not in the manifest", tc.from)
		}
		os.WriteFile(filepath.Join(bad, ManifestName), []byte(edited), 0o644)
		if _, _, err := Load(bad); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.to, err, tc.want)
		}
	}
	// Without -epss nor -previous: no scores, no "epss" in the manifest.
	s3 := filepath.Join(dir, "s3")
	m3, err := Build(BuildOptions{CWECatalog: cwe, Feeds: []string{feed}, Out: s3, Time: at})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m3.Files["epss"]; m3.EPSS != nil || ok {
		t.Errorf("no -epss: manifest epss %+v", m3.EPSS)
	}
	if got := servedDetails(t, s3, "CVE-1999-0095"); !strings.HasSuffix(got, `"epss":null}`) {
		t.Errorf("no -epss: %s", got)
	}
}

// TestBuildEPSSBadFile: a bad row stops the build with one line naming
// the file and the line.
func TestBuildEPSSBadFile(t *testing.T) {
	dir := t.TempDir()
	epss := writeEPSS(t, dir, "epss.csv", strings.Replace(epssSample(t), "CVE-2023-1235,0.0042", "CVE-2023-1235,1.0042", 1))
	_, err := Build(BuildOptions{CWECatalog: sharedPath(t, "cwe/cwec_v4.15.xml.zip"), Feeds: []string{sharedPath(t, "nvd/nvdcve-2.0-sample.json.gz")},
		Out: filepath.Join(dir, "s"), EPSS: epss, Time: time.Now()})
	want := "loader: epss " + epss + `: line 5: epss "1.0042" not in [0,1]`
	if err == nil || err.Error() != want || strings.Contains(err.Error(), "\n") {
		t.Errorf("got %v, want %s", err, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "s")); !os.IsNotExist(err) {
		t.Errorf("a snapshot was written: %v", err)
	}
}

// TestEPSSAlerts: an "EPSS changed" event when a score moves by 0.1 or
// more, after the CVE's other events, with the old and new scores as
// FIRST wrote them; none for smaller moves, none when the previous
// snapshot had no scores, none when FIRST's model changed (and a warning).
func TestEPSSAlerts(t *testing.T) {
	cwe := sharedPath(t, "cwe/cwec_v4.15.xml.zip")
	feed := sharedPath(t, "nvd/nvdcve-2.0-sample.json.gz")
	sample := epssSample(t)
	dir := t.TempDir()
	day1 := writeEPSS(t, dir, "day1.csv", sample)
	// CVE-1999-0095 up by exactly 0.1: an alert. CVE-2023-1234 up by
	// 0.09999 (its percentile by 0.38): none. CVE-2023-1235 loses its
	// row (0.0042 to nothing): none. A new row, CVE-2000-1234 at 0.2:
	// an alert from nothing.
	next := strings.NewReplacer(
		"CVE-1999-0095,0.16317,0.96858", "CVE-1999-0095,0.26317,0.97",
		"CVE-2023-1234,0.00707,0.5157", "CVE-2023-1234,0.10706,0.9",
		"CVE-2023-1235,0.0042,0.3382\n", "",
		"cve,epss,percentile\n", "cve,epss,percentile\nCVE-2000-1234,0.2,0.95\n",
	).Replace(sample)
	day2 := writeEPSS(t, dir, "day2.csv", next)
	newModel := writeEPSS(t, dir, "model.csv", strings.Replace(next, "v2026.06.15", "v2027.01.01", 1))
	at := time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)
	build := func(out, prev, epss string, warn *[]string) Manifest {
		t.Helper()
		m, err := Build(BuildOptions{CWECatalog: cwe, Feeds: []string{feed}, Out: filepath.Join(dir, out), Previous: prev, EPSS: epss,
			Time: at, Warn: func(l string) { *warn = append(*warn, l) }})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	var warns []string
	build("s1", "", day1, &warns)
	m := build("s2", filepath.Join(dir, "s1"), day2, &warns)
	if m.Counts.Reports != 1 || m.Counts.Alerts != 2 {
		t.Fatalf("%d reports, %d alerts, want 1 and 2", m.Counts.Reports, m.Counts.Alerts)
	}
	s, err := Read(filepath.Join(dir, "s2"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, a := range s.Data.Reports[0].Alerts {
		for _, e := range a.Events {
			got[a.CVE] += e.Type + " " + string(e.Details) + ";"
		}
	}
	want := map[string]string{
		"CVE-1999-0095": `EPSS changed {"old_score":0.16317,"new_score":0.26317,"old_percentile":0.96858,"new_percentile":0.97};`,
		"CVE-2000-1234": `EPSS changed {"old_score":null,"new_score":0.2,"old_percentile":null,"new_percentile":0.95};`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if len(warns) != 0 {
		t.Errorf("warnings: %q", warns)
	}
	// A new model: no EPSS alert, one warning.
	m = build("s3", filepath.Join(dir, "s1"), newModel, &warns)
	if m.Counts.Reports != 0 {
		t.Errorf("new model: %d alerts, want none", m.Counts.Alerts)
	}
	if want := []string{"EPSS model changed from v2026.06.15 to v2027.01.01: no EPSS alerts in this build"}; !cmp.Equal(want, warns) {
		t.Errorf("warnings %q, want %q", warns, want)
	}
	// The previous snapshot had no scores: no EPSS alert.
	warns = nil
	build("s4", "", "", &warns)
	if m = build("s5", filepath.Join(dir, "s4"), day2, &warns); m.Counts.Reports != 0 || len(warns) != 0 {
		t.Errorf("first -epss: %d alerts, warnings %q; want none", m.Counts.Alerts, warns)
	}
}
