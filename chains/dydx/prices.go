package dydx

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/chains/wire"
)

// MsgUpdateMarketPrices is the type URL of the proposer's oracle price
// update (chain-events.md §6.3).
const MsgUpdateMarketPrices = "/dydxprotocol.prices.MsgUpdateMarketPrices"

var (
	nativeTable  = chains.Table{Name: "dydx_native_token", Columns: []string{"chain_id", "height", "denom", "decimals", "market_id", "quote_denom"}}
	marketsTable = chains.Table{Name: "dydx_markets", Columns: []string{"chain_id", "height", "market_id", "pair", "exponent"}}
	pricesTable  = chains.Table{Name: "dydx_prices", Columns: []string{"chain_id", "height", "market_id", "time", "price"}}
)

// priceRows appends one dydx_prices row per market price update of the
// block's successful MsgUpdateMarketPrices messages.
func priceRows(b *chains.Block, out *chains.Rows) error {
	for t := range b.Txs {
		tx := &b.Txs[t]
		if !tx.Succeeded() {
			continue
		}
		for _, m := range tx.Messages {
			if m.TypeURL != MsgUpdateMarketPrices {
				continue
			}
			updates, err := decodePriceUpdates(m)
			if err != nil {
				return fmt.Errorf("height %d tx %d: %s: %w", b.Height, tx.Index, m.TypeURL, err)
			}
			for _, u := range updates {
				out.Add(pricesTable.Name, b.ChainID, b.Height, u.market, b.Time, strconv.FormatUint(u.price, 10))
			}
		}
	}
	return nil
}

type priceUpdate struct {
	market int64
	price  uint64
}

// decodePriceUpdates reads MsgUpdateMarketPrices{market_price_updates=1
// repeated MarketPrice{market_id=1 uint32, price=2 uint64}}.
func decodePriceUpdates(m chains.Message) ([]priceUpdate, error) {
	pairs, err := repeatedPairs(m, "market_price_updates", "market_id", "price")
	if err != nil {
		return nil, err
	}
	out := make([]priceUpdate, 0, len(pairs))
	for _, p := range pairs {
		if p[0] > math.MaxUint32 {
			return nil, fmt.Errorf("market price update: market id %d is not a uint32", p[0])
		}
		out = append(out, priceUpdate{int64(p[0]), p[1]})
	}
	return out, nil
}

// repeatedPairs reads field 1 of a message, a repeated message of two
// integer fields (1 and 2), from its protobuf bytes, or from its proto3
// JSON (field and the two keys named) when the kind decoded it. Values are
// the varints' 64 bits: a negative intN is its two's complement, as the
// wire format writes it.
func repeatedPairs(m chains.Message, field, a, b string) ([][2]uint64, error) {
	if m.JSON != nil {
		var msg map[string][]map[string]json.Number
		dec := json.NewDecoder(bytes.NewReader(m.JSON))
		dec.UseNumber()
		if err := dec.Decode(&msg); err != nil {
			return nil, err
		}
		out := make([][2]uint64, 0, len(msg[field]))
		for _, e := range msg[field] {
			x, err1 := jsonUint64(e[a])
			y, err2 := jsonUint64(e[b])
			if err1 != nil || err2 != nil {
				return nil, fmt.Errorf("%s: %s %q and %s %q must be integers", field, a, e[a], b, e[b])
			}
			out = append(out, [2]uint64{x, y})
		}
		return out, nil
	}
	fs, err := wire.Fields(m.Raw)
	if err != nil {
		return nil, err
	}
	var out [][2]uint64
	for _, f := range fs {
		if f.Num != 1 || f.Type != protowire.BytesType {
			continue
		}
		inner, err := wire.Fields(f.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", field, err)
		}
		var pair [2]uint64
		for _, g := range inner {
			if (g.Num == 1 || g.Num == 2) && g.Type == protowire.VarintType {
				pair[g.Num-1] = g.Value
			}
		}
		out = append(out, pair)
	}
	return out, nil
}

// jsonUint64 is a JSON integer as the 64 bits of its varint; an absent
// value (proto3 JSON leaves zero out) is 0.
func jsonUint64(n json.Number) (uint64, error) {
	if n == "" {
		return 0, nil
	}
	if u, err := strconv.ParseUint(string(n), 10, 64); err == nil {
		return u, nil
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	return uint64(i), err
}

// genesisMarketRows appends, at chains.GenesisHeight, the oracle markets of
// the prices module's genesis state (pair from market_params, exponent and
// price from market_prices) as dydx_markets rows and their prices as
// dydx_prices rows, and the native token of the rewards params (denom,
// denom_exponent, market_id) with the quote asset's denom (asset 0) as
// the dydx_native_token row (decimals = -denom_exponent).
func genesisMarketRows(g *chains.Genesis, out *chains.Rows) error {
	var state struct {
		Rewards *struct {
			Params struct {
				Denom    string  `json:"denom"`
				Exponent intJSON `json:"denom_exponent"`
				MarketID intJSON `json:"market_id"`
			} `json:"params"`
		} `json:"rewards"`
		Assets *struct {
			Assets []struct {
				ID    intJSON `json:"id"`
				Denom string  `json:"denom"`
			} `json:"assets"`
		} `json:"assets"`
		Prices *struct {
			Params []struct {
				ID   intJSON `json:"id"`
				Pair string  `json:"pair"`
			} `json:"market_params"`
			Prices []struct {
				ID       intJSON `json:"id"`
				Exponent intJSON `json:"exponent"`
				Price    intJSON `json:"price"`
			} `json:"market_prices"`
		} `json:"prices"`
	}
	if err := json.Unmarshal(g.AppState, &state); err != nil {
		return fmt.Errorf("genesis prices: %w", err)
	}
	if state.Prices == nil {
		return fmt.Errorf("genesis prices: the app state has no prices module: %w", chains.ErrGenesisUnsupported)
	}
	quote := ""
	if state.Assets != nil {
		for _, a := range state.Assets.Assets {
			if a.ID == "0" {
				quote = a.Denom
			}
		}
	}
	if r := state.Rewards; r != nil && r.Params.Denom != "" && quote != "" {
		exp, err1 := strconv.ParseInt(string(r.Params.Exponent), 10, 32)
		market, err2 := strconv.ParseInt(string(r.Params.MarketID), 10, 32)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("genesis rewards params: exponent %q, market %q", r.Params.Exponent, r.Params.MarketID)
		}
		out.Add(nativeTable.Name, g.ChainID, int64(chains.GenesisHeight), r.Params.Denom, -exp, market, quote)
	}
	pairs := map[string]string{}
	for _, p := range state.Prices.Params {
		pairs[string(p.ID)] = p.Pair
	}
	for _, p := range state.Prices.Prices {
		id, err := strconv.ParseInt(string(p.ID), 10, 32)
		if err != nil {
			return fmt.Errorf("genesis market price id %q: %w", p.ID, err)
		}
		exp, err := strconv.ParseInt(string(p.Exponent), 10, 32)
		if err != nil {
			return fmt.Errorf("genesis market %d exponent %q: %w", id, p.Exponent, err)
		}
		if _, err := strconv.ParseUint(string(p.Price), 10, 64); err != nil {
			return fmt.Errorf("genesis market %d price %q: %w", id, p.Price, err)
		}
		out.Add(marketsTable.Name, g.ChainID, int64(chains.GenesisHeight), id, pairs[string(p.ID)], exp)
		out.Add(pricesTable.Name, g.ChainID, int64(chains.GenesisHeight), id, g.Time, string(p.Price))
	}
	return nil
}

// intJSON is an integer written as a JSON number or, in proto3 JSON, a
// string; it keeps the digits.
type intJSON string

func (n *intJSON) UnmarshalJSON(b []byte) error {
	s := string(bytes.Trim(b, `"`))
	if _, err := strconv.ParseInt(s, 10, 64); err != nil {
		if _, err := strconv.ParseUint(s, 10, 64); err != nil {
			return fmt.Errorf("%s is not an integer", b)
		}
	}
	*n = intJSON(s)
	return nil
}
