package loader

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/goccy/go-json"

	"github.com/vulnd/vulnd/index"
)

// CVE5Record is one CVE JSON 5 record of the CVE Program (a cvelistV5
// file, or a record of CISA's vulnrichment), with what vulnd maps from it
// (see the API decisions, "CVE records of the CVE Program, JSON 5").
// ReadCVE5 makes them; a CVE5Record is never changed after that, so it is
// safe for concurrent reads.
type CVE5Record struct {
	// ID is cveMetadata.cveId; State its state, PUBLISHED or REJECTED.
	ID    string
	State string
	// Published and Updated are cveMetadata.datePublished and dateUpdated
	// in the served form "YYYY-MM-DD HH:MM:SSZ" ("" when the record has
	// none; Updated is Published then). Modified is dateUpdated at full
	// precision (else datePublished, else zero), for MergeCVE5.
	Published string
	Updated   string
	Modified  time.Time
	// Assigner is the CNA's providerMetadata.shortName, else
	// cveMetadata.assignerShortName.
	Assigner string
	// Description is the CNA's English description and RejectedReason
	// its English rejected reason ("en", else "en-US", else the first;
	// "" when none), the summary rule of NVD records.
	Description    string
	RejectedReason string
	// CWEs are the distinct CWE-<n> of the CNA's problemTypes cweIds,
	// ascending by number.
	CWEs []string
	// References are the CNA's, in record order: Source is Assigner, Type
	// and Description come from the tags as for NVD's references.
	References []index.Reference
	// Metrics are the CVSS metrics of the CNA and then of each ADP, in
	// record order: Version "2.0", "3.0", "3.1" or "4.0", Source the
	// container's shortName, Type "" (no NVD type), Vector and Severity
	// as written (severity in upper case). CVSS is the cvss member the
	// decisions give such a CVE: from the CNA's metrics by the newest-
	// version rule, else from the ADPs'.
	Metrics []index.Metric
	CVSS    index.CVSS
	// Affected are the affected entries of the CNA, then of each ADP, in
	// record order.
	Affected []index.AffectedEntry
	// SSVC is the first SSVC decision of an ADP (metrics[].other of type
	// "ssvc"), nil when none.
	SSVC *index.SSVC
	// KEV is the first KEV entry of an ADP (metrics[].other of type
	// "kev", see cve5KEV), nil when none: served only for a CVE that NVD
	// has not published (a CVE of NVD keeps NVD's).
	KEV *index.KEV
	// Held, in what a build keeps of a record of a CVE of NVD (see
	// cve5Keep.holdFor), is what the details keep of its affected
	// entries, SSVC decision and entry keys: Affected and SSVC are nil
	// then. HeldText is that, as made on the goroutine that decoded the
	// record, until readCVE5Files holds it (in archive order): nil once
	// it does.
	Held     *index.HeldDetails
	HeldText *index.HeldText
	// Input is, in what readCVE5Files returns, the file the record was
	// read from (its index in the files given), for cve5from.txt.zst;
	// ByPackage, for a record held (Affected nil), whether an entry's
	// product key may come from its packageName (keyByPackageName).
	Input     int32
	ByPackage bool
	// loc is where the record was read in its file (see cve5Loc).
	loc cve5Loc
}

// Summary is the record's summary as the decisions give it: the first
// English rejected reason of a REJECTED record, else the English
// description.
func (r *CVE5Record) Summary() string {
	if r.State == cve5Rejected {
		return r.RejectedReason
	}
	return r.Description
}

// CVE returns the record as the API's CVE, for a CVE that NVD has not
// published: spec fields as the decisions say, no CPEs, no NVD status;
// its metrics, affected entries, SSVC decision and the KEV entry of
// CISA's ADP for the details.
func (r *CVE5Record) CVE() index.CVE {
	return index.CVE{
		Name:       r.ID,
		Summary:    r.Summary(),
		CreatedAt:  r.Published,
		UpdatedAt:  r.Updated,
		CPEs:       []index.CPE{},
		CWEs:       r.CWEs,
		CVSS:       r.CVSS,
		References: r.References,
		Metrics:    r.Metrics,
		Affected:   r.Affected,
		SSVC:       r.SSVC,
		KEV:        r.KEV,
	}
}

// mergeCVE5 adds the records to cves (both by name ascending, as
// readFeeds and ReadCVE5Files return them) as the decisions say: a CVE
// of NVD keeps NVD's fields and gains its record's affected entries and
// SSVC decision; a CVE only a record gives is served from the record.
// The result is by name ascending; only says how many CVEs came from a
// record alone. The CVEs of NVD are changed in place (cves is the result
// when no CVE comes from a record alone): a copy of them all would be a
// build's largest allocation while it reads.
func mergeCVE5(cves []index.CVE, recs []*CVE5Record) (out []index.CVE, only int) {
	var alone []*CVE5Record
	i := 0
	for _, r := range recs {
		for i < len(cves) && cves[i].Name < r.ID {
			i++
		}
		if i < len(cves) && cves[i].Name == r.ID {
			cves[i].Affected, cves[i].SSVC, cves[i].Held = r.Affected, r.SSVC, r.Held
			i++
			continue
		}
		alone = append(alone, r)
	}
	if len(alone) == 0 {
		return cves, 0
	}
	out = make([]index.CVE, 0, len(cves)+len(alone))
	i = 0
	for _, r := range alone {
		for i < len(cves) && cves[i].Name < r.ID {
			out = append(out, cves[i])
			i++
		}
		out = append(out, r.CVE())
	}
	return append(out, cves[i:]...), len(alone)
}

// keptOfCVE5 returns what a build over cves (by name ascending) keeps of
// a record: all of it for a CVE not in cves, which is served from its
// record (see mergeCVE5); for a CVE of NVD, only its affected entries,
// its SSVC decision and its dates, which are all mergeCVE5, the
// manifest's dates and the refresh guard read of it. The rest of a
// record (description, references, metrics) is most of its memory.
//
// A record of a CVE of NVD is decoded only in that part (see
// decodeCVE5Part): its descriptions and references, most of its bytes,
// are skipped unread rather than decoded and mapped to be dropped.
func keptOfCVE5(cves []index.CVE) *cve5Keep {
	return &cve5Keep{partOf: func(id string) bool {
		i := sort.Search(len(cves), func(i int) bool { return cves[i].Name >= id })
		return i < len(cves) && cves[i].Name == id
	}}
}

// cve5Keep is what a build keeps of each record (see keptOfCVE5); a nil
// *cve5Keep keeps all of every record. Safe for concurrent use.
type cve5Keep struct {
	// partOf reports whether only part of the record of the CVE id is
	// kept (a CVE of NVD).
	partOf func(id string) bool
	// keysOf, when set, makes the part kept held (see holdFor): it gives
	// the entry keys of the CVE id's entries es.
	keysOf func(id string, es []index.AffectedEntry) []index.EntryKey
}

// holdFor makes k keep the part of a record of a CVE of cves (by name
// ascending, NVD's CPEs of those it spilled in cold) in the form the
// details keep it in (index.HeldDetails), made as the record is read,
// with the entry keys that setEntryKeys would give it through aliases:
// its affected entries are never held as objects beside the CVEs (what
// set a build's peak with records), nor interned, nor encoded again when
// the details are built. A -previous build, which compares the entries
// with the previous snapshot's, keeps them as they are.
func (k *cve5Keep) holdFor(cves []index.CVE, cold *coldStore, aliases *Aliases) *cve5Keep {
	k.keysOf = func(id string, es []index.AffectedEntry) []index.EntryKey {
		i := sort.Search(len(cves), func(i int) bool { return cves[i].Name >= id })
		if i == len(cves) || cves[i].Name != id || cold.cpeCount(&cves[i]) > 0 {
			return nil
		}
		return entryKeysOf(es, aliases)
	}
	return k
}

// keep returns what is kept of r.
func (k *cve5Keep) keep(r *CVE5Record) *CVE5Record {
	if k == nil || !k.partOf(r.ID) {
		return r
	}
	return k.hold(keptPart(r))
}

// hold makes the part kept r (of a CVE of NVD) held, when k holds parts:
// see holdFor.
func (k *cve5Keep) hold(r *CVE5Record) *CVE5Record {
	if k.keysOf == nil {
		return r
	}
	if t := index.MakeHeldText(r.Affected, r.SSVC, k.keysOf(r.ID, r.Affected)); !t.Empty() {
		r.HeldText = &t
	}
	r.ByPackage = slices.ContainsFunc(r.Affected, keyByPackageName)
	r.Affected, r.SSVC = nil, nil
	return r
}

// keptPart is the part kept of the record r of a CVE of NVD.
func keptPart(r *CVE5Record) *CVE5Record {
	return &CVE5Record{ID: r.ID, State: r.State, Published: r.Published, Updated: r.Updated, Modified: r.Modified,
		Affected: r.Affected, SSVC: r.SSVC, loc: r.loc}
}

// MergeCVE5 adds rec to byID, where two records of one CVE meet: the later
// Modified wins; on a tie, rec (the one read later: from a file named
// later, or later in the same file) does.
func MergeCVE5(byID map[string]*CVE5Record, rec *CVE5Record) {
	if old, ok := byID[rec.ID]; ok && old.Modified.After(rec.Modified) {
		return
	}
	byID[rec.ID] = rec
}

// The two states a record of cvelistV5 can have.
const (
	cve5Published = "PUBLISHED"
	cve5Rejected  = "REJECTED"
)

// cve5Raw is a CVE JSON 5 record, holding only the fields vulnd maps.
type cve5Raw struct {
	DataType   string   `json:"dataType"`
	Metadata   cve5Meta `json:"cveMetadata"`
	Containers struct {
		CNA *cve5Container  `json:"cna"`
		ADP []cve5Container `json:"adp"`
	} `json:"containers"`
}

// cve5Meta is a record's cveMetadata.
type cve5Meta struct {
	ID                string `json:"cveId"`
	State             string `json:"state"`
	AssignerShortName string `json:"assignerShortName"`
	DatePublished     string `json:"datePublished"`
	DateUpdated       string `json:"dateUpdated"`
}

type cve5Container struct {
	ProviderMetadata struct {
		ShortName string `json:"shortName"`
	} `json:"providerMetadata"`
	Descriptions    []nvdLangString `json:"descriptions"`
	RejectedReasons []nvdLangString `json:"rejectedReasons"`
	ProblemTypes    []struct {
		Descriptions []struct {
			CWEID string `json:"cweId"`
		} `json:"descriptions"`
	} `json:"problemTypes"`
	References []struct {
		URL  string   `json:"url"`
		Tags []string `json:"tags"`
	} `json:"references"`
	Metrics  []cve5Metric   `json:"metrics"`
	Affected []cve5Affected `json:"affected"`
}

// cve5PartRaw is a CVE JSON 5 record holding only the fields a build
// keeps or checks of the record of a CVE of NVD (see keptOfCVE5): those of
// cve5Raw but the containers' descriptions, rejected reasons and
// references, which are skipped unread.
type cve5PartRaw struct {
	DataType   string   `json:"dataType"`
	Metadata   cve5Meta `json:"cveMetadata"`
	Containers struct {
		CNA *cve5PartContainer  `json:"cna"`
		ADP []cve5PartContainer `json:"adp"`
	} `json:"containers"`
	// cna is the container decoded into again (see partRaws).
	cna *cve5PartContainer
}

// partRaws are the cve5PartRaws decodeCVE5Part decodes into, used again
// with their containers and the arrays of the containers' affected
// entries, metrics and problem types, which are most of what decoding
// one allocated. Nothing of them is kept: reset clears every element, so
// that what a record does not have is zero, not another record's, and
// what the kept part holds (pointers, CPEs, platforms) is made anew.
var partRaws = sync.Pool{New: func() any {
	r := &cve5PartRaw{cna: new(cve5PartContainer)}
	r.reset()
	return r
}}

// reset makes r as new, keeping its arrays, and its cna the container
// decoded into.
//
// Only the elements within an array's length are cleared: those after
// it are zero already. A decode writes only the elements it leaves
// within the length (it sets the length past the element it failed in),
// and an array it grows past its capacity is a new one, zero after
// what it copied. One record with many entries would otherwise have
// every record after it that took the same raw clear them all again.
func (r *cve5PartRaw) reset() {
	cna, adp := r.cna, r.Containers.ADP
	cna.reset()
	for i := range adp {
		adp[i].reset()
	}
	*r = cve5PartRaw{cna: cna}
	r.Containers.CNA, r.Containers.ADP = cna, adp[:0]
}

// reset clears c, keeping its arrays: their elements are zero up to
// their capacity (see cve5PartRaw.reset).
func (c *cve5PartContainer) reset() {
	pts, ms, as := c.ProblemTypes, c.Metrics, c.Affected
	clear(pts)
	clear(ms)
	clear(as)
	*c = cve5PartContainer{ProblemTypes: pts[:0], Metrics: ms[:0], Affected: as[:0]}
}

// empty reports whether nothing was decoded into c (a container without
// members, or none).
func (c *cve5PartContainer) empty() bool {
	return c.ProviderMetadata.ShortName == "" && len(c.ProblemTypes) == 0 && len(c.Metrics) == 0 && len(c.Affected) == 0
}

type cve5PartContainer struct {
	ProviderMetadata struct {
		ShortName string `json:"shortName"`
	} `json:"providerMetadata"`
	ProblemTypes []struct {
		Descriptions []struct {
			CWEID string `json:"cweId"`
		} `json:"descriptions"`
	} `json:"problemTypes"`
	Metrics  []cve5Metric   `json:"metrics"`
	Affected []cve5Affected `json:"affected"`
}

type cve5Metric struct {
	V2    *nvdCVSSData `json:"cvssV2_0"`
	V30   *nvdCVSSData `json:"cvssV3_0"`
	V31   *nvdCVSSData `json:"cvssV3_1"`
	V40   *nvdCVSSData `json:"cvssV4_0"`
	Other *struct {
		Type    string          `json:"type"`
		Content json.RawMessage `json:"content"`
	} `json:"other"`
}

type cve5Affected struct {
	Vendor        *string       `json:"vendor"`
	Product       *string       `json:"product"`
	PackageName   *string       `json:"packageName"`
	CPEs          []string      `json:"cpes"`
	DefaultStatus *string       `json:"defaultStatus"`
	Versions      []cve5Version `json:"versions"`
	Platforms     []string      `json:"platforms"`
}

type cve5Version struct {
	Version         *string `json:"version"`
	Status          *string `json:"status"`
	VersionType     string  `json:"versionType"`
	LessThan        *string `json:"lessThan"`
	LessThanOrEqual *string `json:"lessThanOrEqual"`
	Changes         []struct {
		At     *string `json:"at"`
		Status *string `json:"status"`
	} `json:"changes"`
}

// ssvcContent is the content of an SSVC decision as CISA's ADP writes it.
type ssvcContent struct {
	Timestamp *string          `json:"timestamp"`
	Options   []map[string]any `json:"options"`
}

// isCVE5Record reports whether raw is a CVE JSON 5 record, by its
// dataType.
func isCVE5Record(raw []byte) bool {
	var head struct {
		DataType string `json:"dataType"`
	}
	return json.Unmarshal(raw, &head) == nil && head.DataType == "CVE_RECORD"
}

// cve5IDOf returns the cveId of a record that may not decode whole, ""
// when it has none that can be read.
func cve5IDOf(raw []byte) string {
	var head struct {
		Metadata struct {
			ID string `json:"cveId"`
		} `json:"cveMetadata"`
	}
	if json.Unmarshal(raw, &head) != nil || len(head.Metadata.ID) > 40 {
		return ""
	}
	return head.Metadata.ID
}

// decodeCVE5 decodes and maps one record.
func decodeCVE5(raw []byte) (*CVE5Record, error) {
	var r cve5Raw
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, err
	}
	if r.DataType != "CVE_RECORD" {
		return nil, fmt.Errorf("dataType %q, want CVE_RECORD", r.DataType)
	}
	return mapCVE5(&r)
}

// mapCVE5 turns a decoded record into a CVE5Record, following the API
// decisions.
func mapCVE5(r *cve5Raw) (*CVE5Record, error) {
	out, err := mapCVE5Metadata(r.Metadata.ID, r.Metadata.State, r.Metadata.AssignerShortName, r.Metadata.DatePublished, r.Metadata.DateUpdated)
	if err != nil {
		return nil, err
	}
	cna := r.Containers.CNA
	if cna == nil {
		return nil, errors.New("no containers.cna")
	}
	if s := cna.ProviderMetadata.ShortName; s != "" {
		out.Assigner = s
	}
	out.Description = summaryOf(cna.Descriptions)
	out.RejectedReason = summaryOf(cna.RejectedReasons)
	if out.CWEs, err = cve5CWEs(cna); err != nil {
		return nil, err
	}
	for _, ref := range cna.References {
		out.References = append(out.References, mapReference(nvdReference{URL: ref.URL, Source: out.Assigner, Tags: ref.Tags}))
	}
	if out.References == nil {
		out.References = []index.Reference{}
	}

	// Metrics: the CNA's, then each ADP's; cvss from the CNA's, else
	// from the ADPs' together.
	cnaMetrics := cve5NVDMetrics(cna.Metrics, out.Assigner)
	var adpMetrics nvdMetrics
	for i := range r.Containers.ADP {
		adp := &r.Containers.ADP[i]
		ms := cve5NVDMetrics(adp.Metrics, adp.ProviderMetadata.ShortName)
		adpMetrics.V2, adpMetrics.V30 = append(adpMetrics.V2, ms.V2...), append(adpMetrics.V30, ms.V30...)
		adpMetrics.V31, adpMetrics.V40 = append(adpMetrics.V31, ms.V31...), append(adpMetrics.V40, ms.V40...)
	}
	cvss, all, err := mapMetrics(&cnaMetrics)
	if err != nil {
		return nil, fmt.Errorf("cna: %w", err)
	}
	adpCVSS, adpAll, err := mapMetrics(&adpMetrics)
	if err != nil {
		return nil, fmt.Errorf("adp: %w", err)
	}
	if cvss.Source == nil {
		cvss = adpCVSS
	}
	out.CVSS, out.Metrics = cvss, append(all, adpAll...)

	// Affected entries, CNA first.
	if out.Affected, err = appendCVE5Affected(nil, "cna", cna.Affected); err != nil {
		return nil, err
	}
	for i := range r.Containers.ADP {
		adp := &r.Containers.ADP[i]
		source := "adp:" + adp.ProviderMetadata.ShortName
		if out.Affected, err = appendCVE5Affected(out.Affected, source, adp.Affected); err != nil {
			return nil, err
		}
		if out.SSVC == nil {
			out.SSVC = cve5SSVC(adp.Metrics)
		}
		if out.KEV == nil {
			out.KEV = cve5KEV(adp.Metrics)
		}
	}
	return out, nil
}

// mapCVE5Metadata checks a record's cveMetadata and maps its id, state,
// assigner and dates.
func mapCVE5Metadata(id, state, assigner, published, updated string) (*CVE5Record, error) {
	if id == "" {
		return nil, errors.New("no cveMetadata.cveId")
	}
	if !isCVEID(id) {
		return nil, fmt.Errorf("malformed cveId %q", id)
	}
	if state != cve5Published && state != cve5Rejected {
		return nil, fmt.Errorf("state %q, want PUBLISHED or REJECTED", state)
	}
	out := &CVE5Record{ID: id, State: state, Assigner: assigner}
	if published != "" {
		t, served, err := cve5Time(published)
		if err != nil {
			return nil, fmt.Errorf("datePublished: %w", err)
		}
		out.Published, out.Modified = served, t
	}
	out.Updated = out.Published
	if updated != "" {
		t, served, err := cve5Time(updated)
		if err != nil {
			return nil, fmt.Errorf("dateUpdated: %w", err)
		}
		out.Updated, out.Modified = served, t
	}
	return out, nil
}

// isCVEID reports whether id is a CVE name, as cveIDPattern says
// ("CVE-", four digits, "-", four to nine digits), without a regular
// expression: every record's cveId is checked, and the match was a
// sixth of mapping a record's metadata.
func isCVEID(id string) bool {
	if len(id) < len("CVE-0000-0000") || len(id) > len("CVE-0000-000000000") || id[:4] != "CVE-" || id[8] != '-' {
		return false
	}
	for i := 4; i < len(id); i++ {
		if i != 8 && (id[i] < '0' || id[i] > '9') {
			return false
		}
	}
	return true
}

// cve5Time is parseCVE5Time of s and the time in the served form
// (formatTime). For a time in UTC as records write it
// ("2024-06-07T10:15:12.293Z", or without the fraction), the served form
// is cut from s rather than formatted: the same text, for a third of
// what mapping a record's metadata cost.
func cve5Time(s string) (time.Time, string, error) {
	t, err := parseCVE5Time(s)
	if err != nil {
		return time.Time{}, "", err
	}
	if len(s) >= len("2006-01-02T15:04:05Z") && s[4] == '-' && s[7] == '-' && s[10] == 'T' && s[13] == ':' && s[16] == ':' &&
		(s[19] == '.' || len(s) == len("2006-01-02T15:04:05Z")) && s[len(s)-1] == 'Z' {
		return t, s[:10] + " " + s[11:19] + "Z", nil
	}
	return t, formatTime(t), nil
}

// parseCVE5Time is parseNVDTime, quicker for the RFC 3339 times in UTC
// that records carry ("2024-06-07T10:15:12.293Z"): parseNVDTime tries
// NVD's layout, without a zone, first, which such a time never matches
// (its "Z" is text after it), for an error that costs more than the
// parse.
func parseCVE5Time(s string) (time.Time, error) {
	if strings.HasSuffix(s, "Z") {
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
			return t.UTC(), nil
		}
	}
	return parseNVDTime(s)
}

// decodeCVE5Part decodes buf, a JSON object and white space, into the
// part that k keeps of a record (see keptOfCVE5): nil when it is not a
// valid record, or when k keeps all of it (then it is decoded whole).
// Whatever mapCVE5 checks of a record it checks of this part; of the
// fields it skips (the containers' descriptions, rejected reasons and
// references), it checks only that they are JSON.
func decodeCVE5Part(buf []byte, k *cve5Keep) *CVE5Record {
	raw := partRaws.Get().(*cve5PartRaw)
	defer partRaws.Put(raw)
	defer raw.reset()
	if json.Unmarshal(buf, raw) != nil || raw.DataType != "CVE_RECORD" || !k.partOf(raw.Metadata.ID) {
		return nil
	}
	m := &raw.Metadata
	out, err := mapCVE5Metadata(m.ID, m.State, m.AssignerShortName, m.DatePublished, m.DateUpdated)
	if err != nil {
		return nil
	}
	// The container decoded into was there before: without members, it
	// may be a record without one, which decodeCVE5Whole tells.
	cna := raw.Containers.CNA
	if cna == nil || cna.empty() {
		return nil
	}
	assigner := out.Assigner
	if s := cna.ProviderMetadata.ShortName; s != "" {
		assigner = s
	}
	if _, err := cve5CWEs(&cve5Container{ProblemTypes: cna.ProblemTypes}); err != nil {
		return nil
	}
	// The metrics are only checked: mapMetrics fails on what mapCVE5
	// would.
	cnaMetrics := cve5NVDMetrics(cna.Metrics, assigner)
	var adpMetrics nvdMetrics
	for i := range raw.Containers.ADP {
		adp := &raw.Containers.ADP[i]
		ms := cve5NVDMetrics(adp.Metrics, adp.ProviderMetadata.ShortName)
		adpMetrics.V2, adpMetrics.V30 = append(adpMetrics.V2, ms.V2...), append(adpMetrics.V30, ms.V30...)
		adpMetrics.V31, adpMetrics.V40 = append(adpMetrics.V31, ms.V31...), append(adpMetrics.V40, ms.V40...)
	}
	if _, _, err := mapMetrics(&cnaMetrics); err != nil {
		return nil
	}
	if _, _, err := mapMetrics(&adpMetrics); err != nil {
		return nil
	}
	if out.Affected, err = appendCVE5Affected(nil, "cna", cna.Affected); err != nil {
		return nil
	}
	for i := range raw.Containers.ADP {
		adp := &raw.Containers.ADP[i]
		if out.Affected, err = appendCVE5Affected(out.Affected, "adp:"+adp.ProviderMetadata.ShortName, adp.Affected); err != nil {
			return nil
		}
		if out.SSVC == nil {
			out.SSVC = cve5SSVC(adp.Metrics)
		}
	}
	out.Assigner = "" // not kept: see keptPart
	return k.hold(out)
}

// cve5CWEs returns the distinct CWE-<n> of the container's problemTypes
// cweIds, ascending by number.
func cve5CWEs(c *cve5Container) ([]string, error) {
	var ws []nvdWeakness
	for _, pt := range c.ProblemTypes {
		for _, d := range pt.Descriptions {
			if d.CWEID == "" {
				continue
			}
			if _, ok := index.CWENumber(strings.TrimSpace(d.CWEID)); !ok {
				return nil, fmt.Errorf("problemTypes: cweId %q is not a CWE name", d.CWEID)
			}
			ws = append(ws, nvdWeakness{Description: []nvdLangString{{Value: d.CWEID}}})
		}
	}
	return mapCWEs(ws)
}

// cve5NVDMetrics sorts a container's CVSS metrics by version in the shape
// of NVD's, so that mapMetrics can apply the one newest-version rule.
func cve5NVDMetrics(ms []cve5Metric, source string) nvdMetrics {
	var out nvdMetrics
	for _, m := range ms {
		for _, v := range []struct {
			c    *nvdCVSSData
			list *[]nvdMetric
		}{{m.V2, &out.V2}, {m.V30, &out.V30}, {m.V31, &out.V31}, {m.V40, &out.V40}} {
			if v.c == nil {
				continue
			}
			*v.list = append(*v.list, nvdMetric{Source: source, CVSSData: *v.c})
		}
	}
	return out
}

// appendCVE5Affected appends a container's affected entries.
func appendCVE5Affected(dst []index.AffectedEntry, source string, as []cve5Affected) ([]index.AffectedEntry, error) {
	for i, a := range as {
		e := index.AffectedEntry{
			Source:        source,
			Vendor:        a.Vendor,
			Product:       a.Product,
			PackageName:   a.PackageName,
			CPEs:          a.CPEs,
			DefaultStatus: a.DefaultStatus,
			Platforms:     a.Platforms,
		}
		if a.Versions != nil {
			e.Versions = make([]index.AffectedVersion, len(a.Versions))
		}
		for j, v := range a.Versions {
			fail := func(what string) error {
				return fmt.Errorf("%s affected %d: version %d: %s", source, i+1, j+1, what)
			}
			if v.Version == nil {
				return nil, fail("no version")
			}
			if v.Status == nil {
				return nil, fail("no status")
			}
			ev := index.AffectedVersion{Version: *v.Version, Status: *v.Status, VersionType: v.VersionType,
				LessThan: v.LessThan, LessThanOrEqual: v.LessThanOrEqual}
			for k, c := range v.Changes {
				if c.At == nil || c.Status == nil {
					return nil, fail(fmt.Sprintf("change %d: no at or no status", k+1))
				}
				ev.Changes = append(ev.Changes, index.StatusChange{At: *c.At, Status: *c.Status})
			}
			e.Versions[j] = ev
		}
		dst = append(dst, e)
	}
	return dst, nil
}

// cve5SSVC returns the first SSVC decision among an ADP's metrics, nil
// when there is none. Its content is free-form in the schema: what does
// not read as CISA writes it is left out (null), never an error.
func cve5SSVC(ms []cve5Metric) *index.SSVC {
	for _, m := range ms {
		if m.Other == nil || !strings.EqualFold(m.Other.Type, "ssvc") {
			continue
		}
		var c ssvcContent
		if json.Unmarshal(m.Other.Content, &c) != nil {
			return &index.SSVC{}
		}
		s := &index.SSVC{Timestamp: c.Timestamp}
		for _, opt := range c.Options {
			for k, v := range opt {
				str, ok := v.(string)
				if !ok {
					continue
				}
				switch {
				case strings.EqualFold(k, "Exploitation"):
					s.Exploitation = &str
				case strings.EqualFold(k, "Automatable"):
					s.Automatable = &str
				case strings.EqualFold(k, "Technical Impact"):
					s.TechnicalImpact = &str
				}
			}
		}
		return s
	}
	return nil
}

// cve5KEV returns the KEV entry among an ADP's metrics (metrics[].other
// of type "kev", as CISA's ADP writes it: content {"dateAdded",
// "reference"}), nil when there is none. The record says only when CISA
// added the CVE to its catalog: DateAdded is that date (YYYY-MM-DD; a
// timestamp is cut to its date, anything else is ""), and the fields NVD
// copies from the catalog beside it are "", as for an NVD record that
// lacks them. The content is free-form in the schema: a kev metric whose
// content does not read as CISA writes it still makes an entry (CISA
// lists the CVE), never an error.
func cve5KEV(ms []cve5Metric) *index.KEV {
	for _, m := range ms {
		if m.Other == nil || !strings.EqualFold(m.Other.Type, "kev") {
			continue
		}
		var c struct {
			DateAdded string `json:"dateAdded"`
		}
		k := &index.KEV{}
		if json.Unmarshal(m.Other.Content, &c) == nil {
			if d := kevDate(c.DateAdded); len(d) == len(time.DateOnly) {
				if _, err := time.Parse(time.DateOnly, d); err == nil {
					k.DateAdded = d
				}
			}
		}
		return k
	}
	return nil
}

// maxInterned is the longest string an interner holds once: vendors,
// products, versions and statuses are shorter; longer ones rarely repeat.
const maxInterned = 128

// interner holds once each string that the affected entries of many
// records repeat ("affected", "semver", "n/a", a vendor, its products and
// their versions), and each pointer to one: of 100k records, they were
// a fifth of what a build kept of them. Not safe for concurrent use.
type interner struct {
	strs map[string]string
	ptrs map[string]*string
	// The last source, default status, status and version type held:
	// these take a few values, most often the one before, which is
	// quicker to compare with than to look up.
	source, status, versionType string
	defaultStatus               *string
}

func newInterner() *interner {
	return &interner{strs: map[string]string{}, ptrs: map[string]*string{}}
}

// str returns the string equal to s held, s itself the first time.
func (in *interner) str(s string) string {
	if len(s) > maxInterned {
		return s
	}
	if t, ok := in.strs[s]; ok {
		return t
	}
	in.strs[s] = s
	return s
}

// ptr returns the pointer to a string equal to *p held, p itself the
// first time (nil for nil). The strings pointed to are never changed.
func (in *interner) ptr(p *string) *string {
	if p == nil || len(*p) > maxInterned {
		return p
	}
	if q, ok := in.ptrs[*p]; ok {
		return q
	}
	s := in.str(*p)
	p = &s
	in.ptrs[s] = p
	return p
}

// strAs is str(s), compared first with *last, the one it gave before for
// the same field, which it keeps.
func (in *interner) strAs(last *string, s string) string {
	if s == *last {
		return *last
	}
	*last = in.str(s)
	return *last
}

// ptrAs is ptr(p), compared first with *last, the one it gave before
// for the same field, which it keeps.
func (in *interner) ptrAs(last **string, p *string) *string {
	if p == nil {
		return nil
	}
	if *last != nil && **last == *p {
		return *last
	}
	*last = in.ptr(p)
	return *last
}

// record makes the strings of r's affected entries and SSVC decision
// those held.
func (in *interner) record(r *CVE5Record) {
	in.affected(r.Affected)
	if s := r.SSVC; s != nil {
		s.Exploitation, s.Automatable, s.TechnicalImpact, s.Timestamp = in.ptr(s.Exploitation), in.ptr(s.Automatable), in.ptr(s.TechnicalImpact), in.ptr(s.Timestamp)
	}
}

// affected makes the strings of the entries es those held.
func (in *interner) affected(es []index.AffectedEntry) {
	for i := range es {
		e := &es[i]
		e.Source = in.strAs(&in.source, e.Source)
		e.Vendor, e.Product, e.PackageName, e.DefaultStatus = in.ptr(e.Vendor), in.ptr(e.Product), in.ptr(e.PackageName), in.ptrAs(&in.defaultStatus, e.DefaultStatus)
		for j := range e.CPEs {
			e.CPEs[j] = in.str(e.CPEs[j])
		}
		for j := range e.Platforms {
			e.Platforms[j] = in.str(e.Platforms[j])
		}
		for j := range e.Versions {
			v := &e.Versions[j]
			v.Version, v.Status, v.VersionType = in.str(v.Version), in.strAs(&in.status, v.Status), in.strAs(&in.versionType, v.VersionType)
			v.LessThan, v.LessThanOrEqual = in.ptr(v.LessThan), in.ptr(v.LessThanOrEqual)
			for k := range v.Changes {
				c := &v.Changes[k]
				c.At, c.Status = in.str(c.At), in.str(c.Status)
			}
		}
	}
}
