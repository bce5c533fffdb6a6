package loader

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vulnd/vulnd/index"
)

// TestMapDetails: status, KEV, vectors and severities of real records,
// expectations read by hand from ../shared/data/nvd/nvdcve-2.0-sample.json.gz.
func TestMapDetails(t *testing.T) {
	cves, err := ReadFeeds([]string{sharedPath(t, "nvd/nvdcve-2.0-sample.json.gz")})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*index.CVE{}
	for i := range cves {
		byName[cves[i].Name] = &cves[i]
	}
	type metric struct{ Version, Source, Type, Vector, Severity string }
	for _, tc := range []struct {
		name    string
		status  string
		kev     *index.KEV
		metrics []metric // in record order by version group as mapped: 2.0, 3.1, 3.0, 4.0
	}{
		{"CVE-2021-44228", "Analyzed", &index.KEV{DateAdded: "2021-12-10", ActionDue: "2021-12-24",
			RequiredAction:    "For all affected software assets for which updates exist, the only acceptable remediation actions are: 1) Apply updates; OR 2) remove affected assets from agency networks. Temporary mitigations using one of the measures provided at https://www.cisa.gov/uscert/ed-22-02-apache-log4j-recommended-mitigation-measures are only acceptable until updates are available.",
			VulnerabilityName: "Apache Log4j2 Remote Code Execution Vulnerability"}, []metric{
			{"2.0", "nvd@nist.gov", "Primary", "AV:N/AC:M/Au:N/C:C/I:C/A:C", "HIGH"},
			{"3.1", "nvd@nist.gov", "Primary", "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H", "CRITICAL"},
			{"3.1", "134c704f-9b21-4f2e-91b3-4a467353bcc0", "Secondary", "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:C/C:H/I:H/A:H", "CRITICAL"},
		}},
		{"CVE-2024-5732", "Analyzed", nil, []metric{
			{"2.0", "cna@vuldb.com", "Secondary", "AV:N/AC:L/Au:N/C:P/I:P/A:P", "HIGH"},
			{"3.1", "nvd@nist.gov", "Primary", "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H", "CRITICAL"},
			{"3.1", "cna@vuldb.com", "Secondary", "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:L/I:L/A:L", "HIGH"},
			{"4.0", "cna@vuldb.com", "Secondary", "CVSS:4.0/AV:N/AC:L/AT:N/PR:N/UI:N/VC:L/VI:L/VA:L/SC:N/SI:N/SA:N/E:X/CR:X/IR:X/AR:X/MAV:X/MAC:X/MAT:X/MPR:X/MUI:X/MVC:X/MVI:X/MVA:X/MSC:X/MSI:X/MSA:X/S:X/AU:X/R:X/V:X/RE:X/U:X", "MEDIUM"},
		}},
		{"CVE-2023-47488", "Awaiting Analysis", nil, nil},
		{"CVE-2024-5777", "Rejected", nil, nil},
	} {
		c := byName[tc.name]
		if c == nil {
			t.Errorf("%s: not in the sample", tc.name)
			continue
		}
		if c.Status != tc.status {
			t.Errorf("%s: status %q, want %q", tc.name, c.Status, tc.status)
		}
		if diff := cmp.Diff(tc.kev, c.KEV); diff != "" {
			t.Errorf("%s: kev (-want +got):\n%s", tc.name, diff)
		}
		var got []metric
		for _, m := range c.Metrics {
			got = append(got, metric{m.Version, m.Source, m.Type, m.Vector, m.Severity})
		}
		if diff := cmp.Diff(tc.metrics, got); diff != "" {
			t.Errorf("%s: metrics (-want +got):\n%s", tc.name, diff)
		}
	}
	kev := 0
	for i := range cves {
		if cves[i].KEV != nil {
			kev++
		}
	}
	if kev != 8 {
		t.Errorf("%d CVEs with a KEV entry, want the sample's 8", kev)
	}
}

// TestPreviousFormatUpgrade: a snapshot of format version 3 is refused by
// Load and Validate with a message that says to rebuild, and a build
// with it as -previous keeps its reports and ids.
func TestPreviousFormatUpgrade(t *testing.T) {
	dir := t.TempDir()
	cwe, feedFile := smallInputs(t, dir)
	v3 := filepath.Join(dir, "v3")
	if _, err := Build(BuildOptions{CWECatalog: cwe, Feeds: []string{feedFile}, Out: v3, Time: buildTime}); err != nil {
		t.Fatal(err)
	}
	// Make it a version 3 snapshot: no details files, version 3.
	raw, err := os.ReadFile(filepath.Join(v3, ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	m["version"] = 3
	files := m["files"].(map[string]any)
	for _, key := range []string{keyDetails, keyStrings, keyNVD, keyNVDFacts, keyNVDStrings, keyNVDFrom, keyNVDLayout, keyCVEsLayout, keyCVE5From} {
		delete(files, key)
		os.Remove(filepath.Join(v3, dataFiles[key]))
	}
	raw, _ = json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(filepath.Join(v3, ManifestName), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	const want = "format version 3 is older than this vulnd's 11: rebuild the snapshot with this vulnd"
	if _, _, err := Load(v3); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Load of v3: %v, want %q", err, want)
	}
	if _, err := Validate(v3); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Validate of v3: %v, want %q", err, want)
	}
	changed := mustWrite(t, filepath.Join(dir, "feed2.json"), feed(record("CVE-2024-0001", "2024-02-01T00:00:00.000", "y")))
	next := filepath.Join(dir, "next")
	if _, err := Build(BuildOptions{CWECatalog: cwe, Feeds: []string{changed}, Out: next, Previous: v3, Time: buildTime.Add(24 * time.Hour)}); err != nil {
		t.Fatalf("build with a v3 -previous: %v", err)
	}
	ix, got, err := Load(next)
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != FormatVersion || got.Counts.Reports != 1 || ix.Counts().Reports != 1 {
		t.Errorf("after the upgrade: version %d, %d reports, want %d and 1", got.Version, got.Counts.Reports, FormatVersion)
	}
}

// TestFormat4StillServed: snapshots of format version 4 (details lines
// that end after the metrics) and 5 (after ssvc) load and validate, those
// of version 4 with "affected":[] and "ssvc":null, those of version 5
// with their entries but no vendor or product from them; one of version
// 6 serves what it holds.
func TestFormat4StillServed(t *testing.T) {
	d := smallData()
	vendor := "Example"
	d.CVEs[0].CPEs = nil
	d.CVEs[0].Affected = []index.AffectedEntry{{Source: "cna", Vendor: &vendor, Versions: []index.AffectedVersion{{Version: "1.0", Status: "affected"}}}}
	d.CVEs[0].SSVC = &index.SSVC{Automatable: &vendor}
	d.CVEs[0].EntryKeys = []index.EntryKey{{Vendor: "example", Product: "widget", Entries: []int{0}}}
	dir := filepath.Join(t.TempDir(), "snap")
	if _, err := Write(dir, d, buildTime, nil); err != nil {
		t.Fatal(err)
	}
	const v5 = `{"name":"CVE-2024-0001","status":"","kev":null,"metrics":[{"version":"3.1","source":"nvd@nist.gov","type":"Primary","vector":"","base_score":9.8,"base_severity":""}],` +
		`"affected":[{"source":"cna","vendor":"Example","product":null,"cpes":null,"default_status":null,"versions":[{"version":"1.0","status":"affected"}],"platforms":null}],` +
		`"ssvc":{"exploitation":null,"automatable":"Example","technical_impact":null,"timestamp":null},"epss":null}`
	ix, _, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := ix.AppendDetails(nil, "CVE-2024-0001"); string(got) != v5 {
		t.Errorf("version 6 details:\n%s\nwant\n%s", got, v5)
	}
	if l, err := ix.ProductCVEsAt("example", "widget", "1.0"); err != nil || l.Len() != 1 {
		t.Errorf("version 6: example/widget?version=1.0: %v, %v, want the CVE", l.Len(), err)
	}
	if _, err := Validate(dir); err != nil {
		t.Fatal(err)
	}

	// cut makes it version v: each details line without its last n numbers.
	cut := func(n, v int) {
		t.Helper()
		dec, err := decoder()
		if err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(filepath.Join(dir, fileDetails))
		if err != nil {
			t.Fatal(err)
		}
		text, err := dec.DecodeAll(raw, nil)
		if err != nil {
			t.Fatal(err)
		}
		line := strings.TrimSuffix(string(text), "\n")
		for range n {
			line = line[:strings.LastIndexByte(line, ' ')]
		}
		line += "\n"
		setChunks(t, dir, keyDetails, [][]byte{zstdFrame(t, []byte(line))}, []int64{int64(len(line))}, []int{1})
		withoutNVD(t, dir, v)
		raw, _ = os.ReadFile(filepath.Join(dir, ManifestName))
		// Without its entry keys, the CVE has no vendor or product.
		raw = bytes.Replace(bytes.Replace(raw, []byte(`"vendors": 1`), []byte(`"vendors": 0`), 1), []byte(`"products": 1`), []byte(`"products": 0`), 1)
		os.WriteFile(filepath.Join(dir, ManifestName), raw, 0o644)
	}
	cut(1, 5)
	ix, m, err := Load(dir)
	if err != nil {
		t.Fatalf("version 5 refused: %v", err)
	}
	if got, _ := ix.AppendDetails(nil, "CVE-2024-0001"); m.Version != 5 || string(got) != v5 {
		t.Errorf("version %d details:\n%s\nwant\n%s", m.Version, got, v5)
	}
	if _, err := ix.Vendor("example"); err == nil || ix.Status().EntryKeyed != 0 {
		t.Errorf("version 5: vendor example found (%v) or %d CVEs keyed by entries", err, ix.Status().EntryKeyed)
	}
	if _, err := Validate(dir); err != nil {
		t.Errorf("Validate of version 5: %v", err)
	}

	cut(2, 4)
	ix, m, err = Load(dir)
	if err != nil {
		t.Fatalf("version 4 refused: %v", err)
	}
	const v4 = `{"name":"CVE-2024-0001","status":"","kev":null,"metrics":[{"version":"3.1","source":"nvd@nist.gov","type":"Primary","vector":"","base_score":9.8,"base_severity":""}],"affected":[],"ssvc":null,"epss":null}`
	if got, _ := ix.AppendDetails(nil, "CVE-2024-0001"); m.Version != 4 || string(got) != v4 {
		t.Errorf("version %d details:\n%s\nwant\n%s", m.Version, got, v4)
	}
	if _, err := Validate(dir); err != nil {
		t.Errorf("Validate of version 4: %v", err)
	}
}

// withoutNVD makes the snapshot in dir one of format version (4 or 5):
// without the NVD records' files of version 6 on.
func withoutNVD(t *testing.T, dir string, version int) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	m["version"] = version
	files := m["files"].(map[string]any)
	for _, key := range []string{keyNVD, keyNVDFacts, keyNVDStrings, keyNVDFrom, keyNVDLayout, keyCVEsLayout, keyCVE5From} {
		delete(files, key)
		os.Remove(filepath.Join(dir, dataFiles[key]))
	}
	raw, _ = json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(filepath.Join(dir, ManifestName), raw, 0o644); err != nil {
		t.Fatal(err)
	}
}
