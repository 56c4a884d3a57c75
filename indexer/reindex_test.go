package indexer

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/chains/cosmos"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/testdb"
)

func TestContiguousRuns(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in   []int64
		max  int
		want [][]int64
	}{
		{nil, 3, nil},
		{[]int64{5}, 3, [][]int64{{5}}},
		{[]int64{1, 2, 3, 4, 5}, 2, [][]int64{{1, 2}, {3, 4}, {5}}},
		{[]int64{1, 2, 7, 8, 9, 20}, 10, [][]int64{{1, 2}, {7, 8, 9}, {20}}},
	}
	for _, c := range cases {
		if got := contiguousRuns(c.in, c.max); !reflect.DeepEqual(got, c.want) {
			t.Errorf("contiguousRuns(%v, %d) = %v, want %v", c.in, c.max, got, c.want)
		}
	}
}

// failingSource fails every fetch of the heights in fail.
type failingSource struct {
	memSource
	fail map[int64]bool
}

func (s failingSource) Block(ctx context.Context, h int64) ([]byte, error) {
	if s.fail[h] {
		return nil, errors.New("injected: node answers 500")
	}
	return s.memSource.Block(ctx, h)
}

// TestReindexKeepsRowsOfAFailedHeight reindexes a range in which one
// height cannot be fetched: the batch holding it must not be written (its
// rows stay as indexed, no dead letter appears) and the reindex fails,
// naming the height; the batches before it are rewritten.
func TestReindexKeepsRowsOfAFailedHeight(t *testing.T) {
	t.Parallel()
	db, _ := testdb.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	raws := loadRaw(t, "osmosis", "localosmosis")
	cfg := config.Chain{ID: "localosmosis", Kind: "osmosis", RPC: []string{"http://memory"}, BatchSize: 10, Concurrency: 4,
		PollInterval: config.Duration(time.Millisecond), Bech32Prefix: "osmo"}
	m, _ := NewMetrics(nil)
	adapter := cosmos.NewAdapter(cfg.Kind, cfg.Bech32Prefix)
	src := memSource{cfg.ID, raws}
	if err := NewCosmos(cfg, db, src, adapter, slog.New(slog.DiscardHandler), m).Run(ctx, int64(len(raws))); err != nil {
		t.Fatal(err)
	}
	count := func(q string) int64 {
		var n int64
		if err := db.NewRaw(q).Scan(ctx, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	events := count("SELECT count(*) FROM events WHERE height BETWEEN 1 AND 40")
	if _, err := db.ExecContext(ctx, "DELETE FROM events WHERE height BETWEEN 1 AND 10"); err != nil {
		t.Fatal(err)
	}
	x := NewCosmos(cfg, db, failingSource{src, map[int64]bool{25: true}}, adapter, slog.New(slog.DiscardHandler), m)
	var hs []int64
	for h := int64(1); h <= 40; h++ {
		hs = append(hs, h)
	}
	err := x.Reindex(ctx, hs)
	if err == nil || !strings.Contains(err.Error(), "heights 21..30 left as they were (20 of 40 heights rewritten before them)") ||
		!strings.Contains(err.Error(), "height 25: fetch height 25: injected") {
		t.Fatalf("reindex: %v", err)
	}
	expectCounts(t, db, "", []countCheck{
		{"SELECT count(*) FROM events WHERE height BETWEEN 1 AND 40", events},
		{"SELECT count(*) FROM blocks WHERE height BETWEEN 21 AND 30", 10},
		{"SELECT count(*) FROM dead_letters", 0},
		{"SELECT next_height FROM sync_state", int64(len(raws)) + 1},
	})
}

// TestDeadLettersAreRetried indexes a chain whose node keeps failing three
// heights: the checkpoint moves past them, they wait in dead_letters (and
// the metrics), `--until` fails naming them; once the node serves them
// they are indexed, by a run through the same height and by a following
// run's periodic retry.
func TestDeadLettersAreRetried(t *testing.T) {
	t.Parallel()
	db, _ := testdb.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	raws := loadRaw(t, "osmosis", "localosmosis")[:100]
	cfg := config.Chain{ID: "localosmosis", Kind: "osmosis", RPC: []string{"http://memory"}, BatchSize: 20, Concurrency: 4,
		PollInterval: config.Duration(time.Millisecond), Bech32Prefix: "osmo"}
	m, _ := NewMetrics(nil)
	adapter := cosmos.NewAdapter(cfg.Kind, cfg.Bech32Prefix)
	failing := failingSource{memSource{cfg.ID, raws}, map[int64]bool{30: true, 31: true, 75: true}}
	count := func(q string) int64 {
		var n int64
		if err := db.NewRaw(q).Scan(ctx, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	err := NewCosmos(cfg, db, failing, adapter, slog.New(slog.DiscardHandler), m).Run(ctx, 100)
	if err == nil || !strings.Contains(err.Error(), "3 height(s) through 100 still fail (first 30") {
		t.Fatalf("run with failing heights: %v", err)
	}
	expectCounts(t, db, "", []countCheck{
		{"SELECT next_height FROM sync_state", 101},
		{"SELECT count(*) FROM blocks", 97},
		{"SELECT count(*) FROM dead_letters WHERE height IN (30, 31, 75) AND attempts >= 1", 3},
		{"SELECT count(*) FROM events WHERE height IN (30, 31, 75)", 0},
	})
	if n, lo := testutil.ToFloat64(m.deadLetters.WithLabelValues(cfg.ID)), testutil.ToFloat64(m.lowestDead.WithLabelValues(cfg.ID)); n != 3 || lo != 30 {
		t.Errorf("metrics: %v dead letters, lowest %v; want 3, 30", n, lo)
	}

	// Height 75 comes back first, through a run to the same height.
	delete(failing.fail, 75)
	if err := NewCosmos(cfg, db, failing, adapter, slog.New(slog.DiscardHandler), m).Run(ctx, 100); err == nil ||
		!strings.Contains(err.Error(), "2 height(s) through 100 still fail (first 30") {
		t.Fatalf("second run: %v", err)
	}
	// The others come back while a run follows the chain: its periodic
	// retry picks them up once they are due.
	delete(failing.fail, 30)
	delete(failing.fail, 31)
	if _, err := db.ExecContext(ctx, "UPDATE dead_letters SET next_retry_at = now()"); err != nil {
		t.Fatal(err)
	}
	follow, stop := context.WithCancel(ctx)
	x := NewCosmos(cfg, db, failing, adapter, slog.New(slog.DiscardHandler), m)
	x.RetryEvery = 10 * time.Millisecond
	done := make(chan error, 1)
	go func() { done <- x.Run(follow, 0) }()
	// Until the rows are gone and the gauges, refreshed after the retries'
	// commits, say so (stopping in between would leave them unrefreshed).
	gauges := func() float64 {
		return testutil.ToFloat64(m.deadLetters.WithLabelValues(cfg.ID)) + testutil.ToFloat64(m.lowestDead.WithLabelValues(cfg.ID))
	}
	for deadline := time.Now().Add(20 * time.Second); (count("SELECT count(*) FROM dead_letters") > 0 || gauges() != 0) && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	expectCounts(t, db, "after the retries, ", []countCheck{
		{"SELECT count(*) FROM dead_letters", 0},
		{"SELECT count(*) FROM blocks", 100},
		{"SELECT count(DISTINCT height) FROM blocks", 100},
		{"SELECT next_height FROM sync_state", 101},
	})
	if n, lo := testutil.ToFloat64(m.deadLetters.WithLabelValues(cfg.ID)), testutil.ToFloat64(m.lowestDead.WithLabelValues(cfg.ID)); n != 0 || lo != 0 {
		t.Errorf("metrics after the retries: %v dead letters, lowest %v; want 0, 0", n, lo)
	}
}

// countCheck is a query that counts, and the count it must give.
type countCheck struct {
	query string
	want  int64
}

// expectCounts runs each check, reporting failures after prefix.
func expectCounts(t *testing.T, db *bun.DB, prefix string, checks []countCheck) {
	t.Helper()
	for _, c := range checks {
		var got int64
		if err := db.NewRaw(c.query).Scan(context.Background(), &got); err != nil {
			t.Fatalf("%s: %v", c.query, err)
		}
		if got != c.want {
			t.Errorf("%s%s = %d, want %d", prefix, c.query, got, c.want)
		}
	}
}
