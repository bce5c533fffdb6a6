package index

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-json"
)

// Explained matches: GET /vendors/{vendor}/products/{product}/explain
// ?version=X lists the CVEs of ProductCVEsAt, each with the entries that
// cover X and what decided it. See the API decisions, "Exploit signals,
// explained matches, data age", and docs/API.md.

// Configuration is one of the configurations of an NVD CVE record, as NVD
// publishes it (the JSON names are NVD's, so a record's "configurations"
// decode into []Configuration): nodes joined by Operator ("AND"; absent
// means a single node).
type Configuration struct {
	Operator string `json:"operator"`
	Negate   bool   `json:"negate"`
	Nodes    []Node `json:"nodes"`
}

// Node is one node of a configuration: its cpeMatch entries joined by
// Operator ("OR" or "AND"), negated when Negate.
type Node struct {
	Operator string     `json:"operator"`
	Negate   bool       `json:"negate"`
	CPEMatch []CPEMatch `json:"cpeMatch"`
}

// CPEMatch is one cpeMatch entry of a node: Criteria is NVD's CPE 2.3
// string as published (CPE-escaped), the bounds NVD's text, "" when
// absent.
type CPEMatch struct {
	Vulnerable            bool   `json:"vulnerable"`
	Criteria              string `json:"criteria"`
	VersionStartIncluding string `json:"versionStartIncluding"`
	VersionStartExcluding string `json:"versionStartExcluding"`
	VersionEndIncluding   string `json:"versionEndIncluding"`
	VersionEndExcluding   string `json:"versionEndExcluding"`
}

// DecodeConfigurations returns the configurations of an NVD CVE object
// (the "cve" member of a record of NVD's CVE API 2.0, as published): what
// ExplainSources.Configurations gives, read from a stored record.
func DecodeConfigurations(cve []byte) ([]Configuration, error) {
	var v struct {
		Configurations []Configuration `json:"configurations"`
	}
	if err := json.Unmarshal(cve, &v); err != nil {
		return nil, fmt.Errorf("index: configurations: %w", err)
	}
	return v.Configurations, nil
}

// ExplainSources are what explaining needs beyond what an Index holds
// today. Either may be nil.
type ExplainSources struct {
	// Configurations returns the NVD configurations of the CVE named
	// name, and whether the source knows them. When it is nil, they are
	// read from the NVD record the snapshot keeps; when neither knows
	// them (a format 5 snapshot), the NVD part of an explanation is read
	// from the CVE's cpes (configuration, node and platforms then null).
	Configurations func(name string) ([]Configuration, bool)
	// EntryHasKey, when set, reports whether an affected entry of a CVE
	// JSON 5 record has the vendor/product key vendor and product (its
	// cpes, else its names through the alias file). When it is nil, the
	// entry keys the build stored decide, as they do for ProductCVEsAt.
	EntryHasKey func(e *AffectedEntry, vendor, product string) bool
}

// nvdConfigurations reads the configurations of the CVE named name from
// the NVD record the snapshot keeps as NVD published it (format 6 on);
// false when it keeps none or the record does not decode.
func (ix *Index) nvdConfigurations(name string) ([]Configuration, bool) {
	if ix.nvd == nil {
		return nil, false
	}
	raw, err := ix.nvd.AppendRaw(nil, name)
	if err != nil {
		return nil, false
	}
	cfgs, err := DecodeConfigurations(raw)
	return cfgs, err == nil
}

// SetExplainSources sets the sources of ProductExplainAt. Call it before
// the index serves; it is not safe to call concurrently with queries.
func (ix *Index) SetExplainSources(s ExplainSources) { ix.explain = s }

// The rules of an explained match. For an NVD cpeMatch entry:
//
//   - RuleVersion: its version is concrete and X equals it (with the
//     update, when that is concrete);
//   - RuleVersionAnyUpdate: its version is concrete, its update "*", and
//     X is that version followed by a word and anything after it;
//   - RuleAnyVersion: its version is "*" and it has no bound;
//   - RuleRange: its version is "*" and X meets every bound it has.
//
// For a version object of a CVE JSON 5 entry (the first that matches X):
//
//   - RuleVersion: a single version equal to X;
//   - RuleSeries: a single version P.* or P.x, X in the series P;
//   - RuleComparisons: a single version written with comparisons ("<
//     8.8.2"), all of which X meets;
//   - RuleLessThan, RuleLessThanOrEqual: a range version <= X < lessThan
//     (X <= lessThanOrEqual);
//   - RuleDefaultStatus: no object matches X; the entry's default status
//     decided.
const (
	RuleVersion          = "version"
	RuleVersionAnyUpdate = "version_any_update"
	RuleAnyVersion       = "any_version"
	RuleRange            = "range"
	RuleSeries           = "series"
	RuleComparisons      = "comparisons"
	RuleLessThan         = "range_less_than"
	RuleLessThanOrEqual  = "range_less_than_or_equal"
	RuleDefaultStatus    = "default_status"
)

// NVDMatch is one NVD cpeMatch entry that covers X. Its JSON form is an
// item of an explained CVE's matched_by with source "nvd".
type NVDMatch struct {
	Source string `json:"source"` // "nvd"
	// Configuration and Node are the indexes, from 0, of the
	// configuration and of its node holding the entry; Operator and
	// Negate the node's. All null when the snapshot lacks the
	// configurations (the entry is then read from the CVE's cpes).
	Configuration *int    `json:"configuration"`
	Node          *int    `json:"node"`
	Operator      *string `json:"operator"`
	Negate        *bool   `json:"negate"`
	Criteria      string  `json:"criteria"`
	Rule          string  `json:"rule"`
	// Version is the entry's concrete version (with its update), for
	// RuleVersion and RuleVersionAnyUpdate; null otherwise.
	Version *string `json:"version"`
	// The bounds as NVD wrote them, null when absent.
	VersionStartIncluding *string `json:"version_start_including"`
	VersionStartExcluding *string `json:"version_start_excluding"`
	VersionEndIncluding   *string `json:"version_end_including"`
	VersionEndExcluding   *string `json:"version_end_excluding"`
	// Platforms are the criteria of every vulnerable:false entry of the
	// other, not negated, nodes of an AND configuration: what the match
	// assumes besides X (only on Windows, say). Null when the snapshot
	// lacks the configurations.
	Platforms []string `json:"platforms"`
}

// EntryMatch is one affected entry of a CVE JSON 5 record that gives X
// the status affected. Its JSON form is an item of matched_by with
// source "cna" or "adp:NAME".
type EntryMatch struct {
	Source string `json:"source"`
	// Entry is the index, from 0, of the entry in the CVE's affected list
	// (as /cve/{name}/details shows it); VersionObject that of the
	// version object that matched X, null when the default status
	// decided.
	Entry         int    `json:"entry"`
	VersionObject *int   `json:"version_object"`
	Rule          string `json:"rule"`
	// ChangeAt is the "at" of the change of the object that decided,
	// null when the object's own status did.
	ChangeAt *string `json:"change_at"`
	Status   string  `json:"status"`
}

// Explained is one CVE of an explained list: its name and the entries
// that cover the version asked (NVDMatch or EntryMatch values).
type Explained struct {
	Name      string `json:"name"`
	MatchedBy []any  `json:"matched_by"`
}

// ExplainList is the list of ProductExplainAt: the CVEs of ProductCVEsAt,
// in its order, explained when a page of them is appended.
type ExplainList struct {
	ix                       *Index
	ids                      []int32
	vendor, product, version string
}

// ProductExplainAt lists the CVEs of ProductCVEsAt(vendorName,
// productName, version), in its order, each explained: which entries
// cover version, and why. It fails as ProductCVEsAt does. It is safe for
// concurrent use.
//
// A CVE's NVD entries explain it when it has some (the configurations of
// its sources, else its cpes); else its JSON 5 affected entries of the
// product whose status for version is affected.
func (ix *Index) ProductExplainAt(vendorName, productName, version string) (ExplainList, error) {
	l, err := ix.ProductCVEsAt(vendorName, productName, version)
	if err != nil {
		return ExplainList{}, err
	}
	return ExplainList{ix: ix, ids: l.ids, vendor: vendorName, product: productName, version: version}, nil
}

// Len is the number of CVEs.
func (l ExplainList) Len() int { return len(l.ids) }

// Names returns the names of the CVEs, in order.
func (l ExplainList) Names() []string {
	out := make([]string, len(l.ids))
	for i, p := range l.ids {
		out[i] = l.ix.nameAt(p)
	}
	return out
}

// At returns CVE i explained.
func (l ExplainList) At(i int) Explained {
	p := l.ids[i]
	return Explained{Name: l.ix.nameAt(p), MatchedBy: l.ix.explainAt(p, l.vendor, l.product, l.version)}
}

// AppendPage appends page (1-based) of size CVEs, explained, as a JSON
// array to dst; a page past the end is "[]".
func (l ExplainList) AppendPage(dst []byte, page, size int) []byte {
	from, to := List{ids: l.ids, sub: true}.bounds(page, size)
	dst = append(dst, '[')
	for i := from; i < to; i++ {
		if i > from {
			dst = append(dst, ',')
		}
		b, err := json.Marshal(l.At(i))
		if err != nil { // plain strings, ints and bools: cannot happen
			b = []byte("null")
		}
		dst = append(dst, b...)
	}
	return append(dst, ']')
}

// nameAt returns the name of the CVE at list position p: its body's first
// member.
func (ix *Index) nameAt(p int32) string {
	b := ix.cveBodies[p]
	const prefix = `{"name":"`
	if !bytes.HasPrefix(b, []byte(prefix)) {
		return ""
	}
	b = b[len(prefix):]
	if i := bytes.IndexByte(b, '"'); i >= 0 {
		return string(b[:i])
	}
	return ""
}

// explainAt returns the matched_by of the CVE at position p for version
// of vendor/product.
func (ix *Index) explainAt(p int32, vendor, product, version string) []any {
	out := []any{}
	name := ix.nameAt(p)
	configurations := ix.explain.Configurations
	if configurations == nil {
		configurations = ix.nvdConfigurations
	}
	if f := configurations; f != nil {
		if cfgs, ok := f(name); ok && len(cfgs) > 0 {
			for _, m := range ExplainConfigurations(cfgs, vendor, product, version) {
				out = append(out, m)
			}
			return out
		}
	}
	var body struct {
		CPEs []CPE `json:"cpes"`
	}
	if err := json.Unmarshal(ix.cveBodies[p], &body); err == nil && len(body.CPEs) > 0 {
		for _, c := range body.CPEs {
			m := CPEMatch{Vulnerable: c.Vulnerable, Criteria: c.URI,
				VersionStartIncluding: c.VersionStartIncluding, VersionStartExcluding: c.VersionStartExcluding,
				VersionEndIncluding: c.VersionEndIncluding, VersionEndExcluding: c.VersionEndExcluding}
			if r, ok := explainCPE(&m, vendor, product, version); ok {
				out = append(out, r)
			}
		}
		return out
	}
	if ix.details == nil {
		return out
	}
	r := ix.details.cves[p]
	s := ix.details.appendText(nil, r.affected)
	if len(s) == 0 {
		return out
	}
	var entries []AffectedEntry
	if json.Unmarshal(s, &entries) != nil {
		return out
	}
	has := ix.storedEntryKey(r.keys, entries, vendor, product)
	if f := ix.explain.EntryHasKey; f != nil {
		has = func(e *AffectedEntry) bool { return f(e, vendor, product) }
	}
	for _, m := range ExplainEntries(entries, has, version) {
		out = append(out, m)
	}
	return out
}

// storedEntryKey reports, of each of entries, whether the entry keys
// stored at keys (into the details' strings; 0 for none) list it under
// vendor and product: the keys the build worked out, aliases and all,
// which ProductCVEsAt reads too.
func (ix *Index) storedEntryKey(keys uint32, entries []AffectedEntry, vendor, product string) func(*AffectedEntry) bool {
	var listed []*AffectedEntry
	if keys != 0 {
		it := entryKeysIter{s: ix.details.strs[keys]}
		for it.next() {
			if it.vendor != vendor || it.product != product {
				continue
			}
			it.eachEntry(func(i int) bool {
				if i < len(entries) {
					listed = append(listed, &entries[i])
				}
				return true
			})
			break
		}
	}
	return func(e *AffectedEntry) bool { return slices.Contains(listed, e) }
}

// ExplainConfigurations returns the cpeMatch entries of cfgs that are
// vulnerable, name vendor and product, and cover version, in record
// order, as NVDMatch values with their configuration, node and
// platforms. An entry covers version by the rules of ProductCVEsAt.
func ExplainConfigurations(cfgs []Configuration, vendor, product, version string) []NVDMatch {
	var out []NVDMatch
	for ci := range cfgs {
		cfg := &cfgs[ci]
		for ni := range cfg.Nodes {
			node := &cfg.Nodes[ni]
			for mi := range node.CPEMatch {
				m, ok := explainCPE(&node.CPEMatch[mi], vendor, product, version)
				if !ok {
					continue
				}
				m.Configuration, m.Node = ptr(ci), ptr(ni)
				m.Operator, m.Negate = ptr(node.Operator), ptr(node.Negate)
				m.Platforms = platforms(cfg, ni)
				out = append(out, m)
			}
		}
	}
	return out
}

// platforms returns the criteria of the vulnerable:false entries of the
// nodes of cfg other than node ni, when cfg joins its nodes by AND,
// never nil.
func platforms(cfg *Configuration, ni int) []string {
	out := []string{}
	if !strings.EqualFold(cfg.Operator, "AND") {
		return out
	}
	for j := range cfg.Nodes {
		if j == ni || cfg.Nodes[j].Negate {
			continue
		}
		for _, m := range cfg.Nodes[j].CPEMatch {
			if !m.Vulnerable {
				out = append(out, m.Criteria)
			}
		}
	}
	return out
}

func ptr[T any](v T) *T { return &v }

// explainCPE returns what decides that m covers version, when it is
// vulnerable, names vendor and product and covers version by the rules of
// ProductCVEsAt; configuration, node and platforms are left null.
func explainCPE(m *CPEMatch, vendor, product, version string) (NVDMatch, bool) {
	if !m.Vulnerable || !hasToken(version) {
		return NVDMatch{}, false
	}
	comps, ok := splitCPE(m.Criteria)
	if !ok || comps[1] != vendor || comps[2] != product {
		return NVDMatch{}, false
	}
	r := NVDMatch{Source: "nvd", Criteria: m.Criteria}
	v, update := comps[3], comps[4]
	switch {
	case v == "*":
		b := [4]string{m.VersionStartIncluding, m.VersionStartExcluding, m.VersionEndIncluding, m.VersionEndExcluding}
		if b == [4]string{} {
			r.Rule = RuleAnyVersion
			return r, true
		}
		for i, want := range [4]func(int) bool{
			func(c int) bool { return c >= 0 }, func(c int) bool { return c > 0 },
			func(c int) bool { return c <= 0 }, func(c int) bool { return c < 0 },
		} {
			if b[i] != "" && !want(compareToBound(version, unescapeCPE(b[i]))) {
				return NVDMatch{}, false
			}
		}
		r.Rule = RuleRange
		set := func(s string) *string {
			if s == "" {
				return nil
			}
			return ptr(s)
		}
		r.VersionStartIncluding, r.VersionStartExcluding = set(b[0]), set(b[1])
		r.VersionEndIncluding, r.VersionEndExcluding = set(b[2]), set(b[3])
		return r, true
	case !IsName(v):
		return NVDMatch{}, false
	}
	full := v
	if IsName(update) {
		full += "-" + update
	}
	r.Version = ptr(full)
	if CompareVersions(version, full) == 0 {
		r.Rule = RuleVersion
		return r, true
	}
	if update == "*" && followedByWord(version, v) {
		r.Rule = RuleVersionAnyUpdate
		return r, true
	}
	return NVDMatch{}, false
}

// followedByWord reports whether x is v followed by a word and anything
// after it: some prefix of x that ends before a word token (and holds a
// token) equals v. It reads the prefixes as affected.match does.
func followedByWord(x, v string) bool {
	for i, seen := 0, false; ; seen = true {
		start := skipSeparators(x, i)
		t, next, ok := nextToken(x, i)
		if !ok {
			return false
		}
		if t.class != classNum && seen && CompareVersions(x[:start], v) == 0 {
			return true
		}
		i = next
	}
}

// splitCPE splits a CPE 2.3 formatted string on its unescaped colons and
// returns its part, vendor, product, version and update components with
// the escaping removed.
func splitCPE(s string) (comps [5]string, ok bool) {
	rest, ok := strings.CutPrefix(s, "cpe:2.3:")
	if !ok {
		return comps, false
	}
	n := 0
	var cur strings.Builder
	for i := 0; i < len(rest) && n < len(comps); i++ {
		switch c := rest[i]; c {
		case '\\':
			if i+1 < len(rest) {
				i++
			}
			cur.WriteByte(rest[i])
		case ':':
			comps[n] = cur.String()
			cur.Reset()
			n++
		default:
			cur.WriteByte(c)
		}
	}
	if n < len(comps) {
		comps[n] = cur.String()
		n++
	}
	return comps, n == len(comps)
}

// ExplainEntries returns, for each of entries that has (by has) the key
// asked and gives version the status affected, what decided it, in
// record order.
func ExplainEntries(entries []AffectedEntry, has func(*AffectedEntry) bool, version string) []EntryMatch {
	var out []EntryMatch
	for i := range entries {
		e := &entries[i]
		if !has(e) {
			continue
		}
		d := explainStatus(e.Versions, e.DefaultStatus, version)
		if d.status != StatusAffected {
			continue
		}
		m := EntryMatch{Source: e.Source, Entry: i, Rule: RuleDefaultStatus, Status: d.status}
		if d.object >= 0 {
			m.VersionObject = ptr(d.object)
			m.Rule = objectRule(&e.Versions[d.object])
			if d.change >= 0 {
				m.ChangeAt = ptr(e.Versions[d.object].Changes[d.change].At)
			}
		}
		out = append(out, m)
	}
	return out
}

// objectRule names the kind of version object v.
func objectRule(v *AffectedVersion) string {
	_, comparisons := parseComparisons(v.Version)
	switch {
	case v.LessThan != nil:
		return RuleLessThan
	case v.LessThanOrEqual != nil:
		return RuleLessThanOrEqual
	case comparisons:
		return RuleComparisons
	}
	if _, series := seriesOf(strings.TrimSpace(v.Version)); series {
		return RuleSeries
	}
	return RuleVersion
}

// String is the rule as one line, for logs and tests.
func (m EntryMatch) String() string {
	s := m.Source + " entry " + strconv.Itoa(m.Entry) + " " + m.Rule
	if m.VersionObject != nil {
		s += " object " + strconv.Itoa(*m.VersionObject)
	}
	if m.ChangeAt != nil {
		s += " change at " + *m.ChangeAt
	}
	return s + ": " + m.Status
}
