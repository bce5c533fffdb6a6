package httpapi

// GET /rest/json/cves/2.0: NVD's CVE API 2.0, answered from the NVD
// records the snapshot keeps (index/nvdapi.go). A bad parameter is
// answered as NVD answers it: 404, the reason in a "message" header
// (and, as every error of this API, in the JSON body).

import (
	"net/http"
	"net/url"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/vulnd/vulnd/index"
)

// NVDPath is the route of NVD's CVE API.
const NVDPath = "/rest/json/cves/2.0"

// nvdMaxResults is NVD's largest page, and its default.
const nvdMaxResults = 2000

// newNVDError is an error of NVD's API: 404, its message also in the
// "message" header.
func newNVDError(message string) *apiError {
	e := newAPIError(http.StatusNotFound, message)
	e.header = true
	return e
}

// The errors of NVD's API, one per reason.
var (
	errNVDBadQuery       = newNVDError("a parameter's value is not valid percent-encoding")
	errNVDStartIndex     = newNVDError("startIndex must be a whole number from 0")
	errNVDResultsPerPage = newNVDError("resultsPerPage must be a whole number from 0 to 2000")
	errNVDCVEID          = newNVDError("cveId must be a CVE id like CVE-2021-44228")
	errNVDLastModPair    = newNVDError("lastModStartDate and lastModEndDate must be given together")
	errNVDPubPair        = newNVDError("pubStartDate and pubEndDate must be given together")
	errNVDKEVPair        = newNVDError("kevStartDate and kevEndDate must be given together")
	errNVDDate           = newNVDError("dates must be like 2021-08-04T13:00:00.000 or 2021-08-04T13:00:00.000-05:00 (send an offset's + as %2B)")
	errNVDDateOrder      = newNVDError("a start date must not be after its end date")
	errNVDNoValue        = newNVDError("noRejected, hasKev, hasCertAlerts, hasCertNotes, hasOval, isVulnerable and keywordExactMatch take no value")
	errNVDCWE            = newNVDError("cweId must be a CWE id like CWE-79, or NVD-CWE-Other or NVD-CWE-noinfo")
	errNVDSeverity2      = newNVDError("cvssV2Severity must be LOW, MEDIUM or HIGH")
	errNVDSeverity34     = newNVDError("cvssV3Severity and cvssV4Severity must be LOW, MEDIUM, HIGH or CRITICAL")
	errNVDSeverityMany   = newNVDError("only one of cvssV2Severity, cvssV3Severity and cvssV4Severity may be given")
	errNVDMetrics        = newNVDError("cvssV2Metrics, cvssV3Metrics and cvssV4Metrics must be vector parts like AV:N/AC:L")
	errNVDMetricsMany    = newNVDError("only one of cvssV2Metrics, cvssV3Metrics and cvssV4Metrics may be given")
	errNVDKeyword        = newNVDError("keywordSearch must not be empty")
	errNVDExactNoKeyword = newNVDError("keywordExactMatch needs keywordSearch")
	errNVDSource         = newNVDError("sourceIdentifier must not be empty")
	errNVDTag            = newNVDError("cveTag must be disputed, unsupported-when-assigned or exclusively-hosted-service")
	errNVDCPEName        = newNVDError("cpeName must be a CPE 2.3 name like cpe:2.3:a:apache:log4j:2.14.1:*:*:*:*:*:*:*")
	errNVDMatchString    = newNVDError("virtualMatchString must be a CPE 2.3 match string like cpe:2.3:a:apache:log4j")
	errNVDCPEVendor      = newNVDError("cpeName and virtualMatchString must name a vendor and a product (not * or -)")
	errNVDCPEBoth        = newNVDError("cpeName and virtualMatchString may not be given together")
	errNVDIsVulnerable   = newNVDError("isVulnerable needs cpeName, and is not taken with virtualMatchString")
	errNVDVersionRange   = newNVDError("versionStart and versionEnd need virtualMatchString and their types, versionStartType and versionEndType: including or excluding")
)

// bigPageItems is the number of items from which a page of NVD's APIs is
// a big one (see inTurn).
const bigPageItems = 100

// bigPageSlots holds a token for each big page being composed: as many
// as the cores the server may run on.
var bigPageSlots = make(chan struct{}, runtime.GOMAXPROCS(0))

// inTurn returns what compose gives; when the page of at most size of
// total items from start is a big one, it first waits until fewer big
// pages than cores are being composed, and its turn ends once compose
// returns (before the page is written), panic or not. A page of NVD's
// 2,000 records is some 10 MB, grown by doubling as it is composed:
// composed by every connection at once (32 at 400k CVEs in make
// bench-load), they took vulnd's RSS from 1.36 to 1.91 GB, while their
// CPU, the only thing they wait for, is no more than the cores'. A
// request whose client goes while it waits ends there.
func inTurn(c call, total, start, size int, compose func() ([]byte, error)) ([]byte, error) {
	if min(size, total-min(start, total)) >= bigPageItems {
		select {
		case bigPageSlots <- struct{}{}:
			defer func() { <-bigPageSlots }()
		case <-c.r.Context().Done():
			return nil, errGone
		}
	}
	return compose()
}

// nvdFlags are the parameters NVD takes without a value.
var nvdFlags = [...]string{"noRejected", "hasKev", "hasCertAlerts", "hasCertNotes", "hasOval", "isVulnerable", "keywordExactMatch"}

// nvdCVEs answers NVD's CVE API.
func nvdCVEs(c call, dst []byte) (result, error) {
	vals, err := nvdValues(c.r.URL.RawQuery, nvdParams)
	if err != nil {
		return result{}, err
	}
	q, start, size, err := parseNVDQuery(vals)
	if err != nil {
		return result{}, err
	}
	var at time.Time
	if t, ok := c.ix.Meta().BuiltTime(); ok {
		at = t
	}
	r := c.ix.SearchNVD(&q)
	b, err := inTurn(c, r.Len(), start, size, func() ([]byte, error) { return c.ix.AppendNVDPage(dst, r, start, size, at) })
	if err != nil {
		return result{}, err
	}
	return result{body: b, appended: true}, nil
}

// nvdParams are the parameters of NVD's CVE API.
var nvdParams = map[string]bool{
	"cpeName": true, "cveId": true, "cveTag": true, "cvssV2Metrics": true, "cvssV2Severity": true,
	"cvssV3Metrics": true, "cvssV3Severity": true, "cvssV4Metrics": true, "cvssV4Severity": true,
	"cweId": true, "hasCertAlerts": true, "hasCertNotes": true, "hasKev": true, "hasOval": true,
	"isVulnerable": true, "kevStartDate": true, "kevEndDate": true, "keywordExactMatch": true,
	"keywordSearch": true, "lastModStartDate": true, "lastModEndDate": true, "noRejected": true,
	"pubStartDate": true, "pubEndDate": true, "resultsPerPage": true, "startIndex": true,
	"sourceIdentifier": true, "versionEnd": true, "versionEndType": true, "versionStart": true,
	"versionStartType": true, "virtualMatchString": true,
}

// nvdValues reads the parameters of params from a raw query, the first
// of a repeated one; other parameters are ignored, even when they are not
// valid percent-encoding, as everywhere in this API. A parameter of
// params whose value is not is refused.
func nvdValues(raw string, params map[string]bool) (url.Values, error) {
	vals := url.Values{}
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		k, v, _ := strings.Cut(pair, "=")
		key, err := url.QueryUnescape(k)
		if err != nil || !params[key] || vals.Has(key) {
			continue
		}
		val, err := url.QueryUnescape(v)
		if err != nil {
			return nil, errNVDBadQuery
		}
		vals.Set(key, val)
	}
	return vals, nil
}

// parseNVDQuery checks NVD's parameters and returns the query, startIndex
// and resultsPerPage.
func parseNVDQuery(vals url.Values) (q index.NVDQuery, start, size int, err error) {
	get := func(k string) (string, bool) {
		v, ok := vals[k]
		if !ok || len(v) == 0 {
			return "", false
		}
		return v[0], true
	}
	if start, size, err = nvdPaging(vals, nvdMaxResults, errNVDResultsPerPage); err != nil {
		return q, 0, 0, err
	}
	flags := map[string]bool{}
	for _, f := range nvdFlags {
		if v, ok := get(f); ok {
			if v != "" && !strings.EqualFold(v, "true") {
				return q, 0, 0, errNVDNoValue
			}
			flags[f] = true
		}
	}
	if q.CPE, err = parseNVDCPE(get, flags["isVulnerable"]); err != nil {
		return q, 0, 0, err
	}
	if v, ok := get("cveId"); ok {
		if !isCVEID(v) {
			return q, 0, 0, errNVDCVEID
		}
		q.CVEID = strings.ToUpper(v)
	}
	dates := []struct {
		start, end string
		pair       error
		from, to   *int64
		has        *bool
	}{
		{"lastModStartDate", "lastModEndDate", errNVDLastModPair, &q.LastModStart, &q.LastModEnd, &q.HasLastMod},
		{"pubStartDate", "pubEndDate", errNVDPubPair, &q.PubStart, &q.PubEnd, &q.HasPub},
		{"kevStartDate", "kevEndDate", errNVDKEVPair, &q.KEVStart, &q.KEVEnd, &q.HasKEVDates},
	}
	for _, d := range dates {
		s, okS := get(d.start)
		e, okE := get(d.end)
		if !okS && !okE {
			continue
		}
		if okS != okE {
			return q, 0, 0, d.pair
		}
		from, ok1 := parseNVDDate(s)
		to, ok2 := parseNVDDate(e)
		if !ok1 || !ok2 {
			return q, 0, 0, errNVDDate
		}
		if from.After(to) {
			return q, 0, 0, errNVDDateOrder
		}
		*d.from, *d.to, *d.has = from.UnixMilli(), to.UnixMilli(), true
	}
	q.NoRejected = flags["noRejected"]
	q.HasKEV = flags["hasKev"]
	q.CertAlerts, q.CertNotes, q.OVAL = flags["hasCertAlerts"], flags["hasCertNotes"], flags["hasOval"]
	if v, ok := get("cweId"); ok {
		switch {
		case strings.EqualFold(v, "NVD-CWE-Other"), strings.EqualFold(v, "NVD-CWE-noinfo"):
			q.CWE = strings.ToUpper(v)
		default:
			n, ok := index.CWENumber(v)
			if !ok {
				return q, 0, 0, errNVDCWE
			}
			q.CWE = "CWE-" + strconv.Itoa(n)
		}
	}
	severities := 0
	for v, k := range []string{"cvssV2Severity", "cvssV3Severity", "cvssV4Severity"} {
		s, ok := get(k)
		if !ok {
			continue
		}
		severities++
		s = strings.ToUpper(s)
		switch {
		case s == "LOW", s == "MEDIUM", s == "HIGH":
		case s == "CRITICAL" && v > 0:
		case v == 0:
			return q, 0, 0, errNVDSeverity2
		default:
			return q, 0, 0, errNVDSeverity34
		}
		q.Severity[v] = s
	}
	if severities > 1 {
		return q, 0, 0, errNVDSeverityMany
	}
	metrics := 0
	for v, k := range []string{"cvssV2Metrics", "cvssV3Metrics", "cvssV4Metrics"} {
		s, ok := get(k)
		if !ok {
			continue
		}
		metrics++
		parts := strings.Split(s, "/")
		for _, p := range parts {
			if a, b, ok := strings.Cut(p, ":"); !ok || a == "" || b == "" {
				return q, 0, 0, errNVDMetrics
			}
		}
		q.Metrics[v] = parts
	}
	if metrics > 1 {
		return q, 0, 0, errNVDMetricsMany
	}
	if v, ok := get("keywordSearch"); ok {
		q.Keywords = strings.Fields(v)
		if len(q.Keywords) == 0 {
			return q, 0, 0, errNVDKeyword
		}
		if flags["keywordExactMatch"] {
			q.Phrase = strings.Join(q.Keywords, " ")
			q.Keywords = nil
		}
	} else if flags["keywordExactMatch"] {
		return q, 0, 0, errNVDExactNoKeyword
	}
	if v, ok := get("sourceIdentifier"); ok {
		if v == "" {
			return q, 0, 0, errNVDSource
		}
		q.Source = v
	}
	if v, ok := get("cveTag"); ok {
		switch v = strings.ToLower(v); v {
		case "disputed", "unsupported-when-assigned", "exclusively-hosted-service":
			q.Tag = v
		default:
			return q, 0, 0, errNVDTag
		}
	}
	return q, start, size, nil
}

// nvdPaging reads startIndex (default 0) and resultsPerPage (default and
// at most maxSize; sizeErr when it is not a whole number up to it), as
// NVD's APIs take them.
func nvdPaging(vals url.Values, maxSize int, sizeErr error) (start, size int, err error) {
	start, size = 0, maxSize
	if v, ok := vals["startIndex"]; ok && len(v) > 0 {
		n, err := strconv.Atoi(v[0])
		if err != nil || n < 0 {
			return 0, 0, errNVDStartIndex
		}
		start = n
	}
	if v, ok := vals["resultsPerPage"]; ok && len(v) > 0 {
		n, err := strconv.Atoi(v[0])
		if err != nil || n < 0 || n > maxSize {
			return 0, 0, sizeErr
		}
		size = n
	}
	return start, size, nil
}

// parseNVDCPE reads cpeName (with isVulnerable) or virtualMatchString
// (with versionStart, versionEnd and their types); nil when neither is
// given.
func parseNVDCPE(get func(string) (string, bool), vulnerable bool) (*index.NVDCPE, error) {
	name, hasName := get("cpeName")
	match, hasMatch := get("virtualMatchString")
	start, hasStart := get("versionStart")
	startType, hasStartType := get("versionStartType")
	end, hasEnd := get("versionEnd")
	endType, hasEndType := get("versionEndType")
	switch {
	case hasName && hasMatch:
		return nil, errNVDCPEBoth
	case vulnerable && !hasName:
		return nil, errNVDIsVulnerable
	case (hasStart || hasStartType || hasEnd || hasEndType) && !hasMatch,
		hasStart != hasStartType, hasEnd != hasEndType,
		hasStartType && startType != "including" && startType != "excluding",
		hasEndType && endType != "including" && endType != "excluding",
		hasStart && start == "", hasEnd && end == "":
		return nil, errNVDVersionRange
	case !hasName && !hasMatch:
		return nil, nil
	}
	var c index.NVDCPE
	var err error
	if hasName {
		if c, err = index.ParseNVDCPE(name, true); err != nil {
			return nil, errNVDCPEName
		}
	} else if c, err = index.ParseNVDCPE(match, false); err != nil {
		return nil, errNVDMatchString
	}
	if !c.Names() {
		return nil, errNVDCPEVendor
	}
	c.Virtual, c.Vulnerable = hasMatch, vulnerable
	c.Start, c.StartIncluding = start, startType == "including"
	c.End, c.EndIncluding = end, endType == "including"
	return &c, nil
}

// isCVEID tells whether s is a CVE id (any letter case).
func isCVEID(s string) bool {
	if len(s) < len("CVE-2021-1234") || !strings.EqualFold(s[:4], "CVE-") || s[8] != '-' {
		return false
	}
	for i, c := range []byte(s[4:]) {
		if i != 4 && (c < '0' || c > '9') {
			return false
		}
	}
	return len(s)-9 <= 9
}

// parseNVDDate reads NVD's dates: extended ISO 8601, with or without
// fractions, with a zone ("Z", "-05:00", "+01:00") or without (UTC). A
// "+" sent unescaped arrives as a space, which is taken back as "+".
func parseNVDDate(s string) (time.Time, bool) {
	if i := strings.LastIndexByte(s, ' '); i > 0 {
		s = s[:i] + "+" + s[i+1:]
	}
	for _, layout := range []string{"2006-01-02T15:04:05.999999999Z07:00", "2006-01-02T15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}
