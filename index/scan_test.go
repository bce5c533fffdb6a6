package index

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/goccy/go-json"
	"github.com/google/go-cmp/cmp"
)

func TestScanCVE(t *testing.T) {
	src := "nvd@nist.gov"
	c := CVE{
		Name: "CVE-2024-10001", Summary: `a "quoted" summary, with \ and é`,
		CreatedAt: "2024-01-02 03:04:05Z", UpdatedAt: "2024-06-07 08:09:10Z",
		CPEs: []CPE{
			{ID: 1, URI: `cpe:2.3:a:notepad-plus-plus:notepad\+\+:8.5:*:*:*:*:*:*:*`, Vendor: "notepad-plus-plus", Product: "notepad++", Version: "8.5", Vulnerable: true},
			{ID: 2, URI: "cpe:2.3:a:v:p:*:*:*:*:*:*:*:*", Vendor: "v", Product: "p", Version: "*", VersionEndExcluding: "2.0"},
			{ID: 3, URI: `cpe:2.3:a:q\"uote:p:-:*:*:*:*:*:*:*`, Vendor: `q"uote`, Product: "p", Version: "-"},
			{ID: 4, URI: "cpe:2.3:a:v:p:*:*:*:*:*:*:*:*", Vendor: "v", Product: "p", Version: "*", Vulnerable: true,
				VersionStartIncluding: `11.5\(1\)`, VersionStartExcluding: `"a"`, VersionEndIncluding: "2", VersionEndExcluding: "3"},
			// Updates: concrete (kept, CPE escaping removed), "-", and
			// after an escaped colon in the version.
			{ID: 5, URI: "cpe:2.3:o:linux:linux_kernel:6.8:rc1:*:*:*:*:*:*", Vendor: "linux", Product: "linux_kernel", Version: "6.8", Vulnerable: true},
			{ID: 6, URI: `cpe:2.3:a:apache:log4j:2.0:-:*:*:*:*:*:*`, Vendor: "apache", Product: "log4j", Version: "2.0", Vulnerable: true},
			{ID: 7, URI: `cpe:2.3:a:v:p:1\:2:sp\"1\\:*:*:*:*:*:*`, Vendor: "v", Product: "p", Version: "1:2", Vulnerable: true},
			{ID: 8, URI: `cpe:2.3:a:v:p:3`, Vendor: "v", Product: "p", Version: "3"}, // no update field
		},
		CWEs:       []string{"CWE-79", "CWE-787"},
		CVSS:       CVSS{Source: &src, Score: 7.5},
		References: []Reference{{Description: "Patch", Link: "https://e.example/?a=<1>&b=2", Source: src, Type: "PATCH"}},
	}
	body := EncodeCVE(&c)
	e, err := ScanCVE(body)
	if err != nil {
		t.Fatal(err)
	}
	if e.Name() != "CVE-2024-10001" || e.year != 2024 || e.num != 10001 || e.updated != 20240607080910 || e.band != BandHigh {
		t.Errorf("entry %s %d %d %d %v", e.Name(), e.year, e.num, e.updated, e.band)
	}
	want := []cpeRef{
		{vendor: "notepad-plus-plus", product: "notepad++", version: "8.5", vulnerable: true},
		{vendor: "v", product: "p", version: "*"},
		{vendor: `q"uote`, product: "p", version: "-"},
		{vendor: "v", product: "p", version: "*", vulnerable: true},
		{vendor: "linux", product: "linux_kernel", version: "6.8", vulnerable: true},
		{vendor: "apache", product: "log4j", version: "2.0", vulnerable: true},
		{vendor: "v", product: "p", version: "1:2", vulnerable: true},
		{vendor: "v", product: "p", version: "3"},
	}
	if diff := cmp.Diff(want, e.cpes, cmp.AllowUnexported(cpeRef{})); diff != "" {
		t.Errorf("cpes (-want +got):\n%s", diff)
	}
	// The bounds and updates, which vulnerableCPEs reads again from the
	// body with cpeIter.
	wantFull := []fullCPE{
		{want[0], cpeBounds{}, true},
		{want[1], cpeBounds{endExcluding: "2.0"}, true},
		{want[2], cpeBounds{}, true},
		{want[3], cpeBounds{`11.5\(1\)`, `"a"`, "2", "3", ""}, true},
		{want[4], cpeBounds{update: "rc1"}, false},
		{want[5], cpeBounds{}, false},
		{want[6], cpeBounds{update: `sp"1\`}, false},
		{want[7], cpeBounds{}, false},
	}
	if diff := cmp.Diff(wantFull, fullCPEs(t, &e), cmp.AllowUnexported(fullCPE{}, cpeRef{}, cpeBounds{})); diff != "" {
		t.Errorf("cpes read in full (-want +got):\n%s", diff)
	}
	if string(e.cwes) != `["CWE-79","CWE-787"]` {
		t.Errorf("cwes %s", e.cwes)
	}
	// The summary is the body's prefix and a brace: exactly the API's CVE
	// summary object.
	summary := string(e.body[:e.summaryEnd]) + "}"
	wantSummary := `{"name":"CVE-2024-10001","summary":"a \"quoted\" summary, with \\ and é","created_at":"2024-01-02 03:04:05Z","updated_at":"2024-06-07 08:09:10Z"}`
	if summary != wantSummary {
		t.Errorf("summary\n got %s\nwant %s", summary, wantSummary)
	}

	// A CVE with nothing: no CPEs, CWEs, references or score.
	e, err = ScanCVE(EncodeCVE(&CVE{Name: "CVE-1999-0001", Summary: "", CreatedAt: "1999-01-01 00:00:00Z", UpdatedAt: "1999-01-01 00:00:00Z"}))
	if err != nil {
		t.Fatal(err)
	}
	if len(e.cpes) != 0 || string(e.cwes) != "[]" || e.band != BandNone {
		t.Errorf("empty CVE: %+v", e)
	}
}

func TestScanCVERejects(t *testing.T) {
	good := `{"name":"CVE-2024-0001","summary":"s","created_at":"2024-01-01 00:00:00Z","updated_at":"2024-01-01 00:00:00Z","cpes":[],"cwes":[],"cvss":{"score":0},"references":[]}`
	if _, err := ScanCVE([]byte(good)); err != nil {
		t.Fatalf("good body: %v", err)
	}
	for _, tc := range []struct{ name, body, want string }{
		{"empty", ``, "no object"},
		{"array", `[]`, "no object"},
		{"truncated", good[:len(good)-1], "object not closed"},
		{"trailing data", good + `x`, "data after the object"},
		{"summary first", strings.Replace(good, `"name":"CVE-2024-0001","summary":"s"`, `"summary":"s","name":"CVE-2024-0001"`, 1), "member 1 is not name"},
		{"lower-case name", strings.Replace(good, "CVE-2024-0001", "cve-2024-0001", 1), "is not CVE-<year>-<number>"},
		{"bad updated_at", strings.Replace(good, `"updated_at":"2024-01-01 00:00:00Z"`, `"updated_at":"2024-01-01T00:00:00Z"`, 1), "updated_at"},
		{"no cvss", strings.Replace(good, `"cvss":{"score":0},`, ``, 1), "missing members"},
		{"cpes not an array", strings.Replace(good, `"cpes":[]`, `"cpes":{}`, 1), "bad cpes"},
		{"cpes of strings", strings.Replace(good, `"cpes":[]`, `"cpes":["a"]`, 1), "bad cpes"},
		{"vulnerable not a boolean", strings.Replace(good, `"cpes":[]`, `"cpes":[{"vulnerable":1}]`, 1), "bad cpes"},
		{"vulnerable null", strings.Replace(good, `"cpes":[]`, `"cpes":[{"vulnerable":null}]`, 1), "bad cpes"},
		{"bound not a string", strings.Replace(good, `"cpes":[]`, `"cpes":[{"version_end_excluding":2}]`, 1), "bad cpes"},
		{"bad score", strings.Replace(good, `"score":0`, `"score":"7"`, 1), "bad cvss"},
		{"bad number", strings.Replace(good, `"score":0`, `"score":01`, 1), "bad cvss"},
		{"control character", strings.Replace(good, `"summary":"s"`, "\"summary\":\"a\nb\"", 1), "bad value of summary"},
		{"deep nesting", strings.Replace(good, `"references":[]`, `"references":`+strings.Repeat("[", 100)+strings.Repeat("]", 100), 1), "bad value of references"},
		{"unclosed string", `{"name":"CVE-2024-0001`, "bad name"},
		{"escaped quote at end", `{"name":"CVE-2024-0001\"}`, "bad name"},
	} {
		_, err := ScanCVE([]byte(tc.body))
		if !errors.Is(err, ErrNotCVEBody) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want ErrNotCVEBody saying %q", tc.name, err, tc.want)
		}
	}
}

// FuzzScanCVE: ScanCVE never panics; what it accepts is a JSON object whose
// summary prefix is a JSON object too, and EncodeCVE's output of what it
// accepts scans to the same fields.
func FuzzScanCVE(f *testing.F) {
	src := "s"
	f.Add(EncodeCVE(&CVE{Name: "CVE-2024-0001", CreatedAt: "2024-01-01 00:00:00Z", UpdatedAt: "2024-01-01 00:00:00Z",
		CPEs: []CPE{{URI: "u", Vendor: `v\"`, Product: "p", Version: "1"}}, CWEs: []string{"CWE-79"},
		CVSS: CVSS{Source: &src, Score: 4.3}, References: []Reference{{Link: "l"}}}))
	f.Add(EncodeCVE(&CVE{Name: "CVE-2024-0002", CreatedAt: "2024-01-01 00:00:00Z", UpdatedAt: "2024-01-01 00:00:00Z",
		CPEs: []CPE{{URI: "u", Vendor: "v", Product: "p", Version: "*", Vulnerable: true,
			VersionStartIncluding: `11.5\(1\)`, VersionStartExcluding: "1", VersionEndIncluding: "2", VersionEndExcluding: "3"}}}))
	f.Add([]byte(`{"name":"CVE-2024-0001","summary":"","created_at":"","updated_at":"2024-01-01 00:00:00Z","cpes":[{}],"cwes":[],"cvss":{},"references":[1,true,null,-1.5e3]}`))
	f.Add([]byte(`{"name":"CVE-2024-0001"`))
	f.Fuzz(func(t *testing.T, body []byte) {
		e, err := ScanCVE(body)
		if err != nil {
			return
		}
		if !json.Valid(body) {
			t.Fatalf("accepted invalid JSON %q", body)
		}
		summary := append(append([]byte{}, body[:e.summaryEnd]...), '}')
		if !json.Valid(summary) {
			t.Fatalf("summary %q is not JSON", summary)
		}
		// What EncodeCVE writes scans to exactly the record's fields.
		var c CVE
		if err := json.Unmarshal(body, &c); err != nil {
			return // valid JSON of other types than ours (a number as summary, say)
		}
		e2, err := ScanCVE(EncodeCVE(&c))
		if err != nil {
			if _, ok := timestampDigits([]byte(c.UpdatedAt)); ok && strings.ToUpper(c.Name) == c.Name {
				t.Fatalf("EncodeCVE(%+v) does not scan: %v", c, err)
			}
			return // a name or time ScanCVE refuses, as it should
		}
		if e2.name != c.Name || e2.band != bandOf(c.CVSS.Score) || len(e2.cpes) != len(c.CPEs) {
			t.Fatalf("scan of EncodeCVE(%+v) gave %+v", c, e2)
		}
		full := fullCPEs(t, &e2)
		for i, p := range c.CPEs {
			got := full[i]
			update, any := uriUpdate(p.URI)
			want := fullCPE{cpeRef{p.Vendor, p.Product, p.Version, p.Vulnerable},
				cpeBounds{p.VersionStartIncluding, p.VersionStartExcluding, p.VersionEndIncluding, p.VersionEndExcluding, update}, any}
			if got != want || e2.cpes[i] != want.cpeRef {
				t.Fatalf("cpe %d: %+v (at load %+v), record has %+v", i, got, e2.cpes[i], p)
			}
		}
	})
}

// fullCPE is what cpeIter reads of one CPE when asked for everything.
type fullCPE struct {
	cpeRef
	bounds    cpeBounds
	anyUpdate bool
}

// fullCPEs reads e's cpes again from its body, as vulnerableCPEs does.
func fullCPEs(t *testing.T, e *CVEEntry) []fullCPE {
	t.Helper()
	s := scanner{b: e.body, i: e.summaryEnd}
	for s.eat(',') {
		key, ok := s.key()
		if !ok {
			t.Fatal("bad member name")
		}
		if string(key) != "cpes" {
			if !s.value(0) {
				t.Fatal("bad value")
			}
			continue
		}
		out := []fullCPE{}
		it := cpeIter{s: s}
		for it.next() {
			out = append(out, fullCPE{
				cpeRef{string(it.vendor), string(it.product), string(it.version), it.vulnerable},
				cpeBounds{string(it.bounds[0]), string(it.bounds[1]), string(it.bounds[2]), string(it.bounds[3]), it.update},
				it.anyUpdate})
		}
		if it.err != nil {
			t.Fatal(it.err)
		}
		return out
	}
	t.Fatal("no cpes")
	return nil
}

// uriUpdate is cpeUpdate's rule read plainly, on the decoded URI: split
// it at each colon no backslash escapes, take the 7th field and remove
// CPE escaping; "*" is any, "-" and "" no update.
func uriUpdate(uri string) (update string, any bool) {
	var fields []string
	var cur []byte
	for i := 0; i < len(uri); i++ {
		switch c := uri[i]; {
		case c == '\\' && i+1 < len(uri):
			cur = append(cur, c, uri[i+1])
			i++
		case c == ':':
			fields, cur = append(fields, string(cur)), nil
		default:
			cur = append(cur, c)
		}
	}
	fields = append(fields, string(cur))
	if len(fields) < 7 {
		return "", false
	}
	switch u := unescapeCPE(fields[6]); u {
	case "*":
		return "", true
	case "-", "":
		return "", false
	default:
		return u, false
	}
}

// TestCPEUpdate checks cpeUpdate on URIs written with escapes, as JSON
// writes them, against uriUpdate.
func TestCPEUpdate(t *testing.T) {
	for _, uri := range []string{
		"cpe:2.3:a:apache:log4j:2.0:beta9:*:*:*:*:*:*",
		"cpe:2.3:a:apache:log4j:2.0:*:*:*:*:*:*:*",
		"cpe:2.3:a:apache:log4j:2.0:-:*:*:*:*:*:*",
		"cpe:2.3:a:apache:log4j:2.0::*",
		"cpe:2.3:a:apache:log4j:2.0:rc1",
		"cpe:2.3:a:apache:log4j:2.0",
		`cpe:2.3:a:cisco:ucm:11.5\(1\):su\:3:*`,
		`cpe:2.3:a:v\:x:p:1:\*:*`,
		`cpe:2.3:a:v:p:1:a\\:b`,
		`cpe:2.3:a:v:p:1:"q"\"\<:b`,
		"cpe:2.3:a:v:p:1:\u00e9t\u00e9:b",
		`cpe:2.3:a:v:p:1:x\`,
		"",
	} {
		body, err := json.Marshal(uri)
		if err != nil {
			t.Fatal(err)
		}
		var decoded string
		if err := json.Unmarshal(body, &decoded); err != nil {
			t.Fatal(err)
		}
		wantUpdate, wantAny := uriUpdate(decoded)
		gotUpdate, gotAny := cpeUpdate(body[1 : len(body)-1])
		if gotUpdate != wantUpdate || gotAny != wantAny {
			t.Errorf("%s: %q %v, want %q %v", body, gotUpdate, gotAny, wantUpdate, wantAny)
		}
	}
}

// strRef is scanner.str as it was before it became one pass: find the
// first quote after an even number of backslashes, then check the bytes
// and the escapes between. str must agree with it on every input.
func strRef(s *scanner) (raw []byte, esc, ok bool) {
	s.ws()
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return nil, false, false
	}
	start := s.i + 1
	j := start
	for {
		k := bytes.IndexByte(s.b[j:], '"')
		if k < 0 {
			return nil, false, false
		}
		j += k
		n := 0
		for p := j - 1; p >= start && s.b[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			break
		}
		j++
	}
	raw = s.b[start:j]
	esc = bytes.IndexByte(raw, '\\') >= 0
	for _, c := range raw {
		if c < 0x20 {
			return nil, false, false
		}
	}
	if !utf8.Valid(raw) {
		return nil, false, false
	}
	for i := 0; esc && i < len(raw); i++ {
		if raw[i] != '\\' {
			continue
		}
		if i+1 >= len(raw) {
			return nil, false, false
		}
		switch raw[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i++
		case 'u':
			if i+5 >= len(raw) {
				return nil, false, false
			}
			for _, h := range raw[i+2 : i+6] {
				if !isDigit(h) && !('a' <= h && h <= 'f') && !('A' <= h && h <= 'F') {
					return nil, false, false
				}
			}
			i += 5
		default:
			return nil, false, false
		}
	}
	s.i = j + 1
	return raw, esc, true
}

// sameStr checks str against strRef on b.
func sameStr(t *testing.T, b []byte) {
	t.Helper()
	s1, s2 := scanner{b: b}, scanner{b: b}
	raw1, esc1, ok1 := s1.str()
	raw2, esc2, ok2 := strRef(&s2)
	if !bytes.Equal(raw1, raw2) || esc1 != esc2 || ok1 != ok2 || ok1 && s1.i != s2.i {
		t.Fatalf("str(%q) = %q %v %v at %d, want %q %v %v at %d", b, raw1, esc1, ok1, s1.i, raw2, esc2, ok2, s2.i)
	}
}

// TestStr compares the word-at-a-time scan with strRef for every byte
// value at every position of strings of several lengths (so in a whole
// word and in the tail), next to ASCII, valid and invalid UTF-8,
// backslashes and escapes, with and without a closing quote and bytes
// after it.
func TestStr(t *testing.T) {
	for _, n := range []int{1, 2, 5, 7, 8, 9, 16, 23} {
		for pos := 0; pos < n; pos++ {
			for c := 0; c < 256; c++ {
				for _, fill := range []string{"a", "é", "\xff", `\`, `\u00e9`, `\"`} {
					for _, tail := range []string{``, `"`, `"x`, `",1234567890`} {
						b := []byte(strings.Repeat(fill, n))[:n]
						b[pos] = byte(c)
						sameStr(t, append(append([]byte{'"'}, b...), tail...))
					}
				}
			}
		}
	}
}

// FuzzStr: str agrees with strRef on any input.
func FuzzStr(f *testing.F) {
	for _, s := range []string{`"abc"`, `"a\"b"`, `"\\"x`, `"\u00e9\u12"`, "\"\xe9t\xe9\"", `"abcdefghijkl\`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) { sameStr(t, b) })
}
