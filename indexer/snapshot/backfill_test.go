package snapshot_test

import (
	"context"
	"fmt"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/chains/cosmos"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/indexer"
	"github.com/chainlens/chainlens/indexer/snapshot"
	"github.com/chainlens/chainlens/internal/testdb"
	"github.com/chainlens/chainlens/store/snapshots"
)

// prunedBelow is the devnet's node as a pruned node would answer: state
// queries below a height are refused with cosmos-sdk's own message.
type prunedBelow struct {
	q     snapshot.Querier
	below int64
}

func (p prunedBelow) ABCIQuery(ctx context.Context, path string, data []byte, height int64) ([]byte, error) {
	if height < p.below {
		return nil, fmt.Errorf("cometbft abci_query %s at %d: code 38: failed to load state at height %d; version does not exist (latest height: %d): not found",
			path, height, height, p.below+100)
	}
	return p.q.ABCIQuery(ctx, path, data, height)
}

// TestBackfillSnapshotsOnDevnet: `index --until` with snapshot_every takes
// the snapshot of every multiple it indexes while it indexes, the same
// snapshots the live snapshotter takes of those heights; on a node that
// has pruned the state of the first heights, they start at the first
// height it serves.
func TestBackfillSnapshotsOnDevnet(t *testing.T) {
	t.Parallel()
	n, client := startNet(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	const every, until = 10, 64
	if err := n.WaitForHeight(ctx, until+1); err != nil { // the state at until is served once until+1 exists
		t.Fatal(err)
	}
	cfg := config.Chain{ID: n.ChainID(), Kind: "cosmos", RPC: []string{n.RPCURL()}, BatchSize: 10, Concurrency: 4,
		PollInterval: config.Duration(20 * time.Millisecond), Bech32Prefix: n.Bech32Prefix(), StartHeight: 1, SnapshotEvery: every}
	m, _ := indexer.NewMetrics(nil)
	log := slog.New(slog.NewTextHandler(t.Output(), nil))

	// backfill indexes through until with snapshots taken alongside, as
	// `index --until` does, querying q.
	backfill := func(q snapshot.Querier) *bun.DB {
		db, _ := testdb.New(t)
		x := indexer.NewCosmos(cfg, db, indexer.NewClientSource(client), cosmos.NewAdapter(cfg.Kind, cfg.Bech32Prefix), slog.New(slog.DiscardHandler), m)
		s := snapshot.NewSnapshotter(db, q, cfg, log)
		indexed := make(chan error, 1)
		done := make(chan error, 1)
		go func() { done <- s.RunBackfill(ctx, indexed) }()
		err := x.Run(ctx, until)
		indexed <- err
		if err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		return db
	}
	rows := func(db *bun.DB) []string {
		t.Helper()
		var out []string
		if err := db.NewRaw(`SELECT concat_ws(' ', height, time, kind, key, denom, amount, data) FROM state_snapshots
			WHERE chain_id = ? ORDER BY height, kind, key, denom`, n.ChainID()).Scan(ctx, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	heights := func(db *bun.DB) []int64 {
		t.Helper()
		var hs []int64
		if err := db.NewRaw("SELECT DISTINCT height FROM state_snapshots WHERE chain_id = ? ORDER BY height", n.ChainID()).Scan(ctx, &hs); err != nil {
			t.Fatal(err)
		}
		return hs
	}

	archive := backfill(client)
	if hs := heights(archive); !reflect.DeepEqual(hs, []int64{10, 20, 30, 40, 50, 60}) {
		t.Fatalf("backfill snapshot heights %v", hs)
	}

	// The live snapshotter, polling after the same heights are indexed.
	live, _ := testdb.New(t)
	x := indexer.NewCosmos(cfg, live, indexer.NewClientSource(client), cosmos.NewAdapter(cfg.Kind, cfg.Bech32Prefix), slog.New(slog.DiscardHandler), m)
	s := snapshot.NewSnapshotter(live, client, cfg, log)
	s.MaxPending = 100
	for h := int64(every); h <= until; h += every {
		if err := x.Run(ctx, h); err != nil {
			t.Fatal(err)
		}
		if got, err := s.Poll(ctx); err != nil || !reflect.DeepEqual(got, []int64{h}) {
			t.Fatalf("live poll at %d: %v, %v", h, got, err)
		}
	}
	if a, l := rows(archive), rows(live); !reflect.DeepEqual(a, l) {
		t.Fatalf("backfill snapshots differ from live ones:\n%v\n%v", a, l)
	}

	pruned := backfill(prunedBelow{client, 35})
	if hs := heights(pruned); !reflect.DeepEqual(hs, []int64{40, 50, 60}) {
		t.Fatalf("snapshot heights on a node pruned below 35: %v, want 40, 50, 60", hs)
	}
	if first, last, err := snapshotsRange(ctx, pruned, n.ChainID()); err != nil || first != 40 || last != 60 {
		t.Fatalf("range %d..%d (%v)", first, last, err)
	}
}

func snapshotsRange(ctx context.Context, db *bun.DB, chainID string) (int64, int64, error) {
	return snapshots.Range(ctx, db, chainID)
}
