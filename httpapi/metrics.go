package httpapi

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the API's request metrics, in Prometheus form: requests by
// route and status, latency by route, and requests in flight. A Server
// with nil Metrics keeps none.
type Metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
	// inFlight is read by a GaugeFunc at scrape time: an integer atomic
	// add per request is cheaper than a float gauge's compare-and-swap.
	inFlight atomic.Int64
}

// NewMetrics makes the request metrics and registers them with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vulnd_http_requests_total",
			Help: "API requests answered, by route pattern and status code.",
		}, []string{"route", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "vulnd_http_request_duration_seconds",
			Help: "Time from routing an API request to its last byte handed to the connection, by route pattern.",
			// Answers take microseconds; the tail is what an alert wants.
			Buckets: []float64{50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3, 50e-3, 100e-3, 250e-3, 1, 5},
		}, []string{"route"}),
	}
	inFlight := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "vulnd_http_requests_in_flight",
		Help: "API requests being answered now.",
	}, func() float64 { return float64(m.inFlight.Load()) })
	reg.MustRegister(m.requests, m.latency, inFlight)
	return m
}

// routeNone is the route label of requests that matched no route, or were
// refused before routing (414, bad escapes).
const routeNone = "none"

// statusCodes are the statuses the API answers with; routeMetrics keeps
// the counter of each once it is first used, so counting a request is an
// atomic load and an atomic add, and /metrics shows only the series that
// happened.
var statusCodes = [...]int{200, 304, 400, 404, 405, 413, 414, 500, 503}

// routeMetrics are one route's series, each resolved from its vector on
// first use.
type routeMetrics struct {
	name     string
	requests [len(statusCodes)]func() prometheus.Counter
	latency  func() prometheus.Observer
	m        *Metrics
}

func (m *Metrics) route(name string) *routeMetrics {
	rm := &routeMetrics{name: name, m: m}
	rm.latency = sync.OnceValue(func() prometheus.Observer { return m.latency.WithLabelValues(name) })
	for i, code := range statusCodes {
		rm.requests[i] = sync.OnceValue(func() prometheus.Counter {
			return m.requests.WithLabelValues(name, strconv.Itoa(code))
		})
	}
	return rm
}

// observe counts one answer with status, which took d.
func (rm *routeMetrics) observe(status int, d time.Duration) {
	rm.latency().Observe(d.Seconds())
	for i, code := range statusCodes {
		if code == status {
			rm.requests[i]().Inc()
			return
		}
	}
	rm.m.requests.WithLabelValues(rm.name, strconv.Itoa(status)).Inc()
}

// inFlightCount returns the in-flight counter, or nil.
func (m *Metrics) inFlightCount() *atomic.Int64 {
	if m == nil {
		return nil
	}
	return &m.inFlight
}
