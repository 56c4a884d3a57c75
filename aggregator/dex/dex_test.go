package dex_test

import (
	"context"
	"log/slog"
	"reflect"
	"testing"
	"time"

	report "github.com/chainlens/chainlens/report/dex"

	"cosmossdk.io/math"
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/aggregator/dex"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/osmosistest"
	"github.com/chainlens/chainlens/internal/testdb"
)

type row struct {
	Denom string    `bun:"denom"`
	Hour  time.Time `bun:"hour"`
	Value string    `bun:"value"`
}

func rows(t *testing.T, db *bun.DB, q string) []row {
	t.Helper()
	var out []row
	if err := db.NewRaw(q).Scan(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	for i := range out {
		out[i].Hour = out[i].Hour.UTC()
	}
	return out
}

const (
	pricesQ = "SELECT denom, hour, price_usd::text AS value FROM osmosis_asset_prices ORDER BY denom, hour"
	volumeQ = "SELECT denom, hour, volume_usd::text AS value FROM osmosis_asset_volume_hourly ORDER BY denom, hour"
)

// lastPrice derives, straight from the swap rows, the quote units paid per
// base unit in the most recent swap between the two denoms.
func lastPrice(t *testing.T, db *bun.DB, base, quote string) math.LegacyDec {
	t.Helper()
	var s struct {
		DenomIn   string `bun:"denom_in"`
		AmountIn  string `bun:"amount_in"`
		AmountOut string `bun:"amount_out"`
	}
	if err := db.NewRaw(`SELECT denom_in, amount_in::text AS amount_in, amount_out::text AS amount_out FROM osmosis_swaps
		WHERE (denom_in, denom_out) IN ((?, ?), (?, ?)) ORDER BY height DESC, tx_index DESC, event_index DESC LIMIT 1`,
		base, quote, quote, base).Scan(context.Background(), &s); err != nil {
		t.Fatal(err)
	}
	in, out := math.LegacyMustNewDecFromStr(s.AmountIn), math.LegacyMustNewDecFromStr(s.AmountOut)
	if s.DenomIn == base {
		return out.Quo(in)
	}
	return in.Quo(out)
}

func TestPricesAndVolumeOnLocalnet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, ch := osmosistest.New(t)
	m := report.NewMarket(ch)
	if m.Anchor != "uusdc" || m.Hub != "uosmo" {
		t.Fatalf("market %+v", m)
	}
	sched, err := aggregator.New(db, config.Aggregator{}, slog.New(slog.DiscardHandler), nil, dex.Prices{Market: m}, dex.Volume{Market: m})
	if err != nil {
		t.Fatal(err)
	}
	if err := sched.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}

	// Every block is in the hour 21:00 UTC: one close per denom. uion,
	// uosmo and uweth traded against uusdc (pools 1, 2, 4); uatom only
	// against uosmo (pool 3), so it is priced through OSMO.
	hour := time.Date(2026, 11, 21, 21, 0, 0, 0, time.UTC)
	osmo := lastPrice(t, db, "uosmo", "uusdc")
	want := map[string]math.LegacyDec{
		"uatom": lastPrice(t, db, "uatom", "uosmo").Mul(osmo),
		"uion":  lastPrice(t, db, "uion", "uusdc"),
		"uosmo": osmo,
		"uusdc": math.LegacyOneDec(),
		"uweth": lastPrice(t, db, "uweth", "uusdc"),
	}
	var wantPrices []row
	for _, d := range []string{"uatom", "uion", "uosmo", "uusdc", "uweth"} {
		wantPrices = append(wantPrices, row{d, hour, want[d].String()})
	}
	gotPrices := rows(t, db, pricesQ)
	if !reflect.DeepEqual(gotPrices, wantPrices) {
		t.Errorf("prices:\n got %v\nwant %v", gotPrices, wantPrices)
	}
	// The same closes as literals, so a change in either derivation shows.
	literal := map[string]string{
		"uatom": "17.145233255422220063", "uion": "4.153327807957258175",
		"uosmo": "1.811038658294277740", "uweth": "1.281698821270455963",
	}
	for d, v := range literal {
		if want[d].String() != v {
			t.Errorf("price of %s = %s, want %s", d, want[d], v)
		}
	}

	// Volume, recomputed here hop by hop from the swaps and the closes.
	var swaps []dex.Swap
	if err := db.NewRaw("SELECT height, tx_index, event_index, time, pool_id, denom_in, amount_in::text AS amount_in, denom_out, amount_out::text AS amount_out FROM osmosis_swaps").
		Scan(ctx, &swaps); err != nil {
		t.Fatal(err)
	}
	vol := map[string]math.LegacyDec{}
	total := math.LegacyZeroDec()
	million := math.LegacyNewDec(1_000_000)
	for _, s := range swaps {
		in := math.LegacyMustNewDecFromStr(s.AmountIn).Mul(want[s.DenomIn]).Quo(million)
		out := math.LegacyMustNewDecFromStr(s.AmountOut).Mul(want[s.DenomOut]).Quo(million)
		v := in.Add(out).QuoInt64(2)
		total = total.Add(v)
		for _, d := range []string{s.DenomIn, s.DenomOut} {
			if cur, ok := vol[d]; ok {
				vol[d] = cur.Add(v)
			} else {
				vol[d] = v
			}
		}
	}
	var wantVol []row
	for _, d := range []string{"uatom", "uion", "uosmo", "uusdc", "uweth"} {
		wantVol = append(wantVol, row{d, hour, vol[d].String()})
	}
	gotVol := rows(t, db, volumeQ)
	if !reflect.DeepEqual(gotVol, wantVol) {
		t.Errorf("volume:\n got %v\nwant %v", gotVol, wantVol)
	}
	if total.String() != "23383.222078763440492543" || vol["uosmo"].String() != "21956.825307805597234465" {
		t.Errorf("total volume %s, uosmo %s", total, vol["uosmo"])
	}

	// Idempotent and incremental: another run changes nothing, and
	// rewinding both watermarks into the hour recomputes the same rows.
	for _, rewind := range []bool{false, true} {
		if rewind {
			if _, err := db.ExecContext(ctx, "UPDATE aggregator_jobs SET watermark = 150"); err != nil {
				t.Fatal(err)
			}
		}
		if err := sched.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		if got := rows(t, db, pricesQ); !reflect.DeepEqual(got, gotPrices) {
			t.Errorf("rewind=%v: prices changed: %v", rewind, got)
		}
		if got := rows(t, db, volumeQ); !reflect.DeepEqual(got, gotVol) {
			t.Errorf("rewind=%v: volume changed: %v", rewind, got)
		}
	}
	var wms []int64
	if err := db.NewRaw("SELECT watermark FROM aggregator_jobs ORDER BY name").Scan(ctx, &wms); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(wms, []int64{osmosistest.LastHeight, osmosistest.LastHeight}) {
		t.Errorf("watermarks %v", wms)
	}
}

// TestIncrementalAcrossHours spreads the recorded swaps over five hours
// (one minute per height), advances the indexed tip in steps with a job
// run after each, and checks that the result equals one run over all
// heights, a full rewind, and closes derived here from the swaps of each hour.
func TestIncrementalAcrossHours(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := testdb.New(t)
	m := report.NewMarket(osmosistest.Index(t, db))
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec("UPDATE osmosis_swaps SET time = '2026-11-21T00:00:00Z'::timestamptz + height * interval '1 minute'")
	sched, err := aggregator.New(db, config.Aggregator{}, slog.New(slog.DiscardHandler), nil, dex.Prices{Market: m}, dex.Volume{Market: m})
	if err != nil {
		t.Fatal(err)
	}
	for _, tip := range []int64{10, 50, 75, 100, 150, 200, 230, 260, 299} {
		exec("UPDATE sync_state SET next_height = ?", tip+1)
		if err := sched.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	prices, volume := rows(t, db, pricesQ), rows(t, db, volumeQ)
	if len(prices) != 5*5 || len(volume) != 5*5 {
		t.Fatalf("%d prices, %d volume rows, want 25 each (5 denoms x 5 hours)", len(prices), len(volume))
	}
	for _, reset := range []string{
		"UPDATE aggregator_jobs SET watermark = 0",
		"DELETE FROM aggregator_jobs; DELETE FROM osmosis_asset_prices; DELETE FROM osmosis_asset_volume_hourly; DELETE FROM osmosis_pair_last_swaps; DELETE FROM osmosis_price_state",
	} {
		exec(reset)
		if err := sched.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		if got := rows(t, db, pricesQ); !reflect.DeepEqual(got, prices) {
			t.Errorf("after %q prices differ:\n got %v\nwant %v", reset, got, prices)
		}
		if got := rows(t, db, volumeQ); !reflect.DeepEqual(got, volume) {
			t.Errorf("after %q volume differs:\n got %v\nwant %v", reset, got, volume)
		}
	}

	// Each hour's close, derived from the last swap of the pair before the hour ends.
	lastBefore := func(base, quote string, end time.Time) math.LegacyDec {
		var s struct {
			DenomIn   string `bun:"denom_in"`
			AmountIn  string `bun:"amount_in"`
			AmountOut string `bun:"amount_out"`
		}
		if err := db.NewRaw(`SELECT denom_in, amount_in::text AS amount_in, amount_out::text AS amount_out FROM osmosis_swaps
			WHERE (denom_in, denom_out) IN ((?, ?), (?, ?)) AND time < ? ORDER BY height DESC, tx_index DESC, event_index DESC LIMIT 1`,
			base, quote, quote, base, end).Scan(ctx, &s); err != nil {
			t.Fatal(err)
		}
		in, out := math.LegacyMustNewDecFromStr(s.AmountIn), math.LegacyMustNewDecFromStr(s.AmountOut)
		if s.DenomIn == base {
			return out.Quo(in)
		}
		return in.Quo(out)
	}
	for _, p := range prices {
		end := p.Hour.Add(time.Hour)
		var want math.LegacyDec
		switch p.Denom {
		case "uusdc":
			want = math.LegacyOneDec()
		case "uatom":
			want = lastBefore("uatom", "uosmo", end).Mul(lastBefore("uosmo", "uusdc", end))
		default:
			want = lastBefore(p.Denom, "uusdc", end)
		}
		if p.Value != want.String() {
			t.Errorf("close of %s at %s = %s, want %s", p.Denom, p.Hour, p.Value, want)
		}
	}
}
