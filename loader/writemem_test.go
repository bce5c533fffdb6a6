package loader

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vulnd/vulnd/index"
)

// TestWriteDetailsOnceAllocs: writing a snapshot builds the details (the
// JSON of every CVE's affected entries among them) once, for the file
// and for the index's check. 1000 CVEs whose entries' JSON is 8 KB each
// make the write allocate 6.6 times these 8 MB more than the same CVEs
// without entries (the JSON is encoded, copied into the details' table,
// quoted and compressed for the file); built twice, the details made it
// 8.8 times. The bound is 7.5.
func TestWriteDetailsOnceAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	const n = 1000
	d := &index.Data{}
	json := 0
	for i := range n {
		c := index.CVE{Name: fmt.Sprintf("CVE-2024-%05d", i+1), CreatedAt: "2024-01-01 00:00:00Z", UpdatedAt: "2024-01-02 00:00:00Z",
			CPEs: []index.CPE{}, CWEs: []string{}, References: []index.Reference{}}
		for j := range 40 {
			v := fmt.Sprintf("%d.%d.%d", i, j, i*j)
			c.Affected = append(c.Affected, index.AffectedEntry{Source: "cna", Vendor: &v, Product: &v,
				Versions: []index.AffectedVersion{{Version: v, Status: "affected", VersionType: "semver", LessThan: &v}}})
		}
		b, err := marshal(c.Affected)
		if err != nil {
			t.Fatal(err)
		}
		json += len(b)
		d.CVEs = append(d.CVEs, c)
	}
	alloc := writeAllocs(t, d)
	for i := range d.CVEs {
		d.CVEs[i].Affected = nil
	}
	alloc -= writeAllocs(t, d)
	t.Logf("the entries' JSON: %.1f MB; the write allocated %.1f MB more with them", float64(json)/(1<<20), float64(alloc)/(1<<20))
	if alloc > 15*uint64(json)/2 {
		t.Errorf("the write allocated %d bytes for %d bytes of the entries' JSON: the details are built more than once", alloc, json)
	}
}

// writeAllocs is how many bytes Write allocates to write d.
func writeAllocs(t *testing.T, d *index.Data) uint64 {
	dir := filepath.Join(t.TempDir(), "snap")
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := Write(dir, d, buildTime, nil); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestWriteSpendsDetailsFields: a build's write lets go of its CVEs'
// affected entries, SSVC decisions, entry keys and KEV entries once the
// details hold them (before the bodies and the index, the write's peak),
// and writes the same files as a write that keeps them.
func TestWriteSpendsDetailsFields(t *testing.T) {
	snap := func(spend bool) (map[string][]byte, []index.CVE) {
		cves, err := ReadFeeds([]string{sharedPath(t, "nvd/nvdcve-2.0-sample.json.gz")})
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(cves, func(a, b index.CVE) int { return strings.Compare(a.Name, b.Name) })
		recs, _, err := ReadCVE5Files([]string{sharedPath(t, "cve5/cvelistV5-sample.json.gz"), sharedPath(t, "cve5/vulnrichment-sample.json.gz")})
		if err != nil {
			t.Fatal(err)
		}
		aliases, err := DefaultAliases()
		if err != nil {
			t.Fatal(err)
		}
		cves, _ = mergeCVE5(cves, recs)
		setEntryKeys(cves, nil, aliases)
		d := &index.Data{CVEs: cves}
		dir := filepath.Join(t.TempDir(), "snap")
		if _, err := write(dir, d, tablesFromData(d), buildTime, nil, nil, "", false, nil, "", nil, nil, nil, nil, spend, recordsOut{}); err != nil {
			t.Fatal(err)
		}
		files := map[string][]byte{}
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if files[e.Name()], err = os.ReadFile(filepath.Join(dir, e.Name())); err != nil {
				t.Fatal(err)
			}
		}
		return files, cves // d.CVEs is let go when the write spends them
	}
	kept, keptCVEs := snap(false)
	spent, spentCVEs := snap(true)
	for name, b := range kept {
		if !bytes.Equal(spent[name], b) {
			t.Errorf("%s differs when the write spends the CVEs' details fields", name)
		}
	}
	var n [3]int
	for i := range keptCVEs {
		c := keptCVEs[i]
		n[0], n[1], n[2] = n[0]+min(len(c.Affected), 1), n[1]+min(len(c.EntryKeys), 1), n[2]+len(c.Metrics)
		if c := spentCVEs[i]; c.Affected != nil || c.SSVC != nil || c.EntryKeys != nil || c.KEV != nil {
			t.Errorf("%s: details fields kept", c.Name)
		}
	}
	if n[0] == 0 || n[1] == 0 || n[2] == 0 || len(kept) < 8 {
		t.Fatalf("%v CVEs with entries, with entry keys, metrics; %d files: the test tests nothing", n, len(kept))
	}
}

// TestBuildReturnsRecordGarbage: once a build has read the JSON 5
// records, what decoding them left is collected and returned to the OS
// (a forced collection by the end of that stage), so the write does not
// grow beside it.
func TestBuildReturnsRecordGarbage(t *testing.T) {
	forced := func() uint64 {
		s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	var before, after uint64
	_, err := Build(BuildOptions{
		CWECatalog: sharedPath(t, "cwe/cwec_v4.15.xml.zip"),
		Feeds:      []string{sharedPath(t, "nvd/nvdcve-2.0-sample.json.gz"), sharedPath(t, "cve5/cvelistV5-sample.json.gz")},
		Out:        filepath.Join(t.TempDir(), "snap"), Time: buildTime,
		Stage: func(name string, _ time.Duration, _ string) {
			switch name {
			case "pack NVD records":
				before = forced()
			case "read CVE JSON 5 records":
				after = forced()
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if after <= before {
		t.Errorf("no forced collection while the records were read (%d, then %d)", before, after)
	}
}
