package loader

import (
	"bytes"
	stdjson "encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vulnd/vulnd/index"
)

// rawRecords returns each "cve" object of an NVD feed document as its
// bytes in the document, by id, read with the standard library.
func rawRecords(t *testing.T, doc []byte) map[string]string {
	t.Helper()
	var f struct {
		Vulnerabilities []struct {
			CVE stdjson.RawMessage `json:"cve"`
		} `json:"vulnerabilities"`
	}
	if err := stdjson.Unmarshal(doc, &f); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, v := range f.Vulnerabilities {
		var id struct {
			ID string `json:"id"`
		}
		if err := stdjson.Unmarshal(v.CVE, &id); err != nil {
			t.Fatal(err)
		}
		out[id.ID] = string(v.CVE)
	}
	return out
}

// TestNVDRecordsKeptAsRead: the snapshot keeps the winning feed's record
// of each CVE byte for byte (whitespace, newlines and escapes as the
// feed wrote them), not the losing one, and serves it after a load.
func TestNVDRecordsKeptAsRead(t *testing.T) {
	dir := t.TempDir()
	cwe, _ := smallInputs(t, dir)
	winner := "{\n    \"id\" : \"CVE-2024-0001\",\n\t\"published\":\"2024-01-01T00:00:00.000\", \"lastModified\": \"2024-03-01T00:00:00.000\",\r\n" +
		"  \"descriptions\": [{\"lang\":\"en\",\"value\":\"caf\\u00e9 \\\"quoted\\\" \\n line\"}], \"metrics\": {}, \"references\": [] ,\"unknownField\":[1.50,2e3]\n}"
	a := mustWrite(t, filepath.Join(dir, "a.json"), feed(`{"cve":`+winner+`}`, record("CVE-2024-0002", "2024-01-01T00:00:00.000", "second")))
	b := mustWrite(t, filepath.Join(dir, "b.json"), feed(record("CVE-2024-0001", "2024-02-01T00:00:00.000", "older")))
	out := filepath.Join(dir, "snap")
	if _, err := Build(BuildOptions{CWECatalog: cwe, Feeds: []string{a, b}, Out: out, Time: buildTime}); err != nil {
		t.Fatal(err)
	}
	if _, err := Validate(out); err != nil {
		t.Fatal(err)
	}
	ix, m, err := Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if m.Version != FormatVersion || m.Files[keyNVD].Records != 2 || m.Files[keyNVDFacts].Records != 2 {
		t.Errorf("manifest: version %d, %d NVD records, %d facts; want %d, 2, 2", m.Version, m.Files[keyNVD].Records, m.Files[keyNVDFacts].Records, FormatVersion)
	}
	got, err := ix.NVD().AppendRaw(nil, "cve-2024-0001")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != winner {
		t.Errorf("record of CVE-2024-0001:\n%q\nwant the winning feed's bytes\n%q", got, winner)
	}
	got, _ = ix.NVD().AppendRaw(nil, "CVE-2024-0002")
	if want := strings.TrimSuffix(strings.TrimPrefix(record("CVE-2024-0002", "2024-01-01T00:00:00.000", "second"), `{"cve":`), "}"); string(got) != want {
		t.Errorf("record of CVE-2024-0002:\n%s\nwant\n%s", got, want)
	}
	if _, err := ix.NVD().AppendRaw(nil, "CVE-2024-0003"); err != index.ErrCVENotFound {
		t.Errorf("unknown CVE: %v, want ErrCVENotFound", err)
	}
}

// TestNVDRecordsOfTheSample: every record of NVD's real sample is kept
// byte for byte; the CVEs known only from CVE JSON 5 records have none.
func TestNVDRecordsOfTheSample(t *testing.T) {
	dir := t.TempDir()
	feedPath := sharedPath(t, "nvd/nvdcve-2.0-sample.json.gz")
	out := filepath.Join(dir, "snap")
	if _, err := Build(BuildOptions{CWECatalog: sharedPath(t, "cwe/cwec_v4.15.xml.zip"),
		Feeds: []string{feedPath, sharedPath(t, "cve5/cvelistV5-sample.json.gz"), sharedPath(t, "cve5/vulnrichment-sample.json.gz")}, Out: out, Time: buildTime}); err != nil {
		t.Fatal(err)
	}
	ix, m, err := Load(out)
	if err != nil {
		t.Fatal(err)
	}
	doc := realFeed(t)
	want := rawRecords(t, doc)
	if ix.NVD().Len() != len(want) || len(want) != 186 {
		t.Fatalf("%d NVD records, want the sample's %d (186)", ix.NVD().Len(), len(want))
	}
	if m.Counts.CVEs <= len(want) {
		t.Fatalf("%d CVEs: the JSON 5 sample adds none; the test needs one only it knows", m.Counts.CVEs)
	}
	for id, raw := range want {
		got, err := ix.NVD().AppendRaw(nil, id)
		if err != nil || string(got) != raw {
			t.Errorf("%s: %v, record differs from the feed's", id, err)
		}
	}
	if r := ix.SearchNVD(&index.NVDQuery{}); r.Len() != 186 {
		t.Errorf("the API lists %d records, want 186 (no JSON 5 only CVE)", r.Len())
	}
}

// TestFormat5HasNoNVDRecords: a snapshot of format 5 loads and validates,
// with no NVD records.
func TestFormat5HasNoNVDRecords(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "snap")
	smallSnapshot(t, filepath.Join(dir, "in"), out)
	detailsAsVersion5(t, out)
	withoutNVD(t, out, 5)
	ix, m, err := Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if m.Version != 5 || ix.NVD().Len() != 0 || ix.SearchNVD(&index.NVDQuery{}).Len() != 0 {
		t.Errorf("version %d, %d NVD records; want 5 and none", m.Version, ix.NVD().Len())
	}
	if _, err := Validate(out); err != nil {
		t.Error(err)
	}
}

// TestNVDFilesDamaged: a damaged NVD file is refused by Load and Validate
// with an error naming it; facts that name another record than the
// block holds are found by Validate.
func TestNVDFilesDamaged(t *testing.T) {
	dir := t.TempDir()
	cwe, _ := smallInputs(t, dir)
	f := mustWrite(t, filepath.Join(dir, "f.json"), feed(record("CVE-2024-0001", "2024-01-01T00:00:00.000", "one"), record("CVE-2024-0002", "2024-01-01T00:00:00.000", "two")))
	good := filepath.Join(dir, "good")
	if _, err := Build(BuildOptions{CWECatalog: cwe, Feeds: []string{f}, Out: good, Time: buildTime}); err != nil {
		t.Fatal(err)
	}
	copyDir := func(name string) string {
		dst := filepath.Join(dir, name)
		os.MkdirAll(dst, 0o755)
		entries, _ := os.ReadDir(good)
		for _, e := range entries {
			b, _ := os.ReadFile(filepath.Join(good, e.Name()))
			os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644)
		}
		return dst
	}
	flipped := copyDir("flipped")
	b, _ := os.ReadFile(filepath.Join(flipped, fileNVD))
	b[len(b)/2] ^= 0x01
	os.WriteFile(filepath.Join(flipped, fileNVD), b, 0o644)
	for name, check := range map[string]func(string) error{
		"Load":     func(d string) error { _, _, err := Load(d); return err },
		"Validate": func(d string) error { _, err := Validate(d); return err },
	} {
		if err := check(flipped); err == nil || !strings.Contains(err.Error(), fileNVD+": chunk 1: sha256") {
			t.Errorf("%s of a flipped byte in %s: %v", name, fileNVD, err)
		}
	}
	// The second record's facts name another CVE (still in order): the
	// block holds CVE-2024-0002.
	renamed := copyDir("renamed")
	dec, err := decoder()
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(renamed, fileNVDFacts))
	text, err := dec.DecodeAll(raw, nil)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(text), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d facts, want 2", len(lines))
	}
	other := strings.Replace(lines[1], "CVE-2024-0002", "CVE-2024-0003", 1)
	text2 := []byte(lines[0] + "\n" + other + "\n")
	setChunks(t, renamed, keyNVDFacts, [][]byte{zstdFrame(t, text2)}, []int64{int64(len(text2))}, []int{2})
	if _, err := Validate(renamed); err == nil || !strings.Contains(err.Error(), `record 2 is "CVE-2024-0002", its facts say CVE-2024-0003`) {
		t.Errorf("Validate of facts naming another CVE: %v", err)
	}
}

// TestNVDFormat6StillServed: the real sample written as format 6 (facts
// as JSON lines) and as format 7 (number lines over a text table) loads
// and validates to the very same NVD store, so every query and page
// answers the same; each has the facts file of its format.
func TestNVDFormat6StillServed(t *testing.T) {
	dir := t.TempDir()
	inputs := []string{sharedPath(t, "nvd/nvdcve-2.0-sample.json.gz"), sharedPath(t, "cve5/cvelistV5-sample.json.gz")}
	load := func(version int) (*index.Index, Manifest) {
		t.Helper()
		defer func(v int) { writeVersion = v }(writeVersion)
		writeVersion = version
		out := filepath.Join(dir, fmt.Sprint(version))
		if _, err := Build(BuildOptions{CWECatalog: sharedPath(t, "cwe/cwec_v4.15.xml.zip"), Feeds: inputs, Out: out, Time: buildTime}); err != nil {
			t.Fatal(err)
		}
		if _, err := Validate(out); err != nil {
			t.Fatalf("format %d: %v", version, err)
		}
		ix, m, err := Load(out)
		if err != nil {
			t.Fatalf("format %d: %v", version, err)
		}
		return ix, m
	}
	ix6, m6 := load(6)
	ix7, m7 := load(7)
	if m6.Version != 6 || m6.Files[keyNVDFacts].Name != "nvdfacts.jsonl.zst" || len(m6.Files) != 9 {
		t.Errorf("format 6: version %d, facts %q, %d files", m6.Version, m6.Files[keyNVDFacts].Name, len(m6.Files))
	}
	if m7.Version != 7 || m7.Files[keyNVDFacts].Name != "nvdfacts.txt.zst" || m7.Files[keyNVDStrings].Name != "nvdstrings.jsonl.zst" || len(m7.Files) != 10 {
		t.Errorf("format 7: version %d, facts %q, texts %q, %d files", m7.Version, m7.Files[keyNVDFacts].Name, m7.Files[keyNVDStrings].Name, len(m7.Files))
	}
	n6, n7 := ix6.NVD(), ix7.NVD()
	if n7.Len() != 186 || n6.Len() != n7.Len() || n6.Size() != n7.Size() || n7.InMemory() {
		t.Fatalf("format 7: %d records, %d bytes, in memory %v; format 6: %d records, %d bytes", n7.Len(), n7.Size(), n7.InMemory(), n6.Len(), n6.Size())
	}
	for i := range n7.Len() {
		r6, err6 := n6.AppendRaw(nil, n6.ID(i))
		r7, err7 := n7.AppendRaw(nil, n7.ID(i))
		if n6.ID(i) != n7.ID(i) || err6 != nil || err7 != nil || !bytes.Equal(r6, r7) {
			t.Fatalf("record %d: %s (%v), %s (%v)", i+1, n6.ID(i), err6, n7.ID(i), err7)
		}
	}
	at := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	for _, q := range []index.NVDQuery{{}, {NoRejected: true}, {CWE: "CWE-79"}, {Severity: [3]string{"", "CRITICAL", ""}}, {HasKEV: true}, {Source: "cve@mitre.org"}} {
		r6, r7 := ix6.SearchNVD(&q), ix7.SearchNVD(&q)
		p6, err6 := ix6.AppendNVDPage(nil, r6, 0, 2000, at)
		p7, err7 := ix7.AppendNVDPage(nil, r7, 0, 2000, at)
		if err6 != nil || err7 != nil || !bytes.Equal(p6, p7) || r7.Len() == 0 && q.Source == "" {
			t.Errorf("%+v: format 6 %d records, format 7 %d (%v, %v)", q, r6.Len(), r7.Len(), err6, err7)
		}
	}
}

// TestNVDReadFromTheFile: the loaded store reads the records from
// nvd.zst per request, through the file it holds open: removing the
// snapshot directory (as a newer one replaces it) changes nothing, while
// a file cut short in place makes a record an error, never a panic.
func TestNVDReadFromTheFile(t *testing.T) {
	dir := t.TempDir()
	cwe, _ := smallInputs(t, dir)
	f := mustWrite(t, filepath.Join(dir, "f.json"), feed(record("CVE-2024-0001", "2024-01-01T00:00:00.000", "one"), record("CVE-2024-0002", "2024-01-02T00:00:00.000", "two")))
	for _, damage := range []string{"removed", "cut"} {
		out := filepath.Join(dir, damage)
		if _, err := Build(BuildOptions{CWECatalog: cwe, Feeds: []string{f}, Out: out, Time: buildTime}); err != nil {
			t.Fatal(err)
		}
		ix, _, err := Load(out)
		if err != nil {
			t.Fatal(err)
		}
		if ix.NVD().InMemory() {
			t.Fatal("the loaded store holds the records in memory")
		}
		want, err := ix.NVD().AppendRaw(nil, "CVE-2024-0002")
		if err != nil || !strings.Contains(string(want), `"two"`) {
			t.Fatalf("before: %s, %v", want, err)
		}
		if damage == "removed" {
			if err := os.RemoveAll(out); err != nil {
				t.Fatal(err)
			}
			got, err := ix.NVD().AppendRaw(nil, "CVE-2024-0002")
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("after the directory is removed: %s, %v", got, err)
			}
			continue
		}
		if err := os.Truncate(filepath.Join(out, fileNVD), 3); err != nil {
			t.Fatal(err)
		}
		if _, err := ix.NVD().AppendRaw(nil, "CVE-2024-0002"); !errors.Is(err, index.ErrNVDBlock) {
			t.Errorf("a file cut short: %v, want ErrNVDBlock", err)
		}
	}
}
