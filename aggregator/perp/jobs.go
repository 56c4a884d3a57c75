package perp

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/chains/dydx"
	report "github.com/chainlens/chainlens/report/perp"
	"github.com/chainlens/chainlens/store"
)

// maxHeights bounds the heights one run of a job reads.
const maxHeights = 100_000

// Settings are what the perp jobs read from the config.
type Settings struct {
	ChainID string
	Prefix  string   // the chain's bech32 account prefix (module addresses)
	Grants  []string // accounts whose receipts from the treasury are grants (config perp.grant_recipients)
	// BuyStake is the buy-and-stake programme's account (config perp.buystake_address).
	BuyStake string
	// Treasury are the treasury sub-DAO's wallets (config perp.treasury_subdao).
	Treasury []string
}

// Jobs returns the perp report jobs of one chain, one per report (see
// report/perp): each has its own watermark and version, so a new or
// changed report rebuilds its own table only. They read the fills, prices
// and signed txs of the dydx adapter (chains/dydx) and its state
// snapshots; the revenue follows the hourly prices (it values NATIVE fees
// with them) and the traders' records follow their daily volumes (top
// markets, last 30 days).
//
// Each run adds the heights past the job's watermark up to the contiguous
// indexed tip (heights in dead_letters are not indexed yet, and positions
// and funding replay in order), at most maxHeights at a time, in one
// transaction with the new watermark. A watermark reset from outside, or a
// new version, rebuilds the job's rows of the chain from the first height
// (the scheduler clears its tables first), so nothing is counted twice.
func Jobs(s Settings) []aggregator.Job {
	var out []aggregator.Job
	for _, j := range jobList(s) {
		j.s = s
		out = append(out, j)
	}
	return out
}

// jobList lists the jobs of Jobs, in order.
func jobList(s Settings) []job {
	simple := func(table, query string) job {
		return job{name: table, advance: sqlSteps(table, query)}
	}
	return []job{
		// perp_market_hourly: fills, notional, taker and maker fees and
		// liquidation fills per market and UTC hour.
		simple(report.MarketHourly, marketHourlySQL),
		// perp_trader_daily: per trader, market and UTC day, the fills the
		// trader took part in (a self-trade once), their notional (taker
		// and maker parts) and the fees the trader paid.
		simple(report.TraderDaily, traderDailySQL),
		// perp_traders: the /perp/crm record of every trader and signer
		// (all-time sums, first and last fill and tx, tx count), the top 3
		// markets of the traders with new fills, and the last-30-day fields.
		// Version 2 added the all-time maker and taker volumes, and each
		// trader's volume per market (perp_trader_markets), which the top
		// markets are read from. Version 3 keeps the last-30-day window's
		// rows per market (perp_trader_window_markets) as the window moves.
		job{name: report.Traders, version: "3", also: []string{report.TraderMarkets, report.TraderWindowMarkets}, upstream: []string{report.TraderDaily}, advance: traders},
		// perp_activity_buckets, perp_trader_buckets, perp_retention_weeks:
		// per bucket of every resolution, each trader's fills and the
		// traders counted; per weekly cohort, its traders in each of the
		// four weeks after. It reads the traders' first fills.
		job{name: report.ActivityBuckets, also: []string{report.TraderBuckets, report.RetentionWeeks},
			upstream: []string{report.Traders}, advance: activity},
		// perp_liquidations: every liquidation fill, with its tx hash, the
		// liquidated position's direction and size in base units. A state
		// snapshot may bring a market into the catalog while no height is
		// indexed: its liquidations are sized then too.
		job{name: report.Liquidations, advance: sqlSteps(report.Liquidations, liquidationsSQL, liquidationSizesSQL),
			idle: func(ctx context.Context, tx bun.Tx, s Settings, wm, _ int64) (int64, error) {
				return sqlSteps(report.Liquidations, liquidationSizesSQL)(ctx, tx, s, wm, wm)
			}},
		// perp_price_hourly: each market's last oracle price per hour.
		simple(report.PriceHourly, priceHourlySQL),
		// perp_deposit_classes and perp_depositor_buckets: USDC deposited
		// into subaccounts per address and bucket of every resolution, and
		// the depositors of each size class per bucket.
		job{name: report.DepositClasses, also: []string{report.DepositorBuckets},
			advance: func(ctx context.Context, tx bun.Tx, s Settings, from, to int64) (int64, error) {
				var rows int64
				if err := tx.NewRaw(depositClassesSQL, s.ChainID, from, to, pgdialect.Array(report.Resolutions)).Scan(ctx, &rows); err != nil {
					return 0, fmt.Errorf("%s: %w", report.DepositClasses, err)
				}
				return rows, nil
			}},
		// perp_revenue_daily: trading fees and tx fees in USDC per day.
		job{name: report.RevenueDaily, upstream: []string{report.PriceHourly}, advance: sqlSteps(report.RevenueDaily, revenueSQL)},
		// perp_supply: the NATIVE supply (genesis, current, minted, burnt).
		simple(report.Supply, supplySQL),
		// perp_staking_rewards_daily: staking rewards per day.
		simple(report.StakingRewardsDaily, stakingRewardsSQL),
		// perp_community_pool_spends: community pool spends by proposal.
		withRaw(simple(report.CommunityPoolSpends, communityPoolSQL), aggregator.RawInputs{Messages: []string{"/cosmos.gov.v1.MsgSubmitProposal"}}),
		// perp_validator_status: each validator's bond status at every state snapshot.
		simple(report.ValidatorStatus, validatorStatusSQL),
		// perp_positions and perp_open_interest_hourly: positions replayed
		// from the fills, and each market's open interest per hour.
		job{name: report.Positions, also: []string{report.OpenInterestHourly},
			advance: func(ctx context.Context, tx bun.Tx, s Settings, from, to int64) (int64, error) {
				return positions(ctx, tx, s.ChainID, from, to)
			}},
		// perp_module_balances_daily: the treasury module accounts' NATIVE
		// balances at the end of each day they changed.
		job{name: report.ModuleBalancesDaily, advance: func(ctx context.Context, tx bun.Tx, s Settings, from, to int64) (int64, error) {
			return moduleBalances(ctx, tx, s.ChainID, s.Prefix, from, to)
		}},
		// perp_rewards_daily: trading rewards per day and trader.
		job{name: report.RewardsDaily, advance: func(ctx context.Context, tx bun.Tx, s Settings, from, to int64) (int64, error) {
			return rewards(ctx, tx, s.ChainID, s.Prefix, from, to)
		}},
		// perp_validator_tokens_daily: each validator's tokens per day.
		job{name: report.ValidatorTokensDaily, advance: func(ctx context.Context, tx bun.Tx, s Settings, from, to int64) (int64, error) {
			return validatorTokens(ctx, tx, s.ChainID, from, to)
		}},
		// perp_treasury_outflows_daily: what left the treasury accounts
		// (grants are told apart by the configured recipients).
		job{name: report.TreasuryOutflowsDaily, settings: []any{s.Grants},
			advance: func(ctx context.Context, tx bun.Tx, s Settings, from, to int64) (int64, error) {
				return treasuryOutflows(ctx, tx, s.ChainID, s.Prefix, s.Grants, from, to)
			}},
		// perp_buystake_hourly: the buy-and-stake programme's account per
		// hour; an address configured since the last run is aggregated
		// over the heights already aggregated first.
		job{name: report.BuyStakeHourly, tracks: true,
			before: func(ctx context.Context, tx bun.Tx, s Settings, wm int64) (int64, error) {
				var want []string
				if s.BuyStake != "" {
					want = []string{s.BuyStake}
				}
				return trackWallets(ctx, tx, s.ChainID, roleBuyStake, want, wm, func(added []string, from, to int64) (int64, error) {
					return buyStake(ctx, tx, s.ChainID, s.Prefix, added[0], from, to)
				})
			},
			advance: func(ctx context.Context, tx bun.Tx, s Settings, from, to int64) (int64, error) {
				return buyStake(ctx, tx, s.ChainID, s.Prefix, s.BuyStake, from, to)
			}},
		// perp_wallet_daily: the treasury sub-DAO's wallets per day, kept
		// in line with the configured wallets like perp_buystake_hourly.
		job{name: report.WalletDaily, tracks: true,
			before: func(ctx context.Context, tx bun.Tx, s Settings, wm int64) (int64, error) {
				return trackWallets(ctx, tx, s.ChainID, roleTreasury, s.Treasury, wm, func(added []string, from, to int64) (int64, error) {
					return treasuryWallets(ctx, tx, s.ChainID, added, from, to)
				})
			},
			advance: func(ctx context.Context, tx bun.Tx, s Settings, from, to int64) (int64, error) {
				return treasuryWallets(ctx, tx, s.ChainID, s.Treasury, from, to)
			}},
		// perp_funding_ticks: each perpetual's funding ticks replayed from
		// the oracle prices and premium samples, also when a state
		// snapshot brought a market while no height was indexed.
		job{name: report.FundingTicks, raw: aggregator.RawInputs{Messages: []string{dydx.MsgAddPremiumVotes}},
			advance: func(ctx context.Context, tx bun.Tx, s Settings, _, to int64) (int64, error) {
				return fundingTicks(ctx, tx, s.ChainID, to)
			},
			idle: func(ctx context.Context, tx bun.Tx, s Settings, _, tip int64) (int64, error) {
				return fundingTicks(ctx, tx, s.ChainID, tip) // tip < wm while a dead letter waits below the watermark
			}},
	}
}

// sqlSteps runs queries in order over (from, to], each with arguments ?0
// chain, ?1 from, ?2 to.
func sqlSteps(table string, queries ...string) func(context.Context, bun.Tx, Settings, int64, int64) (int64, error) {
	return func(ctx context.Context, tx bun.Tx, s Settings, from, to int64) (int64, error) {
		var rows int64
		for i, q := range queries {
			res, err := tx.NewRaw(q, s.ChainID, from, to).Exec(ctx)
			if err != nil {
				if len(queries) > 1 {
					return 0, fmt.Errorf("%s (step %d): %w", table, i+1, err)
				}
				return 0, fmt.Errorf("%s: %w", table, err)
			}
			n, _ := res.RowsAffected()
			rows += n
		}
		return rows, nil
	}
}

// job is one perp report job.
type job struct {
	s        Settings
	name     string   // the job's name, and the table it builds
	version  string   // its rules' version ("1" when empty)
	also     []string // other tables it builds
	upstream []string // jobs whose tables it reads
	settings []any    // the settings its rows depend on (a change rebuilds them)
	tracks   bool     // it writes perp_tracked_wallets (kept across rebuilds)
	// before runs first in every run, at watermark wm.
	before func(ctx context.Context, tx bun.Tx, s Settings, wm int64) (int64, error)
	// advance adds the heights (from, to].
	advance func(ctx context.Context, tx bun.Tx, s Settings, from, to int64) (int64, error)
	// raw are the raw events and messages it reads.
	raw aggregator.RawInputs
	// idle runs instead when nothing past the watermark wm is indexed up to tip.
	idle func(ctx context.Context, tx bun.Tx, s Settings, wm, tip int64) (int64, error)
}

func (j job) Name() string { return j.name }

// RawInputs are the raw rows the job reads, if any.
func (j job) RawInputs() aggregator.RawInputs {
	in := j.raw
	in.ChainID = j.s.ChainID
	return in
}

// withRaw is j that reads raw rows.
func withRaw(j job, in aggregator.RawInputs) job {
	j.raw = in
	return j
}

// Version names the job's rules, and the settings its rows depend on.
func (j job) Version() string {
	v := j.version
	if v == "" {
		v = "1"
	}
	if j.settings == nil {
		return v
	}
	return aggregator.SettingsVersion(v, j.settings)
}

// Tables are the job's tables, the chain's rows only. The tracked wallets
// are the config's, kept across rebuilds.
func (j job) Tables() aggregator.Tables {
	t := aggregator.Tables{Owned: append([]string{j.name}, j.also...), ChainID: j.s.ChainID}
	if j.tracks {
		t.Shared = []string{"perp_tracked_wallets"}
	}
	return t
}

// Upstream names the jobs whose tables the job reads.
func (j job) Upstream() []string { return j.upstream }

// Run advances the job from watermark wm to the contiguous indexed tip,
// no further than bound (at most maxHeights at a time).
func (j job) Run(ctx context.Context, tx bun.Tx, wm, bound int64) (int64, int64, error) {
	tip, err := store.ContiguousTip(ctx, tx, j.s.ChainID)
	if err != nil {
		return wm, 0, err
	}
	tip = min(tip, bound)
	var rows int64
	if j.before != nil {
		if rows, err = j.before(ctx, tx, j.s, wm); err != nil {
			return wm, 0, err
		}
	}
	if tip <= wm {
		if j.idle == nil {
			return wm, rows, nil
		}
		n, err := j.idle(ctx, tx, j.s, wm, tip)
		return wm, rows + n, err
	}
	to := min(tip, wm+maxHeights)
	n, err := j.advance(ctx, tx, j.s, wm, to)
	if err != nil {
		return wm, 0, err
	}
	return to, rows + n, nil
}

// traders adds (from, to] to perp_traders: the fills and signed txs of
// every trader and signer and their volumes per market, then the
// last-30-day fields (the 30 UTC days ending with the day of the last
// aggregated block) of the traders whose window changed, from
// perp_trader_window_markets, which the run moves (windowAddSQL), and
// their all-time top markets.
func traders(ctx context.Context, tx bun.Tx, s Settings, from, to int64) (int64, error) {
	rows, err := sqlSteps(report.Traders, traderFillsSQL, traderTxsSQL, traderMarketsSQL)(ctx, tx, s, from, to)
	if err != nil {
		return 0, err
	}
	windowStart := func(h int64) (time.Time, error) {
		var t time.Time
		err := tx.NewRaw("SELECT time FROM blocks WHERE chain_id = ? AND height <= ? ORDER BY height DESC LIMIT 1", s.ChainID, h).Scan(ctx, &t)
		if errors.Is(err, sql.ErrNoRows) {
			return time.Time{}, nil
		}
		return t.UTC().Truncate(24*time.Hour).AddDate(0, 0, -(Last30Days - 1)), err
	}
	start, err := windowStart(to)
	if err != nil {
		return 0, fmt.Errorf("window: %w", err)
	}
	prev, err := windowStart(from)
	if err != nil {
		return 0, fmt.Errorf("window: %w", err)
	}
	if prev.IsZero() {
		// Nothing aggregated before: the window is empty, and only the
		// run's fills from its start on enter it.
		prev = start
	}
	for _, q := range []struct{ name, sql string }{
		{"add", windowAddSQL}, {"expire", windowExpireSQL}, {"fields", last30dSQL},
	} {
		res, err := tx.NewRaw(q.sql, s.ChainID, from, to, start, prev).Exec(ctx)
		if err != nil {
			return 0, fmt.Errorf("perp_traders last 30 days (%s): %w", q.name, err)
		}
		n, _ := res.RowsAffected()
		rows += n
	}
	return rows, nil
}
