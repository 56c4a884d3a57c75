package neutron_test

import (
	"cmp"
	"context"
	"slices"
	"testing"

	"github.com/chainlens/chainlens/internal/localnet"
	"github.com/chainlens/chainlens/internal/neutrontest"
	"github.com/chainlens/chainlens/internal/testdb"
)

// TestRecordedTickUpdates indexes the recorded Neutron localnet and checks
// neutron_dex_tick_updates: the README's 211 tx and 5 block TickUpdate
// events, and that the last reserves of every pool and tranche side are
// the node's own at the last height (truth/dex_pairs_liquidity.json).
func TestRecordedTickUpdates(t *testing.T) {
	want := neutrontest.Reserves(t)
	if len(want) < 5 {
		t.Fatalf("truth has %d reserves: not the recording this test was written for", len(want))
	}
	db, _ := testdb.New(t)
	localnet.Neutron.Index(t, db)
	ctx := context.Background()
	var counts struct {
		Tx    int `bun:"tx"`
		Block int `bun:"block"`
		Swaps int `bun:"swaps"`
	}
	if err := db.NewRaw(`SELECT count(*) FILTER (WHERE tx_index >= 0) AS tx, count(*) FILTER (WHERE tx_index < 0) AS block,
		count(*) FILTER (WHERE swap_in IS NOT NULL) AS swaps FROM neutron_dex_tick_updates`).Scan(ctx, &counts); err != nil {
		t.Fatal(err)
	}
	if counts.Tx != 211 || counts.Block != 5 || counts.Swaps == 0 {
		t.Errorf("tick updates: %+v, want 211 in txs and 5 in blocks", counts)
	}
	var got []neutrontest.Reserve
	if err := db.NewRaw(`SELECT token0, token1, maker, tick, key, reserves FROM (
			SELECT DISTINCT ON (token0, token1, maker_denom, tick_index, fee, tranche_key)
				token0, token1, maker_denom AS maker, tick_index AS tick,
				CASE WHEN tranche_key <> '' THEN tranche_key ELSE 'fee ' || fee END AS key, reserves::text AS reserves
			FROM neutron_dex_tick_updates
			ORDER BY token0, token1, maker_denom, tick_index, fee, tranche_key, height DESC, tx_index DESC, event_index DESC) r
		WHERE reserves <> '0'`).Scan(ctx, &got); err != nil {
		t.Fatal(err)
	}
	order := func(a, b neutrontest.Reserve) int {
		return cmp.Or(cmp.Compare(a.Token0, b.Token0), cmp.Compare(a.Token1, b.Token1), cmp.Compare(a.Maker, b.Maker),
			cmp.Compare(a.Tick, b.Tick), cmp.Compare(a.Key, b.Key))
	}
	slices.SortFunc(got, order)
	slices.SortFunc(want, order)
	if !slices.Equal(got, want) {
		t.Errorf("reserves differ:\n got %+v\nwant %+v", got, want)
	}
}
