package dex_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	sdkmath "cosmossdk.io/math"
	sdk "github.com/cosmos/cosmos-sdk/types"
	banktypes "github.com/cosmos/cosmos-sdk/x/bank/types"
	"github.com/uptrace/bun"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/aggregator/dex"
	"github.com/chainlens/chainlens/chains/osmosis"
	"github.com/chainlens/chainlens/chains/osmosis/clmath"
	"github.com/chainlens/chainlens/chains/protoset"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/devchain/replaynode"
	"github.com/chainlens/chainlens/indexer"
	"github.com/chainlens/chainlens/indexer/cometbft"
	"github.com/chainlens/chainlens/indexer/snapshot"
	"github.com/chainlens/chainlens/internal/osmosistest"
	"github.com/chainlens/chainlens/internal/replaytest"
	"github.com/chainlens/chainlens/internal/testdb"
	report "github.com/chainlens/chainlens/report/dex"
)

// lateStart is where TestPoolsFromALateStart starts indexing the localnet:
// its pools were created at height 8, its first positions at 13 to 16,
// swapped through at 17 and 18 and joined at 19; from 20 on positions
// are added to, withdrawn in part and in full, transferred and collected
// from, and every pool keeps swapping.
const lateStart = 20

// dexJobs are the dex jobs whose rows a late start changes.
func dexJobs(m report.Market, log *slog.Logger) []aggregator.Job {
	return []aggregator.Job{dex.Prices{Market: m}, dex.Volume{Market: m}, dex.Liquidity{Market: m}, dex.CLState{Market: m, Log: log},
		dex.Positions{Market: m}, dex.LPHoldings{Market: m}, dex.Portfolio{Market: m}, dex.PoolRewards{Market: m},
		dex.RewardsReceived{Market: m}, dex.Activity{Market: m}}
}

func runJobs(t *testing.T, db *bun.DB, m report.Market, log *slog.Logger) {
	t.Helper()
	sched, err := aggregator.New(db, config.Aggregator{}, log, nil, dexJobs(m, log)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := sched.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestPoolsFromALateStart: the localnet indexed from height 20 imports the
// state at 19 from a node that answers as Osmosis's does (AllPools; the
// concentrated-liquidity store's positions; the bank state), and its pool
// reports equal those of the localnet indexed from genesis: the pool
// catalog, reserves and liquidity, the concentrated-liquidity pools'
// replayed state and ticks, open positions and their liquidity per hour,
// rewards received from positions, balances and pool shares. The state at
// 19 the node answers is the one the jobs computed from genesis through 19.
// A node that reads its store at its latest state whatever the height
// asked (cosmos-sdk's up to v0.53) is not trusted with the positions: the
// pools and balances are imported, the concentrated-liquidity pools are
// not replayed.
func TestPoolsFromALateStart(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)

	// The state at 19, as the jobs compute it from genesis.
	before, _ := testdb.New(t)
	cfg := replaytest.Index(t, before, osmosistest.Dir(), osmosistest.Chain(""), osmosis.NewAdapter("osmo"), lateStart-1)
	m := report.NewMarket(cfg)
	runJobs(t, before, m, quiet)
	node := newOpeningNode(t, before, lateStart-1)

	whole, _ := osmosistest.New(t)
	runJobs(t, whole, m, quiet)

	index := func(q snapshot.Querier, log *slog.Logger) *bun.DB {
		t.Helper()
		db, _ := testdb.New(t)
		rec, err := replaynode.Load(osmosistest.Dir())
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(replaynode.New(rec, replaynode.Options{}).Handler())
		t.Cleanup(srv.Close)
		ch := osmosistest.Chain(srv.URL)
		ch.StartHeight = lateStart
		client, err := cometbft.New(ch.RPC, cometbft.Retry{Base: 10 * time.Millisecond, Max: 100 * time.Millisecond}, nil)
		if err != nil {
			t.Fatal(err)
		}
		met, _ := indexer.NewMetrics(nil)
		x := indexer.NewCosmos(ch, db, indexer.NewClientSource(client), osmosis.NewAdapter("osmo"), log, met)
		x.State = snapshot.BankState{Q: q, PageSize: 3}
		ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		if err := x.Run(ctx, osmosistest.LastHeight); err != nil {
			t.Fatal(err)
		}
		runJobs(t, db, m, log)
		return db
	}
	late := index(node, quiet)

	var parts []string
	if err := late.NewRaw("SELECT part || ' ' || height || ' ' || rows FROM state_imports ORDER BY part").Scan(ctx, &parts); err != nil {
		t.Fatal(err)
	}
	if want := []string{
		fmt.Sprintf("%s 19 5", osmosis.OpeningPools),
		fmt.Sprintf("%s 19 %d", osmosis.OpeningPositions, len(node.positions)),
		fmt.Sprintf("bank 19 %d", node.holders),
	}; !slices.Equal(parts, want) || len(node.positions) < 6 {
		t.Fatalf("imported %q, want %q (6 positions or more)", parts, want)
	}

	read := func(db *bun.DB, q string) []string {
		t.Helper()
		var out []string
		if err := db.NewRaw(q).Scan(ctx, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	// The catalog, denoms and weights in denom order: a pool stores its
	// assets so, its create message as it was sent.
	catalog := func(table string) string {
		return `SELECT concat_ws(' ', pool_id, type, (SELECT string_agg(d || coalesce(':' || w, ''), ',' ORDER BY d) FROM unnest(denoms, weights) AS u(d, w)),
			trim_scale(swap_fee), tick_spacing, trim_scale(exit_fee)) FROM ` + table + ` ORDER BY 1`
	}
	if got, want := read(late, catalog("osmosis_known_pools")), read(whole, catalog("osmosis_pools")); len(want) != 5 || !slices.Equal(got, want) {
		t.Errorf("pools\n got %q\nwant %q", got, want)
	}
	for _, c := range []struct{ what, q string }{
		{"reserves", `SELECT concat_ws(' ', pool_id, denom, hour, amount) FROM osmosis_pool_reserves_hourly ORDER BY 1`},
		{"liquidity", `SELECT concat_ws(' ', pool_id, day, liquidity_usd) FROM osmosis_pool_liquidity_daily ORDER BY 1`},
		{"concentrated-liquidity state", `SELECT concat_ws(' ', pool_id, hour, sqrt_price, tick, liquidity) FROM osmosis_cl_state_hourly ORDER BY 1`},
		{"ticks", ticksEachHourQ + ` ORDER BY 1`},
		{"open positions", `SELECT concat_ws(' ', position_id, pool_id, address, lower_tick, upper_tick, liquidity) FROM osmosis_cl_open_positions ORDER BY 1`},
		{"positions' liquidity", `SELECT concat_ws(' ', position_id, hour, pool_id, address, lower_tick, upper_tick, liquidity)
			FROM osmosis_cl_position_liquidity_hourly ORDER BY 1`},
		{"rewards from positions", `SELECT concat_ws(' ', day, address, denom, amount) FROM osmosis_rewards_received_daily WHERE source = 'cl' ORDER BY 1`},
		{"principals after the start", `SELECT concat_ws(' ', position_id, action, address, height, amount0, amount1) FROM osmosis_position_principals
			WHERE height >= 20 ORDER BY 1`},
		// An account emptied before the start holds nothing to import.
		{"balances", `SELECT concat_ws(' ', address, denom, hour, amount) FROM osmosis_balances_hourly
			WHERE hour >= (SELECT date_trunc('hour', time) FROM blocks WHERE height = 20) AND amount <> 0 ORDER BY 1`},
		{"pool shares", `SELECT concat_ws(' ', pool_id, hour, total_shares) FROM osmosis_pool_shares_hourly
			WHERE hour >= (SELECT date_trunc('hour', time) FROM blocks WHERE height = 20) ORDER BY 1`},
	} {
		got, want := read(late, c.q), read(whole, c.q)
		if len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("%s after a late start (%d)\n%s\nwant (%d)\n%s", c.what, len(got), strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
		}
	}

	// A node whose store reads ignore the height (and that lists no
	// ticks): no positions, CL pools not replayed, the rest as from
	// genesis.
	var logs strings.Builder
	latest := index(latestStore{node}, slog.New(slog.NewTextHandler(&logs, nil)))
	parts = read(latest, "SELECT part FROM state_imports ORDER BY part")
	if want := []string{osmosis.OpeningPools, "bank"}; !slices.Equal(parts, want) {
		t.Errorf("a node reading its store at its latest state: imported %q, want %q", parts, want)
	}
	if !strings.Contains(logs.String(), "the node reads the store at its latest state whatever the height asked") ||
		!strings.Contains(logs.String(), "concentrated-liquidity pools of the opening not replayed: neither their positions nor their ticks were imported") {
		t.Errorf("the log does not say why the positions are not imported:\n%s", logs.String())
	}
	if n := read(latest, "SELECT count(*)::text FROM osmosis_cl_state_hourly"); n[0] != "0" {
		t.Errorf("%s concentrated-liquidity states without the positions, want none", n[0])
	}
	reserves := `SELECT concat_ws(' ', pool_id, denom, hour, amount) FROM osmosis_pool_reserves_hourly ORDER BY 1`
	if got, want := read(latest, reserves), read(whole, reserves); !slices.Equal(got, want) {
		t.Errorf("reserves without the positions\n%q\nwant\n%q", got, want)
	}
}

// openingNode answers abci_query at one height as an Osmosis node does
// for the state the opening import reads: AllPools, the
// concentrated-liquidity store's positions (and, at any other height, that
// the version does not exist), TotalSupply and DenomOwners; the other
// queries are unknown paths.
type openingNode struct {
	height    int64
	allPools  []byte
	positions [][2][]byte // key, value
	supply    sdk.Coins
	owners    map[string][]*banktypes.DenomOwner
	holders   int
	// pairs are the encoded Pairs field of each key: an answer is their
	// concatenation (Pairs{repeated Pair pairs = 1}).
	pairs map[string][]byte
}

var errNoVersion = errors.New("version does not exist")

func (n *openingNode) ABCIQuery(_ context.Context, path string, data []byte, height int64) ([]byte, error) {
	if height != n.height {
		return nil, fmt.Errorf("code 0: %w (height %d)", errNoVersion, height)
	}
	switch path {
	case osmosis.PathAllPools:
		if len(data) != 0 {
			return nil, fmt.Errorf("AllPools request %x, want an empty one", data)
		}
		return n.allPools, nil
	case osmosis.PathCLStore:
		// Every key under the prefix, as the store's Query does.
		var out []byte
		for _, kv := range n.positions {
			if bytes.HasPrefix(kv[0], data) {
				out = append(out, n.pairs[string(kv[0])]...)
			}
		}
		return out, nil
	case "/cosmos.bank.v1beta1.Query/TotalSupply":
		return (&banktypes.QueryTotalSupplyResponse{Supply: n.supply}).Marshal()
	case "/cosmos.bank.v1beta1.Query/DenomOwners":
		var req banktypes.QueryDenomOwnersRequest
		if err := req.Unmarshal(data); err != nil {
			return nil, err
		}
		return (&banktypes.QueryDenomOwnersResponse{DenomOwners: n.owners[req.Denom]}).Marshal()
	}
	return nil, fmt.Errorf("%w: %s", snapshot.ErrUnknownPath, path)
}

// latestStore is a node whose store reads answer at any height (with its
// state at n.height: cosmos-sdk reads a subspace at its latest version).
type latestStore struct{ *openingNode }

func (l latestStore) ABCIQuery(ctx context.Context, path string, data []byte, height int64) ([]byte, error) {
	if path == osmosis.PathCLStore {
		height = l.height
	}
	return l.openingNode.ABCIQuery(ctx, path, data, height)
}

// newOpeningNode encodes, with Osmosis's own types (the shipped
// descriptors), the state db holds at height as the dex jobs computed it:
// the pools (assets in denom order, balancer weights times 2^30, Decs and
// BigDecs as the chain writes them), the open positions, the balances.
func newOpeningNode(t *testing.T, db *bun.DB, height int64) *openingNode {
	t.Helper()
	ctx := context.Background()
	reg, err := protoset.NewShipped("cosmos", "osmosis")
	if err != nil {
		t.Fatal(err)
	}
	msg := func(name string, fields ...any) *dynamicpb.Message {
		t.Helper()
		mt, err := reg.FindMessageByName(protoreflect.FullName(name))
		if err != nil {
			t.Fatal(err)
		}
		m := dynamicpb.NewMessage(mt.Descriptor())
		for i := 0; i < len(fields); i += 2 {
			fd := mt.Descriptor().Fields().ByName(protoreflect.Name(fields[i].(string)))
			val := func(v any) protoreflect.Value {
				if x, ok := v.(*dynamicpb.Message); ok {
					return protoreflect.ValueOfMessage(x)
				}
				return protoreflect.ValueOf(v)
			}
			if list, ok := fields[i+1].([]any); ok {
				l := m.Mutable(fd).List()
				for _, v := range list {
					l.Append(val(v))
				}
				continue
			}
			m.Set(fd, val(fields[i+1]))
		}
		return m
	}
	marshal := func(m proto.Message) []byte {
		t.Helper()
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	decInt := func(s string) string { return sdkmath.LegacyMustNewDecFromStr(s).BigInt().String() }
	coin := func(d, a string) *dynamicpb.Message { return msg("cosmos.base.v1beta1.Coin", "denom", d, "amount", a) }

	var pools []struct {
		PoolID  int64    `bun:"pool_id"`
		Type    string   `bun:"type"`
		Denoms  []string `bun:"denoms,array"`
		Weights []string `bun:"weights,array"`
		Fee     string   `bun:"fee"`
		Exit    *string  `bun:"exit"`
		Spacing *int64   `bun:"tick_spacing"`
	}
	if err := db.NewRaw(`SELECT pool_id, type, denoms, coalesce(weights::text[], '{}') AS weights, swap_fee::text AS fee, exit_fee::text AS exit,
		tick_spacing FROM osmosis_pools ORDER BY pool_id`).Scan(ctx, &pools); err != nil {
		t.Fatal(err)
	}
	reserves := map[string]string{}
	var rs []struct{ K, V string }
	if err := db.NewRaw(`SELECT DISTINCT ON (pool_id, denom) pool_id || ' ' || denom AS k, amount::text AS v FROM osmosis_pool_reserves_hourly
		ORDER BY pool_id, denom, hour DESC`).Scan(ctx, &rs); err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		reserves[r.K] = r.V
	}
	var items []any
	for _, p := range pools {
		addr, err := osmosis.PoolAddress("osmo", uint64(p.PoolID))
		if err != nil {
			t.Fatal(err)
		}
		order := make([]int, len(p.Denoms))
		for i := range order {
			order[i] = i
		}
		sort.Slice(order, func(a, b int) bool { return p.Denoms[order[a]] < p.Denoms[order[b]] })
		params := func(name string) *dynamicpb.Message {
			return msg(name, "swap_fee", decInt(p.Fee), "exit_fee", decInt(*p.Exit))
		}
		var pool *dynamicpb.Message
		switch p.Type {
		case "balancer":
			var assets []any
			for _, i := range order {
				w, _ := new(big.Int).SetString(p.Weights[i], 10)
				assets = append(assets, msg("osmosis.gamm.v1beta1.PoolAsset", "token", coin(p.Denoms[i], reserves[fmt.Sprint(p.PoolID, " ", p.Denoms[i])]),
					"weight", w.Lsh(w, 30).String()))
			}
			pool = msg("osmosis.gamm.v1beta1.Pool", "address", addr, "id", uint64(p.PoolID), "pool_params", params("osmosis.gamm.v1beta1.PoolParams"),
				"total_shares", coin(fmt.Sprintf("gamm/pool/%d", p.PoolID), "1"), "pool_assets", assets)
		case "stableswap":
			var liq, factors []any
			for _, i := range order {
				liq = append(liq, coin(p.Denoms[i], reserves[fmt.Sprint(p.PoolID, " ", p.Denoms[i])]))
				f, _ := new(big.Int).SetString(p.Weights[i], 10)
				factors = append(factors, f.Uint64())
			}
			pool = msg("osmosis.gamm.poolmodels.stableswap.v1beta1.Pool", "address", addr, "id", uint64(p.PoolID),
				"pool_params", params("osmosis.gamm.poolmodels.stableswap.v1beta1.PoolParams"), "pool_liquidity", liq, "scaling_factors", factors)
		case "concentrated":
			var st struct {
				SqrtPrice string `bun:"sqrt_price"`
				Tick      int64  `bun:"tick"`
				Liquidity string `bun:"liquidity"`
			}
			if err := db.NewRaw(`SELECT sqrt_price::text AS sqrt_price, tick, liquidity::text AS liquidity FROM osmosis_cl_state_hourly
				WHERE pool_id = ? ORDER BY hour DESC LIMIT 1`, p.PoolID).Scan(ctx, &st); err != nil {
				t.Fatal(err)
			}
			incentives, err := osmosis.CLIncentivesAddress("osmo", uint64(p.PoolID))
			if err != nil {
				t.Fatal(err)
			}
			pool = msg("osmosis.concentratedliquidity.v1beta1.Pool", "address", addr, "incentives_address", incentives, "id", uint64(p.PoolID),
				"current_tick_liquidity", decInt(st.Liquidity), "token0", p.Denoms[0], "token1", p.Denoms[1],
				"current_sqrt_price", clmath.StripPoint(st.SqrtPrice, 36), "current_tick", st.Tick, "tick_spacing", uint64(*p.Spacing),
				"exponent_at_price_one", int64(-6), "spread_factor", decInt(p.Fee))
		default:
			t.Fatalf("pool %d of type %s", p.PoolID, p.Type)
		}
		items = append(items, msg("google.protobuf.Any", "type_url", "/"+string(pool.Descriptor().FullName()), "value", marshal(pool)))
	}
	n := &openingNode{height: height, owners: map[string][]*banktypes.DenomOwner{}}
	n.allPools = marshal(msg("osmosis.poolmanager.v1beta1.AllPoolsResponse", "pools", items))

	var positions []struct {
		ID        int64     `bun:"position_id"`
		Pool      int64     `bun:"pool_id"`
		Owner     string    `bun:"address"`
		Lower     int64     `bun:"lower_tick"`
		Upper     int64     `bun:"upper_tick"`
		Liquidity string    `bun:"liquidity"`
		Joined    time.Time `bun:"joined"`
	}
	if err := db.NewRaw(`SELECT o.position_id, o.pool_id, o.address, o.lower_tick, o.upper_tick, o.liquidity::text AS liquidity, b.time AS joined
		FROM osmosis_cl_open_positions o JOIN osmosis_cl_positions c ON c.position_id = o.position_id AND c.kind = 'create'
		JOIN blocks b ON b.height = c.height ORDER BY o.position_id`).Scan(ctx, &positions); err != nil {
		t.Fatal(err)
	}
	n.pairs = map[string][]byte{}
	for _, p := range positions {
		key := []byte(fmt.Sprintf("\x08%d", p.ID))
		value := marshal(msg("osmosis.concentratedliquidity.v1beta1.Position", "position_id", uint64(p.ID), "address", p.Owner,
			"pool_id", uint64(p.Pool), "lower_tick", p.Lower, "upper_tick", p.Upper,
			"join_time", msg("google.protobuf.Timestamp", "seconds", p.Joined.Unix(), "nanos", int32(p.Joined.Nanosecond())),
			"liquidity", decInt(p.Liquidity)))
		n.positions = append(n.positions, [2][]byte{key, value})
		n.pairs[string(key)] = marshal(msg("cosmos.store.internal.kv.v1beta1.Pairs", "pairs",
			[]any{msg("cosmos.store.internal.kv.v1beta1.Pair", "key", key, "value", value)}))
	}

	var balances []struct {
		Address string `bun:"address"`
		Denom   string `bun:"denom"`
		Amount  string `bun:"amount"`
	}
	if err := db.NewRaw(`SELECT address, denom, sum(delta)::text AS amount FROM balance_changes GROUP BY address, denom HAVING sum(delta) > 0
		ORDER BY denom, address`).Scan(ctx, &balances); err != nil {
		t.Fatal(err)
	}
	total := map[string]sdkmath.Int{}
	for _, b := range balances {
		a, ok := sdkmath.NewIntFromString(b.Amount)
		if !ok {
			t.Fatalf("balance %q", b.Amount)
		}
		n.owners[b.Denom] = append(n.owners[b.Denom], &banktypes.DenomOwner{Address: b.Address, Balance: sdk.NewCoin(b.Denom, a)})
		if cur, ok := total[b.Denom]; ok {
			total[b.Denom] = cur.Add(a)
		} else {
			total[b.Denom] = a
		}
	}
	for d, a := range total {
		n.supply = append(n.supply, sdk.NewCoin(d, a))
	}
	n.supply = n.supply.Sort()
	n.holders = len(balances)
	return n
}
