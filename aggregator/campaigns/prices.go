package campaigns

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	dexreport "github.com/chainlens/chainlens/report/dex"

	"cosmossdk.io/math"
	"github.com/uptrace/bun"
)

// Prices values amounts of the dex chain's denoms in USD at the hourly
// close prices of the dex_prices job.
type Prices struct {
	Market dexreport.Market
}

// Value is amount base units of denom in USD at the close of the hour of
// at (or of the last priced hour before it); false when the denom has no
// price by then.
func (p *Prices) Value(ctx context.Context, db bun.IDB, denom string, amount math.Int, at time.Time) (math.LegacyDec, bool, error) {
	var price string
	err := db.NewRaw(`SELECT price_usd::text FROM osmosis_asset_prices WHERE chain_id = ? AND denom = ? AND hour <= ?
		ORDER BY hour DESC LIMIT 1`, p.Market.ChainID, denom, at).Scan(ctx, &price)
	if errors.Is(err, sql.ErrNoRows) {
		return math.LegacyDec{}, false, nil
	}
	if err != nil {
		return math.LegacyDec{}, false, fmt.Errorf("price of %s at %s: %w", denom, at, err)
	}
	d, err := math.LegacyNewDecFromStr(price)
	if err != nil {
		return math.LegacyDec{}, false, fmt.Errorf("price of %s: %w", denom, err)
	}
	return p.Market.USDValue(denom, amount, d), true, nil
}
