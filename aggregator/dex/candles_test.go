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
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/aggregator/dex"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/osmosistest"
)

type bar struct {
	Key    string    `bun:"key"`
	TF     int       `bun:"tf"`
	Bucket time.Time `bun:"bucket"`
	Open   string    `bun:"open"`
	High   string    `bun:"high"`
	Low    string    `bun:"low"`
	Close  string    `bun:"close"`
	Sum    string    `bun:"sum"`
}

func bars(t *testing.T, db *bun.DB, q string, args ...any) []bar {
	t.Helper()
	var out []bar
	if err := db.NewRaw(q, args...).Scan(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	for i := range out {
		out[i].Bucket = out[i].Bucket.UTC()
	}
	return out
}

const (
	assetBarsQ = `SELECT denom AS key, tf, bucket, open::text AS open, high::text AS high, low::text AS low, close::text AS close,
		volume_usd::text AS sum FROM osmosis_asset_candles ORDER BY denom, tf, bucket`
	pairBarsQ = `SELECT pool_id || ' ' || base || ' ' || quote AS key, tf, bucket, open::text AS open, high::text AS high, low::text AS low,
		close::text AS close, base_amount || ' ' || quote_amount AS sum FROM osmosis_pair_candles ORDER BY 1, tf, bucket`
)

func dec(t *testing.T, s string) math.LegacyDec {
	t.Helper()
	d, err := math.LegacyNewDecFromStr(s)
	if err != nil {
		t.Fatalf("decimal %q: %v", s, err)
	}
	return d
}

func TestCandlesOnLocalnet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, ch := osmosistest.New(t)
	m := report.NewMarket(ch)
	sched, err := aggregator.New(db, config.Aggregator{}, slog.New(slog.DiscardHandler), nil,
		dex.Prices{Market: m}, dex.Volume{Market: m}, dex.Candles{Market: m})
	if err != nil {
		t.Fatal(err)
	}
	if err := sched.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}

	// Pool 3's first hop (block_results height 17, tx 1): 1698065uatom in,
	// 16940946uosmo out, at 21:28:07; its last (height 294): 7896uatom in,
	// 74752uosmo out, at 21:32:48. Both open and close their minute bar.
	pool3 := bars(t, db, `SELECT pool_id || ' ' || base || ' ' || quote AS key, tf, bucket, open::text AS open, high::text AS high,
		low::text AS low, close::text AS close, '' AS sum FROM osmosis_pair_candles WHERE pool_id = 3 AND tf = 1 ORDER BY 1, bucket`)
	if len(pool3) != 10 {
		t.Fatalf("%d minute bars of pool 3, want 5 per direction", len(pool3))
	}
	if first := dec(t, "16940946").Quo(dec(t, "1698065")); !dec(t, pool3[0].Open).Equal(first) || pool3[0].Key != "3 uatom uosmo" ||
		!pool3[0].Bucket.Equal(time.Date(2026, 11, 21, 21, 28, 0, 0, time.UTC)) {
		t.Errorf("first bar of pool 3 %+v, want open %s", pool3[0], first)
	}
	if last := dec(t, "7896").Quo(dec(t, "74752")); !dec(t, pool3[9].Close).Equal(last) || pool3[9].Key != "3 uosmo uatom" {
		t.Errorf("last bar of pool 3 %+v, want close %s", pool3[9], last)
	}

	// Every pair bar of every size, derived here straight from the swap rows.
	want := bars(t, db, `WITH hops AS (
			SELECT pool_id, denom_in AS base, denom_out AS quote, amount_in AS ba, amount_out AS qa, time, height, tx_index, event_index FROM osmosis_swaps
			UNION ALL SELECT pool_id, denom_out, denom_in, amount_out, amount_in, time, height, tx_index, event_index FROM osmosis_swaps),
		sizes AS (SELECT unnest(?::int[]) AS tf),
		b AS (SELECT h.*, s.tf, CASE s.tf WHEN 10080 THEN date_trunc('week', h.time, 'UTC') WHEN 43800 THEN date_trunc('month', h.time, 'UTC')
			ELSE to_timestamp(floor(extract(epoch FROM h.time) / (s.tf * 60)) * s.tf * 60) END AS bucket,
			round(h.qa * 1.000000000000000000000000000000 / h.ba, 18) AS p FROM hops h CROSS JOIN sizes s)
		SELECT pool_id || ' ' || base || ' ' || quote AS key, tf, bucket,
			(array_agg(p ORDER BY height, tx_index, event_index))[1]::text AS open, max(p)::text AS high, min(p)::text AS low,
			(array_agg(p ORDER BY height DESC, tx_index DESC, event_index DESC))[1]::text AS close, sum(ba) || ' ' || sum(qa) AS sum
		FROM b GROUP BY pool_id, base, quote, tf, bucket ORDER BY 1, tf, bucket`, pgdialect.Array(report.Resolutions))
	got := bars(t, db, pairBarsQ)
	if len(got) != len(want) {
		t.Fatalf("%d pair bars, want %d", len(got), len(want))
	}
	for i := range want {
		w, g := want[i], got[i]
		if w.Key != g.Key || w.TF != g.TF || !w.Bucket.Equal(g.Bucket) || w.Sum != g.Sum ||
			!dec(t, w.Open).Equal(dec(t, g.Open)) || !dec(t, w.High).Equal(dec(t, g.High)) ||
			!dec(t, w.Low).Equal(dec(t, g.Low)) || !dec(t, w.Close).Equal(dec(t, g.Close)) {
			t.Errorf("pair bar\n got %+v\nwant %+v", g, w)
		}
	}

	// Each pair row counts every hop between its two denoms: a pool's hourly
	// pair rows (one direction) add up to its dex_volume hour.
	var mismatched []string
	if err := db.NewRaw(`SELECT v.pool_id || ': ' || v.volume_usd || ' vs ' || coalesce(c.v, 0) FROM osmosis_pool_volume_hourly v
		LEFT JOIN (SELECT pool_id, bucket, sum(volume_usd) AS v FROM osmosis_pair_candles WHERE tf = 60 AND base < quote GROUP BY 1, 2) c
			ON c.pool_id = v.pool_id AND c.bucket = v.hour
		WHERE c.v IS DISTINCT FROM v.volume_usd`).Scan(ctx, &mismatched); err != nil || len(mismatched) > 0 {
		t.Errorf("pair volume vs pool volume: %v %v", mismatched, err)
	}

	// Asset bars: the hour's close is dex_prices' close, the minutes' volume
	// adds up to dex_volume's hour, and every coarser bar is the roll-up of
	// its minutes.
	assets := bars(t, db, assetBarsQ)
	hourly := map[string]bar{}
	minutes := map[string][]bar{}
	for _, b := range assets {
		switch b.TF {
		case 60:
			hourly[b.Key] = b
		case 1:
			minutes[b.Key] = append(minutes[b.Key], b)
		}
	}
	for _, p := range rows(t, db, pricesQ) {
		if h, ok := hourly[p.Denom]; !ok || !h.Bucket.Equal(p.Hour) || !dec(t, h.Close).Equal(dec(t, p.Value)) {
			t.Errorf("%s: hourly bar %+v, dex_prices close %s", p.Denom, h, p.Value)
		}
	}
	for _, v := range rows(t, db, volumeQ) {
		if h := hourly[v.Denom]; !dec(t, h.Sum).Equal(dec(t, v.Value)) {
			t.Errorf("%s: bar volume %s, dex_volume %s", v.Denom, h.Sum, v.Value)
		}
	}
	for _, b := range assets {
		if b.TF == 1 {
			continue
		}
		var in []bar
		for _, mb := range minutes[b.Key] {
			if report.BarStart(mb.Bucket, b.TF).Equal(b.Bucket) {
				in = append(in, mb)
			}
		}
		if len(in) == 0 {
			t.Errorf("bar %+v has no minutes", b)
			continue
		}
		hi, lo, vol := dec(t, in[0].High), dec(t, in[0].Low), math.LegacyZeroDec()
		for _, mb := range in {
			hi, lo, vol = math.LegacyMaxDec(hi, dec(t, mb.High)), math.LegacyMinDec(lo, dec(t, mb.Low)), vol.Add(dec(t, mb.Sum))
		}
		if !dec(t, b.Open).Equal(dec(t, in[0].Open)) || !dec(t, b.Close).Equal(dec(t, in[len(in)-1].Close)) ||
			!dec(t, b.High).Equal(hi) || !dec(t, b.Low).Equal(lo) || !dec(t, b.Sum).Equal(vol) {
			t.Errorf("bar %+v is not the roll-up of its %d minutes", b, len(in))
		}
	}
	if w := report.BarStart(time.Date(2026, 11, 21, 21, 30, 0, 0, time.UTC), report.Week); !w.Equal(time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("week of 2026-11-21 starts %s, want Monday 2026-11-16", w)
	}

	// A rerun from scratch writes the same rows.
	if _, err := db.NewRaw("UPDATE aggregator_jobs SET watermark = 0 WHERE name = 'dex_candles'").Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := sched.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if again := bars(t, db, assetBarsQ); !reflect.DeepEqual(again, assets) {
		t.Error("asset bars differ after a rerun")
	}
	if again := bars(t, db, pairBarsQ); !reflect.DeepEqual(again, got) {
		t.Error("pair bars differ after a rerun")
	}
}
