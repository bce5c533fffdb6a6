package main

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// This file draws the next day (Config.Next): the feeds as they would be
// downloaded one day after the base data set, for change tracking.
//
// Which records change: exactly round(ChangeRate*CVEs) of them, those
// whose rank (their place in a seeded permutation of 0..CVEs-1) is below
// that number. A changed record is drawn as in the base set, then edited
// with random streams of revision 1, one per section, so it remains a
// pure function of (Seed, CVEs, ChangeRate, i); every other record is
// byte-identical to its base version.
//
// A changed record gets a lastModified on 2026-11-22, after every date of
// the base set, and
//   - when already rejected: its rejection text redrawn;
//   - else, with probability pReject (0.03): rejected: "** REJECT ** ..."
//     text, no metrics, weaknesses, configurations or references;
//   - else, with probability pStatusOnly (0.10): only its vulnStatus moves
//     on (Awaiting Analysis -> Analyzed, Analyzed -> Modified, ...), a
//     change that change tracking ignores;
//   - else each group of changeGroups, independently with the group's
//     probability, then one kind of the group by weight:
//     description 0.25: the English text edited (rewritten, a sentence
//     appended, or marked disputed);
//     CPEs 0.35: matches added 0.55 (later releases, another product of
//     the vendor, a distribution), some removed 0.30 (or the only one
//     corrected into a range), all removed 0.15;
//     CVSS 0.35: a metric added 0.50 (NVD's v3.1 Primary when NVD has
//     not scored the record, else a CNA's or the ADP's), one re-scored
//     0.35, a CNA's or the ADP's removed 0.15;
//     CWEs 0.20: one added 0.6 (NVD's Primary weakness when it has none),
//     one replaced 0.4 (mostly NVD-CWE-noinfo/Other by a CWE id);
//     references 0.45: added 0.60, removed 0.15, tags changed 0.25;
//     references are added when no group is drawn. A kind that does not
//     apply to the record (removing a match when it has none) gives way
//     to another (fallback), usually the matching addition.
//
// vulnStatus follows the content: NVD's changes (CPEs, its own metrics and
// weaknesses, reference tags) make the record Analyzed, and complete the
// analysis of a record NVD had not analysed yet (its v3.1 Primary metric,
// its Primary weakness, tags on untagged references); a CNA's changes
// make an Analyzed record Modified and a Received one Awaiting Analysis.
//
// So that any next day with numChangeKinds (14) changed records or more
// shows every kind, each kind is given instead of drawn kinds to one
// changed record: the first by rank, not yet given one, that admits it
// (NewPlan finds them by drawing a few records).
//
// New records: NewCVEs(CVEs) of them, at indexes CVEs.., with ids of the
// last year numbered on from its last one, published on 2026-11-22 and
// Received or Awaiting Analysis, written at the end of that year's feed.

// NewCVEs is the number of records a next day adds to a data set of n:
// about 0.1%, at least 3.
func NewCVEs(n int) int { return max(3, int(math.Round(float64(n)/1000))) }

// changeKind is one kind of change a record can show on the next day.
type changeKind uint8

const (
	chDescription  changeKind = iota // English description edited
	chCPEAdd                         // CPE matches added
	chCPERemove                      // some CPE matches removed
	chCPERemoveAll                   // every configuration removed
	chMetricAdd                      // a CVSS metric added
	chMetricScore                    // a CVSS metric re-scored
	chMetricRemove                   // a CVSS metric removed
	chCWEAdd                         // a CWE added
	chCWEReplace                     // a CWE replaced
	chRefAdd                         // references added
	chRefRemove                      // references removed
	chRefTags                        // reference tags changed
	chStatus                         // vulnStatus only
	chReject                         // rejected
	numChangeKinds
)

var changeKindNames = [numChangeKinds]string{"description", "cpe added", "cpe removed", "cpe all removed",
	"metric added", "metric score", "metric removed", "cwe added", "cwe replaced", "reference added",
	"reference removed", "reference tags", "status only", "rejected"}

func (k changeKind) String() string { return changeKindNames[k] }

const (
	pReject     = 0.03
	pStatusOnly = 0.10
	// forcedScan bounds the ranks searched for a record admitting a kind.
	forcedScan = 2000
)

// changeGroups are drawn independently for a content change.
var changeGroups = [...]struct {
	p     float64
	kinds []changeKind
	w     []float64
}{
	{0.25, []changeKind{chDescription}, []float64{1}},
	{0.35, []changeKind{chCPEAdd, chCPERemove, chCPERemoveAll}, []float64{0.55, 0.30, 0.15}},
	{0.35, []changeKind{chMetricAdd, chMetricScore, chMetricRemove}, []float64{0.50, 0.35, 0.15}},
	{0.20, []changeKind{chCWEAdd, chCWEReplace}, []float64{0.6, 0.4}},
	{0.45, []changeKind{chRefAdd, chRefRemove, chRefTags}, []float64{0.60, 0.15, 0.25}},
}

// fallback is the kind tried when a kind does not apply to a record.
var fallback = [numChangeKinds]changeKind{
	chCPEAdd:       chRefTags,
	chCPERemove:    chCPEAdd,
	chCPERemoveAll: chCPEAdd,
	chMetricAdd:    chMetricScore,
	chMetricScore:  chMetricAdd,
	chMetricRemove: chMetricAdd,
	chCWEAdd:       chCWEReplace,
	chCWEReplace:   chCWEAdd,
	chRefAdd:       chRefRemove,
	chRefRemove:    chRefAdd,
	chRefTags:      chDescription,
}

// changeRank returns the rank of record i and whether it changes.
func (p *Plan) changeRank(i int) (int, bool) {
	if p.changed == 0 {
		return 0, false
	}
	k := p.permute(i)
	return k, k < p.changed
}

// permute is a seeded permutation of 0..CVEs-1: a 4-round Feistel
// network on 2*permHalf bits (at most 4*CVEs values), cycle-walked back
// into range.
func (p *Plan) permute(i int) int {
	h := p.permHalf
	mask := uint64(1)<<h - 1
	x := uint64(i)
	for {
		l, r := x>>h, x&mask
		for round := range uint64(4) {
			l, r = r, l^p.feistel(round, r, mask)
		}
		x = l<<h | r
		if x < uint64(p.cfg.CVEs) {
			return int(x)
		}
	}
}

// unpermute is the inverse of permute.
func (p *Plan) unpermute(k int) int {
	h := p.permHalf
	mask := uint64(1)<<h - 1
	x := uint64(k)
	for {
		l, r := x>>h, x&mask
		for round := uint64(4); round > 0; round-- {
			l, r = r^p.feistel(round-1, l, mask), l
		}
		x = l<<h | r
		if x < uint64(p.cfg.CVEs) {
			return int(x)
		}
	}
}

func (p *Plan) feistel(round, half, mask uint64) uint64 {
	return mix(p.cfg.Seed, 0x6e657874, round, half) & mask
}

// forcedOrder is every kind, those that apply to fewer records first.
var forcedOrder = [numChangeKinds]changeKind{chCPERemove, chCPERemoveAll, chMetricScore, chMetricRemove,
	chCWEReplace, chRefRemove, chRefTags, chCWEAdd, chMetricAdd, chCPEAdd, chRefAdd, chDescription,
	chStatus, chReject}

// pickForced gives each kind of change to the first changed record, by
// rank, that admits it and has no kind yet.
func (p *Plan) pickForced() {
	p.forced = map[int]changeKind{}
	g := p.Generator()
	for _, k := range forcedOrder {
		for rank := range min(p.changed, forcedScan) {
			if _, taken := p.forced[rank]; !taken && g.admits(p.unpermute(rank), k) {
				p.forced[rank] = k
				break
			}
		}
	}
}

// admits reports whether change k applies to the base record i.
func (g *Generator) admits(i int, k changeKind) bool {
	s := g.core(i)
	switch {
	case s.rejected:
		return false
	case k == chStatus || k == chReject:
		return true
	}
	return (&edit{g: g, s: &s, c: g.draw(&s)}).apply(k)
}

// coreNew is core for a new record of the next day (i >= CVEs).
func (g *Generator) coreNew(i int) subject {
	p := g.plan
	year := lastYear
	j := p.Count(year) + i - p.cfg.CVEs
	r := g.stream(i, secCore)
	s := subject{i: i, year: year, j: j, id: p.cveID(year, j), pubYear: year}
	s.force1321 = i%211 == 7
	pub := nextDayMS + int64(r.IntN(23))*3600_000
	if r.Float64() < 0.6 {
		pub += 15 * 60_000
	} else {
		pub += int64(r.IntN(60)) * 60_000
	}
	s.pub = pub + r.Int64N(60_000)
	s.status = "Received"
	if r.Float64() < 0.3 {
		s.status = "Awaiting Analysis"
	}
	s.mod = s.pub
	if r.Float64() < 0.4 {
		s.mod += r.Int64N(min(3*3600_000, nextLimitMS-s.pub) + 1)
	}
	g.drawProducts(r, &s)
	// With records, a new CVE is known from its record alone.
	s.backlog = p.cfg.CVE5
	return s
}

// edit is one changed record being edited.
type edit struct {
	g        *Generator
	s        *subject
	c        *CVE
	nvd, cna bool // NVD, the CNA changed something
}

// change turns c, the base version of the record of s, into its next-day
// version.
func (g *Generator) change(s *subject, c *CVE, rank int) {
	mod, kinds, r := g.changeStart(s, rank)
	c.LastModified = formatMS(mod)
	e := &edit{g: g, s: s, c: c}
	if s.rejected {
		_, c.Descriptions = e.redrawText()
		s.cnaChanged = true
		return
	}
	status := c.VulnStatus
	defer func() { s.cnaChanged = s.cnaChanged || e.cna }()
	for _, k := range kinds {
		switch k {
		case chReject:
			e.reject()
			s.cnaChanged = true
			return
		case chStatus:
			c.VulnStatus = statusAfter(r, status)
			return
		}
		ok := false
		for range 3 {
			if ok = e.apply(k); ok {
				break
			}
			k = fallback[k]
		}
		if !ok {
			e.apply(chDescription)
		}
	}
	switch {
	case e.nvd:
		if status == "Received" || status == "Awaiting Analysis" || status == "Undergoing Analysis" {
			e.completeAnalysis()
		}
		c.VulnStatus = "Analyzed"
	case e.cna && status == "Analyzed":
		c.VulnStatus = "Modified"
	case e.cna && status == "Received":
		c.VulnStatus = "Awaiting Analysis"
	}
}

// changeStart draws, from the core stream of revision 1 of the record of
// s (of rank rank), its next-day lastModified and, unless it is rejected
// already, the kinds of its change; r goes on drawing from that stream.
func (g *Generator) changeStart(s *subject, rank int) (mod int64, kinds []changeKind, r *rand.Rand) {
	r = g.streamRev(s.i, secCore, 1)
	mod = nextDayMS + r.Int64N(nextLimitMS-nextDayMS+1)
	if s.rejected {
		return mod, nil, r
	}
	if k, ok := g.plan.forced[rank]; ok {
		return mod, []changeKind{k}, r
	}
	return mod, drawKinds(r), r
}

// rejectedNext reports whether base record i (i < CVEs) is rejected on
// the next day: rejected already, or rejected by its change. It draws no
// more of the record than that takes.
func (g *Generator) rejectedNext(i int) bool {
	s := g.core(i)
	if s.rejected {
		return true
	}
	rank, ok := g.plan.changeRank(i)
	if !ok {
		return false
	}
	_, kinds, _ := g.changeStart(&s, rank)
	return slices.Contains(kinds, chReject)
}

// drawKinds draws the kinds of change of a record.
func drawKinds(r *rand.Rand) []changeKind {
	switch u := r.Float64(); {
	case u < pReject:
		return []changeKind{chReject}
	case u < pReject+pStatusOnly:
		return []changeKind{chStatus}
	}
	var out []changeKind
	for _, grp := range changeGroups {
		if r.Float64() >= grp.p {
			continue
		}
		x := r.Float64()
		k := grp.kinds[len(grp.kinds)-1]
		for j, w := range grp.w {
			if x < w {
				k = grp.kinds[j]
				break
			}
			x -= w
		}
		out = append(out, k)
	}
	if len(out) == 0 {
		out = append(out, chRefAdd)
	}
	return out
}

// statusAfter is the next vulnStatus of a record whose only change is
// its status.
func statusAfter(r *rand.Rand, status string) string {
	switch status {
	case "Received", "Deferred":
		return "Awaiting Analysis"
	case "Awaiting Analysis":
		if r.Float64() < 0.5 {
			return "Undergoing Analysis"
		}
		return "Analyzed"
	case "Analyzed":
		return "Modified"
	}
	return "Analyzed" // Undergoing Analysis, Modified (re-analysed)
}

// apply applies one kind of content change; false if it does not apply
// to the record, which is then unchanged.
func (e *edit) apply(k changeKind) bool {
	switch k {
	case chDescription:
		return e.editDescription()
	case chCPEAdd:
		return e.addCPEs()
	case chCPERemove:
		return e.removeCPEs(false)
	case chCPERemoveAll:
		return e.removeCPEs(true)
	case chMetricAdd:
		return e.addMetric(e.g.streamRev(e.s.i, secMetrics, 1), false)
	case chMetricScore:
		return e.rescore()
	case chMetricRemove:
		return e.removeMetric()
	case chCWEAdd:
		return e.addCWE(e.g.streamRev(e.s.i, secWeak, 1), false)
	case chCWEReplace:
		return e.replaceCWE()
	case chRefAdd:
		return e.addRefs()
	case chRefRemove:
		return e.removeRefs()
	case chRefTags:
		return e.retag(e.g.streamRev(e.s.i, secRefs, 1), false)
	}
	return false
}

// completeAnalysis adds what NVD's first analysis of a record brings
// with the changes already made: its own CVSS 3.1 metric and weakness
// and tags on the untagged references.
func (e *edit) completeAnalysis() {
	e.addMetric(e.g.streamRev(e.s.i, secMetrics, 2), true)
	e.addCWE(e.g.streamRev(e.s.i, secWeak, 2), true)
	e.retag(e.g.streamRev(e.s.i, secRefs, 2), true)
}

// reject makes the record rejected.
func (e *edit) reject() {
	s, c := e.s, e.c
	s.rejected, s.status = true, "Rejected"
	c.VulnStatus = "Rejected"
	c.CVETags, c.Descriptions = e.redrawText()
	c.Metrics = Metrics{}
	c.Weaknesses, c.Configurations = nil, nil
	c.References = []Reference{}
}

// redrawText is the record's text drawn at revision 1.
func (e *edit) redrawText() (*[]CVETag, []LangString) {
	e.g.rev = 1
	defer func() { e.g.rev = 0 }()
	return e.g.text(e.s)
}

// --- description -----------------------------------------------------

// addenda are sentences a CNA appends to a description.
var addenda = []func(r *rand.Rand, s *subject, p *product) string{
	func(r *rand.Rand, s *subject, p *product) string {
		return "\n\nThis issue was fixed in version " + p.format(p.next(p.next(s.cur))) + "."
	},
	func(r *rand.Rand, s *subject, p *product) string {
		return " NOTE: this vulnerability exists because of an incomplete fix for CVE-" +
			strconv.Itoa(max(firstYear, s.year-r.IntN(3))) + "-" + pad4(1+r.IntN(9000)) + "."
	},
	func(r *rand.Rand, s *subject, p *product) string {
		return " Exploitation requires the " + identifier(r) + " option to be enabled."
	},
	func(r *rand.Rand, s *subject, p *product) string {
		return " The vendor was contacted early about this disclosure but did not respond in any way."
	},
	func(r *rand.Rand, s *subject, p *product) string {
		return " Users are recommended to upgrade to version " + p.format(p.next(s.cur)) + ", which fixes the issue."
	},
}

// tagPrefix returns the "** DISPUTED ** "-like head of a description.
func tagPrefix(d string) string {
	if strings.HasPrefix(d, "** ") {
		if k := strings.Index(d[3:], " ** "); k >= 0 {
			return d[:3+k+4]
		}
	}
	return ""
}

func (e *edit) editDescription() bool {
	s, c := e.s, e.c
	old := c.Descriptions[0].Value
	prefix := tagPrefix(old)
	var en string
	// r is the generator's source: after a rewrite it goes on from there.
	r := e.g.streamRev(s.i, secText, 2)
	switch u := r.Float64(); {
	case u < 0.4: // rewritten (the text of revision 1)
		_, d := e.redrawText()
		en = prefix + strings.TrimPrefix(d[0].Value, tagPrefix(d[0].Value))
	case u < 0.5 && prefix == "": // disputed
		en = "** DISPUTED ** " + old
		c.CVETags = &[]CVETag{{SourceIdentifier: s.source, Tags: []string{"disputed"}}}
	}
	if en == "" || en == old {
		en = old + pick(r, addenda)(r, s, &e.g.plan.voc.products[s.prods[0]])
	}
	c.Descriptions[0].Value = en
	e.cna = true
	return true
}

// --- configurations --------------------------------------------------

func matchIDs(cs []Configuration) map[string]bool {
	ids := map[string]bool{}
	for _, conf := range cs {
		for _, n := range conf.Nodes {
			for _, m := range n.CPEMatch {
				ids[m.MatchCriteriaID] = true
			}
		}
	}
	return ids
}

func (e *edit) addCPEs() bool {
	s, c := e.s, e.c
	if s.backlog && len(c.Configurations) == 0 {
		// NVD's analysis of a record it had left: what the records say.
		c.Configurations = e.g.truth(s)
		e.nvd = true
		return len(c.Configurations) > 0
	}
	r := e.g.streamRev(s.i, secConfig, 1)
	voc := e.g.plan.voc
	mainP := &voc.products[s.prods[0]]
	if len(c.Configurations) == 0 {
		es := e.g.entries(r, s, mainP, s.cur, min(drawMatchCount(r), 12))
		c.Configurations = []Configuration{{Nodes: []Node{orNode(es)}}}
		e.nvd = true
		return true
	}
	have := matchIDs(c.Configurations)
	for range 8 {
		var es []CPEMatch
		alone := false // in a configuration of its own
		switch u := r.Float64(); {
		case u < 0.45 && mainP.part != 'h':
			// Later releases turn out to be affected too.
			v := mainP.next(s.cur)
			es = append(es, e.g.explicit(mainP, v, "", ""))
			if r.Float64() < 0.4 {
				es = append(es, e.g.explicit(mainP, mainP.next(v), "", ""))
			}
		case u < 0.85:
			// Another product of the vendor.
			q := &voc.products[voc.pickProduct(r, int(mainP.vendor))]
			es = e.g.entries(r, s, q, q.current(r, s.pubYear), 1+r.IntN(3))
		default:
			if len(voc.distros) == 0 {
				continue
			}
			d := &voc.products[voc.distros[r.IntN(len(voc.distros))]]
			es = []CPEMatch{e.g.explicit(d, d.current(r, s.pubYear), "", "")}
			alone = true
		}
		es = slices.DeleteFunc(es, func(m CPEMatch) bool { return have[m.MatchCriteriaID] })
		if len(es) == 0 {
			continue
		}
		if alone {
			c.Configurations = append(c.Configurations, Configuration{Nodes: []Node{orNode(es)}})
		} else {
			n := &c.Configurations[0].Nodes[0]
			n.CPEMatch = append(n.CPEMatch, es...)
		}
		e.nvd = true
		return true
	}
	return false
}

// removeCPEs removes every configuration, or some vulnerable matches:
// up to a third of the distinct ones, or when there is only one, puts a
// range of the main product in its place (NVD correcting its analysis).
func (e *edit) removeCPEs(all bool) bool {
	s, c := e.s, e.c
	if len(c.Configurations) == 0 {
		return false
	}
	if all {
		c.Configurations = nil
		e.nvd = true
		return true
	}
	var ids []string
	seen := map[string]bool{}
	for _, conf := range c.Configurations {
		for _, n := range conf.Nodes {
			for _, m := range n.CPEMatch {
				if m.Vulnerable && !seen[m.MatchCriteriaID] {
					seen[m.MatchCriteriaID] = true
					ids = append(ids, m.MatchCriteriaID)
				}
			}
		}
	}
	r := e.g.streamRev(s.i, secConfig, 1)
	if len(ids) == 1 {
		p := &e.g.plan.voc.products[s.prods[0]]
		if p.part == 'h' {
			return false
		}
		m := e.g.ranges(r, p, s.cur, 1)[0]
		if m.MatchCriteriaID == ids[0] {
			if m = e.g.explicit(p, s.cur, "", ""); m.MatchCriteriaID == ids[0] {
				return false
			}
		}
		for ci := range c.Configurations {
			for ni := range c.Configurations[ci].Nodes {
				ms := c.Configurations[ci].Nodes[ni].CPEMatch
				for mi := range ms {
					if ms[mi].MatchCriteriaID == ids[0] {
						ms[mi] = m
					}
				}
			}
		}
		e.nvd = true
		return true
	}
	drop := map[string]bool{}
	for _, x := range r.Perm(len(ids))[:1+r.IntN(max(1, len(ids)/3))] {
		drop[ids[x]] = true
	}
	var out []Configuration
	for _, conf := range c.Configurations {
		nodes := make([]Node, 0, len(conf.Nodes))
		left := false // a vulnerable match is left
		for _, n := range conf.Nodes {
			ms := make([]CPEMatch, 0, len(n.CPEMatch))
			for _, m := range n.CPEMatch {
				if !m.Vulnerable || !drop[m.MatchCriteriaID] {
					ms = append(ms, m)
					left = left || m.Vulnerable
				}
			}
			if len(ms) > 0 {
				n.CPEMatch = ms
				nodes = append(nodes, n)
			}
		}
		if left {
			conf.Nodes = nodes
			out = append(out, conf)
		}
	}
	c.Configurations = out
	e.nvd = true
	return true
}

// --- metrics ---------------------------------------------------------

// metricAt points at one metric of a record.
type metricAt struct {
	ver         string // "2.0", "3.0", "3.1" or "4.0"
	k           int
	source, typ string
	score       Score
	vector      string
}

func metricsOf(m *Metrics) []metricAt {
	var out []metricAt
	for k, x := range m.V40 {
		out = append(out, metricAt{"4.0", k, x.Source, x.Type, x.CVSSData.BaseScore, x.CVSSData.VectorString})
	}
	for k, x := range m.V31 {
		out = append(out, metricAt{"3.1", k, x.Source, x.Type, x.CVSSData.BaseScore, x.CVSSData.VectorString})
	}
	for k, x := range m.V30 {
		out = append(out, metricAt{"3.0", k, x.Source, x.Type, x.CVSSData.BaseScore, x.CVSSData.VectorString})
	}
	for k, x := range m.V2 {
		out = append(out, metricAt{"2.0", k, x.Source, x.Type, x.CVSSData.BaseScore, x.CVSSData.VectorString})
	}
	return out
}

// hasMetric reports whether source has a metric of one of versions.
func hasMetric(m *Metrics, source string, versions ...string) bool {
	for _, x := range metricsOf(m) {
		if x.source == source && slices.Contains(versions, x.ver) {
			return true
		}
	}
	return false
}

// parseV3 reads a CVSS 3.x base vector string.
func parseV3(vs string) (v3Vector, bool) {
	parts := strings.Split(vs, "/")
	var v v3Vector
	if len(parts) != 9 || !strings.HasPrefix(parts[0], "CVSS:3.") {
		return v, false
	}
	for _, p := range parts[1:] {
		k, x, ok := strings.Cut(p, ":")
		if !ok || len(x) != 1 {
			return v, false
		}
		switch k {
		case "AV":
			v.AV = x[0]
		case "AC":
			v.AC = x[0]
		case "PR":
			v.PR = x[0]
		case "UI":
			v.UI = x[0]
		case "S":
			v.S = x[0]
		case "C":
			v.C = x[0]
		case "I":
			v.I = x[0]
		case "A":
			v.A = x[0]
		default:
			return v, false
		}
	}
	return v, true
}

// baseVector is the record's first CVSS 3.x vector, or a drawn one.
func (e *edit) baseVector(r *rand.Rand) v3Vector {
	for _, x := range metricsOf(&e.c.Metrics) {
		if v, ok := parseV3(x.vector); ok {
			return v
		}
	}
	return drawV3(r, e.s.mainCWE())
}

// tweakV3 sets one metric of v to another value.
func tweakV3(r *rand.Rand, v v3Vector) v3Vector {
	fields := [...]struct {
		p    *byte
		vals string
	}{{&v.AV, "NALP"}, {&v.AC, "LH"}, {&v.PR, "NLH"}, {&v.UI, "NR"}, {&v.S, "UC"}, {&v.C, "NLH"}, {&v.I, "NLH"}, {&v.A, "NLH"}}
	f := fields[r.IntN(len(fields))]
	for {
		if x := f.vals[r.IntN(len(f.vals))]; x != *f.p {
			*f.p = x
			break
		}
	}
	if v.C == 'N' && v.I == 'N' && v.A == 'N' {
		v.I = 'L'
	}
	return v
}

// addMetric adds a metric of a (version, source) the record lacks:
// NVD's CVSS 3.1 Primary first when NVD has not scored the record (only
// that with nvdOnly), else the CNA's 3.1 or 4.0, or the CISA ADP's 3.1.
func (e *edit) addMetric(r *rand.Rand, nvdOnly bool) bool {
	s, m := e.s, &e.c.Metrics
	adp := uuidLower(e.g.plan.cfg.Seed, "adp")
	type cand struct{ ver, source, typ string }
	var cands []cand
	nvdScored := hasMetric(m, nvdSource, "3.0", "3.1", "4.0")
	if !nvdScored {
		cands = append(cands, cand{"3.1", nvdSource, "Primary"})
	}
	if !nvdOnly {
		if s.source != mitreCNA && !hasMetric(m, s.source, "3.0", "3.1") {
			cands = append(cands, cand{"3.1", s.source, "Secondary"})
		}
		if s.source != mitreCNA && !hasMetric(m, s.source, "4.0") {
			cands = append(cands, cand{"4.0", s.source, "Secondary"})
		}
		if !hasMetric(m, adp, "3.1") {
			cands = append(cands, cand{"3.1", adp, "Secondary"})
		}
	}
	if len(cands) == 0 {
		return false
	}
	x := cands[0]
	if nvdScored || r.Float64() >= 0.7 {
		x = cands[r.IntN(len(cands))]
	}
	v := e.baseVector(r)
	if x.source != nvdSource {
		v = perturbV3(r, v)
	}
	switch {
	case x.ver == "4.0":
		m.V40 = append(m.V40, metricV40(r, v, x.source, x.typ, r.Float64() < 0.5))
	case x.source == nvdSource:
		m.V31 = append([]CVSSMetricV3{metricV3(v, "3.1", x.source, x.typ)}, m.V31...)
	default:
		m.V31 = append(m.V31, metricV3(v, "3.1", x.source, x.typ))
	}
	e.side(x.source)
	return true
}

func (e *edit) side(source string) {
	if source == nvdSource {
		e.nvd = true
	} else {
		e.cna = true
	}
}

// rescore gives one metric another base score.
func (e *edit) rescore() bool {
	m := &e.c.Metrics
	all := metricsOf(m)
	if len(all) == 0 {
		return false
	}
	r := e.g.streamRev(e.s.i, secMetrics, 1)
	x := all[r.IntN(len(all))]
	start, ok := parseV3(x.vector)
	if !ok {
		start = e.baseVector(r)
	}
	for range 50 {
		v := tweakV3(r, start)
		switch x.ver {
		case "4.0":
			n := metricV40(r, v, x.source, x.typ, strings.Contains(x.vector, "/E:X"))
			if n.CVSSData.BaseScore != x.score {
				m.V40[x.k] = n
				e.side(x.source)
				return true
			}
		case "3.1", "3.0":
			n := metricV3(v, x.ver, x.source, x.typ)
			if n.CVSSData.BaseScore != x.score {
				if x.ver == "3.1" {
					m.V31[x.k] = n
				} else {
					m.V30[x.k] = n
				}
				e.side(x.source)
				return true
			}
		default:
			n := metricV2(r, v, x.source, x.typ)
			if n.CVSSData.BaseScore != x.score {
				m.V2[x.k] = n
				e.side(x.source)
				return true
			}
		}
		start = v
	}
	return false
}

// removeMetric removes a metric of a CNA or ADP (NVD does not withdraw
// its scores).
func (e *edit) removeMetric() bool {
	m := &e.c.Metrics
	all := slices.DeleteFunc(metricsOf(m), func(x metricAt) bool { return x.source == nvdSource })
	if len(all) == 0 {
		return false
	}
	r := e.g.streamRev(e.s.i, secMetrics, 1)
	x := all[r.IntN(len(all))]
	switch x.ver {
	case "4.0":
		m.V40 = nilIfEmpty(slices.Delete(m.V40, x.k, x.k+1))
	case "3.1":
		m.V31 = nilIfEmpty(slices.Delete(m.V31, x.k, x.k+1))
	case "3.0":
		m.V30 = nilIfEmpty(slices.Delete(m.V30, x.k, x.k+1))
	default:
		m.V2 = nilIfEmpty(slices.Delete(m.V2, x.k, x.k+1))
	}
	e.cna = true
	return true
}

func nilIfEmpty[T any](xs []T) []T {
	if len(xs) == 0 {
		return nil
	}
	return xs
}

// --- weaknesses ------------------------------------------------------

// freshCWE draws a cited CWE id that w does not list yet, or "".
func (e *edit) freshCWE(r *rand.Rand, w *Weakness) string {
	for range 20 {
		id := e.g.plan.cwes.pick(r, false)
		if !slices.ContainsFunc(w.Description, func(d LangString) bool { return d.Value == id }) {
			return id
		}
	}
	return ""
}

// addCWE adds a weakness entry: NVD's Primary when NVD has none (only
// that with nvdOnly, which NVD often takes from the CNA), else one more
// CWE in NVD's, or the CNA's own.
func (e *edit) addCWE(r *rand.Rand, nvdOnly bool) bool {
	s, c := e.s, e.c
	nvdW, cnaW := -1, -1
	for k, w := range c.Weaknesses {
		switch w.Source {
		case nvdSource:
			nvdW = k
		case s.source:
			cnaW = k
		}
	}
	switch {
	case nvdW < 0:
		id := e.g.plan.cwes.pick(r, false)
		if cnaW >= 0 && r.Float64() < 0.6 {
			id = c.Weaknesses[cnaW].Description[0].Value
		}
		c.Weaknesses = append([]Weakness{weakness(nvdSource, "Primary", []string{id})}, c.Weaknesses...)
		e.nvd = true
		return true
	case nvdOnly:
		return false
	case cnaW < 0 && s.source != mitreCNA && r.Float64() < 0.5:
		c.Weaknesses = append(c.Weaknesses, weakness(s.source, "Secondary", []string{e.g.plan.cwes.pick(r, false)}))
		e.cna = true
		return true
	}
	w := &c.Weaknesses[nvdW]
	if len(w.Description) >= 3 || strings.HasPrefix(w.Description[0].Value, "NVD-CWE-") {
		return false
	}
	id := e.freshCWE(r, w)
	if id == "" {
		return false
	}
	w.Description = append(w.Description, LangString{Lang: "en", Value: id})
	e.nvd = true
	return true
}

// replaceCWE replaces one CWE id, NVD-CWE-noinfo or -Other preferably
// (NVD finding the weakness), never the one the catalog lacks.
func (e *edit) replaceCWE() bool {
	c := e.c
	missing := "CWE-" + strconv.Itoa(MissingCWE)
	type at struct{ w, d int }
	var all, generic []at
	for wi, w := range c.Weaknesses {
		for di, d := range w.Description {
			switch {
			case d.Value == missing:
			case strings.HasPrefix(d.Value, "NVD-CWE-"):
				generic = append(generic, at{wi, di})
				all = append(all, at{wi, di})
			default:
				all = append(all, at{wi, di})
			}
		}
	}
	if len(all) == 0 {
		return false
	}
	r := e.g.streamRev(e.s.i, secWeak, 1)
	x := all[r.IntN(len(all))]
	if len(generic) > 0 && r.Float64() < 0.7 {
		x = generic[r.IntN(len(generic))]
	}
	w := &c.Weaknesses[x.w]
	id := e.freshCWE(r, w)
	if id == "" {
		return false
	}
	w.Description[x.d].Value = id
	e.side(w.Source)
	return true
}

// --- references ------------------------------------------------------

// tagSets are the tags NVD gives references it reviews.
var tagSets = [][]string{{"Patch"}, {"Vendor Advisory"}, {"Third Party Advisory"}, {"Exploit", "Third Party Advisory"},
	{"Mailing List", "Third Party Advisory"}, {"Issue Tracking"}, {"Release Notes"}, {"VDB Entry"},
	{"Patch", "Vendor Advisory"}, {"Mitigation", "Vendor Advisory"}}

// addRefs adds one to three references from the CNA, mostly untagged.
func (e *edit) addRefs() bool {
	s, c := e.s, e.c
	if len(c.References) >= 30 {
		return false
	}
	r := e.g.streamRev(s.i, secRefs, 1)
	voc := e.g.plan.voc
	n := 1
	if r.Float64() < 0.3 {
		n += 1 + r.IntN(2)
	}
	n = min(n, 30-len(c.References))
	have := map[string]bool{}
	for _, ref := range c.References {
		have[ref.URL] = true
	}
	tot := 0.0
	for _, k := range refKinds {
		tot += k.weight(false)
	}
	added := 0
	for tries := 0; added < n && tries < 10*n; tries++ {
		p := &voc.products[s.prods[r.IntN(len(s.prods))]]
		x := r.Float64() * tot
		kind := refKinds[len(refKinds)-1]
		for _, k := range refKinds {
			if x < k.weight(false) {
				kind = k
				break
			}
			x -= k.weight(false)
		}
		url, tags := kind.build(r, s, &voc.vendors[p.vendor], p)
		if have[url] {
			continue
		}
		if r.Float64() < 0.7 {
			tags = nil // not reviewed by NVD yet
		}
		have[url] = true
		c.References = append(c.References, Reference{URL: url, Source: s.source, Tags: tags})
		added++
	}
	if added == 0 {
		return false
	}
	e.cna = true
	return true
}

// removeRefs removes one to three links (every reference to each),
// leaving at least one.
func (e *edit) removeRefs() bool {
	c := e.c
	var urls []string
	seen := map[string]bool{}
	for _, ref := range c.References {
		if !seen[ref.URL] {
			seen[ref.URL] = true
			urls = append(urls, ref.URL)
		}
	}
	if len(urls) < 2 {
		return false
	}
	r := e.g.streamRev(e.s.i, secRefs, 1)
	drop := map[string]bool{}
	for _, k := range r.Perm(len(urls))[:1+r.IntN(min(3, len(urls)-1))] {
		drop[urls[k]] = true
	}
	out := make([]Reference, 0, len(c.References))
	for _, ref := range c.References {
		if !drop[ref.URL] {
			out = append(out, ref)
		}
	}
	c.References = out
	e.cna = true
	return true
}

// retag changes the tags of one to three references, or with untagged
// tags the untagged ones.
func (e *edit) retag(r *rand.Rand, untagged bool) bool {
	refs := e.c.References
	var which []int
	if untagged {
		for k, ref := range refs {
			if ref.Tags == nil {
				which = append(which, k)
			}
		}
	} else if len(refs) > 0 {
		which = r.Perm(len(refs))[:1+r.IntN(min(3, len(refs)))]
	}
	if len(which) == 0 {
		return false
	}
	for _, k := range which {
		old := refs[k].Tags
		var tags []string
		if old != nil && !slices.Contains(old, "Broken Link") && r.Float64() < 0.35 {
			tags = append(slices.Clip(old), "Broken Link")
		} else {
			for {
				tags = slices.Clone(tagSets[r.IntN(len(tagSets))])
				if !slices.Equal(tags, old) {
					break
				}
			}
		}
		refs[k].Tags = tags
	}
	e.nvd = true
	return true
}
