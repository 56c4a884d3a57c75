package api

import (
	"fmt"
	"strconv"
	"time"

	"github.com/chainlens/chainlens/api/respcache"
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the API's Prometheus series.
type metrics struct {
	latency  *prometheus.HistogramVec
	requests *prometheus.CounterVec
	cache    *prometheus.CounterVec
	// hit, stale and miss are cache's three series.
	hit, stale, miss prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "chainlens_api_request_duration_seconds",
			Help:    "Latency of API requests by endpoint group and operation.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10},
		}, []string{"group", "operation"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "chainlens_api_requests_total",
			Help: "API requests by endpoint group, operation and status code.",
		}, []string{"group", "operation", "code"}),
		cache: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "chainlens_api_cache_lookups_total",
			Help: "Analytics answers by response cache result: hit (fresh), stale (sent while recomputed in the background) or miss (computed before sending).",
		}, []string{"result"}),
	}
	m.hit, m.stale, m.miss = m.cache.WithLabelValues("hit"), m.cache.WithLabelValues("stale"), m.cache.WithLabelValues("miss")
	for _, c := range []prometheus.Collector{m.latency, m.requests, m.cache} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("api metrics: %w", err)
		}
	}
	return m, nil
}

// opMetrics are one operation's series, resolved once: a label lookup
// (hashing the label values under a lock) per request is a measurable part
// of a cached answer's cost.
type opMetrics struct {
	m       *metrics
	group   string
	op      string
	latency prometheus.Observer
	ok      prometheus.Counter // code 200, by far the most frequent
}

// forOperation resolves the series of operation op of group (the group's
// label lets dashboards and alert rules aggregate per endpoint group).
func (m *metrics) forOperation(group, op string) *opMetrics {
	return &opMetrics{m: m, group: group, op: op, latency: m.latency.WithLabelValues(group, op), ok: m.requests.WithLabelValues(group, op, "200")}
}

func (o *opMetrics) observe(status int, d time.Duration) {
	o.latency.Observe(d.Seconds())
	if status == 0 || status == 200 {
		o.ok.Inc()
		return
	}
	o.m.requests.WithLabelValues(o.group, o.op, strconv.Itoa(status)).Inc()
}

func (m *metrics) cacheResult(s respcache.State) {
	switch s {
	case respcache.Fresh:
		m.hit.Inc()
	case respcache.Stale:
		m.stale.Inc()
	default:
		m.miss.Inc()
	}
}
