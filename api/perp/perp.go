// Package perp serves the built endpoints of the perpetuals exchange and
// perpetuals lens groups (dYdX v4). Every number comes from the report
// tables of report/perp, each built by its job (aggregator/perp) from the
// fills, prices and state of the dydx adapter (chains/dydx); an answer is
// as fresh as the least advanced job of the tables it reads.
package perp

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	report "github.com/chainlens/chainlens/report/perp"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/problem"
	"github.com/chainlens/chainlens/api/route"
	"github.com/chainlens/chainlens/config"
)

// Service answers the perp endpoints from the perp chain's report tables.
type Service struct {
	db      *bun.DB
	chainID string
	ok      bool // a dydx chain is configured
	// buyStakeAddress is config perp.buystake_address.
	buyStakeAddress string
	// treasury is config perp.treasury_subdao.
	treasury []string
}

// New returns the service for the first configured chain of kind dydx;
// without one every endpoint answers 503.
func New(cfg *config.Config, db *bun.DB) *Service {
	ch, ok := report.Chain(cfg)
	return &Service{db: db, chainID: ch.ID, ok: ok, buyStakeAddress: cfg.Perp.BuyStakeAddress, treasury: cfg.Perp.TreasurySubDAO}
}

// Handlers binds the built operations to the service.
func (s *Service) Handlers() map[route.ID]api.Handler {
	return map[route.ID]api.Handler{
		route.PerpCRM:                s.crm,
		route.PerpLensTradesCount:    s.tradesCount,
		route.PerpLensMarketListings: s.marketListings,
		route.PerpLensTradingFees:    s.tradingFees,
		route.PerpLensTradersRanking: s.tradersRanking,

		route.PerpTransparencyFees:           s.transparencyFees,
		route.PerpLensVolumeOverview:         s.volumeOverview,
		route.PerpLensShareByPool:            s.shareByPool,
		route.PerpLensDistributionByTrades:   s.distributionByTrades,
		route.PerpLensDistributionByActivity: s.distributionByActivity,
		route.PerpLensRetention:              s.retention,

		route.PerpLensLiquidationList: s.liquidationList,
		route.PerpLensLiquidationFlow: s.liquidationFlow,
		route.PerpLensOpenInterest:    s.openInterest,

		route.PerpLensDistributionByDeposits: s.distributionByDeposits,
		route.PerpChainRevenue:               s.chainRevenue,
		route.PerpLensModuleAccounts:         s.moduleAccounts,
		route.PerpSupply:                     s.supply,
		route.PerpLensTotalRewards:           s.totalRewards,
		route.PerpLensUsersPeriodRewards:     s.usersPeriodRewards,
		route.PerpLensValidatorListings:      s.validatorListings,
		route.PerpLensShareByValidator:       s.shareByValidator,
		route.PerpStakingAPR:                 s.stakingAPR,
		route.PerpStakingSupply:              s.stakingSupply,
		route.PerpLensAPRSplit:               s.aprSplit,
		route.PerpLensExpensesShare:          s.expensesShare,
		route.PerpLensPnLSummary:             s.pnlSummary,
		route.PerpBuyStake:                   s.buyStake,
		route.PerpLensTreasurySubDAO:         s.treasurySubDAO,
		route.PerpLensFundingRate:            s.fundingRate,
		route.PerpLensCommunityPoolUsage:     s.communityPoolUsage,
	}
}

// begin returns how fresh an answer read from the report tables is: the
// height the least advanced of the jobs that build them has aggregated to
// and its block time; 503 while one has not run.
func (s *Service) begin(ctx context.Context, tables ...string) (api.Freshness, error) {
	if !s.ok {
		return api.Freshness{}, api.NoChainOfKind("dydx")
	}
	jobs := make([]string, len(tables))
	for i, t := range tables {
		jobs[i] = report.JobOf(t)
	}
	h, err := api.JobHeight(ctx, api.Reader(ctx, s.db), s.chainID, jobs...)
	if err != nil {
		return api.Freshness{}, err
	}
	return api.Freshness{Chains: []api.ChainHeight{h}}, nil
}

// markets maps perpetual ids to tickers (the latest row of each id in
// dydx_perpetuals).
func (s *Service) markets(ctx context.Context) (map[int64]string, error) {
	var rows []struct {
		ID     int64  `bun:"perpetual_id"`
		Ticker string `bun:"ticker"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT DISTINCT ON (perpetual_id) perpetual_id, ticker FROM dydx_perpetuals
		WHERE chain_id = ? ORDER BY perpetual_id, height DESC`, s.chainID).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("perpetuals: %w", err)
	}
	out := make(map[int64]string, len(rows))
	for _, r := range rows {
		out[r.ID] = r.Ticker
	}
	return out, nil
}

// ticker names a perpetual: its ticker, or its id when the catalog does
// not know it.
func ticker(markets map[int64]string, id int64) string {
	if t, ok := markets[id]; ok {
		return t
	}
	return strconv.FormatInt(id, 10)
}

// market resolves a market parameter (ticker, perpetual id, or total) to a
// perpetual id; all is set for total.
func (s *Service) market(ctx context.Context, name, value string) (id int64, all bool, err error) {
	if value == "total" {
		return 0, true, nil
	}
	if !s.ok {
		return 0, false, api.NoChainOfKind("dydx")
	}
	markets, err := s.markets(ctx)
	if err != nil {
		return 0, false, err
	}
	if len(markets) == 0 {
		// Nothing to check the market against before the genesis import.
		return 0, false, fmt.Errorf("the perpetual catalog is not indexed yet: %w", problem.ErrNotIndexed)
	}
	if n, err := strconv.ParseInt(value, 10, 32); err == nil {
		if _, ok := markets[n]; ok {
			return n, false, nil
		}
	}
	for id, t := range markets {
		if strings.EqualFold(t, value) {
			return id, false, nil
		}
	}
	return 0, false, problem.BadParam(name, "must be a market ticker or perpetual id of /aux/market_listings, or total")
}

// nativeToken is the chain's native token as the genesis catalog names
// it: denom and decimals, its oracle market and that market's price
// exponent, and the quote (USDC) denom.
type nativeToken struct {
	Denom    string `bun:"denom"`
	Quote    string `bun:"quote_denom"`
	Decimals int64  `bun:"decimals"`
	Market   int64  `bun:"market_id"`
	Exponent int64  `bun:"-"`
}

// nativeToken reads the native token (dydx_native_token, dydx_markets);
// 503 when no genesis was imported.
func (s *Service) nativeToken(ctx context.Context) (nativeToken, error) {
	var row struct {
		nativeToken
		Exponent sql.NullInt64 `bun:"exponent"`
	}
	err := api.Reader(ctx, s.db).NewRaw(`SELECT n.denom, n.quote_denom, n.decimals, n.market_id,
			(SELECT exponent FROM dydx_markets m WHERE m.chain_id = n.chain_id AND m.market_id = n.market_id
				ORDER BY height DESC LIMIT 1) AS exponent
		FROM dydx_native_token n WHERE n.chain_id = ? ORDER BY n.height DESC LIMIT 1`, s.chainID).Scan(ctx, &row)
	if errors.Is(err, sql.ErrNoRows) {
		return nativeToken{}, fmt.Errorf("chain %s: the native token is not known (no genesis imported): %w", s.chainID, problem.ErrNotIndexed)
	}
	if err != nil {
		return nativeToken{}, fmt.Errorf("native token: %w", err)
	}
	if !row.Exponent.Valid {
		return nativeToken{}, fmt.Errorf("chain %s: the native token's oracle market %d is not in the market catalog: %w",
			s.chainID, row.Market, problem.ErrNotIndexed)
	}
	n := row.nativeToken
	n.Exponent = row.Exponent.Int64
	return n, nil
}

// pgArray passes ids as a Postgres array parameter.
func pgArray(ids []int64) any { return pgdialect.Array(ids) }

// pgStrings passes strings as a Postgres array parameter.
func pgStrings(ss []string) any { return pgdialect.Array(ss) }

// pgTimes passes times as a Postgres array parameter.
func pgTimes(ts []time.Time) any { return pgdialect.Array(ts) }
