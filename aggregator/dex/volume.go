package dex

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/chainlens/chainlens/aggregator"

	report "github.com/chainlens/chainlens/report/dex"

	"cosmossdk.io/math"
	"github.com/uptrace/bun"
)

// Volume is the dex_volume job: osmosis_asset_volume_hourly, the USD swap
// volume of every denom per hour, and osmosis_pool_volume_hourly, that of
// every pool (the sum of its hops' values), and their sums per UTC day
// (osmosis_asset_volume_daily, osmosis_pool_volume_daily), and every
// pool's volume per day with its running all-time sum
// (report.VolumeDailyTotals).
//
// Convention: a hop's USD value is the mean of the USD values of its two
// sides, each at its denom's close price of the hop's hour (only the known
// side when one denom has no price; nothing when neither has). Both denoms
// of the hop are credited that value, so the volume of all swaps is half
// the sum over denoms. Multi-hop routes count once per hop, as the pools
// see them.
//
// It follows the dex_prices job: its watermark is the height prices were
// computed to, and each run recomputes whole hours from the hour of the
// first new swap, so it is idempotent and exact.
type Volume struct{ Market report.Market }

// Name is the job name.
func (Volume) Name() string { return report.JobVolume }

// Upstream: the job values its rows with the prices job's prices, so it runs after
// it and never past it.
func (Volume) Upstream() []string { return []string{report.JobPrices} }

// Version is the version of the job's rows (see aggregator.Job).
func (Volume) Version() string { return "2" } // 2: osmosis_volume_daily_totals

// Tables are the tables the job writes: its own, the dex chain's rows only.
func (j Volume) Tables() aggregator.Tables {
	return aggregator.Tables{Owned: []string{"osmosis_asset_volume_hourly", "osmosis_pool_volume_hourly", "osmosis_asset_volume_daily", "osmosis_pool_volume_daily",
		report.VolumeDailyTotals}, ChainID: j.Market.ChainID}
}

type denomHour struct {
	denom string
	hour  time.Time
}

// Run advances the volume to the prices job's watermark.
func (j Volume) Run(ctx context.Context, tx bun.Tx, wm, bound int64) (int64, int64, error) {
	tip := bound
	if tip <= wm {
		return wm, 0, nil
	}
	h0, ok, err := firstHour(ctx, tx, j.Market.ChainID, wm, tip)
	if err != nil || !ok {
		return tip, 0, err
	}
	var prices []struct {
		Denom string    `bun:"denom"`
		Hour  time.Time `bun:"hour"`
		Price string    `bun:"price"`
	}
	if err := tx.NewRaw("SELECT denom, hour, price_usd::text AS price FROM osmosis_asset_prices WHERE chain_id = ? AND hour >= ?",
		j.Market.ChainID, h0).Scan(ctx, &prices); err != nil {
		return 0, 0, fmt.Errorf("prices from %s: %w", h0, err)
	}
	price := map[denomHour]math.LegacyDec{}
	for _, p := range prices {
		d, err := math.LegacyNewDecFromStr(p.Price)
		if err != nil {
			return 0, 0, fmt.Errorf("price of %s at %s: %w", p.Denom, p.Hour, err)
		}
		price[denomHour{p.Denom, p.Hour.UTC()}] = d
	}
	swaps, err := swapsFrom(ctx, tx, j.Market.ChainID, h0, tip)
	if err != nil {
		return 0, 0, err
	}
	volume := map[denomHour]math.LegacyDec{}
	pools := map[poolHour]math.LegacyDec{}
	for _, s := range swaps {
		hour := s.Time.UTC().Truncate(time.Hour)
		v, ok := j.hopValue(s, hour, price)
		if !ok {
			continue
		}
		pk := poolHour{s.PoolID, hour}
		if cur, ok := pools[pk]; ok {
			pools[pk] = cur.Add(v)
		} else {
			pools[pk] = v
		}
		for _, d := range []string{s.DenomIn, s.DenomOut} {
			k := denomHour{d, hour}
			if cur, ok := volume[k]; ok {
				volume[k] = cur.Add(v)
			} else {
				volume[k] = v
			}
		}
	}
	if _, err := tx.NewRaw("DELETE FROM osmosis_asset_volume_hourly WHERE chain_id = ? AND hour >= ?", j.Market.ChainID, h0).Exec(ctx); err != nil {
		return 0, 0, fmt.Errorf("delete volume: %w", err)
	}
	keys := make([]denomHour, 0, len(volume))
	for k := range volume {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b denomHour) int {
		if c := a.hour.Compare(b.hour); c != 0 {
			return c
		}
		if a.denom < b.denom {
			return -1
		}
		if a.denom > b.denom {
			return 1
		}
		return 0
	})
	rows := make([]volumeRow, 0, len(keys))
	for _, k := range keys {
		rows = append(rows, volumeRow{ChainID: j.Market.ChainID, Denom: k.denom, Hour: k.hour, VolumeUSD: volume[k].String()})
	}
	if err := insertBatches(ctx, tx, rows); err != nil {
		return 0, 0, fmt.Errorf("insert volume: %w", err)
	}
	if _, err := tx.NewRaw("DELETE FROM osmosis_pool_volume_hourly WHERE chain_id = ? AND hour >= ?", j.Market.ChainID, h0).Exec(ctx); err != nil {
		return 0, 0, fmt.Errorf("delete pool volume: %w", err)
	}
	poolRows := make([]poolVolumeRow, 0, len(pools))
	for k, v := range pools {
		poolRows = append(poolRows, poolVolumeRow{ChainID: j.Market.ChainID, PoolID: k.pool, Hour: k.hour, VolumeUSD: v.String()})
	}
	slices.SortFunc(poolRows, func(a, b poolVolumeRow) int {
		if c := a.Hour.Compare(b.Hour); c != 0 {
			return c
		}
		return int(a.PoolID - b.PoolID)
	})
	if err := insertBatches(ctx, tx, poolRows); err != nil {
		return 0, 0, fmt.Errorf("insert pool volume: %w", err)
	}
	n, err := j.rollUpDays(ctx, tx, h0.Truncate(24*time.Hour))
	if err != nil {
		return 0, 0, err
	}
	return tip, int64(len(keys)+len(poolRows)) + n, nil
}

// rollUpDays rewrites osmosis_pool_volume_daily and osmosis_asset_volume_daily
// from the UTC day d0 on as the sums of the hourly rows of each day.
func (j Volume) rollUpDays(ctx context.Context, tx bun.Tx, d0 time.Time) (int64, error) {
	var n int64
	for _, t := range []struct{ daily, hourly, key string }{
		{"osmosis_pool_volume_daily", "osmosis_pool_volume_hourly", "pool_id"},
		{"osmosis_asset_volume_daily", "osmosis_asset_volume_hourly", "denom"},
	} {
		if _, err := tx.NewRaw("DELETE FROM "+t.daily+" WHERE chain_id = ? AND day >= ?", j.Market.ChainID, d0).Exec(ctx); err != nil {
			return 0, fmt.Errorf("delete %s: %w", t.daily, err)
		}
		res, err := tx.NewRaw("INSERT INTO "+t.daily+" (chain_id, "+t.key+", day, volume_usd) SELECT chain_id, "+t.key+
			", date_trunc('day', hour, 'UTC'), sum(volume_usd) FROM "+t.hourly+" WHERE chain_id = ? AND hour >= ? GROUP BY 1, 2, 3",
			j.Market.ChainID, d0).Exec(ctx)
		if err != nil {
			return 0, fmt.Errorf("roll up %s: %w", t.daily, err)
		}
		if c, err := res.RowsAffected(); err == nil {
			n += c
		}
	}
	// Each day's total over the pools and the running total through it,
	// from the last one before d0.
	if _, err := tx.NewRaw("DELETE FROM "+report.VolumeDailyTotals+" WHERE chain_id = ? AND day >= ?", j.Market.ChainID, d0).Exec(ctx); err != nil {
		return 0, fmt.Errorf("delete daily totals: %w", err)
	}
	res, err := tx.NewRaw(`INSERT INTO `+report.VolumeDailyTotals+` (chain_id, day, volume_usd, cumulative_usd)
		SELECT ?0, day, v, coalesce((SELECT cumulative_usd FROM `+report.VolumeDailyTotals+` WHERE chain_id = ?0 AND day < ?1
				ORDER BY day DESC LIMIT 1), 0) + sum(v) OVER (ORDER BY day)
		FROM (SELECT day, sum(volume_usd) AS v FROM osmosis_pool_volume_daily WHERE chain_id = ?0 AND day >= ?1 GROUP BY day) d`,
		j.Market.ChainID, d0).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("daily totals: %w", err)
	}
	if c, err := res.RowsAffected(); err == nil {
		n += c
	}
	return n, nil
}

type poolHour struct {
	pool int64
	hour time.Time
}

// poolVolumeRow is a row of osmosis_pool_volume_hourly.
type poolVolumeRow struct {
	bun.BaseModel `bun:"table:osmosis_pool_volume_hourly"`
	ChainID       string    `bun:"chain_id"`
	PoolID        int64     `bun:"pool_id"`
	Hour          time.Time `bun:"hour"`
	VolumeUSD     string    `bun:"volume_usd"`
}

// volumeRow is a row of osmosis_asset_volume_hourly.
type volumeRow struct {
	bun.BaseModel `bun:"table:osmosis_asset_volume_hourly"`
	ChainID       string    `bun:"chain_id"`
	Denom         string    `bun:"denom"`
	Hour          time.Time `bun:"hour"`
	VolumeUSD     string    `bun:"volume_usd"`
}

// hopValue is the USD value of one hop by the convention of Volume.
func (j Volume) hopValue(s Swap, hour time.Time, price map[denomHour]math.LegacyDec) (math.LegacyDec, bool) {
	var vals []math.LegacyDec
	for _, side := range []struct{ denom, amount string }{{s.DenomIn, s.AmountIn}, {s.DenomOut, s.AmountOut}} {
		p, ok := price[denomHour{side.denom, hour}]
		amt, ok2 := math.NewIntFromString(side.amount)
		if ok && ok2 {
			vals = append(vals, j.Market.USDValue(side.denom, amt, p))
		}
	}
	switch len(vals) {
	case 2:
		return vals[0].Add(vals[1]).QuoInt64(2), true
	case 1:
		return vals[0], true
	}
	return math.LegacyDec{}, false
}
