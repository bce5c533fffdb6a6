package loader

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vulnd/vulnd/index"
)

// realCWECatalog is MITRE's catalog v4.15 as shipped in the shared data
// directory, relative to this package's directory (the tests' working
// directory).
const realCWECatalog = "../../shared/data/cwe/cwec_v4.15.xml.zip"

// realCWECatalogPath returns the absolute path of the real catalog and
// fails the test when it is missing.
func realCWECatalogPath(tb testing.TB) string {
	tb.Helper()
	path, err := filepath.Abs(realCWECatalog)
	if err != nil {
		tb.Fatalf("resolving %s: %v", realCWECatalog, err)
	}
	if _, err := os.Stat(path); err != nil {
		tb.Fatalf("the real CWE catalog is required at %s (resolved from %s): %v", path, realCWECatalog, err)
	}
	return path
}

// TestReadCWECatalogReal reads the real catalog and checks the counts and
// a few entries whose expectations were worked out by hand from the XML.
func TestReadCWECatalogReal(t *testing.T) {
	path := realCWECatalogPath(t)
	cwes, err := ReadCWECatalog(path)
	if err != nil {
		t.Fatalf("ReadCWECatalog(%s): %v", path, err)
	}

	if len(cwes) != 1427 {
		t.Errorf("got %d entries, want 1427", len(cwes))
	}
	counts := make(map[string]int)
	weaknesses := 0
	for _, c := range cwes {
		counts[c.Type]++
		if strings.HasPrefix(c.Type, "Weakness ") {
			weaknesses++
		}
	}
	if weaknesses != 964 {
		t.Errorf("got %d weaknesses, want 964", weaknesses)
	}
	wantCounts := map[string]int{
		"Weakness Variant":  299,
		"Weakness Base":     536,
		"Weakness Class":    112,
		"Weakness Pillar":   10,
		"Weakness Compound": 7,
		"Category":          409,
		"View":              54,
	}
	if diff := cmp.Diff(wantCounts, counts); diff != "" {
		t.Errorf("entries per type (-want +got):\n%s", diff)
	}

	// Catalog order: weaknesses, then categories, then views, each as
	// listed (the catalog sorts IDs as strings).
	if len(cwes) == 1427 {
		order := map[int]string{0: "CWE-1004", 963: "CWE-99", 964: "CWE-1", 1426: "CWE-999"}
		for i, want := range order {
			if cwes[i].Name != want {
				t.Errorf("entry %d is %s, want %s", i, cwes[i].Name, want)
			}
		}
	}

	byName := make(map[string]index.CWE, len(cwes))
	for _, c := range cwes {
		if _, dup := byName[c.Name]; dup {
			t.Errorf("%s listed twice", c.Name)
		}
		byName[c.Name] = c
	}

	golden := []index.CWE{
		{
			// Variant, one-line description, eight modifications.
			Name:        "CWE-1004",
			Description: "The product uses a cookie to store sensitive information, but the cookie is not marked with the HttpOnly flag.",
			Type:        "Weakness Variant",
			CreatedAt:   "2017-01-02 00:00:00Z",
			UpdatedAt:   "2023-10-26 00:00:00Z",
		},
		{
			// Base, description spread over tab-indented lines, no
			// Modification at all (only Contributions dated 2024-01-22).
			Name: "CWE-1421",
			Description: "A processor event may allow transient operations to access architecturally restricted data " +
				"(for example, in another address space) in a shared microarchitectural structure " +
				"(for example, a CPU cache), potentially exposing the data over a covert channel.",
			Type:      "Weakness Base",
			CreatedAt: "2023-09-19 00:00:00Z",
			UpdatedAt: "2023-09-19 00:00:00Z",
		},
		{
			// Class.
			Name:        "CWE-1390",
			Description: "The product uses an authentication mechanism to restrict access to specific users or identities, but the mechanism does not sufficiently prove that the claimed identity is correct.",
			Type:        "Weakness Class",
			CreatedAt:   "2022-10-05 00:00:00Z",
			UpdatedAt:   "2024-02-29 00:00:00Z",
		},
		{
			// Pillar, 31 modifications.
			Name:        "CWE-682",
			Description: "The product performs a calculation that generates incorrect or unintended results that are later used in security-critical decisions or resource management.",
			Type:        "Weakness Pillar",
			CreatedAt:   "2008-04-11 00:00:00Z",
			UpdatedAt:   "2023-06-29 00:00:00Z",
		},
		{
			// Compound (a chain).
			Name:        "CWE-680",
			Description: "The product performs a calculation to determine how much memory to allocate, but an integer overflow can occur that causes less memory to be allocated than expected, leading to a buffer overflow.",
			Type:        "Weakness Compound",
			CreatedAt:   "2008-04-11 00:00:00Z",
			UpdatedAt:   "2024-02-29 00:00:00Z",
		},
		{
			// Deprecated weakness; its Submission_ReleaseDate (2019-06-20)
			// is not its Submission_Date.
			Name:        "CWE-1187",
			Description: "This entry has been deprecated because it was a duplicate of CWE-908. All content has been transferred to CWE-908.",
			Type:        "Weakness Base",
			CreatedAt:   "2019-03-25 00:00:00Z",
			UpdatedAt:   "2023-06-29 00:00:00Z",
		},
		{
			// Category: the Summary, with literal quotes.
			Name:        "CWE-1005",
			Description: `This category represents one of the phyla in the Seven Pernicious Kingdoms vulnerability classification. It includes weaknesses that exist when an application does not properly validate or represent input. According to the authors of the Seven Pernicious Kingdoms, "Input validation and representation problems are caused by metacharacters, alternate encodings and numeric representations. Security problems result from trusting input."`,
			Type:        "Category",
			CreatedAt:   "2017-05-05 00:00:00Z",
			UpdatedAt:   "2023-06-29 00:00:00Z",
		},
		{
			// Category whose Summary holds the entity &amp;.
			Name:        "CWE-1360",
			Description: `Weaknesses in this category are related to the "ICS Dependencies (& Architecture)" super category from the SEI ETF "Categories of Security Vulnerabilities in ICS" as published in March 2022.`,
			Type:        "Category",
			CreatedAt:   "2022-03-09 00:00:00Z",
			UpdatedAt:   "2023-06-29 00:00:00Z",
		},
		{
			// View: the Objective.
			Name:        "CWE-1003",
			Description: "CWE entries in this view (graph) may be used to categorize potential weaknesses within sources that handle public, third-party vulnerability information, such as the National Vulnerability Database (NVD). By design, this view is incomplete. It is limited to a small number of the most commonly-seen weaknesses, so that it is easier for humans to use. This view uses a shallow hierarchy of two levels in order to simplify the complex navigation of the entire CWE corpus.",
			Type:        "View",
			CreatedAt:   "2015-12-07 00:00:00Z",
			UpdatedAt:   "2024-02-29 00:00:00Z",
		},
		{
			// View whose Objective is three <xhtml:p> paragraphs (one
			// with a double space inside); its Audience holds a nested
			// <Description> that must not be taken.
			Name: "CWE-1400",
			Description: "This view organizes weaknesses around categories that are of interest to large-scale software assurance research to support the elimination of weaknesses using tactics such as secure language development. " +
				"It is also intended to help tracking weakness trends in publicly disclosed vulnerability data. " +
				"This view is comprehensive in that every weakness must be contained in it, unlike most other views that only use a subset of weaknesses. " +
				"This view is structured with categories at the top level, with a second level of only weaknesses. " +
				"Relationships among the weaknesses presented under the research view (CWE-1000) are not shown. " +
				"Each weakness is added to only one category. All categories are mutually exclusive; that is, no weakness can be a member of more than one category. " +
				"While weaknesses defy strict categorization along only one characteristic, the forced bucketing into a single category can simplify certain kinds of analysis. " +
				"Note that the size of each category can vary widely because (1) CWE is not as well fleshed-out in some areas compared to others; " +
				"(2) abstraction of the CWEs in the grouping might go down to Variant level for some buckets, versus others.",
			Type:      "View",
			CreatedAt: "2023-04-25 00:00:00Z",
			UpdatedAt: "2023-06-29 00:00:00Z",
		},
	}
	for _, want := range golden {
		got, ok := byName[want.Name]
		if !ok {
			t.Errorf("%s missing", want.Name)
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", want.Name, diff)
		}
	}

	// Every entry is well formed.
	for _, c := range cwes {
		if !strings.HasSuffix(c.CreatedAt, " 00:00:00Z") || len(c.CreatedAt) != len("2006-01-02 00:00:00Z") {
			t.Errorf("%s: created_at %q", c.Name, c.CreatedAt)
		}
		if c.UpdatedAt < c.CreatedAt {
			t.Errorf("%s: updated_at %s before created_at %s", c.Name, c.UpdatedAt, c.CreatedAt)
		}
		if c.Description != strings.Join(strings.Fields(c.Description), " ") {
			t.Errorf("%s: description whitespace not collapsed: %q", c.Name, c.Description)
		}
	}
}

// cweCatalogXML wraps the given sections in a Weakness_Catalog root the
// way MITRE does.
func cweCatalogXML(sections string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>` +
		`<Weakness_Catalog Name="CWE" Version="4.15" Date="2024-07-16" xmlns="http://cwe.mitre.org/cwe-7" xmlns:xhtml="http://www.w3.org/1999/xhtml">` +
		sections +
		`<External_References><External_Reference Reference_ID="REF-1"><Title>T</Title></External_Reference></External_References>` +
		`</Weakness_Catalog>`
}

// cweHistory is a Content_History with the given submission date and
// modification dates.
func cweHistory(submitted string, modified ...string) string {
	s := `<Content_History><Submission><Submission_Name>CWE Content Team</Submission_Name>` +
		`<Submission_Date>` + submitted + `</Submission_Date><Submission_ReleaseDate>1999-01-01</Submission_ReleaseDate></Submission>`
	for _, m := range modified {
		s += `<Modification><Modification_Name>X</Modification_Name><Modification_Date>` + m +
			`</Modification_Date><Modification_Comment>updated</Modification_Comment></Modification>`
	}
	return s + `<Previous_Entry_Name Date="2030-01-01">Old</Previous_Entry_Name></Content_History>`
}

func TestDecodeCWECatalog(t *testing.T) {
	tests := []struct {
		name string
		xml  string
		want []index.CWE
	}{
		{
			name: "empty catalog",
			xml:  cweCatalogXML(`<Weaknesses/><Categories></Categories><Views/>`),
			want: nil,
		},
		{
			name: "no modification: updated is submission",
			xml: cweCatalogXML(`<Weaknesses><Weakness ID="5" Name="N" Abstraction="Base" Status="Draft">` +
				`<Description>D.</Description>` + cweHistory("2006-07-19") + `</Weakness></Weaknesses>`),
			want: []index.CWE{{Name: "CWE-5", Description: "D.", Type: "Weakness Base",
				CreatedAt: "2006-07-19 00:00:00Z", UpdatedAt: "2006-07-19 00:00:00Z"}},
		},
		{
			name: "modifications out of order: latest wins",
			xml: cweCatalogXML(`<Weaknesses><Weakness ID="6" Abstraction="Class">` +
				`<Description>D.</Description>` +
				cweHistory("2006-07-19", "2010-02-16", "2023-06-29", "2008-09-08", "2019-01-03") +
				`</Weakness></Weaknesses>`),
			want: []index.CWE{{Name: "CWE-6", Description: "D.", Type: "Weakness Class",
				CreatedAt: "2006-07-19 00:00:00Z", UpdatedAt: "2023-06-29 00:00:00Z"}},
		},
		{
			name: "whitespace collapsed, nested markup flattened, nested descriptions ignored",
			xml: cweCatalogXML(`<Weaknesses><Weakness ID="7" Abstraction="Variant">` +
				`<Potential_Mitigations><Mitigation><Description>Not this.</Description></Mitigation></Potential_Mitigations>` +
				"<Description>\n\t\t  First   line\r\n\tsecond\u00a0line <xhtml:p>para <xhtml:b>bold</xhtml:b>tail</xhtml:p>" +
				"<xhtml:p>next</xhtml:p><!-- comment --><![CDATA[ <raw> ]]>&amp; end \n</Description>" +
				`<Weakness_Ordinalities><Weakness_Ordinality><Description>Nor this.</Description></Weakness_Ordinality></Weakness_Ordinalities>` +
				cweHistory(" 2006-07-19\n", "\t2007-01-01 ") + `</Weakness></Weaknesses>`),
			want: []index.CWE{{Name: "CWE-7",
				// U+00A0 is whitespace to strings.Fields.
				// Adjacent elements are not separated: character data only.
				Description: "First line second line para boldtailnext <raw> & end",
				Type:        "Weakness Variant",
				CreatedAt:   "2006-07-19 00:00:00Z", UpdatedAt: "2007-01-01 00:00:00Z"}},
		},
		{
			name: "every kind, deprecated included, missing descriptions empty, catalog order",
			xml: cweCatalogXML(
				`<Weaknesses>` +
					`<Weakness ID="99" Abstraction="Pillar" Status="Deprecated">` + cweHistory("2001-01-01") + `</Weakness>` +
					`<Weakness ID="10" Abstraction="Compound"><Description/>` + cweHistory("2001-01-02") + `</Weakness>` +
					`<Weakness ID="11" Abstraction="Frobnicated"><Description>U.</Description>` + cweHistory("2001-01-03") + `</Weakness>` +
					`<Unknown ID="x"/>` +
					`</Weaknesses>` +
					`<Categories><Category ID="1" Status="Deprecated"><Summary> S. </Summary>` +
					`<Description>not a category's</Description>` + cweHistory("2002-01-01", "2003-01-01") + `</Category></Categories>` +
					`<Views><View ID="1000" Type="Graph"><Objective>O.</Objective><Description>no</Description>` +
					cweHistory("2004-01-01") + `</View></Views>` +
					`<Something_New><Weakness ID="abc"/></Something_New>`),
			want: []index.CWE{
				{Name: "CWE-99", Type: "Weakness Pillar", CreatedAt: "2001-01-01 00:00:00Z", UpdatedAt: "2001-01-01 00:00:00Z"},
				{Name: "CWE-10", Type: "Weakness Compound", CreatedAt: "2001-01-02 00:00:00Z", UpdatedAt: "2001-01-02 00:00:00Z"},
				{Name: "CWE-11", Description: "U.", Type: "Weakness Frobnicated", CreatedAt: "2001-01-03 00:00:00Z", UpdatedAt: "2001-01-03 00:00:00Z"},
				{Name: "CWE-1", Description: "S.", Type: "Category", CreatedAt: "2002-01-01 00:00:00Z", UpdatedAt: "2003-01-01 00:00:00Z"},
				{Name: "CWE-1000", Description: "O.", Type: "View", CreatedAt: "2004-01-01 00:00:00Z", UpdatedAt: "2004-01-01 00:00:00Z"},
			},
		},
		{
			name: "leading zeros name the same CWE",
			xml: cweCatalogXML(`<Weaknesses><Weakness ID="0079" Abstraction="Base">` +
				cweHistory("2006-07-19") + `</Weakness></Weaknesses>`),
			want: []index.CWE{{Name: "CWE-79", Type: "Weakness Base",
				CreatedAt: "2006-07-19 00:00:00Z", UpdatedAt: "2006-07-19 00:00:00Z"}},
		},
		{
			name: "no namespace",
			xml: `<Weakness_Catalog><Views><View ID="2"><Objective>O</Objective>` +
				cweHistory("2020-02-29") + `</View></Views></Weakness_Catalog>`,
			want: []index.CWE{{Name: "CWE-2", Description: "O", Type: "View",
				CreatedAt: "2020-02-29 00:00:00Z", UpdatedAt: "2020-02-29 00:00:00Z"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeCWECatalog(strings.NewReader(tt.xml))
			if err != nil {
				t.Fatalf("decodeCWECatalog: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeCWECatalogErrors(t *testing.T) {
	weakness := func(attrs, body string) string {
		return cweCatalogXML(`<Weaknesses><Weakness ` + attrs + `>` + body + `</Weakness></Weaknesses>`)
	}
	good := weakness(`ID="5" Abstraction="Base"`, `<Description>D</Description>`+cweHistory("2006-07-19"))
	tests := []struct {
		name string
		xml  string
		want string // the whole error
	}{
		{
			name: "bad id",
			xml:  weakness(`ID="12a" Abstraction="Base"`, cweHistory("2006-07-19")),
			want: `loader: cwe catalog: Weakness ID "12a": id is not a decimal integer`,
		},
		{
			name: "negative id",
			xml:  cweCatalogXML(`<Categories><Category ID="-3">` + cweHistory("2006-07-19") + `</Category></Categories>`),
			want: `loader: cwe catalog: Category ID "-3": id is not a decimal integer`,
		},
		{
			name: "empty id",
			xml:  cweCatalogXML(`<Views><View ID="">` + cweHistory("2006-07-19") + `</View></Views>`),
			want: `loader: cwe catalog: View ID "": id is not a decimal integer`,
		},
		{
			name: "huge id",
			xml:  weakness(`ID="99999999999999999999" Abstraction="Base"`, cweHistory("2006-07-19")),
			want: `loader: cwe catalog: Weakness ID "99999999999999999999": id is not a decimal integer`,
		},
		{
			name: "missing id",
			xml:  weakness(`Abstraction="Base"`, cweHistory("2006-07-19")),
			want: `loader: cwe catalog: Weakness: missing ID attribute`,
		},
		{
			name: "bad submission date",
			xml:  weakness(`ID="5" Abstraction="Base"`, cweHistory("2006-02-30")),
			want: `loader: cwe catalog: CWE-5: bad Submission_Date: "2006-02-30" is not a YYYY-MM-DD date`,
		},
		{
			name: "bad modification date",
			xml:  weakness(`ID="5" Abstraction="Base"`, cweHistory("2006-07-19", "2007-01-01", "yesterday")),
			want: `loader: cwe catalog: CWE-5: bad Modification_Date: "yesterday" is not a YYYY-MM-DD date`,
		},
		{
			name: "empty modification date",
			xml:  weakness(`ID="5" Abstraction="Base"`, cweHistory("2006-07-19", "")),
			want: `loader: cwe catalog: CWE-5: bad Modification_Date: "" is not a YYYY-MM-DD date`,
		},
		{
			name: "date with time",
			xml:  weakness(`ID="5" Abstraction="Base"`, cweHistory("2006-07-19T00:00:00Z")),
			want: `loader: cwe catalog: CWE-5: bad Submission_Date: "2006-07-19T00:00:00Z" is not a YYYY-MM-DD date`,
		},
		{
			name: "modification without date",
			xml: weakness(`ID="5" Abstraction="Base"`,
				`<Content_History><Submission><Submission_Date>2006-07-19</Submission_Date></Submission><Modification/></Content_History>`),
			want: `loader: cwe catalog: CWE-5: modification without Modification_Date`,
		},
		{
			name: "missing submission date",
			xml: weakness(`ID="5" Abstraction="Base"`,
				`<Content_History><Submission><Submission_Name>X</Submission_Name></Submission></Content_History>`),
			want: `loader: cwe catalog: CWE-5: submission without Submission_Date`,
		},
		{
			name: "missing content history",
			xml:  weakness(`ID="5" Abstraction="Base"`, `<Description>D</Description>`),
			want: `loader: cwe catalog: CWE-5: missing Content_History/Submission/Submission_Date`,
		},
		{
			name: "two submissions",
			xml: weakness(`ID="5" Abstraction="Base"`,
				`<Content_History><Submission><Submission_Date>2006-07-19</Submission_Date></Submission>`+
					`<Submission><Submission_Date>2006-07-20</Submission_Date></Submission></Content_History>`),
			want: `loader: cwe catalog: CWE-5: more than one Submission_Date`,
		},
		{
			name: "missing abstraction",
			xml:  weakness(`ID="5"`, cweHistory("2006-07-19")),
			want: `loader: cwe catalog: CWE-5: weakness without Abstraction attribute`,
		},
		{
			name: "empty abstraction",
			xml:  weakness(`ID="5" Abstraction=" "`, cweHistory("2006-07-19")),
			want: `loader: cwe catalog: CWE-5: weakness with empty Abstraction attribute`,
		},
		{
			name: "duplicate id across kinds",
			xml: cweCatalogXML(`<Weaknesses><Weakness ID="5" Abstraction="Base">` + cweHistory("2006-07-19") + `</Weakness></Weaknesses>` +
				`<Categories><Category ID="005">` + cweHistory("2006-07-19") + `</Category></Categories>`),
			want: `loader: cwe catalog: CWE-5: duplicate ID "005"`,
		},
		{
			name: "wrong root",
			xml:  `<?xml version="1.0"?><Attack_Pattern_Catalog><Weaknesses/></Attack_Pattern_Catalog>`,
			want: `loader: cwe catalog: root element is <Attack_Pattern_Catalog>, want <Weakness_Catalog>`,
		},
		{
			name: "not xml",
			xml:  `{"CVE_Items": []}`,
			want: `loader: cwe catalog: text outside the root element`,
		},
		{
			name: "empty input",
			xml:  ``,
			want: `loader: cwe catalog: no <Weakness_Catalog> element`,
		},
		{
			name: "only a declaration",
			xml:  `<?xml version="1.0"?>` + "\n",
			want: `loader: cwe catalog: no <Weakness_Catalog> element`,
		},
		{
			name: "second root",
			xml:  good + `<Weakness_Catalog/>`,
			want: `loader: cwe catalog: after CWE-5: element <Weakness_Catalog> after the root element`,
		},
		{
			name: "truncated inside an entry",
			xml:  good[:strings.Index(good, "</Description>")],
			want: `loader: cwe catalog: CWE-5: XML syntax error on line 1: unexpected EOF`,
		},
		{
			name: "truncated after an entry",
			xml:  good[:strings.Index(good, "</Weaknesses>")],
			want: `loader: cwe catalog: after CWE-5: XML syntax error on line 1: unexpected EOF`,
		},
		{
			name: "truncated in external references",
			xml:  good[:strings.Index(good, "</External_References>")],
			want: `loader: cwe catalog: after CWE-5: XML syntax error on line 1: unexpected EOF`,
		},
		{
			name: "mismatched tag",
			xml:  weakness(`ID="5" Abstraction="Base"`, `<Description>D</Summary>`+cweHistory("2006-07-19")),
			want: `loader: cwe catalog: CWE-5: XML syntax error on line 1: element <Description> closed by </Summary>`,
		},
		{
			name: "bad entity",
			xml:  weakness(`ID="5" Abstraction="Base"`, `<Description>&bogus;</Description>`+cweHistory("2006-07-19")),
			want: `loader: cwe catalog: CWE-5: XML syntax error on line 1: invalid character entity &bogus;`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := decodeCWECatalog(strings.NewReader(tt.xml))
			if err == nil {
				t.Fatalf("decodeCWECatalog succeeded with %v, want error %q", got, tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("error = %q\nwant    %q", err, tt.want)
			}
		})
	}
}

// TestReadCWECatalogFile checks that ReadCWECatalog takes any input
// format and names the file in its errors.
func TestReadCWECatalogFile(t *testing.T) {
	doc := cweCatalogXML(`<Weaknesses><Weakness ID="5" Abstraction="Base"><Description>D</Description>` +
		cweHistory("2006-07-19", "2010-01-01") + `</Weakness></Weaknesses>`)
	want := []index.CWE{{Name: "CWE-5", Description: "D", Type: "Weakness Base",
		CreatedAt: "2006-07-19 00:00:00Z", UpdatedAt: "2010-01-01 00:00:00Z"}}
	for name, data := range map[string][]byte{
		"cwec.xml":     []byte(doc),
		"cwec.xml.gz":  inputGzip(t, []byte(doc)),
		"cwec.xml.zst": inputZstd(t, []byte(doc)),
		"cwec.xml.zip": inputZip(t, inputZipEntry{"cwec_v4.15.xml", []byte(doc)}),
	} {
		t.Run(name, func(t *testing.T) {
			got, err := ReadCWECatalog(writeInputFile(t, name, data))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}

	t.Run("entry error names the file", func(t *testing.T) {
		bad := strings.Replace(doc, "2010-01-01", "2010-01-32", 1)
		path := writeInputFile(t, "cwec.xml.gz", inputGzip(t, []byte(bad)))
		_, err := ReadCWECatalog(path)
		want := `loader: cwe catalog ` + path + `: CWE-5: bad Modification_Date: "2010-01-32" is not a YYYY-MM-DD date`
		if err == nil || err.Error() != want {
			t.Errorf("error = %v\nwant    %s", err, want)
		}
	})

	t.Run("missing file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "cwec.xml.zip")
		_, err := ReadCWECatalog(path)
		if err == nil || !strings.HasPrefix(err.Error(), "loader: open "+path+": ") {
			t.Errorf("error = %v, want loader: open %s: ...", err, path)
		}
	})

	t.Run("truncated gzip", func(t *testing.T) {
		gz := inputGzip(t, []byte(strings.Repeat(" ", 1000)+doc))
		path := writeInputFile(t, "cwec.xml.gz", gz[:len(gz)-10])
		_, err := ReadCWECatalog(path)
		if err == nil || !strings.HasPrefix(err.Error(), "loader: read "+path+": ") {
			t.Errorf("error = %v, want loader: read %s: ...", err, path)
		}
	})

	t.Run("not xml", func(t *testing.T) {
		path := writeInputFile(t, "cwec.xml", []byte("\x00\x01 binary junk"))
		_, err := ReadCWECatalog(path)
		if err == nil || !strings.HasPrefix(err.Error(), "loader: cwe catalog "+path+": ") {
			t.Errorf("error = %v, want loader: cwe catalog %s: ...", err, path)
		}
	})

	t.Run("empty file", func(t *testing.T) {
		path := writeInputFile(t, "cwec.xml", nil)
		_, err := ReadCWECatalog(path)
		want := "loader: cwe catalog " + path + ": no <Weakness_Catalog> element"
		if err == nil || err.Error() != want {
			t.Errorf("error = %v\nwant    %s", err, want)
		}
	})
}
