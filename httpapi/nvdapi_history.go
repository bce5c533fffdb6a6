package httpapi

// GET /rest/json/cvehistory/2.0: NVD's CVE Change History API 2.0,
// answered from the reports the snapshot keeps (index/nvdhistory.go),
// with the rules of NVD's CVE API (nvdapi.go): its parameter reading,
// dates, paging and errors.

import (
	"net/url"
	"strings"
	"time"

	"github.com/vulnd/vulnd/index"
)

// NVDHistoryPath is the route of NVD's CVE Change History API.
const NVDHistoryPath = "/rest/json/cvehistory/2.0"

// nvdHistoryMaxResults is NVD's largest page of changes, and its default.
const nvdHistoryMaxResults = 5000

// The errors of the history API that the CVE API does not have.
var (
	errNVDHistoryResultsPerPage = newNVDError("resultsPerPage must be a whole number from 0 to 5000")
	errNVDChangePair            = newNVDError("changeStartDate and changeEndDate must be given together")
	errNVDEventName             = newNVDError("eventName must be one of NVD's event names: CVE Received, New CVE Received, Initial Analysis, Reanalysis, CVE Modified, Modified Analysis, CVE Translated, Vendor Comment, CVE Source Update, CPE Deprecation Remap, CWE Remap, Reference Tag Update, CVE Rejected, CVE Unrejected, CVE CISA KEV Update")
)

// nvdHistoryParams are the parameters of NVD's history API.
var nvdHistoryParams = map[string]bool{
	"changeStartDate": true, "changeEndDate": true, "cveId": true, "eventName": true,
	"resultsPerPage": true, "startIndex": true,
}

// nvdHistory answers NVD's CVE Change History API.
func nvdHistory(c call, dst []byte) (result, error) {
	vals, err := nvdValues(c.r.URL.RawQuery, nvdHistoryParams)
	if err != nil {
		return result{}, err
	}
	q, start, size, err := parseNVDHistoryQuery(vals)
	if err != nil {
		return result{}, err
	}
	var at time.Time
	if t, ok := c.ix.Meta().BuiltTime(); ok {
		at = t
	}
	r := c.ix.SearchHistory(&q)
	b, err := inTurn(c, r.Len(), start, size, func() ([]byte, error) { return c.ix.AppendHistoryPage(dst, r, start, size, at) })
	if err != nil {
		return result{}, err
	}
	return result{body: b, appended: true}, nil
}

// parseNVDHistoryQuery checks the history API's parameters and returns
// the query, startIndex and resultsPerPage.
func parseNVDHistoryQuery(vals url.Values) (q index.HistoryQuery, start, size int, err error) {
	if start, size, err = nvdPaging(vals, nvdHistoryMaxResults, errNVDHistoryResultsPerPage); err != nil {
		return q, 0, 0, err
	}
	if v, ok := vals["cveId"]; ok {
		if !isCVEID(v[0]) {
			return q, 0, 0, errNVDCVEID
		}
		q.CVEID = strings.ToUpper(v[0])
	}
	s, okS := vals["changeStartDate"]
	e, okE := vals["changeEndDate"]
	if okS != okE {
		return q, 0, 0, errNVDChangePair
	}
	if okS {
		from, ok1 := parseNVDDate(s[0])
		to, ok2 := parseNVDDate(e[0])
		if !ok1 || !ok2 {
			return q, 0, 0, errNVDDate
		}
		if from.After(to) {
			return q, 0, 0, errNVDDateOrder
		}
		q.Start, q.End, q.HasDates = from.UnixMilli(), to.UnixMilli(), true
	}
	if v, ok := vals["eventName"]; ok {
		ev, known := index.ParseHistoryEvent(v[0])
		if !known {
			return q, 0, 0, errNVDEventName
		}
		q.Event = ev
	}
	return q, start, size, nil
}
