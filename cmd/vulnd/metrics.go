package main

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/vulnd/vulnd/httpapi"
	"github.com/vulnd/vulnd/index"
)

// serveMetrics are what /metrics on the admin listener shows: the API's
// request metrics, the loaded snapshot, the reloads, and Go's and the
// process's own.
type serveMetrics struct {
	reg         *prometheus.Registry
	http        *httpapi.Metrics
	reloads     *prometheus.CounterVec
	lastFailure *prometheus.GaugeVec
	loadedAt    prometheus.Gauge
	loadTime    prometheus.Gauge
	pulls       *prometheus.CounterVec
	pullOK      prometheus.Gauge
}

func newServeMetrics(current func() *index.Index, stale func(*index.Index) bool) *serveMetrics {
	reg := prometheus.NewRegistry()
	m := &serveMetrics{
		reg:  reg,
		http: httpapi.NewMetrics(reg),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vulnd_reloads_total",
			Help: "Snapshot loads (the first one, every SIGHUP and every snapshot serve -pull downloaded), by outcome: success, failure, or unchanged (the snapshot served was found again and not loaded).",
		}, []string{"outcome"}),
		lastFailure: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "vulnd_reload_last_failure_info",
			Help: "1, with the error, while the last load failed (the previous snapshot keeps serving); absent after a success.",
		}, []string{"error"}),
		loadedAt: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "vulnd_snapshot_loaded_timestamp_seconds",
			Help: "When the serving snapshot was loaded, in Unix seconds.",
		}),
		loadTime: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "vulnd_snapshot_load_duration_seconds",
			Help: "How long loading the serving snapshot took.",
		}),
		pulls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vulnd_pull_total",
			Help: "Polls of the registry tag (serve -pull), by outcome: updated (a new snapshot is served), unchanged, unreachable (the registry did not answer as one), invalid (the artifact is not a good snapshot), failed (a local problem, such as the disk).",
		}, []string{"outcome"}),
		pullOK: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "vulnd_pull_last_success_timestamp_seconds",
			Help: "When a poll last found the tag and served what it names (updated or unchanged), in Unix seconds; 0 before the first.",
		}),
	}
	// Both outcomes are shown from the start, so rate() sees the first failure.
	m.reloads.WithLabelValues("success")
	m.reloads.WithLabelValues("failure")
	m.reloads.WithLabelValues("unchanged")
	for _, o := range pullOutcomes {
		m.pulls.WithLabelValues(o)
	}
	built := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "vulnd_snapshot_build_timestamp_seconds",
		Help: "When the serving snapshot was built (its built_at), in Unix seconds; the data's age is time() minus this.",
	}, func() float64 {
		ix := current()
		if ix == nil {
			return 0
		}
		t, ok := ix.Meta().BuiltTime()
		if !ok {
			return 0
		}
		return float64(t.Unix())
	})
	newest := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "vulnd_snapshot_newest_data_timestamp_seconds",
		Help: "The newest lastModified of any CVE in the serving snapshot (GET /status's newest_last_modified), in Unix seconds: how current the data is; 0 with no CVE.",
	}, func() float64 {
		ix := current()
		if ix == nil {
			return 0
		}
		t, err := time.Parse(index.TimeLayout, ix.Status().NewestUpdate)
		if err != nil {
			return 0
		}
		return float64(t.Unix())
	})
	staleGauge := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "vulnd_snapshot_stale",
		Help: "1 while the serving snapshot's newest input is older than serve -max-data-age (GET /status's stale), else 0; always 0 without it.",
	}, func() float64 {
		if stale(current()) {
			return 1
		}
		return 0
	})
	reg.MustRegister(m.reloads, m.lastFailure, m.loadedAt, m.loadTime, built, newest, staleGauge, m.pulls, m.pullOK,
		recordsCollector{current}, artifactCollector{current}, inputDatesCollector{current},
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// handler serves the registry in Prometheus text format; nil when m is.
func (m *serveMetrics) handler() http.Handler {
	if m == nil {
		return nil
	}
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// reloaded records one load attempt.
func (m *serveMetrics) reloaded(err error, took time.Duration) {
	if m == nil {
		return
	}
	m.lastFailure.Reset()
	if err != nil {
		m.reloads.WithLabelValues("failure").Inc()
		m.lastFailure.WithLabelValues(err.Error()).Set(1)
		return
	}
	m.reloads.WithLabelValues("success").Inc()
	m.loadedAt.SetToCurrentTime()
	m.loadTime.Set(took.Seconds())
}

// pulled records one poll of the registry.
func (m *serveMetrics) pulled(outcome string) {
	if m == nil {
		return
	}
	m.pulls.WithLabelValues(outcome).Inc()
	if outcome == pullUpdated || outcome == pullUnchanged {
		m.pullOK.SetToCurrentTime()
	}
}

// unchanged records a reload that found the snapshot served: the
// directory is good again, so a past failure no longer stands.
func (m *serveMetrics) unchanged() {
	if m == nil {
		return
	}
	m.lastFailure.Reset()
	m.reloads.WithLabelValues("unchanged").Inc()
}

// recordsCollector reports the serving snapshot's counts at each scrape.
type recordsCollector struct{ current func() *index.Index }

var recordsDesc = prometheus.NewDesc("vulnd_snapshot_records",
	"Records in the serving snapshot, by kind.", []string{"kind"}, nil)

func (c recordsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- recordsDesc }

func (c recordsCollector) Collect(ch chan<- prometheus.Metric) {
	ix := c.current()
	if ix == nil {
		return
	}
	n := ix.Counts()
	for _, k := range []struct {
		kind string
		n    int
	}{{"cves", n.CVEs}, {"cwes", n.CWEs}, {"vendors", n.Vendors}, {"products", n.Products}, {"reports", n.Reports}, {"alerts", n.Alerts}} {
		ch <- prometheus.MustNewConstMetric(recordsDesc, prometheus.GaugeValue, float64(k.n), k.kind)
	}
}

// artifactCollector reports the OCI artifact the serving snapshot was
// pulled as, if it was.
type artifactCollector struct{ current func() *index.Index }

var artifactDesc = prometheus.NewDesc("vulnd_snapshot_artifact_info",
	"1, labelled with the reference and digest of the OCI artifact the serving snapshot was pulled as (serve -pull); absent when it was not pulled.",
	[]string{"ref", "digest"}, nil)

func (c artifactCollector) Describe(ch chan<- *prometheus.Desc) { ch <- artifactDesc }

func (c artifactCollector) Collect(ch chan<- prometheus.Metric) {
	ix := c.current()
	if ix == nil || ix.Meta().Artifact.Digest == "" {
		return
	}
	a := ix.Meta().Artifact
	ch <- prometheus.MustNewConstMetric(artifactDesc, prometheus.GaugeValue, 1, a.Ref, a.Digest)
}

// inputDatesCollector reports how current each input source of the
// serving snapshot is (GET /status's input_dates).
type inputDatesCollector struct{ current func() *index.Index }

var inputDatesDesc = prometheus.NewDesc("vulnd_snapshot_input_timestamp_seconds",
	"How current each input source of the serving snapshot is, in Unix seconds (GET /status's input_dates): nvd the newest lastModified of its records, cve5 the newest dateUpdated of the CVE JSON 5 records, epss the EPSS score_date, cwe the CWE catalog's date; absent for a source the snapshot has no date of.",
	[]string{"source"}, nil)

func (c inputDatesCollector) Describe(ch chan<- *prometheus.Desc) { ch <- inputDatesDesc }

func (c inputDatesCollector) Collect(ch chan<- prometheus.Metric) {
	ix := c.current()
	if ix == nil {
		return
	}
	d := ix.Meta().InputDates
	for _, s := range [...]struct{ source, at string }{{"nvd", d.NVD}, {"cve5", d.CVE5}, {"epss", d.EPSS}, {"cwe", d.CWE}} {
		if t, err := time.Parse(index.TimeLayout, s.at); err == nil {
			ch <- prometheus.MustNewConstMetric(inputDatesDesc, prometheus.GaugeValue, float64(t.Unix()), s.source)
		}
	}
}
