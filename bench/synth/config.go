package main

import (
	"math"
	"math/rand/v2"
	"strings"
)

// This file draws a record's configurations: which CPEs it affects.
//
// The number of vulnerable cpeMatch entries per record is heavy-tailed:
// 78% have 1-5, 18% 6-30, 3.5% 30-120 and 0.5% 120-300. A product's
// entries are either explicit versions (consecutive releases ending at
// the last affected one) or version ranges (one per affected release
// line, with versionStart*/versionEnd* bounds and version "*"). Firmware
// comes in an AND configuration with its hardware (vulnerable: false),
// some applications in one with the platforms they run on, and some
// records add a Linux distribution in a configuration of its own.

const maxMatches = 300

// updates are the update components explicit versions sometimes carry.
var updates = []string{"-", "sp1", "sp2", "beta", "rc1", "update_1", "p1", "r2"}

// platforms are the vulnerable:false platform CPEs of AND configurations.
var platforms = []string{
	"cpe:2.3:o:microsoft:windows:-:*:*:*:*:*:*:*",
	"cpe:2.3:o:apple:macos:-:*:*:*:*:*:*:*",
	"cpe:2.3:o:linux:linux_kernel:-:*:*:*:*:*:*:*",
	"cpe:2.3:o:google:android:-:*:*:*:*:*:*:*",
	"cpe:2.3:o:apple:iphone_os:-:*:*:*:*:*:*:*",
}

var deviceVariants = []string{"_v2", "_plus", "_mini", "_xl", "_pro", "-s"}

// drawMatchCount draws how many vulnerable entries a record has.
func drawMatchCount(r *rand.Rand) int {
	logUniform := func(lo, hi float64) int {
		return int(math.Exp(math.Log(lo) + r.Float64()*(math.Log(hi)-math.Log(lo))))
	}
	switch u := r.Float64(); {
	case u < 0.78:
		return min(5, 1+int(r.ExpFloat64()*1.3))
	case u < 0.96:
		return logUniform(6, 31)
	case u < 0.995:
		return logUniform(30, 121)
	}
	return logUniform(120, maxMatches+1)
}

func (g *Generator) configurations(s *subject) []Configuration {
	if s.backlog {
		return nil
	}
	r := g.stream(s.i, secConfig)
	if s.rejected {
		return nil
	}
	switch s.status {
	case "Analyzed", "Modified":
		if r.Float64() < 0.03 {
			return nil
		}
	case "Deferred":
		if !s.hasNVD || r.Float64() < 0.3 {
			return nil
		}
	default: // not analysed yet
		if r.Float64() < 0.95 {
			return nil
		}
	}
	return g.drawConfigurations(r, s)
}

// truth is what NVD's analysis finds affected, whether or not the feed
// shows it yet: the record's configurations when it has them, else
// those it would have (the same draws). The record's CNA and ADP entries
// are written from it (cve5.go). nil for a rejected record.
func (g *Generator) truth(s *subject) []Configuration {
	r := g.stream(s.i, secConfig)
	if s.rejected {
		return nil
	}
	if s.status != "Deferred" || s.hasNVD {
		r.Float64() // configurations' draw whether the feed shows them
	}
	return g.drawConfigurations(r, s)
}

// drawConfigurations draws the configurations of s, continuing r.
func (g *Generator) drawConfigurations(r *rand.Rand, s *subject) []Configuration {
	voc := g.plan.voc
	n := drawMatchCount(r)
	// Split n over the products: the main one gets the most.
	shares := make([]int, len(s.prods))
	shares[0] = n
	for k := 1; k < len(s.prods) && shares[0] > 1; k++ {
		take := 1 + r.IntN(max(1, shares[0]/3))
		shares[k] = take
		shares[0] -= take
	}
	for k := range shares {
		shares[k] = max(shares[k], 1)
	}

	mainP := &voc.products[s.prods[0]]
	mainEntries := g.entries(r, s, mainP, s.cur, shares[0])
	var out []Configuration
	var first *Node
	switch {
	case mainP.device != "":
		devs := []string{mainP.device}
		if r.Float64() < 0.2 {
			for _, k := range r.Perm(len(deviceVariants))[:1+r.IntN(3)] {
				devs = append(devs, mainP.device+deviceVariants[k])
			}
		}
		hw := make([]CPEMatch, len(devs))
		for k, d := range devs {
			hw[k] = match(false, criteria('h', voc.vendors[mainP.vendor].name, d, "-", "*", "", ""), "", "", "", "")
		}
		out = append(out, Configuration{Operator: "AND", Nodes: []Node{orNode(mainEntries), orNode(hw)}})
	case mainP.part == 'a' && r.Float64() < 0.035:
		ks := r.Perm(len(platforms))[:1+r.IntN(3)]
		pl := make([]CPEMatch, len(ks))
		for k, x := range ks {
			pl[k] = CPEMatch{Criteria: platforms[x], MatchCriteriaID: matchID(platforms[x], "", "", "", "")}
		}
		out = append(out, Configuration{Operator: "AND", Nodes: []Node{orNode(mainEntries), orNode(pl)}})
	default:
		out = append(out, Configuration{Nodes: []Node{orNode(mainEntries)}})
		// The node lives in its own backing array: out growing later
		// does not move it.
		first = &out[0].Nodes[0]
	}
	for k := 1; k < len(s.prods); k++ {
		p := &voc.products[s.prods[k]]
		es := g.entries(r, s, p, p.current(r, s.pubYear), shares[k])
		if first != nil && r.Float64() < 0.7 {
			first.CPEMatch = append(first.CPEMatch, es...)
		} else {
			out = append(out, Configuration{Nodes: []Node{orNode(es)}})
		}
	}
	if s.pubYear >= 2010 && mainP.part == 'a' && len(voc.distros) > 0 && r.Float64() < 0.08 {
		d := &voc.products[voc.distros[r.IntN(len(voc.distros))]]
		v := d.current(r, s.pubYear)
		k := 1 + r.IntN(4)
		es := make([]CPEMatch, 0, k)
		for range k {
			es = append(es, g.explicit(d, v, "", ""))
			var ok bool
			if v, ok = d.prev(v); !ok {
				break
			}
		}
		reverse(es)
		out = append(out, Configuration{Nodes: []Node{orNode(es)}})
	}
	return out
}

func orNode(ms []CPEMatch) Node { return Node{Operator: "OR", CPEMatch: ms} }

func reverse[T any](xs []T) {
	for a, b := 0, len(xs)-1; a < b; a, b = a+1, b-1 {
		xs[a], xs[b] = xs[b], xs[a]
	}
}

// entries returns about k vulnerable entries for product p whose last
// affected release is last.
func (g *Generator) entries(r *rand.Rand, s *subject, p *product, last ver, k int) []CPEMatch {
	pRange := 0.25
	if s.pubYear >= 2012 {
		pRange = 0.6
	}
	if p.part == 'h' || r.Float64() < 0.02 {
		// Hardware and some software are listed without a version.
		return []CPEMatch{g.explicitRaw(p, "-", "", "")}
	}
	if k > 5 {
		pRange = 0.15
	}
	if r.Float64() < pRange {
		return g.ranges(r, p, last, min(k, 12))
	}
	out := make([]CPEMatch, 0, k)
	both := p.part == 'o' && r.Float64() < 0.25 // x64 and x86 builds
	v := last
	for len(out) < k {
		upd := ""
		if r.Float64() < 0.04 {
			upd = updates[r.IntN(len(updates))]
		}
		if both {
			out = append(out, g.explicit(p, v, upd, "x86"), g.explicit(p, v, upd, "x64"))
		} else {
			out = append(out, g.explicit(p, v, upd, ""))
		}
		var ok bool
		if v, ok = p.prev(v); !ok {
			break
		}
	}
	reverse(out)
	return out
}

// ranges returns n range entries, one per release line, newest last.
func (g *Generator) ranges(r *rand.Rand, p *product, last ver, n int) []CPEMatch {
	vendorName := g.plan.voc.vendors[p.vendor].name
	crit := criteria(p.part, vendorName, p.name, "*", "*", p.targetSW, "")
	out := make([]CPEMatch, 0, n)
	L := last
	for t := 0; t < n; t++ {
		S := p.lineStart(L)
		F := p.next(L)
		var m CPEMatch
		switch u := r.Float64(); {
		case n > 1 && t < n-1 || u < 0.25:
			m = match(true, crit, p.format(S), "", "", p.format(F))
		case u < 0.70:
			m = match(true, crit, "", "", "", p.format(F))
		case u < 0.88:
			m = match(true, crit, "", "", p.format(L), "")
		case u < 0.95:
			if before, ok := p.prev(S); ok {
				m = match(true, crit, "", p.format(before), p.format(L), "")
			} else {
				m = match(true, crit, p.format(S), "", p.format(L), "")
			}
		default:
			m = match(true, crit, p.format(S), "", "", "")
		}
		out = append(out, m)
		// Step back to an earlier release line.
		prev, ok := p.prev(S)
		if !ok {
			break
		}
		L = prev
		for range r.IntN(3) {
			if q, ok := p.prev(L); ok && q.a == L.a && q.b == L.b {
				L = q
			}
		}
	}
	reverse(out)
	return out
}

// explicit is the vulnerable entry for release v of p.
func (g *Generator) explicit(p *product, v ver, update, targetHW string) CPEMatch {
	return g.explicitRaw(p, p.format(v), update, targetHW)
}

func (g *Generator) explicitRaw(p *product, version, update, targetHW string) CPEMatch {
	vendorName := g.plan.voc.vendors[p.vendor].name
	if update == "" {
		update = "*"
	}
	c := criteria(p.part, vendorName, p.name, version, update, p.targetSW, targetHW)
	return match(true, c, "", "", "", "")
}

// criteria builds a CPE 2.3 formatted string from unescaped components
// ("*" and "-" are kept as the logical values ANY and NA).
func criteria(part byte, vendor, product, version, update, targetSW, targetHW string) string {
	esc := func(s string) string {
		if s == "" {
			return "*"
		}
		if s == "*" || s == "-" {
			return s
		}
		return escapeCPE(s)
	}
	var b strings.Builder
	b.Grow(64)
	b.WriteString("cpe:2.3:")
	b.WriteByte(part)
	for _, c := range [...]string{esc(vendor), esc(product), esc(version), esc(update), "*", "*", "*", esc(targetSW), esc(targetHW), "*"} {
		b.WriteByte(':')
		b.WriteString(c)
	}
	return b.String()
}

func match(vulnerable bool, crit, startIncl, startExcl, endIncl, endExcl string) CPEMatch {
	return CPEMatch{
		Vulnerable:            vulnerable,
		Criteria:              crit,
		VersionStartIncluding: startIncl,
		VersionStartExcluding: startExcl,
		VersionEndIncluding:   endIncl,
		VersionEndExcluding:   endExcl,
		MatchCriteriaID:       matchID(crit, startIncl, startExcl, endIncl, endExcl),
	}
}

// matchID is the matchCriteriaId of a criteria and its range: the same
// match criteria always get the same id, across records, as in NVD.
func matchID(crit, si, se, ei, ee string) string {
	h := hashString(crit)
	for _, x := range [...]string{si, se, ei, ee} {
		h = mix(h, hashString(x))
	}
	return uuidOf(mix(h, 1), mix(h, 2), hexUpper)
}
