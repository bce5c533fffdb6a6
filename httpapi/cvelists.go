package httpapi

import (
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/goccy/go-json"

	"github.com/vulnd/vulnd/index"
)

// The four CVE lists (/cve, /cwe/{n}/cve, /vendors/{v}/cve and
// /vendors/{v}/products/{p}/cve) take the same since and kev filters and
// the ndjson format; /cve also takes cvss, cwe, vendor and product, and
// /cve and the product's list take version. Each reads its query once
// (cveQuery.parse), makes one call into index (SelectCVEs), and answers a
// page of the list or, with format=ndjson, the whole list.

// cveList is /cve: every CVE, narrowed by cvss, cwe, vendor and product
// (product needs vendor) or, with version, the product's CVEs covering
// that version (version needs vendor and product), then by kev and the
// since filters. A name the snapshot lacks selects nothing.
func cveList(c call, dst []byte) (result, error) {
	q := cveQuery{scope: scopeAll}
	if err := q.parse(c.r.URL.RawQuery); err != nil {
		return result{}, err
	}
	l, _ := c.ix.SelectCVEs(q.filter) // not found: l is empty
	return answerCVEs(c, dst, &q, l)
}

// cweCVEs is /cwe/{name}/cve.
func cweCVEs(c call, dst []byte) (result, error) {
	return pathCVEs(c, dst, scopeCWE)
}

// vendorCVEs is /vendors/{vendor}/cve.
func vendorCVEs(c call, dst []byte) (result, error) {
	return pathCVEs(c, dst, scopeVendor)
}

// productCVEs is a product's CVE list; with version=, only the CVEs whose
// vulnerable CPE matches cover that version.
func productCVEs(c call, dst []byte) (result, error) {
	return pathCVEs(c, dst, scopeProduct)
}

// pathCVEs answers the CVE lists of a name in the path (scope s): 404
// when the index lacks it, which the order of checks puts between the
// query's page and version and its filters.
func pathCVEs(c call, dst []byte, s cveScope) (result, error) {
	q := cveQuery{scope: s}
	names := &q.filter // the path's, before the query's are added
	switch s {
	case scopeCWE:
		names.CWE, names.HasCWE = c.param("name"), true
	case scopeVendor:
		names.Vendor, names.HasVendor = c.param("vendor"), true
	case scopeProduct:
		names.Vendor, names.HasVendor = c.param("vendor"), true
		names.Product, names.HasProduct = c.param("product"), true
	}
	if err := q.parse(c.r.URL.RawQuery); err != nil {
		return result{}, err
	}
	// With a wrong filter parameter (afterPath), the filter holds the
	// ones before it, all valid: SelectCVEs checks the names first, and
	// the request costs no more than a right one.
	l, err := c.ix.SelectCVEs(q.filter)
	switch {
	case err != nil:
		return result{}, err // the path's names are checked first
	case q.afterPath != nil:
		return result{}, q.afterPath
	}
	return answerCVEs(c, dst, &q, l)
}

// answerCVEs answers a CVE list: the page asked, or with format=ndjson
// the full bodies of the whole list.
func answerCVEs(c call, dst []byte, q *cveQuery, l index.CVEList) (result, error) {
	if q.ndjson {
		bodies := l.Bodies()
		return result{stream: &bodies}, nil
	}
	return c.page(dst, l.List, q.page, q.links())
}

// maxVersion is the longest version parameter taken.
const maxVersion = 256

// The errors of the version parameter beside errBadVersion: it is taken
// only by a product's CVE list and by /cve with vendor and product. On
// /cwe/{name}/cve and /vendors/{vendor}/cve, which have no product to
// match it against, it is a 400 rather than the whole list, which would
// read as "all affected".
var (
	errVersionNeedsProduct = newAPIError(http.StatusBadRequest, "version needs vendor and product")
	errVersionNotHere      = newAPIError(http.StatusBadRequest, "version is taken only by /vendors/{vendor}/products/{product}/cve and by /cve with vendor and product")
)

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
func cveBatch(c call, dst []byte) (result, error) {
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
		q := splitQuery(c.r.URL.RawQuery)
		v, ok, err := q.value(pNames)
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
	b := append(dst, `{"cves":[`...)
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
	return result{body: append(b, '}'), appended: true}, nil
}
