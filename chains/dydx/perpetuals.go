package dydx

import (
	"encoding/json"
	"fmt"

	"github.com/chainlens/chainlens/chains"
)

var perpetualsTable = chains.Table{Name: "dydx_perpetuals", Columns: []string{
	"chain_id", "height", "perpetual_id", "ticker", "market_id", "atomic_resolution", "market_type",
}}

var _ chains.GenesisAdapter = (*Adapter)(nil)

// GenesisTables lists the generic genesis tables (balances), the perpetual
// and oracle market catalogs and the genesis oracle prices.
func (a *Adapter) GenesisTables() []chains.Table {
	return append(a.Adapter.GenesisTables(), perpetualsTable, marketsTable, pricesTable, nativeTable, fundingParamsTable)
}

// GenesisRows appends the generic genesis rows and one dydx_perpetuals row
// per perpetual of the perpetuals module's genesis state
// (app_state.perpetuals.perpetuals[].params, chain-events.md §6.3).
func (a *Adapter) GenesisRows(g *chains.Genesis, out *chains.Rows) error {
	if err := a.Adapter.GenesisRows(g, out); err != nil {
		return err
	}
	var state struct {
		Perpetuals *struct {
			Perpetuals []struct {
				Params perpetualParams `json:"params"`
			} `json:"perpetuals"`
		} `json:"perpetuals"`
	}
	if err := json.Unmarshal(g.AppState, &state); err != nil {
		return fmt.Errorf("genesis perpetuals: %w", err)
	}
	if state.Perpetuals == nil {
		return fmt.Errorf("genesis perpetuals: the app state has no perpetuals module: %w", chains.ErrGenesisUnsupported)
	}
	for _, p := range state.Perpetuals.Perpetuals {
		if err := p.Params.validate(); err != nil {
			return fmt.Errorf("genesis perpetuals: %w", err)
		}
		out.Add(perpetualsTable.Name, g.ChainID, int64(chains.GenesisHeight), p.Params.ID, p.Params.Ticker, p.Params.MarketID,
			p.Params.AtomicResolution, int64(p.Params.MarketType))
	}
	if err := genesisFundingRows(g, out); err != nil {
		return err
	}
	return genesisMarketRows(g, out)
}

// perpetualParams is PerpetualParams as a genesis file writes it.
type perpetualParams struct {
	ID               int64      `json:"id"`
	Ticker           string     `json:"ticker"`
	MarketID         int64      `json:"market_id"`
	AtomicResolution int64      `json:"atomic_resolution"`
	MarketType       marketType `json:"market_type"`
	// DefaultFunding and LiquidityTier are read from state snapshots only
	// (genesisFundingRows reads the genesis ones itself).
	DefaultFunding int64 `json:"-"`
	LiquidityTier  int64 `json:"-"`
}

// marketType is PerpetualMarketType, written as its number or, in proto3
// JSON, its name.
type marketType int64

var marketTypes = map[string]marketType{
	"PERPETUAL_MARKET_TYPE_UNSPECIFIED": 0, "PERPETUAL_MARKET_TYPE_CROSS": 1, "PERPETUAL_MARKET_TYPE_ISOLATED": 2,
}

func (m *marketType) UnmarshalJSON(b []byte) error {
	var name string
	if err := json.Unmarshal(b, &name); err == nil {
		v, ok := marketTypes[name]
		if !ok {
			return fmt.Errorf("unknown perpetual market type %q", name)
		}
		*m = v
		return nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("perpetual market type %s: %w", b, err)
	}
	*m = marketType(n)
	return nil
}

func (p perpetualParams) validate() error {
	if p.Ticker == "" {
		return fmt.Errorf("perpetual %d has no ticker", p.ID)
	}
	return nil
}
