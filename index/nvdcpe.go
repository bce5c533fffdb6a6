package index

// cpeName and virtualMatchString of NVD's CVE API: NVD's CPE matching
// against a record's configurations, versions in this API's one order
// (version.go). The records asked are those of the vendor and product
// the name or match string names (the index's product lists), each
// decoded and its configurations read, so no CPE of the records is kept
// in memory for a query few clients make.

import (
	"errors"
	"slices"
	"strings"

	"github.com/goccy/go-json"
)

// NVDCPE is a cpeName or a virtualMatchString, checked.
type NVDCPE struct {
	// Comps are the 11 components after "cpe:2.3:", escaped as written;
	// a match string's missing ones are "*".
	Comps [11]string
	// Virtual: a virtualMatchString (else a cpeName).
	Virtual bool
	// Vulnerable: isVulnerable, only vulnerable criteria count.
	Vulnerable bool
	// The version range of a virtualMatchString (versionStart,
	// versionEnd and their types); "" for none.
	Start, End                   string
	StartIncluding, EndIncluding bool
}

// ErrBadCPE is ParseNVDCPE's error for a value that is no CPE 2.3 name.
var ErrBadCPE = errors.New("not a CPE 2.3 name")

// ParseNVDCPE reads a CPE 2.3 formatted string: all 13 parts for a name
// (whole), at least up to the product for a match string.
func ParseNVDCPE(s string, whole bool) (NVDCPE, error) {
	var c NVDCPE
	rest, ok := strings.CutPrefix(strings.ToLower(s), "cpe:2.3:")
	if !ok {
		return c, ErrBadCPE
	}
	n := 0
	start := 0
	for i := 0; i <= len(rest); i++ {
		if i < len(rest) && rest[i] == '\\' {
			i++
			continue
		}
		if i == len(rest) || rest[i] == ':' {
			if n == len(c.Comps) {
				return c, ErrBadCPE
			}
			c.Comps[n] = rest[start:min(i, len(rest))]
			n++
			start = i + 1
		}
	}
	if whole && n != len(c.Comps) || n < 3 {
		return c, ErrBadCPE
	}
	for i := n; i < len(c.Comps); i++ {
		c.Comps[i] = "*"
	}
	for _, comp := range c.Comps {
		if comp == "" {
			return c, ErrBadCPE
		}
	}
	return c, nil
}

// Names tells whether the vendor and product are concrete values.
func (c *NVDCPE) Names() bool {
	for _, v := range c.Comps[1:3] {
		if v == "*" || v == "-" || strings.ContainsAny(v, "*?") {
			return false
		}
	}
	return true
}

// nvdCPEMatch is a cpeMatch entry of a record's configurations.
type nvdCPEMatch struct {
	Vulnerable            bool   `json:"vulnerable"`
	Criteria              string `json:"criteria"`
	VersionStartIncluding string `json:"versionStartIncluding"`
	VersionStartExcluding string `json:"versionStartExcluding"`
	VersionEndIncluding   string `json:"versionEndIncluding"`
	VersionEndExcluding   string `json:"versionEndExcluding"`
}

type nvdConfigurations struct {
	Configurations []struct {
		Nodes []struct {
			CPEMatch []nvdCPEMatch `json:"cpeMatch"`
		} `json:"nodes"`
	} `json:"configurations"`
}

// cpeCandidates are the positions, in the order served, of the NVD
// records of the CVEs that have a CPE of c's vendor and product.
func (ix *Index) cpeCandidates(c *NVDCPE) []int32 {
	l, err := ix.ProductCVEs(unescapeCPE(c.Comps[1]), unescapeCPE(c.Comps[2]))
	if err != nil {
		return nil
	}
	var out []int32
	for i := 0; i < l.Len(); i++ {
		year, num, ok := cveNumber(bodyName(l.item(i)))
		if !ok {
			continue
		}
		name := bodyName(l.item(i))
		if p, ok := ix.nvd.byName[cveKey(year, len(name)-len("CVE-yyyy-"), num)]; ok {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// bodyName is the name a CVE body or summary starts with.
func bodyName(body []byte) string {
	const key = `{"name":"`
	if len(body) < len(key) || string(body[:len(key)]) != key {
		return ""
	}
	end := strings.IndexByte(string(body[len(key):min(len(body), len(key)+32)]), '"')
	if end < 0 {
		return ""
	}
	return string(body[len(key) : len(key)+end])
}

// cpeMatches tells whether some cpeMatch entry of the record raw matches
// c, as NVD matches a cpeName or a virtualMatchString.
func cpeMatches(raw []byte, c *NVDCPE) bool {
	var cfg nvdConfigurations
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return false
	}
	for _, conf := range cfg.Configurations {
		for _, node := range conf.Nodes {
			for i := range node.CPEMatch {
				m := &node.CPEMatch[i]
				if c.Vulnerable && !m.Vulnerable {
					continue
				}
				if c.matches(m) {
					return true
				}
			}
		}
	}
	return false
}

func (c *NVDCPE) matches(m *nvdCPEMatch) bool {
	crit, err := ParseNVDCPE(m.Criteria, true)
	if err != nil {
		return false
	}
	for i := range c.Comps {
		want, have := c.Comps[i], crit.Comps[i]
		if i == 3 {
			if !c.versionMatches(unescapeCPE(want), unescapeCPE(have), withUpdate(want, c.Comps[4]), withUpdate(have, crit.Comps[4]), m) {
				return false
			}
			continue
		}
		if want == "*" || have == "*" {
			continue
		}
		if unescapeCPE(want) != unescapeCPE(have) {
			return false
		}
	}
	return true
}

// withUpdate is a CPE's version against a range: its version component,
// followed by "-" and its update when that is a value (log4j:2.0:beta9
// is 2.0-beta9), as the API decisions read a CPE's version.
func withUpdate(version, update string) string {
	version = unescapeCPE(version)
	if update == "*" || update == "-" || update == "" {
		return version
	}
	return version + "-" + unescapeCPE(update)
}

// versionMatches compares the version component: want is the query's,
// have the criteria's (wantR and haveR with their updates, for ranges),
// with the criteria's bounds.
func (c *NVDCPE) versionMatches(want, have, wantR, haveR string, m *nvdCPEMatch) bool {
	bounded := m.VersionStartIncluding != "" || m.VersionStartExcluding != "" || m.VersionEndIncluding != "" || m.VersionEndExcluding != ""
	switch {
	case want == "-" || have == "-":
		return want == have || want == "*" && c.Start == "" && c.End == ""
	case want != "*" && have != "*":
		return CompareVersions(want, have) == 0
	case want != "*": // have is *: the criteria's range, if any, must hold want
		return !bounded || inBounds(wantR, m)
	case have != "*": // a match string's * with its own range, if any
		return c.rangeHolds(haveR)
	default:
		return !bounded || c.Start == "" && c.End == "" || c.overlaps(m)
	}
}

// vsBound compares version x with bound b: a pre-release counts as its
// release against a bound that is that release, as npm reads ranges
// (< 2.0 does not hold 2.0-beta9; >= 2.0 does).
func vsBound(x, b string) int {
	b = unescapeCPE(b)
	if rel, ok := release(x); ok && CompareVersions(rel, b) == 0 {
		return 0
	}
	return CompareVersions(x, b)
}

// inBounds tells whether the criteria's range holds x.
func inBounds(x string, m *nvdCPEMatch) bool {
	return (m.VersionStartIncluding == "" || vsBound(x, m.VersionStartIncluding) >= 0) &&
		(m.VersionStartExcluding == "" || vsBound(x, m.VersionStartExcluding) > 0) &&
		(m.VersionEndIncluding == "" || vsBound(x, m.VersionEndIncluding) <= 0) &&
		(m.VersionEndExcluding == "" || vsBound(x, m.VersionEndExcluding) < 0)
}

// rangeHolds tells whether the query's own range holds x.
func (c *NVDCPE) rangeHolds(x string) bool {
	if c.Start != "" {
		if d := vsBound(x, c.Start); d < 0 || d == 0 && !c.StartIncluding {
			return false
		}
	}
	if c.End != "" {
		if d := vsBound(x, c.End); d > 0 || d == 0 && !c.EndIncluding {
			return false
		}
	}
	return true
}

// overlaps tells whether the query's range and the criteria's share a
// version: neither ends before the other starts.
func (c *NVDCPE) overlaps(m *nvdCPEMatch) bool {
	// The criteria's start against the query's end.
	if c.End != "" {
		for _, s := range []struct {
			b    string
			incl bool
		}{{m.VersionStartIncluding, true}, {m.VersionStartExcluding, false}} {
			if s.b == "" {
				continue
			}
			d := CompareVersions(unescapeCPE(s.b), c.End)
			if d > 0 || d == 0 && !(s.incl && c.EndIncluding) {
				return false
			}
		}
	}
	// The query's start against the criteria's end.
	if c.Start != "" {
		for _, e := range []struct {
			b    string
			incl bool
		}{{m.VersionEndIncluding, true}, {m.VersionEndExcluding, false}} {
			if e.b == "" {
				continue
			}
			d := CompareVersions(c.Start, unescapeCPE(e.b))
			if d > 0 || d == 0 && !(e.incl && c.StartIncluding) {
				return false
			}
		}
	}
	return true
}
