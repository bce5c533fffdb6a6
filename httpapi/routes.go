package httpapi

// routes is the API: one line per endpoint. Paths are matched against the
// still-escaped request path; every :param is percent-decoded before the
// handler sees it.
var routes = []struct {
	path string
	h    handler
	post bool // POST is answered too (the only non-GET route)
}{
	{"/cwe", cweList, false},                                       // 1
	{"/cwe/:name", cweOne, false},                                  // 2
	{"/cwe/:name/cve", cweCVEs, false},                             // 3
	{"/cve", cveList, false},                                       // 4
	{"/cve/:name", cveOne, false},                                  // 5
	{"/cve/:name/details", cveDetails, false},                      // NVD status, KEV and every CVSS metric
	{"/vendors", vendorList, false},                                // 6
	{"/vendors/:vendor", vendorOne, false},                         // 7
	{"/vendors/:vendor/cve", vendorCVEs, false},                    // 8
	{"/vendors/:vendor/products", productList, false},              // 9
	{"/vendors/:vendor/products/:product", productOne, false},      // 10
	{"/vendors/:vendor/products/:product/cve", productCVEs, false}, // 11
	{"/reports", reportList, false},                                // 12
	{"/reports/:report", reportOne, false},                         // 13
	{"/reports/:report/alerts", reportAlerts, false},               // 14
	{"/reports/:report/alerts/:alert", alertEvents, false},         // 15
	{"/openapi.json", openAPIDoc, false},                           // this API's OpenAPI 3.1 document
	{"/cve/batch", cveBatch, true},                                 // many CVEs in one request
	{"/status", status, false},                                     // the snapshot served, its provenance and gaps
	{NVDPath, nvdCVEs, false},                                      // NVD's CVE API 2.0 (nvdapi.go)
	{NVDHistoryPath, nvdHistory, false},                            // NVD's CVE Change History API 2.0 (nvdapi_history.go)

	// Why each CVE of 11 with version matched (explain.go).
	{"/vendors/:vendor/products/:product/explain", productExplain, false},
}

func cweList(c call, dst []byte) (result, error) {
	p, err := parsePageQuery(c.r.URL.RawQuery)
	if err != nil {
		return result{}, err
	}
	return c.page(dst, c.ix.CWEs(), p, "")
}

// The handlers of one item answer the index's body as it is, or its
// error: named results, so the result is zeroed once and never copied.

func cweOne(c call, _ []byte) (res result, err error) {
	res.body, err = c.ix.CWE(c.param("name"))
	return res, err
}

func cveOne(c call, _ []byte) (res result, err error) {
	res.body, err = c.ix.CVE(c.param("name"))
	return res, err
}

// cveDetails is what NVD says of a CVE beyond its body: status, KEV and
// every CVSS metric.
func cveDetails(c call, dst []byte) (result, error) {
	b, err := c.ix.AppendDetails(dst, c.param("name"))
	if err != nil {
		return result{}, err
	}
	return result{body: b, appended: true}, nil
}

// vendorList is every vendor or, with q, those whose name or human_name
// holds q, ignoring case.
func vendorList(c call, dst []byte) (result, error) {
	q, err := parseSearchQuery(c.r.URL.RawQuery, true)
	if err != nil {
		return result{}, err
	}
	return c.page(dst, c.ix.SearchVendors(q.q), q.page, q.links())
}

func vendorOne(c call, _ []byte) (res result, err error) {
	res.body, err = c.ix.Vendor(c.param("vendor"))
	return res, err
}

// productList is a vendor's every product or, with q, those whose name or
// human_name holds q, ignoring case. It is not paged.
func productList(c call, dst []byte) (result, error) {
	q, err := parseSearchQuery(c.r.URL.RawQuery, false)
	if err != nil {
		return result{}, err
	}
	l, err := c.ix.SearchProducts(c.param("vendor"), q.q)
	if err != nil {
		return result{}, err
	}
	return result{body: l.AppendAll(dst), appended: true}, nil
}

func productOne(c call, _ []byte) (res result, err error) {
	res.body, err = c.ix.Product(c.param("vendor"), c.param("product"))
	return res, err
}

func reportList(c call, dst []byte) (result, error) {
	p, err := parsePageQuery(c.r.URL.RawQuery)
	if err != nil {
		return result{}, err
	}
	return c.page(dst, c.ix.Reports(), p, "")
}

func reportOne(c call, _ []byte) (res result, err error) {
	res.body, err = c.ix.Report(c.param("report"))
	return res, err
}

func reportAlerts(c call, _ []byte) (res result, err error) {
	res.body, err = c.ix.ReportAlerts(c.param("report"))
	return res, err
}

func alertEvents(c call, _ []byte) (res result, err error) {
	res.body, err = c.ix.AlertEvents(c.param("report"), c.param("alert"))
	return res, err
}
