package index

import (
	"strconv"
	"time"
)

// TimeLayout is the API's timestamp form, "YYYY-MM-DD HH:MM:SSZ", as a
// time layout (the final Z is a literal, the zone UTC).
const TimeLayout = "2006-01-02 15:04:05Z"

// BuiltTime is BuiltAt as a time; ok is false when it is not in the API's
// form (an Index built without a build time).
func (m Meta) BuiltTime() (t time.Time, ok bool) {
	t, err := time.Parse(TimeLayout, m.BuiltAt)
	return t, err == nil
}

// Input is one upstream file a snapshot was built from.
type Input struct {
	Name   string `json:"name"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// Artifact is the OCI artifact a snapshot was pulled as: where from
// (oci://REGISTRY/REPO:TAG), its manifest's digest, and when the pull
// happened (API form).
type Artifact struct {
	Ref      string `json:"ref"`
	Digest   string `json:"digest"`
	PulledAt string `json:"pulled_at"`
}

// Status is what GET /status tells about the loaded snapshot.
type Status struct {
	Meta
	// NewestUpdate is the latest updated_at of any CVE (the NVD
	// lastModified the data is current to); "" when there are no CVEs.
	NewestUpdate string
	Counts       Counts
	// LoadDuration is from the start of the load (Meta.LoadStarted) to
	// the index being ready; 0 when the start is not known.
	LoadDuration time.Duration
	// NoCPE and NoCVSS count the CVEs without any CPE and without any
	// CVSS score: NVD's enrichment backlog.
	NoCPE, NoCVSS int
	// EntryKeyed counts the CVEs of NoCPE that have a vendor and product
	// from their affected entries (CVE JSON 5); the others have none.
	EntryKeyed int
}

// Status returns the snapshot's identity, provenance, counts and gaps.
func (ix *Index) Status() Status {
	st := Status{Meta: ix.meta, Counts: ix.Counts(), NoCPE: ix.noCPE, NoCVSS: ix.noCVSS, EntryKeyed: ix.entryKeyed}
	if len(ix.updated) > 0 {
		st.NewestUpdate = formatTimeKey(ix.updated[0])
	}
	if !ix.meta.LoadStarted.IsZero() {
		st.LoadDuration = ix.readyAt.Sub(ix.meta.LoadStarted)
	}
	return st
}

// formatTimeKey writes a time key (YYYYMMDDHHMMSS) in the API's form.
func formatTimeKey(k uint64) string {
	d := strconv.FormatUint(k, 10)
	for len(d) < 14 {
		d = "0" + d
	}
	return d[0:4] + "-" + d[4:6] + "-" + d[6:8] + " " + d[8:10] + ":" + d[10:12] + ":" + d[12:14] + "Z"
}

// NoCVEs is an empty CVE list, for a filter that names nothing.
func (ix *Index) NoCVEs() CVEList { return ix.cveList([]int32{}, false) }

// WithArtifact returns an Index of the same snapshot whose Meta.Artifact
// is a: the data, ETag and everything else are shared, ix is unchanged.
// vulnd serve uses it to show an artifact only on a replica that pulled
// it. Safe for concurrent use.
func (ix *Index) WithArtifact(a Artifact) *Index {
	c := *ix
	c.meta.Artifact = a
	return &c
}
