package index

import "github.com/goccy/go-json"

// Data is everything a snapshot holds, in the shape the loader reads and
// writes. Build turns it into an Index. Timestamps are already in the
// served form "YYYY-MM-DD HH:MM:SSZ", which sorts like the time it names.
type Data struct {
	CWEs    []CWE
	CVEs    []CVE
	Reports []Report
	// NVD are the NVD records of the CVEs that have one (NVD's CVE API).
	NVD []NVDRecord
}

// CWE is one entry of MITRE's catalog: a weakness, a category or a view.
// Its JSON form is the API's CWE object.
type CWE struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Type        string `json:"type"`
	CreatedAt   string `json:"created_at"`
	UpdatedAt   string `json:"updated_at"`
}

// CVE is one vulnerability record as served by GET /cve/{name}, plus the
// metrics the change tracker compares (never served).
type CVE struct {
	Name       string      `json:"name"`
	Summary    string      `json:"summary"`
	CreatedAt  string      `json:"created_at"`
	UpdatedAt  string      `json:"updated_at"`
	CPEs       []CPE       `json:"cpes"`
	CWEs       []string    `json:"cwes"`
	CVSS       CVSS        `json:"cvss"`
	References []Reference `json:"references"`
	// Metrics lists every CVSS metric of the record, one per (version,
	// source), for change tracking. It is stored in snapshots but is not
	// part of the API body.
	Metrics []Metric `json:"metrics,omitempty"`
	// Status (NVD's vulnStatus) and KEV, with the metrics' Vector and
	// Severity, are what GET /cve/{name}/details serves. A snapshot keeps
	// them in its details files (see Details), not with the body.
	Status string `json:"-"`
	KEV    *KEV   `json:"-"`
	// Affected and SSVC come from the CVE's JSON 5 record of the CVE
	// Program, when the build read one: its affected entries (CNA first,
	// then each ADP's) and an ADP's SSVC decision. Details serves them
	// too; nil when the CVE has no record (or the record has none).
	Affected []AffectedEntry `json:"-"`
	SSVC     *SSVC           `json:"-"`
	// EntryKeys are the vendors and products its affected entries give a
	// CVE that has no CPE, as the build computes them (the alias file is
	// one of its inputs); nil for a CVE with CPEs, whose vendors and
	// products are NVD's alone. A snapshot keeps them in its details.
	EntryKeys []EntryKey `json:"-"`
	// Held, when set, is what the details keep of the three fields above,
	// which are then nil: the form a build holds a CVE's record in (see
	// HeldDetails).
	Held *HeldDetails `json:"-"`
}

// CPE is one cpeMatch entry of a CVE. URI is NVD's criteria string as
// published (CPE-escaped); Vendor, Product and Version are its components
// with the escaping removed. The range bounds are NVD's text, present only
// when the source has them.
type CPE struct {
	ID                    int64  `json:"cpe_id"`
	URI                   string `json:"uri"`
	Vendor                string `json:"vendor"`
	Product               string `json:"product"`
	Version               string `json:"version"`
	Vulnerable            bool   `json:"vulnerable"`
	VersionStartIncluding string `json:"version_start_including,omitempty"`
	VersionStartExcluding string `json:"version_start_excluding,omitempty"`
	VersionEndIncluding   string `json:"version_end_including,omitempty"`
	VersionEndExcluding   string `json:"version_end_excluding,omitempty"`
}

// CVSS is the cvss member of a CVE: the v2 metric's fields, or nulls and
// the score of the best newer metric, or nulls and 0.
type CVSS struct {
	AccessComplexity      *string `json:"access_complexity"`
	AccessVector          *string `json:"access_vector"`
	Authentication        *string `json:"authentication"`
	AvailabilityImpact    *string `json:"availability_impact"`
	ConfidentialityImpact *string `json:"confidentiality_impact"`
	IntegrityImpact       *string `json:"integrity_impact"`
	Source                *string `json:"source"`
	Score                 float64 `json:"score"`
}

// Reference is one reference of a CVE.
type Reference struct {
	Description string `json:"description"`
	Link        string `json:"link"`
	Source      string `json:"source"`
	Type        string `json:"type"`
}

// Metric is one CVSS metric of a CVE: its version ("2.0", "3.0", "3.1",
// "4.0"), source, NVD type (Primary or Secondary) and base score. ID names
// the (CVE, version, source) record across builds; 0 until change tracking
// assigns it.
type Metric struct {
	ID      int64   `json:"id,omitempty"`
	Version string  `json:"version"`
	Source  string  `json:"source"`
	Type    string  `json:"type"`
	Score   float64 `json:"score"`
	// Vector is NVD's vectorString; Severity its baseSeverity, upper case
	// ("" when absent).
	Vector   string `json:"-"`
	Severity string `json:"-"`
}

// Report groups the alerts of one build compared with the previous one.
type Report struct {
	ID        string  `json:"id"`
	CreatedAt string  `json:"created_at"`
	Alerts    []Alert `json:"alerts"`
}

// Alert says that one CVE is new or changed, for which vendors and
// products, and what changed.
type Alert struct {
	ID        int64    `json:"id"`
	CVE       string   `json:"cve"`
	CreatedAt string   `json:"created_at"`
	Handlers  Handlers `json:"handlers"`
	Events    []Event  `json:"events"`
}

// Handlers are the vendor and product names an alert concerns.
type Handlers struct {
	Products []string `json:"products"`
	Vendors  []string `json:"vendors"`
}

// Event is one change of an alert. Details is the JSON object whose shape
// Type selects.
type Event struct {
	Type      string          `json:"type"`
	CreatedAt string          `json:"created_at"`
	Details   json.RawMessage `json:"details"`
}

// Event types in the order the API lists them within one created_at.
const (
	EventNewCVE            = "New CVE"
	EventSummaryChanged    = "Summary changed"
	EventCPEsChanged       = "CPEs changed"
	EventCVSSChanged       = "CVSS changed"
	EventCWEsChanged       = "CWEs changed"
	EventReferencesChanged = "References changed"
	EventAffectedChanged   = "Affected changed"
	EventEPSSChanged       = "EPSS changed"
)
