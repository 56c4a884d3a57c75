package perp_test

import (
	"context"
	"slices"
	"testing"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/aggregator/perp"
	"github.com/chainlens/chainlens/internal/dydxtest"
)

// TestPositionsReplayedInSpans: replaying the fills a few heights at a
// time (memory holds one span's fills) leaves the same positions and
// hourly open interest as replaying the recording at once.
func TestPositionsReplayedInSpans(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, ch := dydxtest.New(t)
	replay := func(span int64) (positions, openInterest []string) {
		t.Helper()
		err := db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			for _, table := range []string{"perp_positions", "perp_open_interest_hourly"} {
				if _, err := tx.NewRaw("DELETE FROM ? WHERE chain_id = ?", bun.Ident(table), ch.ID).Exec(ctx); err != nil {
					return err
				}
			}
			_, err := perp.PositionsBySpan(ctx, tx, ch.ID, 0, dydxtest.LastHeight, span)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := db.NewRaw(`SELECT concat_ws(' ', address, subaccount_number, perpetual_id, size) FROM perp_positions
			WHERE chain_id = ? ORDER BY 1`, ch.ID).Scan(ctx, &positions); err != nil {
			t.Fatal(err)
		}
		if err := db.NewRaw(`SELECT concat_ws(' ', perpetual_id, hour, open_interest) FROM perp_open_interest_hourly
			WHERE chain_id = ? ORDER BY 1`, ch.ID).Scan(ctx, &openInterest); err != nil {
			t.Fatal(err)
		}
		return positions, openInterest
	}
	wantPositions, wantOI := replay(dydxtest.LastHeight)
	if len(wantPositions) < 10 || len(wantOI) == 0 {
		t.Fatalf("the recording leaves %d positions and %d hours of open interest", len(wantPositions), len(wantOI))
	}
	for _, span := range []int64{1, 7, 100} {
		positions, oi := replay(span)
		if !slices.Equal(positions, wantPositions) {
			t.Errorf("span %d: positions\n%v\nwant\n%v", span, positions, wantPositions)
		}
		if !slices.Equal(oi, wantOI) {
			t.Errorf("span %d: open interest\n%v\nwant\n%v", span, oi, wantOI)
		}
	}
}
