package loader

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vulnd/vulnd/index"
)

// TestManifestInputDates: a build writes how current each input source
// is, and Load gives it to the index. Dates read by hand from the real
// inputs: the CWE catalog 4.15's Date="2024-07-16"; the NVD sample's
// newest lastModified 2026-09-19T15:16:56.530; the newest dateUpdated of
// the cvelistV5 sample 2026-09-19T14:21:50.638Z, of the vulnrichment
// sample 2025-01-23T22:24:17.771Z.
func TestManifestInputDates(t *testing.T) {
	cwe := sharedPath(t, "cwe/cwec_v4.15.xml.zip")
	nvd := sharedPath(t, "nvd/nvdcve-2.0-sample.json.gz")
	cvelist := sharedPath(t, "cve5/cvelistV5-sample.json.gz")
	vulnrichment := sharedPath(t, "cve5/vulnrichment-sample.json.gz")
	sp := func(s string) *string { return &s }
	for _, tc := range []struct {
		name   string
		inputs []string
		want   InputDates
	}{
		{"NVD and records", []string{nvd, cvelist, vulnrichment},
			InputDates{NVD: sp("2026-09-19 15:16:56Z"), CVE5: sp("2026-09-19 14:21:50Z"), CWE: sp("2024-07-16 00:00:00Z")}},
		{"NVD alone", []string{nvd}, InputDates{NVD: sp("2026-09-19 15:16:56Z"), CWE: sp("2024-07-16 00:00:00Z")}},
		{"records alone", []string{vulnrichment}, InputDates{CVE5: sp("2025-01-23 22:24:17Z"), CWE: sp("2024-07-16 00:00:00Z")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "snap")
			m, err := Build(BuildOptions{CWECatalog: cwe, Feeds: tc.inputs, Out: out, Time: buildTime})
			if err != nil {
				t.Fatal(err)
			}
			if m.Version != FormatVersion || m.Newest == nil {
				t.Fatalf("manifest version %d, newest %v", m.Version, m.Newest)
			}
			if diff := cmp.Diff(tc.want, *m.Newest); diff != "" {
				t.Errorf("newest (-want +got):\n%s", diff)
			}
			// null, not left out, for a source the build did not read.
			var raw struct {
				Newest map[string]*string `json:"newest"`
			}
			readManifestJSON(t, out, &raw)
			if _, ok := raw.Newest["cve5"]; !ok || len(raw.Newest) != 3 {
				t.Errorf("manifest newest: %v", raw.Newest)
			}
			ix, _, err := Load(out)
			if err != nil {
				t.Fatal(err)
			}
			want := index.InputDates{NVD: deref(tc.want.NVD), CVE5: deref(tc.want.CVE5), CWE: deref(tc.want.CWE)}
			if got := ix.Meta().InputDates; got != want {
				t.Errorf("index input dates %+v, want %+v", got, want)
			}
		})
	}
}

// TestManifestInputDatesOld: a version 5 manifest has no dates (all ""),
// and loads; a date that is no timestamp is refused in one line.
func TestManifestInputDatesOld(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "snap")
	smallSnapshot(t, dir, out)
	detailsAsVersion5(t, out)
	withoutNVD(t, out, 5)
	var m map[string]any
	readManifestJSON(t, out, &m)
	newest := m["newest"].(map[string]any)
	delete(m, "newest")
	m["version"] = 5
	writeManifestJSON(t, out, m)
	ix, man, err := Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if man.Newest != nil || ix.Meta().InputDates != (index.InputDates{}) {
		t.Errorf("a version 5 snapshot: newest %v, index %+v", man.Newest, ix.Meta().InputDates)
	}
	newest["nvd"] = "yesterday"
	m["newest"], m["version"] = newest, 6
	writeManifestJSON(t, out, m)
	if _, _, err := Load(out); err == nil || !strings.HasSuffix(err.Error(), `manifest.json: newest.nvd "yesterday" is not a timestamp`) {
		t.Errorf("bad date: %v", err)
	}
}

func readManifestJSON(t *testing.T, dir string, v any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatal(err)
	}
}

func writeManifestJSON(t *testing.T, dir string, v any) {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ManifestName), raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

// detailsAsVersion5 rewrites the details of the snapshot in dir as
// version 5 wrote them: each line without its last number (the entry
// keys, which version 6 added).
func detailsAsVersion5(t *testing.T, dir string) {
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
	lines := strings.Split(strings.TrimSuffix(string(text), "\n"), "\n")
	for i, l := range lines {
		lines[i] = l[:strings.LastIndexByte(l, ' ')]
	}
	v5 := strings.Join(lines, "\n") + "\n"
	setChunks(t, dir, keyDetails, [][]byte{zstdFrame(t, []byte(v5))}, []int64{int64(len(v5))}, []int{len(lines)})
}
