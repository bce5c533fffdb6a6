package httpapi

import (
	"net/http"
)

// errVersionRequired answers the explain endpoint without a version: it
// explains the matches of one version.
var errVersionRequired = newAPIError(http.StatusBadRequest, "version is required")

// productExplain is /vendors/{vendor}/products/{product}/explain: the
// CVEs of the product's list at ?version=, in its order and paging, each
// with the entries that cover the version and what decided (see
// index.ProductExplainAt). It checks page, then version (its escape,
// then absent, then empty or too long), then the names (404). The Link
// header keeps version.
func productExplain(c call, dst []byte) (result, error) {
	q := splitQuery(c.r.URL.RawQuery)
	page, err := q.parsePage()
	if err != nil {
		return result{}, err
	}
	v, ok, err := q.value(pVersion)
	switch {
	case err != nil:
		return result{}, err
	case !ok:
		return result{}, errVersionRequired
	case v == "" || len(v) > maxVersion:
		return result{}, errBadVersion
	}
	l, err := c.ix.ProductExplainAt(c.param("vendor"), c.param("product"), v)
	if err != nil {
		return result{}, err
	}
	return result{body: l.AppendPage(dst, page, c.pageSize), appended: true, page: page, total: l.Len(),
		links: string(appendParam(nil, pVersion, v))}, nil
}
