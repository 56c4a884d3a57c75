package dex

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/uptrace/bun"
)

// VolumeDailyTotals is the table of every pool's USD swap volume summed
// per UTC day (volume_usd) with the running all-time sum through that day
// (cumulative_usd), kept by the dex_volume job (JobVolume).
const VolumeDailyTotals = "osmosis_volume_daily_totals"

// VolumeBefore is the all-time USD swap volume of every pool over the
// UTC days before day (as text, "0" when there is none): one row, the
// running sum of the last day before it.
func VolumeBefore(ctx context.Context, db bun.IDB, chainID string, day time.Time) (string, error) {
	var v string
	err := db.NewRaw(`SELECT cumulative_usd::text FROM `+VolumeDailyTotals+` WHERE chain_id = ? AND day < ?
		ORDER BY day DESC LIMIT 1`, chainID, day).Scan(ctx, &v)
	if errors.Is(err, sql.ErrNoRows) {
		return "0", nil
	}
	if err != nil {
		return "", fmt.Errorf("volume before %s: %w", day.Format(time.DateOnly), err)
	}
	return v, nil
}
