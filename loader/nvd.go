package loader

import (
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/goccy/go-json"

	"github.com/vulnd/vulnd/index"
)

// nvdRecord is one element of a feed's "vulnerabilities" array, holding
// only the fields vulnd maps.
type nvdRecord struct {
	// CVE is the record as read: it is kept, byte for byte, for NVD's
	// CVE API, and mapped from.
	CVE json.RawMessage `json:"cve"`
}

type nvdCVE struct {
	ID               string `json:"id"`
	SourceIdentifier string `json:"sourceIdentifier"`
	CVETags          []struct {
		Tags []string `json:"tags"`
	} `json:"cveTags"`
	Published    string `json:"published"`
	LastModified string `json:"lastModified"`
	VulnStatus   string `json:"vulnStatus"`
	// CISA's Known Exploited Vulnerabilities entry, when there is one.
	CISAExploitAdd        *string               `json:"cisaExploitAdd"`
	CISAActionDue         string                `json:"cisaActionDue"`
	CISARequiredAction    string                `json:"cisaRequiredAction"`
	CISAVulnerabilityName string                `json:"cisaVulnerabilityName"`
	Descriptions          []nvdLangString       `json:"descriptions"`
	Metrics               nvdMetrics            `json:"metrics"`
	Weaknesses            []nvdWeakness         `json:"weaknesses"`
	Configurations        []index.Configuration `json:"configurations"`
	References            []nvdReference        `json:"references"`
}

type nvdLangString struct {
	Lang  string `json:"lang"`
	Value string `json:"value"`
}

type nvdMetrics struct {
	V2  []nvdMetric `json:"cvssMetricV2"`
	V30 []nvdMetric `json:"cvssMetricV30"`
	V31 []nvdMetric `json:"cvssMetricV31"`
	V40 []nvdMetric `json:"cvssMetricV40"`
}

type nvdMetric struct {
	Source string `json:"source"`
	Type   string `json:"type"`
	// BaseSeverity is v2's, outside cvssData.
	BaseSeverity string      `json:"baseSeverity"`
	CVSSData     nvdCVSSData `json:"cvssData"`
}

// nvdCVSSData is the part of a CVSS object vulnd reads: NVD's cvssData,
// and a CVE JSON 5 record's cvssV* objects, which use the same names.
type nvdCVSSData struct {
	VectorString          string   `json:"vectorString"`
	BaseSeverity          string   `json:"baseSeverity"`
	BaseScore             *float64 `json:"baseScore"`
	AccessVector          *string  `json:"accessVector"`
	AccessComplexity      *string  `json:"accessComplexity"`
	Authentication        *string  `json:"authentication"`
	ConfidentialityImpact *string  `json:"confidentialityImpact"`
	IntegrityImpact       *string  `json:"integrityImpact"`
	AvailabilityImpact    *string  `json:"availabilityImpact"`
}

type nvdWeakness struct {
	Description []nvdLangString `json:"description"`
}

type nvdReference struct {
	URL    string   `json:"url"`
	Source string   `json:"source"`
	Tags   []string `json:"tags"`
}

// feedRecord is a mapped CVE with what merging needs: the full-precision
// lastModified and where the record came from.
type feedRecord struct {
	cve      index.CVE
	modified time.Time
	// nvd is the record as read and its facts, for NVD's CVE API; z is
	// the record compressed alone (see nvdStore), once readFeeds has
	// kept it (nvd.Raw is then nil).
	nvd index.NVDRecord
	z   nvdRef
}

// decodeFeed streams the "vulnerabilities" array of one NVD CVE API 2.0
// feed document from r, mapping each record and passing it to emit in
// document order. name is used in errors only.
func decodeFeed(r io.Reader, name string, emit func(*feedRecord) error) error {
	return decodeFeedKnown(r, name, nil, emit)
}

// decodeFeedKnown is decodeFeed passing each record as read (the "cve"
// object) to known first, when set: a record known takes it is not
// decoded further nor emitted (an incremental build's record already in
// the previous snapshot).
func decodeFeedKnown(r io.Reader, name string, known func(raw []byte) bool, emit func(*feedRecord) error) error {
	dec := json.NewDecoder(unnamedReads{r}) // fail names the file
	fail := func(err error) error { return fmt.Errorf("loader: feed %s: %w", name, err) }
	if err := expectDelim(dec, '{'); err != nil {
		return fail(fmt.Errorf("not an NVD feed object: %w", err))
	}
	seen := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fail(err)
		}
		key, ok := tok.(string)
		if !ok {
			return fail(fmt.Errorf("unexpected %v", tok))
		}
		if key != "vulnerabilities" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return fail(fmt.Errorf("%s: %w", key, err))
			}
			continue
		}
		seen = true
		if err := expectDelim(dec, '['); err != nil {
			return fail(fmt.Errorf("vulnerabilities: %w", err))
		}
		for i := 0; dec.More(); i++ {
			var rec nvdRecord
			if err := dec.Decode(&rec); err != nil {
				return fail(fmt.Errorf("record %d: %w", i+1, err))
			}
			if len(rec.CVE) == 0 || string(rec.CVE) == "null" {
				return fail(fmt.Errorf("record %d: no \"cve\" object", i+1))
			}
			if known != nil && known(rec.CVE) {
				continue
			}
			var n nvdCVE
			if err := json.Unmarshal(rec.CVE, &n); err != nil {
				return fail(fmt.Errorf("record %d: %w", i+1, err))
			}
			fr, err := mapCVE(&n)
			if err == nil {
				fr.nvd = index.NVDRecord{Raw: rec.CVE, Facts: nvdFacts(&n)}
			}
			if err != nil {
				id := n.ID
				if id == "" {
					id = fmt.Sprintf("record %d", i+1)
				}
				return fail(fmt.Errorf("%s: %w", id, err))
			}
			if err := emit(fr); err != nil {
				return err
			}
		}
		if err := expectDelim(dec, ']'); err != nil {
			return fail(fmt.Errorf("vulnerabilities: %w", err))
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return fail(err)
	}
	if !seen {
		return fail(errors.New("no \"vulnerabilities\" array"))
	}
	return nil
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		if err == io.EOF {
			return io.ErrUnexpectedEOF
		}
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("expected %q, found %v", string(want), tok)
	}
	return nil
}

var cveIDPattern = regexp.MustCompile(`^CVE-[0-9]{4}-[0-9]{4,9}$`)

// mapCVE turns one NVD record into the API's CVE, following the rules of
// the API decisions.
func mapCVE(n *nvdCVE) (*feedRecord, error) {
	if n.ID == "" {
		return nil, errors.New("record has no id")
	}
	if !cveIDPattern.MatchString(n.ID) {
		return nil, fmt.Errorf("malformed id %q", n.ID)
	}
	published, err := parseNVDTime(n.Published)
	if err != nil {
		return nil, fmt.Errorf("published: %w", err)
	}
	modified, err := parseNVDTime(n.LastModified)
	if err != nil {
		return nil, fmt.Errorf("lastModified: %w", err)
	}
	c := index.CVE{
		Name:      n.ID,
		Summary:   summaryOf(n.Descriptions),
		CreatedAt: formatTime(published),
		UpdatedAt: formatTime(modified),
		Status:    n.VulnStatus,
	}
	if n.CISAExploitAdd != nil {
		c.KEV = &index.KEV{
			DateAdded:         kevDate(*n.CISAExploitAdd),
			ActionDue:         kevDate(n.CISAActionDue),
			RequiredAction:    n.CISARequiredAction,
			VulnerabilityName: n.CISAVulnerabilityName,
		}
	}
	if c.CVSS, c.Metrics, err = mapMetrics(&n.Metrics); err != nil {
		return nil, err
	}
	if c.CWEs, err = mapCWEs(n.Weaknesses); err != nil {
		return nil, err
	}
	if c.CPEs, err = mapCPEs(n.Configurations); err != nil {
		return nil, err
	}
	c.References = make([]index.Reference, len(n.References))
	for i, r := range n.References {
		c.References[i] = mapReference(r)
	}
	return &feedRecord{cve: c, modified: modified}, nil
}

// kevDate is a CISA date as YYYY-MM-DD: NVD writes it so, and a
// timestamp is cut to its date.
func kevDate(s string) string {
	if len(s) > 10 {
		if _, err := time.Parse(time.DateOnly, s[:10]); err == nil {
			return s[:10]
		}
	}
	return s
}

// summaryOf picks the English description: "en", else "en-US", else the
// first one.
func summaryOf(ds []nvdLangString) string {
	for _, lang := range []string{"en", "en-US"} {
		for _, d := range ds {
			if d.Lang == lang {
				return d.Value
			}
		}
	}
	if len(ds) > 0 {
		return ds[0].Value
	}
	return ""
}

// NVD writes times in UTC without a zone ("2024-06-07T10:15:12.293");
// RFC 3339 forms with a zone are accepted too.
var nvdTimeLayouts = []string{"2006-01-02T15:04:05.999999999", time.RFC3339Nano}

func parseNVDTime(s string) (time.Time, error) {
	for _, layout := range nvdTimeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("bad timestamp %q", s)
}

// TimeLayout is how the API writes timestamps: UTC, whole seconds.
const TimeLayout = index.TimeLayout

func formatTime(t time.Time) string { return t.UTC().Format(TimeLayout) }

// mapMetrics returns the cvss member (see the API decisions: score and
// source from the newest metric, the v2-shaped fields from v2) and every
// metric of the record, for change tracking.
func mapMetrics(m *nvdMetrics) (index.CVSS, []index.Metric, error) {
	groups := []struct {
		version string
		list    []nvdMetric
	}{{"2.0", m.V2}, {"3.1", m.V31}, {"3.0", m.V30}, {"4.0", m.V40}}
	var all []index.Metric
	for _, g := range groups {
		for _, x := range g.list {
			s := x.CVSSData.BaseScore
			if s == nil {
				return index.CVSS{}, nil, fmt.Errorf("cvss %s metric from %q has no baseScore", g.version, x.Source)
			}
			if math.IsNaN(*s) || *s < 0 || *s > 10 {
				return index.CVSS{}, nil, fmt.Errorf("cvss %s metric from %q: baseScore %v out of range", g.version, x.Source, *s)
			}
			sev := x.CVSSData.BaseSeverity
			if sev == "" {
				sev = x.BaseSeverity
			}
			all = append(all, index.Metric{Version: g.version, Source: x.Source, Type: x.Type, Score: *s,
				Vector: x.CVSSData.VectorString, Severity: strings.ToUpper(sev)})
		}
	}
	// score and source: the newest metric (v4.0, v3.1, v3.0, then v2),
	// Primary first within a version. NVD stopped scoring v2 in 2022, so
	// v2 first would misplace most CVEs in the bands.
	var out index.CVSS
	for _, list := range [][]nvdMetric{m.V40, m.V31, m.V30, m.V2} {
		if best := primaryFirst(list); best != nil {
			out.Source = strPtr(best.Source)
			out.Score = *best.CVSSData.BaseScore
			break
		}
	}
	// The six v2-shaped fields: the v2 metric's, null without one.
	if v2 := primaryFirst(m.V2); v2 != nil {
		d := &v2.CVSSData
		out.AccessComplexity, out.AccessVector, out.Authentication = d.AccessComplexity, d.AccessVector, d.Authentication
		out.AvailabilityImpact, out.ConfidentialityImpact, out.IntegrityImpact = d.AvailabilityImpact, d.ConfidentialityImpact, d.IntegrityImpact
	}
	return out, all, nil
}

// primaryFirst returns NVD's Primary metric of a list, else its first.
func primaryFirst(list []nvdMetric) *nvdMetric {
	for i := range list {
		if list[i].Type == "Primary" {
			return &list[i]
		}
	}
	if len(list) > 0 {
		return &list[0]
	}
	return nil
}

func strPtr(s string) *string { return &s }

// mapCWEs returns the distinct CWE-<n> names of the weaknesses, ascending
// by number, leaving out NVD's placeholders (NVD-CWE-Other, NVD-CWE-noinfo).
func mapCWEs(ws []nvdWeakness) ([]string, error) {
	var nums []int
	for _, w := range ws {
		for _, d := range w.Description {
			v := strings.TrimSpace(d.Value)
			if strings.HasPrefix(v, "NVD-CWE-") {
				continue
			}
			n, ok := index.CWENumber(v)
			if !ok {
				return nil, fmt.Errorf("weakness %q is not a CWE name", d.Value)
			}
			if i, found := slices.BinarySearch(nums, n); !found {
				nums = slices.Insert(nums, i, n)
			}
		}
	}
	names := make([]string, len(nums))
	for i, n := range nums {
		names[i] = "CWE-" + strconv.Itoa(n)
	}
	return names, nil
}

// mapCPEs returns one CPE per cpeMatch entry, in source order (nil for
// none), in a slice of just that length: a build holds every CPE.
func mapCPEs(cfgs []index.Configuration) ([]index.CPE, error) {
	n := 0
	for _, cfg := range cfgs {
		for _, node := range cfg.Nodes {
			n += len(node.CPEMatch)
		}
	}
	if n == 0 {
		return nil, nil
	}
	out := make([]index.CPE, 0, n)
	for _, cfg := range cfgs {
		for _, node := range cfg.Nodes {
			for _, m := range node.CPEMatch {
				vendor, product, version, err := parseCPE(m.Criteria)
				if err != nil {
					return nil, err
				}
				out = append(out, index.CPE{
					URI:                   m.Criteria,
					Vendor:                vendor,
					Product:               product,
					Version:               version,
					Vulnerable:            m.Vulnerable,
					VersionStartIncluding: m.VersionStartIncluding,
					VersionStartExcluding: m.VersionStartExcluding,
					VersionEndIncluding:   m.VersionEndIncluding,
					VersionEndExcluding:   m.VersionEndExcluding,
				})
			}
		}
	}
	return out, nil
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// parseCPE splits a CPE 2.3 formatted string
// ("cpe:2.3:part:vendor:product:version:update:edition:language:sw_edition:target_sw:target_hw:other")
// on unescaped colons and returns the vendor, product and version
// components with the backslash escaping removed. A component without
// escapes is a substring of s, not a copy: a build holds every CPE.
func parseCPE(s string) (vendor, product, version string, err error) {
	rest, ok := strings.CutPrefix(s, "cpe:2.3:")
	if !ok {
		return "", "", "", fmt.Errorf("cpe %q: does not start with cpe:2.3:", s)
	}
	var comps [11]string
	n := 0
	start, escaped := 0, false
	for i := 0; i < len(rest); i++ {
		switch rest[i] {
		case '\\':
			if i+1 == len(rest) {
				return "", "", "", fmt.Errorf("cpe %q: ends inside an escape", s)
			}
			i++
			escaped = true
		case ':':
			if n == len(comps)-1 {
				return "", "", "", fmt.Errorf("cpe %q: more than 13 components", s)
			}
			comps[n] = cpeComponent(rest[start:i], escaped)
			start, escaped = i+1, false
			n++
		}
	}
	comps[n] = cpeComponent(rest[start:], escaped)
	n++
	if n != len(comps) {
		return "", "", "", fmt.Errorf("cpe %q: %d components, want 13", s, n+2)
	}
	switch comps[0] {
	case "a", "o", "h", "*", "-":
	default:
		return "", "", "", fmt.Errorf("cpe %q: unknown part %q", s, comps[0])
	}
	if comps[1] == "" || comps[2] == "" {
		return "", "", "", fmt.Errorf("cpe %q: empty vendor or product", s)
	}
	return comps[1], comps[2], comps[3], nil
}

// cpeComponent is c with its backslash escapes removed (escaped: it has
// some; none ends it, see parseCPE).
func cpeComponent(c string, escaped bool) string {
	if !escaped {
		return c
	}
	var b strings.Builder
	b.Grow(len(c))
	for i := 0; i < len(c); i++ {
		if c[i] == '\\' {
			i++
		}
		b.WriteByte(c[i])
	}
	return b.String()
}

func mapReference(r nvdReference) index.Reference {
	ref := index.Reference{Link: r.URL, Source: r.Source, Type: "UNKNOWN", Description: strings.Join(r.Tags, ", ")}
	if len(r.Tags) > 0 {
		ref.Type = upperSnake(r.Tags[0])
	}
	return ref
}

// upperSnake writes a tag in upper case with every run of characters other
// than letters and digits replaced by one "_": "Press/Media Coverage" ->
// "PRESS_MEDIA_COVERAGE".
func upperSnake(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	gap := false
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if gap {
				b.WriteByte('_')
				gap = false
			}
			b.WriteString(strings.ToUpper(string(r)))
			continue
		}
		gap = true
	}
	if gap {
		b.WriteByte('_')
	}
	return b.String()
}

// strTab keeps one copy of each string that many CVEs repeat (the
// sources, types and tags of references and metrics, vectors, CVSS v2
// values, statuses, CWE names, range bounds), for a build that holds every
// CVE: at 100k CVEs, 40 MB of such strings are 1 MB once each.
type strTab struct {
	strs map[string]string
	ptrs map[string]*string
}

func newStrTab() *strTab {
	return &strTab{strs: map[string]string{}, ptrs: map[string]*string{}}
}

// str returns the copy of s kept, keeping s when there is none.
func (t *strTab) str(s string) string {
	if s == "" {
		return ""
	}
	if kept, ok := t.strs[s]; ok {
		return kept
	}
	t.strs[s] = s
	return s
}

// ptr is str for a pointer to a string nothing writes through.
func (t *strTab) ptr(p *string) *string {
	if p == nil {
		return nil
	}
	if kept, ok := t.ptrs[*p]; ok {
		return kept
	}
	t.ptrs[*p] = p
	return p
}

// cve replaces the repeated strings of c by the copies kept.
func (t *strTab) cve(c *index.CVE) {
	c.Status = t.str(c.Status)
	for i := range c.CWEs {
		c.CWEs[i] = t.str(c.CWEs[i])
	}
	for i := range c.CPEs {
		p := &c.CPEs[i]
		p.VersionStartIncluding, p.VersionStartExcluding = t.str(p.VersionStartIncluding), t.str(p.VersionStartExcluding)
		p.VersionEndIncluding, p.VersionEndExcluding = t.str(p.VersionEndIncluding), t.str(p.VersionEndExcluding)
	}
	for i := range c.References {
		r := &c.References[i]
		r.Source, r.Type, r.Description = t.str(r.Source), t.str(r.Type), t.str(r.Description)
	}
	for i := range c.Metrics {
		m := &c.Metrics[i]
		m.Source, m.Type, m.Vector, m.Severity = t.str(m.Source), t.str(m.Type), t.str(m.Vector), t.str(m.Severity)
	}
	v := &c.CVSS
	v.Source = t.ptr(v.Source)
	v.AccessComplexity, v.AccessVector, v.Authentication = t.ptr(v.AccessComplexity), t.ptr(v.AccessVector), t.ptr(v.Authentication)
	v.AvailabilityImpact, v.ConfidentialityImpact, v.IntegrityImpact = t.ptr(v.AvailabilityImpact), t.ptr(v.ConfidentialityImpact), t.ptr(v.IntegrityImpact)
}
