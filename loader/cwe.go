package loader

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/vulnd/vulnd/index"
)

// ReadCWECatalog reads MITRE's CWE catalog (cwec_vX.Y.xml) from path,
// plain or compressed (see openInput: .xml, .xml.zip, .xml.gz, .xml.zst),
// and returns one entry per weakness, category and view, deprecated ones
// included, in catalog order. The document is streamed, never held in
// memory whole. Errors read "loader: cwe catalog PATH: CWE-N: problem".
func ReadCWECatalog(path string) ([]index.CWE, error) {
	cwes, _, _, err := readCWECatalog(path)
	return cwes, err
}

// readCWECatalog is ReadCWECatalog, also returning the file's size and
// SHA-256 and the catalog's Date (see decodeCWEStream).
func readCWECatalog(path string) ([]index.CWE, FileInfo, string, error) {
	rc, err := openInput(path)
	if err != nil {
		return nil, FileInfo{}, "", err
	}
	defer rc.Close()
	var date string
	cwes, err := decodeCWEStream(rc, "cwe catalog "+path, &date)
	if err != nil {
		return nil, FileInfo{}, "", err
	}
	fi, err := rc.Sum()
	return cwes, fi, date, err
}

// decodeCWECatalog decodes a CWE catalog XML document from r; see
// ReadCWECatalog. Its errors read "loader: cwe catalog: CWE-N: problem".
func decodeCWECatalog(r io.Reader) ([]index.CWE, error) {
	return decodeCWEStream(r, "cwe catalog", nil)
}

// CWE catalog element names (local names; the namespace is ignored).
const (
	cweRoot = "Weakness_Catalog"

	cweWeaknesses = "Weaknesses"
	cweCategories = "Categories"
	cweViews      = "Views"

	cweWeakness = "Weakness"
	cweCategory = "Category"
	cweView     = "View"
)

// cweSections maps each catalog section to the element of its entries.
var cweSections = map[string]string{
	cweWeaknesses: cweWeakness,
	cweCategories: cweCategory,
	cweViews:      cweView,
}

// xmlCWEEntry is the part of a <Weakness>, <Category> or <View> element
// that the index keeps. The attributes are read from the start element
// before decoding; every other child is skipped by encoding/xml.
type xmlCWEEntry struct {
	Description *cweText        `xml:"Description"` // weaknesses
	Summary     *cweText        `xml:"Summary"`     // categories
	Objective   *cweText        `xml:"Objective"`   // views
	History     []xmlCWEHistory `xml:"Content_History"`
}

type xmlCWEHistory struct {
	Submissions   []xmlCWEDated `xml:"Submission"`
	Modifications []xmlCWEDated `xml:"Modification"`
}

// xmlCWEDated is a <Submission> or a <Modification>: only its date
// matters. A nil field means the element has no date.
type xmlCWEDated struct {
	SubmissionDate   *string `xml:"Submission_Date"`
	ModificationDate *string `xml:"Modification_Date"`
}

// cweText is the character data of an element and of all the elements
// nested in it, in document order, with every run of whitespace collapsed
// to one space and the ends trimmed.
type cweText string

// UnmarshalXML implements xml.Unmarshaler.
func (t *cweText) UnmarshalXML(d *xml.Decoder, start xml.StartElement) error {
	var b strings.Builder
	for depth := 0; ; {
		tok, err := d.Token()
		if err != nil {
			return err
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			depth++
		case xml.EndElement:
			if depth == 0 {
				*t = cweText(collapseCWESpace(b.String()))
				return nil
			}
			depth--
		case xml.CharData:
			b.Write(tok)
		}
	}
}

// collapseCWESpace replaces every run of whitespace in s with one space and
// trims both ends.
func collapseCWESpace(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// cweError is a problem with the catalog, reported by decodeCWEStream with
// its label ("cwe catalog PATH") and entry.
type cweError struct {
	label string // "cwe catalog PATH"
	entry string // "CWE-123", "Weakness ID \"x\"" or ""
	err   error
}

func (e *cweError) Error() string {
	if e.entry == "" {
		return fmt.Sprintf("loader: %s: %v", e.label, e.err)
	}
	return fmt.Sprintf("loader: %s: %s: %v", e.label, e.entry, e.err)
}

func (e *cweError) Unwrap() error { return e.err }

// decodeCWEStream streams the catalog from r. label names the input in
// errors. When date is not nil, it is set to the root element's Date
// attribute (the catalog's release, YYYY-MM-DD), "" when the catalog has
// none or it is not a date: the catalog's entries are what a build
// needs, its date only tells how current it is.
func decodeCWEStream(r io.Reader, label string, date *string) ([]index.CWE, error) {
	fail := func(entry string, err error) ([]index.CWE, error) {
		// Read errors from openInput already name the file.
		var ie *inputError
		if errors.As(err, &ie) {
			return nil, ie
		}
		return nil, &cweError{label: label, entry: entry, err: err}
	}
	d := xml.NewDecoder(r)
	var (
		out     []index.CWE
		seen    = make(map[int]bool)
		depth   int    // elements open around the decoder's position
		section string // entry element of the open section, at depth 2
		sawRoot bool
		last    string // last entry decoded, for syntax errors between entries
	)
	where := func() string {
		if last == "" {
			return ""
		}
		return "after " + last
	}
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fail(where(), err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			switch depth {
			case 0:
				if sawRoot {
					return fail(where(), fmt.Errorf("element <%s> after the root element", tok.Name.Local))
				}
				if tok.Name.Local != cweRoot {
					return fail("", fmt.Errorf("root element is <%s>, want <%s>", tok.Name.Local, cweRoot))
				}
				sawRoot = true
				depth++
				if date != nil {
					*date = cweCatalogDate(tok)
				}
			case 1:
				entry, ok := cweSections[tok.Name.Local]
				if !ok {
					// External_References and anything else.
					if err := d.Skip(); err != nil {
						return fail(where(), err)
					}
					continue
				}
				section = entry
				depth++
			default: // 2: inside a section
				if tok.Name.Local != section {
					if err := d.Skip(); err != nil {
						return fail(where(), err)
					}
					continue
				}
				c, name, err := decodeCWEEntry(d, tok, seen)
				if err != nil {
					return fail(name, err)
				}
				out = append(out, c)
				last = name
			}
		case xml.EndElement:
			depth--
		case xml.CharData:
			if depth == 0 && len(strings.TrimSpace(string(tok))) > 0 {
				return fail(where(), errors.New("text outside the root element"))
			}
		}
	}
	if !sawRoot {
		return fail("", fmt.Errorf("no <%s> element", cweRoot))
	}
	return out, nil
}

// decodeCWEEntry decodes the <Weakness>, <Category> or <View> element that
// start opens. It returns the entry and its name for errors (the CWE name
// once the ID is known).
func decodeCWEEntry(d *xml.Decoder, start xml.StartElement, seen map[int]bool) (index.CWE, string, error) {
	kind := start.Name.Local
	var idAttr, abstraction *string
	for i := range start.Attr {
		a := &start.Attr[i]
		switch a.Name.Local {
		case "ID":
			idAttr = &a.Value
		case "Abstraction":
			abstraction = &a.Value
		}
	}
	if idAttr == nil {
		return index.CWE{}, kind, errors.New("missing ID attribute")
	}
	id, ok := parseCWEID(*idAttr)
	if !ok {
		return index.CWE{}, fmt.Sprintf("%s ID %q", kind, *idAttr), errors.New("id is not a decimal integer")
	}
	name := "CWE-" + strconv.Itoa(id)

	var x xmlCWEEntry
	if err := d.DecodeElement(&x, &start); err != nil {
		return index.CWE{}, name, err
	}
	if seen[id] {
		return index.CWE{}, name, fmt.Errorf("duplicate ID %q", *idAttr)
	}
	seen[id] = true

	c := index.CWE{Name: name}
	var desc *cweText
	switch kind {
	case cweWeakness:
		if abstraction == nil {
			return index.CWE{}, name, errors.New("weakness without Abstraction attribute")
		}
		a := strings.TrimSpace(*abstraction)
		if a == "" {
			return index.CWE{}, name, errors.New("weakness with empty Abstraction attribute")
		}
		c.Type = "Weakness " + a
		desc = x.Description
	case cweCategory:
		c.Type = "Category"
		desc = x.Summary
	case cweView:
		c.Type = "View"
		desc = x.Objective
	}
	if desc != nil {
		c.Description = string(*desc)
	}

	var created, updated string
	for _, h := range x.History {
		for _, s := range h.Submissions {
			if s.SubmissionDate == nil {
				return index.CWE{}, name, errors.New("submission without Submission_Date")
			}
			if created != "" {
				return index.CWE{}, name, errors.New("more than one Submission_Date")
			}
			date, err := parseCWEDate(*s.SubmissionDate)
			if err != nil {
				return index.CWE{}, name, fmt.Errorf("bad Submission_Date: %w", err)
			}
			created = date
		}
		for _, m := range h.Modifications {
			if m.ModificationDate == nil {
				return index.CWE{}, name, errors.New("modification without Modification_Date")
			}
			date, err := parseCWEDate(*m.ModificationDate)
			if err != nil {
				return index.CWE{}, name, fmt.Errorf("bad Modification_Date: %w", err)
			}
			// The dates are all YYYY-MM-DD, so they sort as strings.
			if date > updated {
				updated = date
			}
		}
	}
	if created == "" {
		return index.CWE{}, name, errors.New("missing Content_History/Submission/Submission_Date")
	}
	if updated == "" {
		updated = created
	}
	c.CreatedAt = created + " 00:00:00Z"
	c.UpdatedAt = updated + " 00:00:00Z"
	return c, name, nil
}

// parseCWEID parses a catalog ID attribute: one to nine decimal digits.
func parseCWEID(s string) (int, bool) {
	return index.CWENumber("CWE-" + s)
}

// parseCWEDate validates a catalog date (YYYY-MM-DD, surrounding
// whitespace allowed) and returns it in canonical form.
func parseCWEDate(s string) (string, error) {
	s = strings.TrimSpace(s)
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return "", fmt.Errorf("%q is not a YYYY-MM-DD date", s)
	}
	return t.Format(time.DateOnly), nil
}

// cweCatalogDate is the Date attribute of the catalog's root element, ""
// when it has none or it is not a YYYY-MM-DD date.
func cweCatalogDate(root xml.StartElement) string {
	for _, a := range root.Attr {
		if a.Name.Local == "Date" && a.Name.Space == "" {
			if d, err := parseCWEDate(a.Value); err == nil {
				return d
			}
		}
	}
	return ""
}
