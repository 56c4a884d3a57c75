package api_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/problem"
	"github.com/chainlens/chainlens/internal/testdb"
)

// TestJobHeight: the freshness of a job's answers is what its last run
// recorded; rows recorded before the scheduler kept it fall back to the
// block tables; a job that has aggregated nothing is 503; of several
// jobs, the least advanced counts.
func TestJobHeight(t *testing.T) {
	ctx := context.Background()
	db, _ := testdb.New(t)
	t0 := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	for _, q := range []string{"CREATE TABLE blocks_test PARTITION OF blocks DEFAULT",
		`INSERT INTO blocks (chain_id, height, hash, time, proposer, app_hash, num_txs)
			SELECT 'c1', h, 'h', timestamptz '2026-11-27 00:00:00+00' + h * interval '1 minute', 'p', 'a', 0 FROM generate_series(1, 8) h`,
		`INSERT INTO aggregator_jobs (name, watermark, chain_id, height, block_time) VALUES
			('recorded', 8, 'c1', 5, timestamptz '2026-11-27 00:05:00+00'),
			('before_recording', 7, NULL, NULL, NULL),
			('nothing_yet', 0, NULL, NULL, NULL)`} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		jobs   []string
		height int64 // 0: 503
	}{
		{[]string{"recorded"}, 5},
		{[]string{"before_recording"}, 7},
		{[]string{"nothing_yet"}, 0},
		{[]string{"never_ran"}, 0},
		// An answer read from several jobs' tables is as fresh as the least advanced.
		{[]string{"before_recording", "recorded"}, 5},
		{[]string{"recorded", "before_recording"}, 5},
		{[]string{"recorded", "never_ran"}, 0},
	} {
		t.Run(strings.Join(c.jobs, "+"), func(t *testing.T) {
			h, err := api.JobHeight(ctx, db, "c1", c.jobs...)
			if c.height == 0 {
				if !errors.Is(err, problem.ErrNotIndexed) {
					t.Fatalf("err = %v, want not indexed", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := api.ChainHeight{ChainID: "c1", Height: c.height, Time: t0.Add(time.Duration(c.height) * time.Minute), First: t0.Add(time.Minute)}
			if h != want {
				t.Fatalf("%+v, want %+v", h, want)
			}
		})
	}
}
