package aggregator

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/testdb"
)

// counterJob copies numbers past its watermark from src into dst.
type counterJob struct{ fail bool }

func (counterJob) Name() string { return "counter" }

func (j counterJob) Run(ctx context.Context, tx bun.Tx, wm int64) (int64, int64, error) {
	res, err := tx.NewRaw("INSERT INTO dst SELECT n FROM src WHERE n > ? ON CONFLICT DO NOTHING", wm).Exec(ctx)
	if err != nil {
		return 0, 0, err
	}
	if j.fail {
		return 0, 0, errors.New("boom")
	}
	n, _ := res.RowsAffected()
	var max int64
	if err := tx.NewRaw("SELECT coalesce(max(n), 0) FROM src").Scan(ctx, &max); err != nil {
		return 0, 0, err
	}
	return max, n, nil
}

func TestRunOnceAdvancesWatermarkAtomically(t *testing.T) {
	ctx := context.Background()
	db, _ := testdb.New(t)
	for _, q := range []string{"CREATE TABLE src (n bigint PRIMARY KEY)", "CREATE TABLE dst (n bigint PRIMARY KEY)", "INSERT INTO src SELECT generate_series(1, 10)"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	log := slog.New(slog.DiscardHandler)
	cfg := config.Aggregator{Schedule: "@every 1s"}

	failing, err := New(db, cfg, log, nil, counterJob{fail: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := failing.RunOnce(ctx); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Fatalf("err = %v", err)
	}
	var n, wm int64
	var lastErr string
	_ = db.NewRaw("SELECT count(*) FROM dst").Scan(ctx, &n)
	_ = db.NewRaw("SELECT watermark, last_error FROM aggregator_jobs WHERE name = 'counter'").Scan(ctx, &wm, &lastErr)
	if n != 0 || wm != 0 || lastErr != "boom" {
		t.Fatalf("after failure: rows %d, watermark %d, error %q; want 0, 0, boom", n, wm, lastErr)
	}

	s, _ := New(db, cfg, log, nil, counterJob{})
	for range 2 { // the second run finds nothing new
		if err := s.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var rows int64
	_ = db.NewRaw("SELECT count(*) FROM dst").Scan(ctx, &n)
	_ = db.NewRaw("SELECT watermark, last_rows FROM aggregator_jobs WHERE name = 'counter'").Scan(ctx, &wm, &rows)
	if n != 10 || wm != 10 || rows != 0 {
		t.Fatalf("rows %d, watermark %d, last rows %d; want 10, 10, 0", n, wm, rows)
	}

	if _, err := New(db, config.Aggregator{Schedule: "@every 1s", Jobs: map[string]string{"nope": "@hourly"}}, log, nil, counterJob{}); err == nil {
		t.Fatal("a schedule for an unknown job must be refused")
	}
}
