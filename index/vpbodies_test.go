package index

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// vpCVEs are n CVEs with CPEs drawn from a small vocabulary of vendors,
// products and versions, odd names among them (escapes, non-ASCII, "*",
// "-", ""), versions repeated across CVEs and within one, versions equal
// in version order but not in bytes, some CVEs without CPEs, and
// manyEntryCVEs' CVEs listed through their affected entries.
func vpCVEs(n int) []CVE {
	r := rand.New(rand.NewPCG(29, 4))
	vendors := []string{"acme", "linux", `quo"te`, `back\slash`, "élan_ü", "*", "-", "", "tab\there", "<b>&"}
	products := []string{"widget", "linux_kernel", `p"q`, "ünï", "*", "-", "", "a_b_c"}
	versions := []string{"1.0", "1.0.0", "1.00", "v1.0", "2.0rc1", "2.0-RC1", "2.0", "10", "9", "*", "-", "", `1\"2`, "ü1", "1.0_beta", "2024-01-02"}
	cves := make([]CVE, n)
	for i := range cves {
		c := CVE{Name: fmt.Sprintf("CVE-2023-%05d", i+1), CreatedAt: "2023-01-01 00:00:00Z",
			UpdatedAt: fmt.Sprintf("2023-02-%02d 00:00:00Z", i%28+1)}
		for range r.IntN(7) {
			v, p, ver := vendors[r.IntN(len(vendors))], products[r.IntN(len(products))], versions[r.IntN(len(versions))]
			c.CPEs = append(c.CPEs, vcpe(v, p, ver, r.IntN(3) > 0))
		}
		cves[i] = c
	}
	entries := manyEntryCVEs(40)
	for i := range entries {
		// Listed under their entries' vendor and product: some under a
		// vendor and product its CPEs name too.
		v, p := fmt.Sprintf("vendor%d", i%5), fmt.Sprintf("entry_product%d", i%3)
		if i%4 == 0 {
			v, p = "acme", "widget"
		}
		entries[i].Name = fmt.Sprintf("CVE-2024-%05d", i+1)
		entries[i].EntryKeys = []EntryKey{{Vendor: v, Product: p, Entries: []int{0}}}
	}
	return append(cves, entries...)
}

// eagerVPBodies are the vendor and product bodies of the index built of
// cves as encode writes the API's objects, made from the CVEs themselves:
// a vendor's products are those the index lists (those of its CPEs and of
// its CVEs' affected entries), a product's versions the distinct concrete
// versions of the CPEs naming it, in version order.
func eagerVPBodies(t *testing.T, ix *Index, cves []CVE) (vendorBodies map[string]string, productBodies map[[2]string]string) {
	t.Helper()
	versions := map[[2]string][]string{}
	for i := range cves {
		for _, c := range cves[i].CPEs {
			if IsName(c.Version) {
				k := [2]string{c.Vendor, c.Product}
				versions[k] = append(versions[k], c.Version)
			}
		}
	}
	vendorBodies, productBodies = map[string]string{}, map[[2]string]string{}
	for _, v := range listNames(t, ix.Vendors()) {
		pl, err := ix.Products(v)
		if err != nil {
			t.Fatal(err)
		}
		pnames := listNames(t, pl)
		vendorBodies[v] = string(encode(vendorBody{v, HumanName(v), pnames}))
		for _, p := range pnames {
			vs := versions[[2]string{v, p}]
			slices.Sort(vs)
			vs = slices.Compact(vs)
			slices.SortFunc(vs, func(a, b string) int {
				if c := CompareVersions(a, b); c != 0 {
					return c
				}
				return cmpStrings(a, b)
			})
			productBodies[[2]string{v, p}] = string(encode(productBody{p, HumanName(p), orEmpty(vs)}))
		}
	}
	return vendorBodies, productBodies
}

func cmpStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestLazyBodiesEqualEager: the vendor and product bodies made on first
// request are those encode writes of the API's objects, every one of
// them, and none is made by the load.
func TestLazyBodiesEqualEager(t *testing.T) {
	cves := vpCVEs(3000)
	ix, err := Build(&Data{CVEs: cves}, Meta{ID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range ix.vendorBodies {
		if ix.vendorBodies[i].p.Load() != nil {
			t.Fatalf("vendor %d: body made at load", i)
		}
	}
	for k := range ix.productBodies {
		if ix.productBodies[k].p.Load() != nil {
			t.Fatalf("product %d: body made at load", k)
		}
	}
	vendorBodies, productBodies := eagerVPBodies(t, ix, cves)
	if len(vendorBodies) < 12 || len(productBodies) < 50 {
		t.Fatalf("%d vendors, %d products: the fixture is too small", len(vendorBodies), len(productBodies))
	}
	for round := range 2 { // the body made, then the one kept
		for v, want := range vendorBodies {
			if got, err := ix.Vendor(v); err != nil || string(got) != want {
				t.Errorf("round %d: vendor %q: %s, %v; want %s", round, v, got, err, want)
			}
		}
		for vp, want := range productBodies {
			if got, err := ix.Product(vp[0], vp[1]); err != nil || string(got) != want {
				t.Errorf("round %d: product %q: %s, %v; want %s", round, vp, got, err, want)
			}
		}
	}
	if _, err := ix.Vendor("nope"); err != ErrVendorNotFound {
		t.Errorf("vendor nope: %v", err)
	}
	if _, err := ix.Product("acme", "nope"); err != ErrProductNotFound {
		t.Errorf("product acme/nope: %v", err)
	}
}

// TestLazyBodiesConcurrentFirstUse: many requests at once for bodies not
// made yet all get the same, right bytes (run under -race).
func TestLazyBodiesConcurrentFirstUse(t *testing.T) {
	cves := vpCVEs(1500)
	ix, err := Build(&Data{CVEs: cves}, Meta{ID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := Build(&Data{CVEs: cves}, Meta{ID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	vendorBodies, productBodies := eagerVPBodies(t, ref, cves)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for vp, want := range productBodies { // map order differs per goroutine
				got, err := ix.Product(vp[0], vp[1])
				if err != nil || string(got) != want {
					errs <- fmt.Errorf("goroutine %d: product %q: %s, %v", g, vp, got, err)
					return
				}
			}
			for v, want := range vendorBodies {
				got, err := ix.Vendor(v)
				if err != nil || string(got) != want {
					errs <- fmt.Errorf("goroutine %d: vendor %q: %s, %v", g, v, got, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestWarmMakesProductBodies: serve's warm-up makes the bodies of the
// products it builds the version tables of, as their first request would.
func TestWarmMakesProductBodies(t *testing.T) {
	cves := vpCVEs(500)
	ix, err := Build(&Data{CVEs: cves}, Meta{ID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	_, productBodies := eagerVPBodies(t, ix, cves)
	if n := ix.WarmVersionTables(1, func() bool { return false }); n == 0 {
		t.Fatal("nothing warmed")
	}
	for k, p := range ix.productRecs {
		if made := ix.productBodies[k].p.Load(); (p.vulnerable || p.entries) != (made != nil) {
			t.Errorf("product %d (vulnerable %v, entries %v): body made %v", k, p.vulnerable, p.entries, made != nil)
		} else if made != nil {
			v, name := ix.productNames(uint32(k))
			if want := productBodies[[2]string{v, name}]; string(*made) != want {
				t.Errorf("product %q %q: warmed %s, want %s", v, name, *made, want)
			}
		}
	}
}

// TestLazySearchEqualsEager: the vendor and product searches, whose texts
// are made on the first search, answer what texts made from every name
// at load answer, also when the first searches come at once (run under
// -race), and the load makes neither text.
func TestLazySearchEqualsEager(t *testing.T) {
	cves := vpCVEs(2000)
	ix, err := Build(&Data{CVEs: cves}, Meta{ID: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if ix.vendorSearch.names == nil || ix.productSearch.names == nil {
		t.Fatal("a search text was made at load")
	}
	vendors := listNames(t, ix.Vendors())
	var products []string
	for _, v := range vendors {
		pl, err := ix.Products(v)
		if err != nil {
			t.Fatal(err)
		}
		products = append(products, listNames(t, pl)...)
	}
	eagerV, eagerP := newSearchText(vendors), newSearchText(products)
	queries := []string{"a", "LINUX", "linux kernel", "_", " ", `"`, `\`, "ü", "ÉLAN", "widget", "entry", "nope", "<b>", "0"}
	var wg sync.WaitGroup
	errs := make(chan error, 8*len(queries))
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range queries {
				q := queries[(i+g)%len(queries)]
				if got, want := ix.vendorSearch.get().find(q, 0, len(vendors)), eagerV.find(q, 0, len(vendors)); !slices.Equal(got, want) {
					errs <- fmt.Errorf("vendors %q: %v, want %v", q, got, want)
				}
				for vi := range ix.vendorRecs {
					lo, hi := int(ix.vendorRecs[vi].prodLo), int(ix.vendorRecs[vi].prodHi)
					if got, want := ix.productSearch.get().find(q, lo, hi), eagerP.find(q, lo, hi); !slices.Equal(got, want) {
						errs <- fmt.Errorf("products of %d %q: %v, want %v", vi, q, got, want)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
