package aggregator

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/testdb"
)

// counterJob copies numbers past its watermark from src into dst.
type counterJob struct {
	fail    bool
	version string // "1" when empty
	also    string // a table it writes besides dst, undeclared
}

func (counterJob) Name() string { return "counter" }

func (j counterJob) Version() string {
	if j.version == "" {
		return "1"
	}
	return j.version
}

func (counterJob) Tables() Tables { return Tables{Owned: []string{"dst"}} }

func (j counterJob) Run(ctx context.Context, tx bun.Tx, wm, bound int64) (int64, int64, error) {
	res, err := tx.NewRaw("INSERT INTO dst SELECT n FROM src WHERE n > ? ON CONFLICT DO NOTHING", wm).Exec(ctx)
	if err != nil {
		return 0, 0, err
	}
	if j.also != "" {
		if _, err := tx.NewRaw("INSERT INTO ? VALUES (1)", bun.Ident(j.also)).Exec(ctx); err != nil {
			return 0, 0, err
		}
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

// TestRebuilds: a job whose rows were built with another version, or whose
// watermark was reset from outside, has its owned tables cleared and is
// rebuilt from 0 in one run (a stale row disappears); rows built before
// versions existed are adopted as they are.
func TestRebuilds(t *testing.T) {
	for _, c := range []struct {
		name      string
		tamper    string // SQL run after a first run at version 1
		version   string // of the second run
		wantStale bool   // the stale row survives
	}{
		{"same version keeps the rows", "", "1", true},
		{"new version rebuilds", "", "2", false},
		{"watermark reset from outside rebuilds", "UPDATE aggregator_jobs SET watermark = 0", "1", false},
		{"watermark lowered from outside rebuilds", "UPDATE aggregator_jobs SET watermark = 5", "1", false},
		{"rows built before versions are adopted", "UPDATE aggregator_jobs SET version = NULL, built_to = NULL", "2", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			db, _ := testdb.New(t)
			for _, q := range []string{"CREATE TABLE src (n bigint PRIMARY KEY)", "CREATE TABLE dst (n bigint PRIMARY KEY)", "INSERT INTO src SELECT generate_series(1, 10)"} {
				if _, err := db.ExecContext(ctx, q); err != nil {
					t.Fatal(err)
				}
			}
			log := slog.New(slog.DiscardHandler)
			first, _ := New(db, config.Aggregator{}, log, nil, counterJob{})
			if err := first.RunOnce(ctx); err != nil {
				t.Fatal(err)
			}
			// A row the old computation left that the new one would not write.
			if _, err := db.ExecContext(ctx, "INSERT INTO dst VALUES (999)"); err != nil {
				t.Fatal(err)
			}
			if c.tamper != "" {
				if _, err := db.ExecContext(ctx, c.tamper); err != nil {
					t.Fatal(err)
				}
			}
			second, _ := New(db, config.Aggregator{}, log, nil, counterJob{version: c.version})
			if err := second.RunOnce(ctx); err != nil {
				t.Fatal(err)
			}
			var n, stale, wm, builtTo int64
			var version string
			_ = db.NewRaw("SELECT count(*), count(*) FILTER (WHERE n = 999) FROM dst").Scan(ctx, &n, &stale)
			if err := db.NewRaw("SELECT watermark, built_to, version FROM aggregator_jobs WHERE name = 'counter'").Scan(ctx, &wm, &builtTo, &version); err != nil {
				t.Fatal(err)
			}
			wantN := int64(10)
			if c.wantStale {
				wantN = 11
			}
			if (stale == 1) != c.wantStale || n != wantN || wm != 10 || builtTo != 10 || version != c.version {
				t.Fatalf("rows %d (stale %d), watermark %d, built to %d, version %q; want %d rows, stale %v, 10, 10, %q",
					n, stale, wm, builtTo, version, wantN, c.wantStale, c.version)
			}
		})
	}
}

// TestUndeclaredWriteFails: a run that writes a table its Tables do not
// declare fails and commits nothing (a rebuild would not clear it).
func TestUndeclaredWriteFails(t *testing.T) {
	ctx := context.Background()
	db, _ := testdb.New(t)
	for _, q := range []string{"CREATE TABLE src (n bigint PRIMARY KEY)", "CREATE TABLE dst (n bigint PRIMARY KEY)",
		"CREATE TABLE other (n bigint)", "INSERT INTO src SELECT generate_series(1, 10)"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	s, _ := New(db, config.Aggregator{}, slog.New(slog.DiscardHandler), nil, counterJob{also: "other"})
	err := s.RunOnce(ctx)
	if err == nil || !strings.Contains(err.Error(), "job counter wrote other, which its Tables do not declare") {
		t.Fatalf("err = %v", err)
	}
	var n int64
	_ = db.NewRaw("SELECT (SELECT count(*) FROM dst) + (SELECT count(*) FROM other)").Scan(ctx, &n)
	if n != 0 {
		t.Fatalf("%d rows committed", n)
	}
}

// chainJob is counterJob over the rows of one chain.
type chainJob struct{ counterJob }

func (chainJob) Name() string   { return "chain_counter" }
func (chainJob) Tables() Tables { return Tables{Owned: []string{"dst"}, ChainID: "c1"} }

// TestRecordsReach: a run records the last indexed block at or below the
// job's watermark, and its time, for the answers' freshness.
func TestRecordsReach(t *testing.T) {
	ctx := context.Background()
	db, _ := testdb.New(t)
	for _, q := range []string{"CREATE TABLE src (n bigint PRIMARY KEY)", "CREATE TABLE dst (n bigint PRIMARY KEY)", "INSERT INTO src SELECT generate_series(1, 10)",
		"CREATE TABLE blocks_test PARTITION OF blocks DEFAULT",
		// blocks 1..8 of c1 (9 and 10 not indexed yet), and a block of another chain above
		`INSERT INTO blocks (chain_id, height, hash, time, proposer, app_hash, num_txs)
			SELECT 'c1', h, 'h', timestamptz '2026-11-27 00:00:00+00' + h * interval '1 minute', 'p', 'a', 0 FROM generate_series(1, 8) h`,
		`INSERT INTO blocks (chain_id, height, hash, time, proposer, app_hash, num_txs) VALUES ('c2', 9, 'h', now(), 'p', 'a', 0)`} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	s, _ := New(db, config.Aggregator{}, slog.New(slog.DiscardHandler), nil, chainJob{})
	if err := s.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	var got struct {
		Chain  string    `bun:"chain_id"`
		Height int64     `bun:"height"`
		Time   time.Time `bun:"block_time"`
	}
	if err := db.NewRaw("SELECT chain_id, height, block_time FROM aggregator_jobs WHERE name = 'chain_counter'").Scan(ctx, &got); err != nil {
		t.Fatal(err)
	}
	want := time.Date(2026, 11, 27, 0, 8, 0, 0, time.UTC)
	if got.Chain != "c1" || got.Height != 8 || !got.Time.Equal(want) {
		t.Fatalf("recorded %s %d %s, want c1 8 %s", got.Chain, got.Height, got.Time, want)
	}
}

// followerJob copies dst (counterJob's table) into dst2, up to its bound.
type followerJob struct {
	name     string   // "follower" when empty
	upstream []string // counter when nil
}

func (j followerJob) Name() string {
	if j.name == "" {
		return "follower"
	}
	return j.name
}
func (followerJob) Version() string { return "1" }
func (followerJob) Tables() Tables  { return Tables{Owned: []string{"dst2"}} }
func (j followerJob) Upstream() []string {
	if j.upstream == nil {
		return []string{"counter"}
	}
	return j.upstream
}

func (followerJob) Run(ctx context.Context, tx bun.Tx, wm, bound int64) (int64, int64, error) {
	res, err := tx.NewRaw("INSERT INTO dst2 SELECT n FROM dst WHERE n > ? AND n <= ?", wm, bound).Exec(ctx)
	if err != nil {
		return 0, 0, err
	}
	n, _ := res.RowsAffected()
	return max(wm, bound), n, nil
}

// followerTables is a database with counterJob's and followerJob's
// tables, src holding 1 to 10.
func followerTables(t *testing.T) *bun.DB {
	t.Helper()
	db, _ := testdb.New(t)
	for _, q := range []string{"CREATE TABLE src (n bigint PRIMARY KEY)", "CREATE TABLE dst (n bigint PRIMARY KEY)", "CREATE TABLE dst2 (n bigint PRIMARY KEY)",
		"INSERT INTO src SELECT generate_series(1, 10)"} {
		if _, err := db.ExecContext(context.Background(), q); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

// TestFollowers: a job that follows another runs after it, never past
// its watermark, and is rebuilt when it is rebuilt (its rows were made
// from rows that are gone), even when the upstream job catches up again
// in the same round.
func TestFollowers(t *testing.T) {
	ctx := context.Background()
	db := followerTables(t)
	log := slog.New(slog.DiscardHandler)
	state := func() (rows, stale, upWM, wm int64) {
		t.Helper()
		if err := db.NewRaw(`SELECT (SELECT count(*) FROM dst2), (SELECT count(*) FROM dst2 WHERE n = 999),
			(SELECT watermark FROM aggregator_jobs WHERE name = 'counter'), (SELECT watermark FROM aggregator_jobs WHERE name = 'follower')`).
			Scan(ctx, &rows, &stale, &upWM, &wm); err != nil {
			t.Fatal(err)
		}
		return
	}
	steps := []struct {
		name     string
		setup    string
		upstream counterJob
		want     [4]int64 // dst2 rows, stale rows, counter's and follower's watermarks
	}{
		// Registered before the job it follows, it still runs after it.
		{"runs after the job it follows", "", counterJob{}, [4]int64{10, 0, 10, 10}},
		// The upstream job fails: the follower stays at its watermark.
		{"never past the job it follows", "INSERT INTO src SELECT generate_series(11, 15); INSERT INTO dst2 VALUES (999)", counterJob{fail: true}, [4]int64{11, 1, 10, 10}},
		{"follows it on", "", counterJob{}, [4]int64{16, 1, 15, 15}},
		// The upstream job's new version rebuilds it, and so the follower.
		{"rebuilt after the job it follows", "", counterJob{version: "2"}, [4]int64{15, 0, 15, 15}},
	}
	for _, c := range steps {
		if c.setup != "" {
			if _, err := db.ExecContext(ctx, c.setup); err != nil {
				t.Fatal(err)
			}
		}
		s, err := New(db, config.Aggregator{}, log, nil, followerJob{}, c.upstream)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Jobs(); strings.Join(got, " ") != "counter follower" {
			t.Fatalf("%s: order %v", c.name, got)
		}
		_ = s.RunOnce(ctx)
		if rows, stale, upWM, wm := state(); [4]int64{rows, stale, upWM, wm} != c.want {
			t.Fatalf("%s: dst2 rows %d (stale %d), watermarks %d and %d; want %v", c.name, rows, stale, upWM, wm, c.want)
		}
	}
}

// TestScheduledFollowersKeepUp: on its schedule, a follower runs after the
// job it follows in the same round, up to where that job just got: after
// the first round both stand at the source's end (started side by side,
// the follower used to stay at 0, then rebuild).
func TestScheduledFollowersKeepUp(t *testing.T) {
	ctx := context.Background()
	db := followerTables(t)
	s, err := New(db, config.Aggregator{Schedule: "@every 1s"}, slog.New(slog.DiscardHandler), nil, followerJob{}, counterJob{})
	if err != nil {
		t.Fatal(err)
	}
	runCtx, cancel := context.WithTimeout(ctx, 1500*time.Millisecond) // one round, at 1 s
	defer cancel()
	if err := s.Run(runCtx); err != nil {
		t.Fatal(err)
	}
	var upWM, wm, rows int64
	if err := db.NewRaw(`SELECT (SELECT watermark FROM aggregator_jobs WHERE name = 'counter'),
		(SELECT watermark FROM aggregator_jobs WHERE name = 'follower'), (SELECT count(*) FROM dst2)`).Scan(ctx, &upWM, &wm, &rows); err != nil {
		t.Fatal(err)
	}
	if upWM != 10 || wm != 10 || rows != 10 {
		t.Errorf("after one round: counter at %d, follower at %d with %d rows; want both at 10, 10 rows", upWM, wm, rows)
	}
}

// TestFollowersRefused: a job that follows an unregistered job, or jobs
// that follow each other, could never advance: New refuses them.
func TestFollowersRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		jobs []Job
		want string
	}{
		{"unregistered upstream", []Job{followerJob{}}, "aggregator: job follower follows counter, which is not registered"},
		{"cycle", []Job{followerJob{name: "a", upstream: []string{"b"}}, followerJob{name: "b", upstream: []string{"a"}}},
			"aggregator: jobs follow each other in a cycle: a → b → a"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := New(nil, config.Aggregator{}, slog.New(slog.DiscardHandler), nil, c.jobs...)
			if err == nil || err.Error() != c.want {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}

// TestLargeRunsAnalyzeTheirTables: a run that writes many rows for its
// table's size leaves the table's statistics fresh (reltuples counts the
// rows), whatever autovacuum does; a small run on top does not analyze.
func TestLargeRunsAnalyzeTheirTables(t *testing.T) {
	ctx := context.Background()
	db, _ := testdb.New(t)
	for _, q := range []string{"CREATE TABLE src (n bigint PRIMARY KEY)", "CREATE TABLE dst (n bigint PRIMARY KEY)",
		"ALTER TABLE dst SET (autovacuum_enabled = false)", "INSERT INTO src SELECT generate_series(1, 5000)"} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	s, err := New(db, config.Aggregator{Schedule: "@every 1s"}, slog.New(slog.DiscardHandler), nil, counterJob{})
	if err != nil {
		t.Fatal(err)
	}
	tuples := func() float64 {
		var n float64
		if err := db.NewRaw("SELECT reltuples FROM pg_class WHERE relname = 'dst'").Scan(ctx, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := tuples(); n >= 0 {
		t.Fatalf("reltuples %v before any run, want -1 (never analyzed)", n)
	}
	if err := s.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if n := tuples(); n != 5000 {
		t.Fatalf("reltuples %v after a run of 5,000 rows, want 5000", n)
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO src SELECT generate_series(5001, 5100)"); err != nil {
		t.Fatal(err)
	}
	if err := s.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if n := tuples(); n != 5000 {
		t.Fatalf("reltuples %v after a run of 100 rows, want 5000 (not analyzed again)", n)
	}
}

// TestRunOnly: only the named jobs run, each bounded by where the jobs it
// follows stand; an unknown name runs nothing.
func TestRunOnly(t *testing.T) {
	ctx := context.Background()
	db := followerTables(t)
	s, err := New(db, config.Aggregator{}, slog.New(slog.DiscardHandler), nil, followerJob{}, counterJob{})
	if err != nil {
		t.Fatal(err)
	}
	watermarks := func() (up, follower int64) {
		t.Helper()
		if err := db.NewRaw(`SELECT coalesce((SELECT watermark FROM aggregator_jobs WHERE name = 'counter'), -1),
			coalesce((SELECT watermark FROM aggregator_jobs WHERE name = 'follower'), -1)`).Scan(ctx, &up, &follower); err != nil {
			t.Fatal(err)
		}
		return
	}
	steps := []struct {
		names        []string
		err          string
		up, follower int64 // -1: never ran
	}{
		{[]string{"follower", "nope"}, "no such job: nope (jobs: counter, follower)", -1, -1},
		{[]string{"follower"}, "", -1, 0},
		{[]string{"counter"}, "", 10, 0},
		{[]string{"follower"}, "", 10, 10},
	}
	for i, st := range steps {
		err := s.RunOnly(ctx, st.names...)
		if (err == nil) != (st.err == "") || (err != nil && err.Error() != st.err) {
			t.Fatalf("step %d: RunOnly(%v) = %v, want %q", i, st.names, err, st.err)
		}
		if up, f := watermarks(); up != st.up || f != st.follower {
			t.Fatalf("step %d: watermarks %d and %d, want %d and %d", i, up, f, st.up, st.follower)
		}
	}
}
