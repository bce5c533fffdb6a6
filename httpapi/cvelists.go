package httpapi

import (
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/goccy/go-json"

	"github.com/vulnd/vulnd/index"
)

// The four CVE lists (/cve, /cwe/{n}/cve, /vendors/{v}/cve and
// /vendors/{v}/products/{p}/cve) take the same since filters and the
// ndjson format; /cve also takes cwe, vendor and product. Each filter
// narrows the list by a prefix cut or an intersection (see index/filter.go).

// cveFilters narrows l by kev, updated_since and published_since and answers it
// as a page or, with format=ndjson, as the whole list.
func (c *call) cveFilters(l index.CVEList) (result, error) {
	raw := c.r.URL.RawQuery
	if v, ok, err := queryValue(raw, "kev"); err != nil {
		return result{}, err
	} else if ok {
		switch {
		case equalFoldASCII(v, "true"):
			l = l.WithKEV(true)
			c.keep("kev", "true")
		case equalFoldASCII(v, "false"):
			l = l.WithKEV(false)
			c.keep("kev", "false")
		default:
			return result{}, errBadKEV
		}
	}
	for _, f := range [...]struct {
		key string
		err *apiError
		cut func(index.CVEList, uint64) index.CVEList
	}{
		{"updated_since", errBadUpdatedSince, index.CVEList.UpdatedSince},
		{"published_since", errBadPublishedSince, index.CVEList.PublishedSince},
	} {
		v, ok, err := queryValue(raw, f.key)
		if err != nil {
			return result{}, err
		}
		if !ok {
			continue
		}
		t, ok := parseTime(v)
		if !ok {
			return result{}, f.err
		}
		l = f.cut(l, index.TimeKey(t))
		c.keep(f.key, v)
	}
	format, ok, err := queryValue(raw, "format")
	if err != nil {
		return result{}, err
	}
	switch {
	case !ok || format == "json":
		return c.page(l.List)
	case format == "ndjson":
		if _, err := parsePage(raw); err != nil {
			return result{}, err
		}
		c.listed = listed{l: l.Bodies(), ndjson: true}
		return result{list: &c.listed}, nil
	}
	return result{}, errBadFormat
}

// keep adds a query parameter to those the Link header's pages keep.
func (c *call) keep(key, value string) {
	c.linkParams += key + "=" + url.QueryEscape(value) + "&"
}

// cveList is /cve: every CVE, narrowed by cvss, cwe, vendor and product
// (product needs vendor) or, with version, the product's CVEs covering
// that version (version needs vendor and product), then by the since
// filters.
func cveList(c *call) (result, error) {
	raw := c.r.URL.RawQuery
	b, err := parseBand(raw)
	if err != nil {
		return result{}, err
	}
	c.linkParams = bandParams[b]
	cwe, hasCWE, err := queryValue(raw, "cwe")
	if err != nil {
		return result{}, err
	}
	vendor, hasVendor, err := queryValue(raw, "vendor")
	if err != nil {
		return result{}, err
	}
	product, hasProduct, err := queryValue(raw, "product")
	if err != nil {
		return result{}, err
	}
	if hasProduct && !hasVendor {
		return result{}, errProductNeedsVendor
	}
	version, hasVersion, err := queryValue(raw, "version")
	if err != nil {
		return result{}, err
	}
	if hasVersion {
		if !hasProduct {
			return result{}, errVersionNeedsProduct
		}
		if version == "" || len(version) > maxVersion {
			return result{}, errBadVersion
		}
	}
	// A filter naming no CWE, vendor or product selects nothing. The
	// vendor's (or product's) list is narrowed by the CWE and then the
	// band CVE by CVE, which costs what the vendor's list costs; a CWE or
	// band alone is its own list. A CWE list much shorter than the
	// vendor's is intersected with it instead.
	var cweList, vendorList index.CVEList
	if hasCWE {
		m, err := c.ix.CWECVEs(cwe)
		if err != nil {
			m = c.ix.NoCVEs()
		}
		cweList = m
		c.keep("cwe", cwe)
	}
	if hasVendor {
		var m index.CVEList
		switch {
		case hasVersion:
			m, err = c.ix.ProductCVEsAt(vendor, product, version)
		case hasProduct:
			m, err = c.ix.ProductCVEs(vendor, product)
		default:
			m, err = c.ix.VendorCVEs(vendor)
		}
		if err != nil {
			m = c.ix.NoCVEs()
		}
		vendorList = m
		c.keep("vendor", vendor)
		if hasProduct {
			c.keep("product", product)
		}
		if hasVersion {
			c.keep("version", version)
		}
	}
	var l index.CVEList
	switch {
	case !hasVendor && !hasCWE:
		l = c.ix.CVEs(b)
	case !hasVendor:
		l = cweList.InBand(b)
	case !hasCWE:
		l = vendorList.InBand(b)
	case cweList.Len() < vendorList.Len()/8:
		l = cweList.And(vendorList).InBand(b)
	default:
		l, _ = vendorList.CitingCWE(cwe) // no such CWE: no CVE
		l = l.InBand(b)
	}
	return c.cveFilters(l)
}

func cweCVEs(c *call) (result, error) {
	if err := c.checkPage(); err != nil {
		return result{}, err
	}
	if err := refuseVersion(c); err != nil {
		return result{}, err
	}
	l, err := c.ix.CWECVEs(c.param("name"))
	if err != nil {
		return result{}, err
	}
	return c.cveFilters(l)
}

func vendorCVEs(c *call) (result, error) {
	if err := c.checkPage(); err != nil {
		return result{}, err
	}
	if err := refuseVersion(c); err != nil {
		return result{}, err
	}
	l, err := c.ix.VendorCVEs(c.param("vendor"))
	if err != nil {
		return result{}, err
	}
	return c.cveFilters(l)
}

// maxVersion is the longest version parameter taken.
const maxVersion = 256

// The errors of the version parameter beside errBadVersion: it is taken
// only by a product's CVE list and by /cve with vendor and product.
var (
	errVersionNeedsProduct = newAPIError(http.StatusBadRequest, "version needs vendor and product")
	errVersionNotHere      = newAPIError(http.StatusBadRequest, "version is taken only by /vendors/{vendor}/products/{product}/cve and by /cve with vendor and product")
)

// refuseVersion answers a version parameter on a CVE list that has no
// product to match it against (/cwe/{name}/cve, /vendors/{vendor}/cve):
// a 400 rather than the whole list, which would read as "all affected".
func refuseVersion(c *call) error {
	_, ok, err := queryValue(c.r.URL.RawQuery, "version")
	if err != nil {
		return err
	}
	if ok {
		return errVersionNotHere
	}
	return nil
}

// productCVEs is a product's CVE list; with version=, only the CVEs whose
// vulnerable CPE matches cover that version.
func productCVEs(c *call) (result, error) {
	if err := c.checkPage(); err != nil {
		return result{}, err
	}
	version, hasVersion, err := queryValue(c.r.URL.RawQuery, "version")
	if err != nil {
		return result{}, err
	}
	if hasVersion && (version == "" || len(version) > maxVersion) {
		return result{}, errBadVersion
	}
	vendor, product := c.param("vendor"), c.param("product")
	var l index.CVEList
	if hasVersion {
		l, err = c.ix.ProductCVEsAt(vendor, product, version)
		c.keep("version", version)
	} else {
		l, err = c.ix.ProductCVEs(vendor, product)
	}
	if err != nil {
		return result{}, err
	}
	return c.cveFilters(l)
}

var ndjsonType = []string{"application/x-ndjson"}

// streamChunk is how much of an ndjson export is written at a time; each
// write gets writeGrace more to finish, so a long export is bounded by the
// client's pace, not by the server's WriteTimeout.
const (
	streamChunk = 256 << 10
	writeGrace  = 30 * time.Second
)

// streamSize is the length of l's NDJSON export: each body and a newline.
func streamSize(l index.List) int {
	size := 0
	for i := 0; i < l.Len(); i++ {
		size += len(l.Item(i)) + 1
	}
	return size
}

// stream writes l, a list of full CVE bodies, as NDJSON: one body and a
// newline each, through c.buf in pieces of about streamChunk bytes, each
// with a fresh write deadline, so a large export to a slow client is not
// cut by the server's WriteTimeout while it keeps reading. It returns the
// bytes written; it stops at the first failed write.
func (c *call) stream(w http.ResponseWriter, l index.List) (n int) {
	rc := http.NewResponseController(w)
	buf := c.buf[:0]
	flush := func() bool {
		rc.SetWriteDeadline(time.Now().Add(writeGrace)) // not every writer can; then the server's limit holds
		m, err := w.Write(buf)
		n += m
		buf = buf[:0]
		return err == nil
	}
	for i := 0; i < l.Len(); i++ {
		buf = append(buf, l.Item(i)...)
		buf = append(buf, '\n')
		if len(buf) >= streamChunk && !flush() {
			break
		}
	}
	if len(buf) > 0 {
		flush()
	}
	c.buf = buf
	return n
}

// batchBodyErr is the answer to a batch body that failed to read or
// decode: 413 once the body passed maxBatchBody, else 400.
func batchBodyErr(err error) error {
	if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
		return errBatchTooBig
	}
	return errBadBatchBody
}

// errAfterObject is onlySpace's answer to a byte that is not JSON
// whitespace.
var errAfterObject = errors.New("httpapi: more than whitespace after the JSON object")

// onlySpace reads r to its end and fails at the first byte that is not
// JSON whitespace (errAfterObject), or with r's error. Reading in order,
// a body already wrong within its first maxBatchBody bytes is refused as
// wrong, one longer than that which was not as too long.
func onlySpace(r io.Reader) error {
	var buf [4096]byte
	for {
		n, err := r.Read(buf[:])
		for _, b := range buf[:n] {
			if b != ' ' && b != '\t' && b != '\r' && b != '\n' {
				return errAfterObject
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// maxBatch is the most names one batch lookup takes; maxBatchBody bounds
// its POST body.
const (
	maxBatch     = 1000
	maxBatchBody = 256 << 10
)

// cveBatch answers GET /cve/batch?names=a,b and POST /cve/batch with
// {"names": [...]}: {"cves": [full CVE objects in the order asked],
// "missing": [names not found, as given]}. A name asked twice is answered
// once, where it was first asked.
func cveBatch(c *call) (result, error) {
	var names []string
	if c.r.Method == http.MethodPost {
		body := http.MaxBytesReader(nil, c.r.Body, maxBatchBody)
		var req struct {
			Names *[]string `json:"names"`
		}
		dec := json.NewDecoder(body)
		if err := dec.Decode(&req); err != nil {
			return result{}, batchBodyErr(err)
		}
		if err := onlySpace(io.MultiReader(dec.Buffered(), body)); err != nil {
			return result{}, batchBodyErr(err)
		}
		if req.Names == nil {
			return result{}, errBadBatchBody
		}
		names = *req.Names
	} else {
		v, ok, err := queryValue(c.r.URL.RawQuery, "names")
		if err != nil {
			return result{}, err
		}
		if !ok {
			return result{}, errBatchNames
		}
		for v != "" {
			var name string
			name, v, _ = strings.Cut(v, ",")
			if name = strings.TrimSpace(name); name != "" {
				names = append(names, name)
			}
		}
	}
	if len(names) == 0 || len(names) > maxBatch {
		return result{}, errBatchNames
	}
	b := append(c.buf[:0], `{"cves":[`...)
	seen := make(map[string]bool, len(names))
	missing := []string{}
	first := true
	for _, name := range names {
		key := strings.ToUpper(name) // names match regardless of case
		if seen[key] {
			continue
		}
		seen[key] = true
		body, err := c.ix.CVE(name)
		if err != nil {
			missing = append(missing, name)
			continue
		}
		if !first {
			b = append(b, ',')
		}
		first = false
		b = append(b, body...)
	}
	b = append(b, `],"missing":`...)
	m, _ := json.MarshalWithOption(missing, json.DisableHTMLEscape())
	b = append(b, m...)
	c.buf = append(b, '}')
	return result{body: c.buf}, nil
}
