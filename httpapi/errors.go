package httpapi

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/vulnd/vulnd/index"
)

// apiError is an error with the status and the one-sentence message the
// client sees.
type apiError struct {
	status  int
	message string
	body    []byte // {"message": message}, made with the error
	// header: the message is also in a "message" header, as NVD's API
	// gives it (see nvdapi.go).
	header bool
}

// newAPIError makes an error of the API with its body.
func newAPIError(status int, message string) *apiError {
	return &apiError{status: status, message: message, body: append(strconv.AppendQuote([]byte(`{"message":`), message), '}')}
}

func (e *apiError) Error() string { return e.message }

// The errors of the API, in one table: the API's own, then the index's
// (indexErrors) as the API answers them.
var (
	errCVENotFound        = newAPIError(http.StatusNotFound, "CVE not found")
	errCWENotFound        = newAPIError(http.StatusNotFound, "CWE not found")
	errVendorNotFound     = newAPIError(http.StatusNotFound, "vendor not found")
	errProductNotFound    = newAPIError(http.StatusNotFound, "product not found")
	errReportNotFound     = newAPIError(http.StatusNotFound, "report not found")
	errAlertNotFound      = newAPIError(http.StatusNotFound, "alert not found")
	errNoEndpoint         = newAPIError(http.StatusNotFound, "endpoint not found")
	errMethod             = newAPIError(http.StatusMethodNotAllowed, "method not allowed: use GET or HEAD")
	errMethodPost         = newAPIError(http.StatusMethodNotAllowed, "method not allowed: use GET, HEAD or POST")
	errPathTooLong        = newAPIError(http.StatusRequestURITooLong, "path is longer than 2048 bytes")
	errQueryTooLong       = newAPIError(http.StatusRequestURITooLong, "query is longer than 4096 bytes")
	errBadEscape          = newAPIError(http.StatusBadRequest, "path is not valid percent-encoding")
	errBadQuery           = newAPIError(http.StatusBadRequest, "query is not valid percent-encoding")
	errBadParamEscape     = badParamEscapes()
	errBadPage            = newAPIError(http.StatusBadRequest, "page must be a whole number from 1 to 1000000")
	errBadCVSS            = newAPIError(http.StatusBadRequest, "cvss must be low, medium, high or critical")
	errBadUpdatedSince    = newAPIError(http.StatusBadRequest, "updated_since must be a time like 2024-01-31 00:00:00Z or 2024-01-31T00:00:00Z (RFC 3339; send an offset's + as %2B)")
	errBadPublishedSince  = newAPIError(http.StatusBadRequest, "published_since must be a time like 2024-01-31 00:00:00Z or 2024-01-31T00:00:00Z (RFC 3339; send an offset's + as %2B)")
	errBadFormat          = newAPIError(http.StatusBadRequest, "format must be json or ndjson")
	errBadKEV             = newAPIError(http.StatusBadRequest, "kev must be true or false")
	errBadEPSSMin         = newAPIError(http.StatusBadRequest, "epss_min must be a number from 0 to 1, like 0.1")
	errBadPercentileMin   = newAPIError(http.StatusBadRequest, "percentile_min must be a number from 0 to 1, like 0.95")
	errBadSort            = newAPIError(http.StatusBadRequest, "sort must be epss or risk")
	errProductNeedsVendor = newAPIError(http.StatusBadRequest, "product needs vendor")
	errBadVersion         = newAPIError(http.StatusBadRequest, "version must be 1 to 256 bytes")
	errBatchNames         = newAPIError(http.StatusBadRequest, "names must list 1 to 1000 CVE names")
	errBadBatchBody       = newAPIError(http.StatusBadRequest, `body must be a JSON object {"names": [...]}`)
	errBatchTooBig        = newAPIError(http.StatusRequestEntityTooLarge, "body is larger than 256 KiB")
	errNotLoaded          = newAPIError(http.StatusServiceUnavailable, "no snapshot is loaded")
	errInternal           = newAPIError(http.StatusInternalServerError, "internal error")
	// errGone ends a request whose client went while it waited for its
	// turn (see inTurn): no one reads it.
	errGone = newAPIError(http.StatusServiceUnavailable, "the request ended before its turn came")
)

// indexErrors are the errors of the index's lookups as the API answers
// them. A handler returns them as the index does.
var indexErrors = [...]struct {
	err error
	api *apiError
}{
	{index.ErrCVENotFound, errCVENotFound},
	{index.ErrCWENotFound, errCWENotFound},
	{index.ErrVendorNotFound, errVendorNotFound},
	{index.ErrProductNotFound, errProductNotFound},
	{index.ErrReportNotFound, errReportNotFound},
	{index.ErrAlertNotFound, errAlertNotFound},
}

// apiErrorOf is the answer to err: the API error it is or wraps, or the
// one of the index error it is or wraps; any other error is ours, a 500.
func apiErrorOf(err error) *apiError {
	if e, ok := errors.AsType[*apiError](err); ok {
		return e
	}
	for _, m := range indexErrors {
		if errors.Is(err, m.err) {
			return m.api
		}
	}
	return errInternal
}

// successOnly are the headers only a 200 or 304 carries.
var successOnly = [...]string{"Etag", "Last-Modified", "Cache-Control", "Content-Encoding", "Link", "X-Total-Count"}

// writeError answers err; it returns the status and the body bytes written.
func writeError(w http.ResponseWriter, r *http.Request, err error) (status, n int) {
	e := apiErrorOf(err)
	body := e.body
	hdr := w.Header()
	hdr["Content-Type"] = jsonType
	hdr["Vary"] = varyAccept
	hdr["Content-Length"] = contentLength(len(body))
	// A panic may come after a success's headers were set.
	for _, k := range successOnly {
		delete(hdr, k)
	}
	if e.header {
		hdr["Message"] = []string{e.message}
	}
	w.WriteHeader(e.status)
	if r.Method != http.MethodHead {
		n, _ = w.Write(body)
	}
	return e.status, n
}

// badParamEscapes are the answers to a parameter whose value is not valid
// percent-encoding, one a parameter, so that the 400 names it.
func badParamEscapes() (errs [numParams]*apiError) {
	for p, name := range params {
		errs[p] = newAPIError(http.StatusBadRequest, name+" is not valid percent-encoding")
	}
	return errs
}
