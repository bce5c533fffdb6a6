package loader

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/vulnd/vulnd/index"
)

// TestLoadLazyTextsEqualRead: the demo snapshot served by Load, whose
// text table's JSON texts are made on first read, gives every CVE the
// details body an index on the same snapshot read whole (read, as
// validate does, every text made at once) gives.
func TestLoadLazyTextsEqualRead(t *testing.T) {
	const dir = "../snapshots/demo"
	ix, _, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	s, bodies, eager := readWhole(t, dir)
	withEntries := 0
	for i := range s.Data.CVEs {
		name := s.Data.CVEs[i].Name
		want, err1 := eager.AppendDetails(nil, name)
		got, err2 := ix.AppendDetails(nil, name)
		if err1 != nil || err2 != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s: %s (%v), want %s (%v)", name, got, err2, want, err1)
		}
		if !bytes.Contains(want, []byte(`"affected":[]`)) {
			withEntries++
		}
	}
	if withEntries == 0 || len(bodies) != len(s.Data.CVEs) {
		t.Fatalf("%d CVEs with affected entries of %d: the demo snapshot no longer tests this", withEntries, len(s.Data.CVEs))
	}
}

// readWhole reads the snapshot in dir whole, as validate does (every
// text made at once), and returns it, its CVE bodies and the index built
// from it with every table made at once.
func readWhole(t *testing.T, dir string) (*Snapshot, [][]byte, *index.Index) {
	t.Helper()
	s, bodies, err := read(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := decodeEntries(dir, s.Manifest.Files[keyCVEs], s.cvesLayout, mustDecoder(t))
	if err != nil {
		t.Fatal(err)
	}
	ix, err := buildIndex(dir, s.Manifest, s.ID, time.Time{}, s.Data.CWEs, entries, s.details, s.Data.Reports, s.epss, false)
	if err != nil {
		t.Fatal(err)
	}
	return s, bodies, ix
}

func mustDecoder(t *testing.T) *zstd.Decoder {
	t.Helper()
	dec, err := decoder()
	if err != nil {
		t.Fatal(err)
	}
	return dec
}

// vendorAnswers are every vendor and product answer of ix, in one text:
// the vendor list, each vendor's body, CVE list, product list and a
// search of its products, each product's body and CVE list, a vendor
// search, and the counts; or the first error (it may run on any
// goroutine, so it does not fail the test itself).
func vendorAnswers(ix *index.Index) (string, error) {
	var b bytes.Buffer
	b.Write(ix.Vendors().AppendAll(nil))
	b.Write(ix.SearchVendors("a").AppendAll(nil))
	var vendors []struct{ Name string }
	if err := json.Unmarshal(ix.Vendors().AppendAll(nil), &vendors); err != nil {
		return "", err
	}
	for _, v := range vendors {
		body, err := ix.Vendor(v.Name)
		b.Write(body)
		cves, err2 := ix.VendorCVEs(v.Name)
		products, err3 := ix.Products(v.Name)
		found, err4 := ix.SearchProducts(v.Name, "o")
		if err != nil || err2 != nil || err3 != nil || err4 != nil {
			return "", fmt.Errorf("vendor %q: %v %v %v %v", v.Name, err, err2, err3, err4)
		}
		b.Write(cves.AppendAll(nil))
		b.Write(products.AppendAll(nil))
		b.Write(found.AppendAll(nil))
		var ps []struct{ Name string }
		if err := json.Unmarshal(products.AppendAll(nil), &ps); err != nil {
			return "", err
		}
		for _, p := range ps {
			body, err := ix.Product(v.Name, p.Name)
			cves, err2 := ix.ProductCVEs(v.Name, p.Name)
			if err != nil || err2 != nil {
				return "", fmt.Errorf("product %q %q: %v %v", v.Name, p.Name, err, err2)
			}
			b.Write(body)
			b.Write(cves.AppendAll(nil))
		}
	}
	fmt.Fprintf(&b, "%+v", ix.Counts())
	return b.String(), nil
}

// TestLoadDeferredVendorsEqualRead: the demo snapshot served by Load,
// whose vendor and product tables are made on first use, answers every
// vendor and product request as an index built with them at once does;
// first uses coming at once from many goroutines (run under -race) all
// get those answers; the counts the manifest gives are checked when
// they are made.
func TestLoadDeferredVendorsEqualRead(t *testing.T) {
	const dir = "../snapshots/demo"
	s, _, eager := readWhole(t, dir)
	want, err := vendorAnswers(eager)
	if err != nil {
		t.Fatal(err)
	}
	if eager.Counts().Products == 0 {
		t.Fatal("the demo snapshot has no products: it no longer tests this")
	}
	for round := range 3 {
		ix, _, err := Load(dir)
		if err != nil {
			t.Fatal(err)
		}
		if round == 2 {
			if err := ix.WarmVendors(); err != nil {
				t.Fatal(err)
			}
		}
		var wg sync.WaitGroup
		got, errs := make([]string, 6), make([]error, 6)
		for g := range got {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got[g], errs[g] = vendorAnswers(ix)
			}()
		}
		wg.Wait()
		for g := range got {
			if errs[g] != nil {
				t.Fatalf("round %d, goroutine %d: %v", round, g, errs[g])
			}
			if got[g] != want {
				t.Fatalf("round %d, goroutine %d: the answers differ from the eager index's", round, g)
			}
		}
		if err := ix.WarmVendors(); err != nil {
			t.Errorf("round %d: %v", round, err)
		}
	}

	// A manifest whose vendor counts are not the data's: the load serves
	// (it does not count them), making the tables says so.
	ix, _, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	c := s.Manifest.Counts
	ix.ExpectVendors(c.Vendors+1, c.Products)
	if err := ix.WarmVendors(); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%d vendors and %d products, the snapshot says %d and %d", c.Vendors, c.Products, c.Vendors+1, c.Products)) {
		t.Errorf("wrong vendor count: %v", err)
	}
}
