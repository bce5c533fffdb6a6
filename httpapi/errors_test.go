package httpapi

import (
	"errors"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/vulnd/vulnd/index"
)

// TestWriteErrorWrapped: an API error wrapped on its way up keeps its
// status and message; any other error is a 500.
func TestWriteErrorWrapped(t *testing.T) {
	for _, tc := range []struct {
		err    error
		status int
		body   string
	}{
		{errBadPage, 400, `{"message":"page must be a whole number from 1 to 1000000"}`},
		{fmt.Errorf("listing: %w", errVendorNotFound), 404, `{"message":"vendor not found"}`},
		{errors.Join(errors.New("first"), errBadKEV), 400, `{"message":"kev must be true or false"}`},
		{errors.New("disk on fire"), 500, `{"message":"internal error"}`},
		// The index's lookups fail with its own errors, wrapped or not.
		{index.ErrCVENotFound, 404, `{"message":"CVE not found"}`},
		{index.ErrCWENotFound, 404, `{"message":"CWE not found"}`},
		{index.ErrVendorNotFound, 404, `{"message":"vendor not found"}`},
		{index.ErrProductNotFound, 404, `{"message":"product not found"}`},
		{index.ErrReportNotFound, 404, `{"message":"report not found"}`},
		{fmt.Errorf("events: %w", index.ErrAlertNotFound), 404, `{"message":"alert not found"}`},
		{index.ErrNotFound, 500, `{"message":"internal error"}`}, // not found what?
	} {
		w := httptest.NewRecorder()
		status, n := writeError(w, httptest.NewRequest("GET", "/cve", nil), tc.err)
		if status != tc.status || w.Code != tc.status || w.Body.String() != tc.body || n != len(tc.body) {
			t.Errorf("%v: %d %d %q (%d bytes), want %d %q", tc.err, status, w.Code, w.Body, n, tc.status, tc.body)
		}
	}
}
