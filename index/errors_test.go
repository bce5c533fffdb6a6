package index

import (
	"errors"
	"strings"
	"testing"
)

// TestErrors: every error the package exports says it is the index's, and
// each lookup error is a not-found one.
func TestErrors(t *testing.T) {
	notFound := []error{ErrCVENotFound, ErrCWENotFound, ErrVendorNotFound, ErrProductNotFound, ErrReportNotFound, ErrAlertNotFound}
	for _, err := range append([]error{ErrInvalid, ErrDetails}, notFound...) {
		if !strings.HasPrefix(err.Error(), "index: ") {
			t.Errorf("%q lacks the index: prefix", err)
		}
	}
	for _, err := range notFound {
		if !errors.Is(err, ErrNotFound) || !strings.HasSuffix(err.Error(), " not found") {
			t.Errorf("%q is not a not-found error", err)
		}
	}
}
