package osmosis_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/internal/osmosistest"
	"github.com/chainlens/chainlens/internal/testdb"
)

func query[T any](t *testing.T, db *bun.DB, q string, args ...any) []T {
	t.Helper()
	var out []T
	if err := db.NewRaw(q, args...).Scan(context.Background(), &out); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return out
}

// TestRecordedLocalnet indexes the recorded Osmosis localnet with the
// Osmosis adapter and checks the dex rows against actions.md and the
// node's own state at height 299 (truth/pools.json).
func TestRecordedLocalnet(t *testing.T) {
	db, _ := testdb.New(t)
	osmosistest.Index(t, db)

	type pool struct {
		PoolID  int64    `bun:"pool_id"`
		Type    string   `bun:"type"`
		Height  int64    `bun:"height"`
		Creator string   `bun:"creator"`
		Denoms  []string `bun:"denoms,array"`
		SwapFee string   `bun:"swap_fee"`
	}
	pools := query[pool](t, db, "SELECT pool_id, type, height, creator, denoms, swap_fee::text AS swap_fee FROM osmosis_pools ORDER BY pool_id")
	wantPools := []pool{
		{1, "balancer", 8, "osmo19cntltr3qf7pcny7xeq4lm7cl64xn54hvswrdh", []string{"uion", "uosmo", "uusdc"}, "0.003000000000000000"},
		{2, "concentrated", 8, "osmo10djef6v9uls3svdz3438m05l8hak33rlwhk90s", []string{"uweth", "uusdc"}, "0.000500000000000000"},
		{3, "balancer", 8, "osmo16kaefa02pez2jkxsnwrqmsc4ap9jnaadnac95n", []string{"uatom", "uosmo"}, "0.002000000000000000"},
		{4, "stableswap", 8, "osmo1rlnwmr3j2hkgvsaf0ldere6u0ca8rdg7xvx0sk", []string{"uusdc", "uweth"}, "0.001000000000000000"},
		{5, "concentrated", 8, "osmo1dwyz79xpa3ax9aa2l8rc0lpqg9thd0kfsexefg", []string{"uion", "uosmo"}, "0.002000000000000000"},
	}
	if !reflect.DeepEqual(pools, wantPools) {
		t.Errorf("pools:\n got %+v\nwant %+v", pools, wantPools)
	}

	// token_swapped hops per pool: 338 in successful txs plus 20 in
	// finalize-block events (epoch fee swaps through pools 3 and 5).
	type perPool struct {
		PoolID int64 `bun:"pool_id"`
		N      int64 `bun:"n"`
		Block  int64 `bun:"block"`
	}
	counts := query[perPool](t, db, "SELECT pool_id, count(*) AS n, count(*) FILTER (WHERE tx_index = -1) AS block FROM osmosis_swaps GROUP BY pool_id ORDER BY pool_id")
	wantCounts := []perPool{{1, 66, 0}, {2, 25, 0}, {3, 70, 10}, {4, 96, 0}, {5, 101, 10}}
	if !reflect.DeepEqual(counts, wantCounts) {
		t.Errorf("swaps per pool: got %v, want %v", counts, wantCounts)
	}

	// A few swaps of actions.md: #83 (dave, uusdc -> uweth via 4) and #84
	// (erin, uatom -> uosmo -> uion via 3,5: two hops of one message).
	type swap struct {
		TxIndex   int    `bun:"tx_index"`
		MsgIndex  int    `bun:"msg_index"`
		PoolID    int64  `bun:"pool_id"`
		Sender    string `bun:"sender"`
		DenomIn   string `bun:"denom_in"`
		AmountIn  string `bun:"amount_in"`
		DenomOut  string `bun:"denom_out"`
		AmountOut string `bun:"amount_out"`
	}
	got := query[swap](t, db, `SELECT tx_index, msg_index, pool_id, sender, denom_in, amount_in::text AS amount_in, denom_out, amount_out::text AS amount_out
		FROM osmosis_swaps WHERE height = 31 AND tx_index IN (0, 3) ORDER BY tx_index, event_index`)
	want := []swap{
		{0, 0, 4, "osmo1dwyz79xpa3ax9aa2l8rc0lpqg9thd0kfsexefg", "uusdc", "9648116", "uweth", "7501603"},
		{3, 0, 3, "osmo10djef6v9uls3svdz3438m05l8hak33rlwhk90s", "uatom", "3405469", "uosmo", "33927755"},
		{3, 0, 5, "osmo10djef6v9uls3svdz3438m05l8hak33rlwhk90s", "uosmo", "33826040", "uion", "14406961"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("swaps at 31:\n got %+v\nwant %+v", got, want)
	}
	// The failed swap at height 30 (#77) changed nothing.
	if n := query[int64](t, db, "SELECT count(*) FROM osmosis_swaps WHERE height = 30"); n[0] != 0 {
		t.Errorf("%d swaps at height 30", n[0])
	}

	// Every pool: creation deposit + joins - exits + CL position changes +
	// swaps in - swaps out reproduces the node's pool liquidity at 299
	// exactly (tokens_in is net of the taker fee, which never reaches the pool).
	var truth map[string]struct {
		Liquidity []struct{ Denom, Amount string } `json:"liquidity"`
	}
	raw, err := os.ReadFile(filepath.Join(osmosistest.Dir(), "truth", "pool_total_liquidity.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &truth); err != nil {
		t.Fatal(err)
	}
	type reserve struct {
		PoolID string `bun:"pool_id"`
		Denom  string `bun:"denom"`
		Amount string `bun:"amount"`
	}
	var wantRes []reserve
	for _, id := range []string{"1", "2", "3", "4", "5"} {
		for _, a := range truth[id].Liquidity {
			wantRes = append(wantRes, reserve{id, a.Denom, a.Amount})
		}
	}
	gotRes := query[reserve](t, db, `SELECT pool_id::text AS pool_id, denom, sum(delta)::text AS amount FROM (
			SELECT pool_id, denom, delta FROM osmosis_pool_liquidity
			UNION ALL SELECT c.pool_id, p.denoms[1], c.amount0 FROM osmosis_cl_positions c JOIN osmosis_pools p USING (chain_id, pool_id)
			UNION ALL SELECT c.pool_id, p.denoms[2], c.amount1 FROM osmosis_cl_positions c JOIN osmosis_pools p USING (chain_id, pool_id)
			UNION ALL SELECT pool_id, denom_in, amount_in FROM osmosis_swaps
			UNION ALL SELECT pool_id, denom_out, -amount_out FROM osmosis_swaps
		) f GROUP BY pool_id, denom ORDER BY pool_id, denom`)
	if len(wantRes) != 11 || !reflect.DeepEqual(gotRes, wantRes) {
		t.Errorf("pool liquidity:\n got %+v\nwant %+v", gotRes, wantRes)
	}

	// CL positions: 9 created, 3 withdrawn (add_to_position is the
	// withdraw of position 3 plus the create of position 9).
	type pos struct {
		Kind string `bun:"kind"`
		N    int64  `bun:"n"`
	}
	if got := query[pos](t, db, "SELECT kind, count(*) AS n FROM osmosis_cl_positions GROUP BY kind ORDER BY kind"); !reflect.DeepEqual(got, []pos{{"create", 9}, {"withdraw", 3}}) {
		t.Errorf("CL positions %v", got)
	}

	// Balancer weights and stableswap scaling factors, in the order of the
	// denoms: truth/pools.json has pool 1's weights 3221225472 (uion),
	// 5368709120 (uosmo), 2147483648 (uusdc), i.e. 3:5:2 as created, pool 3
	// 1:1, and pool 4's scaling factors 1, 1.
	type weights struct {
		PoolID  int64    `bun:"pool_id"`
		Weights []string `bun:"weights,array"`
	}
	if got := query[weights](t, db, "SELECT pool_id, coalesce(weights::text[], '{}') AS weights FROM osmosis_pools ORDER BY pool_id"); !reflect.DeepEqual(got,
		[]weights{{1, []string{"3", "5", "2"}}, {2, []string{}}, {3, []string{"1", "1"}}, {4, []string{"1", "1"}}, {5, []string{}}}) {
		t.Errorf("weights %+v", got)
	}

	// Tick spacing of the CL pools (truth/pools.json: pool 2 10, pool 5 100)
	// and exit fees of the gamm pools (all 0).
	type spacing struct {
		PoolID  int64   `bun:"pool_id"`
		Spacing *int64  `bun:"tick_spacing"`
		ExitFee *string `bun:"exit_fee"`
	}
	ten, hundred, zero := int64(10), int64(100), "0"
	if got := query[spacing](t, db, "SELECT pool_id, tick_spacing, (exit_fee::float8)::text AS exit_fee FROM osmosis_pools ORDER BY pool_id"); !reflect.DeepEqual(got,
		[]spacing{{1, nil, &zero}, {2, &ten, nil}, {3, nil, &zero}, {4, nil, &zero}, {5, &hundred, nil}}) {
		t.Errorf("tick spacing and exit fees %+v", got)
	}

	// Exact-out hops per pool (actions.md: 18 swap-exact-amount-out via 2,
	// 32 via 4, 31 via 4,1; the split-route exact-out message adds one hop
	// each in pools 1, 3 and 5).
	if got := query[perPool](t, db, "SELECT pool_id, count(*) FILTER (WHERE exact_out) AS n, 0 AS block FROM osmosis_swaps GROUP BY pool_id ORDER BY pool_id"); !reflect.DeepEqual(got,
		[]perPool{{1, 32, 0}, {2, 18, 0}, {3, 1, 0}, {4, 63, 0}, {5, 1, 0}}) {
		t.Errorf("exact-out hops %v", got)
	}

	// The tokens each MsgCreatePosition provided (actions.md rows 27-34).
	type provided struct {
		PositionID int64  `bun:"position_id"`
		Provided   string `bun:"provided"`
	}
	if got := query[provided](t, db, "SELECT position_id, provided FROM osmosis_cl_positions WHERE provided <> '' ORDER BY position_id"); !reflect.DeepEqual(got, []provided{
		{1, "1000000000uion,2000000000uosmo"}, {2, "100000000uion,200000000uosmo"}, {3, "500000000uion,1000000000uosmo"}, {4, "300000000uion"},
		{5, "400000000uion,800000000uosmo"}, {6, "500000000uosmo"}, {7, "300000000uusdc,100000000uweth"}, {8, "60000000uusdc,20000000uweth"}}) {
		t.Errorf("provided %+v", got)
	}

	// Collected rewards: 10 collect_spread_rewards events (19 coins) and 2
	// collect_incentives (28924708uion for position 5 at 57, 10991874uion
	// for position 1 at 61), nothing forfeited; one add_to_position (3 → 9).
	type reward struct {
		Kind string `bun:"kind"`
		N    int64  `bun:"n"`
		Sum  string `bun:"sum"`
	}
	if got := query[reward](t, db, "SELECT kind, count(*) AS n, sum(amount)::text AS sum FROM osmosis_cl_rewards GROUP BY kind ORDER BY kind"); !reflect.DeepEqual(got,
		[]reward{{"incentives", 2, "39916582"}, {"spread", 19, "3938257"}}) {
		t.Errorf("CL rewards %+v", got)
	}
	type add struct {
		Height int64 `bun:"height"`
		From   int64 `bun:"position_id"`
		To     int64 `bun:"new_position_id"`
	}
	if got := query[add](t, db, "SELECT height, position_id, new_position_id FROM osmosis_cl_adds"); !reflect.DeepEqual(got, []add{{20, 3, 9}}) {
		t.Errorf("add_to_position %+v", got)
	}
}
