package indexer_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chainlens/chainlens/internal/testdb"
)

// TestDatabaseOutageIsSurvived: while a run indexes a recorded localnet,
// every connection it holds is cut from the server's side again and again
// (pg_terminate_backend: what a Postgres restart or failover does to a
// client). The run reconnects, takes its lock again and resumes from the
// checkpoint, and ends with the recording indexed exactly; before, the
// first cut ended it.
func TestDatabaseOutageIsSurvived(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("indexes a recorded chain")
	}
	db, _ := testdb.New(t)
	ln := localnets[0] // osmosis
	srv := replayServer(t, ln.dir)
	cfg := chainConfig(ln, srv.URL)
	cfg.BatchSize = 5
	x := newIndexer(t, db, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	done := make(chan error, 1)
	go func() { done <- x.Run(ctx, ln.blocks) }()
	var cuts atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for cuts.Load() < 5 {
			select {
			case <-stop:
				return
			case <-time.After(40 * time.Millisecond):
			}
			var n int
			if err := db.NewRaw(`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
				WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(context.Background(), &n); err != nil {
				continue // this connection was cut by an earlier round
			}
			if n > 0 {
				cuts.Add(1)
			}
		}
	}()
	err := <-done
	close(stop)
	wg.Wait()
	if err != nil {
		t.Fatalf("the run ended with %v", err)
	}
	if cuts.Load() == 0 {
		t.Fatal("no connection was cut while the run indexed")
	}
	t.Logf("%d cuts", cuts.Load())
	for _, c := range []struct {
		query string
		want  int64
	}{
		{"SELECT count(*) FROM blocks WHERE chain_id = ?", ln.blocks},
		{"SELECT count(DISTINCT height) FROM blocks WHERE chain_id = ?", ln.blocks},
		{"SELECT count(*) FROM txs WHERE chain_id = ?", ln.txs},
		{"SELECT count(*) FROM dead_letters WHERE chain_id = ?", 0},
		{"SELECT next_height FROM sync_state WHERE chain_id = ?", ln.blocks + 1},
	} {
		if got := count(t, db, c.query, ln.chainID); got != c.want {
			t.Errorf("%s = %d, want %d", c.query, got, c.want)
		}
	}
}
