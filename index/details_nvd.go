package index

import "math"

// SetNVD sets on c what the details of CVE i hold of its NVD record and
// its body does not: NVD's status, the KEV entry, and each metric's
// vector and severity (see DetailsBuilder.Add), c being the CVE the
// details were built from, its metrics as stored (metrics.jsonl.zst). It
// reports false, leaving c as it was, when the details' metrics are not
// c's: another number, version, source, type or score. c.Metrics is
// copied before it is set.
func (d *Details) SetNVD(i int, c *CVE) bool {
	r := d.cves[i]
	ms := d.metricsOf(r)
	if len(ms) != len(c.Metrics) {
		return false
	}
	plain := func(id uint32) bool { return !d.far.isFar(id) }
	// The details list the metrics newest version first, in c's order
	// within a version: the first of each version is at start[v].
	var start, seen [len(metricVersions)]int
	for _, m := range c.Metrics {
		v, ok := versionCode(m.Version)
		if !ok {
			return false
		}
		for w := int(v) + 1; w < len(start); w++ {
			start[w]++
		}
	}
	metrics := make([]Metric, len(c.Metrics))
	for k, m := range c.Metrics {
		v, _ := versionCode(m.Version)
		x := ms[start[v]+seen[v]]
		seen[v]++
		if x.version != v || !plain(x.source) || !plain(x.typ) || !plain(x.vector) || !plain(x.severity) ||
			d.strs[x.source] != m.Source || d.strs[x.typ] != m.Type || x.score != uint16(math.Round(m.Score*10)) {
			return false
		}
		m.Vector, m.Severity = d.strs[x.vector], d.strs[x.severity]
		metrics[k] = m
	}
	if !plain(r.status) {
		return false
	}
	var kev *KEV
	if r.kev >= 0 {
		k := d.kevs[r.kev]
		for _, id := range k {
			if !plain(id) {
				return false
			}
		}
		kev = &KEV{DateAdded: d.strs[k[0]], ActionDue: d.strs[k[1]], RequiredAction: d.strs[k[2]], VulnerabilityName: d.strs[k[3]]}
	}
	c.Status, c.KEV = d.strs[r.status], kev
	if c.Metrics != nil {
		c.Metrics = metrics
	}
	return true
}
