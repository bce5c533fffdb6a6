package httpapi

import (
	"errors"
	"fmt"
	"net/http/httptest"
	"testing"
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
	} {
		w := httptest.NewRecorder()
		status, n := writeError(w, httptest.NewRequest("GET", "/cve", nil), tc.err)
		if status != tc.status || w.Code != tc.status || w.Body.String() != tc.body || n != len(tc.body) {
			t.Errorf("%v: %d %d %q (%d bytes), want %d %q", tc.err, status, w.Code, w.Body, n, tc.status, tc.body)
		}
	}
}
