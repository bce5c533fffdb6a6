package loader

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"testing"

	"github.com/goccy/go-json"
)

func sampleFeed(b *testing.B) []byte {
	f, err := os.Open(sharedPath(b, "nvd/nvdcve-2.0-sample.json.gz"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		b.Fatal(err)
	}
	doc, err := io.ReadAll(zr)
	if err != nil {
		b.Fatal(err)
	}
	return doc
}

// BenchmarkDecodeFeed measures what keeping each record as read costs a
// build: decodeFeed (the record as json.RawMessage, then mapped from
// it, with its facts) against a decode straight into the mapped type,
// as builds did before format 6.
func BenchmarkDecodeFeed(b *testing.B) {
	doc := sampleFeed(b)
	b.Run("raw", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			if err := decodeFeed(bytes.NewReader(doc), "sample", func(*feedRecord) error { return nil }); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("direct", func(b *testing.B) {
		b.SetBytes(int64(len(doc)))
		b.ReportAllocs()
		for b.Loop() {
			// decodeFeed's loop as it was: each record decoded from
			// the stream into the mapped type.
			dec := json.NewDecoder(bytes.NewReader(doc))
			expectDelim(dec, '{')
			for dec.More() {
				tok, _ := dec.Token()
				if tok != "vulnerabilities" {
					var skip json.RawMessage
					dec.Decode(&skip)
					continue
				}
				expectDelim(dec, '[')
				for dec.More() {
					var rec struct {
						CVE *nvdCVE `json:"cve"`
					}
					if err := dec.Decode(&rec); err != nil {
						b.Fatal(err)
					}
					if _, err := mapCVE(rec.CVE); err != nil {
						b.Fatal(err)
					}
				}
				expectDelim(dec, ']')
			}
		}
	})
}

// BenchmarkLoadNVD is the NVD part of a load alone (loadNVD: the facts,
// and nvd.zst read with its sums checked) of the snapshot named by
// VULND_BENCH_SNAPSHOT, of format 6 or 7; it is skipped without it.
func BenchmarkLoadNVD(b *testing.B) {
	dir := os.Getenv("VULND_BENCH_SNAPSHOT")
	if dir == "" {
		b.Skip("set VULND_BENCH_SNAPSHOT to a snapshot directory")
	}
	m, _, err := readManifest(dir, false)
	if err != nil {
		b.Fatal(err)
	}
	dec, err := decoder()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		n, err := loadNVD(dir, m, dec)
		if err != nil {
			b.Fatal(err)
		}
		if n.Len() == 0 {
			b.Fatal("no NVD records")
		}
	}
}
