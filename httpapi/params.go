package httpapi

// Reading a request: escapes, and the query parameters every endpoint
// shares (page, cvss, and the decoding of any value).

import (
	"net/url"
	"strings"
	"time"

	"github.com/vulnd/vulnd/index"
)

// validEscapes reports whether every % in s starts a two-hex-digit escape.
func validEscapes[T string | []byte](s T) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '%' {
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return false
			}
			i += 2
		}
	}
	return true
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// maxPage is the largest page number accepted.
const maxPage = 1_000_000

// parsePage returns the page parameter: 1 when absent; an error when it is
// empty, not a decimal integer, below 1 or above maxPage.
func parsePage(rawQuery string) (int, error) {
	v, ok, err := queryValue(rawQuery, "page")
	if err != nil {
		return 0, err
	}
	if !ok {
		return 1, nil
	}
	if len(v) == 0 || len(v) > 7 {
		return 0, errBadPage
	}
	n := 0
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return 0, errBadPage
		}
		n = n*10 + int(v[i]-'0')
	}
	if n < 1 || n > maxPage {
		return 0, errBadPage
	}
	return n, nil
}

// parseBand returns the cvss parameter's band: BandNone when absent.
func parseBand(rawQuery string) (index.Band, error) {
	v, ok, err := queryValue(rawQuery, "cvss")
	if err != nil || !ok {
		return index.BandNone, err
	}
	switch {
	case equalFoldASCII(v, "low"):
		return index.BandLow, nil
	case equalFoldASCII(v, "medium"):
		return index.BandMedium, nil
	case equalFoldASCII(v, "high"):
		return index.BandHigh, nil
	case equalFoldASCII(v, "critical"):
		return index.BandCritical, nil
	}
	return index.BandNone, errBadCVSS
}

func equalFoldASCII(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// queryValue returns the first value of key in a raw query string,
// decoded as a form value. Pairs are separated by "&"; a pair whose key
// cannot be decoded is skipped (unknown parameters are ignored), but a
// bad escape in the wanted value is an error.
//
// Every list request asks for several keys that are mostly absent, so
// the common cases cost no decoding: a key (letters and "_" only) can be
// in raw only as it is or escaped with "%" ("+" decodes to a space), and
// an escaped key is longer than the key.
func queryValue(raw, key string) (value string, ok bool, err error) {
	if !strings.Contains(raw, key) && strings.IndexByte(raw, '%') < 0 {
		return "", false, nil
	}
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		k, v, _ := strings.Cut(pair, "=")
		if k != key {
			if len(k) <= len(key) {
				continue
			}
			dk, err := url.QueryUnescape(k)
			if err != nil || dk != key {
				continue
			}
		}
		dv, err := url.QueryUnescape(v)
		if err != nil {
			return "", true, errBadQuery
		}
		return dv, true, nil
	}
	return "", false, nil
}

// parseTime reads a since parameter: the API's own timestamp form
// "YYYY-MM-DD HH:MM:SSZ" or RFC 3339 with any offset and fractions.
func parseTime(v string) (time.Time, bool) {
	if t, err := time.Parse(index.TimeLayout, v); err == nil {
		return t, true
	}
	if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
		return t, true
	}
	return time.Time{}, false
}
