package synthosmosis

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/big"
	"slices"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/chainlens/chainlens/chains/osmosis"
	"github.com/chainlens/chainlens/devchain/replaynode"
	"github.com/chainlens/chainlens/devchain/synthcomet"
)

// The state queries the node answers, at any height of the chain.
const (
	pathDenomOwners = "/cosmos.bank.v1beta1.Query/DenomOwners"
	pathTotalSupply = "/cosmos.bank.v1beta1.Query/TotalSupply"
	pathAllPools    = "/osmosis.poolmanager.v1beta1.Query/AllPools"
	// pathCLSubspace lists x/concentrated-liquidity's store under a key
	// prefix (a kv.Pairs): positions are under positionIDPrefix.
	pathCLSubspace = "/store/concentratedliquidity/subspace"
	// pathCLKey reads one key of that store: here a tick's record.
	pathCLKey = "/store/concentratedliquidity/key"
	// pathLiquidityNetInDirection lists a pool's initialized ticks in a
	// swap's direction.
	pathLiquidityNetInDirection = "/osmosis.concentratedliquidity.v1beta1.Query/LiquidityNetInDirection"
)

// positionIDPrefix is x/concentrated-liquidity's PositionIdPrefix: a
// position's key is the prefix and its id in decimal (KeyPositionId).
const positionIDPrefix = 0x08

// defaultPageLimit is the cosmos-sdk's page size when a request sets none.
const defaultPageLimit = 100

var _ replaynode.Querier = (*Chain)(nil)

// ABCIQuery answers the bank's TotalSupply (paginated by denom) and
// DenomOwners (paginated by owner address),
// poolmanager's AllPools and the concentrated-liquidity store's positions
// at height (the state after that block); every other query is unknown
// to this chain.
func (c *Chain) ABCIQuery(path string, data []byte, height int64) ([]byte, error) {
	switch path {
	case pathDenomOwners, pathTotalSupply, pathAllPools, pathCLSubspace, pathCLKey, pathLiquidityNetInDirection:
	default:
		return nil, replaynode.ErrUnknownQuery(path)
	}
	// Baseapp's answers for heights it has no state of (a store read of
	// such a height is refused too: this node is not the cosmos-sdk ≤ 0.53
	// store that answers subspace reads from the latest state).
	if height > c.LastHeight() {
		return nil, &replaynode.QueryError{Code: 18, Codespace: "sdk", Log: "cannot query with height in the future; please provide a valid height: invalid request"}
	}
	if height < 1 {
		return nil, &replaynode.QueryError{Code: 18, Codespace: "sdk",
			Log: fmt.Sprintf("failed to load state at height %d; version does not exist (latest height: %d): invalid request", height, c.LastHeight())}
	}
	var out []byte
	err := c.At(height, func(g *generator) error {
		var err error
		switch path {
		case pathDenomOwners:
			out, err = c.denomOwners(g, data)
		case pathTotalSupply:
			out, err = totalSupply(g, data)
		case pathAllPools:
			out, err = c.allPools(g)
		case pathCLSubspace:
			out, err = c.clSubspace(g, data)
		case pathCLKey:
			out, err = clTickRecord(g, data)
		case pathLiquidityNetInDirection:
			out, err = liquidityNetInDirection(g, data)
		}
		return err
	})
	return out, err
}

// denomOwners is QueryDenomOwnersResponse{denom_owners=1
// DenomOwner{address=1, balance=2 Coin}, pagination=2 PageResponse} for
// the request's denom, from the owner at the page key on.
func (c *Chain) denomOwners(g *generator, data []byte) ([]byte, error) {
	denom, key, limit, err := bankRequest(data, 2)
	if err != nil {
		return nil, err
	}
	owners := make([]string, 0, len(g.bank[denom]))
	for addr, v := range g.bank[denom] {
		if v.Sign() > 0 {
			owners = append(owners, addr)
		}
	}
	slices.Sort(owners)
	i, _ := slices.BinarySearch(owners, string(key))
	page := owners[i:min(i+limit, len(owners))]
	var out []byte
	for _, addr := range page {
		var coin []byte
		coin = protowire.AppendTag(coin, 1, protowire.BytesType)
		coin = protowire.AppendString(coin, denom)
		coin = protowire.AppendTag(coin, 2, protowire.BytesType)
		coin = protowire.AppendString(coin, g.bank[denom][addr].String())
		var owner []byte
		owner = protowire.AppendTag(owner, 1, protowire.BytesType)
		owner = protowire.AppendString(owner, addr)
		owner = protowire.AppendTag(owner, 2, protowire.BytesType)
		owner = protowire.AppendBytes(owner, coin)
		out = protowire.AppendTag(out, 1, protowire.BytesType)
		out = protowire.AppendBytes(out, owner)
	}
	return appendPage(out, owners, i+limit), nil
}

// bankRequest reads a bank query's request: its string field 1 (a
// denom) unless that field is the pagination, and its PageRequest at
// pageField.
func bankRequest(data []byte, pageField protowire.Number) (denom string, key []byte, limit int, err error) {
	limit = defaultPageLimit
	for len(data) > 0 {
		num, typ, n := protowire.ConsumeTag(data)
		if n < 0 {
			return "", nil, 0, badRequest("tag")
		}
		data = data[n:]
		switch {
		case num == pageField && typ == protowire.BytesType:
			page, n := protowire.ConsumeBytes(data)
			if n < 0 {
				return "", nil, 0, badRequest("pagination")
			}
			if key, limit, err = pageRequest(page); err != nil {
				return "", nil, 0, err
			}
			data = data[n:]
		case num == 1 && typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(data)
			if n < 0 {
				return "", nil, 0, badRequest("denom")
			}
			denom, data = string(v), data[n:]
		default:
			n = protowire.ConsumeFieldValue(num, typ, data)
			if n < 0 {
				return "", nil, 0, badRequest("field")
			}
			data = data[n:]
		}
	}
	return denom, key, limit, nil
}

// appendPage appends a response's PageResponse (field 2): next_key is the
// key at next, none past the end.
func appendPage(out []byte, keys []string, next int) []byte {
	var pr []byte
	if next < len(keys) {
		pr = protowire.AppendTag(pr, 1, protowire.BytesType)
		pr = protowire.AppendBytes(pr, []byte(keys[next]))
	}
	out = protowire.AppendTag(out, 2, protowire.BytesType)
	return protowire.AppendBytes(out, pr)
}

// totalSupply is QueryTotalSupplyResponse{supply=1 Coin, pagination=2}:
// every denom's supply (the sum of its balances), paginated by denom.
func totalSupply(g *generator, data []byte) ([]byte, error) {
	_, key, limit, err := bankRequest(data, 1)
	if err != nil {
		return nil, err
	}
	denoms := make([]string, 0, len(g.bank))
	supply := map[string]*big.Int{}
	for d, owners := range g.bank {
		total := new(big.Int)
		for _, v := range owners {
			total.Add(total, v)
		}
		if total.Sign() > 0 {
			denoms = append(denoms, d)
			supply[d] = total
		}
	}
	slices.Sort(denoms)
	i, _ := slices.BinarySearch(denoms, string(key))
	var out []byte
	for _, d := range denoms[i:min(i+limit, len(denoms))] {
		var coin []byte
		coin = protowire.AppendTag(coin, 1, protowire.BytesType)
		coin = protowire.AppendString(coin, d)
		coin = protowire.AppendTag(coin, 2, protowire.BytesType)
		coin = protowire.AppendString(coin, supply[d].String())
		out = protowire.AppendTag(out, 1, protowire.BytesType)
		out = protowire.AppendBytes(out, coin)
	}
	return appendPage(out, denoms, i+limit), nil
}

// pageRequest reads PageRequest{key=1, limit=3}.
func pageRequest(b []byte) (key []byte, limit int, err error) {
	limit = defaultPageLimit
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, 0, badRequest("pagination tag")
		}
		b = b[n:]
		switch {
		case num == 1 && typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return nil, 0, badRequest("pagination key")
			}
			key, b = v, b[n:]
		case num == 3 && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return nil, 0, badRequest("pagination limit")
			}
			if v > 0 {
				limit = int(min(v, 1<<20))
			}
			b = b[n:]
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return nil, 0, badRequest("pagination field")
			}
			b = b[n:]
		}
	}
	return key, limit, nil
}

func badRequest(what string) error {
	return &replaynode.QueryError{Code: 2, Codespace: "sdk", Log: "tx parse error: " + what}
}

// allPools is AllPoolsResponse{pools=1 repeated Any}: every pool created,
// by id, as its module stores it.
func (c *Chain) allPools(g *generator) ([]byte, error) {
	enc := synthcomet.NewEncoder(c.reg, nil) // Any needs no randomness
	var out []byte
	for _, pl := range g.st.pools[:g.st.created] {
		typeURL, msg, err := poolJSON(pl)
		if err != nil {
			return nil, err
		}
		a, err := enc.Any(typeURL, msg)
		if err != nil {
			return nil, err
		}
		b, err := a.Marshal()
		if err != nil {
			return nil, err
		}
		out = protowire.AppendTag(out, 1, protowire.BytesType)
		out = protowire.AppendBytes(out, b)
	}
	return out, nil
}

// weightScale is gamm's GuaranteedWeightPrecision: stored weights are the
// given ones times 2^30.
const weightScale = 1 << 30

// poolJSON is a pool as its module's proto3 JSON. Dec and BigDec fields
// are what gogoproto's custom types write on the wire: the integer of
// 10^18 (10^36) units, not a decimal.
func poolJSON(pl *pool) (string, map[string]any, error) {
	id := strconv.FormatUint(pl.id, 10)
	// Coins are sorted by denom, and what follows them (weights, scaling
	// factors) in the same order.
	order := []int{0, 1}
	if pl.denoms[0] > pl.denoms[1] {
		order = []int{1, 0}
	}
	params := map[string]any{"swap_fee": pl.feeWire(), "exit_fee": "0"}
	switch pl.kind {
	case balancer:
		var assets []any
		total := int64(0)
		for _, i := range order {
			w := pl.weights[i] * 1_000_000 * weightScale
			total += w
			assets = append(assets, map[string]any{"token": coin(pl.reserve[pl.denoms[i]], pl.denoms[i]), "weight": strconv.FormatInt(w, 10)})
		}
		return "/osmosis.gamm.v1beta1.Pool", map[string]any{"address": pl.addr, "id": id, "pool_params": params,
			"future_pool_governor": "", "total_shares": map[string]any{"denom": "gamm/pool/" + id, "amount": pl.shares.String()},
			"pool_assets": assets, "total_weight": strconv.FormatInt(total, 10)}, nil
	case stableswap:
		var liq, scaling []any
		for _, i := range order {
			liq = append(liq, coin(pl.reserve[pl.denoms[i]], pl.denoms[i]))
			scaling = append(scaling, strconv.FormatInt(pl.scaling[i], 10))
		}
		return "/osmosis.gamm.poolmodels.stableswap.v1beta1.Pool", map[string]any{"address": pl.addr, "id": id, "pool_params": params,
			"future_pool_governor": "", "total_shares": map[string]any{"denom": "gamm/pool/" + id, "amount": pl.shares.String()},
			"pool_liquidity": liq, "scaling_factors": scaling, "scaling_factor_controller": ""}, nil
	default:
		incentives, err := osmosis.CLIncentivesAddress("osmo", pl.id)
		if err != nil {
			return "", nil, err
		}
		return "/osmosis.concentratedliquidity.v1beta1.Pool", map[string]any{"address": pl.addr, "incentives_address": incentives,
			"spread_rewards_address": pl.spreadAddr, "id": id, "current_tick_liquidity": pl.clp.Liquidity.String(),
			"token0": pl.denoms[0], "token1": pl.denoms[1], "current_sqrt_price": pl.clp.SqrtPrice.String(),
			"current_tick": strconv.FormatInt(pl.clp.Tick, 10), "tick_spacing": strconv.FormatInt(pl.spacing, 10),
			"exponent_at_price_one": "-6", "spread_factor": pl.feeWire()}, nil
	}
}

// clSubspace is the kv.Pairs{pairs=1 Pair{key=1, value=2}} of the
// concentrated-liquidity store under the requested prefix, in key order:
// here the open positions (Position{position_id=1, address=2, pool_id=3,
// lower_tick=4, upper_tick=5, join_time=6, liquidity=7}).
func (c *Chain) clSubspace(g *generator, prefix []byte) ([]byte, error) {
	enc := synthcomet.NewEncoder(c.reg, nil)
	type kv struct{ k, v []byte }
	var pairs []kv
	for _, pos := range g.st.positions {
		key := append([]byte{positionIDPrefix}, strconv.FormatUint(pos.id, 10)...)
		if !bytes.HasPrefix(key, prefix) {
			continue
		}
		a, err := enc.Any("/osmosis.concentratedliquidity.v1beta1.Position", map[string]any{
			"position_id": strconv.FormatUint(pos.id, 10), "address": pos.owner.addr, "pool_id": strconv.FormatUint(pos.pool.id, 10),
			"lower_tick": strconv.FormatInt(pos.lower, 10), "upper_tick": strconv.FormatInt(pos.upper, 10),
			"join_time": pos.joinedAt.Format("2006-01-02T15:04:05.999999999Z"), "liquidity": pos.liquidity.String()})
		if err != nil {
			return nil, err
		}
		pairs = append(pairs, kv{key, a.Value})
	}
	slices.SortFunc(pairs, func(a, b kv) int { return bytes.Compare(a.k, b.k) })
	var out []byte
	for _, p := range pairs {
		var pair []byte
		pair = protowire.AppendTag(pair, 1, protowire.BytesType)
		pair = protowire.AppendBytes(pair, p.k)
		pair = protowire.AppendTag(pair, 2, protowire.BytesType)
		pair = protowire.AppendBytes(pair, p.v)
		out = protowire.AppendTag(out, 1, protowire.BytesType)
		out = protowire.AppendBytes(out, pair)
	}
	return out, nil
}

// clTickRecord is the value of a key of the concentrated-liquidity store:
// for a tick's key (TickPrefix 0x01, the pool id and the tick index, each
// 8 bytes big-endian, the index after a sign byte 0x05 or 0x06), its
// TickInfo{liquidity_gross=1 Dec, liquidity_net=2 Dec}; nothing for a key
// not set.
func clTickRecord(g *generator, key []byte) ([]byte, error) {
	if len(key) != 18 || key[0] != 0x01 || (key[9] != 0x05 && key[9] != 0x06) {
		return nil, nil
	}
	id := binary.BigEndian.Uint64(key[1:9])
	tick := int64(binary.BigEndian.Uint64(key[10:]))
	pl := clPoolByID(g, id)
	if pl == nil || (tick < 0) != (key[9] == 0x05) {
		return nil, nil
	}
	gross, ok := pl.clp.Gross[tick]
	if !ok {
		return nil, nil
	}
	var out []byte
	out = protowire.AppendTag(out, 1, protowire.BytesType)
	out = protowire.AppendString(out, gross.String())
	out = protowire.AppendTag(out, 2, protowire.BytesType)
	out = protowire.AppendString(out, pl.clp.Net[tick].String())
	return out, nil
}

// liquidityNetInDirection answers LiquidityNetInDirectionRequest{pool_id=1,
// token_in=2, use_cur_tick=4, use_no_bound=6} (the only form asked here:
// from the current tick, without a bound) with {liquidity_depths=1
// TickLiquidityNet{liquidity_net=1, tick_index=2}, current_tick=2,
// current_liquidity=3, current_sqrt_price=4}: token0 in, every tick at or
// below the current one, downwards; token1 in, every tick above it.
func liquidityNetInDirection(g *generator, data []byte) ([]byte, error) {
	var id uint64
	var in string
	var cur, noBound bool
	for len(data) > 0 {
		num, typ, n := protowire.ConsumeTag(data)
		if n < 0 {
			return nil, badRequest("LiquidityNetInDirectionRequest")
		}
		data = data[n:]
		switch {
		case num == 1 && typ == protowire.VarintType:
			v, m := protowire.ConsumeVarint(data)
			id, n = v, m
		case num == 2 && typ == protowire.BytesType:
			v, m := protowire.ConsumeString(data)
			in, n = v, m
		case (num == 4 || num == 6) && typ == protowire.VarintType:
			v, m := protowire.ConsumeVarint(data)
			if num == 4 {
				cur = v != 0
			} else {
				noBound = v != 0
			}
			n = m
		default:
			n = protowire.ConsumeFieldValue(num, typ, data)
		}
		if n < 0 {
			return nil, badRequest("LiquidityNetInDirectionRequest")
		}
		data = data[n:]
	}
	if !cur || !noBound {
		return nil, badRequest("LiquidityNetInDirectionRequest without use_cur_tick and use_no_bound")
	}
	pl := clPoolByID(g, id)
	if pl == nil {
		return nil, &replaynode.QueryError{Code: 1, Codespace: "concentratedliquidity", Log: fmt.Sprintf("pool not found. pool id (%d)", id)}
	}
	if in != pl.denoms[0] && in != pl.denoms[1] {
		return nil, &replaynode.QueryError{Code: 1, Codespace: "concentratedliquidity", Log: fmt.Sprintf("tokenIn (%s) does not match any token in pool", in)}
	}
	zeroForOne := in == pl.denoms[0]
	ticks := pl.clp.Ticks() // ascending
	if zeroForOne {
		slices.Reverse(ticks)
	}
	var out []byte
	for _, t := range ticks {
		if zeroForOne != (t <= pl.clp.Tick) {
			continue
		}
		var d []byte
		d = protowire.AppendTag(d, 1, protowire.BytesType)
		d = protowire.AppendString(d, pl.clp.Net[t].String())
		d = protowire.AppendTag(d, 2, protowire.VarintType)
		d = protowire.AppendVarint(d, uint64(t))
		out = protowire.AppendTag(out, 1, protowire.BytesType)
		out = protowire.AppendBytes(out, d)
	}
	out = protowire.AppendTag(out, 2, protowire.VarintType)
	out = protowire.AppendVarint(out, uint64(pl.clp.Tick))
	out = protowire.AppendTag(out, 3, protowire.BytesType)
	out = protowire.AppendString(out, pl.clp.Liquidity.String())
	if pl.clp.SqrtPrice != nil {
		out = protowire.AppendTag(out, 4, protowire.BytesType)
		out = protowire.AppendString(out, pl.clp.SqrtPrice.String())
	}
	return out, nil
}

// clPoolByID is the created concentrated-liquidity pool id, or nil.
func clPoolByID(g *generator, id uint64) *pool {
	if id < 1 || id > uint64(g.st.created) {
		return nil
	}
	if pl := g.st.pools[id-1]; pl.clp != nil {
		return pl
	}
	return nil
}
