package main

import (
	"bufio"
	"bytes"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-json"
	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zip"
)

// This file writes the CVE Program's JSON 5 record of every CVE
// (Config.CVE5), as cvelistV5 publishes them: one zip, CVE5Name, holding
// cves/YYYY/NNxxx/CVE-YYYY-NNNNN.json, one compact JSON record each
// (CVE JSON 5.1: dataType, dataVersion, cveMetadata, containers).
//
// What is affected comes from the record's "truth" (config.go): the
// configurations NVD's analysis gives or would give it. With CVE5 a
// share Config.Awaiting of the records, drawn one by one, is NVD's
// backlog ("Received", "Awaiting Analysis", "Undergoing Analysis"): no
// NVD metrics, weaknesses or configurations in the feed, so that their
// vendors and products come from the records alone. Every record's
// containers:
//
//   - cna: the CNA (the record's sourceIdentifier) with its description
//     (rejectedReasons when rejected), its CWE (problemTypes), its CVSS
//     metrics, the references, and one affected entry per product of the
//     truth, written as that CNA writes them (cnaStyle): Vulnogram-like
//     ranges (version + lessThan / lessThanOrEqual, versionType semver
//     or custom, sometimes unaffected rows, changes, defaultStatus);
//     comparisons in version (GitHub: "< 8.8.2", ">= 4.0.0, < 4.1.2");
//     version lists and series "1.x", vendor often "n/a" (VulDB);
//     "n/a" everything (MITRE); WordPress CNAs' "n/a"/"*" ... lessThan-
//     OrEqual, changes, vendor "Unknown"; Microsoft's cpes and
//     platforms; Red Hat's names and CPE 2.2 cpes; huntr's "owner/repo"
//     product; the kernel CNA's two entries (git ranges of commit hashes,
//     then release rows with original_commit_for_fix, defaultStatus
//     affected). Vendor and product names are those of the vocabulary
//     as a CNA would spell them, so that most normalise to the NVD names
//     the feeds use, some only through the default alias file
//     (loader/aliases.txt: linux/linux, red_hat/..., apache_software_
//     foundation/..., oracle_corporation/mysql_server, ...), and a few
//     to nothing NVD knows (as in real data).
//   - adp: CISA's ("CISA-ADP", "CISA ADP Vulnrichment") on the records
//     with a KEV entry, most published since 2024 and a few more: its
//     SSVC decision (metrics other, type ssvc), the ADP CVSS metric of
//     the feed, and on backlog records whose CNA names nothing (and a
//     share of others) affected entries with NVD's cpes. The CVE
//     Program's container ("CVE", references marked x_transferred) on
//     half the records published before 2024.
//
// The next day (Config.Next) changes the records of the changed NVD
// records whose CNA or ADP side changed (description, references, CNA
// metrics and weaknesses, rejection), and a share ChangeRate of others
// (cve5Changed): new versions found affected. Both get a dateUpdated on
// 2026-11-22. New CVEs have records (and no NVD configurations), and a
// share AnalysedRate of the backlog is analysed: its configurations (the
// truth) appear in the feed, its record unchanged. Every other record is
// byte-identical to its base version.

// CVE5Name is the file name of the records' zip.
const CVE5Name = "cves.zip"

// DefaultAwaiting is the default share of records drawn into NVD's
// backlog when records are written. About a fifth of the other live
// records have no configurations anyway (Deferred, Received, ...), so
// about a third of the live CVEs are then without them, as in NVD's
// backlog (a third of the sample's).
const DefaultAwaiting = 0.16

// DefaultAnalysedRate is the default share of the backlog NVD analyses
// on the next day.
const DefaultAnalysedRate = 0.05

// unitOf maps a hash onto [0, 1).
func unitOf(h uint64) float64 { return float64(h>>11) / (1 << 53) }

// awaiting reports whether record i is in NVD's backlog (Config.CVE5).
func (p *Plan) awaiting(i int) bool {
	return unitOf(mix(p.cfg.Seed, uint64(i), 0x6177616974)) < p.cfg.Awaiting // "await"
}

// analysedNext reports whether the backlog record i is analysed on the
// next day.
func (p *Plan) analysedNext(i int) bool {
	return unitOf(mix(p.cfg.Seed, uint64(i), 0x616e616c)) < p.cfg.AnalysedRate // "anal"
}

// cve5Changed reports whether base record i's CNA publishes new affected
// versions on the next day.
func (p *Plan) cve5Changed(i int) bool {
	return p.cfg.CVE5 && p.cfg.Next && i < p.cfg.CVEs &&
		unitOf(mix(p.cfg.Seed, uint64(i), 0x63766535)) < p.cfg.ChangeRate // "cve5"
}

// toBacklog makes s a record NVD has not analysed: a status of the
// backlog (kept when it has one already) and its lastModified, drawn
// from the record's own stream, so that nothing else of it changes but
// what NVD's analysis brings (configurations, NVD's metrics and
// weaknesses, reference tags).
func (g *Generator) toBacklog(s *subject) {
	s.backlog, s.hasNVD = true, false
	switch s.status {
	case "Received", "Awaiting Analysis", "Undergoing Analysis":
		return
	}
	r := g.stream(s.i, secBacklog)
	s.status = "Awaiting Analysis"
	switch u := r.Float64(); {
	case s.pub > recentMS && u < 0.6:
		s.status = "Received"
	case u < 0.05:
		s.status = "Undergoing Analysis"
	}
	s.mod = drawModified(r, s.status, s.pub)
}

// analyse is NVD analysing a backlog record on the next day: its
// configurations are the truth, with NVD's metric, weakness and
// reference tags.
func (g *Generator) analyse(s *subject, c *CVE) {
	r := g.streamRev(s.i, secBacklog, 1)
	if lm := formatMS(nextDayMS + r.Int64N(nextLimitMS-nextDayMS+1)); lm > c.LastModified {
		c.LastModified = lm
	}
	c.Configurations = g.truth(s)
	switch c.VulnStatus {
	case "Received", "Awaiting Analysis", "Undergoing Analysis":
		(&edit{g: g, s: s, c: c}).completeAnalysis()
	}
	c.VulnStatus = "Analyzed"
}

// --- record shapes -----------------------------------------------------

type cve5Record struct {
	DataType    string         `json:"dataType"`
	DataVersion string         `json:"dataVersion"`
	Metadata    cve5Meta       `json:"cveMetadata"`
	Containers  cve5Containers `json:"containers"`
}

type cve5Meta struct {
	CVEID             string `json:"cveId"`
	AssignerOrgID     string `json:"assignerOrgId"`
	State             string `json:"state"`
	AssignerShortName string `json:"assignerShortName"`
	DateReserved      string `json:"dateReserved"`
	DatePublished     string `json:"datePublished"`
	DateUpdated       string `json:"dateUpdated"`
	DateRejected      string `json:"dateRejected,omitempty"`
}

type cve5Containers struct {
	CNA cve5Container   `json:"cna"`
	ADP []cve5Container `json:"adp,omitempty"`
}

type cve5Provider struct {
	OrgID       string `json:"orgId"`
	ShortName   string `json:"shortName"`
	DateUpdated string `json:"dateUpdated"`
}

type cve5Container struct {
	ProviderMetadata cve5Provider      `json:"providerMetadata"`
	Title            string            `json:"title,omitempty"`
	Descriptions     []LangString      `json:"descriptions,omitempty"`
	RejectedReasons  []LangString      `json:"rejectedReasons,omitempty"`
	Affected         []cve5Affected    `json:"affected,omitempty"`
	ProblemTypes     []cve5ProblemType `json:"problemTypes,omitempty"`
	Metrics          []cve5Metric      `json:"metrics,omitempty"`
	References       []cve5Ref         `json:"references,omitempty"`
}

type cve5Affected struct {
	Vendor        string     `json:"vendor"`
	Product       string     `json:"product"`
	PackageName   string     `json:"packageName,omitempty"`
	CollectionURL string     `json:"collectionURL,omitempty"`
	Repo          string     `json:"repo,omitempty"`
	CPEs          []string   `json:"cpes,omitempty"`
	Modules       []string   `json:"modules,omitempty"`
	ProgramFiles  []string   `json:"programFiles,omitempty"`
	Platforms     []string   `json:"platforms,omitempty"`
	DefaultStatus string     `json:"defaultStatus,omitempty"`
	Versions      []cve5Vers `json:"versions,omitempty"`
}

type cve5Vers struct {
	Version         string        `json:"version"`
	Status          string        `json:"status"`
	VersionType     string        `json:"versionType,omitempty"`
	LessThan        string        `json:"lessThan,omitempty"`
	LessThanOrEqual string        `json:"lessThanOrEqual,omitempty"`
	Changes         []cve5Changes `json:"changes,omitempty"`
}

type cve5Changes struct {
	At     string `json:"at"`
	Status string `json:"status"`
}

type cve5ProblemType struct {
	Descriptions []cve5CWE `json:"descriptions"`
}

type cve5CWE struct {
	Lang        string `json:"lang"`
	Type        string `json:"type"`
	CWEID       string `json:"cweId"`
	Description string `json:"description"`
}

type cve5Metric struct {
	Format string      `json:"format,omitempty"`
	V40    *cve5CVSS40 `json:"cvssV4_0,omitempty"`
	V31    *CVSSDataV3 `json:"cvssV3_1,omitempty"`
	V30    *CVSSDataV3 `json:"cvssV3_0,omitempty"`
	V2     *CVSSDataV2 `json:"cvssV2_0,omitempty"`
	Other  *cve5Other  `json:"other,omitempty"`
}

// cve5CVSS40 is a CVSS 4.0 metric as CNAs write it: FIRST's schema names
// its metrics otherwise than NVD's cvssData, so only the base fields.
type cve5CVSS40 struct {
	Version      string `json:"version"`
	VectorString string `json:"vectorString"`
	BaseScore    Score  `json:"baseScore"`
	BaseSeverity string `json:"baseSeverity"`
}

type cve5Other struct {
	Type    string   `json:"type"`
	Content ssvcBody `json:"content"`
}

type ssvcBody struct {
	ID        string              `json:"id"`
	Role      string              `json:"role"`
	Options   []map[string]string `json:"options"`
	Version   string              `json:"version"`
	Timestamp string              `json:"timestamp"`
}

type cve5Ref struct {
	URL  string   `json:"url"`
	Name string   `json:"name,omitempty"`
	Tags []string `json:"tags,omitempty"`
}

// --- CNAs --------------------------------------------------------------

// cnaStyle is how a CNA writes its affected entries.
type cnaStyle uint8

const (
	styleVulnogram  cnaStyle = iota // ranges with lessThan / lessThanOrEqual
	styleGitHub                     // comparisons in version
	styleVulDB                      // version lists and series, vendor often n/a
	styleMITRE                      // n/a, n/a, n/a
	stylePatchstack                 // n/a ... lessThanOrEqual, changes
	styleWordfence                  // * ... lessThanOrEqual
	styleWPScan                     // vendor Unknown, 0 ... lessThan
	styleMicrosoft                  // cpes, platforms, custom ranges
	styleRedHat                     // Red Hat names, CPE 2.2 cpes
	styleHuntr                      // product "owner/repo"
	styleKernel                     // git ranges, then release rows
)

// cnaNames are the CVE Program's short names of the sourceIdentifiers
// the feeds use, and the style of each.
var cnaNames = map[string]struct {
	short string
	style cnaStyle
}{
	"secure@microsoft.com":           {"microsoft", styleMicrosoft},
	"chrome-cve-admin@google.com":    {"Chrome", styleVulnogram},
	"product-security@apple.com":     {"apple", styleVulnogram},
	"secalert_us@oracle.com":         {"oracle", styleVulnogram},
	"psirt@cisco.com":                {"cisco", styleVulnogram},
	"psirt@adobe.com":                {"adobe", styleVulnogram},
	"psirt@us.ibm.com":               {"ibm", styleVulnogram},
	"secalert@redhat.com":            {"redhat", styleRedHat},
	"security@mozilla.org":           {"mozilla", styleVulnogram},
	"security@apache.org":            {"apache", styleVulnogram},
	"productcert@siemens.com":        {"siemens", styleVulnogram},
	"security-alert@netapp.com":      {"netapp", styleVulnogram},
	"security-advisories@github.com": {"GitHub_M", styleGitHub},
	"cna@vuldb.com":                  {"VulDB", styleVulDB},
	"audit@patchstack.com":           {"Patchstack", stylePatchstack},
	"security@wordfence.com":         {"Wordfence", styleWordfence},
	"contact@wpscan.com":             {"WPScan", styleWPScan},
	"security@huntr.dev":             {"@huntr_ai", styleHuntr},
	"support@hackerone.com":          {"hackerone", styleVulnogram},
	"cret@cert.org":                  {"certcc", styleVulnogram},
	"vultures@jpcert.or.jp":          {"jpcert", styleVulnogram},
	"cve@gitlab.com":                 {"GitLab", styleVulnogram},
	"cve-coordination@google.com":    {"Google", styleVulnogram},
	"report@snyk.io":                 {"snyk", styleVulnogram},
	mitreCNA:                         {"mitre", styleMITRE},
}

// cnaOf returns the short name and style of a record's CNA.
func (g *Generator) cnaOf(source string) (string, cnaStyle) {
	if c, ok := cnaNames[source]; ok {
		return c.short, c.style
	}
	if source == uuidLower(g.plan.cfg.Seed, "cna-linux") {
		return "Linux", styleKernel
	}
	// A vendor's own CNA: security@<name>.com.
	short := strings.TrimSuffix(strings.TrimPrefix(source, "security@"), ".com")
	if len(short) > 32 {
		short = short[:32]
	}
	return short, styleVulnogram
}

const cisaADP = "CISA-ADP"

func (g *Generator) orgID(short string) string { return uuidLower(g.plan.cfg.Seed, "org:"+short) }

// formatZ is a CVE JSON 5 timestamp.
func formatZ(ms int64) string { return time.UnixMilli(ms).UTC().Format("2006-01-02T15:04:05.000Z") }

// --- building a record ---------------------------------------------------

// CVE5 returns the JSON 5 record of record i (as Record, i < Total()).
func (g *Generator) CVE5(i int) *cve5Record {
	s, c := g.record(i)
	return g.cve5(&s, c)
}

// cve5 builds the record of s, whose feed record is c.
func (g *Generator) cve5(s *subject, c *CVE) *cve5Record {
	p := g.plan
	truth := g.truth(s) // before r: truth reseeds the generator's source
	changed := p.cve5Changed(s.i)
	if changed {
		truth = g.newVersions(s, truth)
	}
	r := g.stream(s.i, secCVE5)
	short, style := g.cnaOf(s.source)
	pub := s.pub
	reserved := pub - dayMS - r.Int64N(60*dayMS)
	cnaUpd := pub + r.Int64N(s.mod-pub+1)
	if p.cfg.Next && s.i < p.cfg.CVEs && (s.cnaChanged || changed) {
		// Updated on the next day (a hash: r must go on as in the base).
		cnaUpd = nextDayMS + int64(mix(p.cfg.Seed, uint64(s.i), 0x757064)%uint64(nextLimitMS-nextDayMS+1)) // "upd"
	}
	rec := &cve5Record{DataType: "CVE_RECORD", DataVersion: "5.1"}
	m := &rec.Metadata
	m.CVEID, m.AssignerOrgID, m.AssignerShortName = s.id, g.orgID(short), short
	m.DateReserved, m.DatePublished = formatZ(reserved), formatZ(pub)
	cna := &rec.Containers.CNA
	cna.ProviderMetadata = cve5Provider{OrgID: m.AssignerOrgID, ShortName: short, DateUpdated: formatZ(cnaUpd)}
	updated := cnaUpd
	if s.rejected {
		m.State, m.DateRejected = "REJECTED", formatZ(cnaUpd)
		m.DateUpdated = formatZ(cnaUpd)
		cna.RejectedReasons = []LangString{{Lang: "en", Value: strings.TrimPrefix(c.Descriptions[0].Value, "** REJECT ** ")}}
		return rec
	}
	m.State = "PUBLISHED"
	cna.Descriptions = []LangString{{Lang: "en", Value: c.Descriptions[0].Value}}
	for _, w := range c.Weaknesses {
		if w.Source != s.source {
			continue
		}
		for _, d := range w.Description {
			if strings.HasPrefix(d.Value, "CWE-") {
				cna.ProblemTypes = append(cna.ProblemTypes, cve5ProblemType{[]cve5CWE{{Lang: "en", Type: "CWE", CWEID: d.Value, Description: d.Value}}})
			}
		}
	}
	adpSource := uuidLower(p.cfg.Seed, "adp")
	cna.Metrics = cve5Metrics(&c.Metrics, s.source)
	seen := map[string]bool{}
	for _, ref := range c.References {
		if !seen[ref.URL] { // the schema's references are unique
			seen[ref.URL] = true
			cna.References = append(cna.References, cve5Ref{URL: ref.URL, Tags: cnaTags(ref.URL)})
		}
	}
	if len(cna.References) == 0 {
		cna.References = []cve5Ref{{URL: "https://www.cve.org/CVERecord?id=" + s.id}}
	}

	prods := g.truthProducts(s, truth)
	keyless := false
	for _, tp := range prods {
		if style == styleMITRE {
			break // one n/a entry for the record
		}
		es, kl := g.cnaEntries(r, style, s, tp)
		cna.Affected = append(cna.Affected, es...)
		keyless = keyless || kl
	}
	if len(cna.Affected) == 0 {
		cna.Affected = naEntry()
		keyless = true
	}

	// ADP containers: the CVE Program's, then CISA's.
	if s.pubYear < 2024 && r.Float64() < 0.5 {
		adpUpd := min(pub+r.Int64N(3*yearMS), limitMS)
		cve := cve5Container{ProviderMetadata: cve5Provider{OrgID: g.orgID("CVE"), ShortName: "CVE", DateUpdated: formatZ(adpUpd)},
			Title: "CVE Program Container"}
		for _, ref := range cna.References {
			cve.References = append(cve.References, cve5Ref{URL: ref.URL, Tags: append(append([]string(nil), ref.Tags...), "x_transferred")})
		}
		rec.Containers.ADP = append(rec.Containers.ADP, cve)
		updated = max(updated, adpUpd)
	}
	_, kev := p.kevHash(s.i)
	kev = kev && c.CISAExploitAdd != ""
	if kev || s.pubYear >= 2024 && r.Float64() < 0.8 || keyless && s.backlog || r.Float64() < 0.05 {
		adpUpd := min(pub+dayMS+r.Int64N(30*dayMS), max(limitMS, cnaUpd))
		cisa := cve5Container{ProviderMetadata: cve5Provider{OrgID: g.orgID(cisaADP), ShortName: cisaADP, DateUpdated: formatZ(adpUpd)},
			Title: "CISA ADP Vulnrichment"}
		cisa.Metrics = cve5Metrics(&c.Metrics, adpSource)
		cisa.Metrics = append(cisa.Metrics, ssvcMetric(r, s.id, kev, adpUpd))
		if keyless && r.Float64() < 0.7 || r.Float64() < 0.1 {
			for _, tp := range prods {
				cisa.Affected = append(cisa.Affected, g.adpEntry(tp))
			}
		}
		rec.Containers.ADP = append(rec.Containers.ADP, cisa)
		updated = max(updated, adpUpd)
	}
	m.DateUpdated = formatZ(updated)
	uniqueVersions(cna.Affected)
	for k := range rec.Containers.ADP {
		uniqueVersions(rec.Containers.ADP[k].Affected)
	}
	return rec
}

// uniqueVersions drops repeated version objects of each entry (the
// schema's versions are unique), keeping the first.
func uniqueVersions(es []cve5Affected) {
	for k := range es {
		vs := es[k].Versions
		if len(vs) < 2 {
			continue
		}
		out := make([]cve5Vers, 0, len(vs))
		for _, v := range vs {
			dup := false
			for _, w := range out {
				if v.Version == w.Version && v.Status == w.Status && v.VersionType == w.VersionType &&
					v.LessThan == w.LessThan && v.LessThanOrEqual == w.LessThanOrEqual && slices.Equal(v.Changes, w.Changes) {
					dup = true
					break
				}
			}
			if !dup {
				out = append(out, v)
			}
		}
		es[k].Versions = out
	}
}

// cve5Metrics are the CVSS metrics of source among ms, in the feed's
// order (newest version first), as a container's metrics.
func cve5Metrics(ms *Metrics, source string) []cve5Metric {
	var out []cve5Metric
	for k := range ms.V40 {
		if d := &ms.V40[k].CVSSData; ms.V40[k].Source == source {
			out = append(out, cve5Metric{Format: "CVSS", V40: &cve5CVSS40{d.Version, d.VectorString, d.BaseScore, d.BaseSeverity}})
		}
	}
	for k := range ms.V31 {
		if ms.V31[k].Source == source {
			out = append(out, cve5Metric{Format: "CVSS", V31: &ms.V31[k].CVSSData})
		}
	}
	for k := range ms.V30 {
		if ms.V30[k].Source == source {
			out = append(out, cve5Metric{Format: "CVSS", V30: &ms.V30[k].CVSSData})
		}
	}
	for k := range ms.V2 {
		if ms.V2[k].Source == source {
			out = append(out, cve5Metric{Format: "CVSS", V2: &ms.V2[k].CVSSData})
		}
	}
	return out
}

// ssvcMetric is CISA's SSVC decision.
func ssvcMetric(r *rand.Rand, id string, kev bool, at int64) cve5Metric {
	expl := "none"
	switch u := r.Float64(); {
	case kev:
		expl = "active"
	case u < 0.12:
		expl = "poc"
	}
	auto := "no"
	if r.Float64() < 0.3 {
		auto = "yes"
	}
	impact := "partial"
	if r.Float64() < 0.45 {
		impact = "total"
	}
	ts := time.UnixMilli(at - r.Int64N(600_000)).UTC().Format("2006-01-02T15:04:05.000000Z")
	return cve5Metric{Other: &cve5Other{Type: "ssvc", Content: ssvcBody{
		ID: id, Role: "CISA Coordinator", Version: "2.0.3", Timestamp: ts,
		Options: []map[string]string{{"Exploitation": expl}, {"Automatable": auto}, {"Technical Impact": impact}},
	}}}
}

// cnaRefTags are the tags CNAs put on references.
var cnaRefTags = [][]string{nil, nil, nil, {"patch"}, {"vendor-advisory"}, {"third-party-advisory"}, {"exploit"},
	{"issue-tracking"}, {"x_refsource_MISC"}, {"x_refsource_CONFIRM"}, {"release-notes"}}

// cnaTags are the CNA's tags of a reference, a function of its URL (NVD's
// own tags are not the CNA's).
func cnaTags(url string) []string { return cnaRefTags[hashString(url)%uint64(len(cnaRefTags))] }

func naEntry() []cve5Affected {
	return []cve5Affected{{Vendor: "n/a", Product: "n/a", Versions: []cve5Vers{{Version: "n/a", Status: "affected"}}}}
}

// --- what is affected ------------------------------------------------------

// truthMatch is one vulnerable cpeMatch of the truth: an explicit
// version (unescaped; "-" or "*" for none), or a range's bounds.
type truthMatch struct {
	version        string
	si, se, ei, ee string
}

func (m *truthMatch) isRange() bool { return m.version == "*" && (m.si+m.se+m.ei+m.ee) != "" }

// truthProduct is one product of s and its vulnerable matches, in the
// truth's order.
type truthProduct struct {
	p       *product
	v       *vendor
	crit    string // the criteria prefix "cpe:2.3:a:vendor:product:"
	matches []truthMatch
}

// truthProducts groups the truth's vulnerable matches by the record's
// products (the main one first); distributions and the hardware of AND
// configurations are left out.
func (g *Generator) truthProducts(s *subject, truth []Configuration) []truthProduct {
	voc := g.plan.voc
	out := make([]truthProduct, 0, len(s.prods))
	for _, pi := range s.prods {
		p := &voc.products[pi]
		v := &voc.vendors[p.vendor]
		out = append(out, truthProduct{p: p, v: v, crit: "cpe:2.3:" + string(p.part) + ":" + escapeCPE(v.name) + ":" + p.cpe + ":"})
	}
	for _, conf := range truth {
		for _, n := range conf.Nodes {
			for _, m := range n.CPEMatch {
				if !m.Vulnerable {
					continue
				}
				for k := range out {
					rest, ok := strings.CutPrefix(m.Criteria, out[k].crit)
					if !ok {
						continue
					}
					tm := truthMatch{version: cpeUnescape(firstCPEField(rest)), si: m.VersionStartIncluding,
						se: m.VersionStartExcluding, ei: m.VersionEndIncluding, ee: m.VersionEndExcluding}
					if !containsMatch(out[k].matches, tm) {
						out[k].matches = append(out[k].matches, tm)
					}
					break
				}
			}
		}
	}
	kept := out[:0]
	for _, tp := range out {
		if len(tp.matches) > 0 {
			kept = append(kept, tp)
		}
	}
	return kept
}

func containsMatch(ms []truthMatch, m truthMatch) bool {
	for _, x := range ms {
		if x == m {
			return true
		}
	}
	return false
}

// firstCPEField is the text of a CPE 2.3 string up to its first
// unescaped colon.
func firstCPEField(s string) string {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case ':':
			return s[:i]
		}
	}
	return s
}

func cpeUnescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// newVersions is the truth as of the next day for a record whose CNA
// found more versions affected: the fix of the main product's newest
// range moves to the release after it, or an explicit list gains the
// next release. A record with neither is left as it was.
func (g *Generator) newVersions(s *subject, truth []Configuration) []Configuration {
	p := &g.plan.voc.products[s.prods[0]]
	if len(truth) == 0 || p.part == 'h' {
		return truth
	}
	fix := p.next(s.cur)
	last, lastFix, newFix := p.format(s.cur), p.format(fix), p.format(p.next(fix))
	out := make([]Configuration, len(truth))
	copy(out, truth)
	nodes := make([]Node, len(out[0].Nodes))
	copy(nodes, out[0].Nodes)
	out[0].Nodes = nodes
	ms := append([]CPEMatch(nil), nodes[0].CPEMatch...)
	nodes[0].CPEMatch = ms
	prefix := "cpe:2.3:" + string(p.part) + ":" + escapeCPE(g.plan.voc.vendors[p.vendor].name) + ":" + p.cpe + ":"
	moved, explicit := false, false
	for k, m := range ms {
		if !strings.HasPrefix(m.Criteria, prefix) {
			continue
		}
		switch {
		case m.VersionEndExcluding == lastFix:
			ms[k] = match(true, m.Criteria, m.VersionStartIncluding, m.VersionStartExcluding, "", newFix)
			moved = true
		case m.VersionEndIncluding == last:
			ms[k] = match(true, m.Criteria, m.VersionStartIncluding, m.VersionStartExcluding, lastFix, "")
			moved = true
		case m.Criteria == g.explicit(p, s.cur, "", "").Criteria:
			explicit = true
		}
	}
	switch {
	case moved:
	case explicit:
		nodes[0].CPEMatch = append(ms, g.explicit(p, fix, "", ""))
	default:
		return truth
	}
	return out
}

// names are how CNAs spell a product's vendor and name.
func cnaNamesOf(v *vendor, p *product) (vendorName, productName string) {
	switch v.name {
	case "apache":
		return "Apache Software Foundation", "Apache " + p.display
	case "oracle":
		if p.name == "mysql" {
			return "Oracle Corporation", "MySQL Server"
		}
		return "Oracle", p.display
	case "cisco":
		switch p.name {
		case "unified_communications_manager":
			return "Cisco", "Cisco Unified Communications Manager"
		case "adaptive_security_appliance_software":
			return "Cisco", "Cisco Adaptive Security Appliance (ASA) Software"
		}
	case "google":
		if p.name == "chrome" {
			return "Google", "Chrome"
		}
	case "linux":
		return "Linux", "Kernel"
	case "redhat":
		return "Red Hat", "Red Hat " + p.display
	}
	return v.display, p.display
}

// cnaEntries are the CNA's affected entries of one product, and whether
// they name no vendor or product vulnd can key (n/a, Unknown).
func (g *Generator) cnaEntries(r *rand.Rand, style cnaStyle, s *subject, tp truthProduct) ([]cve5Affected, bool) {
	p, v := tp.p, tp.v
	vendorName, productName := cnaNamesOf(v, p)
	vt := "custom"
	if p.style == vsSemver {
		vt = "semver"
	}
	e := cve5Affected{Vendor: vendorName, Product: productName}
	switch style {
	case styleMITRE:
		return naEntry(), true
	case styleKernel:
		if v.name == "linux" && p.name == "linux_kernel" {
			return kernelEntries(r, tp.matches), false
		}
		e.Versions = rangeVersions(r, tp.matches, vt)
	case styleGitHub:
		e.Vendor, e.Product = v.name, repoName(p.name)
		for _, m := range tp.matches {
			e.Versions = append(e.Versions, cve5Vers{Version: comparisonOf(&m), Status: "affected"})
		}
	case styleVulDB:
		if r.Float64() < 0.25 {
			e.Vendor = "n/a"
		}
		for _, m := range tp.matches {
			e.Versions = append(e.Versions, cve5Vers{Version: vuldbVersion(&m), Status: "affected"})
		}
		if r.Float64() < 0.5 {
			e.Modules = []string{capitalize(identifier(r)) + " Handler"}
		}
		return []cve5Affected{e}, e.Vendor == "n/a"
	case stylePatchstack, styleWordfence, styleWPScan:
		last := tp.matches[len(tp.matches)-1]
		ver := cve5Vers{Status: "affected", VersionType: "custom"}
		switch style {
		case stylePatchstack:
			ver.Version = "n/a"
			e.PackageName, e.CollectionURL = strings.ReplaceAll(repoName(p.name), "_", "-"), "https://wordpress.org/plugins"
		case styleWordfence:
			ver.Version, ver.VersionType = "*", "semver"
		default:
			ver.Version, ver.VersionType = "0", "semver"
			e.Vendor = "Unknown"
		}
		switch {
		case last.ee != "" && style == stylePatchstack:
			ver.LessThanOrEqual, ver.Changes = "*", []cve5Changes{{At: last.ee, Status: "unaffected"}}
		case last.ee != "":
			ver.LessThan = last.ee
		case last.ei != "":
			ver.LessThanOrEqual = last.ei
		case last.isRange():
			ver.LessThan = "*"
		default:
			ver.LessThanOrEqual = last.version
		}
		e.Versions, e.DefaultStatus = []cve5Vers{ver}, "unaffected"
		return []cve5Affected{e}, style == styleWPScan
	case styleMicrosoft:
		e.CPEs = []string{tp.crit + "*:*:*:*:*:*:*:*"}
		if r.Float64() < 0.5 {
			e.Platforms = []string{"32-bit Systems", "x64-based Systems"}
		}
		e.Versions = rangeVersions(r, tp.matches, "custom")
	case styleRedHat:
		if v.name == "redhat" {
			return redHatEntries(p, tp.matches), false
		}
		e.Versions = rangeVersions(r, tp.matches, vt)
	case styleHuntr:
		e.Vendor, e.Product = v.name, v.name+"/"+repoName(p.name)
		last := tp.matches[len(tp.matches)-1]
		ver := cve5Vers{Version: "unspecified", Status: "affected", VersionType: "custom"}
		switch {
		case last.ee != "":
			ver.LessThan = last.ee
		case last.ei != "":
			ver.LessThanOrEqual = last.ei
		case last.isRange():
			ver.LessThan = "*"
		default:
			ver.LessThanOrEqual = last.version
		}
		e.Versions, e.DefaultStatus = []cve5Vers{ver}, "unaffected"
	default:
		e.Versions = rangeVersions(r, tp.matches, vt)
		if r.Float64() < 0.6 {
			e.DefaultStatus = "unaffected"
		}
	}
	return []cve5Affected{e}, false
}

// repoName is a product name as a repository or package is named.
func repoName(name string) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		if c := name[i]; plainCPEByte(c) {
			b.WriteByte(c)
		}
	}
	if b.Len() == 0 {
		return "x"
	}
	return b.String()
}

// rangeVersions writes matches as Vulnogram does: a range is version
// (its lower bound, else "0") up to lessThan or lessThanOrEqual, at
// times as a range open above with a change to unaffected at the fix;
// a version is itself; and some CNAs list the fixed versions as
// unaffected after them.
func rangeVersions(r *rand.Rand, ms []truthMatch, vt string) []cve5Vers {
	out := make([]cve5Vers, 0, len(ms))
	var fixed []string
	// Some CNAs give every version object a versionType.
	typed := ""
	if r.Float64() < 0.5 {
		typed = vt
	}
	// An open range with a change to unaffected at the fix: only for a
	// single range, as the first object that matches decides.
	withChanges := r.Float64() < 0.15 && len(ms) == 1
	for _, m := range ms {
		switch {
		case m.version == "-" || m.version == "*" && !m.isRange():
			out = append(out, cve5Vers{Version: "0", LessThan: "*", Status: "affected", VersionType: "custom"})
		case !m.isRange():
			out = append(out, cve5Vers{Version: m.version, Status: "affected", VersionType: typed})
		case m.se != "":
			// No exclusive lower bound in CVE JSON 5: a comparison.
			c := "> " + m.se
			if m.ei != "" {
				c += ", <= " + m.ei
			} else if m.ee != "" {
				c += ", < " + m.ee
			}
			out = append(out, cve5Vers{Version: c, Status: "affected"})
		default:
			lo := m.si
			if lo == "" {
				lo = "0"
			}
			x := cve5Vers{Version: lo, Status: "affected", VersionType: vt}
			switch {
			case m.ee != "" && withChanges:
				x.LessThan, x.Changes = "*", []cve5Changes{{At: m.ee, Status: "unaffected"}}
			case m.ee != "":
				x.LessThan = m.ee
				fixed = append(fixed, m.ee)
			case m.ei != "":
				x.LessThanOrEqual = m.ei
			default:
				x.LessThan = "*"
			}
			out = append(out, x)
		}
	}
	if r.Float64() < 0.3 {
		reverse(out)
	}
	if len(fixed) > 0 && r.Float64() < 0.3 {
		for _, f := range fixed {
			out = append(out, cve5Vers{Version: f, Status: "unaffected"})
		}
	}
	return out
}

// comparisonOf is a match as GitHub's CNA writes it.
func comparisonOf(m *truthMatch) string {
	if !m.isRange() {
		if m.version == "-" || m.version == "*" {
			return ">= 0"
		}
		return "= " + m.version
	}
	var parts []string
	switch {
	case m.si != "":
		parts = append(parts, ">= "+m.si)
	case m.se != "":
		parts = append(parts, "> "+m.se)
	}
	switch {
	case m.ee != "":
		parts = append(parts, "< "+m.ee)
	case m.ei != "":
		parts = append(parts, "<= "+m.ei)
	}
	return strings.Join(parts, ", ")
}

// vuldbVersion is a match as VulDB writes it: the version, a series "P.x"
// for a range from a release line, or a comparison.
func vuldbVersion(m *truthMatch) string {
	switch {
	case !m.isRange():
		if m.version == "-" || m.version == "*" {
			return ">= 0"
		}
		return m.version
	case m.si != "" && m.ee != "":
		if k := strings.LastIndexByte(m.si, '.'); k > 0 && strings.HasPrefix(m.ee, m.si[:k+1]) {
			return m.si[:k] + ".x"
		}
	}
	return comparisonOf(m)
}

// kernelEntries are the kernel CNA's two entries: the git ranges (one
// per release line, from the commit that introduced the flaw to the
// line's fix commit), then the releases: affected from the first one
// (defaultStatus affected), unaffected before it, unaffected from each
// line's fixed release to the end of the line, and the mainline release
// with the fix (original_commit_for_fix).
func kernelEntries(r *rand.Rand, ms []truthMatch) []cve5Affected {
	type line struct{ intro, fix string }
	var lines []line
	for _, m := range ms {
		switch {
		case m.isRange():
			intro := m.si
			if intro == "" {
				intro = m.se
			}
			fix := m.ee
			if fix == "" && m.ei != "" {
				fix = bumpPatch(m.ei)
			}
			lines = append(lines, line{intro, fix})
		case m.version != "-" && m.version != "*":
			lines = append(lines, line{m.version, bumpPatch(m.version)})
		}
	}
	// One line per release series: a later version of a series found
	// affected moves its fix.
	merged := lines[:0]
	for _, l := range lines {
		if n := len(merged); n > 0 && seriesOf(merged[n-1].intro) == seriesOf(l.intro) {
			merged[n-1].fix = l.fix
			continue
		}
		merged = append(merged, l)
	}
	lines = merged
	if len(lines) == 0 {
		return naEntry()
	}
	const repo = "https://git.kernel.org/pub/scm/linux/kernel/git/stable/linux.git"
	files := []string{"drivers/" + identifier(r) + ".c"}
	introduced := lines[0].intro
	if introduced == "" {
		introduced = "0"
	}
	introHash := commitHash(introduced)
	git := cve5Affected{Vendor: "Linux", Product: "Linux", Repo: repo, ProgramFiles: files, DefaultStatus: "unaffected"}
	rel := cve5Affected{Vendor: "Linux", Product: "Linux", Repo: repo, ProgramFiles: files, DefaultStatus: "affected",
		Versions: []cve5Vers{{Version: introduced, Status: "affected"}}}
	if introduced != "0" {
		rel.Versions = append(rel.Versions, cve5Vers{Version: "0", LessThan: introduced, Status: "unaffected", VersionType: "semver"})
	}
	mainline := ""
	for _, l := range lines {
		if l.fix == "" {
			git.Versions = append(git.Versions, cve5Vers{Version: introHash, LessThan: "*", Status: "affected", VersionType: "git"})
			continue
		}
		git.Versions = append(git.Versions, cve5Vers{Version: introHash, LessThan: commitHash(l.fix), Status: "affected", VersionType: "git"})
		mainline = nextMinor(l.fix)
		if seriesOf(l.fix) != seriesOf(l.intro) {
			continue // fixed in the next series only: no stable release row
		}
		rel.Versions = append(rel.Versions, cve5Vers{Version: l.fix, LessThanOrEqual: seriesOf(l.fix) + ".*", Status: "unaffected", VersionType: "semver"})
	}
	if mainline != "" {
		rel.Versions = append(rel.Versions, cve5Vers{Version: mainline, LessThanOrEqual: "*", Status: "unaffected", VersionType: "original_commit_for_fix"})
	}
	return []cve5Affected{git, rel}
}

// commitHash is a made-up 40-digit commit id for a release.
func commitHash(release string) string {
	h := hashString(release)
	var b strings.Builder
	for k := range 5 {
		x := mix(h, uint64(k))
		for range 8 {
			b.WriteByte(hexLower[x&0xF])
			x >>= 4
		}
	}
	return b.String()
}

// kernelTokens splits "a.b.c" into its numbers (nil when not numeric).
func kernelTokens(v string) []int {
	parts := strings.Split(v, ".")
	out := make([]int, len(parts))
	for k, s := range parts {
		n, err := strconv.Atoi(s)
		if err != nil {
			return nil
		}
		out[k] = n
	}
	return out
}

func seriesOf(v string) string {
	if k := strings.LastIndexByte(v, '.'); k > 0 && strings.Count(v, ".") >= 2 {
		return v[:k]
	}
	return v
}

func bumpPatch(v string) string {
	t := kernelTokens(v)
	if len(t) < 3 {
		return v + ".1"
	}
	return fmt.Sprintf("%d.%d.%d", t[0], t[1], t[2]+1)
}

func nextMinor(v string) string {
	t := kernelTokens(v)
	if len(t) < 2 {
		return v
	}
	return fmt.Sprintf("%d.%d", t[0], t[1]+1)
}

// redHatEntries are Red Hat's entries for its own product: one per
// major release named, with its CPE 2.2, affected by default.
func redHatEntries(p *product, ms []truthMatch) []cve5Affected {
	var majors []string
	for _, m := range ms {
		v := m.version
		if m.isRange() {
			v = m.si + m.se + m.ei + m.ee
		}
		maj := v
		if k := strings.IndexByte(v, '.'); k > 0 {
			maj = v[:k]
		}
		if maj != "" && maj != "-" && maj != "*" && !containsString(majors, maj) {
			majors = append(majors, maj)
		}
	}
	if len(majors) == 0 {
		majors = []string{"1"}
	}
	out := make([]cve5Affected, 0, len(majors))
	for _, maj := range majors {
		out = append(out, cve5Affected{Vendor: "Red Hat", Product: "Red Hat " + p.display + " " + maj,
			CPEs: []string{"cpe:/" + string(p.part) + ":redhat:" + p.name + ":" + maj}, DefaultStatus: "affected"})
	}
	return out
}

// adpEntry is CISA's entry for a product: NVD's names and a CPE, the
// versions as ranges from 0, defaultStatus unknown.
func (g *Generator) adpEntry(tp truthProduct) cve5Affected {
	e := cve5Affected{Vendor: tp.v.name, Product: tp.p.name, CPEs: []string{tp.crit + "*:*:*:*:*:*:*:*"}, DefaultStatus: "unknown"}
	for _, m := range tp.matches {
		x := cve5Vers{Status: "affected"}
		switch {
		case !m.isRange():
			x.Version = m.version
			if m.version == "-" || m.version == "*" {
				x.Version, x.LessThan, x.VersionType = "0", "*", "custom"
			}
		default:
			x.Version, x.VersionType = "0", "custom"
			if m.si != "" {
				x.Version = m.si
			}
			switch {
			case m.ee != "":
				x.LessThan = m.ee
			case m.ei != "":
				x.LessThanOrEqual = m.ei
			default:
				x.LessThan = "*"
			}
		}
		e.Versions = append(e.Versions, x)
	}
	return e
}

// --- writing ---------------------------------------------------------------

// CVE5Path is the path of a record in the zip, as in cvelistV5:
// cves/2024/12xxx/CVE-2024-12345.json.
func CVE5Path(id string) string {
	rest := strings.TrimPrefix(id, "CVE-")
	year, num, _ := strings.Cut(rest, "-")
	return "cves/" + year + "/" + num[:len(num)-3] + "xxx/" + id + ".json"
}

// WriteCVE5 writes the records' zip to path: every record of the data
// set (Total()), by id. Workers make and deflate the records a batch at
// a time, and one writer appends them to the zip in order, so that the
// bytes do not depend on scheduling; memory holds a few batches and the
// zip's central directory (some 250 bytes a record).
func (p *Plan) WriteCVE5(path string) error {
	return writeFileAtomic(path, func(bw *bufio.Writer) error {
		zw := zip.NewWriter(bw)
		total := p.Total()
		const batch = 256
		type result struct {
			entries []cve5Entry
			err     error
		}
		type job struct {
			lo, hi int
			out    chan result
		}
		workers := runtime.GOMAXPROCS(0)
		pending := make(chan chan result, 2*workers) // batches in order
		jobs := make(chan job)
		stop := make(chan struct{})
		defer close(stop)
		go func() {
			defer close(pending)
			defer close(jobs)
			for lo := 0; lo < total; lo += batch {
				j := job{lo, min(lo+batch, total), make(chan result, 1)}
				for _, send := range []func() bool{
					func() bool {
						select {
						case pending <- j.out:
							return true
						case <-stop:
							return false
						}
					},
					func() bool {
						select {
						case jobs <- j:
							return true
						case <-stop:
							return false
						}
					},
				} {
					if !send() {
						return
					}
				}
			}
		}()
		for range workers {
			go func() {
				w := &cve5Worker{g: p.Generator()}
				for j := range jobs {
					res := result{entries: make([]cve5Entry, 0, j.hi-j.lo)}
					// Records by index are by id: the years in order,
					// the next day's new ones (of the last year) last.
					for i := j.lo; i < j.hi && res.err == nil; i++ {
						var e cve5Entry
						e, res.err = w.entry(i)
						res.entries = append(res.entries, e)
					}
					j.out <- res
				}
			}()
		}
		for ch := range pending {
			res := <-ch
			if res.err != nil {
				return res.err
			}
			for k := range res.entries {
				e := &res.entries[k]
				// The zip keeps the header for its directory: a copy,
				// not a pointer into the batch and its data.
				fh := e.header
				w, err := zw.CreateRaw(&fh)
				if err != nil {
					return err
				}
				if _, err := w.Write(e.data); err != nil {
					return err
				}
			}
		}
		return zw.Close()
	})
}

// cve5Entry is one deflated record of the zip.
type cve5Entry struct {
	header zip.FileHeader
	data   []byte
}

// cve5Worker makes zip entries: a generator and a reused compressor.
type cve5Worker struct {
	g   *Generator
	buf bytes.Buffer
	fw  *flate.Writer
}

func (w *cve5Worker) entry(i int) (cve5Entry, error) {
	rec := w.g.CVE5(i)
	b, err := json.MarshalWithOption(rec, json.DisableHTMLEscape())
	if err != nil {
		return cve5Entry{}, fmt.Errorf("record %d: %w", i, err)
	}
	mod, err := time.Parse("2006-01-02T15:04:05.000Z", rec.Metadata.DateUpdated)
	if err != nil {
		return cve5Entry{}, err
	}
	w.buf.Reset()
	if w.fw == nil {
		if w.fw, err = flate.NewWriter(&w.buf, flate.DefaultCompression); err != nil {
			return cve5Entry{}, err
		}
	} else {
		w.fw.Reset(&w.buf)
	}
	if _, err := w.fw.Write(b); err != nil {
		return cve5Entry{}, err
	}
	if err := w.fw.Close(); err != nil {
		return cve5Entry{}, err
	}
	e := cve5Entry{data: bytes.Clone(w.buf.Bytes())}
	e.header = zip.FileHeader{Name: CVE5Path(rec.Metadata.CVEID), Method: zip.Deflate, Modified: mod,
		CRC32: crc32.ChecksumIEEE(b), CompressedSize64: uint64(len(e.data)), UncompressedSize64: uint64(len(b))}
	return e, nil
}
