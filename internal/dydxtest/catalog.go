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

// CatalogQuerier answers the dYdX catalog list queries (x/perpetuals
// AllPerpetuals, x/prices AllMarketParams and AllMarketPrices) through the
// snapshot.Querier interface, at LastHeight only, from the node's own
// answers recorded at that height (truth/perpetuals.json,
// market_params.json, market_prices.json), encoded as the protobuf the node
// sends (chain-events.md §6.3; the responses' items in field 1 and a
// PageResponse in field 2). No dYdX node can run in the tests; this is the
// recording replayed at its height, in pages of PageSize items. Tests may
// append items (a market listed after genesis).
type CatalogQuerier struct {
	PageSize     int
	Perpetuals   [][]byte
	MarketParams [][]byte
	MarketPrices [][]byte
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
				MarketType       string `json:"market_type"`
			} `json:"params"`
		} `json:"perpetual"`
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
	for name, v := range map[string]any{"perpetuals.json": &perps, "market_params.json": &params, "market_prices.json": &prices} {
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
		q.Perpetuals = append(q.Perpetuals, Perpetual(p.Params.ID, p.Params.Ticker, p.Params.MarketID, p.Params.AtomicResolution, mt))
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
// market_id=3, atomic_resolution=4 (sint32), market_type=7}}.
func Perpetual(id int64, ticker string, marketID, atomicResolution int64, marketType uint64) []byte {
	var p []byte
	p = protowire.AppendTag(p, 1, protowire.VarintType)
	p = protowire.AppendVarint(p, uint64(id))
	p = protowire.AppendTag(p, 2, protowire.BytesType)
	p = protowire.AppendString(p, ticker)
	p = protowire.AppendTag(p, 3, protowire.VarintType)
	p = protowire.AppendVarint(p, uint64(marketID))
	p = protowire.AppendTag(p, 4, protowire.VarintType)
	p = protowire.AppendVarint(p, protowire.EncodeZigZag(atomicResolution))
	p = protowire.AppendTag(p, 7, protowire.VarintType)
	p = protowire.AppendVarint(p, marketType)
	out := protowire.AppendTag(nil, 1, protowire.BytesType)
	return protowire.AppendBytes(out, p)
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

// ABCIQuery answers a catalog list query at LastHeight: the page that the
// request's PageRequest key (an item offset written by an earlier answer)
// starts.
func (q *CatalogQuerier) ABCIQuery(_ context.Context, path string, data []byte, height int64) ([]byte, error) {
	if height != LastHeight {
		return nil, fmt.Errorf("recorded catalog: height %d: the recording holds the state at %d only", height, LastHeight)
	}
	var items [][]byte
	switch path {
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
