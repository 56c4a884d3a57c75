package history_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/internal/history"
	"github.com/chainlens/chainlens/internal/testdb"
)

// process is one process's registry with the series the console reads.
type process struct {
	reg     *prometheus.Registry
	blocks  *prometheus.CounterVec
	lag     *prometheus.GaugeVec
	latency *prometheus.HistogramVec
	rec     *history.Recorder
}

func newProcess(t *testing.T, db bun.IDB, instance string) *process {
	p := &process{reg: prometheus.NewRegistry(),
		blocks:  prometheus.NewCounterVec(prometheus.CounterOpts{Name: "chainlens_indexer_blocks_total"}, []string{"chain"}),
		lag:     prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "chainlens_indexer_lag_blocks"}, []string{"chain"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "chainlens_api_request_duration_seconds", Buckets: []float64{.01, .1, 1}}, []string{"group", "operation"}),
	}
	// A series the console does not chart is not sampled.
	other := prometheus.NewCounter(prometheus.CounterOpts{Name: "chainlens_not_charted_total"})
	p.reg.MustRegister(p.blocks, p.lag, p.latency, other)
	other.Add(5)
	p.rec = &history.Recorder{DB: db, Gatherer: p.reg, Every: time.Minute, Keep: 5 * time.Minute, Instance: instance}
	return p
}

func f(v float64) *float64 { return &v }

func TestHistory(t *testing.T) {
	db, _ := testdb.New(t)
	ctx := context.Background()
	t0 := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	a, b := newProcess(t, db, "a"), newProcess(t, db, "b")
	sample := func(p *process, minute int) {
		t.Helper()
		if err := p.rec.Sample(ctx, t0.Add(time.Duration(minute)*time.Minute)); err != nil {
			t.Fatal(err)
		}
	}
	// Process a indexes osmo at 1 block/s, then 2; b indexes dydx at 3
	// blocks/s and restarts (its counter starts over) before minute 2.
	a.blocks.WithLabelValues("osmo").Add(100)
	b.blocks.WithLabelValues("dydx").Add(1000)
	a.lag.WithLabelValues("osmo").Set(7)
	sample(a, 0)
	sample(b, 0)
	a.blocks.WithLabelValues("osmo").Add(60)
	b.blocks.WithLabelValues("dydx").Add(180)
	a.lag.WithLabelValues("osmo").Set(3)
	// Two operations of the dex group: 4 answers ≤ 10 ms, 4 ≤ 100 ms.
	for _, d := range []float64{.005, .005, .005, .005, .05, .05, .05, .05} {
		a.latency.WithLabelValues("dex", "op"+string(rune('a'+int(d*100)%2))).Observe(d)
	}
	sample(a, 1)
	sample(b, 1)
	a.blocks.WithLabelValues("osmo").Add(120)
	b2 := newProcess(t, db, "b") // restarted: the counter starts over
	b = b2
	b.blocks.WithLabelValues("dydx").Add(180)
	sample(a, 2)
	sample(b, 2)

	now := t0.Add(2*time.Minute + 10*time.Second)
	w := history.NewWindow(now, time.Hour, time.Minute, 120)
	if w.Step != time.Minute {
		t.Fatalf("step %v", w.Step)
	}
	rate, err := history.Rate(ctx, db, "chainlens_indexer_blocks_total", "chain", w, nil)
	if err != nil {
		t.Fatal(err)
	}
	t1, t2 := t0.Add(time.Minute).Unix(), t0.Add(2*time.Minute).Unix()
	want := history.Chart{T: []int64{t1, t2}, Lines: []history.Line{
		{Name: "dydx", Values: []*float64{f(3), f(3)}},
		{Name: "osmo", Values: []*float64{f(1), f(2)}},
	}}
	equal(t, "blocks/s", rate, want)

	// Counted only where a series counts: the others make flat lines.
	osmoOnly, err := history.RateOf(ctx, db, "chainlens_indexer_blocks_total", "chain", w, func(l map[string]string) bool { return l["chain"] == "osmo" })
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "blocks/s of osmo", osmoOnly, history.Chart{T: []int64{t1, t2}, Lines: []history.Line{
		{Name: "dydx", Values: []*float64{f(0), f(0)}},
		{Name: "osmo", Values: []*float64{f(1), f(2)}},
	}})

	lag, err := history.Value(ctx, db, "chainlens_indexer_lag_blocks", "chain", 1, w, nil)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "lag", lag, history.Chart{T: []int64{t0.Unix(), t1, t2}, Lines: []history.Line{{Name: "osmo", Values: []*float64{f(7), f(3), f(3)}}}})

	// p50 of 8 answers, 4 ≤ 10 ms and 4 in (10, 100] ms: the 4th is at
	// the 10 ms bound; p99 interpolates within (10, 100]: 10 + 90 × 3.92/4.
	p50, err := history.Quantile(ctx, db, "chainlens_api_request_duration_seconds", "group", 0.5, 1000, w)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "p50", p50, history.Chart{T: []int64{t1}, Lines: []history.Line{{Name: "dex", Values: []*float64{f(10)}}}})
	p99, err := history.Quantile(ctx, db, "chainlens_api_request_duration_seconds", "group", 0.99, 1000, w)
	if err != nil {
		t.Fatal(err)
	}
	equal(t, "p99", p99, history.Chart{T: []int64{t1}, Lines: []history.Line{{Name: "dex", Values: []*float64{f(98.2)}}}})

	ss, err := history.Collect(a.reg)
	if err != nil {
		t.Fatal(err)
	}
	if q := history.Quantiles(ss, "chainlens_api_request_duration_seconds", "group", 0.5); q["dex"] != 0.01 {
		t.Errorf("process p50: %v", q)
	}
	for _, s := range ss {
		if s.Metric == "chainlens_not_charted_total" {
			t.Errorf("sampled a series the console does not chart: %+v", s)
		}
		if s.Metric == "chainlens_api_request_duration_seconds_count" && (s.Labels != `{group="dex"}` || s.Value != 8) {
			t.Errorf("operations are not summed into their group: %+v", s)
		}
	}

	// Samples older than Keep go with every new sample.
	sample(a, 6)
	var oldest time.Time
	if err := db.NewRaw("SELECT min(at) FROM console_samples").Scan(ctx, &oldest); err != nil {
		t.Fatal(err)
	}
	if !oldest.Equal(t0.Add(time.Minute)) {
		t.Fatalf("oldest sample %v, want %v", oldest, t0.Add(time.Minute))
	}
}

func equal(t *testing.T, name string, got, want history.Chart) {
	t.Helper()
	if len(got.T) != len(want.T) || len(got.Lines) != len(want.Lines) {
		t.Fatalf("%s: got %s, want %s", name, show(got), show(want))
	}
	for i := range got.T {
		if got.T[i] != want.T[i] {
			t.Fatalf("%s: got %s, want %s", name, show(got), show(want))
		}
	}
	for i, l := range got.Lines {
		w := want.Lines[i]
		if l.Name != w.Name || len(l.Values) != len(w.Values) {
			t.Fatalf("%s: got %s, want %s", name, show(got), show(want))
		}
		for j := range l.Values {
			if (l.Values[j] == nil) != (w.Values[j] == nil) || (l.Values[j] != nil && abs(*l.Values[j]-*w.Values[j]) > 1e-9) {
				t.Fatalf("%s: got %s, want %s", name, show(got), show(want))
			}
		}
	}
}

func abs(v float64) float64 { return max(v, -v) }

func show(c history.Chart) string {
	s := "t="
	for _, t := range c.T {
		s += " " + time.Unix(t, 0).UTC().Format("15:04")
	}
	for _, l := range c.Lines {
		s += " | " + l.Name + ":"
		for _, v := range l.Values {
			if v == nil {
				s += " nil"
			} else {
				s += " " + strconv.FormatFloat(*v, 'g', -1, 64)
			}
		}
	}
	return s
}
