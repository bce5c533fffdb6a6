package loader

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/klauspost/compress/zip"

	"github.com/vulnd/vulnd/index"
)

// cve5Sample returns the path of a real sample of ../shared/data/cve5.
func cve5Sample(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join("..", "..", "shared", "data", "cve5", name)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("real test data missing: %v (the tests read CVE JSON 5 samples from ../shared/data beside the repository)", err)
	}
	return p
}

func readCVE5All(t *testing.T, path string) []*CVE5Record {
	t.Helper()
	var out []*CVE5Record
	if err := ReadCVE5(path, func(r *CVE5Record) error { out = append(out, r); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func sp(s string) *string { return &s }

// TestReadCVE5RealExamples reads the two real samples and checks the
// records of the decisions' examples, field by field as written by hand
// from the records (see ../shared/data/cve5/SOURCES.md for their origin).
func TestReadCVE5RealExamples(t *testing.T) {
	cvelist := readCVE5All(t, cve5Sample(t, "cvelistV5-sample.json.gz"))
	vulnrichment := readCVE5All(t, cve5Sample(t, "vulnrichment-sample.json.gz"))
	// SOURCES.md: 18 records from cvelistV5, 77 from vulnrichment.
	if len(cvelist) != 18 || len(vulnrichment) != 77 {
		t.Fatalf("read %d and %d records, want 18 and 77", len(cvelist), len(vulnrichment))
	}
	byID := map[string]*CVE5Record{}
	for _, r := range append(cvelist, vulnrichment...) {
		if r.State != "PUBLISHED" {
			t.Errorf("%s: state %q; the samples hold only PUBLISHED records", r.ID, r.State)
		}
		byID[r.ID] = r
	}

	// CVE-2024-47177 (vulnrichment): GitHub_M's record with CISA-ADP's
	// container.
	got := byID["CVE-2024-47177"]
	if got == nil {
		t.Fatal("CVE-2024-47177 not read")
	}
	if !strings.HasPrefix(got.Description, "CUPS is a standards-based, open-source printing system, and cups-filters") ||
		!strings.HasSuffix(got.Description, "this can lead to remote command execution.") {
		t.Errorf("CVE-2024-47177 description %q", got.Description)
	}
	refs := []string{
		"https://github.com/OpenPrinting/cups-filters/security/advisories/GHSA-p9rh-jxmq-gq47", "x_refsource_CONFIRM",
		"https://github.com/OpenPrinting/cups-browsed/security/advisories/GHSA-rj88-6mr5-rcw8", "x_refsource_MISC",
		"https://github.com/OpenPrinting/libcupsfilters/security/advisories/GHSA-w63j-6g73-wmg5", "x_refsource_MISC",
		"https://github.com/OpenPrinting/libppd/security/advisories/GHSA-7xfx-47qg-grp6", "x_refsource_MISC",
		"https://www.cups.org", "x_refsource_MISC",
		"https://www.evilsocket.net/2024/09/26/Attacking-UNIX-systems-via-CUPS-Part-I", "x_refsource_MISC",
	}
	want := &CVE5Record{
		ID:          "CVE-2024-47177",
		State:       "PUBLISHED",
		Published:   "2024-09-26 21:56:36Z", // datePublished 2024-09-26T21:56:36.661Z
		Updated:     "2024-09-27 14:43:31Z", // dateUpdated 2024-09-27T14:43:31.544Z
		Modified:    got.Modified,
		Assigner:    "GitHub_M",
		Description: got.Description,
		CWEs:        []string{"CWE-77"},
		Metrics: []index.Metric{{Version: "3.1", Source: "GitHub_M", Score: 9.1,
			Vector: "CVSS:3.1/AV:N/AC:H/PR:N/UI:N/S:C/C:H/I:H/A:H", Severity: "CRITICAL"}},
		CVSS: index.CVSS{Source: sp("GitHub_M"), Score: 9.1},
		Affected: []index.AffectedEntry{
			{Source: "cna", Vendor: sp("OpenPrinting"), Product: sp("cups-filters"),
				Versions: []index.AffectedVersion{{Version: "<= 2.0.1", Status: "affected"}}},
			{Source: "adp:CISA-ADP", Vendor: sp("openprinting"), Product: sp("cpdb-libs"),
				CPEs:          []string{"cpe:2.3:a:openprinting:cpdb-libs:*:*:*:*:*:*:*:*"},
				DefaultStatus: sp("unknown"),
				Versions:      []index.AffectedVersion{{Version: "0", Status: "affected", VersionType: "custom", LessThanOrEqual: sp("2.0.1")}}},
		},
		SSVC: &index.SSVC{Exploitation: sp("poc"), Automatable: sp("no"), TechnicalImpact: sp("total"), Timestamp: sp("2024-09-27T14:38:10.250746Z")},
	}
	for i := 0; i < len(refs); i += 2 {
		want.References = append(want.References, index.Reference{Link: refs[i], Source: "GitHub_M",
			Type: strings.ToUpper(refs[i+1]), Description: refs[i+1]})
	}
	if diff := cmp.Diff(want, got, ignoreLoc); diff != "" {
		t.Errorf("CVE-2024-47177 (-want +got):\n%s", diff)
	}
	if got.Modified.Format("2006-01-02T15:04:05.000Z") != "2024-09-27T14:43:31.544Z" {
		t.Errorf("CVE-2024-47177 modified %v", got.Modified)
	}
	// The decisions' example: openprinting/cups-filters?version=2.0.1
	// lists it, 2.0.2 does not; cpdb-libs 0 <= X <= 2.0.1.
	for _, c := range []struct {
		entry int
		x     string
		want  string
	}{{0, "2.0.1", "affected"}, {0, "2.0.2", "unknown"}, {1, "2.0.1", "affected"}, {1, "0.1", "affected"}, {1, "2.0.2", "unknown"}} {
		if s := got.Affected[c.entry].StatusAt(c.x); s != c.want {
			t.Errorf("CVE-2024-47177 entry %d: %s is %s, want %s", c.entry, c.x, s, c.want)
		}
	}

	// CVE-2023-5631 (cvelistV5): ESET's Roundcube record, no ADP.
	rc := byID["CVE-2023-5631"]
	if rc == nil {
		t.Fatal("CVE-2023-5631 not read")
	}
	if rc.Assigner != "ESET" || rc.Published != "2023-10-18 14:51:18Z" || rc.Updated != "2023-10-18 14:51:18Z" ||
		!cmp.Equal(rc.CWEs, []string{"CWE-79"}) || rc.CVSS.Score != 6.1 || *rc.CVSS.Source != "ESET" ||
		len(rc.References) != 11 || rc.SSVC != nil || len(rc.Affected) != 1 {
		t.Errorf("CVE-2023-5631: %+v", rc)
	}
	// References without tags: type UNKNOWN, description "".
	if r := rc.References[0]; r != (index.Reference{Link: "https://github.com/roundcube/roundcubemail/commit/6ee6e7ae301e165e2b2cb703edf75552e5376613", Source: "ESET", Type: "UNKNOWN"}) {
		t.Errorf("CVE-2023-5631 reference 0: %+v", r)
	}
	e := rc.Affected[0]
	if *e.Vendor != "Roundcube" || *e.Product != "Roundcubemail" || *e.DefaultStatus != "unaffected" || len(e.Versions) != 6 {
		t.Errorf("CVE-2023-5631 entry: %+v", e)
	}
	// 1.5.3 affected (second object), 1.5.10 affected (third), 1.6.4
	// unaffected (fourth), as the decisions say.
	for x, want := range map[string]string{"1.5.3": "affected", "1.5.10": "affected", "1.6.4": "unaffected"} {
		if s := e.StatusAt(x); s != want {
			t.Errorf("CVE-2023-5631: %s is %s, want %s", x, s, want)
		}
	}

	// CVE-2025-1094 (cvelistV5): PostgreSQL's record, vendor "n/a".
	pg := byID["CVE-2025-1094"]
	if pg == nil || len(pg.Affected) != 1 || *pg.Affected[0].Vendor != "n/a" || *pg.Affected[0].Product != "PostgreSQL" ||
		pg.Assigner != "PostgreSQL" || pg.CVSS.Score != 8.1 || !cmp.Equal(pg.CWEs, []string{"CWE-149"}) {
		t.Errorf("CVE-2025-1094: %+v", pg)
	}
	// 17.2 affected (17 <= X < 17.3), 17.3 unaffected (default), 13.18
	// affected (0 <= X < 13.19: 0 is no lower bound).
	for x, want := range map[string]string{"17.2": "affected", "17.3": "unaffected", "13.18": "affected", "13.19": "unaffected"} {
		if s := pg.Affected[0].StatusAt(x); s != want {
			t.Errorf("CVE-2025-1094: %s is %s, want %s", x, s, want)
		}
	}

	// CVE-2023-26464 (vulnrichment): the "CVE Program Container" ADP has
	// no affected; CISA-ADP's entry comes after the CNA's, with its
	// source; the CNA's second object is {2, maven, <= *, unaffected}.
	l4j := byID["CVE-2023-26464"]
	if l4j == nil || len(l4j.Affected) != 2 || l4j.Affected[0].Source != "cna" || l4j.Affected[1].Source != "adp:CISA-ADP" {
		t.Fatalf("CVE-2023-26464: %+v", l4j)
	}
	if s := l4j.Affected[0].StatusAt("2.17.1"); s != "unaffected" {
		t.Errorf("CVE-2023-26464: 2.17.1 is %s, want unaffected", s)
	}
	if s := l4j.Affected[0].StatusAt("1.2.17"); s != "affected" {
		t.Errorf("CVE-2023-26464: 1.2.17 is %s, want affected", s)
	}
}

// cve5JSON writes a minimal valid record of id, updated at dateUpdated,
// with the CNA's description desc.
func cve5JSON(id, dateUpdated, desc string) string {
	return fmt.Sprintf(`{"dataType":"CVE_RECORD","dataVersion":"5.1","cveMetadata":{"cveId":%q,"state":"PUBLISHED",`+
		`"assignerShortName":"test","datePublished":"2024-01-01T00:00:00.000Z","dateUpdated":%q},`+
		`"containers":{"cna":{"providerMetadata":{"shortName":"tcna"},"descriptions":[{"lang":"en","value":%q}],`+
		`"affected":[{"vendor":"V","product":"P","versions":[{"version":"1.0","status":"affected"}]}],"references":[]}}}`,
		id, dateUpdated, desc)
}

// cve5ZipFile is one file of a test archive.
type cve5ZipFile struct {
	name   string
	data   []byte
	stored bool
}

func cve5Zip(t *testing.T, files ...cve5ZipFile) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, f := range files {
		h := &zip.FileHeader{Name: f.name, Method: zip.Deflate}
		if f.stored {
			h.Method = zip.Store
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(f.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// ids lists the ids and descriptions of records read.
func readIDs(t *testing.T, path string) ([]string, error) {
	t.Helper()
	var out []string
	err := ReadCVE5(path, func(r *CVE5Record) error {
		out = append(out, r.ID+" "+r.Description)
		return nil
	})
	return out, err
}

// TestReadCVE5Forms reads every form of input the decisions name, written
// here: one record, an array, a .gz of each, a zip with records at any
// depth (beside files that are no records), a zip inside a zip (stored
// and deflated, as cvelistV5's midnight bundle holds cves.zip).
func TestReadCVE5Forms(t *testing.T) {
	a, b, c := cve5JSON("CVE-2024-0001", "2024-02-01T00:00:00Z", "a"), cve5JSON("CVE-2024-0002", "2024-02-01T00:00:00Z", "b"), cve5JSON("CVE-2024-0003", "2024-02-01T00:00:00Z", "c")
	array := "[\n" + a + ",\n" + b + "]\n"
	inner := cve5Zip(t,
		cve5ZipFile{name: "cves/", data: nil},
		cve5ZipFile{name: "cves/2024/0xxx/CVE-2024-0001.json", data: []byte(a)},
		cve5ZipFile{name: "cves/delta.json", data: []byte(`{"fetchTime":"2024-02-01T00:00:00Z","numberOfChanges":1,"new":[],"updated":[]}`)},
		cve5ZipFile{name: "cves/deltaLog.json", data: []byte(`[{"fetchTime":"x"}]`)},
		cve5ZipFile{name: "README.md", data: []byte("# not JSON\n")},
		cve5ZipFile{name: "cves/2024/0xxx/more/CVE-2024-0002.json.gz", data: inputGzip(t, []byte(b))},
		cve5ZipFile{name: "cves/2024/0xxx/pair.json", data: []byte("[" + c + "]")},
	)
	want := []string{"CVE-2024-0001 a", "CVE-2024-0002 b", "CVE-2024-0003 c"}
	for _, tt := range []struct {
		name string
		data []byte
		want []string
	}{
		{"record.json", []byte(a), want[:1]},
		{"record-with-space.json", []byte("\n  " + a + "\n\n"), want[:1]},
		{"array.json", []byte(array), want[:2]},
		{"empty-array.json", []byte("[]"), nil},
		{"array.json.gz", inputGzip(t, []byte(array)), want[:2]},
		{"record.json.gz", inputGzip(t, []byte(a)), want[:1]},
		{"array.json.zst", inputZstd(t, []byte(array)), want[:2]},
		{"bundle.zip", inner, want},
		{"midnight.zip.zip", cve5Zip(t, cve5ZipFile{name: "cves.zip", data: inner, stored: true}), want},
		{"deflated.zip.zip", cve5Zip(t, cve5ZipFile{name: "cves.zip", data: inner}), want},
		{"no-records.zip", cve5Zip(t, cve5ZipFile{name: "README.md", data: []byte("hi")}), nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := writeInputFile(t, tt.name, tt.data)
			got, err := readIDs(t, path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			fis, err := func() ([]FileInfo, error) { _, fi, err := ReadCVE5Files([]string{path}); return fi, err }()
			if err != nil {
				t.Fatal(err)
			}
			if fis[0].Size != int64(len(tt.data)) || fis[0].Name != tt.name || len(fis[0].SHA256) != 64 {
				t.Errorf("file info %+v, want %d bytes", fis[0], len(tt.data))
			}
		})
	}
	// No temporary file is left behind by the deflated nested zip.
	left, _ := filepath.Glob(filepath.Join(os.TempDir(), "vulnd-cve5-*"))
	if len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// TestReadCVE5Errors checks that bad input stops the reading with one line
// naming the file and the record.
func TestReadCVE5Errors(t *testing.T) {
	good := cve5JSON("CVE-2024-0001", "2024-02-01T00:00:00Z", "a")
	bad := func(from, to string) string { return strings.Replace(good, from, to, 1) }
	for _, tt := range []struct {
		name, data, want string
	}{
		{"empty.json", "", "loader: cve5 %s: empty: not a CVE JSON 5 record or array"},
		{"number.json", "42", `loader: cve5 %s: not a CVE JSON 5 record or array: starts with '4'`},
		{"truncated.json", good[:100], "loader: cve5 %s: record 1: "},
		{"not-record.json", `{"a":1}`, `loader: cve5 %s: record 1: dataType "", want CVE_RECORD`},
		{"no-id.json", bad(`"cveId":"CVE-2024-0001",`, ``), "loader: cve5 %s: record 1: no cveMetadata.cveId"},
		{"bad-id.json", bad(`CVE-2024-0001`, `CVE-24-1`), `loader: cve5 %s: record 1 (CVE-24-1): malformed cveId "CVE-24-1"`},
		{"state.json", bad(`PUBLISHED`, `RESERVED`), `loader: cve5 %s: record 1 (CVE-2024-0001): state "RESERVED", want PUBLISHED or REJECTED`},
		{"date.json", bad(`2024-02-01T00:00:00Z`, `yesterday`), "loader: cve5 %s: record 1 (CVE-2024-0001): dateUpdated: "},
		{"no-status.json", bad(`,"status":"affected"`, ``), "loader: cve5 %s: record 1 (CVE-2024-0001): cna affected 1: version 1: no status"},
		{"type.json", bad(`"versions":[`, `"versions":"x","v":[`), "loader: cve5 %s: record 1 (CVE-2024-0001): "},
		{"no-cna.json", bad(`"cna":`, `"other":`), "loader: cve5 %s: record 1 (CVE-2024-0001): no containers.cna"},
		{"cwe.json", bad(`"references":[]`, `"references":[],"problemTypes":[{"descriptions":[{"cweId":"79"}]}]`), `loader: cve5 %s: record 1 (CVE-2024-0001): problemTypes: cweId "79" is not a CWE name`},
		{"score.json", bad(`"references":[]`, `"references":[],"metrics":[{"cvssV3_1":{"baseScore":11}}]`), `loader: cve5 %s: record 1 (CVE-2024-0001): cna: cvss 3.1 metric from "tcna": baseScore 11 out of range`},
		{"third.json", "[" + good + "," + good + "," + bad(`PUBLISHED`, `X`) + "]", `loader: cve5 %s: record 3 (CVE-2024-0001): state "X", want PUBLISHED or REJECTED`},
		{"trailing.json", good + "{}", "loader: cve5 %s: more JSON after the records"},
		{"array-trailing.json", "[" + good + "] 1", "loader: cve5 %s: more JSON after the records"},
		{"array-open.json", "[" + good, "loader: cve5 %s: "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := writeInputFile(t, tt.name, []byte(tt.data))
			_, err := readIDs(t, path)
			if err == nil {
				t.Fatal("no error")
			}
			want := fmt.Sprintf(tt.want, path)
			if !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q, want one line starting %q", err, want)
			}
		})
	}
	// In a zip archive, the entry is named after the archive; a record
	// file must be valid even there.
	path := writeInputFile(t, "bundle.zip", cve5Zip(t,
		cve5ZipFile{name: "cves/a.json", data: []byte(good)},
		cve5ZipFile{name: "cves/b.json", data: []byte(bad(`PUBLISHED`, `X`))}))
	_, err := readIDs(t, path)
	want := fmt.Sprintf(`loader: cve5 %s:cves/b.json: record 1 (CVE-2024-0001): state "X", want PUBLISHED or REJECTED`, path)
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
	// A zip archive that is cut short.
	data := cve5Zip(t, cve5ZipFile{name: "a.json", data: []byte(good)})
	path = writeInputFile(t, "short.zip", data[:len(data)-10])
	if _, err := readIDs(t, path); err == nil || !strings.HasPrefix(err.Error(), "loader: open "+path+": ") {
		t.Errorf("error %v, want loader: open %s: ...", err, path)
	}
	// Nested too deep.
	deep := data
	for range maxCVE5ZipDepth + 1 {
		deep = cve5Zip(t, cve5ZipFile{name: "x.zip", data: deep, stored: true})
	}
	path = writeInputFile(t, "deep.zip", deep)
	if _, err := readIDs(t, path); err == nil || !strings.Contains(err.Error(), "nested deeper") {
		t.Errorf("error %v, want nested deeper", err)
	}
	// An emit error is passed on as it is.
	path = writeInputFile(t, "one.json", []byte(good))
	stop := fmt.Errorf("stop")
	if err := ReadCVE5(path, func(*CVE5Record) error { return stop }); err != stop {
		t.Errorf("error %v, want the emit error", err)
	}
}

// TestMergeCVE5 checks the decisions' rule for two records of one CVE: the
// later dateUpdated wins; on a tie, the file named later (or the record
// later in one file).
func TestMergeCVE5(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, recs ...string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("["+strings.Join(recs, ",")+"]"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	first := write("1.json",
		cve5JSON("CVE-2024-0001", "2024-03-01T00:00:00.500Z", "newer in the first file"),
		cve5JSON("CVE-2024-0002", "2024-03-01T00:00:00Z", "tie, first file"),
		cve5JSON("CVE-2024-0003", "2024-03-01T00:00:00Z", "tie, first of one file"),
		cve5JSON("CVE-2024-0003", "2024-03-01T00:00:00Z", "tie, second of one file"))
	second := write("2.json",
		cve5JSON("CVE-2024-0001", "2024-03-01T00:00:00.499Z", "older in the second file"),
		cve5JSON("CVE-2024-0002", "2024-03-01T00:00:00Z", "tie, second file"),
		cve5JSON("CVE-2024-0004", "2024-01-01T00:00:00Z", "only here"))
	recs, infos, err := ReadCVE5Files([]string{first, second})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		got = append(got, r.ID+": "+r.Description)
	}
	want := []string{
		"CVE-2024-0001: newer in the first file",
		"CVE-2024-0002: tie, second file",
		"CVE-2024-0003: tie, second of one file",
		"CVE-2024-0004: only here",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if len(infos) != 2 || infos[0].Name != "1.json" || infos[1].Name != "2.json" {
		t.Errorf("infos %+v", infos)
	}
}

// TestCVE5Fields checks the mapping rules of the decisions on a written
// record: a REJECTED record's summary, English picks, CWEs, the CVSS of
// the CNA else of the ADPs, fields the record lacks.
func TestCVE5Fields(t *testing.T) {
	rec := `{"dataType":"CVE_RECORD","cveMetadata":{"cveId":"CVE-2024-0009","state":"REJECTED","assignerShortName":"asg",` +
		`"datePublished":"2024-01-02T03:04:05"},"containers":{` +
		`"cna":{"descriptions":[{"lang":"fr","value":"fr"},{"lang":"en-US","value":"us"}],` +
		`"rejectedReasons":[{"lang":"de","value":"de"},{"lang":"en","value":"DO NOT USE"}],` +
		`"problemTypes":[{"descriptions":[{"cweId":"CWE-787"},{"description":"none"}]},{"descriptions":[{"cweId":"CWE-79"},{"cweId":"CWE-787"}]}],` +
		`"references":[{"url":"u","tags":["vendor-advisory","patch"]}],` +
		`"affected":[{"packageName":"pkg","versions":[{"version":"1","status":"affected","lessThan":"2","versionType":"git","changes":[{"at":"1.5","status":"unaffected"}]}],"platforms":["Linux"]}]},` +
		`"adp":[{"providerMetadata":{"shortName":"A1"},"metrics":[{"cvssV2_0":{"baseScore":5,"vectorString":"AV:N","accessVector":"NETWORK"}},{"other":{"type":"kev","content":{}}}]},` +
		`{"providerMetadata":{"shortName":"A2"},"metrics":[{"cvssV3_1":{"baseScore":7.5,"baseSeverity":"high"}},{"other":{"type":"ssvc","content":{"options":[{"Exploitation":"active"},{"Automatable":1}]}}}],` +
		`"affected":[{"vendor":"v","product":"p"}]}]}}`
	path := writeInputFile(t, "r.json", []byte(rec))
	recs := readCVE5All(t, path)
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	r := recs[0]
	want := &CVE5Record{
		ID: "CVE-2024-0009", State: "REJECTED", Published: "2024-01-02 03:04:05Z", Updated: "2024-01-02 03:04:05Z",
		Modified: r.Modified, Assigner: "asg", Description: "us", RejectedReason: "DO NOT USE",
		CWEs:       []string{"CWE-79", "CWE-787"},
		References: []index.Reference{{Link: "u", Source: "asg", Type: "VENDOR_ADVISORY", Description: "vendor-advisory, patch"}},
		Metrics: []index.Metric{{Version: "2.0", Source: "A1", Score: 5, Vector: "AV:N"},
			{Version: "3.1", Source: "A2", Score: 7.5, Severity: "HIGH"}},
		// No CNA metric: the ADPs' newest, 3.1; the v2 fields from A1's v2.
		CVSS: index.CVSS{Source: sp("A2"), Score: 7.5, AccessVector: sp("NETWORK")},
		Affected: []index.AffectedEntry{
			{Source: "cna", PackageName: sp("pkg"), Platforms: []string{"Linux"},
				Versions: []index.AffectedVersion{{Version: "1", Status: "affected", LessThan: sp("2"), VersionType: "git",
					Changes: []index.StatusChange{{At: "1.5", Status: "unaffected"}}}}},
			{Source: "adp:A2", Vendor: sp("v"), Product: sp("p")},
		},
		SSVC: &index.SSVC{Exploitation: sp("active")},
		KEV:  &index.KEV{}, // A1's kev metric, whose content has no dateAdded
	}
	if diff := cmp.Diff(want, r, ignoreLoc); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if r.Summary() != "DO NOT USE" {
		t.Errorf("summary %q", r.Summary())
	}
	c := r.CVE()
	if c.Name != "CVE-2024-0009" || c.Summary != "DO NOT USE" || c.CreatedAt != "2024-01-02 03:04:05Z" || c.CPEs == nil || len(c.CPEs) != 0 {
		t.Errorf("CVE() = %+v", c)
	}
}

// TestIsCVE5 checks recognition by content, whatever the name.
func TestIsCVE5(t *testing.T) {
	good := cve5JSON("CVE-2024-0001", "2024-02-01T00:00:00Z", "a")
	late := `{"containers":{"cna":{}},"dataType":"CVE_RECORD"}`
	for _, tt := range []struct {
		name string
		data []byte
		want bool
	}{
		{"a.txt", []byte(good), true},
		{"late", []byte(late), true},
		{"array", []byte("[" + good + "]"), true},
		{"gz", inputGzip(t, []byte(good)), true},
		{"zst", inputZstd(t, []byte("["+good+"]")), true},
		{"zip", cve5Zip(t, cve5ZipFile{name: "README", data: []byte("x")}, cve5ZipFile{name: "d/x.json", data: []byte(good)}), true},
		{"zipzip", cve5Zip(t, cve5ZipFile{name: "cves.zip", data: cve5Zip(t, cve5ZipFile{name: "d/x.json", data: []byte(good)})}), true},
		{"empty", nil, false},
		{"empty-array", []byte("[]"), false},
		{"other-type", []byte(`{"dataType":"CVE_RECORD_X"}`), false},
		{"nvd", []byte(`{"format":"NVD_CVE","vulnerabilities":[]}`), false},
		{"zip-readme", cve5Zip(t, cve5ZipFile{name: "README", data: []byte("x")}), false},
		{"bad-gz", []byte{0x1f, 0x8b, 1, 2}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := writeInputFile(t, tt.name, tt.data)
			got, err := IsCVE5(path)
			if err != nil || got != tt.want {
				t.Errorf("IsCVE5 = %v, %v; want %v", got, err, tt.want)
			}
			if isFeed, _ := IsFeed(path); isFeed && tt.want {
				t.Errorf("IsFeed says yes too")
			}
		})
	}
	for _, name := range []string{"cvelistV5-sample.json.gz", "vulnrichment-sample.json.gz"} {
		if ok, err := IsCVE5(cve5Sample(t, name)); !ok || err != nil {
			t.Errorf("IsCVE5(%s) = %v, %v", name, ok, err)
		}
	}
	nvd := filepath.Join("..", "..", "shared", "data", "nvd", "nvdcve-2.0-sample.json.gz")
	if ok, err := IsCVE5(nvd); ok || err != nil {
		t.Errorf("IsCVE5(NVD sample) = %v, %v", ok, err)
	}
	if _, err := IsCVE5(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("no error for a missing file")
	}
}

// ignoreLoc leaves out of a comparison of records where each was read in
// its file, which only a build reading records again needs.
var ignoreLoc = cmpopts.IgnoreUnexported(CVE5Record{})
