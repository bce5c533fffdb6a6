package httpapi

// Reading a request: escapes, and the query. A query is split once
// (splitQuery) into the raw values of the parameters the API reads; each
// endpoint then decodes the ones it takes into one typed value (a page
// number, a cveQuery), checking them in its documented order, and never
// reads the query again. Adding a parameter is one entry in params, one
// field in the endpoint's query type and one line in its parse function
// (and a line in docs/API.md).

import (
	"net/url"
	"strings"
	"time"

	"github.com/vulnd/vulnd/index"
)

// param is a query parameter the API reads.
type param uint8

// The parameters, in the order of params.
const (
	pPage param = iota
	pCVSS
	pCWE
	pVendor
	pProduct
	pVersion
	pKEV
	pUpdatedSince
	pPublishedSince
	pFormat
	pQ
	pNames
	pEPSSMin
	pPercentileMin
	pSort
	numParams
)

// params are the names of the parameters.
var params = [numParams]string{
	pPage: "page", pCVSS: "cvss", pCWE: "cwe", pVendor: "vendor", pProduct: "product",
	pVersion: "version", pKEV: "kev", pUpdatedSince: "updated_since",
	pPublishedSince: "published_since", pFormat: "format", pQ: "q", pNames: "names",
	pEPSSMin: "epss_min", pPercentileMin: "percentile_min", pSort: "sort",
}

// query is a raw query string read once: the still-escaped value of the
// first pair of each parameter the API reads. Pairs are separated by "&";
// a key is decoded as a form value, and a pair whose key cannot be
// decoded, or is no parameter of ours, is skipped.
type query struct {
	raw [numParams]string
	has [numParams]bool
}

// splitQuery reads raw once into a query.
func splitQuery(raw string) (q query) {
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		k, v, _ := strings.Cut(pair, "=")
		if strings.ContainsAny(k, "%+") {
			dk, err := url.QueryUnescape(k)
			if err != nil {
				continue
			}
			k = dk
		}
		p := lookupParam(k)
		if p < numParams && !q.has[p] {
			q.raw[p], q.has[p] = v, true
		}
	}
	return q
}

// lookupParam returns the parameter named k, or numParams.
func lookupParam(k string) param {
	for p, name := range params {
		if k == name {
			return param(p)
		}
	}
	return numParams
}

// value returns parameter p decoded as a form value; ok is false when it
// is absent. A bad escape in it is the error naming p.
func (q *query) value(p param) (v string, ok bool, err error) {
	if !q.has[p] {
		return "", false, nil
	}
	v, err = url.QueryUnescape(q.raw[p])
	if err != nil {
		return "", true, errBadParamEscape[p]
	}
	return v, true, nil
}

// maxPage is the largest page number accepted.
const maxPage = 1_000_000

// parsePage returns the page parameter: 1 when absent; an error when it is
// empty, not a decimal integer, below 1 or above maxPage.
func (q *query) parsePage() (int, error) {
	v, ok, err := q.value(pPage)
	if err != nil {
		return 0, err
	}
	if !ok {
		return 1, nil
	}
	if len(v) == 0 || len(v) > 7 {
		return 0, errBadPage
	}
	n := 0
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return 0, errBadPage
		}
		n = n*10 + int(v[i]-'0')
	}
	if n < 1 || n > maxPage {
		return 0, errBadPage
	}
	return n, nil
}

// parseBand returns the cvss parameter's band: BandNone when absent.
func (q *query) parseBand() (index.Band, error) {
	v, ok, err := q.value(pCVSS)
	if err != nil || !ok {
		return index.BandNone, err
	}
	switch {
	case equalFoldASCII(v, "low"):
		return index.BandLow, nil
	case equalFoldASCII(v, "medium"):
		return index.BandMedium, nil
	case equalFoldASCII(v, "high"):
		return index.BandHigh, nil
	case equalFoldASCII(v, "critical"):
		return index.BandCritical, nil
	}
	return index.BandNone, errBadCVSS
}

// parseKEV returns the kev parameter: KEVAny when absent.
func (q *query) parseKEV() (index.KEVFilter, error) {
	v, ok, err := q.value(pKEV)
	switch {
	case err != nil || !ok:
		return index.KEVAny, err
	case equalFoldASCII(v, "true"):
		return index.KEVOnly, nil
	case equalFoldASCII(v, "false"):
		return index.KEVNone, nil
	}
	return index.KEVAny, errBadKEV
}

// parseSince returns the time key of a since parameter (p, refused with
// bad) and its value as sent; 0 when absent.
func (q *query) parseSince(p param, bad *apiError) (key uint64, v string, err error) {
	v, ok, err := q.value(p)
	if err != nil || !ok {
		return 0, "", err
	}
	t, ok := parseTime(v)
	if !ok {
		return 0, "", bad
	}
	return index.TimeKey(t), v, nil
}

// maxEPSSParam is the longest epss_min or percentile_min taken.
const maxEPSSParam = 32

// parseEPSSMin returns an EPSS threshold parameter (p, refused with bad)
// in millionths and its value as sent; ok is false when it is absent. It
// is a decimal number from 0 to 1, digits and at most one point ("0.1",
// ".5", "1", "1.000"); beyond six decimals it is rounded up, so that
// "a score of at least v" keeps exactly the scores, which FIRST writes
// with five decimals, that are v or more.
func (q *query) parseEPSSMin(p param, bad *apiError) (v uint32, sent string, ok bool, err error) {
	sent, ok, err = q.value(p)
	if err != nil || !ok {
		return 0, "", false, err
	}
	if len(sent) == 0 || len(sent) > maxEPSSParam {
		return 0, "", false, bad
	}
	intPart, point, digits := uint64(0), false, 0
	var frac uint64 // the first six decimals, in millionths
	scale := uint64(index.EPSSOne / 10)
	more := false // a nonzero decimal beyond the sixth
	for i := 0; i < len(sent); i++ {
		c := sent[i]
		switch {
		case c == '.' && !point:
			point = true
		case c >= '0' && c <= '9' && !point:
			intPart = min(intPart*10+uint64(c-'0'), 2) // 2 stands for "more than 1"
			digits++
		case c >= '0' && c <= '9':
			if scale > 0 {
				frac += uint64(c-'0') * scale
				scale /= 10
			} else if c != '0' {
				more = true
			}
			digits++
		default:
			return 0, "", false, bad
		}
	}
	if more {
		frac++
	}
	total := intPart*index.EPSSOne + frac
	if digits == 0 || total > index.EPSSOne {
		return 0, "", false, bad
	}
	return uint32(total), sent, true, nil
}

// parseSort returns the sort parameter's order: SortUsual when absent.
func (q *query) parseSort() (index.CVESort, error) {
	v, ok, err := q.value(pSort)
	switch {
	case err != nil || !ok:
		return index.SortUsual, err
	case equalFoldASCII(v, "epss"):
		return index.SortEPSS, nil
	case equalFoldASCII(v, "risk"):
		return index.SortRisk, nil
	}
	return index.SortUsual, errBadSort
}

// parseFormat reports whether the format parameter asks for NDJSON.
func (q *query) parseFormat() (ndjson bool, err error) {
	v, ok, err := q.value(pFormat)
	switch {
	case err != nil:
		return false, err
	case !ok || v == "json":
		return false, nil
	case v == "ndjson":
		return true, nil
	}
	return false, errBadFormat
}

func equalFoldASCII(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// parseTime reads a since parameter: the API's own timestamp form
// "YYYY-MM-DD HH:MM:SSZ" or RFC 3339 with any offset and fractions.
func parseTime(v string) (time.Time, bool) {
	if t, err := time.Parse(index.TimeLayout, v); err == nil {
		return t, true
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, true
	}
	return time.Time{}, false
}

// cveScope is which of the four CVE lists a query is of: it decides which
// parameters are read and in which order they are checked.
type cveScope uint8

const (
	scopeAll     cveScope = iota // /cve
	scopeCWE                     // /cwe/{name}/cve
	scopeVendor                  // /vendors/{vendor}/cve
	scopeProduct                 // /vendors/{vendor}/products/{product}/cve
)

// cveQuery is the query of a CVE list, decoded and checked.
type cveQuery struct {
	scope  cveScope
	page   int
	ndjson bool // format=ndjson: the whole list, streamed
	// filter is what the list selects: the path's names and the query.
	filter index.CVEFilter
	// updated and published are the since parameters as sent, for the
	// links; epssMin and pctMin the EPSS thresholds.
	updated, published string
	epssMin, pctMin    string
	// afterPath is, on /cwe/{name}/cve and the vendor's and product's
	// lists, the first wrong one of kev, updated_since, published_since
	// and format, which the order of checks puts after the path's names:
	// it answers only when these exist.
	afterPath error
}

// parse decodes raw, the query of a CVE list of scope cq.scope whose
// path names what cq.filter holds, into cq, and checks it in one pass, in
// the order docs/API.md ("Order of checks") gives; the first wrong
// parameter answers:
//
//   - /cve: cvss; cwe, vendor and product (their escapes); product
//     without vendor; version (its escape, then without vendor and
//     product, then empty or too long); kev; updated_since;
//     published_since; epss_min; percentile_min; sort; format; page.
//   - /cwe/{name}/cve and /vendors/{vendor}/cve: page; version (its
//     escape, then refused); then, after the path's name (404), kev,
//     updated_since, published_since, epss_min, percentile_min, sort,
//     format (see afterPath).
//   - /vendors/{vendor}/products/{product}/cve: page; version (its escape,
//     then empty or too long); then, after the path's names, as above.
func (cq *cveQuery) parse(raw string) (err error) {
	q := splitQuery(raw)
	s, f := cq.scope, &cq.filter
	if s == scopeAll {
		if f.Band, err = q.parseBand(); err != nil {
			return err
		}
		if f.CWE, f.HasCWE, err = q.value(pCWE); err != nil {
			return err
		}
		if f.Vendor, f.HasVendor, err = q.value(pVendor); err != nil {
			return err
		}
		if f.Product, f.HasProduct, err = q.value(pProduct); err != nil {
			return err
		}
		if f.HasProduct && !f.HasVendor {
			return errProductNeedsVendor
		}
	} else if cq.page, err = q.parsePage(); err != nil {
		return err
	}
	if f.Version, f.HasVersion, err = q.value(pVersion); err != nil {
		return err
	}
	if f.HasVersion {
		switch {
		case s == scopeCWE || s == scopeVendor:
			return errVersionNotHere
		case s == scopeAll && !f.HasProduct:
			return errVersionNeedsProduct
		case f.Version == "" || len(f.Version) > maxVersion:
			return errBadVersion
		}
	}
	err = cq.parseFilters(&q)
	if s != scopeAll {
		cq.afterPath = err
		return nil
	}
	if err != nil {
		return err
	}
	cq.page, err = q.parsePage()
	return err
}

// parseFilters decodes the parameters every CVE list takes, in order:
// kev, updated_since, published_since, epss_min, percentile_min, sort,
// format.
func (cq *cveQuery) parseFilters(q *query) (err error) {
	f := &cq.filter
	if f.KEV, err = q.parseKEV(); err != nil {
		return err
	}
	if f.UpdatedSince, cq.updated, err = q.parseSince(pUpdatedSince, errBadUpdatedSince); err != nil {
		return err
	}
	if f.PublishedSince, cq.published, err = q.parseSince(pPublishedSince, errBadPublishedSince); err != nil {
		return err
	}
	if f.EPSSMin, cq.epssMin, f.HasEPSSMin, err = q.parseEPSSMin(pEPSSMin, errBadEPSSMin); err != nil {
		return err
	}
	if f.PercentileMin, cq.pctMin, f.HasPercentileMin, err = q.parseEPSSMin(pPercentileMin, errBadPercentileMin); err != nil {
		return err
	}
	if f.Sort, err = q.parseSort(); err != nil {
		return err
	}
	cq.ndjson, err = q.parseFormat()
	return err
}

// links returns the parameters a page's links keep, each followed by
// "&", in the order docs/API.md gives: cvss, cwe, vendor, product,
// version, kev, updated_since, published_since, epss_min,
// percentile_min, sort, each as given (cvss, kev and sort in lower case),
// encoded anew; not the path's names. A query that keeps at most cvss
// costs no allocation.
func (cq *cveQuery) links() string {
	f := &cq.filter
	query := cq.scope == scopeAll // cwe, vendor and product are the query's
	if !(query && (f.HasCWE || f.HasVendor)) && !f.HasVersion && f.KEV == index.KEVAny && cq.updated == "" && cq.published == "" &&
		!f.HasEPSSMin && !f.HasPercentileMin && f.Sort == index.SortUsual {
		return bandParams[f.Band] // no allocation
	}
	b := make([]byte, 0, 128)
	b = append(b, bandParams[f.Band]...)
	if query && f.HasCWE {
		b = appendParam(b, pCWE, f.CWE)
	}
	if query && f.HasVendor {
		b = appendParam(b, pVendor, f.Vendor)
	}
	if query && f.HasProduct {
		b = appendParam(b, pProduct, f.Product)
	}
	if f.HasVersion {
		b = appendParam(b, pVersion, f.Version)
	}
	switch f.KEV {
	case index.KEVOnly:
		b = append(b, "kev=true&"...)
	case index.KEVNone:
		b = append(b, "kev=false&"...)
	}
	if cq.updated != "" {
		b = appendParam(b, pUpdatedSince, cq.updated)
	}
	if cq.published != "" {
		b = appendParam(b, pPublishedSince, cq.published)
	}
	if f.HasEPSSMin {
		b = appendParam(b, pEPSSMin, cq.epssMin)
	}
	if f.HasPercentileMin {
		b = appendParam(b, pPercentileMin, cq.pctMin)
	}
	b = append(b, sortParams[f.Sort]...)
	return string(b)
}

// appendParam appends "name=value&", the value encoded anew.
func appendParam(b []byte, p param, v string) []byte {
	b = append(b, params[p]...)
	b = append(b, '=')
	b = append(b, url.QueryEscape(v)...)
	return append(b, '&')
}

// sortParams is the sort parameter of each order as the links write it.
var sortParams = [...]string{index.SortUsual: "", index.SortEPSS: "sort=epss&", index.SortRisk: "sort=risk&"}

// bandParams is the cvss parameter of each band as the links write it.
var bandParams = [...]string{
	index.BandNone: "", index.BandLow: "cvss=low&", index.BandMedium: "cvss=medium&",
	index.BandHigh: "cvss=high&", index.BandCritical: "cvss=critical&",
}

// searchQuery is the query of /vendors and /vendors/{vendor}/products: q
// (the substring sought; none when empty), then, on /vendors, page.
type searchQuery struct {
	q    string
	hasQ bool
	page int
}

// parseSearchQuery decodes q and, when paged, page, in that order.
func parseSearchQuery(raw string, paged bool) (sq searchQuery, err error) {
	q := splitQuery(raw)
	if sq.q, sq.hasQ, err = q.value(pQ); err != nil || !paged {
		return sq, err
	}
	sq.page, err = q.parsePage()
	return sq, err
}

// links returns the parameters /vendors' links keep: q, when given.
func (sq *searchQuery) links() string {
	if !sq.hasQ {
		return ""
	}
	return string(appendParam(nil, pQ, sq.q))
}

// parsePageQuery decodes the query of a list that takes page alone.
func parsePageQuery(raw string) (int, error) {
	q := splitQuery(raw)
	return q.parsePage()
}
