package index

import (
	"errors"
	"fmt"
)

// ErrNotFound is wrapped by every error of a lookup that finds nothing.
var ErrNotFound = errors.New("not found")

// The errors of the lookups, one for each kind of thing that can be
// missing, so that a caller tells a missing vendor from a missing product
// of a vendor that exists. Each wraps ErrNotFound.
var (
	ErrCVENotFound     = fmt.Errorf("index: CVE %w", ErrNotFound)
	ErrCWENotFound     = fmt.Errorf("index: CWE %w", ErrNotFound)
	ErrVendorNotFound  = fmt.Errorf("index: vendor %w", ErrNotFound)
	ErrProductNotFound = fmt.Errorf("index: product %w", ErrNotFound)
	ErrReportNotFound  = fmt.Errorf("index: report %w", ErrNotFound)
	ErrAlertNotFound   = fmt.Errorf("index: alert %w", ErrNotFound)
)
