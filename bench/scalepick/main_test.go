package main

import (
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/goccy/go-json"

	"github.com/vulnd/vulnd/index"
	"github.com/vulnd/vulnd/loader"
)

// shared is a file of the real sample in ../shared/data.
func shared(rel ...string) string {
	return filepath.Join(append([]string{"..", "..", "..", "shared", "data"}, rel...)...)
}

// build builds the real sample (with the CVE JSON 5 records when
// records) and loads it.
func build(t *testing.T, records bool) *index.Index {
	t.Helper()
	feeds := []string{shared("nvd", "nvdcve-2.0-sample.json.gz")}
	if records {
		feeds = append(feeds, shared("cve5", "cvelistV5-sample.json.gz"), shared("cve5", "vulnrichment-sample.json.gz"))
	}
	out := filepath.Join(t.TempDir(), "snap")
	if _, err := loader.Build(loader.BuildOptions{CWECatalog: shared("cwe", "cwec_v4.15.xml.zip"), Feeds: feeds, Out: out,
		Time: time.Date(2026, 11, 22, 6, 0, 0, 0, time.UTC)}); err != nil {
		t.Fatal(err)
	}
	ix, _, err := loader.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// fields parses a PICK line.
func fields(t *testing.T, line string) map[string]string {
	t.Helper()
	f := map[string]string{}
	for _, w := range strings.Fields(strings.TrimPrefix(line, "PICK ")) {
		k, v, ok := strings.Cut(w, "=")
		if !ok {
			t.Fatalf("%q: field %q has no =", line, w)
		}
		f[k] = v
	}
	return f
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestPick checks each pick against the index itself: the path asks
// the product and version named, ProductCVEsAt gives as many CVEs as
// printed, and the CVEs counted "from entries" are exactly those whose
// body's cpes do not name the product.
func TestPick(t *testing.T) {
	ix := build(t, true)
	lines, err := pick(ix, 500)
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "PICK class=cna ") || !strings.HasPrefix(lines[1], "PICK class=nvd ") {
		t.Fatalf("got %q, want a cna line and an nvd line", lines)
	}
	var got [2]map[string]string
	for i, line := range lines {
		f := fields(t, line)
		got[i] = f
		want := "/vendors/" + url.PathEscape(f["vendor"]) + "/products/" + url.PathEscape(f["product"]) + "/cve?version=" + url.QueryEscape(f["version"])
		if f["path"] != want {
			t.Errorf("%s: path %s, want %s", f["class"], f["path"], want)
		}
		all, err := ix.ProductCVEs(f["vendor"], f["product"])
		if err != nil {
			t.Fatal(err)
		}
		at, err := ix.ProductCVEsAt(f["vendor"], f["product"], f["version"])
		if err != nil {
			t.Fatal(err)
		}
		if atoi(t, f["cves"]) != all.Len() || atoi(t, f["matches"]) != at.Len() {
			t.Errorf("%s: cves=%s matches=%s, the index has %d and %d", f["class"], f["cves"], f["matches"], all.Len(), at.Len())
		}
		fromEntries := func(l index.CVEList) int {
			ns, err := names(l.Bodies().AppendAll(nil))
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, name := range ns {
				b, _ := ix.CVE(name)
				var cve struct {
					CPEs []struct{ Vendor, Product string } `json:"cpes"`
				}
				if err := json.Unmarshal(b, &cve); err != nil {
					t.Fatal(err)
				}
				named := false
				for _, c := range cve.CPEs {
					named = named || c.Vendor == f["vendor"] && c.Product == f["product"]
				}
				if !named {
					n++
				}
			}
			return n
		}
		if e := fromEntries(all); atoi(t, f["from_entries"]) != e {
			t.Errorf("%s: from_entries=%s, counted %d", f["class"], f["from_entries"], e)
		}
		if e := fromEntries(at); atoi(t, f["matches_from_entries"]) != e {
			t.Errorf("%s: matches_from_entries=%s, counted %d", f["class"], f["matches_from_entries"], e)
		}
	}
	cna, nvd := got[0], got[1]
	if atoi(t, cna["matches_from_entries"]) == 0 {
		t.Errorf("the CNA pick matches no CVE from entries: %v", cna)
	}
	share := func(f map[string]string) float64 {
		return float64(atoi(t, f["from_entries"])) / float64(atoi(t, f["cves"]))
	}
	if share(nvd) >= share(cna) {
		t.Errorf("the NVD pick has a share from entries %.2f, the CNA pick %.2f", share(nvd), share(cna))
	}
}

// TestPickWithoutRecords: a snapshot of NVD feeds alone has nothing to
// compare, and says why.
func TestPickWithoutRecords(t *testing.T) {
	_, err := pick(build(t, false), 500)
	if err == nil || !strings.Contains(err.Error(), "was the snapshot built with the records?") {
		t.Fatalf("got %v, want the error saying the snapshot has no records", err)
	}
}
