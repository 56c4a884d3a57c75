package dex_test

import (
	"context"
	"log/slog"
	"reflect"
	"testing"

	report "github.com/chainlens/chainlens/report/dex"

	"cosmossdk.io/math"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/aggregator/dex"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/osmosistest"
)

func TestActivityOnLocalnet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, ch := osmosistest.New(t)
	m := report.NewMarket(ch)
	sched, err := aggregator.New(db, config.Aggregator{}, slog.New(slog.DiscardHandler), nil,
		dex.Prices{Market: m}, dex.Volume{Market: m}, dex.Activity{Market: m})
	if err != nil {
		t.Fatal(err)
	}
	if err := sched.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	// Every block is in the hour 21:00 of 2026-11-21: one close per denom.
	closes := map[string]math.LegacyDec{}
	for _, p := range rows(t, db, pricesQ) {
		closes[p.Denom] = dec(t, p.Value)
	}
	type amount struct {
		denom string
		n     int64
	}
	usd := func(amounts ...amount) math.LegacyDec { // each movement valued on its own, as the job does
		v := math.LegacyZeroDec()
		for _, a := range amounts {
			v = v.Add(math.LegacyNewDec(a.n).Mul(closes[a.denom]).Quo(math.LegacyNewDec(1_000_000)))
		}
		return v
	}
	type flow struct {
		Added   string `bun:"added"`
		Removed string `bun:"removed"`
	}
	var pool3 flow
	if err := db.NewRaw("SELECT added_usd::text AS added, removed_usd::text AS removed FROM osmosis_pool_flow_daily WHERE pool_id = 3").
		Scan(ctx, &pool3); err != nil {
		t.Fatal(err)
	}
	// Pool 3 (block_results): created at height 8 with 50000000000uosmo and
	// 5000000000uatom, joined at 19 with 4998305906uosmo and 500169807uatom,
	// exited at 28 with 999449307uosmo and 100055279uatom.
	if want := usd(amount{"uosmo", 50000000000}, amount{"uosmo", 4998305906}, amount{"uatom", 5000000000}, amount{"uatom", 500169807}); !dec(t, pool3.Added).Equal(want) {
		t.Errorf("pool 3 added %s, want %s", pool3.Added, want)
	}
	if want := usd(amount{"uosmo", 999449307}, amount{"uatom", 100055279}); !dec(t, pool3.Removed).Equal(want) {
		t.Errorf("pool 3 removed %s, want %s", pool3.Removed, want)
	}

	type wallet struct {
		Address string `bun:"address"`
		Swaps   int    `bun:"swaps"`
		Trading string `bun:"trading"`
		LP      string `bun:"lp"`
		Staking string `bun:"staking"`
	}
	const walletsQ = `SELECT address, swaps, trading_usd::text AS trading, lp_usd::text AS lp, staking_usd::text AS staking
		FROM osmosis_wallet_daily ORDER BY day, address`
	var wallets []wallet
	if err := db.NewRaw(walletsQ).Scan(ctx, &wallets); err != nil {
		t.Fatal(err)
	}
	traders, swaps := 0, 0
	for _, w := range wallets {
		if w.Swaps > 0 {
			traders++
		}
		swaps += w.Swaps
		// dave (truth/named_accounts.json): delegated 388516586uosmo (height 7)
		// and 5212018uosmo (29), undelegated 102760576uosmo (55); his only
		// liquidity: stableswap join at 19 (action #43: 100028794uweth, 299963195uusdc) and
		// a CL position (action #29: 315202470uion, 800000000uosmo at 14), then
		// a partial withdraw-position at 57 (action #150: 11189uion, 328905uosmo).
		if w.Address == "osmo1dwyz79xpa3ax9aa2l8rc0lpqg9thd0kfsexefg" {
			if want := usd(amount{"uosmo", 388516586}, amount{"uosmo", 5212018}, amount{"uosmo", 102760576}); !dec(t, w.Staking).Equal(want) {
				t.Errorf("dave staking %s, want %s", w.Staking, want)
			}
			if want := usd(amount{"uweth", 100028794}, amount{"uusdc", 299963195},
				amount{"uion", 315202470}, amount{"uosmo", 800000000}, amount{"uion", 11189}, amount{"uosmo", 328905}); !dec(t, w.LP).Equal(want) {
				t.Errorf("dave liquidity %s, want %s", w.LP, want)
			}
		}
	}
	var txSwaps int
	if err := db.NewRaw("SELECT count(*) FROM osmosis_swaps WHERE tx_index >= 0").Scan(ctx, &txSwaps); err != nil {
		t.Fatal(err)
	}
	if traders != 7 || swaps != txSwaps {
		t.Errorf("%d traders with %d hops, want 7 with %d", traders, swaps, txSwaps)
	}

	// A rerun from scratch writes the same rows.
	if _, err := db.NewRaw("UPDATE aggregator_jobs SET watermark = 0 WHERE name = 'dex_activity'").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := sched.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	var again []wallet
	if err := db.NewRaw(walletsQ).Scan(ctx, &again); err != nil || !reflect.DeepEqual(again, wallets) {
		t.Errorf("wallet rows differ after a rerun: %v", err)
	}
}
