package dex

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"cosmossdk.io/math"
	"github.com/cosmos/cosmos-sdk/types/bech32"
	authtypes "github.com/cosmos/cosmos-sdk/x/auth/types"
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/chains/osmosis"
)

// PoolRewards is the dex_pool_rewards job: osmosis_pool_rewards_hourly,
// what each pool's liquidity providers earned per hour in USD, and the
// lookups the pools APR endpoints need (osmosis_cl_pools: tick spacing and
// incentives account of the concentrated-liquidity pools;
// osmosis_superfluid_assets).
//
//   - fees_usd: the pool's USD swap volume of the hour
//     (osmosis_pool_volume_hourly, dex_volume job) × its swap fee or spread
//     factor (osmosis_pools), the part of every swap left to the providers.
//   - native_usd, boost_usd: bank transfers of the hour from the incentives
//     module account into a concentrated-liquidity pool's incentives account
//     (the gauge distributions that fund the pool's incentive records,
//     chains/cosmos transfers), valued at the denom's latest hourly close;
//     native when paid in the staking denom, boost otherwise. Coins without
//     a price are left out.
//
// Incentives of classic (gamm) pools are paid by lock gauges to the lock
// owners, with no event naming the pool, so they are not measured.
//
// It follows the dex_prices job's watermark and recomputes whole hours from
// the hour of the first new block, so reruns give the same rows.
type PoolRewards struct{ Market Market }

// Name is the job name.
func (PoolRewards) Name() string { return "dex_pool_rewards" }

// Run advances the pool rewards to the prices job's watermark.
func (j PoolRewards) Run(ctx context.Context, tx bun.Tx, wm int64) (int64, int64, error) {
	var tip int64
	err := tx.NewRaw("SELECT watermark FROM aggregator_jobs WHERE name = ?", Prices{}.Name()).Scan(ctx, &tip)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, 0, fmt.Errorf("prices watermark: %w", err)
	}
	if tip <= wm {
		return wm, 0, nil
	}
	chain := j.Market.ChainID
	if err := j.clPools(ctx, tx, wm, tip); err != nil {
		return 0, 0, err
	}
	if err := j.superfluidAssets(ctx, tx, wm, tip); err != nil {
		return 0, 0, err
	}
	var first *time.Time
	if err := tx.NewRaw("SELECT min(time) FROM blocks WHERE chain_id = ? AND height > ? AND height <= ?", chain, wm, tip).
		Scan(ctx, &first); err != nil {
		return 0, 0, fmt.Errorf("first new block: %w", err)
	}
	if first == nil {
		return tip, 0, nil
	}
	h0 := first.UTC().Truncate(time.Hour)

	type key struct {
		pool int64
		hour time.Time
	}
	type sums struct{ fees, native, boost math.LegacyDec }
	acc := map[key]*sums{}
	var order []key
	get := func(k key) *sums {
		if s, ok := acc[k]; ok {
			return s
		}
		s := &sums{math.LegacyZeroDec(), math.LegacyZeroDec(), math.LegacyZeroDec()}
		acc[k] = s
		order = append(order, k)
		return s
	}

	var fees []struct {
		Pool int64     `bun:"pool_id"`
		Hour time.Time `bun:"hour"`
		Fees string    `bun:"fees"`
	}
	if err := tx.NewRaw(`SELECT v.pool_id, v.hour, round(v.volume_usd * p.swap_fee, 18)::text AS fees
		FROM osmosis_pool_volume_hourly v
		JOIN LATERAL (SELECT swap_fee FROM osmosis_pools p WHERE p.chain_id = v.chain_id AND p.pool_id = v.pool_id
			ORDER BY height LIMIT 1) p ON p.swap_fee IS NOT NULL
		WHERE v.chain_id = ? AND v.hour >= ? ORDER BY v.pool_id, v.hour`, chain, h0).Scan(ctx, &fees); err != nil {
		return 0, 0, fmt.Errorf("pool fees from %s: %w", h0, err)
	}
	for _, f := range fees {
		d, err := math.LegacyNewDecFromStr(f.Fees)
		if err != nil {
			return 0, 0, fmt.Errorf("pool %d fees %q: %w", f.Pool, f.Fees, err)
		}
		s := get(key{f.Pool, f.Hour.UTC()})
		s.fees = s.fees.Add(d)
	}

	incentives, err := bech32.ConvertAndEncode(j.Market.Prefix, authtypes.NewModuleAddress("incentives"))
	if err != nil {
		return 0, 0, fmt.Errorf("incentives module address: %w", err)
	}
	var paid []struct {
		Pool   int64     `bun:"pool_id"`
		Hour   time.Time `bun:"hour"`
		Denom  string    `bun:"denom"`
		Amount string    `bun:"amount"`
		Price  string    `bun:"price"`
	}
	if err := tx.NewRaw(`SELECT c.pool_id, date_trunc('hour', b.time) AS hour, tr.denom, tr.amount::text AS amount,
			coalesce((SELECT price_usd::text FROM osmosis_asset_prices a WHERE a.chain_id = tr.chain_id AND a.denom = tr.denom
				AND a.hour <= date_trunc('hour', b.time) ORDER BY a.hour DESC LIMIT 1), '') AS price
		FROM transfers tr
		JOIN osmosis_cl_pools c ON c.chain_id = tr.chain_id AND c.incentives_address = tr.recipient
		JOIN blocks b ON b.chain_id = tr.chain_id AND b.height = tr.height
		WHERE tr.chain_id = ? AND tr.kind = 'transfer' AND tr.sender = ? AND b.time >= ? AND tr.height <= ?
		ORDER BY tr.height, tr.tx_index, tr.event_index, tr.coin_index`, chain, incentives, h0, tip).Scan(ctx, &paid); err != nil {
		return 0, 0, fmt.Errorf("pool incentives from %s: %w", h0, err)
	}
	for _, p := range paid {
		if p.Price == "" {
			continue
		}
		amt, ok := math.NewIntFromString(p.Amount)
		price, err := math.LegacyNewDecFromStr(p.Price)
		if !ok || err != nil {
			return 0, 0, fmt.Errorf("incentive %s %s at %q", p.Amount, p.Denom, p.Price)
		}
		s := get(key{p.Pool, p.Hour.UTC()})
		v := j.Market.USDValue(p.Denom, amt, price)
		if p.Denom == j.Market.Hub {
			s.native = s.native.Add(v)
		} else {
			s.boost = s.boost.Add(v)
		}
	}

	if _, err := tx.NewRaw("DELETE FROM osmosis_pool_rewards_hourly WHERE chain_id = ? AND hour >= ?", chain, h0).Exec(ctx); err != nil {
		return 0, 0, fmt.Errorf("delete pool rewards: %w", err)
	}
	rows := make([]poolRewardRow, 0, len(order))
	for _, k := range order {
		s := acc[k]
		rows = append(rows, poolRewardRow{ChainID: chain, PoolID: k.pool, Hour: k.hour,
			FeesUSD: s.fees.String(), NativeUSD: s.native.String(), BoostUSD: s.boost.String()})
	}
	if err := insertBatches(ctx, tx, rows); err != nil {
		return 0, 0, fmt.Errorf("insert pool rewards: %w", err)
	}
	return tip, int64(len(rows)), nil
}

// clPools records the tick spacing and incentives account of the
// concentrated-liquidity pools created in (wm, tip].
func (j PoolRewards) clPools(ctx context.Context, tx bun.Tx, wm, tip int64) error {
	var created []struct {
		Pool int64  `bun:"pool_id"`
		Raw  []byte `bun:"raw"`
	}
	if err := tx.NewRaw(`SELECT p.pool_id, m.raw FROM osmosis_pools p
		JOIN messages m ON m.chain_id = p.chain_id AND m.height = p.height AND m.tx_index = p.tx_index AND m.msg_index = p.msg_index
		WHERE p.chain_id = ? AND p.type = 'concentrated' AND p.height > ? AND p.height <= ? AND m.type_url = ?`,
		j.Market.ChainID, wm, tip, osmosis.MsgCreateConcentratedPool).Scan(ctx, &created); err != nil {
		return fmt.Errorf("concentrated pools created: %w", err)
	}
	for _, c := range created {
		spacing, err := osmosis.CLTickSpacing(c.Raw)
		if err != nil {
			return fmt.Errorf("pool %d: %w", c.Pool, err)
		}
		addr, err := osmosis.CLIncentivesAddress(j.Market.Prefix, uint64(c.Pool))
		if err != nil {
			return fmt.Errorf("pool %d incentives address: %w", c.Pool, err)
		}
		if _, err := tx.NewRaw(`INSERT INTO osmosis_cl_pools (chain_id, pool_id, tick_spacing, incentives_address) VALUES (?, ?, ?, ?)
			ON CONFLICT (chain_id, pool_id) DO UPDATE SET tick_spacing = EXCLUDED.tick_spacing, incentives_address = EXCLUDED.incentives_address`,
			j.Market.ChainID, c.Pool, spacing, addr).Exec(ctx); err != nil {
			return fmt.Errorf("pool %d: %w", c.Pool, err)
		}
	}
	return nil
}

// superfluidAssets applies the set_superfluid_asset and
// remove_superfluid_asset events of (wm, tip] in order.
func (j PoolRewards) superfluidAssets(ctx context.Context, tx bun.Tx, wm, tip int64) error {
	var evs []struct {
		Height int64  `bun:"height"`
		Type   string `bun:"type"`
		Denom  string `bun:"denom"`
	}
	if err := tx.NewRaw(`SELECT e.height, e.type, a->>'value' AS denom FROM events e
		CROSS JOIN LATERAL jsonb_array_elements(e.attributes) a
		WHERE e.chain_id = ? AND e.type IN ('set_superfluid_asset', 'remove_superfluid_asset') AND e.height > ? AND e.height <= ?
			AND a->>'key' = 'denom'
		ORDER BY e.height, e.tx_index, e.event_index`, j.Market.ChainID, wm, tip).Scan(ctx, &evs); err != nil {
		return fmt.Errorf("superfluid asset events: %w", err)
	}
	for _, e := range evs {
		q := `INSERT INTO osmosis_superfluid_assets (chain_id, denom, height) VALUES (?, ?, ?)
			ON CONFLICT (chain_id, denom) DO UPDATE SET height = EXCLUDED.height`
		if e.Type == "remove_superfluid_asset" {
			q = "DELETE FROM osmosis_superfluid_assets WHERE chain_id = ? AND denom = ? AND height <= ?"
		}
		if _, err := tx.NewRaw(q, j.Market.ChainID, e.Denom, e.Height).Exec(ctx); err != nil {
			return fmt.Errorf("superfluid asset %s: %w", e.Denom, err)
		}
	}
	return nil
}

// poolRewardRow is a row of osmosis_pool_rewards_hourly.
type poolRewardRow struct {
	bun.BaseModel `bun:"table:osmosis_pool_rewards_hourly"`
	ChainID       string    `bun:"chain_id"`
	PoolID        int64     `bun:"pool_id"`
	Hour          time.Time `bun:"hour"`
	FeesUSD       string    `bun:"fees_usd"`
	NativeUSD     string    `bun:"native_usd"`
	BoostUSD      string    `bun:"boost_usd"`
}
