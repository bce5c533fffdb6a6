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
}

func newServeMetrics(current func() *index.Index) *serveMetrics {
	reg := prometheus.NewRegistry()
	m := &serveMetrics{
		reg:  reg,
		http: httpapi.NewMetrics(reg),
		reloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vulnd_reloads_total",
			Help: "Snapshot loads (the first one and every SIGHUP), by outcome: success, failure, or unchanged (the snapshot served was found again and not loaded).",
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
	}
	// Both outcomes are shown from the start, so rate() sees the first failure.
	m.reloads.WithLabelValues("success")
	m.reloads.WithLabelValues("failure")
	m.reloads.WithLabelValues("unchanged")
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
	reg.MustRegister(m.reloads, m.lastFailure, m.loadedAt, m.loadTime, built,
		recordsCollector{current},
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
