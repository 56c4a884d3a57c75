// Package dex serves the Osmosis dex and dex lens endpoints that are built
// (Service.Handlers lists them). Every number comes from the tables of the
// aggregator/dex jobs.
package dex

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	report "github.com/chainlens/chainlens/report/dex"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/problem"
	"github.com/chainlens/chainlens/api/route"
	"github.com/chainlens/chainlens/chains/osmosis"
	"github.com/chainlens/chainlens/config"
)

// Service answers the dex endpoints from the dex chain's report tables.
type Service struct {
	db     *bun.DB
	market report.Market
	chain  config.Chain
	ok     bool // a dex chain is configured
	// addrs remembers each pool's address (pool id → string): a
	// derivation (a hash and bech32) the same for ever, which the pool
	// lists would otherwise repeat for every pool on every answer.
	addrs sync.Map
}

// poolAddress is osmosis.PoolAddress of pool id on the dex chain.
func (s *Service) poolAddress(id int64) (string, error) {
	if a, ok := s.addrs.Load(id); ok {
		return a.(string), nil
	}
	a, err := osmosis.PoolAddress(s.market.Prefix, uint64(id))
	if err != nil {
		return "", err
	}
	s.addrs.Store(id, a)
	return a, nil
}

// New returns the service for the first configured chain of kind osmosis;
// without one every endpoint answers 503.
func New(cfg *config.Config, db *bun.DB) *Service {
	ch, ok := report.Chain(cfg)
	return &Service{db: db, market: report.NewMarket(ch), chain: ch, ok: ok}
}

// Handlers binds the built operations to the service.
func (s *Service) Handlers() map[route.ID]api.Handler {
	return map[route.ID]api.Handler{
		route.DexLensTopAssetsDateRange:    s.topAssetsDateRange,
		route.DexLensTopAssetsLastPeriod:   s.topAssetsLastPeriod,
		route.DexRealTimePrice:             s.realTimePrice,
		route.DexLensCumulativeVolume:      s.cumulativeVolume,
		route.DexLensPoolListings:          s.poolListings,
		route.DexPoolFees:                  s.poolFees,
		route.DexPoolLiquidity:             s.poolLiquidity,
		route.DexChainRevenue:              s.chainRevenue,
		route.DexToken:                     s.token,
		route.DexLensCumulativeProtocolR:   s.cumulativeProtocolRevenue,
		route.DexTokenChart:                s.tokenChart,
		route.DexPairChart:                 s.pairChart,
		route.DexPairsSummary:              s.pairsSummary,
		route.DexTradingMetrics:            s.tradingMetrics,
		route.DexLensActiveWhales:          s.activeWhales,
		route.DexLensLiquidityFlow:         s.liquidityFlow,
		route.DexLensCumulativeSupplySideR: s.cumulativeSupplySideRevenue,
		route.DexPosition:                  s.position,
		route.DexDepthCurrent:              s.depthCurrent,
		route.DexDepthOverTime:             s.depthOverTime,
		route.DexSupply:                    s.supply,
		route.DexLensAssetsInChain:         s.assetsInChain,
		route.DexStakingAPR:                s.stakingAPR,
		route.DexPoolsAPR:                  s.poolsAPR,
		route.DexPoolsAPRRange:             s.poolsAPRRange,
		route.DexPoolsAPRRangeV2:           s.poolsAPRRange,
		route.DexCLAPRv1:                   s.positionAPR,
		route.DexCLAPRv2:                   s.positionAPR,
		route.DexRewardDenoms:              s.rewardDenoms,
		route.DexRewardsByDay:              s.rewardsByDay,
		route.DexLPEstimation:              s.lpEstimation,
		route.DexPortfolioCurrent:          s.portfolioCurrent,
		route.DexPortfolioOverTime:         s.portfolioOverTime,
		route.DexPoolStream:                s.poolStream,
	}
}

// Freshness is the last indexed height of chainID and its block time;
// problem.ErrNotIndexed when the indexer has not committed a height.
func Freshness(ctx context.Context, db bun.IDB, chainID string) (api.Freshness, error) {
	var st struct {
		Next int64      `bun:"next_height"`
		Time *time.Time `bun:"last_time"`
	}
	err := db.NewRaw("SELECT next_height, last_time FROM sync_state WHERE chain_id = ?", chainID).Scan(ctx, &st)
	if errors.Is(err, sql.ErrNoRows) || (err == nil && (st.Next <= 1 || st.Time == nil)) {
		return api.Freshness{}, fmt.Errorf("chain %s: %w", chainID, problem.ErrNotIndexed)
	}
	if err != nil {
		return api.Freshness{}, fmt.Errorf("sync state of %s: %w", chainID, err)
	}
	return api.Freshness{Chains: []api.ChainHeight{{ChainID: chainID, Height: st.Next - 1, Time: st.Time.UTC()}}}, nil
}

// begin checks that a dex chain is configured and indexed and returns its freshness.
func (s *Service) begin(ctx context.Context) (api.Freshness, error) {
	if !s.ok {
		return api.Freshness{}, api.NoChainOfKind("osmosis")
	}
	return Freshness(ctx, api.Reader(ctx, s.db), s.market.ChainID)
}

// beginJob is begin for an answer read from the report tables of one
// aggregator job: the freshness is the job's (its last aggregated block,
// and the chain's first indexed block); 503 before it has run.
func (s *Service) beginJob(ctx context.Context, job string) (api.Freshness, error) {
	if !s.ok {
		return api.Freshness{}, api.NoChainOfKind("osmosis")
	}
	h, err := api.JobHeight(ctx, api.Reader(ctx, s.db), s.market.ChainID, job)
	if err != nil {
		return api.Freshness{}, err
	}
	return api.Freshness{Chains: []api.ChainHeight{h}}, nil
}

// days is the daily series of a lens endpoint over the job's tables: the
// days whose start is in the requested range, from the day of the chain's
// first indexed block to the day of the job's last aggregated block (503
// for a range after it).
func (s *Service) days(ctx context.Context, req *api.Request, job string) (api.Freshness, []time.Time, error) {
	fresh, err := s.beginJob(ctx, job)
	if err != nil {
		return api.Freshness{}, nil, err
	}
	r, err := req.Params.DateRange(req.Now, false)
	if err != nil {
		return api.Freshness{}, nil, err
	}
	bs, err := api.Buckets(r.Start, r.End, fresh.Chains[0], api.Day)
	return fresh, bs, err
}

// TopAsset is one row of the top assets by volume.
type TopAsset struct {
	Denom     string      `json:"denom"`
	Name      string      `json:"name"`
	Symbol    string      `json:"symbol"`
	URL       string      `json:"url"`
	USDVolume json.Number `json:"usd_volume"`
}

// topAssets ranks denoms by the USD volume of the hourly buckets starting
// in [from, to] (osmosis_asset_volume_hourly and its daily sums).
func (s *Service) topAssets(ctx context.Context, from, to time.Time, limit int64) ([]TopAsset, error) {
	var rows []struct {
		Denom  string `bun:"denom"`
		Volume string `bun:"volume"`
	}
	// Whole days inside [from, to] (from dFrom to before dTo) are read from
	// their daily sums (osmosis_asset_volume_daily), the hours outside them
	// from osmosis_asset_volume_hourly.
	dFrom := from.UTC().Add(-time.Nanosecond).Truncate(day).Add(day)
	dTo := to.UTC().Add(-23 * time.Hour).Truncate(day).Add(day)
	if !dFrom.Before(dTo) {
		dFrom, dTo = to.Add(time.Hour), to.Add(time.Hour) // no whole day: every hour is read
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT denom, sum(volume_usd)::text AS volume FROM (
			SELECT denom, volume_usd FROM osmosis_asset_volume_hourly
			WHERE chain_id = ?0 AND hour >= ?1 AND hour <= ?2 AND (hour < ?3 OR hour >= ?4)
			UNION ALL
			SELECT denom, volume_usd FROM osmosis_asset_volume_daily WHERE chain_id = ?0 AND day >= ?3 AND day < ?4) v
		GROUP BY denom ORDER BY sum(volume_usd) DESC, denom LIMIT ?5`,
		s.market.ChainID, from, to, dFrom, dTo, limit).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("top assets: %w", err)
	}
	out := make([]TopAsset, 0, len(rows))
	for _, r := range rows {
		a := s.market.Assets[r.Denom]
		out = append(out, TopAsset{Denom: r.Denom, Name: a.Name, Symbol: a.Symbol, URL: a.Logo, USDVolume: api.Number(r.Volume)})
	}
	return out, nil
}

func (s *Service) topAssetsDateRange(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	r, err := req.Params.DateRange(req.Now, false)
	if err != nil {
		return nil, err
	}
	rows, err := s.topAssets(ctx, r.Start, r.End, req.Params.Int("limit"))
	if err != nil {
		return nil, err
	}
	return &api.Response{Body: rows, Freshness: fresh}, nil
}

// topAssetsLastPeriod covers the hourly buckets that start in the last
// period hours before now (a bucket belongs to the range when its start
// does).
func (s *Service) topAssetsLastPeriod(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, err := s.beginJob(ctx, report.JobVolume)
	if err != nil {
		return nil, err
	}
	end := req.Now.UTC()
	start := end.Add(-time.Duration(req.Params.Int("period")) * time.Hour)
	rows, err := s.topAssets(ctx, start, end, req.Params.Int("limit"))
	if err != nil {
		return nil, err
	}
	return &api.Response{Body: rows, Freshness: fresh}, nil
}

// Price is the real-time price answer.
type Price struct {
	Denom    string      `json:"denom"`
	USDPrice json.Number `json:"usd_price"`
}

// denomOf resolves an asset given as a denom or a configured symbol.
func (s *Service) denomOf(asset string) string {
	if _, ok := s.market.Assets[asset]; ok {
		return asset
	}
	for d, a := range s.market.Assets {
		if a.Symbol != "" && strings.EqualFold(a.Symbol, asset) {
			return d
		}
	}
	return asset
}

// realTimePrice is the latest hourly close of the asset.
func (s *Service) realTimePrice(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	asset := req.Params.String("asset")
	denom := s.denomOf(asset)
	var price string
	err = api.Reader(ctx, s.db).NewRaw("SELECT price_usd::text FROM osmosis_asset_prices WHERE chain_id = ? AND denom = ? ORDER BY hour DESC LIMIT 1",
		s.market.ChainID, denom).Scan(ctx, &price)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, problem.Status(http.StatusNotFound, "asset %s not found", asset)
	}
	if err != nil {
		return nil, fmt.Errorf("price of %s: %w", denom, err)
	}
	return &api.Response{Body: Price{Denom: denom, USDPrice: api.Number(price)}, Freshness: fresh}, nil
}

// KPI is one daily cumulative value.
type KPI struct {
	Labels string      `json:"labels"`
	Value  json.Number `json:"value"`
}

// cumulativeVolume is the all-time USD swap volume at the end of each day
// of the series (Service.days: from the chain's first indexed day to the
// dex_volume job's last; 0 before the first swap; osmosis_asset_volume_daily).
// Each hop credits both its denoms, so the swap volume is half the sum of
// the per-denom volume.
func (s *Service) cumulativeVolume(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, bs, err := s.days(ctx, req, report.JobVolume)
	if err != nil {
		return nil, err
	}
	if len(bs) == 0 {
		return &api.Response{Body: []KPI{}, Freshness: fresh}, nil
	}
	// The running all-time sum, halved (truncated to 18 decimals as
	// LegacyDec.QuoInt64 does), at each day with volume.
	var daily []cumulative
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT day, trunc(sum(sum(volume_usd)) OVER (ORDER BY day) * 0.5, 18)::text AS cum
		FROM osmosis_asset_volume_daily WHERE chain_id = ? AND day < ? GROUP BY day ORDER BY day`,
		s.market.ChainID, bs[len(bs)-1].Add(day)).Scan(ctx, &daily); err != nil {
		return nil, fmt.Errorf("daily volume: %w", err)
	}
	return &api.Response{Body: cumulativeKPI(daily, bs), Freshness: fresh}, nil
}

// cumulative is a running total at the end of a day.
type cumulative struct {
	Day time.Time `bun:"day"`
	Cum string    `bun:"cum"`
}

// cumulativeKPI lists the running total at the end of each day of days:
// the total of the latest day with one up to that day, 0 before the first.
func cumulativeKPI(daily []cumulative, days []time.Time) []KPI {
	out := make([]KPI, 0, len(days))
	i := -1
	for _, d := range days {
		for i+1 < len(daily) && !daily[i+1].Day.UTC().After(d) {
			i++
		}
		v := json.Number("0")
		if i >= 0 {
			v = api.Number(daily[i].Cum)
		}
		out = append(out, KPI{Labels: d.Format(time.DateTime), Value: v})
	}
	return out
}

const day = 24 * time.Hour
