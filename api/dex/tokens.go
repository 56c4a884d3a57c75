package dex

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"time"

	"cosmossdk.io/math"

	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/problem"
	report "github.com/chainlens/chainlens/report/dex"
)

// Token is the token record of the interface.
type Token struct {
	Symbol             string       `json:"symbol"`
	Denom              string       `json:"denom"`
	Name               string       `json:"name"`
	Display            string       `json:"display"`
	Main               bool         `json:"main"`
	Exponent           int          `json:"exponent"`
	MarketDataID       *string      `json:"market_data_id"`
	Volume24h          json.Number  `json:"volume_24h"`
	Volume24hChange    json.Number  `json:"volume_24h_change"`
	Price              json.Number  `json:"price"`
	Price1hChange      json.Number  `json:"price_1h_change"`
	Price24hChange     json.Number  `json:"price_24h_change"`
	Price7dChange      json.Number  `json:"price_7d_change"`
	Liquidity          json.Number  `json:"liquidity"`
	Liquidity24hChange json.Number  `json:"liquidity_24h_change"`
	MarketDataMcap     *json.Number `json:"market_data_mcap"`
}

// token answers one asset (by denom or symbol) or `all`: price from the
// hourly closes, liquidity = the asset's reserves in the catalog's pools at
// its price (both kept per hour in osmosis_asset_state_hourly by
// dex_liquidity from osmosis_asset_prices and osmosis_pool_reserves_hourly),
// volume over the hourly buckets of the last 24 hours
// (osmosis_asset_volume_hourly).
// Changes are percentages against the value 1 h, 24 h or 7 d before the
// request (0 when there was no value then). market_data_mcap is null: no
// market-data source is configured.
func (s *Service) token(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	now := req.Now.UTC()
	// One asset reads its own rows only; `all` every denom's.
	var only []string
	if asset := req.Params.String("asset"); asset != "all" {
		only = []string{s.denomOf(asset)}
	}
	// The four times' prices and the two times' pooled amounts are the
	// hours' rows of report.AssetStateHourly (an index range each).
	at := []time.Time{now, now.Add(-time.Hour), now.Add(-24 * time.Hour), now.Add(-7 * 24 * time.Hour)}
	states, err := report.AssetStatesAt(ctx, api.Reader(ctx, s.db), s.market.ChainID, at, only)
	if err != nil {
		return nil, err
	}
	if len(states) == 0 {
		if err := s.hourlyBuilt(ctx, false); err != nil {
			return nil, err
		}
	}
	prices, pooled := make([]map[string]math.LegacyDec, len(at)), make([]map[string]math.LegacyDec, len(at))
	for i := range at {
		prices[i], pooled[i] = map[string]math.LegacyDec{}, map[string]math.LegacyDec{}
	}
	for _, st := range states {
		for _, v := range []struct {
			text string
			into map[string]math.LegacyDec
		}{{st.PriceUSD, prices[st.I]}, {st.Reserves, pooled[st.I]}} {
			if v.text == "" {
				continue
			}
			d, err := math.LegacyNewDecFromStr(v.text)
			if err != nil {
				return nil, fmt.Errorf("state of %s: %q: %w", st.Denom, v.text, err)
			}
			v.into[st.Denom] = d
		}
	}
	denoms := map[string]bool{}
	for d := range s.market.Assets {
		denoms[d] = true
	}
	for d := range prices[0] {
		denoms[d] = true
	}
	var want []string
	if only == nil {
		for d := range denoms {
			want = append(want, d)
		}
		sort.Strings(want)
	} else {
		if !denoms[only[0]] {
			return nil, problem.Status(http.StatusNotFound, "asset %s not found", req.Params.String("asset"))
		}
		want = only
	}
	day := now.Add(-24 * time.Hour).Truncate(time.Hour)
	vfilter := ""
	if only != nil {
		vfilter = " AND denom = ANY(?3::text[])"
	}
	volumes, err := s.decMaps(ctx, 2, `SELECT 0 AS i, denom AS k, sum(volume_usd)::text AS v FROM osmosis_asset_volume_hourly
			WHERE chain_id = ?0 AND hour >= ?1`+vfilter+` GROUP BY denom
		UNION ALL
		SELECT 1, denom, sum(volume_usd)::text FROM osmosis_asset_volume_hourly
			WHERE chain_id = ?0 AND hour >= ?2 AND hour < ?1`+vfilter+` GROUP BY denom`, s.market.ChainID, day, day.Add(-24*time.Hour), pgdialect.Array(only))
	if err != nil {
		return nil, err
	}
	p0, p1, p24, p7d := prices[0], prices[1], prices[2], prices[3]
	r0, r24 := pooled[0], pooled[2]
	v24, vPrev := volumes[0], volumes[1]

	out := make([]Token, 0, len(want))
	for _, d := range want {
		a := s.market.Assets[d]
		liq := func(r, p map[string]math.LegacyDec) math.LegacyDec {
			amt, price := r[d], p[d]
			if amt.IsNil() || price.IsNil() || !amt.IsPositive() {
				return math.LegacyZeroDec()
			}
			return s.market.USDValue(d, amt.TruncateInt(), price)
		}
		t := Token{Symbol: a.Symbol, Denom: d, Name: a.Name, Display: a.Display, Main: a.Main, Exponent: s.market.Exponent(d),
			Volume24h: decNumber(v24[d]), Volume24hChange: change(v24[d], vPrev[d]),
			Price: decNumber(p0[d]), Price1hChange: change(p0[d], p1[d]), Price24hChange: change(p0[d], p24[d]), Price7dChange: change(p0[d], p7d[d]),
			Liquidity: decNumber(liq(r0, p0)), Liquidity24hChange: change(liq(r0, p0), liq(r24, p24))}
		if a.MarketDataID != "" {
			id := a.MarketDataID
			t.MarketDataID = &id
		}
		out = append(out, t)
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}

// pricesAtEach is every denom's (only's, unless nil) latest USD price up
// to each of ts, the i-th map of ts[i]: the hours' rows of
// report.AssetStateHourly, not a probe per denom and time.
func (s *Service) pricesAtEach(ctx context.Context, ts []time.Time, only []string) ([]map[string]math.LegacyDec, error) {
	states, err := report.AssetStatesAt(ctx, api.Reader(ctx, s.db), s.market.ChainID, ts, only)
	if err != nil {
		return nil, err
	}
	if len(states) == 0 {
		if err := s.hourlyBuilt(ctx, false); err != nil {
			return nil, err
		}
	}
	out := make([]map[string]math.LegacyDec, len(ts))
	for i := range out {
		out[i] = map[string]math.LegacyDec{}
	}
	for _, st := range states {
		if st.PriceUSD == "" {
			continue
		}
		d, err := math.LegacyNewDecFromStr(st.PriceUSD)
		if err != nil {
			return nil, fmt.Errorf("price of %s: %q: %w", st.Denom, st.PriceUSD, err)
		}
		out[st.I][st.Denom] = d
	}
	return out, nil
}

// decMaps runs a query of (i, k, v) rows into n maps of decimals, the i-th
// map of the rows of index i.
func (s *Service) decMaps(ctx context.Context, n int, q string, args ...any) ([]map[string]math.LegacyDec, error) {
	var rows []struct {
		I int    `bun:"i"`
		K string `bun:"k"`
		V string `bun:"v"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(q, args...).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("token data: %w", err)
	}
	out := make([]map[string]math.LegacyDec, n)
	for i := range out {
		out[i] = map[string]math.LegacyDec{}
	}
	for _, r := range rows {
		d, err := math.LegacyNewDecFromStr(r.V)
		if err != nil {
			return nil, fmt.Errorf("token data: %q: %w", r.V, err)
		}
		if r.I < 0 || r.I >= n {
			return nil, fmt.Errorf("token data: row index %d of %d", r.I, n)
		}
		out[r.I][r.K] = d
	}
	return out, nil
}

// decNumber renders a decimal (0 when unset) as a JSON number.
func decNumber(d math.LegacyDec) json.Number {
	if d.IsNil() {
		return "0"
	}
	return api.Number(d.String())
}

// change is the percentage change from before to now; 0 when there was no
// (or a zero) value before.
func change(now, before math.LegacyDec) json.Number {
	if now.IsNil() || before.IsNil() || before.IsZero() {
		return "0"
	}
	return api.Number(now.Sub(before).Quo(before).MulInt64(100).String())
}
