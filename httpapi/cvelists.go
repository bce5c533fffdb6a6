package httpapi

import (
	"net/http"
	"net/url"
	"strconv"
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
func (c *call) cveFilters(l index.CVEList) ([]byte, error) {
	raw := c.r.URL.RawQuery
	if v, ok, err := queryValue(raw, "kev"); err != nil {
		return nil, err
	} else if ok {
		switch {
		case equalFoldASCII(v, "true"):
			l = l.WithKEV(true)
			c.keep("kev", "true")
		case equalFoldASCII(v, "false"):
			l = l.WithKEV(false)
			c.keep("kev", "false")
		default:
			return nil, errBadKEV
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
			return nil, err
		}
		if !ok {
			continue
		}
		t, ok := parseTime(v)
		if !ok {
			return nil, f.err
		}
		l = f.cut(l, index.TimeKey(t))
		c.keep(f.key, v)
	}
	format, ok, err := queryValue(raw, "format")
	if err != nil {
		return nil, err
	}
	switch {
	case !ok || format == "json":
		return c.page(l.List)
	case format == "ndjson":
		if _, err := parsePage(raw); err != nil {
			return nil, err
		}
		c.stream, c.streaming = l.Bodies(), true
		return nil, nil
	}
	return nil, errBadFormat
}

// keep adds a query parameter to those the Link header's pages keep.
func (c *call) keep(key, value string) {
	c.linkParams += key + "=" + url.QueryEscape(value) + "&"
}

// cveList is /cve: every CVE, narrowed by cvss, cwe, vendor and product
// (product needs vendor) or, with version, the product's CVEs covering
// that version (version needs vendor and product), then by the since
// filters.
func cveList(c *call) ([]byte, error) {
	raw := c.r.URL.RawQuery
	b, err := parseBand(raw)
	if err != nil {
		return nil, err
	}
	c.linkParams = bandParams[b]
	cwe, hasCWE, err := queryValue(raw, "cwe")
	if err != nil {
		return nil, err
	}
	vendor, hasVendor, err := queryValue(raw, "vendor")
	if err != nil {
		return nil, err
	}
	product, hasProduct, err := queryValue(raw, "product")
	if err != nil {
		return nil, err
	}
	if hasProduct && !hasVendor {
		return nil, errProductNeedsVendor
	}
	version, hasVersion, err := queryValue(raw, "version")
	if err != nil {
		return nil, err
	}
	if hasVersion {
		if !hasProduct {
			return nil, errVersionNeedsProduct
		}
		if version == "" || len(version) > maxVersion {
			return nil, errBadVersion
		}
	}
	// A filter naming no CWE, vendor or product selects nothing. The
	// vendor's (or product's) list is narrowed by the CWE and then the
	// band CVE by CVE, which costs what the vendor's list costs; a CWE or
	// band alone is its own list. A CWE list much shorter than the
	// vendor's is intersected with it instead.
	var cweList, vendorList index.CVEList
	if hasCWE {
		m, ok := c.ix.CWECVEs(cwe)
		if !ok {
			m = c.ix.NoCVEs()
		}
		cweList = m
		c.keep("cwe", cwe)
	}
	if hasVendor {
		var m index.CVEList
		ok := false
		switch {
		case hasVersion:
			m, _, ok = c.ix.ProductCVEsAt(vendor, product, version)
		case hasProduct:
			m, _, ok = c.ix.ProductCVEs(vendor, product)
		default:
			m, ok = c.ix.VendorCVEs(vendor)
		}
		if !ok {
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
		l, _ = vendorList.CitingCWE(cwe)
		l = l.InBand(b)
	}
	return c.cveFilters(l)
}

func cweCVEs(c *call) ([]byte, error) {
	if err := c.checkPage(); err != nil {
		return nil, err
	}
	if err := refuseVersion(c); err != nil {
		return nil, err
	}
	l, ok := c.ix.CWECVEs(c.param("name"))
	if !ok {
		return nil, errCWENotFound
	}
	return c.cveFilters(l)
}

func vendorCVEs(c *call) ([]byte, error) {
	if err := c.checkPage(); err != nil {
		return nil, err
	}
	if err := refuseVersion(c); err != nil {
		return nil, err
	}
	l, ok := c.ix.VendorCVEs(c.param("vendor"))
	if !ok {
		return nil, errVendorNotFound
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
func productCVEs(c *call) ([]byte, error) {
	if err := c.checkPage(); err != nil {
		return nil, err
	}
	version, hasVersion, err := queryValue(c.r.URL.RawQuery, "version")
	if err != nil {
		return nil, err
	}
	if hasVersion && (version == "" || len(version) > maxVersion) {
		return nil, errBadVersion
	}
	vendor, product := c.param("vendor"), c.param("product")
	var (
		l            index.CVEList
		vendorOK, ok bool
	)
	if hasVersion {
		l, vendorOK, ok = c.ix.ProductCVEsAt(vendor, product, version)
		c.keep("version", version)
	} else {
		l, vendorOK, ok = c.ix.ProductCVEs(vendor, product)
	}
	if !ok {
		return nil, productErr(vendorOK)
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

// writeStream answers c.stream, a list of full CVE bodies, as NDJSON: one
// object per line, with its exact Content-Length. It is never compressed.
func (s *Server) writeStream(w http.ResponseWriter, r *http.Request, c *call, sh *snapHeaders) (status, n int) {
	l := c.stream
	size := 0
	for i := 0; i < l.Len(); i++ {
		size += len(l.Item(i)) + 1
	}
	hdr := w.Header()
	hdr["Content-Type"] = ndjsonType
	hdr["Vary"] = varyAccept
	s.setValidators(hdr, sh, sh.etag)
	hdr["X-Total-Count"] = []string{strconv.Itoa(l.Len())}
	if notModified(r, c.ix.ETag(), sh.modTime) {
		c.wrote = true
		w.WriteHeader(http.StatusNotModified)
		return http.StatusNotModified, 0
	}
	hdr["Content-Length"] = contentLength(size)
	c.wrote = true
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return http.StatusOK, 0
	}
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
	return http.StatusOK, n
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
func cveBatch(c *call) ([]byte, error) {
	var names []string
	if c.r.Method == http.MethodPost {
		body := http.MaxBytesReader(nil, c.r.Body, maxBatchBody)
		var req struct {
			Names *[]string `json:"names"`
		}
		dec := json.NewDecoder(body)
		if err := dec.Decode(&req); err != nil || dec.More() {
			if _, tooBig := err.(*http.MaxBytesError); tooBig {
				return nil, errBatchTooBig
			}
			return nil, errBadBatchBody
		}
		if req.Names == nil {
			return nil, errBadBatchBody
		}
		names = *req.Names
	} else {
		v, ok, err := queryValue(c.r.URL.RawQuery, "names")
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, errBatchNames
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
		return nil, errBatchNames
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
		body, ok := c.ix.CVE(name)
		if !ok {
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
	return c.buf, nil
}
