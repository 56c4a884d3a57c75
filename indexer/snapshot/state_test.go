package snapshot_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"reflect"
	"testing"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/chains/dydx"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/indexer/snapshot"
	"github.com/chainlens/chainlens/internal/dydxtest"
	"github.com/chainlens/chainlens/internal/testdb"
)

// A market listed after genesis reaches the catalog through the state
// snapshot: the recorded dYdX localnet is indexed, the node's recorded
// catalog at its last height gains one listing, and the snapshot at that
// height adds exactly its rows (in pages of 10: four pages of
// perpetuals); the unchanged markets add none, and taking the snapshot
// again adds nothing.
func TestSnapshotFollowsTheDydxCatalog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, cfg, q := indexedCatalog(t)
	q.Perpetuals = append(q.Perpetuals, dydxtest.Perpetual(302, "NEW-USD", 302, -7, 150, 1, 2))
	q.MarketParams = append(q.MarketParams, dydxtest.MarketParam(302, "NEW-USD"))
	q.MarketPrices = append(q.MarketPrices, dydxtest.MarketPrice(302, -8, 123456789))

	type catalog struct {
		Perpetual        int64  `bun:"perpetual_id"`
		Height           int64  `bun:"height"`
		Ticker           string `bun:"ticker"`
		AtomicResolution int64  `bun:"atomic_resolution"`
		MarketType       int64  `bun:"market_type"`
		Pair             string `bun:"pair"`
		Exponent         int64  `bun:"exponent"`
	}
	// The catalog as the API reads it: the newest row of each perpetual
	// and market (api/perp).
	read := func() []catalog {
		t.Helper()
		var out []catalog
		if err := db.NewRaw(`SELECT p.perpetual_id, p.height, p.ticker, p.atomic_resolution, p.market_type, m.pair, m.exponent
			FROM (SELECT DISTINCT ON (perpetual_id) * FROM dydx_perpetuals WHERE chain_id = ? ORDER BY perpetual_id, height DESC) p
			JOIN (SELECT DISTINCT ON (market_id) * FROM dydx_markets WHERE chain_id = ? ORDER BY market_id, height DESC) m ON m.market_id = p.market_id
			ORDER BY p.perpetual_id`, cfg.ID, cfg.ID).Scan(ctx, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if got := read(); len(got) != 36 {
		t.Fatalf("before the snapshot: %d perpetuals, want the 36 of genesis", len(got))
	}

	cfg.SnapshotEvery = dydxtest.LastHeight
	s := snapshot.NewSnapshotter(db, q, cfg, slog.New(slog.DiscardHandler))
	s.State = dydx.NewAdapter("dydx")
	taken, err := s.Poll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(taken, []int64{dydxtest.LastHeight}) {
		t.Fatalf("took %v", taken)
	}
	got := read()
	if len(got) != 37 {
		t.Fatalf("after the snapshot: %d perpetuals, want 37", len(got))
	}
	want := catalog{302, dydxtest.LastHeight, "NEW-USD", -7, 2, "NEW-USD", -8}
	if got[36] != want {
		t.Errorf("the new listing: %+v, want %+v", got[36], want)
	}
	if got[0] != (catalog{0, 0, "BTC-USD", -10, 1, "BTC-USD", -5}) {
		t.Errorf("BTC-USD: %+v (a genesis row, unchanged)", got[0])
	}
	count := func(table string) int {
		n, err := db.NewSelect().TableExpr(table).Where("chain_id = ? AND height = ?", cfg.ID, dydxtest.LastHeight).Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if p, m, f := count("dydx_perpetuals"), count("dydx_markets"), count("dydx_funding_params"); p != 1 || m != 1 || f != 1 {
		t.Errorf("rows at the snapshot height: %d perpetuals, %d markets, %d funding params; want 1 each", p, m, f)
	}
	funding := make([]int64, 5)
	if err := db.NewRaw(`SELECT default_funding_ppm, max_abs_rate_ppm, tick_seconds, sample_seconds, min_votes_per_sample
		FROM dydx_funding_params WHERE chain_id = ? AND perpetual_id = 302`, cfg.ID).
		Scan(ctx, &funding[0], &funding[1], &funding[2], &funding[3], &funding[4]); err != nil {
		t.Fatal(err)
	}
	// Small-Cap tier: 600 % × (10 % − 10 % × 50 %) = 30 %; the localnet's
	// 60 s ticks, 5 s samples and 2 votes per sample.
	if !reflect.DeepEqual(funding, []int64{150, 300_000, 60, 5, 2}) {
		t.Errorf("NEW-USD funding params %v", funding)
	}

	// The same snapshot again, and a later one where BTC-USD changed: only
	// the change is written.
	items, err := snapshot.TakeState(ctx, q, dydxtest.LastHeight, s.State.StateQueries())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		height int64
		edit   func(map[string][][]byte)
		want   int64
	}{
		{"the same state again", dydxtest.LastHeight, func(map[string][][]byte) {}, 0},
		{"BTC-USD becomes isolated", dydxtest.LastHeight + 1, func(it map[string][][]byte) {
			it[dydx.PathAllPerpetuals][0] = dydxtest.Perpetual(0, "BTC-USD", 0, -10, 20000, 0, 2)
		}, 1},
		{"the same again one block later", dydxtest.LastHeight + 2, func(it map[string][][]byte) {
			it[dydx.PathAllPerpetuals][0] = dydxtest.Perpetual(0, "BTC-USD", 0, -10, 20000, 0, 2)
		}, 0},
	} {
		it := map[string][][]byte{}
		for k, v := range items {
			it[k] = append([][]byte(nil), v...)
		}
		c.edit(it)
		rows := chains.NewRows()
		if err := s.State.StateRows(cfg.ID, c.height, it, rows); err != nil {
			t.Fatal(err)
		}
		n, err := snapshot.StoreState(ctx, db, s.State.StateTables(), rows)
		if err != nil {
			t.Fatal(err)
		}
		if n != c.want {
			t.Errorf("%s: %d rows written, want %d", c.name, n, c.want)
		}
	}
	if got := read(); got[0] != (catalog{0, dydxtest.LastHeight + 1, "BTC-USD", -10, 2, "BTC-USD", -5}) {
		t.Errorf("BTC-USD after the change: %+v", got[0])
	}
}

// A node whose catalog answers cannot be read (here a perpetual naming a
// liquidity tier the node does not list) costs the snapshot its state
// tables only: the rest is stored, and the next snapshot retries them.
func TestSnapshotKeptWhenTheCatalogFails(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, cfg, q := indexedCatalog(t)
	q.Perpetuals = append(q.Perpetuals, dydxtest.Perpetual(302, "NEW-USD", 302, -7, 0, 77, 2))
	cfg.SnapshotEvery = dydxtest.LastHeight
	s := snapshot.NewSnapshotter(db, q, cfg, slog.New(slog.DiscardHandler))
	s.State = dydx.NewAdapter("dydx")
	taken, err := s.Poll(ctx)
	if err != nil || !reflect.DeepEqual(taken, []int64{dydxtest.LastHeight}) {
		t.Fatalf("took %v, %v", taken, err)
	}
	for table, want := range map[string]int{"state_snapshots": 1, "dydx_perpetuals": 0, "dydx_funding_params": 0} {
		n, err := db.NewSelect().TableExpr(table).Where("chain_id = ? AND height = ?", cfg.ID, dydxtest.LastHeight).Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if (n > 0) != (want > 0) {
			t.Errorf("%s: %d rows at the snapshot height", table, n)
		}
	}
}

// indexedCatalog indexes the recorded dYdX localnet and returns it with
// the node's recorded catalog answers.
func indexedCatalog(t *testing.T) (*bun.DB, config.Chain, *dydxtest.CatalogQuerier) {
	t.Helper()
	if testing.Short() {
		t.Skip("indexes the dYdX recording")
	}
	db, cfg := dydxtest.New(t)
	q, err := dydxtest.NewCatalogQuerier()
	if err != nil {
		t.Fatal(err)
	}
	return db, cfg, q
}

// StoreState types the rows by the table: a column of NULLs, a jsonb
// column and a bigint column take their literals; equal rows at a later
// height add nothing, a changed one (NULL to a value counts) adds a row.
func TestStoreStateTypesByTheTable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := testdb.New(t)
	if _, err := db.ExecContext(ctx, `CREATE TABLE st (chain_id text NOT NULL, height bigint NOT NULL, id integer NOT NULL,
		note text, data jsonb, amount numeric, PRIMARY KEY (chain_id, height, id))`); err != nil {
		t.Fatal(err)
	}
	table := chains.StateTable{Table: chains.Table{Name: "st", Columns: []string{"chain_id", "height", "id", "note", "data", "amount"}}, Key: []string{"id"}}
	for _, c := range []struct {
		name string
		rows [][]any
		want int64
	}{
		{"first", [][]any{{"c", int64(10), int64(1), nil, json.RawMessage(`{"a":1}`), "12.5"}, {"c", int64(10), int64(2), nil, nil, nil}}, 2},
		{"unchanged", [][]any{{"c", int64(20), int64(1), nil, json.RawMessage(`{"a": 1}`), "12.50"}, {"c", int64(20), int64(2), nil, nil, nil}}, 0},
		{"a NULL becomes a value", [][]any{{"c", int64(30), int64(1), nil, json.RawMessage(`{"a":1}`), "12.5"}, {"c", int64(30), int64(2), "x", nil, nil}}, 1},
		{"another chain", [][]any{{"d", int64(30), int64(2), "x", nil, nil}}, 1},
	} {
		rows := chains.NewRows()
		for _, r := range c.rows {
			rows.Add("st", r...)
		}
		n, err := snapshot.StoreState(ctx, db, []chains.StateTable{table}, rows)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if n != c.want {
			t.Errorf("%s: %d rows written, want %d", c.name, n, c.want)
		}
	}
	bad := chains.StateTable{Table: table.Table}
	if _, err := snapshot.StoreState(ctx, db, []chains.StateTable{bad}, chains.NewRows()); err != nil {
		t.Errorf("no rows, no key: %v (nothing to write)", err)
	}
	rows := chains.NewRows()
	rows.Add("st", "c", int64(40), int64(3), nil, nil, nil)
	if _, err := snapshot.StoreState(ctx, db, []chains.StateTable{bad}, rows); err == nil {
		t.Error("a table without a key was accepted")
	}
}
