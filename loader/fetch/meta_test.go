package fetch

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// nvdMeta is a real .meta file of NVD's (a feed of January 2019, in the
// form NVD still writes for the 2.0 feeds): quoted, CRLF-ended, in
// remyoudompheng/arch-security-tracker's test/test_nvd.py at commit
// 9dca9db3b7314f993c61913f97ce1bf499eb947c.
const nvdMeta = "lastModifiedDate:2019-01-06T08:00:46-05:00\r\n" +
	"size:3963616\r\n" +
	"zipSize:211211\r\n" +
	"gzSize:211067\r\n" +
	"sha256:4355FCD5C59858C9C41C3213BAE2CEF8F4D42D1AA0FBC6D31B5571BF7EEDF925\r\n"

// TestParseMeta: NVD's five CRLF-ended lines, and what is refused.
func TestParseMeta(t *testing.T) {
	sum := "4355FCD5C59858C9C41C3213BAE2CEF8F4D42D1AA0FBC6D31B5571BF7EEDF925"
	for _, tc := range []struct {
		name, in string
		want     Meta
		err      string // a part of the error; "" for none
	}{
		{name: "NVD's", in: nvdMeta,
			want: Meta{LastModified: "2019-01-06T08:00:46-05:00", Size: 3963616, ZipSize: 211211, GzSize: 211067, SHA256: sum}},
		{name: "LF, lower-case sum, no sizes", in: "lastModifiedDate:2019-01-06T08:00:46-05:00\nsha256:" + strings.ToLower(sum) + "\n",
			want: Meta{LastModified: "2019-01-06T08:00:46-05:00", SHA256: sum}},
		{name: "other keys and blank lines", in: "\r\nlastModifiedDate:x\r\nfoo:bar\r\n\r\nsha256:" + sum,
			want: Meta{LastModified: "x", SHA256: sum}},
		{name: "empty", in: "", err: "no lastModifiedDate"},
		{name: "no date", in: "sha256:" + sum, err: "no lastModifiedDate"},
		{name: "no sum", in: "lastModifiedDate:x", err: "no sha256"},
		{name: "short sum", in: "lastModifiedDate:x\nsha256:12", err: `sha256 "12" is not 64 hex digits`},
		{name: "not hex", in: "lastModifiedDate:x\nsha256:" + strings.Repeat("G", 64), err: "not 64 hex digits"},
		{name: "negative size", in: "lastModifiedDate:x\nsize:-1\nsha256:" + sum, err: `size "-1" is not a whole number`},
		{name: "bad gzSize", in: "lastModifiedDate:x\ngzSize:1e3\nsha256:" + sum, err: `gzSize "1e3"`},
		{name: "twice", in: "lastModifiedDate:x\nsha256:" + sum + "\nsha256:" + sum, err: "sha256 twice"},
		{name: "no colon", in: "garbage", err: "has no colon"},
		{name: "an HTML page", in: "<html><body>Not here</body></html>", err: "has no colon"},
		{name: "too long", in: strings.Repeat("a:b\n", 2000), err: "more than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseMeta([]byte(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// formatMeta writes m as NVD does.
func formatMeta(m Meta) string {
	return fmt.Sprintf("lastModifiedDate:%s\r\nsize:%d\r\nzipSize:%d\r\ngzSize:%d\r\nsha256:%s\r\n", m.LastModified, m.Size, m.ZipSize, m.GzSize, m.SHA256)
}

// FuzzParseMeta: never a panic; what is accepted has its required fields,
// and written again in NVD's form it reads back the same.
func FuzzParseMeta(f *testing.F) {
	f.Add([]byte(nvdMeta))
	f.Add([]byte("lastModifiedDate:x\nsha256:" + strings.Repeat("ab", 32)))
	f.Add([]byte("lastModifiedDate:x\nsize:12\nsize:13\n"))
	f.Add([]byte("<html>"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := ParseMeta(b)
		if err != nil {
			return
		}
		if len(m.SHA256) != 64 || strings.ToUpper(m.SHA256) != m.SHA256 || m.LastModified == "" || m.Size < 0 || m.GzSize < 0 || m.ZipSize < 0 {
			t.Fatalf("accepted %+v", m)
		}
		if strings.ContainsAny(m.LastModified, "\r\n") {
			return // cannot be written on one line again
		}
		again, err := ParseMeta([]byte(formatMeta(m)))
		if err != nil {
			t.Fatalf("%+v written again does not read: %v", m, err)
		}
		if diff := cmp.Diff(m, again); diff != "" {
			t.Errorf("round trip (-first +again):\n%s", diff)
		}
	})
}
