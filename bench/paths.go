package bench

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strconv"

	"github.com/goccy/go-json"

	"github.com/vulnd/vulnd/httpapi"
	"github.com/vulnd/vulnd/index"
)

// NVDPageSize is the size of the class "a page of 2,000 records": NVD's
// largest page, which its clients ask for.
const NVDPageSize = 2000

// Class is one endpoint class and the paths (with query) a benchmark or
// load test cycles through.
type Class struct {
	Name  string
	Paths []string
}

// Getter answers a GET of target (a path and query) by decoding the JSON
// body of its 200 into v; any other status is an error.
type Getter func(target string, v any) error

// PickPaths picks perClass real paths of every endpoint class from a
// snapshot of counts c, asking get: the same seed always gives the same
// paths for the same snapshot. CVEs are drawn at random; vendors and
// products are those the drawn CVEs name, so they are drawn as often as
// they have CVEs, the way users ask for them: big vendors often, the long
// tail too. Pages are drawn from the first 50 of each list. NVD's CVE API
// gets two classes: pages of 2,000 records (its largest, as NVD's clients
// sync) at startIndex 0, 2000, ... (the first 50 pages), and one record by
// cveId, of the drawn CVEs. Their envelope's timestamp is the snapshot's
// build time, not the time of the request, so every answer to a path is
// the same bytes, which nginx can serve as vulnd served them once.
func PickPaths(get Getter, c index.Counts, perClass int) ([]Class, error) {
	r := rand.New(rand.NewPCG(1, 2))
	pages := func(total int) int { return max(1, (total+httpapi.DefaultPageSize-1)/httpapi.DefaultPageSize) }

	var names []struct {
		Name string `json:"name"`
	}
	var cves, vendors []string
	for len(cves) < perClass {
		if err := get("/cve?page="+strconv.Itoa(1+r.IntN(pages(c.CVEs))), &names); err != nil {
			return nil, err
		}
		for _, n := range names {
			cves = append(cves, n.Name)
		}
	}
	type pair struct{ v, p, version string }
	var products []pair
	for _, name := range cves[:perClass/2] {
		var cve struct {
			CPEs []struct {
				Vendor   string `json:"vendor"`
				Product  string `json:"product"`
				Version  string `json:"version"`
				StartInc string `json:"version_start_including"`
				StartExc string `json:"version_start_excluding"`
				EndInc   string `json:"version_end_including"`
				EndExc   string `json:"version_end_excluding"`
			} `json:"cpes"`
		}
		if err := get("/cve/"+name, &cve); err != nil {
			return nil, err
		}
		for _, p := range cve.CPEs {
			if index.IsName(p.Vendor) && index.IsName(p.Product) {
				vendors = append(vendors, p.Vendor)
				// A version users would ask about: the CPE's own, else
				// a bound of its range (inclusive ones first: they match).
				v := p.Version
				if v == "*" || v == "-" || v == "" {
					v = cmp.Or(p.EndInc, p.StartInc, p.EndExc, p.StartExc, "1.0")
				}
				products = append(products, pair{p.Vendor, p.Product, v})
			}
		}
	}
	if len(products) == 0 {
		return nil, fmt.Errorf("no CVE drawn names a product")
	}
	var cwes []string
	if err := get("/cwe", &names); err != nil {
		return nil, err
	}
	for _, n := range names {
		cwes = append(cwes, n.Name)
	}
	var reports []struct {
		ID string `json:"id"`
	}
	if err := get("/reports", &reports); err != nil {
		return nil, err
	}
	if len(reports) == 0 {
		return nil, fmt.Errorf("the snapshot has no report: build it with -previous")
	}
	var alerts []struct {
		ID json.Number `json:"id"`
	}
	if err := get("/reports/"+reports[0].ID+"/alerts", &alerts); err != nil {
		return nil, err
	}

	var nvd struct {
		TotalResults int `json:"totalResults"`
	}
	if err := get(httpapi.NVDPath+"?resultsPerPage=0", &nvd); err != nil {
		return nil, err
	}
	if nvd.TotalResults == 0 {
		return nil, fmt.Errorf("the snapshot has no NVD records (format 5 or older?)")
	}

	pick := func(n int, f func(i int) string) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = f(i)
		}
		return out
	}
	page := func(total int) string { return strconv.Itoa(1 + r.IntN(min(pages(total), 50))) }
	return []Class{
		{"one CVE", pick(perClass, func(i int) string { return "/cve/" + cves[i%len(cves)] })},
		{"CVE page", pick(perClass, func(int) string { return "/cve?page=" + page(c.CVEs) })},
		{"band page", pick(perClass, func(int) string {
			return "/cve?cvss=" + []string{"low", "medium", "high"}[r.IntN(3)] + "&page=" + strconv.Itoa(1+r.IntN(50))
		})},
		{"vendor's CVE page", pick(perClass, func(i int) string { return "/vendors/" + url.PathEscape(vendors[i%len(vendors)]) + "/cve" })},
		{"product's CVE page", pick(perClass, func(i int) string {
			p := products[r.IntN(len(products))]
			return "/vendors/" + url.PathEscape(p.v) + "/products/" + url.PathEscape(p.p) + "/cve"
		})},
		{"product's CVEs at a version", pick(perClass, func(i int) string {
			p := products[r.IntN(len(products))]
			return "/vendors/" + url.PathEscape(p.v) + "/products/" + url.PathEscape(p.p) + "/cve?version=" + url.QueryEscape(p.version)
		})},
		{"CVE details", pick(perClass, func(i int) string { return "/cve/" + cves[i%len(cves)] + "/details" })},
		{"one vendor", pick(perClass, func(i int) string { return "/vendors/" + url.PathEscape(vendors[i%len(vendors)]) })},
		{"one product", pick(perClass, func(i int) string {
			p := products[r.IntN(len(products))]
			return "/vendors/" + url.PathEscape(p.v) + "/products/" + url.PathEscape(p.p)
		})},
		{"one CWE", pick(perClass, func(i int) string { return "/cwe/" + cwes[i%len(cwes)] })},
		{"CWE's CVE page", pick(perClass, func(i int) string { return "/cwe/" + cwes[i%len(cwes)] + "/cve?page=" + strconv.Itoa(1+r.IntN(5)) })},
		{"vendor list", pick(perClass, func(int) string { return "/vendors?page=" + page(c.Vendors) })},
		{"report", pick(perClass, func(int) string { return "/reports/" + reports[0].ID })},
		{"alert's events", pick(perClass, func(i int) string {
			return "/reports/" + reports[0].ID + "/alerts/" + alerts[r.IntN(len(alerts))].ID.String()
		})},
		{"a page of 2,000 records", pick(perClass, func(int) string {
			pages := (nvd.TotalResults + NVDPageSize - 1) / NVDPageSize
			return httpapi.NVDPath + "?resultsPerPage=" + strconv.Itoa(NVDPageSize) + "&startIndex=" + strconv.Itoa(NVDPageSize*r.IntN(min(pages, 50)))
		})},
		{"one record by cveId", pick(perClass, func(i int) string { return httpapi.NVDPath + "?cveId=" + cves[i%len(cves)] })},
	}, nil
}
