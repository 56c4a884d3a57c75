package indexer_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/chains/cosmos"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/devchain/replaynode"
	"github.com/chainlens/chainlens/indexer"
	"github.com/chainlens/chainlens/indexer/cometbft"
	"github.com/chainlens/chainlens/internal/testdb"
)

// localnet describes a recorded localnet and the exact counts its README gives.
type localnet struct {
	dir, chainID, kind, prefix string
	blocks, txs, failed        int64
	undecodable                int64
}

var localnets = []localnet{
	{"osmosis", "localosmosis", "osmosis", "osmo", 299, 395, 6, 0},
	{"dydx", "localdydxprotocol", "dydx", "dydx", 520, 2621, -1, 519},
	{"neutron", "localneutron", "neutron", "neutron", 193, 148, 14, 0},
	{"xion", "localxion", "xion", "xion", 141, 84, 6, 0},
	{"cosmoshub", "localcosmos", "cosmoshub", "cosmos", 169, 148, 13, 0},
}

func replayServer(t testing.TB, dir string) *httptest.Server {
	t.Helper()
	rec, err := replaynode.Load(filepath.Join("..", "testdata", "localnet", dir))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(replaynode.New(rec, replaynode.Options{}).Handler())
	t.Cleanup(srv.Close)
	return srv
}

func chainConfig(ln localnet, rpc string) config.Chain {
	return config.Chain{ID: ln.chainID, Kind: ln.kind, RPC: []string{rpc}, BatchSize: 20, Concurrency: 4,
		PollInterval: config.Duration(50 * time.Millisecond), Bech32Prefix: ln.prefix}
}

func newIndexer(t testing.TB, db *bun.DB, cfg config.Chain) *indexer.Cosmos {
	t.Helper()
	client, err := cometbft.New(cfg.RPC, cometbft.Retry{Base: 10 * time.Millisecond, Max: 100 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := indexer.NewMetrics(nil)
	return indexer.NewCosmos(cfg, db, indexer.NewClientSource(client), cosmos.NewAdapter(cfg.Kind, cfg.Bech32Prefix), slog.New(slog.DiscardHandler), m)
}

func count(t testing.TB, db *bun.DB, query string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.NewRaw(query, args...).Scan(context.Background(), &n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

func TestIndexRecordedLocalnets(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("indexes five recorded chains")
	}
	db, _ := testdb.New(t)
	for _, ln := range localnets {
		t.Run(ln.dir, func(t *testing.T) {
			srv := replayServer(t, ln.dir)
			x := newIndexer(t, db, chainConfig(ln, srv.URL))
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if err := x.Run(ctx, ln.blocks); err != nil {
				t.Fatal(err)
			}
			checks := []struct {
				name  string
				query string
				want  int64
			}{
				{"blocks", "SELECT count(*) FROM blocks WHERE chain_id = ?", ln.blocks},
				{"distinct heights", "SELECT count(DISTINCT height) FROM blocks WHERE chain_id = ?", ln.blocks},
				{"txs", "SELECT count(*) FROM txs WHERE chain_id = ?", ln.txs},
				{"num_txs agrees", "SELECT coalesce(sum(num_txs), 0) FROM blocks WHERE chain_id = ?", ln.txs},
				{"undecodable", "SELECT count(*) FROM txs WHERE chain_id = ? AND undecodable", ln.undecodable},
				{"dead letters", "SELECT count(*) FROM dead_letters WHERE chain_id = ?", 0},
				{"checkpoint", "SELECT next_height FROM sync_state WHERE chain_id = ?", ln.blocks + 1},
			}
			if ln.failed >= 0 {
				checks = append(checks, struct {
					name  string
					query string
					want  int64
				}{"failed txs", "SELECT count(*) FROM txs WHERE chain_id = ? AND code <> 0", ln.failed})
			}
			for _, c := range checks {
				if got := count(t, db, c.query, ln.chainID); got != c.want {
					t.Errorf("%s = %d, want %d", c.name, got, c.want)
				}
			}
		})
	}
}

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(runChild())
	}
	os.Exit(m.Run())
}

// TestReindexRewritesExactly indexes the recorded Osmosis localnet, damages
// rows, and reindexes by range and by message type: the rows come back
// exactly and the checkpoint does not move.
func TestReindexRewritesExactly(t *testing.T) {
	t.Parallel()
	db, _ := testdb.New(t)
	ln := localnets[0]
	srv := replayServer(t, ln.dir)
	x := newIndexer(t, db, chainConfig(ln, srv.URL))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := x.Run(ctx, ln.blocks); err != nil {
		t.Fatal(err)
	}
	before := count(t, db, "SELECT count(*) FROM events")
	if _, err := db.ExecContext(ctx, "DELETE FROM events WHERE height BETWEEN 20 AND 40"); err != nil {
		t.Fatal(err)
	}
	hs := []int64{}
	for h := int64(20); h <= 40; h++ {
		hs = append(hs, h)
	}
	if err := x.Reindex(ctx, hs); err != nil {
		t.Fatal(err)
	}
	if got := count(t, db, "SELECT count(*) FROM events"); got != before {
		t.Fatalf("events after reindex %d, want %d", got, before)
	}

	swaps, err := x.HeightsWithMessage(ctx, "/osmosis.poolmanager.v1beta1.MsgSwapExactAmountIn")
	if err != nil || len(swaps) == 0 {
		t.Fatalf("heights with swaps: %v %v", swaps, err)
	}
	txsBefore := count(t, db, "SELECT count(*) FROM txs")
	if _, err := db.ExecContext(ctx, "DELETE FROM txs WHERE height = ?", swaps[0]); err != nil {
		t.Fatal(err)
	}
	if err := x.Reindex(ctx, swaps); err != nil {
		t.Fatal(err)
	}
	if got := count(t, db, "SELECT count(*) FROM txs"); got != txsBefore {
		t.Fatalf("txs after reindex %d, want %d", got, txsBefore)
	}
	if got := count(t, db, "SELECT next_height FROM sync_state"); got != ln.blocks+1 {
		t.Fatalf("checkpoint moved to %d", got)
	}
	if err := x.Reindex(ctx, []int64{ln.blocks + 1}); err == nil {
		t.Fatal("reindexing a height above the checkpoint must fail")
	}
}

// TestDifferentHistoryIsRefused indexes one recorded chain, then points the
// same chain id at another chain's node: the indexer must refuse rather
// than mix two histories, and index again after a reset.
func TestDifferentHistoryIsRefused(t *testing.T) {
	t.Parallel()
	db, _ := testdb.New(t)
	osmo := localnets[0]
	cfg := chainConfig(osmo, replayServer(t, osmo.dir).URL)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := newIndexer(t, db, cfg).Run(ctx, 30); err != nil {
		t.Fatal(err)
	}
	// The neutron recording under the Osmosis chain id: same heights, other blocks.
	other := replayServer(t, "neutron")
	cfg.RPC = []string{other.URL}
	cfg.ID = osmo.chainID
	x := newIndexer(t, db, cfg)
	err := x.Run(ctx, 40)
	if !errors.Is(err, indexer.ErrDifferentHistory) {
		t.Fatalf("err = %v, want ErrDifferentHistory", err)
	}
	if err := indexer.ResetChain(ctx, db, osmo.chainID, cosmos.NewAdapter("osmosis", "osmo").Tables()); err != nil {
		t.Fatal(err)
	}
	if n := count(t, db, "SELECT count(*) FROM blocks WHERE chain_id = ?", osmo.chainID); n != 0 {
		t.Fatalf("%d blocks left after reset", n)
	}
}

// TestFailedBatchTakesTheNextOneDown makes one batch fail while the batch
// after it is being written concurrently (the catch-up writes two batches
// at once): neither may commit, the checkpoint stays before the failed
// batch, and the next run indexes every height exactly once.
func TestFailedBatchTakesTheNextOneDown(t *testing.T) {
	t.Parallel()
	db, _ := testdb.New(t)
	ln := localnets[0]
	srv := replayServer(t, ln.dir)
	cfg := chainConfig(ln, srv.URL)
	cfg.BatchSize = 50
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Height 120 fails its batch (101..150) after a pause that lets the
	// batch 151..200 be written meanwhile.
	if _, err := db.ExecContext(ctx, `CREATE FUNCTION fail_height_120() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF NEW.height = 120 THEN
				PERFORM pg_sleep(1);
				RAISE EXCEPTION 'injected failure at height 120';
			END IF;
			RETURN NEW;
		END $$;
		CREATE TRIGGER fail_height_120 BEFORE INSERT ON blocks FOR EACH ROW EXECUTE FUNCTION fail_height_120();`); err != nil {
		t.Fatal(err)
	}
	err := newIndexer(t, db, cfg).Run(ctx, ln.blocks)
	if err == nil || !strings.Contains(err.Error(), "injected failure at height 120") {
		t.Fatalf("run: %v, want the injected failure", err)
	}
	// The failed batch holds 120 and at most 50 heights; where it starts
	// depends on how the fetches arrived (a batch is cut short when many
	// heights wait), so the checkpoint is somewhere in 71..120, and every
	// height before it, and none from it on, is committed.
	next := count(t, db, "SELECT next_height FROM sync_state")
	if next < 120-int64(cfg.BatchSize)+1 || next > 120 {
		t.Fatalf("after the failure, next height %d; want the start of the batch holding 120 (71..120)", next)
	}
	for _, c := range []struct {
		query string
		want  int64
	}{
		{"SELECT count(*) FROM blocks WHERE height < ?", next - 1},
		{"SELECT count(*) FROM blocks WHERE height >= ?", 0},
		{"SELECT count(*) FROM events WHERE height >= ?", 0},
	} {
		if got := count(t, db, c.query, next); got != c.want {
			t.Errorf("after the failure (next height %d), %s = %d, want %d", next, c.query, got, c.want)
		}
	}

	if _, err := db.ExecContext(ctx, "DROP TRIGGER fail_height_120 ON blocks"); err != nil {
		t.Fatal(err)
	}
	if err := newIndexer(t, db, cfg).Run(ctx, ln.blocks); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		query string
		want  int64
	}{
		{"SELECT next_height FROM sync_state", ln.blocks + 1},
		{"SELECT count(*) FROM blocks", ln.blocks},
		{"SELECT count(DISTINCT height) FROM blocks", ln.blocks},
		{"SELECT count(*) FROM txs", ln.txs},
	} {
		if got := count(t, db, c.query); got != c.want {
			t.Errorf("after the rerun, %s = %d, want %d", c.query, got, c.want)
		}
	}
}
