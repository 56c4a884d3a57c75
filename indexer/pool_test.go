package indexer

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/chainlens/chainlens/chains/cosmos"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/testdb"
	"github.com/chainlens/chainlens/store"
)

// TestTwoConnectionsAreEnough indexes the recorded Osmosis localnet in
// batches of 50 through a pool of two connections: one holds the chain
// lock for the run, so the two batches in flight share the other. The
// second batch starts while the first is held back before taking its
// connection: it must not take it first and then wait for the first batch
// to commit (each would wait for the other for ever).
func TestTwoConnectionsAreEnough(t *testing.T) {
	t.Parallel()
	_, url := testdb.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	db, err := store.Open(ctx, url, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	raws := loadRaw(t, "osmosis", "localosmosis")
	cfg := config.Chain{ID: "localosmosis", Kind: "osmosis", RPC: []string{"http://memory"}, BatchSize: 50, Concurrency: 4,
		PollInterval: config.Duration(time.Millisecond), Bech32Prefix: "osmo"}
	m, _ := NewMetrics(nil)
	x := NewCosmos(cfg, db, memSource{cfg.ID, raws}, cosmos.NewAdapter(cfg.Kind, cfg.Bech32Prefix), slog.New(slog.DiscardHandler), m)
	x.w.beforeConn = func(from int64) {
		if from == 51 {
			time.Sleep(300 * time.Millisecond) // the batch after it is ready meanwhile
		}
	}
	if err := x.Run(ctx, int64(len(raws))); err != nil {
		t.Fatalf("run with two connections: %v", err)
	}
	var n int64
	if err := db.NewRaw("SELECT count(*) FROM blocks").Scan(ctx, &n); err != nil || n != int64(len(raws)) {
		t.Errorf("%d blocks (%v), want %d", n, err, len(raws))
	}
}

// TestLockWaitsForAKilledHolder: the chain lock a process still holds (as
// one just killed does until Postgres notices) is waited for, not refused.
func TestLockWaitsForAKilledHolder(t *testing.T) {
	t.Parallel()
	db, _ := testdb.New(t)
	ctx := context.Background()
	release, err := LockChain(ctx, db, "c-1")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		release()
	}()
	start := time.Now()
	again, err := LockChain(ctx, db, "c-1")
	if err != nil {
		t.Fatalf("lock held for 300 ms: %v", err)
	}
	again()
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Errorf("got the lock after %s while it was held", d)
	}
}
