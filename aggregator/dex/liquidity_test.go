package dex_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	report "github.com/chainlens/chainlens/report/dex"

	"cosmossdk.io/math"
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/aggregator/dex"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/osmosistest"
	"github.com/chainlens/chainlens/internal/testdb"
)

// TestLiquidityMatchesTheNode checks the dex_liquidity job against the
// node: the reserves at the last hour equal truth/pool_total_liquidity.json
// for every pool and denom, the daily USD liquidity equals those reserves
// at the day's last prices, and reruns (incremental, or from scratch)
// change nothing.
func TestLiquidityMatchesTheNode(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, _ := testdb.New(t)
	m := report.NewMarket(osmosistest.Index(t, db))
	jobs := []aggregator.Job{dex.Prices{Market: m}, dex.Volume{Market: m}, dex.Liquidity{Market: m}}
	sched, err := aggregator.New(db, config.Aggregator{}, slog.New(slog.DiscardHandler), nil, jobs...)
	if err != nil {
		t.Fatal(err)
	}
	if err := sched.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}

	var truth map[string]struct {
		Liquidity []struct{ Denom, Amount string } `json:"liquidity"`
	}
	raw, err := os.ReadFile(filepath.Join(osmosistest.Dir(), "truth", "pool_total_liquidity.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &truth); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for id, p := range truth {
		for _, a := range p.Liquidity {
			want[id+" "+a.Denom] = a.Amount
		}
	}
	got := map[string]string{}
	for _, r := range kvRows(t, db, `SELECT DISTINCT ON (pool_id, denom) pool_id::text || ' ' || denom AS k, amount::text AS v
		FROM osmosis_pool_reserves_hourly ORDER BY pool_id, denom, hour DESC`) {
		if r.V != "0" {
			got[r.K] = r.V
		}
	}
	if len(want) != 11 || !reflect.DeepEqual(got, want) {
		t.Fatalf("reserves\n got %v\nwant %v", got, want)
	}

	// Daily USD liquidity: the node's reserves at the day's last prices.
	for id, p := range truth {
		sum := math.LegacyZeroDec()
		for _, a := range p.Liquidity {
			amt, _ := math.NewIntFromString(a.Amount)
			price := kvRows(t, db, "SELECT denom AS k, price_usd::text AS v FROM osmosis_asset_prices WHERE denom = '"+a.Denom+"' ORDER BY hour DESC LIMIT 1")
			if len(price) == 1 {
				sum = sum.Add(m.USDValue(a.Denom, amt, math.LegacyMustNewDecFromStr(price[0].V)))
			}
		}
		liq := kvRows(t, db, "SELECT '' AS k, liquidity_usd::text AS v FROM osmosis_pool_liquidity_daily WHERE pool_id = "+id)
		if len(liq) != 1 {
			t.Fatalf("pool %s: %d daily rows, want 1", id, len(liq))
		}
		if d, _ := math.LegacyNewDecFromStr(liq[0].V); !d.Equal(sum) {
			t.Errorf("pool %s: liquidity %s, want %s", id, d, sum)
		}
	}

	before := kvRows(t, db, "SELECT pool_id::text || ' ' || denom || ' ' || hour::text AS k, amount::text AS v FROM osmosis_pool_reserves_hourly ORDER BY 1")
	for _, reset := range []string{"UPDATE aggregator_jobs SET watermark = 0",
		"DELETE FROM osmosis_pool_reserves_hourly; DELETE FROM osmosis_pool_liquidity_daily; UPDATE aggregator_jobs SET watermark = 0 WHERE name = 'dex_liquidity'"} {
		if _, err := db.ExecContext(ctx, reset); err != nil {
			t.Fatal(err)
		}
		if err := sched.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		if after := kvRows(t, db, "SELECT pool_id::text || ' ' || denom || ' ' || hour::text AS k, amount::text AS v FROM osmosis_pool_reserves_hourly ORDER BY 1"); !reflect.DeepEqual(after, before) {
			t.Errorf("after %q reserves differ", reset)
		}
	}
}

type kv struct {
	K string `bun:"k"`
	V string `bun:"v"`
}

func kvRows(t *testing.T, db *bun.DB, q string) []kv {
	t.Helper()
	var out []kv
	if err := db.NewRaw(q).Scan(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	return out
}
