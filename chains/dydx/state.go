package dydx

import (
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/chains/wire"
)

// The state queries of a dYdX snapshot (chain-events.md §6.3): the
// perpetual and oracle market catalogs, and what the funding replay needs
// for each perpetual (liquidity tiers, x/perpetuals params, epochs).
// Markets listed after genesis, by a governance proposal
// (MsgCreateOracleMarket, MsgCreatePerpetual, MsgCreateClobPair) or
// permissionlessly (x/listing, whose parameters the chain derives from its
// state), appear in the blocks only as proposal bytes or not at all, so the
// catalog follows the state snapshots.
const (
	PathAllPerpetuals     = "/dydxprotocol.perpetuals.Query/AllPerpetuals"
	PathAllLiquidityTiers = "/dydxprotocol.perpetuals.Query/AllLiquidityTiers"
	PathPerpetualsParams  = "/dydxprotocol.perpetuals.Query/Params"
	PathAllMarketParams   = "/dydxprotocol.prices.Query/AllMarketParams"
	PathAllMarketPrices   = "/dydxprotocol.prices.Query/AllMarketPrices"
	PathEpochInfoAll      = "/dydxprotocol.epochs.Query/EpochInfoAll"
)

var _ chains.StateAdapter = (*Adapter)(nil)

// StateQueries lists the catalog and funding queries.
func (a *Adapter) StateQueries() []chains.StateQuery {
	return []chains.StateQuery{
		{Path: PathAllPerpetuals, Paginated: true},
		{Path: PathAllLiquidityTiers, Paginated: true},
		{Path: PathPerpetualsParams},
		{Path: PathAllMarketParams, Paginated: true},
		{Path: PathAllMarketPrices, Paginated: true},
		{Path: PathEpochInfoAll, Paginated: true},
	}
}

// StateTables lists the perpetual and oracle market catalogs and the
// funding parameters, keyed by perpetual and market id.
func (a *Adapter) StateTables() []chains.StateTable {
	return []chains.StateTable{
		{Table: perpetualsTable, Key: []string{"perpetual_id"}},
		{Table: marketsTable, Key: []string{"market_id"}},
		{Table: fundingParamsTable, Key: []string{"perpetual_id"}},
	}
}

// StateRows appends one dydx_perpetuals row and one dydx_funding_params
// row per perpetual (Perpetual.params; its liquidity tier's funding bound,
// the funding epochs' durations, x/perpetuals' minimum votes per sample,
// as the genesis rows), and one dydx_markets row per oracle market: its
// pair from MarketParam, its exponent from MarketPrice (MarketParam.exponent
// is deprecated; the price carries the exponent in force).
func (a *Adapter) StateRows(chainID string, height int64, items map[string][][]byte, out *chains.Rows) error {
	f, err := decodeFundingState(items)
	if err != nil {
		return err
	}
	for _, b := range items[PathAllPerpetuals] {
		p, err := decodePerpetual(b)
		if err != nil {
			return fmt.Errorf("perpetual: %w", err)
		}
		bound, ok := f.bounds[p.LiquidityTier]
		if !ok {
			return fmt.Errorf("perpetual %d names liquidity tier %d, which the node does not list", p.ID, p.LiquidityTier)
		}
		out.Add(perpetualsTable.Name, chainID, height, p.ID, p.Ticker, p.MarketID, p.AtomicResolution, int64(p.MarketType))
		out.Add(fundingParamsTable.Name, chainID, height, p.ID, p.DefaultFunding, bound, f.tick, f.sample, f.minVotes)
	}
	pairs := map[int64]string{}
	for _, b := range items[PathAllMarketParams] {
		id, pair, err := decodeMarketParam(b)
		if err != nil {
			return fmt.Errorf("market param: %w", err)
		}
		pairs[id] = pair
	}
	for _, b := range items[PathAllMarketPrices] {
		id, exp, err := decodeMarketPrice(b)
		if err != nil {
			return fmt.Errorf("market price: %w", err)
		}
		pair, ok := pairs[id]
		if !ok {
			return fmt.Errorf("market %d has a price but no params", id)
		}
		out.Add(marketsTable.Name, chainID, height, id, pair, exp)
	}
	return nil
}

// fundingState is what the funding parameters of every perpetual share.
type fundingState struct {
	bounds       map[int64]int64 // liquidity tier id -> max |rate| ppm
	tick, sample int64           // epoch durations, seconds
	minVotes     int64
}

// decodeFundingState reads the liquidity tiers (LiquidityTier{id=1,
// initial_margin_ppm=3, maintenance_fraction_ppm=4}), x/perpetuals Params
// (funding_rate_clamp_factor_ppm=1, min_num_votes_per_sample=3) and the
// funding epochs (EpochInfo{name=1, duration=3}).
func decodeFundingState(items map[string][][]byte) (fundingState, error) {
	st := fundingState{bounds: map[int64]int64{}}
	params := items[PathPerpetualsParams]
	if len(params) != 1 {
		return st, fmt.Errorf("x/perpetuals params: %d answers", len(params))
	}
	var clamp int64
	fs, err := wire.Fields(params[0])
	if err != nil {
		return st, fmt.Errorf("x/perpetuals params: %w", err)
	}
	for _, f := range fs {
		switch {
		case f.Num == 1 && f.Type == protowire.VarintType:
			clamp, err = uint32Field("funding_rate_clamp_factor_ppm", f.Value)
		case f.Num == 3 && f.Type == protowire.VarintType:
			st.minVotes, err = uint32Field("min_num_votes_per_sample", f.Value)
		}
		if err != nil {
			return st, fmt.Errorf("x/perpetuals params: %w", err)
		}
	}
	for _, b := range items[PathAllLiquidityTiers] {
		fs, err := wire.Fields(b)
		if err != nil {
			return st, fmt.Errorf("liquidity tier: %w", err)
		}
		var id, im, mf int64
		for _, f := range fs {
			switch {
			case f.Num == 1 && f.Type == protowire.VarintType:
				id, err = uint32Field("id", f.Value)
			case f.Num == 3 && f.Type == protowire.VarintType:
				im, err = uint32Field("initial_margin_ppm", f.Value)
			case f.Num == 4 && f.Type == protowire.VarintType:
				mf, err = uint32Field("maintenance_fraction_ppm", f.Value)
			}
			if err != nil {
				return st, fmt.Errorf("liquidity tier: %w", err)
			}
		}
		st.bounds[id] = MaxAbsFundingRatePpm(clamp, im, mf)
	}
	for _, b := range items[PathEpochInfoAll] {
		fs, err := wire.Fields(b)
		if err != nil {
			return st, fmt.Errorf("epoch info: %w", err)
		}
		var name string
		var duration int64
		for _, f := range fs {
			switch {
			case f.Num == 1 && f.Type == protowire.BytesType:
				name = string(f.Bytes)
			case f.Num == 3 && f.Type == protowire.VarintType:
				if duration, err = uint32Field("duration", f.Value); err != nil {
					return st, fmt.Errorf("epoch info: %w", err)
				}
			}
		}
		switch name {
		case EpochFundingTick:
			st.tick = duration
		case EpochFundingSample:
			st.sample = duration
		}
	}
	if st.tick <= 0 || st.sample <= 0 {
		return st, fmt.Errorf("epochs %s (%ds) and %s (%ds) must both have a duration", EpochFundingTick, st.tick, EpochFundingSample, st.sample)
	}
	return st, nil
}

// decodePerpetual reads Perpetual{params=1 PerpetualParams{id=1,
// ticker=2, market_id=3, atomic_resolution=4 (sint32),
// default_funding_ppm=5 (sint32), liquidity_tier=6, market_type=7}}.
func decodePerpetual(b []byte) (perpetualParams, error) {
	var p perpetualParams
	fs, err := wire.Fields(b)
	if err != nil {
		return p, err
	}
	var params []byte
	found := false
	for _, f := range fs {
		if f.Num == 1 && f.Type == protowire.BytesType {
			params, found = f.Bytes, true
		}
	}
	if !found {
		return p, fmt.Errorf("no params")
	}
	ps, err := wire.Fields(params)
	if err != nil {
		return p, err
	}
	for _, f := range ps {
		switch {
		case f.Num == 1 && f.Type == protowire.VarintType:
			p.ID, err = uint32Field("id", f.Value)
		case f.Num == 2 && f.Type == protowire.BytesType:
			p.Ticker = string(f.Bytes)
		case f.Num == 3 && f.Type == protowire.VarintType:
			p.MarketID, err = uint32Field("market_id", f.Value)
		case f.Num == 4 && f.Type == protowire.VarintType:
			p.AtomicResolution, err = sint32Field("atomic_resolution", f.Value)
		case f.Num == 5 && f.Type == protowire.VarintType:
			p.DefaultFunding, err = sint32Field("default_funding_ppm", f.Value)
		case f.Num == 6 && f.Type == protowire.VarintType:
			p.LiquidityTier, err = uint32Field("liquidity_tier", f.Value)
		case f.Num == 7 && f.Type == protowire.VarintType:
			p.MarketType = marketType(f.Value)
		}
		if err != nil {
			return p, err
		}
	}
	return p, p.validate()
}

// decodeMarketParam reads MarketParam{id=1, pair=2}.
func decodeMarketParam(b []byte) (id int64, pair string, err error) {
	fs, err := wire.Fields(b)
	if err != nil {
		return 0, "", err
	}
	for _, f := range fs {
		switch {
		case f.Num == 1 && f.Type == protowire.VarintType:
			if id, err = uint32Field("id", f.Value); err != nil {
				return 0, "", err
			}
		case f.Num == 2 && f.Type == protowire.BytesType:
			pair = string(f.Bytes)
		}
	}
	if pair == "" {
		return 0, "", fmt.Errorf("market %d has no pair", id)
	}
	return id, pair, nil
}

// decodeMarketPrice reads MarketPrice{id=1, exponent=2 (sint32)}.
func decodeMarketPrice(b []byte) (id, exponent int64, err error) {
	fs, err := wire.Fields(b)
	if err != nil {
		return 0, 0, err
	}
	for _, f := range fs {
		switch {
		case f.Num == 1 && f.Type == protowire.VarintType:
			id, err = uint32Field("id", f.Value)
		case f.Num == 2 && f.Type == protowire.VarintType:
			exponent, err = sint32Field("exponent", f.Value)
		}
		if err != nil {
			return 0, 0, err
		}
	}
	return id, exponent, nil
}

func uint32Field(name string, v uint64) (int64, error) {
	if v > math.MaxUint32 {
		return 0, fmt.Errorf("%s %d is not a uint32", name, v)
	}
	return int64(v), nil
}

func sint32Field(name string, v uint64) (int64, error) {
	n := protowire.DecodeZigZag(v)
	if n < math.MinInt32 || n > math.MaxInt32 {
		return 0, fmt.Errorf("%s %d is not an int32", name, n)
	}
	return n, nil
}
