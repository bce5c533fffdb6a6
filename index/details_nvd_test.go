package index

import (
	"reflect"
	"testing"
)

// TestDetailsSetNVD: a CVE's status, KEV entry and metrics' vectors and
// severities, which a snapshot keeps in the details and not with the
// body, are set back from its details as they were, the metrics matched
// by version and order though the details list them newest version
// first; details that are not the CVE's leave it as it was.
func TestDetailsSetNVD(t *testing.T) {
	full := []CVE{
		{Name: "CVE-2024-0001", Status: "Analyzed", KEV: &KEV{DateAdded: "2024-05-01", ActionDue: "2024-05-22", RequiredAction: "Apply", VulnerabilityName: "X"},
			Metrics: []Metric{
				{Version: "2.0", Source: "nvd@nist.gov", Type: "Primary", Score: 5, Vector: "AV:N/AC:L", Severity: "MEDIUM"},
				{Version: "3.1", Source: "nvd@nist.gov", Type: "Primary", Score: 9.8, Vector: "CVSS:3.1/AV:N", Severity: "CRITICAL"},
				{Version: "3.1", Source: "cna@example.com", Type: "Secondary", Score: 7.5, Vector: "CVSS:3.1/AV:L", Severity: "HIGH"},
				{Version: "3.0", Source: "nvd@nist.gov", Type: "Primary", Score: 4, Vector: "CVSS:3.0/AV:P"},
				{Version: "4.0", Source: "cna@example.com", Type: "Secondary", Score: 6.1, Vector: "CVSS:4.0/AV:N", Severity: "MEDIUM"},
			}},
		{Name: "CVE-2024-0002", Status: "Rejected"},
	}
	b := NewDetailsBuilder()
	for i := range full {
		if err := b.Add(&full[i]); err != nil {
			t.Fatal(err)
		}
	}
	d := b.Details()
	for i, want := range full {
		c := want
		c.Status, c.KEV, c.Metrics = "", nil, nil
		for _, m := range want.Metrics {
			m.Vector, m.Severity = "", ""
			c.Metrics = append(c.Metrics, m)
		}
		stored := c.Metrics
		if !d.SetNVD(i, &c) {
			t.Fatalf("%s: not set", want.Name)
		}
		if !reflect.DeepEqual(c, want) {
			t.Errorf("%s: %+v, want %+v", want.Name, c, want)
		}
		if len(stored) > 0 && stored[0].Vector != "" {
			t.Errorf("%s: the stored metrics were changed", want.Name)
		}
	}
	for name, edit := range map[string]func(c *CVE){
		"a metric fewer":  func(c *CVE) { c.Metrics = c.Metrics[1:] },
		"another source":  func(c *CVE) { c.Metrics[2].Source = "other" },
		"another score":   func(c *CVE) { c.Metrics[1].Score = 9.7 },
		"another version": func(c *CVE) { c.Metrics[3].Version = "3.1" },
		"an unknown one":  func(c *CVE) { c.Metrics[3].Version = "5.0" },
		"another CVE's 0": func(c *CVE) { c.Metrics = nil },
	} {
		c := full[0]
		c.Status, c.KEV = "", nil
		c.Metrics = append([]Metric(nil), full[0].Metrics...)
		edit(&c)
		before := c
		if d.SetNVD(0, &c) || !reflect.DeepEqual(c, before) {
			t.Errorf("%s: set, or changed", name)
		}
	}
}
