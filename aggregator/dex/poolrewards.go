package dex

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/chainlens/chainlens/aggregator"

	report "github.com/chainlens/chainlens/report/dex"

	"cosmossdk.io/math"
	"github.com/cosmos/cosmos-sdk/types/bech32"
	authtypes "github.com/cosmos/cosmos-sdk/x/auth/types"
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/chains/cosmos"
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
//     factor (osmosis_known_pools), the part of every swap left to the
//     providers.
//
//   - native_usd, boost_usd: bank transfers of the hour from the incentives
//     module account into a concentrated-liquidity pool's incentives account
//     (the gauge distributions that fund the pool's incentive records,
//     chains/cosmos transfers), valued at the denom's latest hourly close;
//     native when paid in the staking denom, boost otherwise. Coins without
//     a price are left out.
//
//   - superfluid_usd: the staking rewards withdrawn by the superfluid
//     intermediary accounts of the pool's share denom (staking_events
//     withdraw_rewards; the superfluid module withdraws them every epoch and
//     pays them to the superfluid stakers through their gauge), valued as
//     above.
//
// Incentives of classic (gamm) pools are paid by lock gauges to the lock
// owners, with no event naming the pool, so they are not attributed: the
// job counts the incentives module's payments to any other account per hour
// (osmosis_lock_rewards_hourly), and while there are any the classic pools'
// incentives are unknown.
//
// It follows the dex_prices job's watermark and recomputes whole hours from
// the hour of the first new block, so reruns give the same rows.
type PoolRewards struct{ Market report.Market }

// Name is the job name.
func (PoolRewards) Name() string { return report.JobPoolRewards }

// RawInputs: concentrated pools' creation messages and the superfluid and
// lock events.
func (j PoolRewards) RawInputs() aggregator.RawInputs {
	return aggregator.RawInputs{ChainID: j.Market.ChainID, Messages: []string{osmosis.MsgCreateConcentratedPool},
		Events: []string{"set_superfluid_asset", "remove_superfluid_asset", "superfluid_delegate", "superfluid_increase_delegation",
			"superfluid_undelegate", "superfluid_undelegate_and_unbond_lock", "begin_unlock", "lock_tokens"}}
}

// Upstream: the job values its rows with the prices job's prices, so it runs after
// it and never past it.
func (PoolRewards) Upstream() []string { return []string{report.JobPrices} }

// Version is the version of the job's rows (see aggregator.Job).
// 2: osmosis_pool_rewards_daily.
func (PoolRewards) Version() string { return "2" }

// Tables are the tables the job writes: its own, the dex chain's rows only.
func (j PoolRewards) Tables() aggregator.Tables {
	return aggregator.Tables{Owned: []string{"osmosis_cl_pools", "osmosis_lock_rewards_hourly", report.PoolRewards, report.PoolRewardsDaily, "osmosis_superfluid_assets", "osmosis_superfluid_intermediaries", "osmosis_superfluid_locks"}, ChainID: j.Market.ChainID}
}

// Run advances the pool rewards to the prices job's watermark.
func (j PoolRewards) Run(ctx context.Context, tx bun.Tx, wm, bound int64) (int64, int64, error) {
	tip := bound
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
	if err := j.superfluidLocks(ctx, tx, wm, tip); err != nil {
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
	type sums struct{ fees, native, boost, superfluid math.LegacyDec }
	acc := map[key]*sums{}
	var order []key
	get := func(k key) *sums {
		if s, ok := acc[k]; ok {
			return s
		}
		s := &sums{math.LegacyZeroDec(), math.LegacyZeroDec(), math.LegacyZeroDec(), math.LegacyZeroDec()}
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
		JOIN LATERAL (SELECT swap_fee FROM osmosis_known_pools p WHERE p.chain_id = v.chain_id AND p.pool_id = v.pool_id
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

	var staked []struct {
		Pool   int64     `bun:"pool_id"`
		Hour   time.Time `bun:"hour"`
		Denom  string    `bun:"denom"`
		Amount string    `bun:"amount"`
		Price  string    `bun:"price"`
	}
	if err := tx.NewRaw(`SELECT substring(i.denom FROM 11)::bigint AS pool_id, date_trunc('hour', b.time) AS hour, s.denom, s.amount::text AS amount,
			coalesce((SELECT price_usd::text FROM osmosis_asset_prices a WHERE a.chain_id = s.chain_id AND a.denom = s.denom
				AND a.hour <= date_trunc('hour', b.time) ORDER BY a.hour DESC LIMIT 1), '') AS price
		FROM staking_events s
		JOIN osmosis_superfluid_intermediaries i ON i.chain_id = s.chain_id AND i.address = s.delegator
		JOIN blocks b ON b.chain_id = s.chain_id AND b.height = s.height
		WHERE s.chain_id = ? AND s.kind = 'withdraw_rewards' AND s.amount > 0 AND b.time >= ? AND s.height <= ?
			AND i.denom ~ '^gamm/pool/[0-9]+$'
		ORDER BY s.height, s.tx_index, s.event_index, s.coin_index`, chain, h0, tip).Scan(ctx, &staked); err != nil {
		return 0, 0, fmt.Errorf("superfluid rewards from %s: %w", h0, err)
	}
	for _, p := range staked {
		if p.Price == "" {
			continue
		}
		amt, ok := math.NewIntFromString(p.Amount)
		price, err := math.LegacyNewDecFromStr(p.Price)
		if !ok || err != nil {
			return 0, 0, fmt.Errorf("superfluid reward %s %s at %q", p.Amount, p.Denom, p.Price)
		}
		s := get(key{p.Pool, p.Hour.UTC()})
		s.superfluid = s.superfluid.Add(j.Market.USDValue(p.Denom, amt, price))
	}

	if _, err := tx.NewRaw("DELETE FROM "+report.PoolRewards+" WHERE chain_id = ? AND hour >= ?", chain, h0).Exec(ctx); err != nil {
		return 0, 0, fmt.Errorf("delete pool rewards: %w", err)
	}
	rows := make([]poolRewardRow, 0, len(order))
	for _, k := range order {
		s := acc[k]
		rows = append(rows, poolRewardRow{ChainID: chain, PoolID: k.pool, Hour: k.hour,
			FeesUSD: s.fees.String(), NativeUSD: s.native.String(), BoostUSD: s.boost.String(), SuperfluidUSD: s.superfluid.String()})
	}
	if err := insertBatches(ctx, tx, rows); err != nil {
		return 0, 0, fmt.Errorf("insert pool rewards: %w", err)
	}
	days, err := report.KeepPoolRewardsDaily(ctx, tx, chain, h0)
	if err != nil {
		return 0, 0, err
	}
	if _, err := tx.NewRaw("DELETE FROM osmosis_lock_rewards_hourly WHERE chain_id = ? AND hour >= ?", chain, h0).Exec(ctx); err != nil {
		return 0, 0, fmt.Errorf("delete lock rewards: %w", err)
	}
	res, err := tx.NewRaw(`INSERT INTO osmosis_lock_rewards_hourly (chain_id, hour, payments)
		SELECT ?0, date_trunc('hour', b.time), count(*) FROM transfers tr
		JOIN blocks b ON b.chain_id = tr.chain_id AND b.height = tr.height
		WHERE tr.chain_id = ?0 AND tr.kind = 'transfer' AND tr.sender = ?1 AND b.time >= ?2 AND tr.height <= ?3
			AND tr.recipient <> ?1 AND NOT EXISTS (SELECT 1 FROM osmosis_cl_pools c WHERE c.chain_id = ?0 AND c.incentives_address = tr.recipient)
		GROUP BY 2`, chain, incentives, h0, tip).Exec(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("lock rewards: %w", err)
	}
	locks, _ := res.RowsAffected()
	return tip, int64(len(rows)) + days + locks, nil
}

// clPools records the tick spacing and incentives account of the
// concentrated-liquidity pools created in (wm, tip], and of those a late
// start imported at a height in it.
func (j PoolRewards) clPools(ctx context.Context, tx bun.Tx, wm, tip int64) error {
	var created []struct {
		Pool int64  `bun:"pool_id"`
		Raw  []byte `bun:"raw"`
		// Spacing is tick_spacing of the decoded message (uint64: a JSON
		// string), or of the imported pool; "" when the message was kept
		// raw only.
		Spacing string `bun:"spacing"`
	}
	if err := tx.NewRaw(`SELECT p.pool_id, m.raw, coalesce(m.body->>'tick_spacing', '') AS spacing FROM osmosis_pools p
		JOIN messages m ON m.chain_id = p.chain_id AND m.height = p.height AND m.tx_index = p.tx_index AND m.msg_index = p.msg_index
		WHERE p.chain_id = ?0 AND p.type = 'concentrated' AND p.height > ?1 AND p.height <= ?2 AND m.type_url = ?3
		UNION ALL SELECT pool_id, NULL, tick_spacing::text FROM osmosis_known_pools
		WHERE chain_id = ?0 AND type = 'concentrated' AND tx_index = ?4 AND height > ?1 AND height <= ?2`,
		j.Market.ChainID, wm, tip, osmosis.MsgCreateConcentratedPool, cosmos.StateImportTx).Scan(ctx, &created); err != nil {
		return fmt.Errorf("concentrated pools created: %w", err)
	}
	for _, c := range created {
		spacing, err := osmosis.CLTickSpacingOf(c.Spacing, c.Raw)
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
	SuperfluidUSD string    `bun:"superfluid_usd"`
}

// superfluidLocks applies the superfluid events of (wm, tip] in order to
// osmosis_superfluid_locks (shares staked per lock, with the lock's owner
// from its lock_tokens event) and records the
// intermediary account of every (denom, validator) staked to.
//
//   - superfluid_delegate{lock_id, lock_amount, lock_denom, validator}: the
//     lock stakes lock_amount;
//   - superfluid_increase_delegation{lock_id, amount}: it stakes amount more;
//   - superfluid_undelegate{lock_id}: it stakes nothing;
//   - superfluid_undelegate_and_unbond_lock{lock_id}: the begin_unlock of the
//     same message says what is unbonded: the whole lock when it names the
//     lock, else the amount split off into a new lock.
func (j PoolRewards) superfluidLocks(ctx context.Context, tx bun.Tx, wm, tip int64) error {
	var evs []struct {
		Height int64             `bun:"height"`
		Tx     int               `bun:"tx_index"`
		Msg    int               `bun:"msg_index"`
		Type   string            `bun:"type"`
		Attrs  map[string]string `bun:"attrs,type:jsonb"`
	}
	if err := tx.NewRaw(`SELECT e.height, e.tx_index, e.msg_index, e.type,
			(SELECT jsonb_object_agg(a->>'key', a->>'value') FROM jsonb_array_elements(e.attributes) a) AS attrs
		FROM events e LEFT JOIN txs t ON t.chain_id = e.chain_id AND t.height = e.height AND t.tx_index = e.tx_index
		WHERE e.chain_id = ? AND e.height > ? AND e.height <= ? AND (e.tx_index < 0 OR t.code = 0)
			AND e.type IN ('superfluid_delegate', 'superfluid_increase_delegation', 'superfluid_undelegate',
				'superfluid_undelegate_and_unbond_lock', 'begin_unlock')
		ORDER BY e.height, e.tx_index, e.event_index`, j.Market.ChainID, wm, tip).Scan(ctx, &evs); err != nil {
		return fmt.Errorf("superfluid events: %w", err)
	}
	type unlock struct {
		height  int64
		tx, msg int
		lock    string
		amount  string
	}
	var unlocks []unlock
	for _, e := range evs {
		if e.Type == "begin_unlock" {
			unlocks = append(unlocks, unlock{e.Height, e.Tx, e.Msg, e.Attrs["period_lock_id"], e.Attrs["amount"]})
		}
	}
	exec := func(q string, args ...any) error {
		_, err := tx.NewRaw(q, args...).Exec(ctx)
		return err
	}
	for _, e := range evs {
		lock, err := strconv.ParseInt(e.Attrs["lock_id"], 10, 64)
		if e.Type != "begin_unlock" && err != nil {
			return fmt.Errorf("%s at %d: lock_id %q", e.Type, e.Height, e.Attrs["lock_id"])
		}
		switch e.Type {
		case "superfluid_delegate":
			denom, val := e.Attrs["lock_denom"], e.Attrs["validator"]
			amount, ok := math.NewIntFromString(e.Attrs["lock_amount"])
			if !ok {
				return fmt.Errorf("superfluid_delegate at %d: lock_amount %q", e.Height, e.Attrs["lock_amount"])
			}
			addr, err := bech32.ConvertAndEncode(j.Market.Prefix, authtypes.NewModuleAddress(denom+val))
			if err != nil {
				return fmt.Errorf("intermediary of %s %s: %w", denom, val, err)
			}
			if err := exec(`INSERT INTO osmosis_superfluid_locks (chain_id, lock_id, owner, denom, validator, shares)
				VALUES (?0, ?1, coalesce((SELECT a->>'value' FROM events e CROSS JOIN LATERAL jsonb_array_elements(e.attributes) a
					WHERE e.chain_id = ?0 AND e.type = 'lock_tokens' AND e.height <= ?5 AND a->>'key' = 'owner'
						AND e.attributes @> jsonb_build_array(jsonb_build_object('key', 'period_lock_id', 'value', ?1::text))
					ORDER BY e.height LIMIT 1), ''), ?2, ?3, ?4)
				ON CONFLICT (chain_id, lock_id) DO UPDATE SET owner = EXCLUDED.owner, denom = EXCLUDED.denom, validator = EXCLUDED.validator,
					shares = EXCLUDED.shares`,
				j.Market.ChainID, lock, denom, val, amount.String(), e.Height); err != nil {
				return fmt.Errorf("superfluid lock %d: %w", lock, err)
			}
			if err := exec(`INSERT INTO osmosis_superfluid_intermediaries (chain_id, address, denom, validator) VALUES (?, ?, ?, ?)
				ON CONFLICT (chain_id, address) DO NOTHING`, j.Market.ChainID, addr, denom, val); err != nil {
				return fmt.Errorf("intermediary %s: %w", addr, err)
			}
		case "superfluid_increase_delegation":
			amount, err := sharesOf(e.Attrs["amount"])
			if err != nil {
				return fmt.Errorf("superfluid_increase_delegation at %d: %w", e.Height, err)
			}
			if err := exec("UPDATE osmosis_superfluid_locks SET shares = shares + ? WHERE chain_id = ? AND lock_id = ?",
				amount.String(), j.Market.ChainID, lock); err != nil {
				return fmt.Errorf("superfluid lock %d: %w", lock, err)
			}
		case "superfluid_undelegate":
			if err := exec("DELETE FROM osmosis_superfluid_locks WHERE chain_id = ? AND lock_id = ?", j.Market.ChainID, lock); err != nil {
				return fmt.Errorf("superfluid lock %d: %w", lock, err)
			}
		case "superfluid_undelegate_and_unbond_lock":
			for _, u := range unlocks {
				if u.height != e.Height || u.tx != e.Tx || u.msg != e.Msg {
					continue
				}
				q, args := "DELETE FROM osmosis_superfluid_locks WHERE chain_id = ? AND lock_id = ?", []any{j.Market.ChainID, lock}
				if u.lock != e.Attrs["lock_id"] {
					amount, err := sharesOf(u.amount)
					if err != nil {
						return fmt.Errorf("begin_unlock at %d: %w", u.height, err)
					}
					q, args = "UPDATE osmosis_superfluid_locks SET shares = shares - ? WHERE chain_id = ? AND lock_id = ?",
						[]any{amount.String(), j.Market.ChainID, lock}
				}
				if err := exec(q, args...); err != nil {
					return fmt.Errorf("superfluid lock %d: %w", lock, err)
				}
			}
		}
	}
	return exec("DELETE FROM osmosis_superfluid_locks WHERE chain_id = ? AND shares <= 0", j.Market.ChainID)
}

// sharesOf reads an amount given bare ("123") or as coins ("123gamm/pool/1").
func sharesOf(s string) (math.Int, error) {
	if a, ok := math.NewIntFromString(s); ok {
		return a, nil
	}
	coins, err := chains.ParseCoins(s)
	if err != nil || len(coins) != 1 {
		return math.Int{}, fmt.Errorf("amount %q", s)
	}
	a, ok := math.NewIntFromString(coins[0].Amount)
	if !ok {
		return math.Int{}, fmt.Errorf("amount %q", s)
	}
	return a, nil
}
