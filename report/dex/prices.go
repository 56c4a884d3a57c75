package dex

import (
	"context"
	"fmt"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// AssetPrices is the table of every denom's USD close (per display unit)
// of each hour in which it was priced (the dex_prices job, JobPrices).
const AssetPrices = "osmosis_asset_prices"

// Price is a denom's USD price at the I-th of the times asked for.
type Price struct {
	I     int    `bun:"i"`
	Denom string `bun:"denom"`
	USD   string `bun:"price_usd"`
}

// AssetPricesLatest holds each denom's latest row of AssetPrices, kept with
// it by the dex_prices job (KeepLatestPrices).
const AssetPricesLatest = "osmosis_asset_prices_latest"

// PricesAt is every denom's USD price at each of ts: its close of the
// latest hour at or before t (a denom not priced by then has none), in the
// order of denom and time. The denoms and their latest closes are
// AssetPricesLatest's; a time before a denom's latest close is one
// backward probe of the primary key: the cost follows the denoms, never
// the hours.
func PricesAt(ctx context.Context, db bun.IDB, chainID string, ts []time.Time) ([]Price, error) {
	return pricesAt(ctx, db, chainID, ts, nil)
}

// DenomPricesAt is PricesAt for the given denoms only.
func DenomPricesAt(ctx context.Context, db bun.IDB, chainID string, ts []time.Time, denoms []string) ([]Price, error) {
	if len(denoms) == 0 {
		return nil, nil
	}
	return pricesAt(ctx, db, chainID, ts, denoms)
}

// pricesAt reads the prices of every denom (denoms nil) or of denoms.
func pricesAt(ctx context.Context, db bun.IDB, chainID string, ts []time.Time, denoms []string) ([]Price, error) {
	filter := ""
	if denoms != nil {
		filter = " AND l.denom = ANY(?2::text[])"
	}
	var out []Price
	if err := db.NewRaw(`SELECT i, denom, price_usd FROM (
			SELECT t.i - 1 AS i, l.denom, CASE WHEN l.hour <= t.at THEN l.price_usd::text
				ELSE (SELECT p.price_usd::text FROM `+AssetPrices+` p WHERE p.chain_id = l.chain_id AND p.denom = l.denom AND p.hour <= t.at
					ORDER BY p.hour DESC LIMIT 1) END AS price_usd
			FROM `+AssetPricesLatest+` l CROSS JOIN unnest(?1::timestamptz[]) WITH ORDINALITY t(at, i)
			WHERE l.chain_id = ?0`+filter+` OFFSET 0) x -- the fence: each probe runs once, not again in the filter
		WHERE price_usd IS NOT NULL ORDER BY denom, i`, chainID, pgdialect.Array(ts), pgdialect.Array(denoms)).Scan(ctx, &out); err != nil {
		return nil, fmt.Errorf("asset prices: %w", err)
	}
	return out, nil
}

// KeepLatestPrices brings AssetPricesLatest up to date with AssetPrices
// after the job rewrote its rows from hour h0 on, in the job's
// transaction (keepLatest).
func KeepLatestPrices(ctx context.Context, tx bun.Tx, chainID string, h0 time.Time) error {
	return keepLatest(ctx, tx, AssetPrices, AssetPricesLatest, []string{"denom"}, []string{"text"}, "price_usd", chainID, h0)
}
