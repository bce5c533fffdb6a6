package loader

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/klauspost/compress/gzip"
)

// epssBenchRows is about the number of CVEs FIRST scores.
const epssBenchRows = 300_000

// syntheticEPSS returns an EPSS file of n rows in FIRST's shape and
// order (by id as a string), scores spread over [0,1].
func syntheticEPSS(n int) []byte {
	var b bytes.Buffer
	b.WriteString("#model_version:v2026.06.15,score_date:2026-09-29T12:00:22Z\ncve,epss,percentile\n")
	names := make([]string, 0, n)
	for i := range n {
		names = append(names, fmt.Sprintf("CVE-%d-%04d", 1999+i%28, 1+i/28))
	}
	slices.Sort(names)
	for i, name := range names {
		fmt.Fprintf(&b, "%s,0.%05d,0.%05d\n", name, (i*7919)%100000, i*99999/n)
	}
	return b.Bytes()
}

// BenchmarkReadEPSS reads a synthetic gzip'd file of 300,000 rows end to
// end, as vulnd build would.
func BenchmarkReadEPSS(b *testing.B) {
	data := syntheticEPSS(epssBenchRows)
	path := filepath.Join(b.TempDir(), "epss_scores-2026-09-29.csv.gz")
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(data)
	if err := zw.Close(); err != nil {
		b.Fatal(err)
	}
	gz := buf.Bytes()
	if err := os.WriteFile(path, gz, 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(gz)))
	b.ReportAllocs()
	for b.Loop() {
		e, err := ReadEPSS(path)
		if err != nil {
			b.Fatal(err)
		}
		if e.Len() != epssBenchRows {
			b.Fatalf("got %d rows", e.Len())
		}
	}
}

// BenchmarkDecodeEPSS decodes the same rows from memory, to separate
// parsing from decompression.
func BenchmarkDecodeEPSS(b *testing.B) {
	data := syntheticEPSS(epssBenchRows)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeEPSS(bytes.NewReader(data), "epss bench"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEPSSLookup looks one CVE up in 300,000 rows.
func BenchmarkEPSSLookup(b *testing.B) {
	e, err := decodeEPSS(bytes.NewReader(syntheticEPSS(epssBenchRows)), "epss bench")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := e.Lookup("CVE-2023-5000"); !ok {
			b.Fatal("not found")
		}
	}
}
