package dex

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/chainlens/chainlens/aggregator"

	report "github.com/chainlens/chainlens/report/dex"
	"github.com/chainlens/chainlens/store"

	"cosmossdk.io/math"
	"github.com/uptrace/bun"
)

// Assets is the dex_assets job: osmosis_assets_in_chain_daily, the USD
// value of every priced denom's total supply at the end of each UTC day.
// A denom's supply at height h is its amount in the latest supply snapshot
// at or below h plus its supply changes after it, counted as the dex_supply
// job counts them (supplyChanges); its price is its last hourly close of the
// day (osmosis_asset_prices). Denoms without a price (LP shares, unknown
// tokens) add nothing; days before the first supply snapshot have no row.
//
// It follows the dex_prices job's watermark and recomputes the days from
// the day of the first new height, so reruns give the same rows.
type Assets struct{ Market report.Market }

// Name is the job name.
func (Assets) Name() string { return report.JobAssets }

// Upstream: the job values its rows with the prices job's prices, so it runs after
// it and never past it.
func (Assets) Upstream() []string { return []string{report.JobPrices} }

// Version is the version of the job's rows (see aggregator.Job).
func (Assets) Version() string { return "1" }

// Tables are the tables the job writes: its own, the dex chain's rows only.
func (j Assets) Tables() aggregator.Tables {
	return aggregator.Tables{Owned: []string{"osmosis_assets_in_chain_daily"}, ChainID: j.Market.ChainID}
}

// Run advances the daily values to the prices job's watermark.
func (j Assets) Run(ctx context.Context, tx bun.Tx, wm, bound int64) (int64, int64, error) {
	chain := j.Market.ChainID
	tip := bound
	if tip <= wm {
		return wm, 0, nil
	}
	var first, last time.Time
	if err := tx.NewRaw("SELECT (SELECT time FROM blocks WHERE chain_id = ?0 AND height > ?1 ORDER BY height LIMIT 1), (SELECT time FROM blocks WHERE chain_id = ?0 AND height = ?2)",
		chain, wm, tip).Scan(ctx, &first, &last); err != nil {
		return 0, 0, fmt.Errorf("times of heights %d..%d: %w", wm+1, tip, err)
	}
	d0 := first.UTC().Truncate(24 * time.Hour)
	if _, err := tx.NewRaw("DELETE FROM osmosis_assets_in_chain_daily WHERE chain_id = ? AND day >= ?", chain, d0).Exec(ctx); err != nil {
		return 0, 0, fmt.Errorf("delete days: %w", err)
	}
	var rows int64
	for day := d0; !day.After(last.UTC()); day = day.Add(24 * time.Hour) {
		end := day.Add(24 * time.Hour)
		h, err := store.HeightBefore(ctx, tx, chain, end)
		if err != nil {
			return 0, 0, fmt.Errorf("last height of %s: %w", day.Format(time.DateOnly), err)
		}
		h = min(h, tip)
		supply, ok, err := SupplyAt(ctx, tx, j.Market, h)
		if err != nil {
			return 0, 0, err
		}
		if !ok {
			continue
		}
		var prices []struct {
			Denom string `bun:"denom"`
			Price string `bun:"price"`
		}
		if err := tx.NewRaw(`SELECT DISTINCT ON (denom) denom, price_usd::text AS price FROM osmosis_asset_prices
			WHERE chain_id = ? AND hour < ? ORDER BY denom, hour DESC`, chain, end).Scan(ctx, &prices); err != nil {
			return 0, 0, fmt.Errorf("prices of %s: %w", day.Format(time.DateOnly), err)
		}
		total := math.LegacyZeroDec()
		for _, p := range prices {
			amt, has := supply[p.Denom]
			price, err := math.LegacyNewDecFromStr(p.Price)
			if err != nil {
				return 0, 0, fmt.Errorf("price %q: %w", p.Price, err)
			}
			if has && amt.IsPositive() {
				total = total.Add(j.Market.USDValue(p.Denom, amt, price))
			}
		}
		if _, err := tx.NewRaw("INSERT INTO osmosis_assets_in_chain_daily (chain_id, day, height, value_usd) VALUES (?, ?, ?, ?)",
			chain, day, h, total.String()).Exec(ctx); err != nil {
			return 0, 0, fmt.Errorf("insert %s: %w", day.Format(time.DateOnly), err)
		}
		rows++
	}
	return tip, rows, nil
}

// SupplyAt is every denom's total supply after block h: the latest supply
// snapshot at or below h plus the changes after it (supplyChanges); ok is
// false when there is no snapshot.
func SupplyAt(ctx context.Context, db bun.IDB, m report.Market, h int64) (map[string]math.Int, bool, error) {
	var snap []int64
	if err := db.NewRaw(`SELECT height FROM state_snapshots WHERE chain_id = ? AND kind = 'taken' AND key = 'supply' AND height <= ?
		ORDER BY height DESC LIMIT 1`, m.ChainID, h).Scan(ctx, &snap); err != nil {
		return nil, false, fmt.Errorf("supply snapshot: %w", err)
	}
	if len(snap) == 0 {
		return nil, false, nil
	}
	q, args, err := supplyChanges(m, snap[0], h)
	if err != nil {
		return nil, false, err
	}
	var rows []struct {
		Denom  string `bun:"denom"`
		Amount string `bun:"amount"`
	}
	if err := db.NewRaw(`SELECT denom, sum(amount)::text AS amount FROM (
			SELECT denom, amount FROM state_snapshots WHERE chain_id = ? AND height = ? AND kind = 'supply' AND key = ''
			UNION ALL `+q+`) s GROUP BY denom`, append([]any{m.ChainID, snap[0]}, args...)...).Scan(ctx, &rows); err != nil {
		return nil, false, fmt.Errorf("supply at %d: %w", h, err)
	}
	out := make(map[string]math.Int, len(rows))
	for _, r := range rows {
		n, ok := math.NewIntFromString(r.Amount)
		if !ok {
			return nil, false, errors.New("supply amount " + r.Amount)
		}
		out[r.Denom] = n
	}
	return out, true, nil
}

// supplyChanges is a query of (denom, amount) rows and its arguments: the
// supply changes in heights (from, to]: mints minus
// burns except the superfluid module's (its synthetic stake is offset out
// of Osmosis's supply), plus what the developer vesting module account
// released (minted at genesis, offset until released).
func supplyChanges(m report.Market, from, to int64) (string, []any, error) {
	superfluid, err1 := moduleAddress(m.Prefix, "superfluid")
	vesting, err2 := moduleAddress(m.Prefix, "developer_vesting_unvested")
	if err := errors.Join(err1, err2); err != nil {
		return "", nil, fmt.Errorf("module addresses: %w", err)
	}
	return `SELECT denom, CASE WHEN kind = 'burn' THEN -amount ELSE amount END AS amount FROM transfers
		WHERE chain_id = ? AND height > ? AND height <= ? AND (
			(kind = 'coinbase' AND recipient <> ?) OR (kind = 'burn' AND sender <> ?)
			OR (kind = 'transfer' AND sender = ? AND recipient <> ?))`, []any{m.ChainID, from, to, superfluid, superfluid, vesting, vesting}, nil
}
