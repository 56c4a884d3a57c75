package dex

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/chainlens/chainlens/aggregator"

	report "github.com/chainlens/chainlens/report/dex"

	"cosmossdk.io/math"
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/config"
)

// Earn is the dex_earn job: the earn strategies declared in config
// (earn.strategies) at the height the dex_liquidity job reached.
//
// Kind lp, balancer or stableswap pool P with share denom gamm/pool/P (a
// strategy on another pool type, or on a pool not created yet, has no
// rows, and its endpoints answer 503):
//   - earn_strategy_assets: the pool's reserves (the latest
//     osmosis_pool_reserves_hourly row per denom) at each denom's latest
//     hourly close (osmosis_asset_prices); a denom without a price is
//     worth 0;
//   - earn_strategy_state: TVL = the sum of the assets; APR (percent) =
//     the swap fees of the last 7 days (the pool's
//     osmosis_pool_volume_hourly buckets starting after tip time − 7 days,
//     times its swap fee, osmosis_known_pools.swap_fee) × 365/7 / TVL × 100;
//     total_shares = the sum of every balance change of the share denom
//     (balance_changes: minted on join, burnt on exit), carried forward
//     from the previous row;
//   - earn_strategy_balances: each address's shares: bank-held
//     (balance_changes) plus locked in x/lockup (transfers to the lockup
//     module account minus transfers from it to the address; the module
//     account itself has no row), recomputed in full for the addresses
//     whose shares moved after the watermark (after height 0 for a
//     strategy without a row yet).
//
// Each run rewrites the state and asset rows and recomputes the touched
// balances from scratch, so a rerun from the same watermark writes the
// same rows.
type Earn struct {
	Market     report.Market
	Strategies []config.Strategy
}

// Name is the job name.
func (Earn) Name() string { return report.JobEarn }

// Upstream: the job values its rows with the dex_liquidity job's reserves and liquidity, so it runs after
// it and never past it.
func (Earn) Upstream() []string { return []string{report.JobLiquidity} }

// Version is the version of the job's rules and of the strategies its rows
// depend on: a change of either rebuilds them.
func (j Earn) Version() string { return aggregator.SettingsVersion("1", j.Strategies) }

// Tables are the tables the job writes: its own, whole (rows are keyed
// by the configured strategies, which all live on the dex chain).
func (j Earn) Tables() aggregator.Tables {
	return aggregator.Tables{Owned: []string{"earn_strategy_assets", "earn_strategy_balances", "earn_strategy_state"}}
}

// feeWindow is the period whose swap fees the APR annualises.
const feeWindow = 7 * 24 * time.Hour

// ShareDenom is the LP share denom of a gamm pool.
func ShareDenom(poolID int64) string { return "gamm/pool/" + strconv.FormatInt(poolID, 10) }

// Run advances every strategy to the dex_liquidity job's watermark.
func (j Earn) Run(ctx context.Context, tx bun.Tx, wm, bound int64) (int64, int64, error) {
	tip := bound
	if tip <= wm || len(j.Strategies) == 0 {
		return max(tip, wm), 0, nil
	}
	var at time.Time
	if err := tx.NewRaw("SELECT time FROM blocks WHERE chain_id = ? AND height = ?", j.Market.ChainID, tip).Scan(ctx, &at); err != nil {
		return 0, 0, fmt.Errorf("time of height %d: %w", tip, err)
	}
	var rows int64
	for _, s := range j.Strategies {
		if s.Kind != "lp" {
			return 0, 0, fmt.Errorf("strategy %s: kind %q has no computation", s.ID, s.Kind)
		}
		n, err := j.lp(ctx, tx, s, wm, tip, at.UTC())
		if err != nil {
			return 0, 0, fmt.Errorf("strategy %s: %w", s.ID, err)
		}
		rows += n
	}
	return tip, rows, nil
}

// lp writes the rows of an LP strategy at height tip.
func (j Earn) lp(ctx context.Context, tx bun.Tx, s config.Strategy, wm, tip int64, at time.Time) (int64, error) {
	chain, share := j.Market.ChainID, ShareDenom(s.PoolID)
	// Only gamm pools (balancer, stableswap) have LP shares; a strategy on
	// another pool, or on a pool not created yet, has no rows.
	var types []string
	if err := tx.NewRaw("SELECT type FROM osmosis_known_pools WHERE chain_id = ? AND pool_id = ? AND height <= ?", chain, s.PoolID, tip).Scan(ctx, &types); err != nil {
		return 0, fmt.Errorf("pool %d: %w", s.PoolID, err)
	}
	if len(types) != 1 || (types[0] != "balancer" && types[0] != "stableswap") {
		for _, table := range []string{"earn_strategy_state", "earn_strategy_assets", "earn_strategy_balances"} {
			if _, err := tx.NewRaw("DELETE FROM "+table+" WHERE strategy = ?", s.ID).Exec(ctx); err != nil {
				return 0, fmt.Errorf("clear %s: %w", table, err)
			}
		}
		return 0, nil
	}
	// A strategy continues from its own row (written with the watermark);
	// one declared since the last run starts from the first height.
	prev := struct {
		Height int64  `bun:"height"`
		Shares string `bun:"total_shares"`
	}{Shares: "0"}
	if err := tx.NewRaw("SELECT height, total_shares::text AS total_shares FROM earn_strategy_state WHERE strategy = ? AND share_denom = ? AND height <= ?",
		s.ID, share, wm).Scan(ctx, &prev); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("previous state: %w", err)
	}
	from := prev.Height
	if from == 0 {
		if _, err := tx.NewRaw("DELETE FROM earn_strategy_balances WHERE strategy = ?", s.ID).Exec(ctx); err != nil {
			return 0, fmt.Errorf("delete balances: %w", err)
		}
	}
	var assets []struct {
		Denom  string  `bun:"denom"`
		Amount string  `bun:"amount"`
		Price  *string `bun:"price"`
	}
	if err := tx.NewRaw(`SELECT r.denom, r.amount::text AS amount,
			(SELECT p.price_usd::text FROM osmosis_asset_prices p WHERE p.chain_id = r.chain_id AND p.denom = r.denom
				ORDER BY p.hour DESC LIMIT 1) AS price
		FROM (SELECT DISTINCT ON (denom) chain_id, denom, amount FROM osmosis_pool_reserves_hourly
			WHERE chain_id = ? AND pool_id = ? ORDER BY denom, hour DESC) r ORDER BY r.denom`, chain, s.PoolID).Scan(ctx, &assets); err != nil {
		return 0, fmt.Errorf("reserves of pool %d: %w", s.PoolID, err)
	}
	if _, err := tx.NewRaw("DELETE FROM earn_strategy_assets WHERE strategy = ?", s.ID).Exec(ctx); err != nil {
		return 0, fmt.Errorf("delete assets: %w", err)
	}
	tvl := math.LegacyZeroDec()
	var rows int64
	for _, a := range assets {
		amount, ok := math.NewIntFromString(a.Amount)
		if !ok {
			return 0, fmt.Errorf("reserve %q of %s", a.Amount, a.Denom)
		}
		value := math.LegacyZeroDec()
		if a.Price != nil {
			price, err := math.LegacyNewDecFromStr(*a.Price)
			if err != nil {
				return 0, fmt.Errorf("price %q of %s: %w", *a.Price, a.Denom, err)
			}
			value = j.Market.USDValue(a.Denom, amount, price)
		}
		tvl = tvl.Add(value)
		if _, err := tx.NewRaw("INSERT INTO earn_strategy_assets (strategy, denom, amount, tvl_usd) VALUES (?, ?, ?, ?)",
			s.ID, a.Denom, amount.String(), value.String()).Exec(ctx); err != nil {
			return 0, fmt.Errorf("asset %s: %w", a.Denom, err)
		}
		rows++
	}
	var fee struct {
		Fees   string `bun:"fees"`
		Shares string `bun:"shares"`
	}
	if err := tx.NewRaw(`SELECT
			round(coalesce((SELECT sum(v.volume_usd) FROM osmosis_pool_volume_hourly v WHERE v.chain_id = ?0 AND v.pool_id = ?1 AND v.hour > ?2 AND v.hour <= ?3), 0)
				* coalesce((SELECT p.swap_fee FROM osmosis_known_pools p WHERE p.chain_id = ?0 AND p.pool_id = ?1 ORDER BY p.height LIMIT 1), 0), 18)::text AS fees,
			(?6::numeric + coalesce((SELECT sum(delta) FROM balance_changes WHERE chain_id = ?0 AND denom = ?4 AND height > ?7 AND height <= ?5), 0))::text AS shares`,
		chain, s.PoolID, at.Add(-feeWindow), at, share, tip, prev.Shares, from).Scan(ctx, &fee); err != nil {
		return 0, fmt.Errorf("fees and shares: %w", err)
	}
	fees, err := math.LegacyNewDecFromStr(fee.Fees)
	if err != nil {
		return 0, fmt.Errorf("fees %q: %w", fee.Fees, err)
	}
	apr := math.LegacyZeroDec()
	if tvl.IsPositive() {
		apr = fees.MulInt64(365 * 100).QuoInt64(7).Quo(tvl)
	}
	if _, err := tx.NewRaw(`INSERT INTO earn_strategy_state (strategy, chain_id, kind, height, time, tvl_usd, apr, share_denom, total_shares)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (strategy) DO UPDATE SET chain_id = EXCLUDED.chain_id, kind = EXCLUDED.kind, height = EXCLUDED.height, time = EXCLUDED.time,
			tvl_usd = EXCLUDED.tvl_usd, apr = EXCLUDED.apr, share_denom = EXCLUDED.share_denom, total_shares = EXCLUDED.total_shares`,
		s.ID, chain, s.Kind, tip, at, tvl.String(), apr.String(), share, fee.Shares).Exec(ctx); err != nil {
		return 0, fmt.Errorf("state: %w", err)
	}
	lockup, err := moduleAddress(j.Market.Prefix, "lockup")
	if err != nil {
		return 0, fmt.Errorf("lockup module address: %w", err)
	}
	res, err := tx.NewRaw(`WITH touched AS (
			SELECT address FROM balance_changes WHERE chain_id = ?1 AND denom = ?2 AND height > ?3 AND height <= ?4 AND address <> ?5
			UNION SELECT sender FROM transfers WHERE recipient = ?5 AND chain_id = ?1 AND height > ?3 AND height <= ?4 AND denom = ?2
			UNION SELECT recipient FROM transfers WHERE sender = ?5 AND chain_id = ?1 AND height > ?3 AND height <= ?4 AND denom = ?2
		), bank AS (
			SELECT address, sum(delta) AS amount, max(height) AS height FROM balance_changes
			WHERE chain_id = ?1 AND denom = ?2 AND height <= ?4 AND address IN (SELECT address FROM touched) GROUP BY address
		), locked AS (
			SELECT owner AS address, sum(amount) AS amount, max(height) AS height FROM (
				SELECT sender AS owner, amount, height FROM transfers WHERE recipient = ?5 AND chain_id = ?1 AND height <= ?4 AND denom = ?2
				UNION ALL SELECT recipient, -amount, height FROM transfers WHERE sender = ?5 AND chain_id = ?1 AND height <= ?4 AND denom = ?2
			) l WHERE owner IN (SELECT address FROM touched) GROUP BY owner
		)
		INSERT INTO earn_strategy_balances (strategy, address, amount, height)
		SELECT ?0, t.address, coalesce(b.amount, 0) + coalesce(l.amount, 0), greatest(coalesce(b.height, 0), coalesce(l.height, 0))
		FROM touched t LEFT JOIN bank b ON b.address = t.address LEFT JOIN locked l ON l.address = t.address
		ON CONFLICT (strategy, address) DO UPDATE SET amount = EXCLUDED.amount, height = EXCLUDED.height`,
		s.ID, chain, share, from, tip, lockup).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("balances: %w", err)
	}
	n, _ := res.RowsAffected()
	return rows + 1 + n, nil
}
