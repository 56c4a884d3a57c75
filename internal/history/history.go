// Package history keeps the console's chart history: every process samples
// the chainlens series of its own Prometheus registry into Postgres
// (console_samples) at aligned times, and deletes what is older than the
// configured window; the console reads the samples of every process back
// as rates, values and latency quantiles. The numbers are the ones
// /metrics shows: the sampler reads the same registry.
package history

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// kept lists the metric families sampled and the labels each keeps: the
// others are summed away (an API operation's series sum into its group's),
// so the history grows with chains, jobs and groups, not with operations.
var kept = map[string][]string{
	"chainlens_indexer_indexed_height":           {"chain"},
	"chainlens_indexer_node_height":              {"chain"},
	"chainlens_indexer_blocks_total":             {"chain"},
	"chainlens_indexer_events_total":             {"chain"},
	"chainlens_indexer_dead_letters":             {"chain"},
	"chainlens_indexer_lag_blocks":               {"chain"},
	"chainlens_rpc_endpoint_up":                  {"chain", "index", "endpoint"},
	"chainlens_rpc_endpoint_errors_total":        {"chain", "index", "endpoint"},
	"chainlens_aggregator_last_duration_seconds": {"job"},
	"chainlens_aggregator_rows_total":            {"job"},
	"chainlens_aggregator_failures_total":        {"job"},
	"chainlens_api_requests_total":               {"group", "code"},
	"chainlens_api_request_duration_seconds":     {"group"},
	"chainlens_api_cache_lookups_total":          {"result"},
	"chainlens_engagement_events_total":          {"outcome"},
}

// markerMetric is sampled by every process each time it samples.
const markerMetric = "chainlens_console_sampled_series"

// Sample is one series' value at one time.
type Sample struct {
	Metric string // chainlens_api_request_duration_seconds_bucket
	Labels string // {group="dex",le="0.01"}
	Value  float64
}

// Collect reads the sampled series from g, summed to the kept labels,
// sorted by metric and labels. A histogram gives its _bucket (with le),
// _count and _sum series, as Prometheus's text format does.
func Collect(g prometheus.Gatherer) ([]Sample, error) {
	fams, err := g.Gather()
	if err != nil {
		return nil, fmt.Errorf("gather metrics: %w", err)
	}
	sums := map[[2]string]float64{}
	add := func(metric string, labels map[string]string, v float64) {
		sums[[2]string{metric, formatLabels(labels)}] += v
	}
	for _, f := range fams {
		keep, ok := kept[f.GetName()]
		if !ok {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, lp := range m.GetLabel() {
				if slices.Contains(keep, lp.GetName()) {
					labels[lp.GetName()] = lp.GetValue()
				}
			}
			switch f.GetType() {
			case dto.MetricType_COUNTER:
				add(f.GetName(), labels, m.GetCounter().GetValue())
			case dto.MetricType_GAUGE:
				add(f.GetName(), labels, m.GetGauge().GetValue())
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				add(f.GetName()+"_count", labels, float64(h.GetSampleCount()))
				add(f.GetName()+"_sum", labels, h.GetSampleSum())
				for _, b := range h.GetBucket() {
					bl := maps.Clone(labels)
					bl["le"] = formatFloat(b.GetUpperBound())
					add(f.GetName()+"_bucket", bl, float64(b.GetCumulativeCount()))
				}
				inf := maps.Clone(labels)
				inf["le"] = "+Inf"
				add(f.GetName()+"_bucket", inf, float64(h.GetSampleCount()))
			}
		}
	}
	out := make([]Sample, 0, len(sums))
	for k, v := range sums {
		out = append(out, Sample{Metric: k[0], Labels: k[1], Value: v})
	}
	slices.SortFunc(out, func(a, b Sample) int {
		if c := strings.Compare(a.Metric, b.Metric); c != 0 {
			return c
		}
		return strings.Compare(a.Labels, b.Labels)
	})
	return out, nil
}

// Recorder samples a process's registry into console_samples.
type Recorder struct {
	DB       bun.IDB
	Gatherer prometheus.Gatherer
	// Every is the sampling period; samples are taken at multiples of it
	// (Unix time), so those of every process line up.
	Every time.Duration
	// Keep is how long samples are kept (every process deletes older ones).
	Keep time.Duration
	// Instance names the process (counters restart with it).
	Instance string
	Log      *slog.Logger
}

// NewInstance names this process: host, pid and start time.
func NewInstance() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d/%d", host, os.Getpid(), time.Now().Unix())
}

// Run samples at every multiple of Every until ctx ends. A failed sample
// (database down) is logged and the next one taken on time.
func (r *Recorder) Run(ctx context.Context) error {
	log := r.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	failing := false
	for {
		next := time.Now().Truncate(r.Every).Add(r.Every)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Until(next)):
		}
		err := r.Sample(ctx, next)
		switch {
		case err != nil && ctx.Err() != nil:
			return nil
		case err != nil && !failing:
			log.Warn("console history: sample not stored", "err", err)
		case err == nil && failing:
			log.Info("console history: sampling again")
		}
		failing = err != nil
	}
}

// Sample stores the registry's sampled series at time at, and deletes the
// samples older than Keep, in one transaction.
func (r *Recorder) Sample(ctx context.Context, at time.Time) error {
	ss, err := Collect(r.Gatherer)
	if err != nil {
		return err
	}
	// The marker says this process sampled at this time: a series first
	// seen at the next sample was created in between, from 0.
	ss = append(ss, Sample{Metric: markerMetric, Labels: "{}", Value: float64(len(ss))})
	metrics, labels, values := make([]string, len(ss)), make([]string, len(ss)), make([]float64, len(ss))
	for i, s := range ss {
		metrics[i], labels[i], values[i] = s.Metric, s.Labels, s.Value
	}
	at = at.UTC().Truncate(time.Second)
	return r.DB.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if len(ss) > 0 {
			if _, err := tx.NewRaw(`INSERT INTO console_samples (metric, labels, at, instance, value)
				SELECT m, l, ?, ?, v FROM unnest(?::text[], ?::text[], ?::float8[]) AS s(m, l, v)
				ON CONFLICT DO NOTHING`, at, r.Instance, pgdialect.Array(metrics), pgdialect.Array(labels), pgdialect.Array(values)).Exec(ctx); err != nil {
				return fmt.Errorf("console history: store samples: %w", err)
			}
		}
		if _, err := tx.NewRaw(`DELETE FROM console_samples WHERE at < ?`, at.Add(-r.Keep)).Exec(ctx); err != nil {
			return fmt.Errorf("console history: delete old samples: %w", err)
		}
		return nil
	})
}

// formatLabels writes labels as Prometheus does: {a="1",b="2"}, sorted.
func formatLabels(l map[string]string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range slices.Sorted(maps.Keys(l)) {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=%q", k, l[k])
	}
	b.WriteByte('}')
	return b.String()
}

// ParseLabels reads labels written by formatLabels.
func ParseLabels(s string) map[string]string {
	out := map[string]string{}
	s = strings.TrimSuffix(strings.TrimPrefix(s, "{"), "}")
	for s != "" {
		k, rest, ok := strings.Cut(s, "=")
		if !ok {
			break
		}
		// Values are Go-quoted: find the closing quote not escaped.
		end := 1
		for end < len(rest) && (rest[end] != '"' || rest[end-1] == '\\') {
			end++
		}
		var v string
		if _, err := fmt.Sscanf(rest[:end+1], "%q", &v); err != nil {
			v = strings.Trim(rest[:min(end+1, len(rest))], `"`)
		}
		out[k] = v
		s = strings.TrimPrefix(rest[min(end+1, len(rest)):], ",")
	}
	return out
}

func formatFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
