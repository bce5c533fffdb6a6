package loader

import (
	"bytes"
	"io"
	"testing"
)

// BenchmarkReadCWECatalog reads the real catalog (a 14.8 MB XML document
// in a 1.6 MB zip) end to end.
func BenchmarkReadCWECatalog(b *testing.B) {
	path := realCWECatalogPath(b)
	b.ReportAllocs()
	for b.Loop() {
		cwes, err := ReadCWECatalog(path)
		if err != nil {
			b.Fatal(err)
		}
		if len(cwes) != 1427 {
			b.Fatalf("got %d entries, want 1427", len(cwes))
		}
	}
}

// BenchmarkDecodeCWECatalog decodes the real catalog from memory, to
// separate XML decoding from decompression.
func BenchmarkDecodeCWECatalog(b *testing.B) {
	rc, err := openInput(realCWECatalogPath(b))
	if err != nil {
		b.Fatal(err)
	}
	doc, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeCWECatalog(bytes.NewReader(doc)); err != nil {
			b.Fatal(err)
		}
	}
}
