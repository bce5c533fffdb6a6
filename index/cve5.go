package index

// The affected entries of CVE JSON 5 records (the CVE Program's format):
// what a CVE's CNA and ADPs say is affected, for CVEs that NVD has not
// analysed yet. See the API decisions, "CVE records of the CVE Program,
// JSON 5"; the status algorithm is in cve5status.go.

// AffectedEntry is one item of an "affected" list of a CVE JSON 5 record,
// of the CNA container or of an ADP container. Its JSON form is the
// object of /cve/{name}/details' "affected" list: a field the record
// lacks is null. PackageName is not served; it only gives the entry a
// product key when the record has no product. An AffectedEntry is a
// plain value; it is safe for concurrent reads.
type AffectedEntry struct {
	// Source is "cna", or "adp:" and the ADP's providerMetadata.shortName
	// ("adp:CISA-ADP").
	Source        string            `json:"source"`
	Vendor        *string           `json:"vendor"`
	Product       *string           `json:"product"`
	PackageName   *string           `json:"-"`
	CPEs          []string          `json:"cpes"`
	DefaultStatus *string           `json:"default_status"`
	Versions      []AffectedVersion `json:"versions"`
	Platforms     []string          `json:"platforms"`
}

// AffectedVersion is one version object of an affected entry, with the
// record's field names; the optional ones are left out when the record
// has none.
type AffectedVersion struct {
	Version         string         `json:"version"`
	Status          string         `json:"status"`
	VersionType     string         `json:"versionType,omitempty"`
	LessThan        *string        `json:"lessThan,omitempty"`
	LessThanOrEqual *string        `json:"lessThanOrEqual,omitempty"`
	Changes         []StatusChange `json:"changes,omitempty"`
}

// StatusChange is one element of a version object's "changes": from
// version At on (within the object's range), the status is Status.
type StatusChange struct {
	At     string `json:"at"`
	Status string `json:"status"`
}

// SSVC is an ADP's SSVC decision (a metrics[].other of type "ssvc"), as
// /cve/{name}/details serves it; an option the decision lacks is null.
// Timestamp is the decision's own, as written.
type SSVC struct {
	Exploitation    *string `json:"exploitation"`
	Automatable     *string `json:"automatable"`
	TechnicalImpact *string `json:"technical_impact"`
	Timestamp       *string `json:"timestamp"`
}

// The statuses of CVE JSON 5.
const (
	StatusAffected   = "affected"
	StatusUnaffected = "unaffected"
	StatusUnknown    = "unknown"
)
