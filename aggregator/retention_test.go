package aggregator

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/testdb"
	"github.com/chainlens/chainlens/store"
)

// rawJob reads chain c's raw tables and advances to the watermark given.
type rawJob struct{ to int64 }

func (rawJob) Name() string         { return "raw_reader" }
func (rawJob) Version() string      { return "1" }
func (rawJob) Tables() Tables       { return Tables{Owned: []string{"raw_dst"}, ChainID: "c"} }
func (rawJob) RawInputs() RawInputs { return RawInputs{ChainID: "c", Events: []string{"t"}} }
func (j rawJob) Run(_ context.Context, _ bun.Tx, wm, _ int64) (int64, int64, error) {
	return max(wm, j.to), 0, nil
}

// TestRetention: what a chain's setting keeps (by heights, by age, both:
// whichever keeps more), never what a job reading its raw tables has not
// read; whole partitions only; and a job that would start below what is
// kept refuses to run.
func TestRetention(t *testing.T) {
	ctx := context.Background()
	db, _ := testdb.New(t)
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	if err := store.EnsurePartitions(ctx, db, "c", store.ChainPartitioned, 0, 2_600_000); err != nil {
		t.Fatal(err)
	}
	for _, b := range []struct {
		h   int64
		age time.Duration
	}{{5, 100 * 24 * time.Hour}, {1_500_000, 40 * 24 * time.Hour}, {2_500_000, 24 * time.Hour}} {
		if _, err := db.ExecContext(ctx, "INSERT INTO blocks VALUES ('c', ?, 'h', ?, 'p', 'x', 0)", b.h, now.Add(-b.age)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE raw_dst (chain_id text)"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO sync_state (chain_id, kind, next_height) VALUES ('c', 'cosmos', 2600000)"); err != nil {
		t.Fatal(err)
	}
	setJob := func(wm int64) {
		t.Helper()
		if _, err := db.ExecContext(ctx, `INSERT INTO aggregator_jobs (name, watermark, version, built_to) VALUES ('raw_reader', ?0, '1', ?0)
			ON CONFLICT (name) DO UPDATE SET watermark = ?0, built_to = ?0`, wm); err != nil {
			t.Fatal(err)
		}
	}
	day := 24 * time.Hour
	for _, c := range []struct {
		name      string
		keep      config.Retention
		job       int64 // the raw reader's watermark
		bound     int64
		heldBy    string
		droppable int // partitions of the six raw tables
	}{
		{"a million heights", config.Retention{KeepHeights: 1_000_000}, 2_550_000, 1_600_000, "", 6},
		{"30 days", config.Retention{KeepFor: config.Duration(30 * day)}, 2_550_000, 1_500_001, "", 6},
		{"90 days", config.Retention{KeepFor: config.Duration(90 * day)}, 2_550_000, 6, "", 0},
		{"both: whichever keeps more", config.Retention{KeepHeights: 100, KeepFor: config.Duration(90 * day)}, 2_550_000, 6, "", 0},
		{"held by a job that has not read", config.Retention{KeepHeights: 100}, 500, 501, "raw_reader", 0},
		{"100 heights, the job read up to 2,550,000", config.Retention{KeepHeights: 100}, 2_550_000, 2_550_001, "raw_reader", 12},
	} {
		t.Run(c.name, func(t *testing.T) {
			setJob(c.job)
			ch := config.Chain{ID: "c", Kind: "cosmos", Retention: &c.keep}
			got, err := Retain(ctx, db, []config.Chain{ch}, []Job{rawJob{}}, now, true)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0].Bound != c.bound || got[0].HeldBy != c.heldBy || len(got[0].Droppable) != c.droppable || len(got[0].Dropped) != 0 {
				t.Fatalf("%+v; want bound %d held by %q, %d droppable, none dropped (dry run)", got, c.bound, c.heldBy, c.droppable)
			}
		})
	}

	// Dropped for real: p0 and p1 of the six tables.
	setJob(2_550_000)
	keep := config.Retention{KeepHeights: 600_000}
	got, err := Retain(ctx, db, []config.Chain{{ID: "c", Kind: "cosmos", Retention: &keep}}, []Job{rawJob{}}, now, false)
	if err != nil || len(got[0].Dropped) != 12 {
		t.Fatalf("%+v %v; want 12 partitions dropped", got, err)
	}
	var n int
	if err := db.NewRaw("SELECT count(*) FROM blocks WHERE chain_id = 'c'").Scan(ctx, &n); err != nil || n != 1 {
		t.Fatalf("blocks left %d (%v), want 1", n, err)
	}

	// The raw reader rebuilt from 0 would read what is gone: it refuses.
	s, err := New(db, config.Aggregator{}, slog.New(slog.DiscardHandler), nil, rawJob{to: 2_600_000})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "UPDATE aggregator_jobs SET version = 'old' WHERE name = 'raw_reader'"); err != nil {
		t.Fatal(err)
	}
	if err := s.RunOnce(ctx); !errors.Is(err, ErrRawPruned) {
		t.Fatalf("a rebuild over pruned raw rows: %v, want ErrRawPruned", err)
	}
	// At or above what is kept it runs.
	setJob(2_000_000)
	if _, err := db.ExecContext(ctx, "UPDATE aggregator_jobs SET version = '1' WHERE name = 'raw_reader'"); err != nil {
		t.Fatal(err)
	}
	if err := s.RunOnce(ctx); err != nil {
		t.Fatalf("a run from the kept heights: %v", err)
	}
}
