package history

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/uptrace/bun"
)

// Chart is what the console draws: one time axis (Unix seconds) and a
// line per label value, aligned to it (nil where a line has no point).
type Chart struct {
	T     []int64 `json:"t"`
	Lines []Line  `json:"lines"`
}

// Line is one line of a chart.
type Line struct {
	Name   string     `json:"name"`
	Values []*float64 `json:"values"`
}

// Window is the span of a chart and the spacing of its points.
type Window struct {
	From, To time.Time
	// Step is the spacing of the points read: a multiple of the sampling
	// period (samples are taken at its multiples).
	Step time.Duration
}

// NewWindow is the window of the last span before now, with about points
// points read at multiples of every.
func NewWindow(now time.Time, span, every time.Duration, points int) Window {
	step := max(every, span/time.Duration(points))
	step = (step + every - 1) / every * every
	return Window{From: now.Add(-span), To: now, Step: step}
}

type row struct {
	Labels   string  `bun:"labels"`
	Instance string  `bun:"instance"`
	T        int64   `bun:"t"`
	Value    float64 `bun:"value"`
}

// load reads a metric's samples in w at multiples of w.Step, ordered by
// series, instance and time.
func load(ctx context.Context, db bun.IDB, metric string, w Window) ([]row, error) {
	var rows []row
	err := db.NewRaw(`SELECT labels, instance, extract(epoch FROM at)::bigint AS t, value FROM console_samples
		WHERE metric = ? AND at >= ? AND at <= ? AND extract(epoch FROM at)::bigint % ? = 0
		ORDER BY labels, instance, at`, metric, w.From.UTC(), w.To.UTC(), int64(w.Step/time.Second)).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("console history of %s: %w", metric, err)
	}
	return rows, nil
}

// point is one value of one series (its labels) at one time.
type point struct {
	labels string
	t      int64
	v      float64
}

// sampled are the times each process sampled in a window (its marker).
type sampled map[string]map[int64]bool

func loadSampled(ctx context.Context, db bun.IDB, w Window) (sampled, error) {
	rows, err := load(ctx, db, markerMetric, w)
	if err != nil {
		return nil, err
	}
	out := sampled{}
	for _, r := range rows {
		if out[r.Instance] == nil {
			out[r.Instance] = map[int64]bool{}
		}
		out[r.Instance][r.T] = true
	}
	return out, nil
}

// rates turns counter samples into per-second rates between consecutive
// samples of each series and instance, summed over instances. A counter
// that went down restarted with its process: its increase is its new
// value. A series first seen one step after its process sampled was
// created in between (a label seen for the first time): it rose from 0.
func rates(rows []row, seen sampled, step int64) []point {
	sum := map[[2]string]map[int64]float64{}
	var out []point
	for i := range rows {
		b := rows[i]
		var inc float64
		switch {
		case i > 0 && rows[i-1].Labels == b.Labels && rows[i-1].Instance == b.Instance:
			a := rows[i-1]
			if b.T <= a.T {
				continue
			}
			inc = b.Value - a.Value
			if inc < 0 {
				inc = b.Value
			}
			inc /= float64(b.T - a.T)
		case seen[b.Instance][b.T-step]:
			inc = b.Value / float64(step)
		default:
			continue
		}
		k := [2]string{b.Labels, ""}
		if sum[k] == nil {
			sum[k] = map[int64]float64{}
		}
		sum[k][b.T] += inc
	}
	for k, byT := range sum {
		for t, v := range byT {
			out = append(out, point{k[0], t, v})
		}
	}
	return out
}

// values are gauge samples, the largest over instances at each time.
func values(rows []row) []point {
	best := map[[2]string]map[int64]float64{}
	for _, r := range rows {
		k := [2]string{r.Labels, ""}
		if best[k] == nil {
			best[k] = map[int64]float64{}
		}
		if v, ok := best[k][r.T]; !ok || r.Value > v {
			best[k][r.T] = r.Value
		}
	}
	var out []point
	for k, byT := range best {
		for t, v := range byT {
			out = append(out, point{k[0], t, v})
		}
	}
	return out
}

// chart groups points by the value of label (summing the others away)
// onto one time axis.
func chart(ps []point, label string, scale float64) Chart {
	byName := map[string]map[int64]float64{}
	ts := map[int64]bool{}
	for _, p := range ps {
		name := ParseLabels(p.labels)[label]
		if byName[name] == nil {
			byName[name] = map[int64]float64{}
		}
		byName[name][p.t] += p.v * scale
		ts[p.t] = true
	}
	c := Chart{T: make([]int64, 0, len(ts)), Lines: []Line{}}
	for t := range ts {
		c.T = append(c.T, t)
	}
	slices.Sort(c.T)
	names := make([]string, 0, len(byName))
	for n := range byName {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		l := Line{Name: n, Values: make([]*float64, len(c.T))}
		for i, t := range c.T {
			if v, ok := byName[n][t]; ok {
				l.Values[i] = &v
			}
		}
		c.Lines = append(c.Lines, l)
	}
	return c
}

// Filter keeps the samples whose labels match (nil: all).
type Filter func(labels map[string]string) bool

func filter(rows []row, f Filter) []row {
	if f == nil {
		return rows
	}
	out := rows[:0:0]
	for _, r := range rows {
		if f(ParseLabels(r.Labels)) {
			out = append(out, r)
		}
	}
	return out
}

// RateOf charts, by label, the per-second rate of a counter's series
// that count: the others count as 0, so a line of every label value is
// drawn, flat when none of its series count (errors when there are none).
func RateOf(ctx context.Context, db bun.IDB, metric, label string, w Window, counts Filter) (Chart, error) {
	rows, err := load(ctx, db, metric, w)
	if err != nil {
		return Chart{}, err
	}
	for i := range rows {
		if !counts(ParseLabels(rows[i].Labels)) {
			rows[i].Value = 0
		}
	}
	seen, err := loadSampled(ctx, db, w)
	if err != nil {
		return Chart{}, err
	}
	return chart(rates(rows, seen, int64(w.Step/time.Second)), label, 1), nil
}

// Rate charts a counter's per-second rate by label.
func Rate(ctx context.Context, db bun.IDB, metric, label string, w Window, f Filter) (Chart, error) {
	rows, err := load(ctx, db, metric, w)
	if err != nil {
		return Chart{}, err
	}
	seen, err := loadSampled(ctx, db, w)
	if err != nil {
		return Chart{}, err
	}
	return chart(rates(filter(rows, f), seen, int64(w.Step/time.Second)), label, 1), nil
}

// Value charts a gauge by label, times scale.
func Value(ctx context.Context, db bun.IDB, metric, label string, scale float64, w Window, f Filter) (Chart, error) {
	rows, err := load(ctx, db, metric, w)
	if err != nil {
		return Chart{}, err
	}
	return chart(values(filter(rows, f)), label, scale), nil
}

// Quantile charts the q-quantile (0..1) of a histogram by label, in the
// histogram's unit times scale, over each step: the buckets' increases
// summed over instances, interpolated within the bucket as Prometheus's
// histogram_quantile does. A step without observations has no point.
func Quantile(ctx context.Context, db bun.IDB, histogram, label string, q, scale float64, w Window) (Chart, error) {
	rows, err := load(ctx, db, histogram+"_bucket", w)
	if err != nil {
		return Chart{}, err
	}
	seen, err := loadSampled(ctx, db, w)
	if err != nil {
		return Chart{}, err
	}
	type key struct {
		name string
		t    int64
	}
	buckets := map[key][]bucket{}
	for _, p := range rates(rows, seen, int64(w.Step/time.Second)) {
		l := ParseLabels(p.labels)
		le, err := strconv.ParseFloat(l["le"], 64)
		if err != nil {
			continue
		}
		k := key{l[label], p.t}
		i := slices.IndexFunc(buckets[k], func(b bucket) bool { return b.le == le })
		if i < 0 {
			buckets[k] = append(buckets[k], bucket{le, 0})
			i = len(buckets[k]) - 1
		}
		buckets[k][i].n += p.v
	}
	var ps []point
	for k, bs := range buckets {
		if v, ok := quantile(bs, q); ok {
			ps = append(ps, point{formatLabels(map[string]string{label: k.name}), k.t, v})
		}
	}
	return chart(ps, label, scale), nil
}

// bucket is a histogram bucket: its upper bound and the observations at
// or below it.
type bucket struct{ le, n float64 }

// quantile is the q-quantile of cumulative buckets, interpolated within
// its bucket as Prometheus's histogram_quantile does (above the last
// finite bound: that bound); false without observations.
func quantile(bs []bucket, q float64) (float64, bool) {
	sort.Slice(bs, func(i, j int) bool { return bs[i].le < bs[j].le })
	if len(bs) == 0 || bs[len(bs)-1].n <= 0 {
		return 0, false
	}
	rank := q * bs[len(bs)-1].n
	lower, below := 0.0, 0.0
	for _, b := range bs {
		if b.n >= rank {
			switch {
			case math.IsInf(b.le, 1):
				return lower, true
			case b.n > below:
				return lower + (b.le-lower)*(rank-below)/(b.n-below), true
			default:
				return b.le, true
			}
		}
		lower, below = b.le, b.n
	}
	return lower, true
}

// Quantiles are the q-quantile of a histogram's cumulative buckets in
// samples (Collect), by label: a process's latency since it started.
func Quantiles(ss []Sample, histogram, label string, q float64) map[string]float64 {
	byName := map[string][]bucket{}
	for _, s := range ss {
		if s.Metric != histogram+"_bucket" {
			continue
		}
		l := ParseLabels(s.Labels)
		le, err := strconv.ParseFloat(l["le"], 64)
		if err != nil {
			continue
		}
		byName[l[label]] = append(byName[l[label]], bucket{le, s.Value})
	}
	out := map[string]float64{}
	for name, bs := range byName {
		if v, ok := quantile(bs, q); ok {
			out[name] = v
		}
	}
	return out
}

// Latest is a series' newest sample.
type Latest struct {
	Labels map[string]string `json:"labels"`
	Value  float64           `json:"value"`
	At     time.Time         `json:"at"`
}

// LatestOf reads the newest sample of each series of a metric taken since
// since (the largest over processes sampled at that time).
func LatestOf(ctx context.Context, db bun.IDB, metric string, since time.Time) ([]Latest, error) {
	var rows []struct {
		Labels string    `bun:"labels"`
		At     time.Time `bun:"at"`
		Value  float64   `bun:"value"`
	}
	err := db.NewRaw(`SELECT DISTINCT ON (labels) labels, at, max(value) OVER (PARTITION BY labels, at) AS value
		FROM console_samples WHERE metric = ? AND at >= ? ORDER BY labels, at DESC`, metric, since.UTC()).Scan(ctx, &rows)
	if err != nil {
		return nil, fmt.Errorf("console history of %s: %w", metric, err)
	}
	out := make([]Latest, len(rows))
	for i, r := range rows {
		out[i] = Latest{Labels: ParseLabels(r.Labels), Value: r.Value, At: r.At.UTC()}
	}
	return out, nil
}
