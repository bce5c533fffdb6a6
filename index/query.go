package index

import "strconv"

// List is an ordered list of pre-encoded JSON items. The zero List is
// empty. A List is a view into an Index and shares its immutability.
type List struct {
	// The items are src's, or pk's when src is nil. When cut is set, item
	// k is the object src[k][:cut[k]] without its closing brace (a CVE
	// summary is a prefix of the CVE body), added as it is appended.
	src [][]byte
	cut []uint32
	pk  packed
	ids []int32 // positions into the items; nil when the items are the list
	sub bool    // ids is in use (an empty ids still means an empty list)
}

// CVEList is a list of CVE summaries of one index, in list order: the
// lists that the filters of filter.go narrow (they exist on no other
// list). Its List is what is served.
type CVEList struct {
	List
	ix *Index
}

func direct(items [][]byte) List              { return List{src: items} }
func indirect(src [][]byte, ids []int32) List { return List{src: src, ids: ids, sub: true} }

// cveList lists the CVE summaries at the positions ids, or all of them when
// all is set.
func (ix *Index) cveList(ids []int32, all bool) CVEList {
	return CVEList{List{src: ix.cveBodies, cut: ix.cveSumEnd, ids: ids, sub: !all}, ix}
}

// baseLen is the number of items the list's positions index.
func (l List) baseLen() int {
	if l.src != nil {
		return len(l.src)
	}
	return l.pk.len()
}

// Len is the number of items.
func (l List) Len() int {
	if l.sub {
		return len(l.ids)
	}
	return l.baseLen()
}

// item returns item i, without the closing brace of an open one.
func (l List) item(i int) []byte {
	if l.sub {
		i = int(l.ids[i])
	}
	switch {
	case l.src == nil:
		return l.pk.item(i)
	case l.cut != nil:
		return l.src[i][:l.cut[i]]
	}
	return l.src[i]
}

// bounds returns the half-open item range of a 1-based page.
func (l List) bounds(page, size int) (from, to int) {
	n := l.Len()
	if page < 1 || size < 1 || int64(page-1)*int64(size) >= int64(n) {
		return 0, 0
	}
	from = (page - 1) * size
	return from, min(from+size, n)
}

// AppendPage appends page (1-based) of size items as a JSON array to dst
// and returns the extended buffer; a page past the end is "[]". It grows
// dst once, to the exact size needed.
func (l List) AppendPage(dst []byte, page, size int) []byte {
	from, to := l.bounds(page, size)
	return l.appendRange(dst, from, to)
}

// AppendAll appends the whole list as one JSON array.
func (l List) AppendAll(dst []byte) []byte { return l.appendRange(dst, 0, l.Len()) }

func (l List) appendRange(dst []byte, from, to int) []byte {
	need := 2
	for i := from; i < to; i++ {
		need += len(l.item(i)) + 2
	}
	if cap(dst)-len(dst) < need {
		grown := make([]byte, len(dst), len(dst)+need)
		copy(grown, dst)
		dst = grown
	}
	dst = append(dst, '[')
	for i := from; i < to; i++ {
		if i > from {
			dst = append(dst, ',')
		}
		dst = append(dst, l.item(i)...)
		if l.cut != nil {
			dst = append(dst, '}')
		}
	}
	return append(dst, ']')
}

// Meta returns what the Index was built from.
func (ix *Index) Meta() Meta { return ix.meta }

// ETag is the entity tag of every response built from this Index, quoted.
func (ix *Index) ETag() string { return ix.etag }

// CountsDeferred are Counts without the vendors and products (0), so
// without making the tables of an index built by
// BuildEntriesDeferVendors.
func (ix *Index) CountsDeferred() Counts { return ix.counts }

// WithoutVendors is c with Vendors and Products 0.
func (c Counts) WithoutVendors() Counts {
	c.Vendors, c.Products = 0, 0
	return c
}

// Counts returns the number of records of each kind (making the vendor
// and product tables if they are not made yet).
func (ix *Index) Counts() Counts {
	ix.vendorsReady()
	c := ix.counts
	c.Vendors, c.Products = ix.nVendors, ix.nProducts
	return c
}

// CWEs lists every CWE, by number ascending.
func (ix *Index) CWEs() List { return direct(ix.cwes) }

// CWE returns the body of the CWE named name, matched case-insensitively,
// or ErrCWENotFound.
func (ix *Index) CWE(name string) ([]byte, error) {
	p, ok := ix.cwePos(name)
	if !ok {
		return nil, ErrCWENotFound
	}
	return ix.cwes[p], nil
}

// CWECVEs lists the CVEs citing the CWE named name, or fails with
// ErrCWENotFound when the catalog has no such CWE (even if CVEs cite it).
func (ix *Index) CWECVEs(name string) (CVEList, error) {
	p, ok := ix.cwePos(name)
	if !ok {
		return CVEList{}, ErrCWENotFound
	}
	return ix.cveList(ix.cweCVEs[p], false), nil
}

func (ix *Index) cwePos(name string) (int32, bool) {
	var buf [32]byte
	key, ok := upper(buf[:0], name)
	if !ok {
		return 0, false
	}
	p, ok := ix.cweByName[string(key)]
	return p, ok
}

// CVEs lists every CVE in band (BandNone: all of them), newest updated_at
// first.
func (ix *Index) CVEs(b Band) CVEList {
	return ix.cveList(ix.bands[b], b == BandNone)
}

// CVE returns the full body of the CVE named name, matched
// case-insensitively, or ErrCVENotFound.
func (ix *Index) CVE(name string) ([]byte, error) {
	p, ok := ix.cvePos(name)
	if !ok {
		return nil, ErrCVENotFound
	}
	return ix.cveBodies[p], nil
}

// cvePos is the list position of the CVE named name, matched
// case-insensitively.
func (ix *Index) cvePos(name string) (int32, bool) {
	year, num, ok := cveNumber(name)
	if !ok {
		return 0, false
	}
	p, ok := ix.cveByName[cveKey(year, len(name)-len("CVE-yyyy-"), num)]
	return p, ok
}

// Vendors lists every vendor, by name.
func (ix *Index) Vendors() List {
	ix.vendorsReady()
	return List{pk: ix.vendors}
}

// Vendor returns the body of the vendor named name (exact match), or
// ErrVendorNotFound.
func (ix *Index) Vendor(name string) ([]byte, error) {
	ix.vendorsReady()
	i, ok := ix.vendorByName[name]
	if !ok {
		return nil, ErrVendorNotFound
	}
	return ix.vendorBody(i), nil
}

func (ix *Index) vendor(name string) (*vendorRec, error) {
	ix.vendorsReady()
	i, ok := ix.vendorByName[name]
	if !ok {
		return nil, ErrVendorNotFound
	}
	return &ix.vendorRecs[i], nil
}

// VendorCVEs lists the CVEs naming the vendor in some CPE, or fails with
// ErrVendorNotFound.
func (ix *Index) VendorCVEs(name string) (CVEList, error) {
	v, err := ix.vendor(name)
	if err != nil {
		return CVEList{}, err
	}
	return ix.cveList(v.cves.ints(ix.vpCVEs), false), nil
}

// Products lists the products of the vendor, by name, or fails with
// ErrVendorNotFound.
func (ix *Index) Products(vendorName string) (List, error) {
	v, err := ix.vendor(vendorName)
	if err != nil {
		return List{}, err
	}
	return List{pk: ix.products.slice(int(v.prodLo), int(v.prodHi))}, nil
}

// Product returns the body of a vendor's product. It fails with
// ErrVendorNotFound when there is no such vendor and with
// ErrProductNotFound when the vendor has no such product.
func (ix *Index) Product(vendorName, productName string) ([]byte, error) {
	k, err := ix.product(vendorName, productName)
	if err != nil {
		return nil, err
	}
	return ix.productBody(k), nil
}

// ProductCVEs lists the CVEs naming the vendor-and-product pair; it fails
// as Product does.
func (ix *Index) ProductCVEs(vendorName, productName string) (CVEList, error) {
	k, err := ix.product(vendorName, productName)
	if err != nil {
		return CVEList{}, err
	}
	return ix.cveList(ix.productRecs[k].cves.ints(ix.vpCVEs), false), nil
}

// product is the position of the vendor's product in productRecs; it
// fails as Product does.
func (ix *Index) product(vendorName, productName string) (uint32, error) {
	ix.vendorsReady()
	v, ok := ix.vendorByName[vendorName]
	if !ok {
		return 0, ErrVendorNotFound
	}
	var buf [128]byte
	k, ok := ix.productByName[string(appendProductKey(buf[:0], v, productName))]
	if !ok {
		return 0, ErrProductNotFound
	}
	return k, nil
}

// Reports lists every report, newest first.
func (ix *Index) Reports() List { return direct(ix.reports) }

// Report returns the body of the report with the given id, or
// ErrReportNotFound.
func (ix *Index) Report(id string) ([]byte, error) {
	r, ok := ix.reportByID[id]
	if !ok {
		return nil, ErrReportNotFound
	}
	return r.body, nil
}

// ReportAlerts returns the JSON array of a report's alert summaries, or
// ErrReportNotFound.
func (ix *Index) ReportAlerts(id string) ([]byte, error) {
	r, ok := ix.reportByID[id]
	if !ok {
		return nil, ErrReportNotFound
	}
	return r.alerts, nil
}

// AlertEvents returns the JSON array of the events of alert alertID within
// report reportID. It fails with ErrReportNotFound when there is no such
// report and with ErrAlertNotFound when the report has no such alert (an
// alert of another report included).
func (ix *Index) AlertEvents(reportID, alertID string) ([]byte, error) {
	r, ok := ix.reportByID[reportID]
	if !ok {
		return nil, ErrReportNotFound
	}
	id, err := strconv.ParseInt(alertID, 10, 64)
	if err != nil {
		return nil, ErrAlertNotFound
	}
	body, ok := r.events[id]
	if !ok {
		return nil, ErrAlertNotFound
	}
	return body, nil
}

// upper appends s in ASCII upper case to dst; ok is false when s cannot be
// a CVE or CWE name (too long for dst's capacity or not ASCII).
func upper(dst []byte, s string) ([]byte, bool) {
	if len(s) > cap(dst)-len(dst) {
		return dst, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 {
			return dst, false
		}
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst, true
}
