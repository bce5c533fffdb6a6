// Command scalepick picks, from a snapshot built from NVD feeds and CVE
// JSON 5 records, the two ?version= queries bench/scale.sh compares: one
// on a product whose CVEs come mostly from the records' affected entries
// (CNA data) and one on a product of similar CVE count whose CVEs all
// come from NVD's CPEs, at versions matching a similar number of CVEs.
//
//	scalepick -snapshot DIR [-pool N]
//
// A CVE of a product "comes from entries" when its body's cpes do not
// name the product (vulnd listed it under the product because of its
// record's affected entries). Among the N products with the most CVEs
// (-pool, default 500), the CNA product is the one with the most CVEs
// of those where such CVEs are at least half (else the one with the
// largest share), the NVD product the one of similar CVE count with the
// smallest share (5 % at most when some has so few; none is best). The CNA product's version is the
// one of its versions (the product body's, else those of the pool)
// whose matches from entries most outnumber those from NVD (ties: more
// from entries); the NVD product's, the one of its
// versions whose match count is closest to that. It prints two lines:
//
//	PICK class=cna vendor=V product=P version=X path=/vendors/... cves=N from_entries=E matches=M matches_from_entries=ME
//	PICK class=nvd ...
//
// Errors go to stderr with exit status 1 (2 for bad flags).
package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"slices"

	"github.com/goccy/go-json"

	"github.com/vulnd/vulnd/index"
	"github.com/vulnd/vulnd/loader"
)

func main() {
	fs := flag.NewFlagSet("scalepick", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	snap := fs.String("snapshot", "", "snapshot directory built with CVE JSON 5 records (required)")
	pool := fs.Int("pool", 500, "how many of the products with the most CVEs to consider")
	if err := fs.Parse(os.Args[1:]); err != nil || *snap == "" || *pool < 2 || fs.NArg() > 0 {
		if err == nil {
			err = errors.New("-snapshot DIR is required, -pool at least 2, no arguments")
		}
		fmt.Fprintf(os.Stderr, "scalepick: %v\nusage: scalepick -snapshot DIR [-pool N]\n", err)
		os.Exit(2)
	}
	ix, _, err := loader.Load(*snap)
	if err != nil {
		fmt.Fprintf(os.Stderr, "scalepick: %v\n", err)
		os.Exit(1)
	}
	picks, err := pick(ix, *pool)
	if err != nil {
		fmt.Fprintf(os.Stderr, "scalepick: %v\n", err)
		os.Exit(1)
	}
	for _, p := range picks {
		fmt.Println(p)
	}
}

// product is one candidate and what is known of it.
type product struct {
	vendor, name string
	cves         int
	fromEntries  map[string]bool // the CVEs listed under it by entries alone
}

func (p *product) share() float64 { return float64(len(p.fromEntries)) / float64(max(p.cves, 1)) }

// names decodes the "name" of every item of a JSON list.
func names(b []byte) ([]string, error) {
	var items []struct{ Name string }
	if err := json.Unmarshal(b, &items); err != nil {
		return nil, err
	}
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Name
	}
	return out, nil
}

func pick(ix *index.Index, poolSize int) ([]string, error) {
	vendors, err := names(ix.Vendors().AppendAll(nil))
	if err != nil {
		return nil, err
	}
	var all []*product
	for _, v := range vendors {
		l, err := ix.Products(v)
		if err != nil {
			return nil, err
		}
		ps, err := names(l.AppendAll(nil))
		if err != nil {
			return nil, err
		}
		for _, p := range ps {
			c, err := ix.ProductCVEs(v, p)
			if err != nil {
				return nil, err
			}
			all = append(all, &product{vendor: v, name: p, cves: c.Len()})
		}
	}
	slices.SortFunc(all, func(x, y *product) int {
		return cmp.Or(cmp.Compare(y.cves, x.cves), cmp.Compare(x.vendor, y.vendor), cmp.Compare(x.name, y.name))
	})
	pool := all[:min(poolSize, len(all))]
	if len(pool) < 2 {
		return nil, fmt.Errorf("the snapshot has %d products: too few to compare", len(pool))
	}
	for _, p := range pool {
		c, _ := ix.ProductCVEs(p.vendor, p.name)
		cves, err := names(c.Bodies().AppendAll(nil))
		if err != nil {
			return nil, err
		}
		p.fromEntries = map[string]bool{}
		for _, name := range cves {
			body, err := ix.CVE(name)
			if err != nil {
				return nil, err
			}
			var cve struct {
				CPEs []struct{ Vendor, Product string } `json:"cpes"`
			}
			if err := json.Unmarshal(body, &cve); err != nil {
				return nil, fmt.Errorf("%s: %v", name, err)
			}
			if !slices.ContainsFunc(cve.CPEs, func(c struct{ Vendor, Product string }) bool {
				return c.Vendor == p.vendor && c.Product == p.name
			}) {
				p.fromEntries[name] = true
			}
		}
	}
	// The CNA product: the most CVEs among those mostly from entries,
	// else the largest share.
	var cna *product
	for _, p := range pool {
		if p.share() >= 0.5 && (cna == nil || p.cves > cna.cves) {
			cna = p
		}
	}
	if cna == nil {
		cna = slices.MaxFunc(pool, func(x, y *product) int {
			return cmp.Or(cmp.Compare(x.share(), y.share()), cmp.Compare(x.cves, y.cves))
		})
	}
	if len(cna.fromEntries) == 0 {
		return nil, errors.New("no product of the pool has CVEs from CVE JSON 5 entries: was the snapshot built with the records?")
	}
	// The NVD products: those with the smallest share from entries (none,
	// or 5 % at most), the closest in CVE count first; the first of them
	// with a version that matches some CVE is taken below (a product
	// named only by CPEs that are not vulnerable matches none).
	low := slices.MinFunc(pool, func(x, y *product) int { return cmp.Compare(x.share(), y.share()) }).share()
	var nvds []*product
	for _, p := range pool {
		if p != cna && p.share() <= max(low, 0.05) {
			nvds = append(nvds, p)
		}
	}
	slices.SortStableFunc(nvds, func(x, y *product) int { return cmp.Compare(abs(x.cves-cna.cves), abs(y.cves-cna.cves)) })
	if len(nvds) == 0 {
		return nil, errors.New("no product of the pool has its CVEs from NVD's CPEs: try a larger -pool")
	}

	// Candidate versions: the product's own, else every pool product's.
	versionsOf := func(p *product) ([]string, error) {
		b, err := ix.Product(p.vendor, p.name)
		if err != nil {
			return nil, err
		}
		var body struct {
			Versions []string `json:"versions"`
		}
		if err := json.Unmarshal(b, &body); err != nil {
			return nil, err
		}
		return body.Versions, nil
	}
	at := func(p *product, version string) (matches, fromEntries int, err error) {
		c, err := ix.ProductCVEsAt(p.vendor, p.name, version)
		if err != nil {
			return 0, 0, err
		}
		ns, err := names(c.Bodies().AppendAll(nil))
		if err != nil {
			return 0, 0, err
		}
		for _, n := range ns {
			if p.fromEntries[n] {
				fromEntries++
			}
		}
		return len(ns), fromEntries, nil
	}
	candidates := func(p *product) ([]string, error) {
		vs, err := versionsOf(p)
		if err != nil || len(vs) > 0 {
			return vs, err
		}
		seen := map[string]bool{}
		for _, q := range pool {
			qs, err := versionsOf(q)
			if err != nil {
				return nil, err
			}
			for _, v := range qs {
				if !seen[v] {
					seen[v] = true
					vs = append(vs, v)
				}
			}
		}
		return vs, nil
	}
	cvs, err := candidates(cna)
	if err != nil {
		return nil, err
	}
	bestV, bestM, bestE := "", -1, -1
	for _, v := range cvs {
		m, e, err := at(cna, v)
		if err != nil {
			return nil, err
		}
		// Matches from entries beyond those from NVD first, then more
		// from entries: the query answered most from CNA data.
		if e > 0 && (bestE <= 0 || 2*e-m > 2*bestE-bestM || 2*e-m == 2*bestE-bestM && e > bestE) {
			bestV, bestM, bestE = v, m, e
		}
	}
	if bestE <= 0 {
		return nil, fmt.Errorf("no version of %s/%s matches a CVE from its entries", cna.vendor, cna.name)
	}
	var nvd *product
	nV, nM, nE := "", -1, 0
	for _, p := range nvds {
		nvs, err := candidates(p)
		if err != nil {
			return nil, err
		}
		pV, pM, pE := "", -1, 0
		for _, v := range nvs {
			m, e, err := at(p, v)
			if err != nil {
				return nil, err
			}
			// The closest match count, never none; on a tie, fewer
			// from entries.
			if m > 0 && (pM < 0 || abs(m-bestM) < abs(pM-bestM) || abs(m-bestM) == abs(pM-bestM) && e < pE) {
				pV, pM, pE = v, m, e
			}
		}
		if pM > 0 {
			nvd, nV, nM, nE = p, pV, pM, pE
			break
		}
	}
	if nvd == nil {
		return nil, errors.New("no NVD-data product of the pool has a version that matches a CVE: try a larger -pool")
	}
	line := func(class string, p *product, v string, m, e int) string {
		path := "/vendors/" + url.PathEscape(p.vendor) + "/products/" + url.PathEscape(p.name) + "/cve?version=" + url.QueryEscape(v)
		return fmt.Sprintf("PICK class=%s vendor=%s product=%s version=%s path=%s cves=%d from_entries=%d matches=%d matches_from_entries=%d",
			class, p.vendor, p.name, v, path, p.cves, len(p.fromEntries), m, e)
	}
	return []string{line("cna", cna, bestV, bestM, bestE), line("nvd", nvd, nV, nM, nE)}, nil
}

func abs(x int) int { return max(x, -x) }
