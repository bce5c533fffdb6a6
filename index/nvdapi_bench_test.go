package index

import (
	"bytes"
	"compress/gzip"
	stdjson "encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// sampleNVDRecords are NVD's sample records, repeated under new ids
// (CVE-2030-<n>) until there are n of them: real records, many.
func sampleNVDRecords(tb testing.TB, n int) []NVDRecord {
	tb.Helper()
	f, err := os.Open(filepath.Join("..", "..", "shared", "data", "nvd", "nvdcve-2.0-sample.json.gz"))
	if err != nil {
		tb.Fatalf("real test data missing: %v", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	doc, err := io.ReadAll(zr)
	if err != nil {
		tb.Fatal(err)
	}
	var feed struct {
		Vulnerabilities []struct {
			CVE stdjson.RawMessage `json:"cve"`
		} `json:"vulnerabilities"`
	}
	if err := stdjson.Unmarshal(doc, &feed); err != nil {
		tb.Fatal(err)
	}
	var out []NVDRecord
	for i := 0; len(out) < n; i++ {
		raw := feed.Vulnerabilities[i%len(feed.Vulnerabilities)].CVE
		var c struct {
			ID string `json:"id"`
		}
		stdjson.Unmarshal(raw, &c)
		id := fmt.Sprintf("CVE-2030-%05d", i)
		rec := bytes.Replace(raw, []byte(`"`+c.ID+`"`), []byte(`"`+id+`"`), 1)
		pub := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Minute).Format(NVDTimestampLayout)
		out = append(out, NVDRecord{Raw: rec, Facts: NVDFacts{ID: id, Published: pub, LastModified: pub}})
	}
	return out
}

// benchNVD packs n records; ratio is their raw size over the packed one.
func benchNVD(b *testing.B, n int) (ix *Index, ratio float64) {
	recs := sampleNVDRecords(b, n)
	nvd, err := BuildNVD(recs)
	if err != nil {
		b.Fatal(err)
	}
	raw := 0
	for _, r := range recs {
		raw += len(r.Raw)
	}
	return &Index{nvd: nvd}, float64(raw) / float64(nvd.Size())
}

// BenchmarkNVDRecord: one record by cveId, as GET
// /rest/json/cves/2.0?cveId= answers it (its block decoded).
func BenchmarkNVDRecord(b *testing.B) {
	ix, ratio := benchNVD(b, 4000)
	var dst []byte
	at := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	q := NVDQuery{CVEID: "CVE-2030-01234"}
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if dst, err = ix.AppendNVDPage(dst[:0], ix.SearchNVD(&q), 0, 2000, at); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(dst)))
	b.ReportMetric(ratio, "compression")
}

// BenchmarkNVDPage: a page of 2,000 records, unfiltered.
func BenchmarkNVDPage(b *testing.B) {
	ix, ratio := benchNVD(b, 4000)
	benchNVDPage(b, ix)
	b.ReportMetric(ratio, "compression")
}

// benchNVDPage measures ix's unfiltered page of 2,000 records from the
// 2,001st on.
func benchNVDPage(b *testing.B, ix *Index) {
	var dst []byte
	at := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if dst, err = ix.AppendNVDPage(dst[:0], ix.SearchNVD(&NVDQuery{}), 2000, 2000, at); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(dst)))
}

// BenchmarkNVDPageOverlay: BenchmarkNVDPage's page of a layout over an
// earlier set's blocks, at the share of records a build lets it reach
// before it compacts (nvdCompactShare, 10 %): a twentieth of the records
// changed (dead lines in the base's blocks, the records in blocks after
// them).
func BenchmarkNVDPageOverlay(b *testing.B) {
	base := sampleNVDRecords(b, 4000)
	nvd, _, _ := overlaidNVD(b, base, changedEvery(base, 20, 0, 0))
	benchNVDPage(b, &Index{nvd: nvd})
}
