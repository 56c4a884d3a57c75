package dydx

import (
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/chains/wire"
)

// The catalog list queries of x/perpetuals and x/prices (chain-events.md
// §6.3). Markets listed after genesis, by a governance proposal
// (MsgCreateOracleMarket, MsgCreatePerpetual, MsgCreateClobPair) or
// permissionlessly (x/listing, whose parameters the chain derives from its
// state), appear in the blocks only as proposal bytes or not at all, so the
// catalog follows the state snapshots.
const (
	PathAllPerpetuals   = "/dydxprotocol.perpetuals.Query/AllPerpetuals"
	PathAllMarketParams = "/dydxprotocol.prices.Query/AllMarketParams"
	PathAllMarketPrices = "/dydxprotocol.prices.Query/AllMarketPrices"
)

var _ chains.StateAdapter = (*Adapter)(nil)

// StateLists lists the catalog queries.
func (a *Adapter) StateLists() []string {
	return []string{PathAllPerpetuals, PathAllMarketParams, PathAllMarketPrices}
}

// StateTables lists the perpetual and oracle market catalogs, keyed by
// perpetual and market id.
func (a *Adapter) StateTables() []chains.StateTable {
	return []chains.StateTable{
		{Table: perpetualsTable, Key: []string{"perpetual_id"}},
		{Table: marketsTable, Key: []string{"market_id"}},
	}
}

// StateRows appends one dydx_perpetuals row per perpetual
// (Perpetual.params) and one dydx_markets row per oracle market: its pair
// from MarketParam, its exponent from MarketPrice (MarketParam.exponent is
// deprecated; the price carries the exponent in force).
func (a *Adapter) StateRows(chainID string, height int64, items map[string][][]byte, out *chains.Rows) error {
	for _, b := range items[PathAllPerpetuals] {
		p, err := decodePerpetual(b)
		if err != nil {
			return fmt.Errorf("perpetual: %w", err)
		}
		out.Add(perpetualsTable.Name, chainID, height, p.ID, p.Ticker, p.MarketID, p.AtomicResolution, int64(p.MarketType))
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

// decodePerpetual reads Perpetual{params=1 PerpetualParams{id=1,
// ticker=2, market_id=3, atomic_resolution=4 (sint32), market_type=7}}.
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
