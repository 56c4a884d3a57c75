package dydxtest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/chainlens/chainlens/chains/dydx"
	"github.com/chainlens/chainlens/chains/wire"
)

// CatalogQuerier answers the state queries of a dYdX snapshot
// (dydx.Adapter.StateQueries: x/perpetuals AllPerpetuals, AllLiquidityTiers
// and Params, x/prices AllMarketParams and AllMarketPrices, x/epochs
// EpochInfoAll) through the snapshot.Querier interface, at LastHeight only,
// from the node's own answers recorded at that height (truth/perpetuals.json,
// liquidity_tiers.json, perpetuals_params.json, market_params.json,
// market_prices.json, epochs.json), encoded as the protobuf the node sends
// (chain-events.md §6.3 and v4-chain's protos; a list's items in field 1
// and a PageResponse in field 2). No dYdX node can run in the tests; this is
// the recording replayed at its height, lists in pages of PageSize items.
// Tests may change or append items (a market listed after genesis).
type CatalogQuerier struct {
	PageSize       int
	Perpetuals     [][]byte
	LiquidityTiers [][]byte
	Params         []byte
	MarketParams   [][]byte
	MarketPrices   [][]byte
	Epochs         [][]byte
}

// NewCatalogQuerier loads the recorded catalog.
func NewCatalogQuerier() (*CatalogQuerier, error) {
	dir := filepath.Join(Dir(), "truth")
	var perps struct {
		Perpetual []struct {
			Params struct {
				ID               int64  `json:"id"`
				Ticker           string `json:"ticker"`
				MarketID         int64  `json:"market_id"`
				AtomicResolution int64  `json:"atomic_resolution"`
				DefaultFunding   int64  `json:"default_funding_ppm"`
				LiquidityTier    int64  `json:"liquidity_tier"`
				MarketType       string `json:"market_type"`
			} `json:"params"`
		} `json:"perpetual"`
	}
	var tiers struct {
		Tiers []struct {
			ID                  int64 `json:"id"`
			InitialMargin       int64 `json:"initial_margin_ppm"`
			MaintenanceFraction int64 `json:"maintenance_fraction_ppm"`
		} `json:"liquidity_tiers"`
	}
	var perpParams struct {
		Params struct {
			Clamp    int64 `json:"funding_rate_clamp_factor_ppm"`
			Vote     int64 `json:"premium_vote_clamp_factor_ppm"`
			MinVotes int64 `json:"min_num_votes_per_sample"`
		} `json:"params"`
	}
	var epochs struct {
		List []struct {
			Name     string `json:"name"`
			Duration int64  `json:"duration"`
		} `json:"epoch_info"`
	}
	var params struct {
		MarketParams []struct {
			ID   int64  `json:"id"`
			Pair string `json:"pair"`
		} `json:"market_params"`
	}
	var prices struct {
		MarketPrices []struct {
			ID       int64       `json:"id"`
			Exponent int64       `json:"exponent"`
			Price    json.Number `json:"price"`
		} `json:"market_prices"`
	}
	for name, v := range map[string]any{"perpetuals.json": &perps, "market_params.json": &params, "market_prices.json": &prices,
		"liquidity_tiers.json": &tiers, "perpetuals_params.json": &perpParams, "epochs.json": &epochs} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, v); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	q := &CatalogQuerier{PageSize: 10}
	types := map[string]uint64{"PERPETUAL_MARKET_TYPE_UNSPECIFIED": 0, "PERPETUAL_MARKET_TYPE_CROSS": 1, "PERPETUAL_MARKET_TYPE_ISOLATED": 2}
	for _, p := range perps.Perpetual {
		mt, ok := types[p.Params.MarketType]
		if !ok {
			return nil, fmt.Errorf("perpetual %d: market type %q", p.Params.ID, p.Params.MarketType)
		}
		q.Perpetuals = append(q.Perpetuals, Perpetual(p.Params.ID, p.Params.Ticker, p.Params.MarketID, p.Params.AtomicResolution,
			p.Params.DefaultFunding, p.Params.LiquidityTier, mt))
	}
	for _, t := range tiers.Tiers {
		q.LiquidityTiers = append(q.LiquidityTiers, LiquidityTier(t.ID, t.InitialMargin, t.MaintenanceFraction))
	}
	q.Params = varints(uint64(perpParams.Params.Clamp), uint64(perpParams.Params.Vote), uint64(perpParams.Params.MinVotes))
	for _, e := range epochs.List {
		b := protowire.AppendTag(nil, 1, protowire.BytesType)
		b = protowire.AppendString(b, e.Name)
		b = protowire.AppendTag(b, 3, protowire.VarintType)
		q.Epochs = append(q.Epochs, protowire.AppendVarint(b, uint64(e.Duration)))
	}
	for _, p := range params.MarketParams {
		q.MarketParams = append(q.MarketParams, MarketParam(p.ID, p.Pair))
	}
	for _, p := range prices.MarketPrices {
		price, err := strconv.ParseUint(string(p.Price), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("market %d price %q: %w", p.ID, p.Price, err)
		}
		q.MarketPrices = append(q.MarketPrices, MarketPrice(p.ID, p.Exponent, price))
	}
	return q, nil
}

// Perpetual encodes Perpetual{params=1 PerpetualParams{id=1, ticker=2,
// market_id=3, atomic_resolution=4 (sint32), default_funding_ppm=5
// (sint32), liquidity_tier=6, market_type=7}}.
func Perpetual(id int64, ticker string, marketID, atomicResolution, defaultFunding, liquidityTier int64, marketType uint64) []byte {
	var p []byte
	p = protowire.AppendTag(p, 1, protowire.VarintType)
	p = protowire.AppendVarint(p, uint64(id))
	p = protowire.AppendTag(p, 2, protowire.BytesType)
	p = protowire.AppendString(p, ticker)
	p = protowire.AppendTag(p, 3, protowire.VarintType)
	p = protowire.AppendVarint(p, uint64(marketID))
	p = protowire.AppendTag(p, 4, protowire.VarintType)
	p = protowire.AppendVarint(p, protowire.EncodeZigZag(atomicResolution))
	p = protowire.AppendTag(p, 5, protowire.VarintType)
	p = protowire.AppendVarint(p, protowire.EncodeZigZag(defaultFunding))
	p = protowire.AppendTag(p, 6, protowire.VarintType)
	p = protowire.AppendVarint(p, uint64(liquidityTier))
	p = protowire.AppendTag(p, 7, protowire.VarintType)
	p = protowire.AppendVarint(p, marketType)
	out := protowire.AppendTag(nil, 1, protowire.BytesType)
	return protowire.AppendBytes(out, p)
}

// LiquidityTier encodes LiquidityTier{id=1, initial_margin_ppm=3,
// maintenance_fraction_ppm=4}.
func LiquidityTier(id, initialMargin, maintenanceFraction int64) []byte {
	b := protowire.AppendTag(nil, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(id))
	b = protowire.AppendTag(b, 3, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(initialMargin))
	b = protowire.AppendTag(b, 4, protowire.VarintType)
	return protowire.AppendVarint(b, uint64(maintenanceFraction))
}

// varints encodes a message of varint fields 1, 2, ... with the values.
func varints(vs ...uint64) []byte {
	var b []byte
	for i, v := range vs {
		b = protowire.AppendTag(b, protowire.Number(i+1), protowire.VarintType)
		b = protowire.AppendVarint(b, v)
	}
	return b
}

// MarketParam encodes MarketParam{id=1, pair=2}.
func MarketParam(id int64, pair string) []byte {
	b := protowire.AppendTag(nil, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(id))
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	return protowire.AppendString(b, pair)
}

// MarketPrice encodes MarketPrice{id=1, exponent=2 (sint32), price=3}.
func MarketPrice(id, exponent int64, price uint64) []byte {
	b := protowire.AppendTag(nil, 1, protowire.VarintType)
	b = protowire.AppendVarint(b, uint64(id))
	b = protowire.AppendTag(b, 2, protowire.VarintType)
	b = protowire.AppendVarint(b, protowire.EncodeZigZag(exponent))
	b = protowire.AppendTag(b, 3, protowire.VarintType)
	return protowire.AppendVarint(b, price)
}

// ABCIQuery answers a state query at LastHeight: x/perpetuals Params as
// one item, a list query with the page that the request's PageRequest key
// (an item offset written by an earlier answer) starts.
func (q *CatalogQuerier) ABCIQuery(_ context.Context, path string, data []byte, height int64) ([]byte, error) {
	if height != LastHeight {
		return nil, fmt.Errorf("recorded catalog: height %d: the recording holds the state at %d only", height, LastHeight)
	}
	var items [][]byte
	switch path {
	case dydx.PathPerpetualsParams: // QueryParamsResponse{params=1}
		if len(data) != 0 {
			return nil, fmt.Errorf("%s: the request is empty, got %x", path, data)
		}
		out := protowire.AppendTag(nil, 1, protowire.BytesType)
		return protowire.AppendBytes(out, q.Params), nil
	case dydx.PathAllLiquidityTiers:
		items = q.LiquidityTiers
	case dydx.PathEpochInfoAll:
		items = q.Epochs
	case dydx.PathAllPerpetuals:
		items = q.Perpetuals
	case dydx.PathAllMarketParams:
		items = q.MarketParams
	case dydx.PathAllMarketPrices:
		items = q.MarketPrices
	default:
		return nil, fmt.Errorf("unknown query path: %s", path)
	}
	start := 0
	fs, err := wire.Fields(data)
	if err != nil {
		return nil, err
	}
	for _, f := range fs {
		if f.Num != 1 {
			continue
		}
		pfs, err := wire.Fields(f.Bytes)
		if err != nil {
			return nil, err
		}
		for _, pf := range pfs {
			if pf.Num == 1 {
				if start, err = strconv.Atoi(string(pf.Bytes)); err != nil {
					return nil, fmt.Errorf("page key %q: %w", pf.Bytes, err)
				}
			}
		}
	}
	end := min(start+q.PageSize, len(items))
	var out []byte
	for _, it := range items[start:end] {
		out = protowire.AppendTag(out, 1, protowire.BytesType)
		out = protowire.AppendBytes(out, it)
	}
	if end < len(items) {
		page := protowire.AppendTag(nil, 1, protowire.BytesType)
		page = protowire.AppendString(page, strconv.Itoa(end))
		out = protowire.AppendTag(out, 2, protowire.BytesType)
		out = protowire.AppendBytes(out, page)
	}
	return out, nil
}

// Items returns the answers' items by path, as snapshot.TakeState returns
// them.
func (q *CatalogQuerier) Items() map[string][][]byte {
	return map[string][][]byte{
		dydx.PathAllPerpetuals: q.Perpetuals, dydx.PathAllLiquidityTiers: q.LiquidityTiers, dydx.PathPerpetualsParams: {q.Params},
		dydx.PathAllMarketParams: q.MarketParams, dydx.PathAllMarketPrices: q.MarketPrices, dydx.PathEpochInfoAll: q.Epochs,
	}
}
