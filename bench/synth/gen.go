package main

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/goccy/go-json"
	"github.com/klauspost/compress/gzip"
)

// Config selects what the generator writes.
type Config struct {
	// CVEs is the total number of records over all years.
	CVEs int
	// Seed selects the data set; the same (CVEs, Seed) always gives the
	// same bytes.
	Seed uint64
	// Next selects the feeds of the day after (see next.go): the same
	// records, a share ChangeRate of them changed, plus NewCVEs(CVEs)
	// new ones.
	Next bool
	// ChangeRate is the share of records changed on the next day, in
	// 0..1; only read when Next is set.
	ChangeRate float64
	// CVE5 also writes the CVE Program's JSON 5 record of every CVE,
	// in CVE5Name (cve5.go). Then Awaiting is the share of records,
	// drawn one by one, that NVD has not analysed yet (no
	// configurations in its feed), and with Next, AnalysedRate the share
	// of those that NVD analyses on the next day. Without CVE5 both are
	// ignored and the NVD feeds are those of a data set without records.
	CVE5         bool
	Awaiting     float64
	AnalysedRate float64
}

// DefaultChangeRate is the usual daily churn: about 1% of NVD's records
// show up in its daily modified feed.
const DefaultChangeRate = 0.01

// MaxCVEs bounds Config.CVEs.
const MaxCVEs = 10_000_000

const (
	firstYear = 1999
	lastYear  = 2026
	numYears  = lastYear - firstYear + 1

	// feedTimestamp is the feeds' "timestamp": the day the data set
	// pretends to have been downloaded.
	feedTimestamp = "2026-11-22T00:00:00.000"
	// nextFeedTimestamp is the "timestamp" of the next day's feeds.
	nextFeedTimestamp = "2026-11-23T00:00:00.000"
	// timeLayout is NVD's timestamp form: UTC, milliseconds, no zone.
	timeLayout = "2006-01-02T15:04:05.000"

	nvdSource = "nvd@nist.gov"
	mitreCNA  = "cve@mitre.org"
	vuldbCNA  = "cna@vuldb.com"

	dayMS  = int64(24 * time.Hour / time.Millisecond)
	yearMS = 365 * dayMS
)

// limitMS is the last instant any published or lastModified may name:
// the end of the day before feedTimestamp.
var limitMS = time.Date(2026, 11, 21, 23, 59, 59, 999e6, time.UTC).UnixMilli()

// The next day's changes and new records are all dated within
// nextDayMS..nextLimitMS (2026-11-22T00:00:00 .. 23:59:59), after every
// date of the base data set.
var (
	nextDayMS   = msOf(2026, 11, 22)
	nextLimitMS = nextDayMS + dayMS - 1000
)

var (
	v3StartMS  = msOf(2015, 12, 1)  // NVD starts scoring CVSS 3.0
	v31StartMS = msOf(2019, 9, 10)  // ... and 3.1
	v2EndMS    = msOf(2022, 7, 13)  // NVD stops scoring CVSS 2.0
	v40StartMS = msOf(2023, 11, 1)  // CVSS 4.0 is published
	deferMS    = msOf(2025, 4, 3)   // the day old unanalysed records were deferred
	reviewMS   = msOf(2023, 11, 7)  // start of the mass re-processing of analysed records
	ancientMS  = msOf(1988, 10, 1)  // earliest publication date of a 1999 id
	recentMS   = limitMS - 14*dayMS // records published after this may still be Received
)

func msOf(y int, m time.Month, d int) int64 {
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC).UnixMilli()
}

func formatMS(ms int64) string { return time.UnixMilli(ms).UTC().Format(timeLayout) }

// yearWeights is the relative number of CVE ids per id year, shaped like
// NVD's (few before 2005, ~18k/year 2017-2019, ~40k/year from 2024 on;
// 2026 is cut at November).
var yearWeights = [numYears]float64{
	1580, 1240, 1580, 2420, 1560, 2730, 4760, 7140, 6580, 7170, // 1999-2008
	5040, 5110, 4740, 5810, 6690, 8840, 8560, 10470, 18080, 18040, // 2009-2018
	17830, 19480, 22390, 26130, 30150, 40300, 44000, 40000, // 2019-2026
}

// Plan is everything the records are drawn from that does not depend on
// the record: the vocabulary and how many records each year gets. It is
// read-only once built and shared by all Generators.
type Plan struct {
	cfg Config
	voc *vocab
	// start[k] is the index of the first record of year firstYear+k;
	// start[numYears] is cfg.CVEs.
	start [numYears + 1]int
	cwes  cweTable
	// With cfg.Next: how many records change and how many are added,
	// and the half width in bits of the permutation that picks the
	// changed ones.
	changed, added int
	permHalf       uint
	forced         map[int]changeKind // rank -> the one kind of change given
}

// NewPlan checks cfg and builds the plan for it.
func NewPlan(cfg Config) (*Plan, error) {
	if cfg.CVEs < 1 || cfg.CVEs > MaxCVEs {
		return nil, fmt.Errorf("number of CVEs must be in 1..%d, got %d", MaxCVEs, cfg.CVEs)
	}
	p := &Plan{cfg: cfg, voc: newVocab(cfg.Seed, cfg.CVEs), cwes: newCWETable()}
	counts := apportion(cfg.CVEs)
	for k, c := range counts {
		p.start[k+1] = p.start[k] + c
	}
	if cfg.CVE5 {
		if !(cfg.Awaiting >= 0 && cfg.Awaiting <= 1) {
			return nil, fmt.Errorf("awaiting share must be in 0..1, got %v", cfg.Awaiting)
		}
		if !(cfg.AnalysedRate >= 0 && cfg.AnalysedRate <= 1) {
			return nil, fmt.Errorf("analysed rate must be in 0..1, got %v", cfg.AnalysedRate)
		}
	}
	if cfg.Next {
		if !(cfg.ChangeRate >= 0 && cfg.ChangeRate <= 1) {
			return nil, fmt.Errorf("change rate must be in 0..1, got %v", cfg.ChangeRate)
		}
		p.changed = int(math.Round(cfg.ChangeRate * float64(cfg.CVEs)))
		p.added = NewCVEs(cfg.CVEs)
		p.permHalf = max(1, (uint(bits.Len(uint(cfg.CVEs-1)))+1)/2)
		p.pickForced()
	}
	return p, nil
}

// apportion splits n over the years in proportion to yearWeights (at
// least one per year when n allows), by largest remainder.
func apportion(n int) [numYears]int {
	var out [numYears]int
	rest := n
	if n >= numYears {
		for k := range out {
			out[k] = 1
		}
		rest -= numYears
	}
	total := 0.0
	for _, w := range yearWeights {
		total += w
	}
	type rem struct {
		k int
		f float64
	}
	rems := make([]rem, numYears)
	given := 0
	for k, w := range yearWeights {
		x := float64(rest) * w / total
		out[k] += int(x)
		given += int(x)
		rems[k] = rem{k, x - math.Floor(x)}
	}
	sort.SliceStable(rems, func(a, b int) bool { return rems[a].f > rems[b].f })
	for i := 0; given < rest; i++ {
		out[rems[i].k]++
		given++
	}
	return out
}

// Count is the number of records of id year y in the base data set.
func (p *Plan) Count(y int) int {
	k := y - firstYear
	return p.start[k+1] - p.start[k]
}

// feedCount is the number of records in the feed of id year y: Count(y),
// plus the new records in the last year's feed of the next day.
func (p *Plan) feedCount(y int) int {
	if y == lastYear {
		return p.Count(y) + p.added
	}
	return p.Count(y)
}

// Total is the number of records written: CVEs, plus Added() with Next.
func (p *Plan) Total() int { return p.cfg.CVEs + p.added }

// Changed is the number of base records that change on the next day (0
// without Next).
func (p *Plan) Changed() int { return p.changed }

// Added is the number of new records of the next day (0 without Next).
func (p *Plan) Added() int { return p.added }

// locate returns the id year of record i and its rank within that year.
func (p *Plan) locate(i int) (year, j int) {
	k := sort.Search(numYears, func(k int) bool { return p.start[k+1] > i })
	return firstYear + k, i - p.start[k]
}

// Generator draws records. Record(i) is a pure function of the plan's
// (CVEs, Seed) and i: each section of a record (core facts, weaknesses,
// metrics, configurations, text, references) has its own random stream
// seeded from (Seed, i, section, revision). The "next day" (Config.Next,
// next.go) therefore edits chosen records with streams of revision 1
// and appends new records at indexes >= CVEs (numbered on from the last
// id of their year), leaving every other record byte-identical. A
// Generator is not safe for concurrent use; make one per goroutine.
type Generator struct {
	plan *Plan
	pcg  *rand.PCG
	r    *rand.Rand
	rev  uint64 // the revision stream draws from
}

// Generator returns a new generator over p.
func (p *Plan) Generator() *Generator {
	pcg := rand.NewPCG(0, 0)
	return &Generator{plan: p, pcg: pcg, r: rand.New(pcg)}
}

// Sections of a record, each with its own random stream.
const (
	secCore = iota
	secWeak
	secMetrics
	secConfig
	secText
	secRefs
	secEPSS    // the record's EPSS score (epss.go)
	secBacklog // an unanalysed record's status and dates (cve5.go)
	secCVE5    // its CVE JSON 5 record (cve5.go)
)

// stream reseeds the generator's random source for section sec of
// record i at the current revision (g.rev) and returns it.
func (g *Generator) stream(i int, sec uint64) *rand.Rand {
	return g.streamRev(i, sec, g.rev)
}

// streamRev is stream at revision rev. Revision 0 is the base data set;
// the next day's changes draw from revision 1.
func (g *Generator) streamRev(i int, sec, rev uint64) *rand.Rand {
	g.pcg.Seed(g.plan.cfg.Seed, mix(uint64(i), sec, rev))
	return g.r
}

// subject is the core of a record that every section reads.
type subject struct {
	i, year, j int
	id         string
	pub, mod   int64 // ms since epoch
	pubYear    int
	status     string
	rejected   bool
	hasNVD     bool // NVD has analysed it (its own metrics and weaknesses)
	source     string
	prods      []int32 // affected products, the main one first
	cur        ver     // the main product's last affected release
	force1321  bool    // cites CWE-1321 (the id missing from the catalog)
	cwes       []string
	// backlog: with Config.CVE5, NVD has not analysed the record: its
	// feed record has no configurations (the record's do the work).
	backlog bool
	// cnaChanged: on the next day, its CNA or an ADP changed what the
	// record says (next.go), so its record is updated that day.
	cnaChanged bool
}

// Record returns record i: 0 <= i < CVEs, or with Next 0 <= i < Total(),
// the records from CVEs on being the new ones. With Next, a record that
// changes is returned as of the next day; every other one is the same
// as without Next.
func (g *Generator) Record(i int) *CVE {
	_, c := g.record(i)
	return c
}

// record is Record, also returning the record's subject as of the day
// written.
func (g *Generator) record(i int) (subject, *CVE) {
	s := g.core(i)
	c := g.draw(&s)
	p := g.plan
	if p.cfg.Next && i < p.cfg.CVEs {
		if rank, ok := p.changeRank(i); ok {
			g.change(&s, c, rank)
		}
		if s.backlog && !s.rejected && p.analysedNext(i) {
			g.analyse(&s, c)
		}
	}
	return s, c
}

// draw draws every section of the record of s at the current revision.
func (g *Generator) draw(s *subject) *CVE {
	c := &CVE{
		ID:               s.id,
		SourceIdentifier: s.source,
		Published:        formatMS(s.pub),
		LastModified:     formatMS(s.mod),
		VulnStatus:       s.status,
	}
	c.Weaknesses = g.weaknesses(s)
	c.Metrics = g.metrics(s)
	c.Configurations = g.configurations(s)
	c.CVETags, c.Descriptions = g.text(s)
	c.References = g.references(s)
	g.kev(s, c)
	return c
}

// kevRate is the share of records with a KEV entry.
const kevRate = 0.005

// kevActions are CISA's usual required actions.
var kevActions = []string{
	"Apply mitigations per vendor instructions or discontinue use of the product if mitigations are unavailable.",
	"Apply updates per vendor instructions.",
	"Apply mitigations per vendor instructions, follow applicable BOD 22-01 guidance for cloud services, or discontinue use of the product if mitigations are unavailable.",
	"The impacted product is end-of-life and should be disconnected if still in use.",
}

// kevKinds name the flaw in cisaVulnerabilityName.
var kevKinds = []string{"Remote Code Execution", "Privilege Escalation", "Command Injection", "Use-After-Free",
	"Improper Authentication", "Path Traversal", "Out-of-Bounds Write", "Deserialization of Untrusted Data"}

// kev gives c a KEV entry on about kevRate of the records (never a
// rejected one), added some days after publication and due two or three
// weeks later. It draws from its own hash of (seed, record), so the rest
// of the record does not depend on it.
func (g *Generator) kev(s *subject, c *CVE) {
	h, ok := g.plan.kevHash(s.i)
	if !ok || s.status == "Rejected" {
		return
	}
	h2 := splitmix(h)
	added := min(s.pub+int64(h2%400)*dayMS, limitMS)
	c.CISAExploitAdd = time.UnixMilli(added).UTC().Format(time.DateOnly)
	c.CISAActionDue = time.UnixMilli(added + int64(14+7*(h2>>20%2))*dayMS).UTC().Format(time.DateOnly)
	c.CISARequiredAction = kevActions[h2>>24%uint64(len(kevActions))]
	c.CISAVulnerabilityName = "Synthetic " + kevKinds[h2>>32%uint64(len(kevKinds))] + " Vulnerability"
}

// kevHash is the hash record i's KEV entry is drawn from, and whether it
// has one (unless it is rejected).
func (p *Plan) kevHash(i int) (uint64, bool) {
	h := mix(p.cfg.Seed, uint64(i), 0x6b6576) // "kev"
	return h, float64(h>>11)/(1<<53) < kevRate
}

func (g *Generator) core(i int) subject {
	p := g.plan
	if i >= p.cfg.CVEs {
		return g.coreNew(i)
	}
	year, j := p.locate(i)
	r := g.stream(i, secCore)
	s := subject{i: i, year: year, j: j}
	s.id = p.cveID(year, j)
	s.force1321 = i%211 == 7

	// Published: ids are handed out in order through their year; some
	// are published late, and many 1999 ids describe older flaws.
	ys := msOf(year, 1, 1)
	ye := min(msOf(year+1, 1, 1)-1, limitMS)
	frac := (float64(j) + r.Float64()) / float64(p.Count(year))
	base := ys + int64(frac*float64(ye-ys))
	pub := base
	switch u := r.Float64(); {
	case year == firstYear && u < 0.3:
		pub = ancientMS + r.Int64N(ys-ancientMS)
	case u < 0.10:
		pub += int64(r.ExpFloat64() * 120 * float64(dayMS))
	case u < 0.12:
		pub += yearMS + r.Int64N(5*yearMS)
	}
	if pub > limitMS {
		pub = base
	}
	pub = pub/dayMS*dayMS + int64(r.IntN(24))*3600_000
	if r.Float64() < 0.6 {
		pub += 15 * 60_000
	} else {
		pub += int64(r.IntN(60)) * 60_000
	}
	pub += r.Int64N(60_000)
	s.pub = min(pub, limitMS)
	s.pubYear = time.UnixMilli(s.pub).UTC().Year()

	s.status = drawStatus(r, s.pub, s.pubYear)
	if s.force1321 && s.status == "Rejected" {
		s.status = "Analyzed"
	}
	s.rejected = s.status == "Rejected"
	switch s.status {
	case "Analyzed", "Modified":
		s.hasNVD = true
	case "Deferred":
		s.hasNVD = s.pub < msOf(2018, 1, 1) && r.Float64() < 0.85
	}
	s.mod = drawModified(r, s.status, s.pub)
	g.drawProducts(r, &s)
	if p.cfg.CVE5 && !s.rejected && p.awaiting(i) {
		g.toBacklog(&s)
	}
	return s
}

// drawProducts draws the affected products, the CNA and the last
// affected release of s, continuing r.
func (g *Generator) drawProducts(r *rand.Rand, s *subject) {
	// Products: a Zipf-drawn vendor and product, now and then one whose
	// name needs CPE escaping, sometimes a few more.
	voc := g.plan.voc
	vi := voc.pickVendor(r)
	main := voc.pickProduct(r, vi)
	if len(voc.special) > 0 && r.Float64() < 0.008 {
		main = voc.special[r.IntN(len(voc.special))]
		vi = int(voc.products[main].vendor)
	}
	s.prods = append(s.prods, main)
	extra := 0
	switch u := r.Float64(); {
	case u < 0.80:
	case u < 0.97:
		extra = 1 + r.IntN(2)
	default:
		extra = 3 + r.IntN(5)
	}
	for range extra {
		var q int32
		if r.Float64() < 0.75 {
			q = voc.pickProduct(r, vi)
		} else {
			q = voc.pickProduct(r, voc.pickVendor(r))
		}
		if !containsID(s.prods, q) {
			s.prods = append(s.prods, q)
		}
	}
	s.cur = voc.products[main].current(r, s.pubYear)
	s.source = drawSource(r, &voc.vendors[vi], s.pubYear)
}

// cveID is the id of the j-th record of id year y. Numbers grow with j,
// so ids past a year's Count follow every id of the base data set.
func (p *Plan) cveID(y, j int) string {
	num := 1 + 2*j + int(mix(p.cfg.Seed, uint64(y), uint64(j))&1)
	return "CVE-" + strconv.Itoa(y) + "-" + pad4(num)
}

func pad4(n int) string {
	s := strconv.Itoa(n)
	for len(s) < 4 {
		s = "0" + s
	}
	return s
}

func containsID(xs []int32, x int32) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func drawStatus(r *rand.Rand, pub int64, pubYear int) string {
	if r.Float64() < 0.04 {
		return "Rejected"
	}
	if pub > recentMS && r.Float64() < 0.6 {
		return "Received"
	}
	type sw struct {
		s string
		w float64
	}
	var table []sw
	switch {
	case pubYear >= 2024:
		table = []sw{{"Awaiting Analysis", 0.30}, {"Undergoing Analysis", 0.03}, {"Analyzed", 0.38},
			{"Modified", 0.22}, {"Deferred", 0.05}, {"Received", 0.02}}
	case pubYear >= 2018:
		table = []sw{{"Analyzed", 0.45}, {"Modified", 0.50}, {"Deferred", 0.03}, {"Awaiting Analysis", 0.02}}
	default:
		table = []sw{{"Analyzed", 0.32}, {"Modified", 0.56}, {"Deferred", 0.12}}
	}
	u := r.Float64()
	for _, e := range table {
		if u < e.w {
			return e.s
		}
		u -= e.w
	}
	return table[0].s
}

// drawModified returns lastModified for a record published at pub: soon
// after publication for records NVD has not looked at, spread over the
// following years for modified ones, never after limitMS.
func drawModified(r *rand.Rand, status string, pub int64) int64 {
	span := limitMS - pub
	var mod int64
	switch status {
	case "Received":
		mod = pub
		if r.Float64() < 0.3 {
			mod += r.Int64N(3 * dayMS)
		}
	case "Awaiting Analysis", "Undergoing Analysis":
		mod = pub + int64(r.ExpFloat64()*15*float64(dayMS))
	case "Rejected":
		mod = pub
		if r.Float64() < 0.6 {
			u := r.Float64()
			mod += int64(u * u * float64(span))
		}
	case "Analyzed":
		if r.Float64() < 0.6 || pub > reviewMS {
			mod = pub + dayMS + int64(r.ExpFloat64()*20*float64(dayMS))
		} else {
			mod = reviewMS + r.Int64N(limitMS-reviewMS)
		}
	case "Deferred":
		if pub < deferMS {
			mod = deferMS + r.Int64N(3*dayMS)
		} else {
			mod = pub + int64(r.ExpFloat64()*30*float64(dayMS))
		}
	default: // Modified
		mod = pub + int64(math.Sqrt(r.Float64())*float64(span))
	}
	return min(max(mod, pub), limitMS)
}

func drawSource(r *rand.Rand, v *vendor, pubYear int) string {
	own := v.cna != "" && (pubYear >= 2016 || r.Float64() < 0.15)
	if v.name == "linux" {
		own = pubYear >= 2024
	}
	switch {
	case pubYear < 2016:
		switch {
		case own:
			return v.cna
		case r.Float64() < 0.06:
			return "secalert@redhat.com"
		}
		return mitreCNA
	case pubYear < 2020:
		switch u := r.Float64(); {
		case own && u < 0.5:
			return v.cna
		case u < 0.75:
			return mitreCNA
		}
	default:
		switch u := r.Float64(); {
		case own && u < 0.8:
			return v.cna
		case u < 0.22:
			return mitreCNA
		}
	}
	tot := 0.0
	for _, c := range cnaPool {
		tot += c.weight
	}
	x := r.Float64() * tot
	for _, c := range cnaPool {
		if x < c.weight {
			return c.id
		}
		x -= c.weight
	}
	return mitreCNA
}

// --- weaknesses ------------------------------------------------------

func (g *Generator) weaknesses(s *subject) []Weakness {
	r := g.stream(s.i, secWeak)
	if s.rejected {
		return nil
	}
	pNone := 0.03
	if !s.hasNVD {
		pNone = 0.35
	}
	if !s.force1321 && r.Float64() < pNone {
		return nil
	}
	tab := &g.plan.cwes
	var out []Weakness
	var nvdIDs []string
	if s.hasNVD {
		switch u := r.Float64(); {
		case u < 0.06 || s.year <= 2010 && u < 0.14:
			nvdIDs = []string{"NVD-CWE-Other"}
		case u < 0.10 || s.year <= 2010 && u < 0.20:
			nvdIDs = []string{"NVD-CWE-noinfo"}
		default:
			k := 1
			if u := r.Float64(); u < 0.03 {
				k = 3
			} else if u < 0.15 {
				k = 2
			}
			for len(nvdIDs) < k {
				id := tab.pick(r, s.year <= 2013 && r.Float64() < 0.25)
				if !containsString(nvdIDs, id) {
					nvdIDs = append(nvdIDs, id)
				}
			}
		}
		out = append(out, weakness(nvdSource, "Primary", nvdIDs))
	}
	if s.source != mitreCNA && s.pubYear >= 2018 && (r.Float64() < 0.55 || !s.hasNVD) {
		id := tab.pick(r, false)
		if len(nvdIDs) > 0 && nvdIDs[0][0] == 'C' && r.Float64() < 0.6 {
			id = nvdIDs[0]
		}
		typ := "Secondary"
		if !s.hasNVD && r.Float64() < 0.3 {
			typ = "Primary"
		}
		out = append(out, weakness(s.source, typ, []string{id}))
	}
	if s.force1321 {
		if len(out) == 0 {
			out = append(out, weakness(s.source, "Secondary", []string{"CWE-1321"}))
		} else {
			out[0].Description[0].Value = "CWE-1321"
		}
	}
	for _, w := range out {
		for _, d := range w.Description {
			if d.Value[0] == 'C' && !containsString(s.cwes, d.Value) {
				s.cwes = append(s.cwes, d.Value)
			}
		}
	}
	return out
}

func weakness(source, typ string, ids []string) Weakness {
	w := Weakness{Source: source, Type: typ, Description: make([]LangString, len(ids))}
	for k, id := range ids {
		w.Description[k] = LangString{Lang: "en", Value: id}
	}
	return w
}

func containsString(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// mainCWE is the first CWE id the record cites, or "".
func (s *subject) mainCWE() string {
	if len(s.cwes) > 0 {
		return s.cwes[0]
	}
	return ""
}

// --- metrics ---------------------------------------------------------

func (g *Generator) metrics(s *subject) Metrics {
	r := g.stream(s.i, secMetrics)
	var m Metrics
	if s.rejected {
		return m
	}
	pNone := 0.005
	if !s.hasNVD {
		pNone = 0.05
	}
	if r.Float64() < pNone {
		return m
	}
	base := drawV3(r, s.mainCWE())
	if s.hasNVD {
		if s.pub < v2EndMS && r.Float64() < 0.99 {
			m.V2 = append(m.V2, metricV2(r, base, nvdSource, "Primary"))
		}
		if s.pub >= v3StartMS && r.Float64() < 0.96 || r.Float64() < 0.10 {
			if s.pub < v31StartMS && r.Float64() < 0.7 {
				m.V30 = append(m.V30, metricV3(base, "3.0", nvdSource, "Primary"))
			} else {
				m.V31 = append(m.V31, metricV3(base, "3.1", nvdSource, "Primary"))
			}
		}
		if s.pubYear >= 2024 && r.Float64() < 0.04 {
			m.V40 = append(m.V40, metricV40(r, base, nvdSource, "Primary", true))
		}
	}
	cna := s.source
	if cna == mitreCNA && r.Float64() < 0.95 || s.pubYear < 2016 {
		return m
	}
	if cna == vuldbCNA {
		// This CNA scores every version it can.
		v := perturbV3(r, base)
		if s.pub >= v40StartMS {
			m.V40 = append(m.V40, metricV40(r, v, cna, "Secondary", true))
		}
		m.V31 = append(m.V31, metricV3(v, "3.1", cna, "Secondary"))
		m.V2 = append(m.V2, metricV2(r, v, cna, "Secondary"))
		return m
	}
	pCNA := 0.5
	if !s.hasNVD {
		pCNA = 0.85
	}
	if r.Float64() < pCNA {
		v := perturbV3(r, base)
		if s.pubYear < 2020 && r.Float64() < 0.5 {
			m.V30 = append(m.V30, metricV3(v, "3.0", cna, "Secondary"))
		} else {
			m.V31 = append(m.V31, metricV3(v, "3.1", cna, "Secondary"))
		}
	}
	if s.pubYear >= 2024 && r.Float64() < 0.45 {
		m.V40 = append(m.V40, metricV40(r, perturbV3(r, base), cna, "Secondary", r.Float64() < 0.3))
	}
	if s.pubYear >= 2022 && !s.hasNVD && len(m.V31) == 0 && r.Float64() < 0.3 {
		m.V31 = append(m.V31, metricV3(perturbV3(r, base), "3.1", uuidLower(g.plan.cfg.Seed, "adp"), "Secondary"))
	}
	return m
}

// --- writing ---------------------------------------------------------

// FeedName is the file name of the feed of id year y.
func FeedName(y int) string { return "nvdcve-2.0-" + strconv.Itoa(y) + ".json.gz" }

// CatalogName is the file name of the CWE catalog.
const CatalogName = "cwec_synth.xml"

// WriteAll writes every feed file, the CWE catalog and the EPSS file
// into dir, creating it if needed. Years and the EPSS file are written
// concurrently, each feed streamed record by record into its gzip file;
// the bytes do not depend on scheduling.
func (p *Plan) WriteAll(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(dir, CatalogName), func(w *bufio.Writer) error {
		_, err := w.Write(p.cwes.catalogXML())
		return err
	}); err != nil {
		return err
	}
	epss := make(chan error, 1)
	go func() { epss <- p.WriteEPSS(filepath.Join(dir, EPSSName(p.cfg.Next))) }()
	cve5 := make(chan error, 1)
	if p.cfg.CVE5 {
		go func() { cve5 <- p.WriteCVE5(filepath.Join(dir, CVE5Name)) }()
	} else {
		cve5 <- nil
	}
	// Biggest years first so the workers finish together.
	years := make([]int, 0, numYears)
	for y := firstYear; y <= lastYear; y++ {
		years = append(years, y)
	}
	sort.SliceStable(years, func(a, b int) bool { return p.feedCount(years[a]) > p.feedCount(years[b]) })
	jobs := make(chan int)
	errs := make([]error, numYears)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), numYears) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := p.Generator()
			for y := range jobs {
				errs[y-firstYear] = g.WriteYear(filepath.Join(dir, FeedName(y)), y)
			}
		}()
	}
	for _, y := range years {
		jobs <- y
	}
	close(jobs)
	wg.Wait()
	return errors.Join(append(errs, <-epss, <-cve5)...)
}

// WriteYear writes the feed file of id year y to path.
func (g *Generator) WriteYear(path string, y int) error {
	return writeFileAtomic(path, func(bw *bufio.Writer) error {
		zw, err := gzip.NewWriterLevel(bw, gzip.DefaultCompression)
		if err != nil {
			return err
		}
		w := bufio.NewWriterSize(zw, 256<<10)
		if err := g.writeFeed(w, y); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
		return zw.Close()
	})
}

// writeFeed writes the uncompressed feed JSON of id year y.
func (g *Generator) writeFeed(w *bufio.Writer, y int) error {
	p := g.plan
	n := p.feedCount(y)
	ts := feedTimestamp
	if p.cfg.Next {
		ts = nextFeedTimestamp
	}
	fmt.Fprintf(w, `{"resultsPerPage":%d,"startIndex":0,"totalResults":%d,"format":"NVD_CVE","version":"2.0","timestamp":%q,"vulnerabilities":[`,
		n, n, ts)
	// The year's base records, then (last year, next day) the new ones.
	first, base := p.start[y-firstYear], p.Count(y)
	for k := range n {
		if k > 0 {
			w.WriteByte(',')
		}
		i := first + k
		if k >= base {
			i = p.cfg.CVEs + k - base
		}
		b, err := json.MarshalWithOption(Vulnerability{CVE: g.Record(i)}, json.DisableHTMLEscape())
		if err != nil {
			return fmt.Errorf("record %d: %w", i, err)
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	_, err := w.WriteString("]}")
	return err
}

// writeFileAtomic writes path through a temporary file renamed into place
// once complete.
func writeFileAtomic(path string, fill func(*bufio.Writer) error) error {
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 256<<10)
	err = fill(bw)
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// --- hashing ---------------------------------------------------------

// mix hashes its arguments into one well-spread 64-bit value.
func mix(xs ...uint64) uint64 {
	h := uint64(0x9e3779b97f4a7c15)
	for _, x := range xs {
		h = splitmix(h ^ x)
	}
	return h
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// hashString is 64-bit FNV-1a.
func hashString(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

const hexUpper = "0123456789ABCDEF"
const hexLower = "0123456789abcdef"

// uuidOf formats two 64-bit values as a version-4-shaped UUID.
func uuidOf(hi, lo uint64, digits string) string {
	hi = hi&^0xF000 | 0x4000     // version nibble
	lo = lo&^(0xC<<60) | 0x8<<60 // variant bits
	var b [36]byte
	pos := 0
	put := func(x uint64, n int) {
		for k := n - 1; k >= 0; k-- {
			b[pos] = digits[(x>>(4*uint(k)))&0xF]
			pos++
		}
	}
	put(hi>>32, 8)
	b[pos] = '-'
	pos++
	put(hi>>16, 4)
	b[pos] = '-'
	pos++
	put(hi, 4)
	b[pos] = '-'
	pos++
	put(lo>>48, 4)
	b[pos] = '-'
	pos++
	put(lo, 12)
	return string(b[:])
}

// uuidLower is a lowercase UUID-like identifier (CNA source ids) named
// by (seed, name).
func uuidLower(seed uint64, name string) string {
	h := hashString(name)
	return uuidOf(mix(seed, h, 1), mix(seed, h, 2), hexLower)
}
