package httpapi

import (
	"math"

	"github.com/goccy/go-json"

	"github.com/vulnd/vulnd/index"
)

// statusBody is GET /status: which snapshot answers, how fresh and how
// complete its data is, and what it was built from.
type statusBody struct {
	SnapshotID         string        `json:"snapshot_id"`
	FormatVersion      int           `json:"format_version"`
	BuiltAt            string        `json:"built_at"`
	NewestLastModified *string       `json:"newest_last_modified"`
	LoadDurationMS     int64         `json:"load_duration_ms"`
	Counts             index.Counts  `json:"counts"`
	Enrichment         enrichment    `json:"enrichment"`
	Inputs             []index.Input `json:"inputs"`
	// Artifact is the OCI artifact the snapshot was pulled as (serve
	// -pull), or null.
	Artifact *index.Artifact `json:"artifact"`
	// InputDates are how current each input source is; Stale tells that
	// the newest of them is older than serve -max-data-age.
	InputDates inputDates `json:"input_dates"`
	Stale      bool       `json:"stale"`
}

// inputDates are index.InputDates as /status shows them: null for "".
type inputDates struct {
	NVD  *string `json:"nvd"`
	CVE5 *string `json:"cve5"`
	EPSS *string `json:"epss"`
	CWE  *string `json:"cwe"`
}

func orNull(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// enrichment is NVD's backlog in this snapshot: CVEs it has not yet given
// any CPE or any CVSS score, and their share of all CVEs (0 to 1, three
// decimals); and of those without a CPE, how many have a vendor and
// product from their CVE JSON 5 entries, and how many (and what share of
// all CVEs) still have none.
type enrichment struct {
	WithoutCPE          int     `json:"cves_without_cpe"`
	WithoutCVSS         int     `json:"cves_without_cvss"`
	ShareWithoutCPE     float64 `json:"share_without_cpe"`
	ShareWithoutCVSS    float64 `json:"share_without_cvss"`
	ProductsFromEntries int     `json:"cves_products_from_entries"`
	WithoutProduct      int     `json:"cves_without_product"`
	ShareWithoutProduct float64 `json:"share_without_product"`
}

// status answers GET /status. Its body is the snapshot's, but for stale,
// which turns true as time passes: a stale answer has validators of its
// own (see result.stale).
func status(c call, _ []byte) (result, error) {
	st := c.ix.Status()
	b := statusBody{
		SnapshotID: st.ID, FormatVersion: st.Format, BuiltAt: st.BuiltAt,
		LoadDurationMS: st.LoadDuration.Milliseconds(), Counts: st.Counts,
		Enrichment: enrichment{WithoutCPE: st.NoCPE, WithoutCVSS: st.NoCVSS,
			ShareWithoutCPE: share(st.NoCPE, st.Counts.CVEs), ShareWithoutCVSS: share(st.NoCVSS, st.Counts.CVEs),
			ProductsFromEntries: st.EntryKeyed, WithoutProduct: st.NoCPE - st.EntryKeyed,
			ShareWithoutProduct: share(st.NoCPE-st.EntryKeyed, st.Counts.CVEs)},
		Inputs: st.Inputs,
	}
	if st.NewestUpdate != "" {
		b.NewestLastModified = &st.NewestUpdate
	}
	if st.Artifact.Digest != "" {
		b.Artifact = &st.Artifact
	}
	if b.Inputs == nil {
		b.Inputs = []index.Input{}
	}
	d := st.InputDates
	b.InputDates = inputDates{NVD: orNull(d.NVD), CVE5: orNull(d.CVE5), EPSS: orNull(d.EPSS), CWE: orNull(d.CWE)}
	b.Stale = c.stale != nil && c.stale(c.ix)
	out, err := json.MarshalWithOption(b, json.DisableHTMLEscape())
	if err != nil {
		return result{}, err
	}
	return result{body: out, stale: b.Stale}, nil
}

func share(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return math.Round(float64(n)/float64(of)*1000) / 1000
}
