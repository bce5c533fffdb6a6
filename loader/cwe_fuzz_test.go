package loader

import (
	"strings"
	"testing"
	"time"
)

// FuzzDecodeCWECatalog feeds arbitrary documents to decodeCWECatalog: it
// must never panic, and whatever it accepts must be well formed.
func FuzzDecodeCWECatalog(f *testing.F) {
	f.Add(cweCatalogXML(`<Weaknesses><Weakness ID="5" Abstraction="Base"><Description>D <xhtml:p>p</xhtml:p></Description>` +
		cweHistory("2006-07-19", "2010-01-01", "2008-01-01") + `</Weakness></Weaknesses>`))
	f.Add(cweCatalogXML(`<Categories><Category ID="1"><Summary>S</Summary>` + cweHistory("2002-01-01") +
		`</Category></Categories><Views><View ID="1000"><Objective>O</Objective>` + cweHistory("2004-01-01") + `</View></Views>`))
	f.Add(`<Weakness_Catalog><Weaknesses><Weakness ID="12a"/></Weaknesses></Weakness_Catalog>`)
	f.Add(`<Weakness_Catalog><Weaknesses><Weakness ID="1" Abstraction="X"><Content_History><Submission>` +
		`<Submission_Date>2006-02-30</Submission_Date></Submission></Content_History></Weakness></Weaknesses></Weakness_Catalog>`)
	f.Add(`<?xml version="1.0"?><Weakness_Catalog><Views><View ID="2"><Objective><![CDATA[x]]>&amp;</Objective>`)
	f.Add(`not xml at all`)
	f.Add(``)
	f.Fuzz(func(t *testing.T, doc string) {
		cwes, err := decodeCWECatalog(strings.NewReader(doc))
		if err != nil {
			if !strings.HasPrefix(err.Error(), "loader: cwe catalog: ") {
				t.Errorf("error %q lacks the loader prefix", err)
			}
			return
		}
		seen := make(map[string]bool)
		for _, c := range cwes {
			if !strings.HasPrefix(c.Name, "CWE-") || seen[c.Name] {
				t.Errorf("bad or duplicate name %q", c.Name)
			}
			seen[c.Name] = true
			if c.Type != "Category" && c.Type != "View" && !strings.HasPrefix(c.Type, "Weakness ") {
				t.Errorf("%s: bad type %q", c.Name, c.Type)
			}
			for _, ts := range []string{c.CreatedAt, c.UpdatedAt} {
				if _, err := time.Parse("2006-01-02 15:04:05Z", ts); err != nil {
					t.Errorf("%s: bad timestamp %q", c.Name, ts)
				}
			}
			// updated_at may precede created_at: the catalog's own
			// dates are taken as they are.
			if c.Description != strings.Join(strings.Fields(c.Description), " ") {
				t.Errorf("%s: description not collapsed: %q", c.Name, c.Description)
			}
		}
	})
}
