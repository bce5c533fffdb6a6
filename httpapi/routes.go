package httpapi

import "github.com/vulnd/vulnd/index"

// routes is the API: one line per endpoint. Paths are matched against the
// still-escaped request path; every :param is percent-decoded before the
// handler sees it.
var routes = []struct {
	path string
	h    handler
}{
	{"/cwe", cweList},                                       // 1
	{"/cwe/:name", cweOne},                                  // 2
	{"/cwe/:name/cve", cweCVEs},                             // 3
	{"/cve", cveList},                                       // 4
	{"/cve/:name", cveOne},                                  // 5
	{"/vendors", vendorList},                                // 6
	{"/vendors/:vendor", vendorOne},                         // 7
	{"/vendors/:vendor/cve", vendorCVEs},                    // 8
	{"/vendors/:vendor/products", productList},              // 9
	{"/vendors/:vendor/products/:product", productOne},      // 10
	{"/vendors/:vendor/products/:product/cve", productCVEs}, // 11
	{"/reports", reportList},                                // 12
	{"/reports/:report", reportOne},                         // 13
	{"/reports/:report/alerts", reportAlerts},               // 14
	{"/reports/:report/alerts/:alert", alertEvents},         // 15
	{"/openapi.json", openAPIDoc},                           // this API's OpenAPI 3.1 document
}

func cweList(c *call) ([]byte, error) { return c.page(c.ix.CWEs()) }

func cweOne(c *call) ([]byte, error) {
	b, ok := c.ix.CWE(c.param("name"))
	return one(b, ok, errCWENotFound)
}

func cweCVEs(c *call) ([]byte, error) {
	l, ok := c.ix.CWECVEs(c.param("name"))
	return c.pageIf(l, ok, errCWENotFound)
}

func cveList(c *call) ([]byte, error) {
	b, err := parseBand(c.r.URL.RawQuery)
	if err != nil {
		return nil, err
	}
	c.linkParams = bandParams[b]
	return c.page(c.ix.CVEs(b))
}

func cveOne(c *call) ([]byte, error) {
	b, ok := c.ix.CVE(c.param("name"))
	return one(b, ok, errCVENotFound)
}

func vendorList(c *call) ([]byte, error) { return c.page(c.ix.Vendors()) }

func vendorOne(c *call) ([]byte, error) {
	b, ok := c.ix.Vendor(c.param("vendor"))
	return one(b, ok, errVendorNotFound)
}

func vendorCVEs(c *call) ([]byte, error) {
	l, ok := c.ix.VendorCVEs(c.param("vendor"))
	return c.pageIf(l, ok, errVendorNotFound)
}

func productList(c *call) ([]byte, error) {
	l, ok := c.ix.Products(c.param("vendor"))
	if !ok {
		return nil, errVendorNotFound
	}
	c.buf = l.AppendAll(c.buf[:0])
	return c.buf, nil
}

func productOne(c *call) ([]byte, error) {
	b, vendorOK, ok := c.ix.Product(c.param("vendor"), c.param("product"))
	return one(b, ok, productErr(vendorOK))
}

func productCVEs(c *call) ([]byte, error) {
	l, vendorOK, ok := c.ix.ProductCVEs(c.param("vendor"), c.param("product"))
	return c.pageIf(l, ok, productErr(vendorOK))
}

func reportList(c *call) ([]byte, error) { return c.page(c.ix.Reports()) }

func reportOne(c *call) ([]byte, error) {
	b, ok := c.ix.Report(c.param("report"))
	return one(b, ok, errReportNotFound)
}

func reportAlerts(c *call) ([]byte, error) {
	b, ok := c.ix.ReportAlerts(c.param("report"))
	return one(b, ok, errReportNotFound)
}

func alertEvents(c *call) ([]byte, error) {
	b, reportOK, ok := c.ix.AlertEvents(c.param("report"), c.param("alert"))
	if !reportOK {
		return nil, errReportNotFound
	}
	return one(b, ok, errAlertNotFound)
}

// one turns a lookup's (body, ok) into a handler's result, err for a miss.
func one(b []byte, ok bool, err error) ([]byte, error) {
	if !ok {
		return nil, err
	}
	return b, nil
}

func productErr(vendorOK bool) error {
	if !vendorOK {
		return errVendorNotFound
	}
	return errProductNotFound
}

// bandParams is the cvss parameter of each band as the Link header of
// /cve writes it.
var bandParams = map[index.Band]string{
	index.BandLow: "cvss=low&", index.BandMedium: "cvss=medium&", index.BandHigh: "cvss=high&",
}
