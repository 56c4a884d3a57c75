package dex_test

import (
	"context"
	"fmt"
	"log/slog"
	"math/big"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/chains/osmosis"
	"github.com/chainlens/chainlens/chains/wire"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/devchain/replaynode"
	"github.com/chainlens/chainlens/devchain/synthosmosis"
	"github.com/chainlens/chainlens/indexer"
	"github.com/chainlens/chainlens/indexer/cometbft"
	"github.com/chainlens/chainlens/indexer/snapshot"
	"github.com/chainlens/chainlens/internal/testdb"
	report "github.com/chainlens/chainlens/report/dex"
)

// TestPoolsFromALateStartOfAGeneratedChain: a generated Osmosis
// (devchain/synthosmosis: balancer, stableswap and concentrated pools,
// swaps crossing ticks, joins, exits, positions opened and withdrawn)
// indexed from height 150, with the state at 149 read from the node
// (its own state, not the indexer's: AllPools, the concentrated-liquidity
// positions or ticks, TotalSupply and DenomOwners), gives the pool reports
// of the same chain indexed from genesis: catalog, reserves,
// concentrated-liquidity state and ticks, open positions, balances and
// pool shares from the start on. A node that reads stores at their latest
// state whatever the height (cosmos-sdk ≤ 0.53, real Osmosis nodes) has
// its positions refused: the pools' ticks and their records replay the
// same state and ticks (the positions opened before the start are then
// unknown). (USD values are not compared: a price is the last trade's,
// and a late start knows the trades from its first height only.)
func TestPoolsFromALateStartOfAGeneratedChain(t *testing.T) {
	t.Parallel()
	const start, last = 150, 400
	p := synthosmosis.Mainnet(1, 11)
	p.Traders, p.BalancerPools, p.StableswapPools, p.CLPools = 200, 30, 3, 6
	ch, client := serveGenerated(t, p, last)
	whole := indexGenerated(t, ch, client, 0, last)

	read := func(db *bun.DB, q string) []string {
		t.Helper()
		var out []string
		if err := db.NewRaw(q).Scan(context.Background(), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	catalog := func(table string) string {
		return `SELECT concat_ws(' ', pool_id, type, (SELECT string_agg(d || coalesce(':' || w, ''), ',' ORDER BY d) FROM unnest(denoms, weights) AS u(d, w)),
			trim_scale(swap_fee), tick_spacing, trim_scale(exit_fee)) FROM ` + table + ` ORDER BY 1`
	}
	from := fmt.Sprintf("(SELECT date_trunc('hour', time) FROM blocks WHERE height = %d)", start)
	for _, node := range []struct {
		name         string
		latestStores bool
		imported     []string
	}{
		{"positions served", false, []string{osmosis.OpeningPools + " 149", osmosis.OpeningPositions + " 149", "bank 149"}},
		{"stores read at their latest state", true, []string{osmosis.OpeningTicks + " 149", osmosis.OpeningPools + " 149",
			osmosis.OpeningTickInfo + " 149", "bank 149"}},
	} {
		t.Run(node.name, func(t *testing.T) {
			nch, nclient := serveGenerated(t, p, last, replaynode.Options{LatestStoreReads: node.latestStores})
			late := indexGenerated(t, nch, nclient, start, last)
			if parts := read(late, "SELECT part || ' ' || height FROM state_imports ORDER BY part"); !slices.Equal(parts, node.imported) {
				t.Fatalf("imported %q, want %q", parts, node.imported)
			}
			// The ticks are read only instead of the positions.
			if n := read(late, "SELECT count(*)::text FROM osmosis_opening_cl_tick_info"); (n[0] == "0") == node.latestStores {
				t.Fatalf("%s ticks imported", n[0])
			}
			if got, want := read(late, catalog("osmosis_known_pools")), read(whole, catalog("osmosis_pools")); len(want) != 39 || !slices.Equal(got, want) {
				t.Errorf("pools\n got %q\nwant %q", got, want)
			}
			for _, q := range []struct {
				what, sql   string
				ofPositions bool
			}{
				{"reserves", `SELECT concat_ws(' ', pool_id, denom, hour, amount) FROM osmosis_pool_reserves_hourly WHERE hour >= ` + from + ` ORDER BY 1`, false},
				{"concentrated-liquidity state", `SELECT concat_ws(' ', pool_id, hour, sqrt_price, tick, liquidity) FROM osmosis_cl_state_hourly
					WHERE hour >= ` + from + ` ORDER BY 1`, false},
				{"ticks", ticksEachHourQ + ` WHERE s.hour >= ` + from + ` ORDER BY 1`, false},
				{"open positions", `SELECT concat_ws(' ', position_id, pool_id, address, lower_tick, upper_tick, liquidity) FROM osmosis_cl_open_positions ORDER BY 1`, true},
				{"balances", `SELECT concat_ws(' ', address, denom, hour, amount) FROM osmosis_balances_hourly WHERE hour >= ` + from + ` AND amount <> 0 ORDER BY 1`, false},
				{"pool shares", `SELECT concat_ws(' ', pool_id, hour, total_shares) FROM osmosis_pool_shares_hourly WHERE hour >= ` + from + ` ORDER BY 1`, false},
			} {
				if q.ofPositions && node.latestStores {
					continue
				}
				got, want := read(late, q.sql), read(whole, q.sql)
				if len(want) == 0 || !slices.Equal(got, want) {
					t.Errorf("%s after a late start: %d rows, want %d; first difference: %s", q.what, len(got), len(want), firstDiff(got, want))
				}
			}
		})
	}
}

// TestGeneratedPoolsReplayToTheNodesState: the concentrated-liquidity
// pools the dex jobs replay from a generated chain's swaps and positions
// (indexed from genesis) end where the node's own state says they are
// (AllPools at the last height: sqrt price, tick and liquidity in range).
func TestGeneratedPoolsReplayToTheNodesState(t *testing.T) {
	t.Parallel()
	const last = 300
	p := synthosmosis.Mainnet(1, 12)
	p.Traders, p.BalancerPools, p.StableswapPools, p.CLPools = 200, 10, 1, 6
	ch, client := serveGenerated(t, p, last)
	db := indexGenerated(t, ch, client, 0, last)
	ctx := context.Background()

	// The node's state, decoded by the adapter's own opening decoder.
	res, err := client.ABCIQuery(ctx, osmosis.PathAllPools, nil, last)
	if err != nil {
		t.Fatal(err)
	}
	var items [][]byte
	fs, err := wire.Fields(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fs {
		items = append(items, f.Bytes)
	}
	rows := chains.NewRows()
	if err := osmosis.NewAdapter("osmo").OpeningRows(ch.ID, last, osmosis.OpeningPools, "", items, rows); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, r := range rows.Of("osmosis_opening_pools") {
		if r[3] == "concentrated" {
			want = append(want, fmt.Sprintf("%v %v %v %v", r[2], r[11], r[12], r[13]))
		}
	}
	var got []string
	if err := db.NewRaw(`SELECT DISTINCT ON (pool_id) concat_ws(' ', pool_id, sqrt_price, tick, liquidity) FROM osmosis_cl_state_hourly
		ORDER BY pool_id, hour DESC`).Scan(ctx, &got); err != nil {
		t.Fatal(err)
	}
	if len(want) != p.CLPools || !slices.Equal(normalize(got), normalize(want)) {
		t.Errorf("replayed\n%s\nthe node's state\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// serveGenerated serves the generated chain of p through height last and
// returns its config (from the chain's own config entry) and a client.
func serveGenerated(t *testing.T, p synthosmosis.Profile, last int64, node ...replaynode.Options) (config.Chain, *cometbft.Client) {
	t.Helper()
	c, err := synthosmosis.New(p)
	if err != nil {
		t.Fatal(err)
	}
	opt := replaynode.Options{}
	if len(node) > 0 {
		opt = node[0]
	}
	opt.StartHeight = last
	srv := httptest.NewServer(replaynode.New(c, opt).Handler())
	t.Cleanup(srv.Close)
	cfg, err := config.Parse([]byte("database: {url: \"postgres://postgres@127.0.0.1:5432/x\"}\nchains:\n"+synthosmosis.Config(p, srv.URL)), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	ch := cfg.Chains[0]
	ch.BatchSize, ch.Concurrency = 50, 2
	client, err := cometbft.New(ch.RPC, cometbft.Retry{Base: 10 * time.Millisecond, Max: 100 * time.Millisecond}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return ch, client
}

// indexGenerated indexes ch from height from (0: its genesis; later, with
// the state before it read from the node) through last into a new
// database and runs the dex jobs over it.
func indexGenerated(t *testing.T, ch config.Chain, client *cometbft.Client, from, last int64) *bun.DB {
	t.Helper()
	db := indexGeneratedOnly(t, ch, client, from, last)
	runJobs(t, db, report.NewMarket(ch), slog.New(slog.DiscardHandler))
	return db
}

// indexGeneratedOnly indexes ch from height from through last into a new
// database (no job run).
func indexGeneratedOnly(t *testing.T, ch config.Chain, client *cometbft.Client, from, last int64) *bun.DB {
	t.Helper()
	db, _ := testdb.New(t)
	ch.StartHeight = from
	quiet := slog.New(slog.DiscardHandler)
	met, _ := indexer.NewMetrics(nil)
	x := indexer.NewCosmos(ch, db, indexer.NewClientSource(client), osmosis.NewAdapter("osmo"), quiet, met)
	x.State = snapshot.BankState{Q: client, PageSize: 40}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := x.Run(ctx, last); err != nil {
		t.Fatal(err)
	}
	return db
}

// normalize writes each number of each row as an exact fraction, so that
// 0.5 and 0.500 compare equal.
func normalize(rows []string) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		var parts []string
		for _, f := range strings.Fields(r) {
			if v, ok := new(big.Rat).SetString(f); ok {
				f = v.RatString()
			}
			parts = append(parts, f)
		}
		out[i] = strings.Join(parts, " ")
	}
	return out
}

// firstDiff shows where two sorted row lists first differ.
func firstDiff(got, want []string) string {
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			return fmt.Sprintf("row %d\n got %s\nwant %s", i, got[i], want[i])
		}
	}
	return strings.TrimSpace(fmt.Sprintf("lengths %d and %d", len(got), len(want)))
}
