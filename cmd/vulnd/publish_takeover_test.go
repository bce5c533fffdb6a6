package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPublishWhenNVDTakesOver is the publish side of the build's
// TestRefreshWhenNVDTakesOver: the snapshot a tag names serves
// CVE-2024-6424 and CVE-2024-6728 from their JSON 5 records (updated_at
// their dateUpdated, 2024-08-01), and the next one from NVD, whose
// lastModified (2024-07-01, 2024-07-14) is older. vulnd build -previous
// lets that through; vulnd publish must too, while an older record of a
// CVE still served from its record is still refused.
func TestPublishWhenNVDTakesOver(t *testing.T) {
	reg := startRegistry(t)
	cwe := sharedData(t, "cwe/cwec_v4.15.xml.zip")
	nvd := sharedData(t, "nvd/nvdcve-2.0-sample.json.gz")
	after := sharedData(t, "nvd/changes/after.json.gz")
	records := []string{sharedData(t, "cve5/cvelistV5-sample.json.gz"), sharedData(t, "cve5/vulnrichment-sample.json.gz")}
	dir := t.TempDir()
	first, next, older := filepath.Join(dir, "first"), filepath.Join(dir, "next"), filepath.Join(dir, "older")
	if _, e, code := vulndRun(append([]string{"build", "-cwe", cwe, "-o", first, "-time", "2026-11-22T06:00:00Z", nvd}, records...)...); code != 0 {
		t.Fatalf("build first: %s", e)
	}
	if _, e, code := vulndRun(append([]string{"build", "-cwe", cwe, "-o", next, "-previous", first, "-time", "2026-11-23T06:00:00Z", nvd, after}, records...)...); code != 0 {
		t.Fatalf("build next (the build guard lets NVD take over): %s", e)
	}
	old := filepath.Join(dir, "old.json")
	if err := os.WriteFile(old, []byte(`{"dataType":"CVE_RECORD","dataVersion":"5.1","cveMetadata":{"cveId":"CVE-2024-6728","state":"PUBLISHED",`+
		`"assignerShortName":"VulDB","datePublished":"2024-07-14T00:31:04.366Z","dateUpdated":"2024-07-14T00:31:04.366Z"},`+
		`"containers":{"cna":{"providerMetadata":{"shortName":"VulDB"},"descriptions":[{"lang":"en","value":"older"}],"references":[]}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, e, code := vulndRun("build", "-force", "-cwe", cwe, "-o", older, "-time", "2026-11-23T06:00:00Z", nvd, records[0], old); code != 0 {
		t.Fatalf("build older: %s", e)
	}
	base := "oci://" + reg.addr + "/vulnd/snapshots"
	publish(t, base+":day1", first)
	o, e, code := vulndRun("publish", "-plain-http", "-to", base+":day2-older", older)
	if want := "vulnd publish: refusing a refresh that goes back in time: CVE-2024-6728 was last modified 2024-08-01 21:41:04Z"; code != 1 || !strings.HasPrefix(e, want) {
		t.Errorf("an older record: exit %d, %s%s, want exit 1 and %q...", code, o, e, want)
	}
	publish(t, base+":day2", next)
}
