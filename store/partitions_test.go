package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/internal/testdb"
	"github.com/chainlens/chainlens/store"
)

// TestDropRawBelow: retention drops a chain's whole raw partitions below
// the bound, by DROP TABLE, and nothing of another chain's at the same
// heights nor anything at or above the bound; what it dropped is recorded.
func TestDropRawBelow(t *testing.T) {
	ctx := context.Background()
	db, _ := testdb.New(t)
	for _, chain := range []string{"a", "b"} {
		if err := store.EnsurePartitions(ctx, db, chain, store.ChainPartitioned, 1, 2_500_000); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{
		`INSERT INTO blocks VALUES ('a', 5, 'h', now(), 'p', 'x', 0), ('a', 1500000, 'h', now(), 'p', 'x', 0), ('a', 2500000, 'h', now(), 'p', 'x', 0), ('b', 5, 'h', now(), 'p', 'x', 0)`,
		`INSERT INTO events VALUES ('a', 5, 0, 0, 0, '', 't', '[]'), ('a', 1500000, 0, 0, 0, '', 't', '[]'), ('a', 2500000, 0, 0, 0, '', 't', '[]'), ('b', 1500000, 0, 0, 0, '', 't', '[]')`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	count := func(table, chain string) int {
		t.Helper()
		var n int
		if err := db.NewRaw("SELECT count(*) FROM ? WHERE chain_id = ?", bun.Ident(table), chain).Scan(ctx, &n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, c := range []struct {
		bound            int64
		dropped          int // partitions
		pruned           int64
		blocksA, eventsA int
		blocksB, eventsB int
	}{
		{999_999, 0, 0, 3, 3, 1, 1},           // p0 still holds 999,999
		{1_999_999, 6, 1_000_000, 2, 2, 1, 1}, // p0 of the six tables
		{2_000_000, 6, 2_000_000, 1, 1, 1, 1}, // then p1
		{1_000_000, 0, 2_000_000, 1, 1, 1, 1}, // a lower bound changes nothing
	} {
		dropped, err := store.DropRawBelow(ctx, db, "a", c.bound)
		if err != nil {
			t.Fatal(err)
		}
		pruned, err := store.PrunedBelow(ctx, db, "a")
		if err != nil {
			t.Fatal(err)
		}
		got := []int{count("blocks", "a"), count("events", "a"), count("blocks", "b"), count("events", "b")}
		want := []int{c.blocksA, c.eventsA, c.blocksB, c.eventsB}
		if len(dropped) != c.dropped || pruned != c.pruned || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
			t.Fatalf("bound %d: dropped %d partitions, pruned below %d, rows %v; want %d, %d, %v", c.bound, len(dropped), pruned, got, c.dropped, c.pruned, want)
		}
	}
	// Chain b's parts are whole.
	parts, err := store.RawPartitions(ctx, db, "b")
	if err != nil || len(parts) != 18 {
		t.Fatalf("chain b partitions: %d (%v), want 18", len(parts), err)
	}
}

// TestEnsurePartitionsBesideAReader: an indexer creating a new chain's
// partitions while a job's transaction reads two raw tables, the second
// after the creation began, does not deadlock (all tables' partitions in
// one transaction did: "deadlock detected" failed one side).
func TestEnsurePartitionsBesideAReader(t *testing.T) {
	ctx := context.Background()
	db, _ := testdb.New(t)
	if err := store.EnsurePartitions(ctx, db, "a", []string{"blocks", "events"}, 1, 10); err != nil {
		t.Fatal(err)
	}
	reader, err := db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Rollback()
	if _, err := reader.ExecContext(ctx, "SELECT count(*) FROM events"); err != nil {
		t.Fatal(err)
	}
	created := make(chan error, 1)
	go func() { created <- store.EnsurePartitions(ctx, db, "b", []string{"blocks", "events"}, 1, 10) }()
	// The creator has the blocks partition and waits for events, which the
	// reader holds; the reader now reads blocks.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var waiting int
		if err := db.NewRaw(`SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation WHERE NOT l.granted AND c.relname = 'events'`).Scan(ctx, &waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the partition creator never waited for the reader")
		}
	}
	if _, err := reader.ExecContext(ctx, "SELECT count(*) FROM blocks"); err != nil {
		t.Fatalf("the reader: %v", err)
	}
	if err := reader.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-created; err != nil {
		t.Fatalf("the partition creator: %v", err)
	}
}
