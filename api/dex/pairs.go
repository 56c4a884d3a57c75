package dex

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/chainlens/chainlens/api/problem"
	report "github.com/chainlens/chainlens/report/dex"

	"cosmossdk.io/math"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/chainlens/chainlens/api"
)

// PairSummary is one pool pair of the summary.
type PairSummary struct {
	PoolAddress    string      `json:"pool_address"`
	PoolID         string      `json:"pool_id"`
	BaseName       string      `json:"base_name"`
	BaseSymbol     string      `json:"base_symbol"`
	BaseAddress    string      `json:"base_address"`
	QuoteName      string      `json:"quote_name"`
	QuoteSymbol    string      `json:"quote_symbol"`
	QuoteAddress   string      `json:"quote_address"`
	Price          json.Number `json:"price"`
	BaseVolume24h  json.Number `json:"base_volume_24h"`
	QuoteVolume24h json.Number `json:"quote_volume_24h"`
	Volume24h      json.Number `json:"volume_24h"`
	Volume7d       json.Number `json:"volume_7d"`
	Liquidity      json.Number `json:"liquidity"`
	LiquidityATOM  json.Number `json:"liquidity_atom"`
}

// PairsSummary is the pairs summary answer.
type PairsSummary struct {
	LastUpdateAt int64         `json:"last_update_at"`
	Data         []PairSummary `json:"data"`
}

// pairsSummary lists every pair of denoms of a pool (base before quote in
// the order of osmosis_known_pools.denoms) that has traded, by pool id, paged by
// limit/offset. From the dex_candles bars (osmosis_pair_candles): price =
// the last execution price (quote per base, display units), the display
// amounts and USD value traded over the hourly bars that overlap the last
// 24 hours and 7 days. liquidity = the pool's reserves (osmosis_pool_reserves_hourly)
// at the latest prices (osmosis_asset_prices), and in ATOM at ATOM's price
// (0 without a priced ATOM asset). last_update_at is the time of the last
// indexed block.
func (s *Service) pairsSummary(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	now := req.Now.UTC()
	day, week := now.Add(-24*time.Hour).Truncate(time.Hour), now.Add(-7*24*time.Hour).Truncate(time.Hour)
	var pools []struct {
		PoolID int64    `bun:"pool_id"`
		Denoms []string `bun:"denoms,array"`
	}
	if err := api.Reader(ctx, s.db).NewRaw("SELECT pool_id, denoms FROM osmosis_known_pools WHERE chain_id = ? ORDER BY pool_id", s.market.ChainID).Scan(ctx, &pools); err != nil {
		return nil, fmt.Errorf("pools: %w", err)
	}
	// The traded pairs are the keys of the monthly bars; the page is cut
	// from them before any pair's volumes are read.
	type key struct {
		PoolID int64  `bun:"pool_id"`
		Base   string `bun:"base"`
		Quote  string `bun:"quote"`
	}
	var keys []key
	if err := api.Reader(ctx, s.db).NewRaw("SELECT DISTINCT pool_id, base, quote FROM osmosis_pair_candles WHERE chain_id = ? AND tf = ?",
		s.market.ChainID, report.Month).Scan(ctx, &keys); err != nil {
		return nil, fmt.Errorf("traded pairs: %w", err)
	}
	traded := make(map[key]bool, len(keys))
	for _, k := range keys {
		traded[k] = true
	}
	var page []key
	skip, limit := req.Params.Int("offset"), req.Params.Int("limit")
pages:
	for _, pool := range pools {
		for i, base := range pool.Denoms {
			for _, quote := range pool.Denoms[i+1:] {
				k := key{pool.PoolID, base, quote}
				if !traded[k] {
					continue
				}
				if skip > 0 {
					skip--
					continue
				}
				if int64(len(page)) == limit {
					break pages
				}
				page = append(page, k)
			}
		}
	}
	out := PairsSummary{Data: []PairSummary{}, LastUpdateAt: fresh.Chains[0].Time.Unix()}
	if len(page) == 0 {
		return &api.Response{Body: out, Freshness: fresh}, nil
	}
	ids, bases, quotes := make([]int64, len(page)), make([]string, len(page)), make([]string, len(page))
	for i, k := range page {
		ids[i], bases[i], quotes[i] = k.PoolID, k.Base, k.Quote
	}
	var pairs []struct {
		key
		Price string `bun:"price"`
		B24   string `bun:"b24"`
		Q24   string `bun:"q24"`
		V24   string `bun:"v24"`
		V7    string `bun:"v7"`
	}
	// The 7 days are the hourly bars of the partial first and last days and
	// the daily bars (sums of the hourly ones) between, each aggregated per
	// pair by index range scans.
	d1, d2 := week.Add(-time.Nanosecond).Truncate(24*time.Hour).Add(24*time.Hour), now.Truncate(24*time.Hour)
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT k.pool_id, k.base, k.quote, c.close::text AS price,
			coalesce(h.b24, 0)::text AS b24, coalesce(h.q24, 0)::text AS q24, coalesce(h.v24, 0)::text AS v24,
			(coalesce(h.v7, 0) + coalesce(d.v7, 0))::text AS v7
		FROM unnest(?6::bigint[], ?7::text[], ?8::text[]) AS k(pool_id, base, quote)
		CROSS JOIN LATERAL (SELECT close FROM osmosis_pair_candles
				WHERE chain_id = ?0 AND tf = ?1 AND pool_id = k.pool_id AND base = k.base AND quote = k.quote
				ORDER BY bucket DESC LIMIT 1) c
		CROSS JOIN LATERAL (SELECT sum(base_amount) FILTER (WHERE bucket >= ?2) AS b24, sum(quote_amount) FILTER (WHERE bucket >= ?2) AS q24,
				sum(volume_usd) FILTER (WHERE bucket >= ?2) AS v24, sum(volume_usd) FILTER (WHERE bucket < ?4 OR bucket >= ?5) AS v7
			FROM osmosis_pair_candles WHERE chain_id = ?0 AND tf = 60 AND pool_id = k.pool_id AND base = k.base AND quote = k.quote
				AND bucket >= ?3 AND (bucket < ?4 OR bucket >= least(?2::timestamptz, ?5::timestamptz))) h
		CROSS JOIN LATERAL (SELECT sum(volume_usd) AS v7 FROM osmosis_pair_candles
			WHERE chain_id = ?0 AND tf = 1440 AND pool_id = k.pool_id AND base = k.base AND quote = k.quote
				AND bucket >= ?4 AND bucket < ?5) d`, s.market.ChainID, report.Month, day, week, d1, d2,
		pgdialect.Array(ids), pgdialect.Array(bases), pgdialect.Array(quotes)).Scan(ctx, &pairs); err != nil {
		return nil, fmt.Errorf("pair bars: %w", err)
	}
	at := make(map[key]int, len(pairs))
	for i, p := range pairs {
		at[p.key] = i
	}
	liq, atom, err := s.poolLiquidityNow(ctx, now)
	if err != nil {
		return nil, err
	}
	for _, k := range page {
		i, ok := at[k]
		if !ok {
			return nil, fmt.Errorf("pair %d %s/%s: no bars", k.PoolID, k.Base, k.Quote)
		}
		p := pairs[i]
		addr, err := s.poolAddress(k.PoolID)
		if err != nil {
			return nil, fmt.Errorf("address of pool %d: %w", k.PoolID, err)
		}
		b, q := s.market.Assets[k.Base], s.market.Assets[k.Quote]
		l := liq[k.PoolID]
		if l.IsNil() {
			l = math.LegacyZeroDec()
		}
		inATOM := math.LegacyZeroDec()
		if !atom.IsNil() && atom.IsPositive() {
			inATOM = l.Quo(atom)
		}
		out.Data = append(out.Data, PairSummary{PoolAddress: addr, PoolID: fmt.Sprint(k.PoolID),
			BaseName: b.Name, BaseSymbol: b.Symbol, BaseAddress: k.Base, QuoteName: q.Name, QuoteSymbol: q.Symbol, QuoteAddress: k.Quote,
			Price: api.Number(p.Price), BaseVolume24h: s.display(k.Base, p.B24), QuoteVolume24h: s.display(k.Quote, p.Q24),
			Volume24h: api.Number(p.V24), Volume7d: api.Number(p.V7), Liquidity: decNumber(l), LiquidityATOM: decNumber(inATOM)})
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}

// display renders a base-unit amount of denom in display units.
func (s *Service) display(denom, amount string) json.Number {
	d, err := math.LegacyNewDecFromStr(amount)
	if err != nil {
		return "0"
	}
	return api.Number(d.Quo(math.LegacyNewDec(10).Power(uint64(s.market.Exponent(denom)))).String())
}

// poolLiquidityNow is every pool's USD liquidity at t
// (report.PoolLiquidityAt: its latest reserves valued at the latest closes
// up to t; a denom without a price adds nothing) and ATOM's latest USD
// price up to t (nil without one).
func (s *Service) poolLiquidityNow(ctx context.Context, t time.Time) (map[int64]math.LegacyDec, math.LegacyDec, error) {
	liq, atom, err := s.poolLiquidityAtEach(ctx, []time.Time{t})
	if err != nil {
		return nil, math.LegacyDec{}, err
	}
	return liq[0], atom[0], nil
}

// poolLiquidityAtEach is poolLiquidityNow at each of ts: the hours' rows of
// report.PoolLiquidityHourly and ATOM's prices, not every pool's reserves
// and every denom's price.
func (s *Service) poolLiquidityAtEach(ctx context.Context, ts []time.Time) ([]map[int64]math.LegacyDec, []math.LegacyDec, error) {
	rows, err := report.PoolLiquidityAt(ctx, api.Reader(ctx, s.db), s.market.ChainID, ts)
	if err != nil {
		return nil, nil, err
	}
	if len(rows) == 0 {
		if err := s.hourlyBuilt(ctx, true); err != nil {
			return nil, nil, err
		}
	}
	liq, atoms := make([]map[int64]math.LegacyDec, len(ts)), make([]math.LegacyDec, len(ts))
	for i := range ts {
		liq[i] = map[int64]math.LegacyDec{}
	}
	for _, r := range rows {
		v, err := math.LegacyNewDecFromStr(r.USD)
		if err != nil {
			return nil, nil, fmt.Errorf("liquidity of pool %d: %q: %w", r.PoolID, r.USD, err)
		}
		liq[r.I][r.PoolID] = v
	}
	var atomDenoms []string
	for d, a := range s.market.Assets {
		if strings.EqualFold(a.Symbol, "ATOM") {
			atomDenoms = append(atomDenoms, d)
		}
	}
	if len(atomDenoms) == 0 {
		return liq, atoms, nil
	}
	sort.Strings(atomDenoms) // several ATOMs: the last denom's price, every time
	prices, err := s.pricesAtEach(ctx, ts, atomDenoms)
	if err != nil {
		return nil, nil, err
	}
	for _, d := range atomDenoms {
		for i := range ts {
			atoms[i] = prices[i][d]
		}
	}
	return liq, atoms, nil
}

// hourlyBuilt is a 503 (problem.ErrNotIndexed) while the dex_liquidity
// job's hourly rows of pools (or of assets) are behind the reserves and
// prices they come from (report.HourlyBehind); asked when a read of them
// found nothing.
func (s *Service) hourlyBuilt(ctx context.Context, pools bool) error {
	p, a, err := report.HourlyBehind(ctx, api.Reader(ctx, s.db), s.market.ChainID)
	if err != nil {
		return err
	}
	if (pools && p) || (!pools && a) {
		return fmt.Errorf("the hourly liquidity of %s is being built (%s): %w", s.market.ChainID, report.JobLiquidity, problem.ErrNotIndexed)
	}
	return nil
}
