package index

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/goccy/go-json"
)

// storedTexts is a text table as a snapshot stores it: one JSON string a
// line, split into pieces of at most per lines.
func storedTexts(t testing.TB, strs []string, per int) [][]byte {
	t.Helper()
	var pieces [][]byte
	for i := 0; i < len(strs); i += per {
		var b []byte
		for _, s := range strs[i:min(i+per, len(strs))] {
			line, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			b = append(append(b, line...), '\n')
		}
		pieces = append(pieces, b)
	}
	return pieces
}

// loadTexts reads stored pieces of a text table (see storedTexts) with a
// TextsLoader, pieces last first, and the CVEs' lines as one piece.
func loadTexts(t testing.TB, strs []string, per int, lines [][]byte) (*Details, error) {
	t.Helper()
	pieces := storedTexts(t, strs, per)
	tl, err := NewTextsLoader(len(strs), len(pieces))
	if err != nil {
		return nil, err
	}
	for p := len(pieces) - 1; p >= 0; p-- {
		if err := tl.ParsePiece(p, p*per, pieces[p]); err != nil {
			return nil, err
		}
	}
	l, err := tl.DetailsLoader(len(lines), 1)
	if err != nil {
		return nil, err
	}
	var data []byte
	for _, line := range lines {
		data = append(append(data, line...), '\n')
	}
	if err := l.ParsePiece(0, 0, data); err != nil {
		return nil, err
	}
	return l.Details()
}

// manyEntryCVEs are n CVEs with affected entries (each its own, so that
// their texts do not intern to one) and, one in three, an SSVC decision.
func manyEntryCVEs(n int) []CVE {
	cves := make([]CVE, n)
	for i := range cves {
		v := fmt.Sprintf("vendor%d", i%50)
		cves[i] = CVE{Name: fmt.Sprintf("CVE-2024-%05d", i+1), CreatedAt: "2024-01-01 00:00:00Z", UpdatedAt: "2024-01-02 00:00:00Z",
			Status: "Received", Affected: []AffectedEntry{
				{Source: "cna", Vendor: sp(v), Product: sp(fmt.Sprintf("product %d \"quoted\" <&>", i)), DefaultStatus: sp("unaffected"),
					Versions: []AffectedVersion{{Version: fmt.Sprintf("%d.0", i), Status: "affected", VersionType: "semver", LessThan: sp(fmt.Sprintf("%d.4.%d", i, i%7))}}},
				{Source: "adp:CISA-ADP", CPEs: []string{fmt.Sprintf("cpe:2.3:a:%s:widget_%d:*:*:*:*:*:*:*:*", v, i)}, Versions: []AffectedVersion{{Version: "0", Status: "affected", LessThanOrEqual: sp("1.1")}}},
			}}
		if i%3 == 0 {
			cves[i].SSVC = &SSVC{Exploitation: sp("none"), Automatable: sp("no"), Timestamp: sp(fmt.Sprintf("2024-01-%02dT00:00:00.000Z", i%28+1))}
		}
	}
	return cves
}

// TestDetailsLoadedKeepsJSONCompressed: a Details loaded from its stored
// form keeps the JSON texts (entries, SSVC) compressed, not as strings,
// in far fewer bytes than the texts, and serves exactly what the built
// one serves: details bodies, entries, the stored form, Check.
func TestDetailsLoadedKeepsJSONCompressed(t *testing.T) {
	cves := manyEntryCVEs(3000)
	b := NewDetailsBuilder()
	for i := range cves {
		if err := b.Add(&cves[i]); err != nil {
			t.Fatal(err)
		}
	}
	built := b.Details()
	strs := built.Strings()
	var lines [][]byte
	jsonBytes := 0
	for i := range built.Len() {
		lines = append(lines, built.AppendLine(nil, i))
	}
	for _, s := range strs {
		if strings.HasPrefix(s, "[") || strings.HasPrefix(s, "{") {
			jsonBytes += len(s)
		}
	}
	d, err := loadTexts(t, strs, 700, lines)
	if err != nil {
		t.Fatal(err)
	}
	held, compressed := 0, 0
	for _, s := range d.strs {
		held += len(s)
	}
	if d.far != nil {
		for _, pc := range d.far.pieces {
			for _, b := range pc.blocks {
				compressed += len(b)
			}
		}
	}
	if held > jsonBytes/10 || compressed == 0 || compressed > jsonBytes/3 {
		t.Errorf("loaded: %d bytes of strings and %d compressed, for %d bytes of JSON texts", held, compressed, jsonBytes)
	}
	if got := d.Strings(); strings.Join(got, "\x00") != strings.Join(strs, "\x00") {
		t.Error("Strings of the loaded Details is not the stored table")
	}
	if err := d.Check(); err != nil {
		t.Error(err)
	}
	for i := range d.Len() {
		if got, want := d.AppendLine(nil, i), lines[i]; !bytes.Equal(got, want) {
			t.Fatalf("CVE %d: line %q, want %q", i+1, got, want)
		}
		got, err := d.Affected(i)
		want, _ := built.Affected(i)
		if err != nil || fmt.Sprint(encode(got)) != fmt.Sprint(encode(want)) {
			t.Fatalf("CVE %d: entries %s (%v), want %s", i+1, encode(got), err, encode(want))
		}
	}
	// Served: the same bodies from an index on either.
	entries := make([]CVEEntry, len(cves))
	for i := range cves {
		if entries[i], err = ScanCVE(EncodeCVE(&cves[i])); err != nil {
			t.Fatal(err)
		}
	}
	ixBuilt, err := BuildEntries(nil, entries, built, nil, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	ixLoaded, err := BuildEntries(nil, entries, d, nil, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cves {
		want, err1 := ixBuilt.AppendDetails(nil, c.Name)
		got, err2 := ixLoaded.AppendDetails(nil, c.Name)
		if err1 != nil || err2 != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: %s (%v), want %s (%v)", c.Name, got, err2, want, err1)
		}
	}
}

// TestTextsLoaderPlainUse: a JSON-shaped text that a line names where a
// plain text is read (a status, a KEV text, a metric's vector) is served
// as that text, although the table keeps it compressed; entries named by
// a text that is not a JSON array are refused, as before.
func TestTextsLoaderPlainUse(t *testing.T) {
	strs := []string{"", `{"looks":"like JSON"}`, `[{"source":"cna","vendor":null,"product":null,"cpes":null,"default_status":null,"versions":null,"platforms":null}]`, "src"}
	// status 1, a KEV whose four texts are 1 and 2, a metric whose vector is 2.
	d, err := loadTexts(t, strs, 2, [][]byte{[]byte("1 1 1 2 0 0 1 1 3 3 2 3 70 2 1 0")})
	if err != nil {
		t.Fatal(err)
	}
	if d.far == nil || !d.far.isFar(1) || !d.far.isFar(2) {
		t.Fatal("the JSON texts are not kept compressed")
	}
	ix, err := BuildEntries(nil, []CVEEntry{mustScan(t, &CVE{Name: "CVE-2024-0001", CreatedAt: "2024-01-01 00:00:00Z", UpdatedAt: "2024-01-01 00:00:00Z"})}, d, nil, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := ix.AppendDetails(nil, "CVE-2024-0001")
	want := `{"name":"CVE-2024-0001","status":"{\"looks\":\"like JSON\"}","kev":{"date_added":"{\"looks\":\"like JSON\"}","action_due":` +
		`"[{\"source\":\"cna\",\"vendor\":null,\"product\":null,\"cpes\":null,\"default_status\":null,\"versions\":null,\"platforms\":null}]",` +
		`"required_action":"","vulnerability_name":""},"metrics":[{"version":"3.1","source":"src","type":"src","vector":` +
		`"[{\"source\":\"cna\",\"vendor\":null,\"product\":null,\"cpes\":null,\"default_status\":null,\"versions\":null,\"platforms\":null}]",` +
		`"base_score":7,"base_severity":"src"}],"affected":[{"source":"cna","vendor":null,"product":null,"cpes":null,"default_status":null,"versions":null,"platforms":null}],` +
		`"ssvc":{"looks":"like JSON"},"epss":null}`
	if string(got) != want {
		t.Errorf("details\n got %s\nwant %s", got, want)
	}
	if _, err := loadTexts(t, strs, 2, [][]byte{[]byte("0 0 0 1 0 0")}); err == nil {
		t.Error("entries of a JSON object accepted")
	}
	if _, err := loadTexts(t, strs, 2, [][]byte{[]byte("0 0 0 0 2 0")}); err == nil {
		t.Error("an SSVC decision of a JSON array accepted")
	}
	if _, err := loadTexts(t, []string{"[1]", "a"}, 1, [][]byte{[]byte("0 0 0 0 0 0")}); err == nil {
		t.Error("a table not starting with \"\" accepted")
	}
}

func mustScan(t *testing.T, c *CVE) CVEEntry {
	t.Helper()
	e, err := ScanCVE(EncodeCVE(c))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestTextsLoaderPieces: pieces are parsed in any order, each once, and
// must cover the table; a line that is no JSON string is an error naming
// it.
func TestTextsLoaderPieces(t *testing.T) {
	tl, _ := NewTextsLoader(3, 2)
	if err := tl.ParsePiece(1, 2, []byte("\"[1]\"\n")); err != nil {
		t.Fatal(err)
	}
	if err := tl.ParsePiece(1, 2, []byte("\"[1]\"\n")); err == nil {
		t.Error("a piece parsed twice")
	}
	if _, err := tl.DetailsLoader(0, 0); err == nil {
		t.Error("a table with a piece not parsed")
	}
	if err := tl.ParsePiece(0, 0, []byte("\"\"\n\"a\\tb\"\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := tl.DetailsLoader(0, 0); err != nil {
		t.Error(err)
	}
	tl, _ = NewTextsLoader(2, 1)
	if err := tl.ParsePiece(0, 0, []byte("\"\"\n\"a\"\n\"b\"\n")); err == nil {
		t.Error("more lines than texts accepted")
	}
	tl, _ = NewTextsLoader(2, 1)
	if err := tl.ParsePiece(0, 0, []byte("\"\"\n\"\\x\"\n")); err == nil || !strings.Contains(err.Error(), "record 2") {
		t.Errorf("a bad escape: %v, want an error naming record 2", err)
	}
	tl, _ = NewTextsLoader(3, 2)
	tl.ParsePiece(0, 0, []byte("\"\"\n"))
	tl.ParsePiece(1, 2, []byte("\"a\"\n"))
	if _, err := tl.DetailsLoader(0, 0); err == nil {
		t.Error("a table with a gap accepted")
	}
}

// FuzzAppendUnescaped: what appendUnescaped reads of a line is what
// json.Unmarshal reads, whenever it reads it.
func FuzzAppendUnescaped(f *testing.F) {
	for _, s := range []string{`"a"`, `"[{\"source\":\"cna\"}]"`, `"\u00e9\ud83d\ude00\n\t\\\/"`, "\"caf\xc3\xa9\\\"\"", "\"\xff\\\"\"", `"\ud800"`, `"a\"`, `"\u12"`, "\"\x01\\n\""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		got, ok := appendUnescaped([]byte("x"), line)
		if !ok {
			if string(got) != "x" {
				t.Fatalf("%q refused, but dst changed to %q", line, got)
			}
			return
		}
		var want string
		if err := json.Unmarshal(line, &want); err != nil {
			t.Fatalf("%q read as %q, json.Unmarshal refuses it: %v", line, got[1:], err)
		}
		if string(got[1:]) != want {
			t.Fatalf("%q read as %q, json.Unmarshal reads %q", line, got[1:], want)
		}
	})
}

// BenchmarkAppendDetailsEntries: GET /cve/{name}/details of a CVE with
// affected entries and an SSVC decision, from a Details as a build makes
// it (the texts as strings, as a load kept them before) and as a load
// makes it (the JSON texts compressed, a block decoded per request).
func BenchmarkAppendDetailsEntries(b *testing.B) {
	cves := manyEntryCVEs(3000)
	db := NewDetailsBuilder()
	for i := range cves {
		if err := db.Add(&cves[i]); err != nil {
			b.Fatal(err)
		}
	}
	built := db.Details()
	var lines [][]byte
	for i := range built.Len() {
		lines = append(lines, built.AppendLine(nil, i))
	}
	loaded, err := loadTexts(b, built.Strings(), 700, lines)
	if err != nil {
		b.Fatal(err)
	}
	entries := make([]CVEEntry, len(cves))
	for i := range cves {
		if entries[i], err = ScanCVE(EncodeCVE(&cves[i])); err != nil {
			b.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		d    *Details
	}{{"strings", built}, {"compressed", loaded}} {
		ix, err := BuildEntries(nil, entries, tc.d, nil, Meta{})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			buf := make([]byte, 0, 4096)
			for i := 0; b.Loop(); i++ {
				if buf, err = ix.AppendDetails(buf[:0], cves[i*7%len(cves)].Name); err != nil || len(buf) < 500 {
					b.Fatal(err)
				}
			}
		})
	}
}
