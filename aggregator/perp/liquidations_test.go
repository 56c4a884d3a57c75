package perp_test

import (
	"testing"

	"github.com/chainlens/chainlens/internal/apitest"
	"github.com/chainlens/chainlens/internal/dydxtest"
)

// A market the catalog learns of only after its liquidations were
// reported (listed after genesis; the state snapshot that brings it comes
// later): its liquidations are stored unsized, then sized by the next run
// of the job once a catalog row exists, even a row above their heights
// and with no new height indexed.
func TestLiquidationsOfAMarketListedLater(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	db, ch, cfg := indexedLocalnet(t) // the genesis catalog's run

	// The perpetual of the recording's liquidations, and the sizes the
	// genesis catalog gives them.
	var perp int64
	if err := db.NewRaw(`SELECT perpetual_id FROM dydx_fills WHERE chain_id = ? AND is_liquidation ORDER BY height LIMIT 1`, ch.ID).
		Scan(ctx, &perp); err != nil {
		t.Fatal(err)
	}
	sizes := func() (sized, unsized int, sum string) {
		t.Helper()
		if err := db.NewRaw(`SELECT count(size), count(*) - count(size), coalesce(sum(size), 0)::text FROM perp_liquidations
			WHERE chain_id = ? AND perpetual_id = ?`, ch.ID, perp).Scan(ctx, &sized, &unsized, &sum); err != nil {
			t.Fatal(err)
		}
		return
	}
	n, none, want := sizes()
	if n == 0 || none != 0 {
		t.Fatalf("with the genesis catalog: %d sized, %d unsized liquidations of perpetual %d", n, none, perp)
	}

	// Again, with the perpetual missing from the catalog.
	for _, q := range []string{
		`CREATE TABLE saved AS SELECT * FROM dydx_perpetuals WHERE chain_id = ?0 AND perpetual_id = ?1`,
		`DELETE FROM dydx_perpetuals WHERE chain_id = ?0 AND perpetual_id = ?1`,
		`UPDATE aggregator_jobs SET watermark = 0 WHERE name = 'perp_liquidations'`,
	} {
		if _, err := db.NewRaw(q, ch.ID, perp).Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	apitest.RunJobs(t, db, cfg)
	if got, none, _ := sizes(); got != 0 || none != n {
		t.Fatalf("without a catalog row: %d sized, %d unsized; want 0 and %d", got, none, n)
	}

	// A snapshot at the last height brings the perpetual in.
	if _, err := db.NewRaw(`INSERT INTO dydx_perpetuals SELECT chain_id, ?0, perpetual_id, ticker, market_id, atomic_resolution, market_type FROM saved`,
		dydxtest.LastHeight).Exec(ctx); err != nil {
		t.Fatal(err)
	}
	apitest.RunJobs(t, db, cfg)
	if got, none, sum := sizes(); got != n || none != 0 || sum != want {
		t.Errorf("after the snapshot: %d sized (Σ %s), %d unsized; want %d (Σ %s) and 0", got, sum, none, n, want)
	}
}
