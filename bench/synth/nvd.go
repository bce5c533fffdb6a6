package main

import "strconv"

// This file holds the NVD CVE API 2.0 record shapes the generator writes.
// Field order follows NVD's own output, so the structs are declared in
// that order; every optional member is omitempty so that "absent" and
// "empty" can both be produced where NVD produces both.

// Vulnerability is one element of a feed's "vulnerabilities" array.
type Vulnerability struct {
	CVE *CVE `json:"cve"`
}

// CVE is one record in NVD CVE API 2.0 shape.
type CVE struct {
	ID               string `json:"id"`
	SourceIdentifier string `json:"sourceIdentifier"`
	Published        string `json:"published"`
	LastModified     string `json:"lastModified"`
	VulnStatus       string `json:"vulnStatus"`
	// CVETags is nil when the record has no cveTags member and points
	// to an empty slice for "cveTags": [].
	CVETags *[]CVETag `json:"cveTags,omitempty"`
	// CISA's Known Exploited Vulnerabilities entry, on about 0.5 % of
	// the records, as on NVD (some 1,400 of 300,000).
	CISAExploitAdd        string          `json:"cisaExploitAdd,omitempty"`
	CISAActionDue         string          `json:"cisaActionDue,omitempty"`
	CISARequiredAction    string          `json:"cisaRequiredAction,omitempty"`
	CISAVulnerabilityName string          `json:"cisaVulnerabilityName,omitempty"`
	Descriptions          []LangString    `json:"descriptions"`
	Metrics               Metrics         `json:"metrics"`
	Weaknesses            []Weakness      `json:"weaknesses,omitempty"`
	Configurations        []Configuration `json:"configurations,omitempty"`
	References            []Reference     `json:"references"`
}

// CVETag is one entry of cveTags: tags such as "disputed" set by a source.
type CVETag struct {
	SourceIdentifier string   `json:"sourceIdentifier"`
	Tags             []string `json:"tags"`
}

// LangString is a text in one language (descriptions, weakness entries).
type LangString struct {
	Lang  string `json:"lang"`
	Value string `json:"value"`
}

// Metrics holds the CVSS metrics of a record, newest version first as
// NVD lists them. A rejected record has none: "metrics": {}.
type Metrics struct {
	V40 []CVSSMetricV40 `json:"cvssMetricV40,omitempty"`
	V31 []CVSSMetricV3  `json:"cvssMetricV31,omitempty"`
	V30 []CVSSMetricV3  `json:"cvssMetricV30,omitempty"`
	V2  []CVSSMetricV2  `json:"cvssMetricV2,omitempty"`
}

// Score is a CVSS score; it is written with exactly one decimal ("10.0",
// "7.5") as NVD writes it.
type Score float64

// MarshalJSON writes s with one decimal.
func (s Score) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, float64(s), 'f', 1, 64), nil
}

// CVSSMetricV2 is one element of cvssMetricV2.
type CVSSMetricV2 struct {
	Source                  string     `json:"source"`
	Type                    string     `json:"type"`
	CVSSData                CVSSDataV2 `json:"cvssData"`
	BaseSeverity            string     `json:"baseSeverity"`
	ExploitabilityScore     Score      `json:"exploitabilityScore"`
	ImpactScore             Score      `json:"impactScore"`
	ACInsufInfo             bool       `json:"acInsufInfo"`
	ObtainAllPrivilege      bool       `json:"obtainAllPrivilege"`
	ObtainUserPrivilege     bool       `json:"obtainUserPrivilege"`
	ObtainOtherPrivilege    bool       `json:"obtainOtherPrivilege"`
	UserInteractionRequired bool       `json:"userInteractionRequired"`
}

// CVSSDataV2 is the cvssData of a CVSS 2.0 metric.
type CVSSDataV2 struct {
	Version               string `json:"version"`
	VectorString          string `json:"vectorString"`
	BaseScore             Score  `json:"baseScore"`
	AccessVector          string `json:"accessVector"`
	AccessComplexity      string `json:"accessComplexity"`
	Authentication        string `json:"authentication"`
	ConfidentialityImpact string `json:"confidentialityImpact"`
	IntegrityImpact       string `json:"integrityImpact"`
	AvailabilityImpact    string `json:"availabilityImpact"`
}

// CVSSMetricV3 is one element of cvssMetricV30 or cvssMetricV31.
type CVSSMetricV3 struct {
	Source              string     `json:"source"`
	Type                string     `json:"type"`
	CVSSData            CVSSDataV3 `json:"cvssData"`
	ExploitabilityScore Score      `json:"exploitabilityScore"`
	ImpactScore         Score      `json:"impactScore"`
}

// CVSSDataV3 is the cvssData of a CVSS 3.0 or 3.1 metric.
type CVSSDataV3 struct {
	Version               string `json:"version"`
	VectorString          string `json:"vectorString"`
	BaseScore             Score  `json:"baseScore"`
	BaseSeverity          string `json:"baseSeverity"`
	AttackVector          string `json:"attackVector"`
	AttackComplexity      string `json:"attackComplexity"`
	PrivilegesRequired    string `json:"privilegesRequired"`
	UserInteraction       string `json:"userInteraction"`
	Scope                 string `json:"scope"`
	ConfidentialityImpact string `json:"confidentialityImpact"`
	IntegrityImpact       string `json:"integrityImpact"`
	AvailabilityImpact    string `json:"availabilityImpact"`
}

// CVSSMetricV40 is one element of cvssMetricV40.
type CVSSMetricV40 struct {
	Source   string      `json:"source"`
	Type     string      `json:"type"`
	CVSSData CVSSDataV40 `json:"cvssData"`
}

// CVSSDataV40 is the cvssData of a CVSS 4.0 metric. The threat,
// environmental and supplemental metrics are always NOT_DEFINED here, as
// they nearly always are in NVD's data.
type CVSSDataV40 struct {
	Version                                 string `json:"version"`
	VectorString                            string `json:"vectorString"`
	BaseScore                               Score  `json:"baseScore"`
	BaseSeverity                            string `json:"baseSeverity"`
	AttackVector                            string `json:"attackVector"`
	AttackComplexity                        string `json:"attackComplexity"`
	AttackRequirements                      string `json:"attackRequirements"`
	PrivilegesRequired                      string `json:"privilegesRequired"`
	UserInteraction                         string `json:"userInteraction"`
	VulnerableSystemConfidentiality         string `json:"vulnerableSystemConfidentiality"`
	VulnerableSystemIntegrity               string `json:"vulnerableSystemIntegrity"`
	VulnerableSystemAvailability            string `json:"vulnerableSystemAvailability"`
	SubsequentSystemConfidentiality         string `json:"subsequentSystemConfidentiality"`
	SubsequentSystemIntegrity               string `json:"subsequentSystemIntegrity"`
	SubsequentSystemAvailability            string `json:"subsequentSystemAvailability"`
	ExploitMaturity                         string `json:"exploitMaturity"`
	ConfidentialityRequirements             string `json:"confidentialityRequirements"`
	IntegrityRequirements                   string `json:"integrityRequirements"`
	AvailabilityRequirements                string `json:"availabilityRequirements"`
	ModifiedAttackVector                    string `json:"modifiedAttackVector"`
	ModifiedAttackComplexity                string `json:"modifiedAttackComplexity"`
	ModifiedAttackRequirements              string `json:"modifiedAttackRequirements"`
	ModifiedPrivilegesRequired              string `json:"modifiedPrivilegesRequired"`
	ModifiedUserInteraction                 string `json:"modifiedUserInteraction"`
	ModifiedVulnerableSystemConfidentiality string `json:"modifiedVulnerableSystemConfidentiality"`
	ModifiedVulnerableSystemIntegrity       string `json:"modifiedVulnerableSystemIntegrity"`
	ModifiedVulnerableSystemAvailability    string `json:"modifiedVulnerableSystemAvailability"`
	ModifiedSubsequentSystemConfidentiality string `json:"modifiedSubsequentSystemConfidentiality"`
	ModifiedSubsequentSystemIntegrity       string `json:"modifiedSubsequentSystemIntegrity"`
	ModifiedSubsequentSystemAvailability    string `json:"modifiedSubsequentSystemAvailability"`
	Safety                                  string `json:"safety"`
	Automatable                             string `json:"automatable"`
	Recovery                                string `json:"recovery"`
	ValueDensity                            string `json:"valueDensity"`
	VulnerabilityResponseEffort             string `json:"vulnerabilityResponseEffort"`
	ProviderUrgency                         string `json:"providerUrgency"`
}

// Weakness is one element of weaknesses: the CWE ids one source assigns.
type Weakness struct {
	Source      string       `json:"source"`
	Type        string       `json:"type"`
	Description []LangString `json:"description"`
}

// Configuration is one element of configurations: a tree of nodes, the
// nodes joined by Operator (omitted, meaning a single node, or "AND").
type Configuration struct {
	Operator string `json:"operator,omitempty"`
	Nodes    []Node `json:"nodes"`
}

// Node is one node of a configuration: CPE matches joined by Operator.
type Node struct {
	Operator string     `json:"operator"`
	Negate   bool       `json:"negate"`
	CPEMatch []CPEMatch `json:"cpeMatch"`
}

// CPEMatch is one cpeMatch entry: a CPE 2.3 formatted string (escaped)
// and, when Criteria's version is "*", optional version range bounds in
// plain (unescaped) text.
type CPEMatch struct {
	Vulnerable            bool   `json:"vulnerable"`
	Criteria              string `json:"criteria"`
	VersionStartIncluding string `json:"versionStartIncluding,omitempty"`
	VersionStartExcluding string `json:"versionStartExcluding,omitempty"`
	VersionEndIncluding   string `json:"versionEndIncluding,omitempty"`
	VersionEndExcluding   string `json:"versionEndExcluding,omitempty"`
	MatchCriteriaID       string `json:"matchCriteriaId"`
}

// Reference is one element of references. Tags is omitted (nil) for
// references NVD has not tagged.
type Reference struct {
	URL    string   `json:"url"`
	Source string   `json:"source"`
	Tags   []string `json:"tags,omitempty"`
}
