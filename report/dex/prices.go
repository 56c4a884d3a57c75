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

// PricesAt is every denom's USD price at each of ts: its close of the
// latest hour at or before t (a denom not priced by then has none). A
// skip scan over the denoms, then one backward probe of the primary key
// per denom and time: the cost follows the denoms, never the hours.
func PricesAt(ctx context.Context, db bun.IDB, chainID string, ts []time.Time) ([]Price, error) {
	var out []Price
	if err := db.NewRaw(`WITH RECURSIVE d AS (
			(SELECT denom FROM `+AssetPrices+` WHERE chain_id = ?0 ORDER BY denom LIMIT 1)
			UNION ALL
			SELECT (SELECT denom FROM `+AssetPrices+` WHERE chain_id = ?0 AND denom > d.denom ORDER BY denom LIMIT 1)
			FROM d WHERE d.denom IS NOT NULL)
		SELECT t.i - 1 AS i, d.denom, p.price_usd::text AS price_usd FROM d CROSS JOIN unnest(?1::timestamptz[]) WITH ORDINALITY t(at, i)
		CROSS JOIN LATERAL (SELECT price_usd FROM `+AssetPrices+` WHERE chain_id = ?0 AND denom = d.denom AND hour <= t.at
			ORDER BY hour DESC LIMIT 1) p
		WHERE d.denom IS NOT NULL`, chainID, pgdialect.Array(ts)).Scan(ctx, &out); err != nil {
		return nil, fmt.Errorf("asset prices: %w", err)
	}
	return out, nil
}
