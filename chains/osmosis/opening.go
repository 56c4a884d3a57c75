package osmosis

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/chains/osmosis/clmath"
	"github.com/chainlens/chainlens/chains/wire"
)

// The state a chain indexed from a height H after its initial one starts
// from, read at H−1: every pool (the dex jobs start from its reserves and,
// for a concentrated-liquidity pool, its price), and every
// concentrated-liquidity position (no gRPC query lists them all: the
// module's store is read instead).
const (
	// PathAllPools lists every pool as an Any (poolmanager; empty
	// request, not paginated: AllPoolsResponse{repeated Any pools = 1}).
	PathAllPools = "/osmosis.poolmanager.v1beta1.Query/AllPools"
	// PathCLStore reads the concentrated-liquidity module's store.
	PathCLStore = "/store/concentratedliquidity/subspace"
	// PathLiquidityNetInDirection lists a concentrated-liquidity pool's
	// initialized ticks from its current tick in a swap's direction:
	// request {pool_id=1, token_in=2, start_tick=3, use_cur_tick=4,
	// bound_tick=5, use_no_bound=6}; answer {liquidity_depths=1 repeated
	// TickLiquidityNet{liquidity_net=1 Dec, tick_index=2}, current_tick=2,
	// current_liquidity=3, current_sqrt_price=4}. Token0 in: every tick at
	// or below the current one; token1 in: every tick above it.
	PathLiquidityNetInDirection = "/osmosis.concentratedliquidity.v1beta1.Query/LiquidityNetInDirection"
	// PathCLKey reads one key of the concentrated-liquidity store.
	PathCLKey = "/store/concentratedliquidity/key"
)

// tickPrefix is x/concentrated-liquidity's TickPrefix: a tick's record, a
// TickInfo{liquidity_gross=1 Dec, liquidity_net=2 Dec, ...}, is stored
// under the prefix, the pool id (8 bytes, big-endian) and the tick index
// (types.KeyTick: 0x05 for a negative index, 0x06 otherwise, then its 8
// bytes big-endian as an unsigned integer).
var tickPrefix = []byte{0x01}

// tickKey is types.KeyTick(pool, tick).
func tickKey(pool uint64, tick int64) []byte {
	key := append(bytes.Clone(tickPrefix), binary.BigEndian.AppendUint64(nil, pool)...)
	sign := byte(0x06)
	if tick < 0 {
		sign = 0x05
	}
	key = append(key, sign)
	return binary.BigEndian.AppendUint64(key, uint64(tick))
}

// positionIDPrefix is x/concentrated-liquidity's PositionIdPrefix: a
// position is stored under the prefix followed by its id in decimal
// (types.KeyPositionId; before v16, and in Osmosis's v15 code, a "|"
// came between them), its value a Position.
var positionIDPrefix = []byte{0x08}

var (
	openingPools     = chains.OpeningQuery{Path: PathAllPools, Whole: true, Tables: []string{openingPoolsTable.Name}}
	openingPositions = chains.OpeningQuery{Path: PathCLStore, Prefix: positionIDPrefix, Tables: []string{openingPositionsTable.Name}}
	// The ticks, when the node refused the positions (a store read of a
	// past height, which cosmos-sdk ≤ 0.53 answers from its latest
	// state): each pool's initialized ticks, then each tick's record (its
	// gross liquidity: whether it stays initialized as positions leave).
	// Gross and net replay the pools' swaps without the positions.
	openingTicks = chains.OpeningQuery{Path: PathLiquidityNetInDirection, Whole: true, Tables: []string{openingTicksTable.Name}, Unless: OpeningPositions,
		Each: &chains.OpeningEach{After: OpeningPools, Table: openingPoolsTable.Name,
			Columns: []string{"pool_id", "type", "denoms[1]", "denoms[2]", "sqrt_price"}, Requests: tickListRequests}}
	openingTickInfo = chains.OpeningQuery{Path: PathCLKey, Tables: []string{openingTickInfoTable.Name},
		Each: &chains.OpeningEach{After: OpeningTicks, Table: openingTicksTable.Name, Columns: []string{"pool_id", "tick"}, Requests: tickInfoRequests}}
)

// The names of the opening queries (chains.OpeningQuery.Name), as
// state_imports records their import; the dex jobs and the
// osmosis_known_pools view look for them.
const (
	OpeningPools     = PathAllPools
	OpeningPositions = PathCLStore + "/08"
	OpeningTicks     = PathLiquidityNetInDirection
	OpeningTickInfo  = PathCLKey
)

// tickListRequests lists a concentrated-liquidity pool's ticks both ways
// from its current tick (row: pool_id, type, token0, token1, sqrt_price);
// a pool without a price has no position, so no tick.
func tickListRequests(row []string) ([]chains.OpeningRequest, error) {
	if len(row) != 5 || row[1] != "concentrated" || row[4] == "" {
		return nil, nil
	}
	pool, err := strconv.ParseUint(row[0], 10, 64)
	if err != nil || row[2] == "" || row[3] == "" {
		return nil, fmt.Errorf("pool %q: tokens %q, %q", row[0], row[2], row[3])
	}
	var out []chains.OpeningRequest
	for i, in := range row[2:4] {
		var b []byte
		b = protowire.AppendTag(b, 1, protowire.VarintType)
		b = protowire.AppendVarint(b, pool)
		b = protowire.AppendTag(b, 2, protowire.BytesType)
		b = protowire.AppendString(b, in)
		b = protowire.AppendTag(b, 4, protowire.VarintType)
		b = protowire.AppendVarint(b, 1) // use_cur_tick
		b = protowire.AppendTag(b, 6, protowire.VarintType)
		b = protowire.AppendVarint(b, 1) // use_no_bound
		out = append(out, chains.OpeningRequest{Key: fmt.Sprintf("%d/%d", pool, i), Data: b})
	}
	return out, nil
}

// tickInfoRequests reads a listed tick's record (row: pool_id, tick).
func tickInfoRequests(row []string) ([]chains.OpeningRequest, error) {
	if len(row) != 2 {
		return nil, fmt.Errorf("tick row %q", row)
	}
	pool, err1 := strconv.ParseUint(row[0], 10, 64)
	tick, err2 := strconv.ParseInt(row[1], 10, 64)
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("tick row %q", row)
	}
	return []chains.OpeningRequest{{Key: fmt.Sprintf("%d/%d", pool, tick), Data: tickKey(pool, tick)}}, nil
}

// The Any type URLs of AllPools' pools.
const (
	typeBalancerPool   = "/osmosis.gamm.v1beta1.Pool"
	typeStableswapPool = "/osmosis.gamm.poolmodels.stableswap.v1beta1.Pool"
	typeCLPool         = "/osmosis.concentratedliquidity.v1beta1.Pool"
	typeCosmWasmPool   = "/osmosis.cosmwasmpool.v1beta1.CosmWasmPool"
)

// openingPoolsTable holds the pools at the height before a late start:
// what osmosis_pools says of a pool (type, denoms, fees, weights, tick
// spacing), its reserves when the pool record holds them (balancer and
// stableswap), and a concentrated-liquidity pool's price and liquidity in
// range.
var openingPoolsTable = chains.Table{Name: "osmosis_opening_pools", Columns: []string{
	"chain_id", "height", "pool_id", "type", "address", "denoms", "amounts", "swap_fee", "weights", "tick_spacing", "exit_fee",
	"sqrt_price", "tick", "liquidity",
}}

// openingPositionsTable holds the concentrated-liquidity positions at the
// height before a late start.
var openingPositionsTable = chains.Table{Name: "osmosis_opening_cl_positions", Columns: []string{
	"chain_id", "height", "position_id", "pool_id", "address", "lower_tick", "upper_tick", "liquidity", "join_time",
}}

// openingTicksTable holds the initialized ticks of the
// concentrated-liquidity pools at the height before a late start, as the
// pools list them; openingTickInfoTable each one's record.
var (
	openingTicksTable    = chains.Table{Name: "osmosis_opening_cl_ticks", Columns: []string{"chain_id", "height", "pool_id", "tick", "liquidity_net"}}
	openingTickInfoTable = chains.Table{Name: "osmosis_opening_cl_tick_info", Columns: []string{
		"chain_id", "height", "pool_id", "tick", "liquidity_gross", "liquidity_net"}}
)

var _ chains.OpeningStateAdapter = (*Adapter)(nil)

// OpeningQueries reads the pools, the concentrated-liquidity positions and
// the pools' ticks (in that order: the ticks are read per pool, their
// records per tick).
func (a *Adapter) OpeningQueries() []chains.OpeningQuery {
	return []chains.OpeningQuery{openingPools, openingPositions, openingTicks, openingTickInfo}
}

// OpeningTables lists osmosis_opening_pools, osmosis_opening_cl_positions,
// osmosis_opening_cl_ticks and osmosis_opening_cl_tick_info.
func (a *Adapter) OpeningTables() []chains.Table {
	return []chains.Table{openingPoolsTable, openingPositionsTable, openingTicksTable, openingTickInfoTable}
}

// OpeningRows appends one osmosis_opening_pools row per pool of AllPools
// (pools of a type it does not know are left out: their record says
// nothing it can read), or one osmosis_opening_cl_positions row per
// position with liquidity.
func (a *Adapter) OpeningRows(chainID string, height int64, query, key string, items [][]byte, out *chains.Rows) error {
	switch query {
	case OpeningTicks:
		pool, _, _ := strings.Cut(key, "/")
		id, err := strconv.ParseInt(pool, 10, 64)
		if err != nil {
			return fmt.Errorf("ticks of %q: %w", key, err)
		}
		for _, b := range items {
			tick, net, err := decodeTickNet(b)
			if err != nil {
				return fmt.Errorf("ticks of pool %d: %w", id, err)
			}
			out.Add(openingTicksTable.Name, chainID, height, id, tick, net)
		}
	case OpeningTickInfo:
		pool, t, _ := strings.Cut(key, "/")
		id, err1 := strconv.ParseInt(pool, 10, 64)
		tick, err2 := strconv.ParseInt(t, 10, 64)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("tick record %q", key)
		}
		for _, b := range items {
			gross, net, err := decodeTickInfo(b)
			if err != nil {
				return fmt.Errorf("tick %d of pool %d: %w", tick, id, err)
			}
			out.Add(openingTickInfoTable.Name, chainID, height, id, tick, gross, net)
		}
	case OpeningPools:
		for _, b := range items {
			p, ok, err := decodePoolAny(b)
			if err != nil {
				return fmt.Errorf("pool: %w", err)
			}
			if ok {
				out.Add(openingPoolsTable.Name, chainID, height, p.id, p.typ, p.address, p.denoms, nilIfEmpty(p.amounts), nilIfEmpty(p.swapFee),
					nilIfEmpty(p.weights), p.tickSpacing, nilIfEmpty(p.exitFee), nilIfEmpty(p.sqrtPrice), p.tick, nilIfEmpty(p.liquidity))
			}
		}
	case OpeningPositions:
		for _, b := range items {
			p, err := decodePositionPair(b)
			if err != nil {
				return fmt.Errorf("position: %w", err)
			}
			if p.liquidity == "0.000000000000000000" {
				continue
			}
			out.Add(openingPositionsTable.Name, chainID, height, p.id, p.pool, p.owner, p.lower, p.upper, p.liquidity, p.joinTime)
		}
	default:
		return fmt.Errorf("osmosis: no opening query %s", query)
	}
	return nil
}

// decodeTickNet reads a TickLiquidityNet{liquidity_net=1 Dec,
// tick_index=2 int64}.
func decodeTickNet(b []byte) (int64, string, error) {
	fs, err := wire.Fields(b)
	if err != nil {
		return 0, "", err
	}
	var tick int64
	net := "0.000000000000000000"
	for _, f := range fs {
		switch {
		case f.Num == 1 && f.Type == protowire.BytesType:
			d, err := decodeDec(string(f.Bytes))
			if err != nil {
				return 0, "", fmt.Errorf("liquidity net: %w", err)
			}
			net = d.String()
		case f.Num == 2 && f.Type == protowire.VarintType:
			tick = int64(f.Value)
		}
	}
	return tick, net, nil
}

// decodeTickInfo reads a TickInfo{liquidity_gross=1 Dec, liquidity_net=2
// Dec, ...}: an initialized tick's gross liquidity is positive.
func decodeTickInfo(b []byte) (gross, net string, err error) {
	fs, err := wire.Fields(b)
	if err != nil {
		return "", "", err
	}
	gross, net = "0.000000000000000000", "0.000000000000000000"
	for _, f := range fs {
		if f.Type != protowire.BytesType || (f.Num != 1 && f.Num != 2) {
			continue
		}
		d, err := decodeDec(string(f.Bytes))
		if err != nil {
			return "", "", fmt.Errorf("liquidity: %w", err)
		}
		if f.Num == 1 {
			gross = d.String()
		} else {
			net = d.String()
		}
	}
	if strings.HasPrefix(gross, "-") || strings.Trim(gross, "0.") == "" {
		return "", "", fmt.Errorf("gross liquidity %s: not an initialized tick", gross)
	}
	return gross, net, nil
}

// nilIfEmpty is NULL for an empty string or no strings.
func nilIfEmpty[T string | []string](v T) any {
	if len(v) == 0 {
		return nil
	}
	return v
}

// openingPool is what an osmosis_opening_pools row holds; empty values
// are NULL.
type openingPool struct {
	id             int64
	typ, address   string
	denoms         []string
	amounts        []string // integers
	swapFee        string   // Dec
	weights        []string // decimals
	tickSpacing    any      // int64 or nil
	exitFee        string   // Dec
	sqrtPrice      string   // BigDec, 36 decimals
	tick           any      // int64 or nil
	liquidity      string   // Dec
	poolParamsSeen bool
}

// decodePoolAny reads one Any{type_url=1, value=2} of AllPools; ok is
// false for a pool type it does not know.
func decodePoolAny(b []byte) (p openingPool, ok bool, err error) {
	fs, err := wire.Fields(b)
	if err != nil {
		return p, false, err
	}
	var url string
	var value []byte
	for _, f := range fs {
		switch {
		case f.Num == 1 && f.Type == protowire.BytesType:
			url = string(f.Bytes)
		case f.Num == 2 && f.Type == protowire.BytesType:
			value = f.Bytes
		}
	}
	switch url {
	case typeBalancerPool:
		p, err = decodeGammPool(value, "balancer")
	case typeStableswapPool:
		p, err = decodeGammPool(value, "stableswap")
	case typeCLPool:
		p, err = decodeCLPool(value)
	case typeCosmWasmPool:
		p, err = decodeCosmWasmPool(value)
	default:
		return p, false, nil
	}
	if err != nil {
		return p, false, fmt.Errorf("%s: %w", url, err)
	}
	if p.id <= 0 {
		return p, false, fmt.Errorf("%s: pool id %d", url, p.id)
	}
	return p, true, nil
}

// decodeGammPool reads a balancer Pool{address=1, id=2, pool_params=3
// {swap_fee=1, exit_fee=2}, pool_assets=6 {token=1 Coin, weight=2}} or a
// stableswap Pool{address=1, id=2, pool_params=3, pool_liquidity=6 Coin,
// scaling_factors=7}: the assets are the reserves, in the pool's order.
func decodeGammPool(b []byte, typ string) (openingPool, error) {
	p := openingPool{typ: typ, denoms: []string{}}
	fs, err := wire.Fields(b)
	if err != nil {
		return p, err
	}
	var factors []string
	for _, f := range fs {
		switch {
		case f.Num == 1 && f.Type == protowire.BytesType:
			p.address = string(f.Bytes)
		case f.Num == 2 && f.Type == protowire.VarintType:
			p.id = int64(f.Value)
		case f.Num == 3 && f.Type == protowire.BytesType:
			p.poolParamsSeen = true
			fee, err := poolParam(f.Bytes, 1)
			if err != nil {
				return p, fmt.Errorf("swap fee: %w", err)
			}
			exit, err := poolParam(f.Bytes, 2)
			if err != nil {
				return p, fmt.Errorf("exit fee: %w", err)
			}
			if fee != nil {
				p.swapFee = fee.String()
			}
			if exit != nil {
				p.exitFee = exit.String()
			}
		case f.Num == 6 && f.Type == protowire.BytesType && typ == "balancer":
			// PoolAsset{token=1, weight=2}: the weight is the create
			// message's times 2^30 (GuaranteedWeightPrecision).
			as, err := wire.Fields(f.Bytes)
			if err != nil {
				return p, err
			}
			var c chains.Coin
			weight := ""
			for _, a := range as {
				switch {
				case a.Num == 1 && a.Type == protowire.BytesType:
					if c, err = decodeCoin(a.Bytes); err != nil {
						return p, fmt.Errorf("pool asset: %w", err)
					}
				case a.Num == 2 && a.Type == protowire.BytesType:
					weight = string(a.Bytes)
				}
			}
			if w, ok := new(big.Int).SetString(weight, 10); !ok || w.Sign() <= 0 {
				return p, fmt.Errorf("pool asset weight %q", weight)
			}
			p.denoms, p.amounts, p.weights = append(p.denoms, c.Denom), append(p.amounts, c.Amount), append(p.weights, weight)
		case f.Num == 6 && f.Type == protowire.BytesType:
			c, err := decodeCoin(f.Bytes)
			if err != nil {
				return p, fmt.Errorf("pool liquidity: %w", err)
			}
			p.denoms, p.amounts = append(p.denoms, c.Denom), append(p.amounts, c.Amount)
		case f.Num == 7 && typ == "stableswap":
			// repeated uint64: packed, or one varint each.
			if f.Type == protowire.VarintType {
				factors = append(factors, strconv.FormatUint(f.Value, 10))
				continue
			}
			for rest := f.Bytes; len(rest) > 0; {
				v, n := protowire.ConsumeVarint(rest)
				if n < 0 {
					return p, fmt.Errorf("scaling factors: %w", protowire.ParseError(n))
				}
				factors = append(factors, strconv.FormatUint(v, 10))
				rest = rest[n:]
			}
		}
	}
	for _, a := range p.amounts {
		if !isInteger(a) {
			return p, fmt.Errorf("pool %d: reserve %q", p.id, a)
		}
	}
	if typ == "balancer" {
		p.weights = unscaleWeights(p.weights)
	}
	if typ == "stableswap" {
		if len(factors) != len(p.denoms) {
			return p, fmt.Errorf("pool %d: %d scaling factors for %d coins", p.id, len(factors), len(p.denoms))
		}
		p.weights = factors
	}
	// A zero Dec is left out of the params, as of the create message.
	if p.exitFee == "" {
		p.exitFee = "0.000000000000000000"
	}
	if p.swapFee == "" && p.poolParamsSeen {
		p.swapFee = "0.000000000000000000"
	}
	return p, nil
}

// decodeCLPool reads a concentrated-liquidity Pool{address=1, id=4,
// current_tick_liquidity=5 Dec, token0=6, token1=7, current_sqrt_price=8
// BigDec, current_tick=9, tick_spacing=10, spread_factor=12 Dec}.
func decodeCLPool(b []byte) (openingPool, error) {
	p := openingPool{typ: "concentrated", liquidity: "0.000000000000000000", swapFee: "0.000000000000000000"}
	fs, err := wire.Fields(b)
	if err != nil {
		return p, err
	}
	var token0, token1 string
	var tick int64
	var spacing uint64
	for _, f := range fs {
		switch {
		case f.Num == 1 && f.Type == protowire.BytesType:
			p.address = string(f.Bytes)
		case f.Num == 4 && f.Type == protowire.VarintType:
			p.id = int64(f.Value)
		case f.Num == 5 && f.Type == protowire.BytesType:
			d, err := decodeDec(string(f.Bytes))
			if err != nil {
				return p, fmt.Errorf("current tick liquidity: %w", err)
			}
			p.liquidity = d.String()
		case f.Num == 6 && f.Type == protowire.BytesType:
			token0 = string(f.Bytes)
		case f.Num == 7 && f.Type == protowire.BytesType:
			token1 = string(f.Bytes)
		case f.Num == 8 && f.Type == protowire.BytesType:
			if p.sqrtPrice, err = decodeBigDec(string(f.Bytes)); err != nil {
				return p, fmt.Errorf("current sqrt price: %w", err)
			}
		case f.Num == 9 && f.Type == protowire.VarintType:
			tick = int64(f.Value)
		case f.Num == 10 && f.Type == protowire.VarintType:
			spacing = f.Value
		case f.Num == 12 && f.Type == protowire.BytesType:
			d, err := decodeDec(string(f.Bytes))
			if err != nil {
				return p, fmt.Errorf("spread factor: %w", err)
			}
			p.swapFee = d.String()
		}
	}
	if token0 == "" || token1 == "" {
		return p, fmt.Errorf("pool %d: tokens %q, %q", p.id, token0, token1)
	}
	if spacing == 0 || spacing > 1<<40 {
		return p, fmt.Errorf("pool %d: tick spacing %d", p.id, spacing)
	}
	p.denoms, p.tickSpacing, p.tick = []string{token0, token1}, int64(spacing), tick
	// A pool without a position yet has no price: it is set by the first.
	if p.sqrtPrice == "" || strings.Trim(p.sqrtPrice, "0.") == "" {
		p.sqrtPrice, p.tick = "", nil
	}
	return p, nil
}

// decodeCosmWasmPool reads a CosmWasmPool{contract_address=1, pool_id=2}:
// the record names no denoms (the contract holds them), as the create
// message does not.
func decodeCosmWasmPool(b []byte) (openingPool, error) {
	p := openingPool{typ: "cosmwasm", denoms: []string{}}
	fs, err := wire.Fields(b)
	if err != nil {
		return p, err
	}
	for _, f := range fs {
		switch {
		case f.Num == 1 && f.Type == protowire.BytesType:
			p.address = string(f.Bytes)
		case f.Num == 2 && f.Type == protowire.VarintType:
			p.id = int64(f.Value)
		}
	}
	return p, nil
}

// openingPosition is a Position{position_id=1, address=2, pool_id=3,
// lower_tick=4, upper_tick=5, join_time=6, liquidity=7 Dec}.
type openingPosition struct {
	id, pool     int64
	owner        string
	lower, upper int64
	liquidity    string
	joinTime     any // time.Time or nil
}

// decodePositionPair reads a Pair{key=1, value=2} of the store read: the
// key is the prefix and the position id in decimal, the value the
// Position, whose id must be the key's.
func decodePositionPair(b []byte) (openingPosition, error) {
	var p openingPosition
	fs, err := wire.Fields(b)
	if err != nil {
		return p, err
	}
	var key, value []byte
	for _, f := range fs {
		switch {
		case f.Num == 1 && f.Type == protowire.BytesType:
			key = f.Bytes
		case f.Num == 2 && f.Type == protowire.BytesType:
			value = f.Bytes
		}
	}
	if !bytes.HasPrefix(key, positionIDPrefix) {
		return p, fmt.Errorf("key %x is not a position's", key)
	}
	keyID, err := strconv.ParseUint(strings.TrimPrefix(string(key[len(positionIDPrefix):]), "|"), 10, 63)
	if err != nil {
		return p, fmt.Errorf("key %x is not a position's: %w", key, err)
	}
	fs, err = wire.Fields(value)
	if err != nil {
		return p, fmt.Errorf("position %d: %w", keyID, err)
	}
	for _, f := range fs {
		switch {
		case f.Num == 1 && f.Type == protowire.VarintType:
			p.id = int64(f.Value)
		case f.Num == 2 && f.Type == protowire.BytesType:
			p.owner = string(f.Bytes)
		case f.Num == 3 && f.Type == protowire.VarintType:
			p.pool = int64(f.Value)
		case f.Num == 4 && f.Type == protowire.VarintType:
			p.lower = int64(f.Value)
		case f.Num == 5 && f.Type == protowire.VarintType:
			p.upper = int64(f.Value)
		case f.Num == 6 && f.Type == protowire.BytesType:
			t, err := decodeTimestamp(f.Bytes)
			if err != nil {
				return p, fmt.Errorf("position %d: join time: %w", keyID, err)
			}
			p.joinTime = t
		case f.Num == 7 && f.Type == protowire.BytesType:
			d, err := decodeDec(string(f.Bytes))
			if err != nil {
				return p, fmt.Errorf("position %d: liquidity: %w", keyID, err)
			}
			p.liquidity = d.String()
		}
	}
	switch {
	case uint64(p.id) != keyID:
		return p, fmt.Errorf("position %d stored under the key of %d", p.id, keyID)
	case p.owner == "" || p.pool <= 0 || p.lower >= p.upper || p.liquidity == "" || strings.HasPrefix(p.liquidity, "-"):
		return p, fmt.Errorf("position %d: owner %q, pool %d, ticks [%d, %d), liquidity %q", p.id, p.owner, p.pool, p.lower, p.upper, p.liquidity)
	}
	return p, nil
}

// decodeTimestamp reads a google.protobuf.Timestamp{seconds=1, nanos=2}.
func decodeTimestamp(b []byte) (time.Time, error) {
	fs, err := wire.Fields(b)
	if err != nil {
		return time.Time{}, err
	}
	var sec, nsec int64
	for _, f := range fs {
		switch {
		case f.Num == 1 && f.Type == protowire.VarintType:
			sec = int64(f.Value)
		case f.Num == 2 && f.Type == protowire.VarintType:
			nsec = int64(int32(f.Value))
		}
	}
	return time.Unix(sec, nsec).UTC(), nil
}

// decodeBigDec reads an osmomath.BigDec as gogoproto writes it (the
// integer of 10^36 units), or a decimal string, as a decimal string with
// 36 places.
func decodeBigDec(s string) (string, error) {
	digits := s
	if strings.Contains(s, ".") {
		i, f, _ := strings.Cut(s, ".")
		if len(f) > 36 {
			return "", fmt.Errorf("bad BigDec %q", s)
		}
		digits = clmath.StripPoint(i+"."+f, 36)
	}
	v, ok := new(big.Int).SetString(digits, 10)
	if !ok {
		return "", fmt.Errorf("bad BigDec %q", s)
	}
	return clmath.Fixed(v, 36), nil
}

// weightPrecision is the balancer's GuaranteedWeightPrecision: a pool
// stores its assets' weights times 2^30.
var weightPrecision = big.NewInt(1 << 30)

// unscaleWeights divides a balancer pool's stored weights (positive
// integers) by 2^30, as its create message gives them, when all divide;
// otherwise (weights being changed smoothly) they stay as stored: integers
// in the same ratios.
func unscaleWeights(ws []string) []string {
	out := make([]string, len(ws))
	for i, w := range ws {
		v, _ := new(big.Int).SetString(w, 10)
		q, r := new(big.Int).QuoRem(v, weightPrecision, new(big.Int))
		if r.Sign() != 0 {
			return ws
		}
		out[i] = q.String()
	}
	return out
}

// isInteger reports whether s is a non-negative integer.
func isInteger(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
