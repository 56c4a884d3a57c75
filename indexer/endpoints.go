package indexer

import (
	"net/url"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/chainlens/chainlens/indexer/cometbft"
)

// endpointCollector exports the health of a chain's RPC endpoints, read at
// each scrape from the client that tracks it (cometbft.Client.Health).
type endpointCollector struct {
	health                      func() []cometbft.EndpointHealth
	up, failures, calls, errors *prometheus.Desc
}

// RegisterEndpointHealth registers the endpoint series of one chain on reg:
// chainlens_rpc_endpoint_up (0 while the client skips a failing endpoint),
// _consecutive_failures, _calls_total and _errors_total, labelled by chain,
// index (the endpoint's place in rpc) and endpoint (its host: a URL's path
// and user info may hold credentials).
func RegisterEndpointHealth(reg prometheus.Registerer, chain string, health func() []cometbft.EndpointHealth) error {
	// The chain is a constant label: each chain's collector has
	// descriptors of its own.
	labels, chainLabel := []string{"index", "endpoint"}, prometheus.Labels{"chain": chain}
	return reg.Register(&endpointCollector{
		health:   health,
		up:       prometheus.NewDesc("chainlens_rpc_endpoint_up", "1 while the endpoint is used, 0 while it is skipped after failures.", labels, chainLabel),
		failures: prometheus.NewDesc("chainlens_rpc_endpoint_consecutive_failures", "Failed calls since the endpoint last answered.", labels, chainLabel),
		calls:    prometheus.NewDesc("chainlens_rpc_endpoint_calls_total", "Calls made to the endpoint.", labels, chainLabel),
		errors:   prometheus.NewDesc("chainlens_rpc_endpoint_errors_total", "Calls to the endpoint that failed.", labels, chainLabel),
	})
}

func (c *endpointCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.up
	ch <- c.failures
	ch <- c.calls
	ch <- c.errors
}

func (c *endpointCollector) Collect(ch chan<- prometheus.Metric) {
	for i, h := range c.health() {
		host := h.URL
		if u, err := url.Parse(h.URL); err == nil && u.Host != "" {
			host = u.Host
		}
		lv := []string{strconv.Itoa(i), host}
		up := 1.0
		if h.Down {
			up = 0
		}
		ch <- prometheus.MustNewConstMetric(c.up, prometheus.GaugeValue, up, lv...)
		ch <- prometheus.MustNewConstMetric(c.failures, prometheus.GaugeValue, float64(h.ConsecutiveFailures), lv...)
		ch <- prometheus.MustNewConstMetric(c.calls, prometheus.CounterValue, float64(h.Calls), lv...)
		ch <- prometheus.MustNewConstMetric(c.errors, prometheus.CounterValue, float64(h.Errors), lv...)
	}
}
