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
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "chainlens_api_request_duration_seconds",
			Help:    "Latency of API requests by operation.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10},
		}, []string{"operation"}),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "chainlens_api_requests_total",
			Help: "API requests by operation and status code.",
		}, []string{"operation", "code"}),
		cache: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "chainlens_api_cache_lookups_total",
			Help: "Analytics answers by response cache result: hit (fresh), stale (sent while recomputed in the background) or miss (computed before sending).",
		}, []string{"result"}),
	}
	for _, c := range []prometheus.Collector{m.latency, m.requests, m.cache} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("api metrics: %w", err)
		}
	}
	return m, nil
}

func (m *metrics) observe(op string, status int, d time.Duration) {
	if status == 0 {
		status = 200
	}
	m.latency.WithLabelValues(op).Observe(d.Seconds())
	m.requests.WithLabelValues(op, strconv.Itoa(status)).Inc()
}

func (m *metrics) cacheResult(s respcache.State) {
	switch s {
	case respcache.Fresh:
		m.cache.WithLabelValues("hit").Inc()
	case respcache.Stale:
		m.cache.WithLabelValues("stale").Inc()
	default:
		m.cache.WithLabelValues("miss").Inc()
	}
}
