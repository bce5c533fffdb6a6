package loader

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/vulnd/vulnd/index"
)

// TestCVE5KEVRecordOnly: a CVE served from its JSON 5 record alone gets
// the KEV entry CISA's ADP writes in it (metrics[].other of type "kev",
// content {dateAdded, reference}): details kev has date_added, and the
// three fields the record lacks are "", as for NVD's missing ones; kev
// filters list it. Built from ../shared/data/cve5's vulnrichment sample
// alone, so all its CVEs are record-only; the expectation for
// CVE-2023-47246 (SysAid) is written by hand from its record.
func TestCVE5KEVRecordOnly(t *testing.T) {
	dir := t.TempDir()
	cwe, _ := smallInputs(t, dir)
	out := filepath.Join(dir, "snap")
	if _, err := Build(BuildOptions{CWECatalog: cwe, Feeds: []string{sharedPath(t, "cve5/vulnrichment-sample.json.gz")}, Out: out, Time: buildTime}); err != nil {
		t.Fatal(err)
	}
	ix, _, err := Load(out)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ix.AppendDetails(nil, "CVE-2023-47246")
	if err != nil {
		t.Fatal(err)
	}
	sameJSON(t, "CVE-2023-47246 details", `{
		"name": "CVE-2023-47246",
		"status": "",
		"kev": {"date_added": "2023-11-13", "action_due": "", "required_action": "", "vulnerability_name": ""},
		"metrics": [
			{"version": "3.1", "source": "CISA-ADP", "type": "", "vector": "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H", "base_score": 9.8, "base_severity": "CRITICAL"}
		],
		"affected": [
			{"source": "cna", "vendor": "n/a", "product": "n/a", "cpes": null, "default_status": null,
			 "versions": [{"version": "n/a", "status": "affected"}], "platforms": null},
			{"source": "adp:CISA-ADP", "vendor": "sysaid", "product": "sysaid_on-premises", "cpes": ["cpe:2.3:a:sysaid:sysaid_on-premises:*:*:*:*:*:*:*:*"], "default_status": "unknown",
			 "versions": [{"version": "0", "status": "affected", "versionType": "custom", "lessThan": "23.3.36"}], "platforms": null}
		],
		"ssvc": {"exploitation": "active", "automatable": "yes", "technical_impact": "total", "timestamp": "2024-04-06T04:00:38.286026Z"},
		"epss": null
	}`, b)

	// kev=true lists the two records of the sample whose CISA-ADP
	// container has a kev metric; CISA's catalog has both, added on the
	// same dates.
	l, err := ix.SelectCVEs(index.CVEFilter{KEV: index.KEVOnly})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for i := 0; i < l.Len(); i++ {
		var c struct{ Name string }
		if err := json.Unmarshal(l.Bodies().Item(i), &c); err != nil {
			t.Fatal(err)
		}
		names = append(names, c.Name)
	}
	if want := []string{"CVE-2023-47246", "CVE-2024-1086"}; !slices.Equal(names, want) {
		t.Fatalf("kev=true lists %v, want %v", names, want)
	}
	raw, err := os.ReadFile(sharedPath(t, "kev/known_exploited_vulnerabilities.json"))
	if err != nil {
		t.Fatal(err)
	}
	var catalog struct {
		Vulnerabilities []struct {
			CVE       string `json:"cveID"`
			DateAdded string `json:"dateAdded"`
		} `json:"vulnerabilities"`
	}
	if err := json.Unmarshal(raw, &catalog); err != nil {
		t.Fatal(err)
	}
	added := map[string]string{}
	for _, v := range catalog.Vulnerabilities {
		added[v.CVE] = v.DateAdded
	}
	for _, name := range names {
		b, err := ix.AppendDetails(nil, name)
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			KEV struct {
				DateAdded string `json:"date_added"`
			} `json:"kev"`
		}
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatal(err)
		}
		if d.KEV.DateAdded == "" || d.KEV.DateAdded != added[name] {
			t.Errorf("%s: date_added %q, CISA's catalog %q", name, d.KEV.DateAdded, added[name])
		}
	}
	if n, err := ix.SelectCVEs(index.CVEFilter{KEV: index.KEVNone}); err != nil || n.Len() != 75 {
		t.Errorf("kev=false lists %d CVEs (%v), want the other 75", n.Len(), err)
	}
}

// TestCVE5KEVContent: what a kev metric holds, as the decisions take it.
// The content is free-form in the schema: a kev metric always makes an
// entry, and a dateAdded that is not a date (or is missing) is "".
func TestCVE5KEVContent(t *testing.T) {
	for _, tc := range []struct {
		metrics string
		want    *index.KEV
	}{
		{`[]`, nil},
		{`[{"other":{"type":"ssvc","content":{}}}]`, nil},
		{`[{"other":{"type":"kev","content":{"dateAdded":"2024-05-30","reference":"https://www.cisa.gov/"}}}]`, &index.KEV{DateAdded: "2024-05-30"}},
		{`[{"other":{"type":"KEV","content":{"dateAdded":"2024-05-30T00:00:00Z"}}}]`, &index.KEV{DateAdded: "2024-05-30"}},
		{`[{"other":{"type":"kev","content":{"dateAdded":"soon"}}}]`, &index.KEV{}},
		{`[{"other":{"type":"kev","content":"x"}}]`, &index.KEV{}},
		{`[{"other":{"type":"kev"}}]`, &index.KEV{}},
		{`[{"other":{"type":"kev","content":{"dateAdded":"2024-01-02"}}},{"other":{"type":"kev","content":{"dateAdded":"2025-01-02"}}}]`, &index.KEV{DateAdded: "2024-01-02"}},
	} {
		var ms []cve5Metric
		if err := json.Unmarshal([]byte(tc.metrics), &ms); err != nil {
			t.Fatal(err)
		}
		got := cve5KEV(ms)
		if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
			t.Errorf("%s: %+v, want %+v", tc.metrics, got, tc.want)
		}
	}
}
