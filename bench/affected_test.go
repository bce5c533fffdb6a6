package bench

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/goccy/go-json"

	"github.com/vulnd/vulnd/index"
)

// affectedCase is one ProductCVEsAt query of BenchmarkProductCVEsAt.
type affectedCase struct {
	name, vendor, product, version string
}

var (
	affectedOnce  sync.Once
	affectedCases []affectedCase
	affectedErr   error
)

// pickAffectedCases picks the products with the most CVEs and, for each,
// versions from its own CPEs: its most named exact version, its most used
// start-including bound (a range edge), the middle one of its distinct
// bounds (inside many ranges), and one past them all.
func pickAffectedCases(b *testing.B, ix *index.Index) ([]affectedCase, error) {
	affectedOnce.Do(func() {
		type prod struct {
			vendor, product string
			cves            int
		}
		var prods []prod
		names := func(l index.List) ([]string, error) {
			var items []struct{ Name string }
			if err := json.Unmarshal(l.AppendAll(nil), &items); err != nil {
				return nil, err
			}
			out := make([]string, len(items))
			for i, it := range items {
				out[i] = it.Name
			}
			return out, nil
		}
		vendors, err := names(ix.Vendors())
		if err != nil {
			affectedErr = err
			return
		}
		for _, v := range vendors {
			l, _ := ix.Products(v)
			ps, err := names(l)
			if err != nil {
				affectedErr = err
				return
			}
			for _, p := range ps {
				c, _ := ix.ProductCVEs(v, p)
				prods = append(prods, prod{v, p, c.Len()})
			}
		}
		slices.SortFunc(prods, func(x, y prod) int { return cmp.Compare(y.cves, x.cves) })
		for _, p := range prods[:min(4, len(prods))] {
			cs, about, err := casesOf(ix, p.vendor, p.product)
			if err != nil {
				affectedErr = err
				return
			}
			b.Logf("%s/%s: %d CVEs, %s", p.vendor, p.product, p.cves, about)
			affectedCases = append(affectedCases, cs...)
		}
	})
	return affectedCases, affectedErr
}

// casesOf reads the CPEs of a product's CVEs and picks its versions;
// about says what it found.
func casesOf(ix *index.Index, vendor, product string) (cs []affectedCase, about string, err error) {
	l, _ := ix.ProductCVEs(vendor, product)
	var list []struct{ Name string }
	if err := json.Unmarshal(l.AppendAll(nil), &list); err != nil {
		return nil, "", err
	}
	exact, starts := map[string]int{}, map[string]int{}
	var bounds []string
	ranges := 0
	for _, c := range list {
		body, _ := ix.CVE(c.Name)
		var cve struct {
			CPEs []index.CPE `json:"cpes"`
		}
		if err := json.Unmarshal(body, &cve); err != nil {
			return nil, "", err
		}
		for _, p := range cve.CPEs {
			if p.Vendor != vendor || p.Product != product || !p.Vulnerable {
				continue
			}
			if index.IsName(p.Version) {
				exact[p.Version]++
			}
			if p.VersionStartIncluding != "" {
				starts[p.VersionStartIncluding]++
			}
			n := len(bounds)
			for _, s := range []string{p.VersionStartIncluding, p.VersionStartExcluding, p.VersionEndIncluding, p.VersionEndExcluding} {
				if s != "" {
					bounds = append(bounds, s)
				}
			}
			if len(bounds) > n {
				ranges++
			}
		}
	}
	most := func(m map[string]int) string {
		best, n := "", 0
		for k, c := range m {
			if c > n || c == n && k < best {
				best, n = k, c
			}
		}
		return best
	}
	slices.SortFunc(bounds, index.CompareVersions)
	bounds = slices.Compact(bounds)
	name := vendor + "/" + product
	add := func(what, version string) {
		if version != "" {
			cs = append(cs, affectedCase{fmt.Sprintf("%s/%s=%s", name, what, version), vendor, product, version})
		}
	}
	add("exact", most(exact))
	delete(starts, most(exact)) // a different version
	add("range_start", most(starts))
	if len(bounds) > 0 {
		add("range_middle", bounds[len(bounds)/2])
		add("past_all", bounds[len(bounds)-1]+".1")
	}
	about = fmt.Sprintf("%d vulnerable ranges, %d distinct bounds, %d distinct exact versions", ranges, len(bounds), len(exact))
	return cs, about, nil
}

// BenchmarkProductCVEsAt times ProductCVEsAt, what GET
// /vendors/{v}/products/{p}/cve?version= asks the index, on the products
// with the most CVEs at full scale. cves/op is the answer's length.
func BenchmarkProductCVEsAt(b *testing.B) {
	_, ix := snapshot(b)
	cs, err := pickAffectedCases(b, ix)
	if err != nil {
		b.Fatal(err)
	}
	built := map[string]bool{}
	for _, c := range cs {
		b.Run(strings.ReplaceAll(c.name, " ", "_"), func(b *testing.B) {
			// A product's first query builds its tables: timed once, alone.
			start := time.Now()
			l, err := ix.ProductCVEsAt(c.vendor, c.product, c.version)
			if err != nil {
				b.Fatalf("%s/%s not found", c.vendor, c.product)
			}
			if key := c.vendor + "/" + c.product; !built[key] {
				built[key] = true
				b.Logf("%s: first query, tables built, in %v", key, time.Since(start))
			}
			n := l.Len()
			b.ReportAllocs()
			for b.Loop() {
				l, _ = ix.ProductCVEsAt(c.vendor, c.product, c.version)
			}
			if l.Len() != n {
				b.Fatalf("%d CVEs, then %d", n, l.Len())
			}
			b.ReportMetric(float64(n), "cves/op")
		})
	}
}
