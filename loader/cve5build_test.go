package loader

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-json"
	"github.com/google/go-cmp/cmp"

	"github.com/vulnd/vulnd/index"
)

// TestBuildWithCVE5Records is issue 26 items 1 and 3 on the real data:
// the NVD sample with ../shared/data/cve5's records among the inputs,
// given in an order that mixes them. The records are found by content;
// the manifest lists every input in the order given with its size and
// SHA-256 (the sums of SOURCES.md); CVE-2024-6728, which NVD's sample
// does not hold, is served from its record, expectations typed from the
// record (vulnrichment-sample.json.gz); every CVE of NVD's sample keeps
// its body byte for byte.
func TestBuildWithCVE5Records(t *testing.T) {
	dir := t.TempDir()
	cwe := sharedPath(t, "cwe/cwec_v4.15.xml.zip")
	nvd := sharedPath(t, "nvd/nvdcve-2.0-sample.json.gz")
	cvelist := sharedPath(t, "cve5/cvelistV5-sample.json.gz")
	vulnrichment := sharedPath(t, "cve5/vulnrichment-sample.json.gz")

	alone := filepath.Join(dir, "alone")
	if _, err := Build(BuildOptions{CWECatalog: cwe, Feeds: []string{nvd}, Out: alone, Time: buildTime}); err != nil {
		t.Fatal(err)
	}
	with := filepath.Join(dir, "with")
	var stages []string
	m, err := Build(BuildOptions{CWECatalog: cwe, Feeds: []string{cvelist, nvd, vulnrichment}, Out: with, Time: buildTime,
		Stage: func(name string, _ time.Duration, detail string) { stages = append(stages, name+": "+detail) }})
	if err != nil {
		t.Fatal(err)
	}
	// 186 CVEs of NVD's sample, and the two of the records it lacks.
	if m.Counts.CVEs != 188 {
		t.Errorf("%d CVEs, want 188", m.Counts.CVEs)
	}
	if want := "read CVE JSON 5 records: 95 CVEs from 2 files, 2 of them not in the feeds"; !containsLine(stages, want) {
		t.Errorf("stages %q, want one %q", stages, want)
	}
	var got []string
	for _, in := range m.Inputs[1:] {
		got = append(got, in.Name+" "+in.SHA256)
	}
	want := []string{
		"cvelistV5-sample.json.gz cdfe356ba6bd9530d9bdac86467b59fc981e3f4a26a94fc782f4ce245a10148e",
		"nvdcve-2.0-sample.json.gz 3c5227c11e6238171273ed5dd364ad590a2afc1e2182e9568f1d15304deed9f4",
		"vulnrichment-sample.json.gz 694426b948d83fa56cfd829daed9f1298cc4a11f076cbe55947af24cdeeb6269",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("manifest inputs after the catalog (-want +got):\n%s", diff)
	}
	for i, p := range []string{cvelist, nvd, vulnrichment} {
		st, _ := os.Stat(p)
		if m.Inputs[i+1].Size != st.Size() {
			t.Errorf("input %s: size %d, want %d", p, m.Inputs[i+1].Size, st.Size())
		}
	}
	if _, err := Validate(with); err != nil {
		t.Fatal(err)
	}
	ixAlone, _, err := Load(alone)
	if err != nil {
		t.Fatal(err)
	}
	ixWith, _, err := Load(with)
	if err != nil {
		t.Fatal(err)
	}

	// NVD's CVEs keep their bodies.
	cves, err := ReadFeeds([]string{nvd})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cves {
		a, err1 := ixAlone.CVE(c.Name)
		w, err2 := ixWith.CVE(c.Name)
		if err1 != nil || err2 != nil || !bytes.Equal(a, w) {
			t.Errorf("%s: body changed by the records (%v, %v):\n%s\nnow\n%s", c.Name, err1, err2, a, w)
		}
	}

	// CVE-2024-6728, only in its record: summary the CNA's English
	// description; created_at/updated_at datePublished/dateUpdated; cwes
	// the CNA's cweId; cvss from the CNA's newest metric (v4.0 5.3 of
	// VulDB), the six v2 members null because the CNA's cvssV2_0 has only
	// a vector and a score; references the CNA's (not the CVE Program
	// container's), source the CNA's shortName, type the first tag in
	// upper snake case, description the tags; no CPEs.
	const body6728 = `{"name":"CVE-2024-6728",
	"summary":"A vulnerability was found in itsourcecode Tailoring Management System 1.0. It has been classified as critical. This affects an unknown part of the file typeedit.php. The manipulation of the argument id leads to sql injection. It is possible to initiate the attack remotely. The exploit has been disclosed to the public and may be used. The identifier VDB-271401 was assigned to this vulnerability.",
	"created_at":"2024-07-14 00:31:04Z","updated_at":"2024-08-01 21:41:04Z","cpes":[],"cwes":["CWE-89"],
	"cvss":{"access_complexity":null,"access_vector":null,"authentication":null,"availability_impact":null,"confidentiality_impact":null,"integrity_impact":null,"source":"VulDB","score":5.3},
	"references":[
		{"description":"vdb-entry, technical-description","link":"https://vuldb.com/?id.271401","source":"VulDB","type":"VDB_ENTRY"},
		{"description":"signature, permissions-required","link":"https://vuldb.com/?ctiid.271401","source":"VulDB","type":"SIGNATURE"},
		{"description":"third-party-advisory","link":"https://vuldb.com/?submit.372856","source":"VulDB","type":"THIRD_PARTY_ADVISORY"},
		{"description":"exploit, issue-tracking","link":"https://github.com/jeery0/cve/issues/1","source":"VulDB","type":"EXPLOIT"}]}`
	// Its details: no NVD status or KEV entry; the CNA's four metrics,
	// newest first, source VulDB, no type; the CNA's entry then
	// CISA-ADP's; CISA-ADP's SSVC decision.
	const details6728 = `{"name":"CVE-2024-6728","status":"","kev":null,"metrics":[
		{"version":"4.0","source":"VulDB","type":"","vector":"CVSS:4.0/AV:N/AC:L/AT:N/PR:L/UI:N/VC:L/VI:L/VA:L/SC:N/SI:N/SA:N","base_score":5.3,"base_severity":"MEDIUM"},
		{"version":"3.1","source":"VulDB","type":"","vector":"CVSS:3.1/AV:N/AC:L/PR:L/UI:N/S:U/C:L/I:L/A:L","base_score":6.3,"base_severity":"MEDIUM"},
		{"version":"3.0","source":"VulDB","type":"","vector":"CVSS:3.0/AV:N/AC:L/PR:L/UI:N/S:U/C:L/I:L/A:L","base_score":6.3,"base_severity":"MEDIUM"},
		{"version":"2.0","source":"VulDB","type":"","vector":"AV:N/AC:L/Au:S/C:P/I:P/A:P","base_score":6.5,"base_severity":""}],
	"affected":[
		{"source":"cna","vendor":"itsourcecode","product":"Tailoring Management System","cpes":null,"default_status":null,"versions":[{"version":"1.0","status":"affected"}],"platforms":null},
		{"source":"adp:CISA-ADP","vendor":"itsourcecode","product":"tailoring_management_system","cpes":["cpe:2.3:a:itsourcecode:tailoring_management_system:1.0:*:*:*:*:*:*:*"],"default_status":"unknown","versions":[{"version":"1.0","status":"affected"}],"platforms":null}],
	"ssvc":{"exploitation":"poc","automatable":"no","technical_impact":"partial","timestamp":"2024-07-15T13:48:25.616756Z"},
	"epss":null}`
	b, err := ixWith.CVE("CVE-2024-6728")
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "CVE-2024-6728", body6728, b)
	if b, err = ixWith.AppendDetails(nil, "CVE-2024-6728"); err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "CVE-2024-6728 details", details6728, b)
	if _, err := ixAlone.CVE("CVE-2024-6728"); err == nil {
		t.Error("CVE-2024-6728 served without its record")
	}

	// A CVE of NVD with a record: NVD's details, the record's entries.
	if b, err = ixWith.AppendDetails(nil, "CVE-2023-47488"); err != nil {
		t.Fatal(err)
	}
	var d struct {
		Status   string                `json:"status"`
		Metrics  []any                 `json:"metrics"`
		Affected []index.AffectedEntry `json:"affected"`
		SSVC     *index.SSVC           `json:"ssvc"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	if d.Status != "Awaiting Analysis" || len(d.Metrics) != 0 || len(d.Affected) == 0 || d.Affected[0].Source != "cna" {
		t.Errorf("CVE-2023-47488 details: %s", b)
	}
	// And without one: [] and null.
	if b, err = ixWith.AppendDetails(nil, "CVE-2021-44228"); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(b), `],"affected":[],"ssvc":null,"epss":null}`) {
		t.Errorf("CVE-2021-44228 details: %s", b)
	}
}

func containsLine(lines []string, want string) bool {
	for _, l := range lines {
		if l == want {
			return true
		}
	}
	return false
}

func sameJSON(t *testing.T, what, want string, got []byte) {
	t.Helper()
	var w, g any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: the expectation is not JSON: %v", what, err)
	}
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: not JSON: %v: %s", what, err, got)
	}
	if diff := cmp.Diff(w, g); diff != "" {
		t.Errorf("%s (-want +got):\n%s", what, diff)
	}
}

// TestBuildBadCVE5Record: a bad record among the inputs fails the build
// with one line naming the file, the record's position and its cveId,
// and leaves the snapshot at -o as it was.
func TestBuildBadCVE5Record(t *testing.T) {
	dir := t.TempDir()
	cwe, feedFile := smallInputs(t, dir)
	out := filepath.Join(dir, "snap")
	if _, err := Build(BuildOptions{CWECatalog: cwe, Feeds: []string{feedFile}, Out: out, Time: buildTime}); err != nil {
		t.Fatal(err)
	}
	before, err := os.ReadFile(filepath.Join(out, ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(cve5JSON("CVE-2024-0003", "2024-02-01T00:00:00Z", "b"), `"state":"PUBLISHED"`, `"state":"RESERVED"`, 1)
	records := mustWrite(t, filepath.Join(dir, "records.json"), "["+cve5JSON("CVE-2024-0002", "2024-02-01T00:00:00Z", "a")+",\n"+bad+"]")
	_, err = Build(BuildOptions{CWECatalog: cwe, Feeds: []string{feedFile, records}, Out: out, Time: buildTime.Add(time.Hour)})
	want := "loader: cve5 " + records + `: record 2 (CVE-2024-0003): state "RESERVED", want PUBLISHED or REJECTED`
	if err == nil || err.Error() != want {
		t.Fatalf("build: %v, want %q", err, want)
	}
	after, _ := os.ReadFile(filepath.Join(out, ManifestName))
	if !bytes.Equal(before, after) {
		t.Error("the snapshot at -o changed")
	}
}

// TestBuildFromCVE5Alone: records without any NVD feed make a snapshot;
// a record file is recognised in a zip of zips; a pipe is still read as
// an NVD feed (TestBuildFromPipe).
func TestBuildFromCVE5Alone(t *testing.T) {
	dir := t.TempDir()
	cwe, _ := smallInputs(t, dir)
	inner := cve5Zip(t, cve5ZipFile{name: "cves/2024/0xxx/CVE-2024-0002.json", data: []byte(cve5JSON("CVE-2024-0002", "2024-02-01T00:00:00Z", "a"))})
	bundle := filepath.Join(dir, "bundle.zip")
	if err := os.WriteFile(bundle, cve5Zip(t, cve5ZipFile{name: "cves.zip", data: inner}), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "snap")
	m, err := Build(BuildOptions{CWECatalog: cwe, Feeds: []string{bundle}, Out: out, Time: buildTime})
	if err != nil {
		t.Fatal(err)
	}
	if m.Counts.CVEs != 1 || len(m.Inputs) != 2 || m.Inputs[1].Name != "bundle.zip" {
		t.Errorf("counts %+v, inputs %+v", m.Counts, m.Inputs)
	}
	ix, _, err := Load(out)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ix.CVE("CVE-2024-0002")
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "CVE-2024-0002", `{"name":"CVE-2024-0002","summary":"a","created_at":"2024-01-01 00:00:00Z","updated_at":"2024-02-01 00:00:00Z","cpes":[],"cwes":[],
		"cvss":{"access_complexity":null,"access_vector":null,"authentication":null,"availability_impact":null,"confidentiality_impact":null,"integrity_impact":null,"source":null,"score":0},"references":[]}`, b)
}

// TestRefreshWhenNVDTakesOver: a CVE served from its record (updated_at
// its dateUpdated) whose NVD record arrives in the next build, with a
// lastModified older than that dateUpdated, is not "going back in time":
// the CVE Program's container updated every record on 2024-08-01, after
// NVD had received CVE-2024-6424 (lastModified 2024-07-01 16:37:39 in
// changes/after.json.gz) and CVE-2024-6728 (2024-07-14 01:15:01). The
// refresh with the same records and NVD's newer feed goes through, and
// NVD takes over their bodies.
func TestRefreshWhenNVDTakesOver(t *testing.T) {
	dir := t.TempDir()
	cwe := sharedPath(t, "cwe/cwec_v4.15.xml.zip")
	nvd := sharedPath(t, "nvd/nvdcve-2.0-sample.json.gz")
	after := sharedPath(t, "nvd/changes/after.json.gz")
	records := []string{sharedPath(t, "cve5/cvelistV5-sample.json.gz"), sharedPath(t, "cve5/vulnrichment-sample.json.gz")}
	first := filepath.Join(dir, "first")
	if _, err := Build(BuildOptions{CWECatalog: cwe, Feeds: append([]string{nvd}, records...), Out: first, Time: buildTime}); err != nil {
		t.Fatal(err)
	}
	next := filepath.Join(dir, "next")
	if _, err := Build(BuildOptions{CWECatalog: cwe, Feeds: append([]string{nvd, after}, records...), Out: next, Previous: first, Time: buildTime.Add(24 * time.Hour)}); err != nil {
		t.Fatalf("refresh refused: %v", err)
	}
	ix, _, err := Load(next)
	if err != nil {
		t.Fatal(err)
	}
	for name, updated := range map[string]string{"CVE-2024-6424": "2024-07-01 16:37:39Z", "CVE-2024-6728": "2024-07-14 01:15:01Z"} {
		b, err := ix.CVE(name)
		if err != nil || !strings.Contains(string(b), `"updated_at":"`+updated+`"`) {
			t.Errorf("%s: %v %s, want NVD's updated_at %s", name, err, b, updated)
		}
	}
	// An older record is still going back in time.
	old := mustWrite(t, filepath.Join(dir, "old.json"), cve5JSON("CVE-2024-6728", "2024-07-14T00:31:04.366Z", "older"))
	err = func() error {
		_, err := Build(BuildOptions{CWECatalog: cwe, Feeds: []string{nvd, records[0], old}, Out: filepath.Join(dir, "older"), Previous: first, Time: buildTime.Add(24 * time.Hour)})
		return err
	}()
	if want := "loader: refusing a refresh that goes back in time: CVE-2024-6728 was last modified 2024-08-01 21:41:04Z"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("an older record: %v, want %q...", err, want)
	}
}
