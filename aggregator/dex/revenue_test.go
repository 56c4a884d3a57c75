package dex_test

import (
	"context"
	"log/slog"
	"testing"

	report "github.com/chainlens/chainlens/report/dex"

	"cosmossdk.io/math"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/aggregator/dex"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/osmosistest"
	"github.com/chainlens/chainlens/internal/testdb"
)

// TestRevenueOnLocalnet values every tx fee and every taker fee of the
// recorded localnet (all in the 21:00 UTC hour) at that hour's closes and
// compares with the dex_revenue job's day rows; protorev is the one
// backrun's profit, 512318328 uosmo (truth/protorev.json all_profits).
func TestRevenueOnLocalnet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := testdb.New(t)
	m := report.NewMarket(osmosistest.Index(t, db))
	if addr, err := (dex.Revenue{Market: m}).TakerFeeCollector(); err != nil || addr != "osmo1r9jc2234fljy93z80cevqjt3nmjycec8aj4cc6" {
		t.Fatalf("taker fee collector %q %v (chain-events §12)", addr, err)
	}
	sched, err := aggregator.New(db, config.Aggregator{}, slog.New(slog.DiscardHandler), nil,
		dex.Prices{Market: m}, dex.Volume{Market: m}, dex.Revenue{Market: m})
	if err != nil {
		t.Fatal(err)
	}
	if err := sched.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	closes := map[string]math.LegacyDec{}
	for _, r := range kvRows(t, db, "SELECT denom AS k, price_usd::text AS v FROM osmosis_asset_prices WHERE hour = '2026-11-21T21:00:00Z'") {
		closes[r.K] = math.LegacyMustNewDecFromStr(r.V)
	}
	value := func(q string) math.LegacyDec {
		sum := math.LegacyZeroDec()
		for _, r := range kvRows(t, db, q) {
			if p, ok := closes[r.K]; ok {
				amt, _ := math.NewIntFromString(r.V)
				sum = sum.Add(m.USDValue(r.K, amt, p))
			}
		}
		return sum
	}
	wantFees := value(`SELECT f->>'denom' AS k, sum((f->>'amount')::numeric)::text AS v FROM txs CROSS JOIN LATERAL jsonb_array_elements(fee) f
		WHERE NOT undecodable GROUP BY 1`)
	wantTaker := value(`SELECT denom AS k, sum(amount)::text AS v FROM transfers WHERE kind = 'transfer'
		AND recipient = 'osmo1r9jc2234fljy93z80cevqjt3nmjycec8aj4cc6' GROUP BY 1`)
	if !wantFees.IsPositive() || !wantTaker.IsPositive() {
		t.Fatalf("expected fees and taker fees on the localnet: %s %s", wantFees, wantTaker)
	}
	got := map[string]string{}
	for _, r := range kvRows(t, db, "SELECT source || ' ' || day::date::text AS k, amount_usd::text AS v FROM osmosis_revenue_daily") {
		got[r.K] = r.V
	}
	wantProtorev := m.USDValue("uosmo", math.NewInt(512318328), closes["uosmo"])
	for k, want := range map[string]math.LegacyDec{"tx_fees 2026-11-21": wantFees, "taker_fees 2026-11-21": wantTaker,
		"protorev 2026-11-21": wantProtorev} {
		d, err := math.LegacyNewDecFromStr(got[k])
		// The job values each payment then adds; the test adds amounts then
		// values: the two differ by at most one 10^-18 rounding per payment.
		if err != nil || d.Sub(want).Abs().GT(math.LegacyNewDecWithPrec(1, 15)) {
			t.Errorf("%s: %q, want %s", k, got[k], want)
		}
	}
	if len(got) != 3 || !wantProtorev.IsPositive() {
		t.Errorf("revenue rows %v (protorev %s)", got, wantProtorev)
	}
}
