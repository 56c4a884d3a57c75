package indexer

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/chainlens/chainlens/chains/cosmos"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/testdb"
	"github.com/chainlens/chainlens/store"
	"github.com/uptrace/bun"
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
	_, release, err := LockChain(ctx, db, "c-1")
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		release()
	}()
	start := time.Now()
	_, again, err := LockChain(ctx, db, "c-1")
	if err != nil {
		t.Fatalf("lock held for 300 ms: %v", err)
	}
	again()
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Errorf("got the lock after %s while it was held", d)
	}
}

// TestALostLockStopsTheCheckpoint: once the session holding a chain's lock
// is gone (a failover to a replica takes the old primary's locks with it,
// unnoticed by a session idle then), the checkpoint does not move under
// the lock's context, with an error the run loop treats as an outage (it
// takes the lock again and resumes); under a held lock it moves.
func TestALostLockStopsTheCheckpoint(t *testing.T) {
	t.Parallel()
	db, _ := testdb.New(t)
	ctx := context.Background()
	advance := func(ctx context.Context, from int64) error {
		return db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			return AdvanceCheckpoint(ctx, tx, Advance{ChainID: "c-1", Kind: "osmosis", From: from, To: from + 9, Tip: 100})
		})
	}
	if _, err := db.ExecContext(ctx, "INSERT INTO sync_state (chain_id, kind, next_height) VALUES ('c-1', 'osmosis', 1)"); err != nil {
		t.Fatal(err)
	}
	locked, release, err := LockChain(ctx, db, "c-1")
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if err := advance(locked, 1); err != nil {
		t.Fatalf("under the held lock: %v", err)
	}
	// The lock's session ends as a failover ends it (pg_terminate_backend
	// only signals it: wait until its locks are gone).
	const held = `FROM pg_locks WHERE locktype = 'advisory' AND objid = hashtext('c-1')::oid AND objsubid = 2
		AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`
	if _, err := db.ExecContext(ctx, "SELECT pg_terminate_backend(pid) "+held); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var n int
		if err := db.NewRaw("SELECT count(*) "+held).Scan(ctx, &n); err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the lock's session did not end")
		}
	}
	err = advance(locked, 11)
	if !errors.Is(err, store.ErrLockLost) || !store.Unavailable(err) {
		t.Fatalf("with the lock lost: %v, want store.ErrLockLost (an outage)", err)
	}
	var next int64
	if err := db.NewRaw("SELECT next_height FROM sync_state WHERE chain_id = 'c-1'").Scan(ctx, &next); err != nil || next != 11 {
		t.Fatalf("checkpoint at %d (%v), want 11: nothing moved without the lock", next, err)
	}
	// Without a lock in the context (a writer that takes none), as before.
	if err := advance(ctx, 11); err != nil {
		t.Fatal(err)
	}
}
