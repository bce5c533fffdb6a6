package fetch

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// Meta is an NVD feed's .meta file: five "key:value" lines, CRLF-ended,
// such as
//
//	lastModifiedDate:2019-01-06T08:00:46-05:00
//	size:3963616
//	zipSize:211211
//	gzSize:211067
//	sha256:4355FCD5C59858C9C41C3213BAE2CEF8F4D42D1AA0FBC6D31B5571BF7EEDF925
//
// where size and sha256 are those of the uncompressed JSON, and zipSize and
// gzSize those of the .json.zip and .json.gz files.
type Meta struct {
	LastModified string // lastModifiedDate, as written
	Size         int64  // of the uncompressed JSON; 0 if not given
	ZipSize      int64  // of the .json.zip; 0 if not given
	GzSize       int64  // of the .json.gz; 0 if not given
	SHA256       string // of the uncompressed JSON, upper-case hex
}

// maxMetaBytes bounds a .meta file: NVD's are under 200 bytes.
const maxMetaBytes = 4 << 10

// ParseMeta reads a .meta file. lastModifiedDate and sha256 (64 hex
// digits, in either case) are required; size, zipSize and gzSize, when
// present, are whole numbers. Lines end in CRLF or LF; blank lines and
// other keys are ignored, a repeated key or a line without a colon is an
// error.
func ParseMeta(b []byte) (Meta, error) {
	if len(b) > maxMetaBytes {
		return Meta{}, fmt.Errorf("meta is %d bytes, more than a .meta file's few lines", len(b))
	}
	var m Meta
	seen := map[string]bool{}
	for line := range bytes.Lines(b) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		k, v, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return Meta{}, fmt.Errorf("meta line %q has no colon", line)
		}
		key, v := string(bytes.TrimSpace(k)), bytes.TrimSpace(v)
		if seen[key] {
			return Meta{}, fmt.Errorf("meta has %s twice", key)
		}
		seen[key] = true
		switch key {
		case "lastModifiedDate":
			m.LastModified = string(v)
		case "size", "zipSize", "gzSize":
			n, err := strconv.ParseInt(string(v), 10, 64)
			if err != nil || n < 0 {
				return Meta{}, fmt.Errorf("meta %s %q is not a whole number", key, v)
			}
			switch key {
			case "size":
				m.Size = n
			case "zipSize":
				m.ZipSize = n
			default:
				m.GzSize = n
			}
		case "sha256":
			s := strings.ToUpper(string(v))
			if _, err := hex.DecodeString(s); err != nil || len(s) != 64 {
				return Meta{}, fmt.Errorf("meta sha256 %q is not 64 hex digits", v)
			}
			m.SHA256 = s
		}
	}
	switch {
	case m.LastModified == "":
		return Meta{}, errors.New("meta has no lastModifiedDate")
	case m.SHA256 == "":
		return Meta{}, errors.New("meta has no sha256")
	}
	return m, nil
}
