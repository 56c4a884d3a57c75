package osmosis_test

import (
	"fmt"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/chains/osmosis"
	"github.com/chainlens/chainlens/chains/protoset"
	"github.com/chainlens/chainlens/chains/wire"
)

// builder makes messages of Osmosis's own types (the shipped descriptors)
// from field names and values: string, uint64, int64, []byte, a built
// message, or a list of those.
type builder struct {
	t   *testing.T
	reg *protoset.Registry
}

func (b builder) msg(name string, fields ...any) *dynamicpb.Message {
	b.t.Helper()
	mt, err := b.reg.FindMessageByName(protoreflect.FullName(name))
	if err != nil {
		b.t.Fatal(err)
	}
	m := dynamicpb.NewMessage(mt.Descriptor())
	for i := 0; i < len(fields); i += 2 {
		fd := mt.Descriptor().Fields().ByName(protoreflect.Name(fields[i].(string)))
		if fd == nil {
			b.t.Fatalf("%s has no field %s", name, fields[i])
		}
		if list, ok := fields[i+1].([]any); ok {
			l := m.Mutable(fd).List()
			for _, v := range list {
				l.Append(value(v))
			}
			continue
		}
		m.Set(fd, value(fields[i+1]))
	}
	return m
}

func value(v any) protoreflect.Value {
	switch x := v.(type) {
	case *dynamicpb.Message:
		return protoreflect.ValueOfMessage(x)
	default:
		return protoreflect.ValueOf(x)
	}
}

func (b builder) bytes(m proto.Message) []byte {
	b.t.Helper()
	out, err := proto.Marshal(m)
	if err != nil {
		b.t.Fatal(err)
	}
	return out
}

// any wraps a pool as AllPools does: Any{type_url "/" + its name, value}.
func (b builder) any(m *dynamicpb.Message) *dynamicpb.Message {
	return b.msg("google.protobuf.Any", "type_url", "/"+string(m.Descriptor().FullName()), "value", b.bytes(m))
}

func (b builder) coin(denom, amount string) *dynamicpb.Message {
	return b.msg("cosmos.base.v1beta1.Coin", "denom", denom, "amount", amount)
}

// items are field 1 of an answer, as the node's query source hands them.
func items(t *testing.T, answer []byte) [][]byte {
	t.Helper()
	fs, err := wire.Fields(answer)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, f := range fs {
		if f.Num == 1 && f.Type == protowire.BytesType {
			out = append(out, f.Bytes)
		}
	}
	return out
}

func newBuilder(t *testing.T) builder {
	reg, err := protoset.NewShipped("cosmos", "osmosis")
	if err != nil {
		t.Fatal(err)
	}
	return builder{t, reg}
}

// TestOpeningPools decodes an AllPoolsResponse encoded with Osmosis's own
// types, its Decs and BigDecs as the chain writes them (the integer of
// their smallest unit), into one osmosis_opening_pools row per pool: the
// localnet's pools 1 to 4 as its node reported them at height 299, a
// balancer pool whose weights are being changed, a CosmWasm pool, a
// concentrated-liquidity pool without a position yet, and a pool type it
// does not know (left out).
func TestOpeningPools(t *testing.T) {
	b := newBuilder(t)
	balancer := func(id uint64, addr, swapFee, exitFee string, assets ...[3]string) *dynamicpb.Message {
		var as []any
		for _, a := range assets {
			as = append(as, b.msg("osmosis.gamm.v1beta1.PoolAsset", "token", b.coin(a[0], a[1]), "weight", a[2]))
		}
		return b.any(b.msg("osmosis.gamm.v1beta1.Pool", "address", addr, "id", id,
			"pool_params", b.msg("osmosis.gamm.v1beta1.PoolParams", "swap_fee", swapFee, "exit_fee", exitFee),
			"future_pool_governor", "", "total_shares", b.coin(fmt.Sprintf("gamm/pool/%d", id), "100025092889217569600"),
			"pool_assets", as, "total_weight", "10737418240"))
	}
	cl := func(id uint64, addr, liquidity, token0, token1, sqrtPrice string, tick int64, spacing uint64, spread string) *dynamicpb.Message {
		return b.any(b.msg("osmosis.concentratedliquidity.v1beta1.Pool", "address", addr, "incentives_address", "osmo1incentives",
			"spread_rewards_address", "osmo1spread", "id", id, "current_tick_liquidity", liquidity, "token0", token0, "token1", token1,
			"current_sqrt_price", sqrtPrice, "current_tick", tick, "tick_spacing", spacing, "exponent_at_price_one", int64(-6),
			"spread_factor", spread, "last_liquidity_update", b.msg("google.protobuf.Timestamp", "seconds", int64(1795288158))))
	}
	pools := []any{
		balancer(1, "osmo19e2mf7cywkv7zaug6nk5f87d07fxrdgrladvymh2gwv5crvm3vnsuewhh7", "3000000000000000", "0",
			[3]string{"uion", "7093916541", "3221225472"}, [3]string{"uosmo", "27324524721", "5368709120"}, [3]string{"uusdc", "19688757723", "2147483648"}),
		cl(2, "osmo18ddcsq4jzf33x9f3vplv9779uvjq6ypx3en3wt9sd93njmas7ykst6z34u", "173205080756887729430000000", "uweth", "uusdc",
			"1340759415761640287732343517471393873", 797635, 10, "500000000000000"),
		balancer(3, "osmo1aft40l3naq7mc9da59yc7mr7p7s02jx5ks7u3ujc6mhtl4vle47snef2ha", "2000000000000000", "0",
			[3]string{"uatom", "5544494494", "1073741824"}, [3]string{"uosmo", "52595525090", "1073741824"}),
		b.any(b.msg("osmosis.gamm.poolmodels.stableswap.v1beta1.Pool", "address", "osmo1ad4r3uh5pdn5pgg5hnl6u5utfeqmpwstlvgvg2h2jdztrcnwkqgs3hs85z",
			"id", uint64(4), "pool_params", b.msg("osmosis.gamm.poolmodels.stableswap.v1beta1.PoolParams", "swap_fee", "1000000000000000", "exit_fee", "0"),
			"total_shares", b.coin("gamm/pool/4", "101000000001899453000"),
			"pool_liquidity", []any{b.coin("uusdc", "30239115095"), b.coin("uweth", "10147906180")},
			"scaling_factors", []any{uint64(1), uint64(1000)}, "scaling_factor_controller", "")),
		// Weights being changed smoothly need not be whole multiples of
		// 2^30: they stay as stored. Exit fee set.
		balancer(6, "osmo1six", "10000000000000000", "5000000000000000",
			[3]string{"uatom", "1", "1610612736"}, [3]string{"uosmo", "2", "2684354561"}),
		b.any(b.msg("osmosis.cosmwasmpool.v1beta1.CosmWasmPool", "contract_address", "osmo1transmuter", "pool_id", uint64(7),
			"code_id", uint64(3), "instantiate_msg", []byte(`{"pool_asset_denoms":["uatom","uion"]}`))),
		cl(8, "osmo1eight", "0", "uion", "uosmo", "0", 0, 100, "2000000000000000"),
		b.msg("google.protobuf.Any", "type_url", "/osmosis.futurepool.v1.Pool", "value", []byte{0x10, 0x09}),
	}
	answer := b.bytes(b.msg("osmosis.poolmanager.v1beta1.AllPoolsResponse", "pools", pools))
	a := osmosis.NewAdapter("osmo")
	rows := chains.NewRows()
	if err := a.OpeningRows("localosmosis", 299, osmosis.OpeningPools, "", items(t, answer), rows); err != nil {
		t.Fatal(err)
	}
	// chain, height, pool, type, address, denoms, amounts, swap fee,
	// weights, tick spacing, exit fee, sqrt price, tick, liquidity.
	want := []string{
		"[localosmosis 299 1 balancer osmo19e2mf7cywkv7zaug6nk5f87d07fxrdgrladvymh2gwv5crvm3vnsuewhh7 [uion uosmo uusdc] [7093916541 27324524721 19688757723] 0.003000000000000000 [3 5 2] <nil> 0.000000000000000000 <nil> <nil> <nil>]",
		"[localosmosis 299 2 concentrated osmo18ddcsq4jzf33x9f3vplv9779uvjq6ypx3en3wt9sd93njmas7ykst6z34u [uweth uusdc] <nil> 0.000500000000000000 <nil> 10 <nil> 1.340759415761640287732343517471393873 797635 173205080.756887729430000000]",
		"[localosmosis 299 3 balancer osmo1aft40l3naq7mc9da59yc7mr7p7s02jx5ks7u3ujc6mhtl4vle47snef2ha [uatom uosmo] [5544494494 52595525090] 0.002000000000000000 [1 1] <nil> 0.000000000000000000 <nil> <nil> <nil>]",
		"[localosmosis 299 4 stableswap osmo1ad4r3uh5pdn5pgg5hnl6u5utfeqmpwstlvgvg2h2jdztrcnwkqgs3hs85z [uusdc uweth] [30239115095 10147906180] 0.001000000000000000 [1 1000] <nil> 0.000000000000000000 <nil> <nil> <nil>]",
		"[localosmosis 299 6 balancer osmo1six [uatom uosmo] [1 2] 0.010000000000000000 [1610612736 2684354561] <nil> 0.005000000000000000 <nil> <nil> <nil>]",
		"[localosmosis 299 7 cosmwasm osmo1transmuter [] <nil> <nil> <nil> <nil> <nil> <nil> <nil> <nil>]",
		"[localosmosis 299 8 concentrated osmo1eight [uion uosmo] <nil> 0.002000000000000000 <nil> 100 <nil> <nil> <nil> 0.000000000000000000]",
	}
	got := rows.Of("osmosis_opening_pools")
	if len(got) != len(want) {
		t.Fatalf("%d rows %v, want %d", len(got), got, len(want))
	}
	for i, r := range got {
		if s := fmt.Sprint(r); s != want[i] {
			t.Errorf("row %d:\n got %s\nwant %s", i, s, want[i])
		}
	}

	for _, bad := range []struct {
		name string
		pool *dynamicpb.Message
	}{
		{"no id", b.any(b.msg("osmosis.cosmwasmpool.v1beta1.CosmWasmPool", "contract_address", "osmo1c"))},
		{"a reserve that is not an integer", balancer(9, "osmo1nine", "0", "0", [3]string{"uatom", "1.5", "1073741824"})},
		{"a zero weight", balancer(9, "osmo1nine", "0", "0", [3]string{"uatom", "1", "0"})},
		{"a bad swap fee", balancer(9, "osmo1nine", "0.x", "0", [3]string{"uatom", "1", "1073741824"})},
		{"scaling factors that do not match the coins", b.any(b.msg("osmosis.gamm.poolmodels.stableswap.v1beta1.Pool", "id", uint64(9),
			"pool_liquidity", []any{b.coin("uusdc", "1"), b.coin("uweth", "1")}, "scaling_factors", []any{uint64(1)}))},
		{"one token", cl(9, "osmo1nine", "0", "uion", "", "0", 0, 100, "0")},
		{"no tick spacing", cl(9, "osmo1nine", "0", "uion", "uosmo", "0", 0, 0, "0")},
		{"a bad sqrt price", cl(9, "osmo1nine", "0", "uion", "uosmo", "1.x", 0, 100, "0")},
	} {
		answer := b.bytes(b.msg("osmosis.poolmanager.v1beta1.AllPoolsResponse", "pools", []any{bad.pool}))
		if err := a.OpeningRows("localosmosis", 299, osmosis.OpeningPools, "", items(t, answer), chains.NewRows()); err == nil {
			t.Errorf("%s: no error", bad.name)
		}
	}
}

// TestOpeningPositions decodes a store read of the concentrated-liquidity
// module's positions (Pairs of SDK 0.50's store, each key PositionIdPrefix
// 0x08 and the id in decimal, each value a Position) into one
// osmosis_opening_cl_positions row per position with liquidity: the
// localnet's positions 1 and 4 as its node reported them, negative ticks
// included, and a key in the form before Osmosis v16 (0x08, "|", the id).
func TestOpeningPositions(t *testing.T) {
	b := newBuilder(t)
	position := func(id uint64, owner string, pool uint64, lower, upper int64, sec, nsec int64, liquidity string) []byte {
		return b.bytes(b.msg("osmosis.concentratedliquidity.v1beta1.Position", "position_id", id, "address", owner, "pool_id", pool,
			"lower_tick", lower, "upper_tick", upper, "join_time", b.msg("google.protobuf.Timestamp", "seconds", sec, "nanos", int32(nsec)),
			"liquidity", liquidity))
	}
	pair := func(key string, value []byte) *dynamicpb.Message {
		return b.msg("cosmos.store.internal.kv.v1beta1.Pair", "key", []byte(key), "value", value)
	}
	read := func(pairs ...any) [][]byte {
		return items(t, b.bytes(b.msg("cosmos.store.internal.kv.v1beta1.Pairs", "pairs", pairs)))
	}
	a := osmosis.NewAdapter("osmo")
	rows := chains.NewRows()
	err := a.OpeningRows("localosmosis", 299, osmosis.OpeningPositions, "", read(
		pair("\x081", position(1, "osmo19cntltr3qf7pcny7xeq4lm7cl64xn54hvswrdh", 5, -108000000, 342000000, 1795296483, 695741955, "1414213562373095049200000000")),
		pair("\x0810", position(10, "osmo1ten", 2, 797000, 798000, 1795296500, 0, "0")), // emptied: left out
		pair("\x084", position(4, "osmo1four", 2, 790000, 800000, 1795296490, 1, "26457513110645905905016157")),
		// The key as Osmosis wrote it before v16: "|" before the id.
		pair("\x08|12", position(12, "osmo1twelve", 2, -20, 40, 1795296495, 0, "2500000000000000000")),
	), rows)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"[localosmosis 299 1 5 osmo19cntltr3qf7pcny7xeq4lm7cl64xn54hvswrdh -108000000 342000000 1414213562.373095049200000000 2026-11-21 21:28:03.695741955 +0000 UTC]",
		"[localosmosis 299 4 2 osmo1four 790000 800000 26457513.110645905905016157 2026-11-21 21:28:10.000000001 +0000 UTC]",
		"[localosmosis 299 12 2 osmo1twelve -20 40 2.500000000000000000 2026-11-21 21:28:15 +0000 UTC]",
	}
	got := rows.Of("osmosis_opening_cl_positions")
	if len(got) != len(want) {
		t.Fatalf("%d rows %v, want %d", len(got), got, len(want))
	}
	for i, r := range got {
		if s := fmt.Sprint(r); s != want[i] {
			t.Errorf("row %d:\n got %s\nwant %s", i, s, want[i])
		}
	}
	ok := position(3, "osmo1three", 2, -10, 10, 1, 0, "1000000000000000000")
	for _, bad := range []struct {
		name  string
		query string
		items [][]byte
	}{
		{"another query", osmosis.PathCLStore, read(pair("\x083", ok))},
		{"a key of another prefix", osmosis.OpeningPositions, read(pair("\x093", ok))},
		{"a key that is not an id", osmosis.OpeningPositions, read(pair("\x08x", ok))},
		{"a key with another separator", osmosis.OpeningPositions, read(pair("\x08/3", ok))},
		{"the value of another id", osmosis.OpeningPositions, read(pair("\x0833", ok))},
		{"no owner", osmosis.OpeningPositions, read(pair("\x083", position(3, "", 2, -10, 10, 1, 0, "1")))},
		{"an empty range", osmosis.OpeningPositions, read(pair("\x083", position(3, "osmo1three", 2, 10, 10, 1, 0, "1")))},
		{"a bad liquidity", osmosis.OpeningPositions, read(pair("\x083", position(3, "osmo1three", 2, -10, 10, 1, 0, "x")))},
		{"truncated", osmosis.OpeningPositions, [][]byte{read(pair("\x083", ok))[0][:20]}},
	} {
		if err := a.OpeningRows("localosmosis", 299, bad.query, "", bad.items, chains.NewRows()); err == nil {
			t.Errorf("%s: no error", bad.name)
		}
	}
	var names []string
	for _, q := range a.OpeningQueries() {
		names = append(names, q.Name())
	}
	if want := []string{osmosis.OpeningPools, osmosis.OpeningPositions, osmosis.OpeningTicks, osmosis.OpeningTickInfo}; fmt.Sprint(names) != fmt.Sprint(want) {
		t.Errorf("the queries are named %q, want %q", names, want)
	}
}

// TestOpeningTicks: a concentrated-liquidity pool's ticks listed by
// LiquidityNetInDirection (encoded with Osmosis's own types) and each
// tick's record (a TickInfo read from the store under types.KeyTick) give
// the rows osmosis_opening_cl_ticks and osmosis_opening_cl_tick_info; the
// reads are asked per pool with a price (both ways from its current tick)
// and per tick, with the module's own key.
func TestOpeningTicks(t *testing.T) {
	b := newBuilder(t)
	a := osmosis.NewAdapter("osmo")
	var ticks, info *chains.OpeningQuery
	for _, q := range a.OpeningQueries() {
		switch q.Name() {
		case osmosis.OpeningTicks:
			ticks = &q
		case osmosis.OpeningTickInfo:
			info = &q
		}
	}
	if ticks == nil || info == nil || ticks.Each.After != osmosis.OpeningPools || info.Each.After != osmosis.OpeningTicks {
		t.Fatalf("ticks %+v, records %+v", ticks, info)
	}
	for _, c := range []struct {
		name string
		row  []string
		want []string // key and request in hex
	}{
		{"concentrated", []string{"5", "concentrated", "uion", "uosmo", "1.000"}, []string{
			"5/0 0805120475696f6e20013001", "5/1 08051205756f736d6f20013001"}},
		{"no position yet", []string{"6", "concentrated", "uion", "uosmo", ""}, nil},
		{"balancer", []string{"1", "balancer", "uion", "uosmo", ""}, nil},
	} {
		reqs, err := ticks.Each.Requests(c.row)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var got []string
		for _, r := range reqs {
			got = append(got, fmt.Sprintf("%s %x", r.Key, r.Data))
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("%s: requests %q, want %q", c.name, got, c.want)
		}
	}
	for _, c := range []struct {
		row  []string
		want string
	}{
		{[]string{"5", "-1"}, "5/-1 010000000000000005 05ffffffffffffffff"},
		{[]string{"5", "342000000"}, "5/342000000 010000000000000005 060000000014628180"},
	} {
		reqs, err := info.Each.Requests(c.row)
		if err != nil || len(reqs) != 1 {
			t.Fatalf("%q: %v %v", c.row, reqs, err)
		}
		if got := fmt.Sprintf("%s %x %x", reqs[0].Key, reqs[0].Data[:9], reqs[0].Data[9:]); got != c.want {
			t.Errorf("%q: %s, want %s", c.row, got, c.want)
		}
	}

	depth := func(net string, tick int64) *dynamicpb.Message {
		return b.msg("osmosis.concentratedliquidity.v1beta1.TickLiquidityNet", "liquidity_net", net, "tick_index", tick)
	}
	answer := b.bytes(b.msg("osmosis.concentratedliquidity.v1beta1.LiquidityNetInDirectionResponse",
		"liquidity_depths", []any{depth("2500000000000000000", -20), depth("-1000000000000000000", -108000000)}, "current_tick", int64(7)))
	rows := chains.NewRows()
	if err := a.OpeningRows("localosmosis", 299, osmosis.OpeningTicks, "5/0", items(t, answer), rows); err != nil {
		t.Fatal(err)
	}
	record := b.bytes(b.msg("osmosis.concentratedliquidity.v1beta1.TickInfo", "liquidity_gross", "3500000000000000000", "liquidity_net", "2500000000000000000"))
	if err := a.OpeningRows("localosmosis", 299, osmosis.OpeningTickInfo, "5/-20", [][]byte{record}, rows); err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(rows.Of("osmosis_opening_cl_ticks"), rows.Of("osmosis_opening_cl_tick_info"))
	if want := "[[localosmosis 299 5 -20 2.500000000000000000] [localosmosis 299 5 -108000000 -1.000000000000000000]] " +
		"[[localosmosis 299 5 -20 3.500000000000000000 2.500000000000000000]]"; got != want {
		t.Errorf("rows\n got %s\nwant %s", got, want)
	}
	// A record without gross liquidity is no initialized tick.
	empty := b.bytes(b.msg("osmosis.concentratedliquidity.v1beta1.TickInfo", "liquidity_net", "0"))
	if err := a.OpeningRows("localosmosis", 299, osmosis.OpeningTickInfo, "5/3", [][]byte{empty}, chains.NewRows()); err == nil {
		t.Error("a tick record without gross liquidity: no error")
	}
}
