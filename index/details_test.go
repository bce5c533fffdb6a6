package index

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// detailsCVEs are two CVEs with what details serve: metrics given out of
// version order, and a KEV entry with texts that need escaping.
func detailsCVEs() []CVE {
	return []CVE{
		{Name: "CVE-2024-0001", CreatedAt: "2024-01-01 00:00:00Z", UpdatedAt: "2024-01-02 00:00:00Z", Status: "Analyzed", Metrics: []Metric{
			{Version: "2.0", Source: "nvd@nist.gov", Type: "Primary", Score: 5, Vector: "AV:N/AC:L/Au:N/C:P/I:N/A:N", Severity: "MEDIUM"},
			{Version: "3.1", Source: "nvd@nist.gov", Type: "Primary", Score: 9.8, Vector: "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H", Severity: "CRITICAL"},
			{Version: "4.0", Source: "cna@example.org", Type: "Secondary", Score: 6.9, Vector: "CVSS:4.0/AV:N", Severity: "MEDIUM"},
			{Version: "3.1", Source: "cna@example.org", Type: "Secondary", Score: 7.3, Vector: "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:L/I:L/A:L", Severity: "HIGH"},
		}},
		{Name: "CVE-2024-0002", CreatedAt: "2024-01-01 00:00:00Z", UpdatedAt: "2024-01-03 00:00:00Z", Status: "", KEV: &KEV{DateAdded: "2024-01-02", RequiredAction: "Apply \"updates\" <now> & \\ then\nreboot\u2028."}},
		{Name: "CVE-2024-0003", CreatedAt: "2024-01-01 00:00:00Z", UpdatedAt: "2024-01-04 00:00:00Z", Affected: []AffectedEntry{
			{Source: "cna", Vendor: sp("Example & Co"), Product: sp("widget"), PackageName: sp("widget-pkg"), DefaultStatus: sp("unaffected"),
				Versions: []AffectedVersion{{Version: "1.0", Status: "affected", VersionType: "semver", LessThan: sp("1.2"),
					Changes: []StatusChange{{At: "1.1", Status: "unaffected"}}}}},
			{Source: "adp:CISA-ADP", CPEs: []string{"cpe:2.3:a:example:widget:*:*:*:*:*:*:*:*"}, Versions: []AffectedVersion{{Version: "0", Status: "affected", LessThanOrEqual: sp("1.1")}}, Platforms: []string{"Linux"}},
		}, SSVC: &SSVC{Exploitation: sp("none"), Automatable: sp("no"), Timestamp: sp("2024-01-04T00:00:00.000Z")}},
	}
}

// TestDetailsRoundTrip: the stored form (text table and lines) parses
// back to the same details, and the body is the decisions' shape, with
// metrics newest version first and record order within a version.
func TestDetailsRoundTrip(t *testing.T) {
	b := NewDetailsBuilder()
	for _, c := range detailsCVEs() {
		c := c
		if err := b.Add(&c); err != nil {
			t.Fatal(err)
		}
	}
	d := b.Details()
	var lines [][]byte
	for i := range d.Len() {
		lines = append(lines, d.AppendLine(nil, i))
	}
	back, err := parseDetails(d.Strings(), lines)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(d, back, cmp.AllowUnexported(Details{}, detailRef{}, metricRec{}), cmpopts.IgnoreTypes(sync.Mutex{})); diff != "" {
		t.Errorf("parsed back (-want +got):\n%s", diff)
	}
	ix, err := Build(&Data{CVEs: detailsCVEs()}, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, want string }{
		{"cve-2024-0001", `{"name":"CVE-2024-0001","status":"Analyzed","kev":null,"metrics":[` +
			`{"version":"4.0","source":"cna@example.org","type":"Secondary","vector":"CVSS:4.0/AV:N","base_score":6.9,"base_severity":"MEDIUM"},` +
			`{"version":"3.1","source":"nvd@nist.gov","type":"Primary","vector":"CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H","base_score":9.8,"base_severity":"CRITICAL"},` +
			`{"version":"3.1","source":"cna@example.org","type":"Secondary","vector":"CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:L/I:L/A:L","base_score":7.3,"base_severity":"HIGH"},` +
			`{"version":"2.0","source":"nvd@nist.gov","type":"Primary","vector":"AV:N/AC:L/Au:N/C:P/I:N/A:N","base_score":5,"base_severity":"MEDIUM"}],"affected":[],"ssvc":null,"epss":null}`},
		{"CVE-2024-0002", `{"name":"CVE-2024-0002","status":"","kev":{"date_added":"2024-01-02","action_due":"",` +
			`"required_action":"Apply \"updates\" \u003cnow\u003e \u0026 \\ then\nreboot\u2028.","vulnerability_name":""},"metrics":[],"affected":[],"ssvc":null,"epss":null}`},
		// The entries in record order with their fields as the record has
		// them (packageName not served, a field the record lacks null,
		// a version object's missing members left out), the SSVC decision
		// with the option it lacks null.
		{"CVE-2024-0003", `{"name":"CVE-2024-0003","status":"","kev":null,"metrics":[],"affected":[` +
			`{"source":"cna","vendor":"Example & Co","product":"widget","cpes":null,"default_status":"unaffected",` +
			`"versions":[{"version":"1.0","status":"affected","versionType":"semver","lessThan":"1.2","changes":[{"at":"1.1","status":"unaffected"}]}],"platforms":null},` +
			`{"source":"adp:CISA-ADP","vendor":null,"product":null,"cpes":["cpe:2.3:a:example:widget:*:*:*:*:*:*:*:*"],"default_status":null,` +
			`"versions":[{"version":"0","status":"affected","lessThanOrEqual":"1.1"}],"platforms":["Linux"]}],` +
			`"ssvc":{"exploitation":"none","automatable":"no","technical_impact":null,"timestamp":"2024-01-04T00:00:00.000Z"},"epss":null}`},
	} {
		got, err := ix.AppendDetails(nil, tc.name)
		if err != nil || string(got) != tc.want {
			t.Errorf("%s: %v\n%s\nwant\n%s", tc.name, err, got, tc.want)
		}
	}
	if err := d.Check(); err != nil {
		t.Errorf("Check: %v", err)
	}
	if _, err := ix.AppendDetails(nil, "CVE-2024-0004"); err != ErrCVENotFound {
		t.Error("unknown CVE found")
	}
	if got := ix.CVEs(BandNone).WithKEV(true).Len(); got != 1 {
		t.Errorf("KEV CVEs: %d, want 1", got)
	}
}

// TestParseDetailsRefuses: every index is checked.
func TestParseDetailsRefuses(t *testing.T) {
	strs := []string{"", "Analyzed", "nvd@nist.gov", "Primary", "AV:N", "HIGH", `[{"source":"cna"}]`, `{"exploitation":null}`,
		"openprinting\tcups-filters\t0", "a\tb\t0\na\tb\t1", "a\t*\t0", "a\tb\t", "a\tb\t1,0", "a\tb\t01", "a\tb", "a\tb\t0\n"}
	for _, tc := range []struct{ name, line string }{
		{"empty", ""},
		{"status out of range", "16 0 0 0 0 0"},
		{"kev flag 2", "1 2 0 0 0 0"},
		{"kev texts missing", "1 1 1 1 0 0 0 0"},
		{"metric missing", "1 0 1 0 0 0"},
		{"version 4", "1 0 1 4 2 3 4 5 70 0 0 0"},
		{"score over 10", "1 0 1 1 2 3 4 5 101 0 0 0"},
		{"trailing", "1 0 0 0 0 0 7"},
		{"double space", "1  0 0 0 0 0"},
		{"sign", "1 0 -1 0 0 0"},
		{"older first", "1 0 2 3 2 3 4 5 70 1 2 3 4 5 70 0 0 0"},
		{"affected missing", "1 0 0"},
		{"ssvc missing", "1 0 0 6"},
		{"keys missing", "1 0 0 6 0"},
		{"affected out of range", "1 0 0 16 0 0"},
		{"affected not an array", "1 0 0 1 0 0"},
		{"ssvc not an object", "1 0 0 0 1 0"},
		{"ssvc an array", "1 0 0 0 6 0"},
		{"affected an object", "1 0 0 7 0 0"},
		{"keys out of range", "1 0 0 6 0 16"},
		{"keys without affected", "1 0 0 0 0 8"},
		{"keys not keys", "1 0 0 6 0 1"},
		{"a key twice", "1 0 0 6 0 9"},
		{"product *", "1 0 0 6 0 10"},
		{"no entries", "1 0 0 6 0 11"},
		{"entries not ascending", "1 0 0 6 0 12"},
		{"entry with a leading zero", "1 0 0 6 0 13"},
		{"no entries field", "1 0 0 6 0 14"},
		{"empty line", "1 0 0 6 0 15"},
	} {
		if _, err := parseDetails(strs, [][]byte{[]byte(tc.line)}); err == nil {
			t.Errorf("%s: %q accepted", tc.name, tc.line)
		}
	}
	if _, err := parseDetails([]string{"x"}, nil); err == nil {
		t.Error("a table not starting with \"\" accepted")
	}
	for _, good := range []string{"1 0 2 1 2 3 4 5 70 3 2 3 4 5 99 0 0 0", "1 0 0 6 7 0", "0 0 0 6 0 0", "0 0 0 0 7 0", "0 0 0 6 0 8"} {
		if _, err := parseDetails(strs, [][]byte{[]byte(good)}); err != nil {
			t.Errorf("a good line %q refused: %v", good, err)
		}
	}
}

// TestDetailsFormat4: lines of snapshot format 4 end after the metrics;
// read WithoutAffected, they give no entries and no SSVC, and a line
// with more numbers is refused.
func TestDetailsFormat4(t *testing.T) {
	strs := []string{"", "Analyzed", "src", "Primary", "V1", "HIGH"}
	l, err := NewDetailsLoader(strs, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.WithoutAffected().ParsePiece(0, 0, []byte("1 0 1 1 2 3 4 5 70\n0 0 0\n")); err != nil {
		t.Fatal(err)
	}
	d, err := l.Details()
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"1 0 1 1 2 3 4 5 70 0 0 0", "0 0 0 0 0 0"} {
		if got := string(d.AppendLine(nil, i)); got != want {
			t.Errorf("CVE %d: %q, want %q", i, got, want)
		}
	}
	l, _ = NewDetailsLoader(strs, 1, 1)
	if err := l.WithoutAffected().ParsePiece(0, 0, []byte("0 0 0 0 0\n")); err == nil {
		t.Error("a format 5 line read as format 4")
	}
}

// TestDetailsFormat5: lines of snapshot format 5 end after ssvc; read
// WithoutEntryKeys, they give no entry keys, and a format 6 line is
// refused.
func TestDetailsFormat5(t *testing.T) {
	strs := []string{"", "Analyzed", `[{"source":"cna"}]`}
	l, err := NewDetailsLoader(strs, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.WithoutEntryKeys().ParsePiece(0, 0, []byte("1 0 0 2 0\n0 0 0 0 0\n")); err != nil {
		t.Fatal(err)
	}
	d, err := l.Details()
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"1 0 0 2 0 0", "0 0 0 0 0 0"} {
		if got := string(d.AppendLine(nil, i)); got != want {
			t.Errorf("CVE %d: %q, want %q", i, got, want)
		}
	}
	l, _ = NewDetailsLoader(strs, 1, 1)
	if err := l.WithoutEntryKeys().ParsePiece(0, 0, []byte("0 0 0 0 0 0\n")); err == nil {
		t.Error("a format 6 line read as format 5")
	}
}

// TestDetailsCheck: Check refuses stored texts that are not the JSON of
// entries or of a decision, which a load lets through by their shape.
func TestDetailsCheck(t *testing.T) {
	for _, tc := range []struct {
		name, affected, ssvc string
		keys                 bool
	}{
		{"not JSON", `[{"source":}]`, "", false},
		{"unknown member", `[{"source":"cna","vendor":null,"product":null,"cpes":null,"default_status":null,"versions":null,"platforms":null,"extra":1}]`, "", false},
		{"empty array", `[]`, "", false},
		{"ssvc not JSON", "", `{"exploitation"}`, false},
		{"ssvc member missing", "", `{"exploitation":null,"automatable":null,"technical_impact":null}`, false},
		{"keys name entry 1 of 1", `[{"source":"cna","vendor":null,"product":null,"cpes":null,"default_status":null,"versions":null,"platforms":null}]`, "", true},
	} {
		strs := []string{"", tc.affected, tc.ssvc, "a\tb\t1"}
		line := "0 0 0 1 2 0"
		if tc.affected == "" {
			line = "0 0 0 0 2 0"
		}
		if tc.ssvc == "" {
			line = "0 0 0 1 0 0"
		}
		if tc.keys {
			line = "0 0 0 1 0 3"
		}
		d, err := parseDetails(strs, [][]byte{[]byte(line)})
		if err != nil {
			t.Errorf("%s: load refused it: %v", tc.name, err)
			continue
		}
		if err := d.Check(); err == nil {
			t.Errorf("%s: Check accepted it", tc.name)
		}
	}
}

// FuzzParseDetails: any line is parsed or refused, never a panic, and a
// parsed one writes back as a line that parses to the same details.
func FuzzParseDetails(f *testing.F) {
	strs := []string{"", "a", "b", "c", "d", "e"}
	for _, s := range []string{"1 0 0 0 0 0", "0 1 1 2 3 4 1 1 2 3 4 5 70 0 0 0", "1 0 2 0 1 2 3 4 100 3 5 5 5 5 0 0 0 0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		d, err := parseDetails(strs, [][]byte{[]byte(line)})
		if err != nil {
			return
		}
		back, err := parseDetails(strs, [][]byte{d.AppendLine(nil, 0)})
		if err != nil {
			t.Fatalf("%q wrote back as %q, refused: %v", line, d.AppendLine(nil, 0), err)
		}
		if diff := cmp.Diff(d, back, cmp.AllowUnexported(Details{}, detailRef{}, metricRec{}), cmpopts.IgnoreTypes(sync.Mutex{})); diff != "" {
			t.Errorf("%q (-first +again):\n%s", line, diff)
		}
	})
}

// TestDetailsPieces: a Details loaded in pieces, in any order, serves
// each CVE's own metrics.
func TestDetailsPieces(t *testing.T) {
	strs := []string{"", "Analyzed", "src", "Primary", "V1", "HIGH", "V2"}
	l, err := NewDetailsLoader(strs, 3, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.ParsePiece(1, 2, []byte("1 0 1 1 2 3 6 5 75 0 0 0\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Details(); err == nil {
		t.Error("Details before every piece is parsed")
	}
	if err := l.ParsePiece(0, 0, []byte("1 0 1 1 2 3 4 5 70 0 0 0\n0 0 0 0 0 0\n")); err != nil {
		t.Fatal(err)
	}
	if err := l.ParsePiece(0, 0, []byte("0 0 0 0 0 0\n")); err == nil {
		t.Error("a piece parsed twice")
	}
	d, err := l.Details()
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"1 0 1 1 2 3 4 5 70 0 0 0", "0 0 0 0 0 0", "1 0 1 1 2 3 6 5 75 0 0 0"} {
		if got := string(d.AppendLine(nil, i)); got != want {
			t.Errorf("CVE %d: %q, want %q", i, got, want)
		}
	}
}

// parseDetails rebuilds a Details from its text table and one line per
// CVE, as one piece: what a snapshot's loader does with a DetailsLoader,
// for the tests.
func parseDetails(strs []string, lines [][]byte) (*Details, error) {
	l, err := NewDetailsLoader(strs, len(lines), 1)
	if err != nil {
		return nil, err
	}
	var data []byte
	for _, line := range lines {
		if bytes.IndexByte(line, '\n') >= 0 {
			return nil, fmt.Errorf("%w: a newline inside a line", ErrDetails)
		}
		data = append(append(data, line...), '\n')
	}
	if err := l.ParsePiece(0, 0, data); err != nil {
		return nil, err
	}
	return l.Details()
}
