package dex_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	report "github.com/chainlens/chainlens/report/dex"

	"cosmossdk.io/math"
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/aggregator/dex"
	"github.com/chainlens/chainlens/chains/osmosis/clmath"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/osmosistest"
	"github.com/chainlens/chainlens/internal/testdb"
)

func readTruth(t *testing.T, name string, v any) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(osmosistest.Dir(), "truth", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatal(err)
	}
}

// TestPortfolioOnLocalnet runs the dex jobs on the recorded localnet and
// checks the dex_portfolio tables against the node's state at the last
// height: every address's last balance equals truth/balances.json, every
// pool's last total shares truth/pools.json, and every open position's
// amounts at its pool's last replayed state truth/cl_user_positions.json,
// exactly; a second run changes nothing.
func TestPortfolioOnLocalnet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db, ch := osmosistest.New(t)
	m := report.NewMarket(ch)
	sched, err := aggregator.New(db, config.Aggregator{}, slog.New(slog.DiscardHandler), nil,
		dex.Prices{Market: m}, dex.Volume{Market: m}, dex.Liquidity{Market: m}, dex.CLState{Market: m}, dex.Portfolio{Market: m})
	if err != nil {
		t.Fatal(err)
	}
	if err := sched.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}

	// Balances.
	var truth map[string][]struct{ Denom, Amount string }
	readTruth(t, "balances.json", &truth)
	want := map[string]string{}
	for addr, coins := range truth {
		for _, c := range coins {
			want[addr+" "+c.Denom] = c.Amount
		}
	}
	got := lastRows(t, db, `SELECT DISTINCT ON (address, denom) address || ' ' || denom AS k, amount::text AS v
		FROM osmosis_balances_hourly ORDER BY address, denom, hour DESC`)
	for k, v := range got {
		if v == "0" {
			delete(got, k)
		}
	}
	if !reflect.DeepEqual(got, want) {
		for k, v := range want {
			if got[k] != v {
				t.Errorf("balance %s: %s, node %s", k, got[k], v)
			}
		}
		for k, v := range got {
			if _, ok := want[k]; !ok {
				t.Errorf("balance %s: %s, node none", k, v)
			}
		}
	}
	if len(want) != 73 {
		t.Errorf("%d balances in truth", len(want))
	}

	// Pool shares.
	var pools struct {
		Pools []struct {
			ID          string                   `json:"id"`
			TotalShares *struct{ Amount string } `json:"total_shares"`
		} `json:"pools"`
	}
	readTruth(t, "pools.json", &pools)
	wantShares := map[string]string{}
	for _, p := range pools.Pools {
		if p.TotalShares != nil {
			wantShares[p.ID] = p.TotalShares.Amount
		}
	}
	gotShares := lastRows(t, db, `SELECT DISTINCT ON (pool_id) pool_id::text AS k, total_shares::text AS v
		FROM osmosis_pool_shares_hourly ORDER BY pool_id, hour DESC`)
	if !reflect.DeepEqual(gotShares, wantShares) || len(wantShares) != 3 {
		t.Errorf("total shares %v, node %v", gotShares, wantShares)
	}

	// Locked coins: truth/lockup_locks.json, summed per owner.
	var locks map[string]struct {
		Lock struct {
			Owner string
			Coins []struct{ Denom, Amount string }
		}
	}
	readTruth(t, "lockup_locks.json", &locks)
	sums := map[string]math.Int{}
	for _, l := range locks {
		for _, c := range l.Lock.Coins {
			k := l.Lock.Owner + " " + c.Denom
			if _, ok := sums[k]; !ok {
				sums[k] = math.ZeroInt()
			}
			a, _ := math.NewIntFromString(c.Amount)
			sums[k] = sums[k].Add(a)
		}
	}
	wantLocked := map[string]string{}
	for k, v := range sums {
		wantLocked[k] = v.String()
	}
	gotLocked := lastRows(t, db, `SELECT k, v FROM (SELECT DISTINCT ON (address, denom) address || ' ' || denom AS k, amount::text AS v, amount
		FROM osmosis_locked_hourly ORDER BY address, denom, hour DESC) l WHERE amount <> 0`)
	// alice 1666666666666666667 and bob 1250000000000000000 gamm/pool/3.
	if !reflect.DeepEqual(gotLocked, wantLocked) || len(wantLocked) != 2 {
		t.Errorf("locked %v, node %v", gotLocked, wantLocked)
	}

	// Open positions and their amounts at the pools' last state.
	var users map[string]struct {
		Positions []struct {
			Position struct {
				ID      string `json:"position_id"`
				Address string `json:"address"`
			} `json:"position"`
			Asset0 struct{ Amount string } `json:"asset0"`
			Asset1 struct{ Amount string } `json:"asset1"`
		} `json:"positions"`
	}
	readTruth(t, "cl_user_positions.json", &users)
	wantPos := map[string]string{}
	for _, u := range users {
		for _, p := range u.Positions {
			wantPos[p.Position.ID] = p.Position.Address + " " + p.Asset0.Amount + " " + p.Asset1.Amount
		}
	}
	var open []struct {
		ID        int64  `bun:"position_id"`
		Address   string `bun:"address"`
		Lower     int64  `bun:"lower_tick"`
		Upper     int64  `bun:"upper_tick"`
		Liquidity string `bun:"liquidity"`
		Sqrt      string `bun:"sqrt_price"`
		Tick      int64  `bun:"tick"`
	}
	if err := db.NewRaw(`SELECT p.position_id, p.address, p.lower_tick, p.upper_tick, p.liquidity::text AS liquidity,
			s.sqrt_price::text AS sqrt_price, s.tick
		FROM (SELECT DISTINCT ON (position_id) * FROM osmosis_cl_position_liquidity_hourly ORDER BY position_id, hour DESC) p
		JOIN LATERAL (SELECT sqrt_price, tick FROM osmosis_cl_state_hourly s WHERE s.chain_id = p.chain_id AND s.pool_id = p.pool_id
			ORDER BY hour DESC LIMIT 1) s ON true
		WHERE p.liquidity > 0 ORDER BY p.position_id`).Scan(ctx, &open); err != nil {
		t.Fatal(err)
	}
	gotPos := map[string]string{}
	for _, p := range open {
		a0, a1, err := clmath.PositionAmounts(p.Liquidity, p.Lower, p.Upper, p.Sqrt, p.Tick)
		if err != nil {
			t.Fatal(err)
		}
		gotPos[strconv.FormatInt(p.ID, 10)] = p.Address + " " + a0.String() + " " + a1.String()
	}
	if !reflect.DeepEqual(gotPos, wantPos) || len(wantPos) == 0 {
		t.Errorf("open positions\n got %v\nnode %v", gotPos, wantPos)
	}

	// A second run over the same tip changes nothing; a rerun from scratch
	// gives the same rows.
	before := dump(t, db)
	if _, err := db.ExecContext(ctx, "UPDATE aggregator_jobs SET watermark = 0 WHERE name = 'dex_portfolio'"); err != nil {
		t.Fatal(err)
	}
	if err := sched.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if after := dump(t, db); after != before {
		t.Errorf("rerun changed the portfolio tables")
	}
}

func lastRows(t *testing.T, db *bun.DB, q string) map[string]string {
	t.Helper()
	var rs []struct {
		K string `bun:"k"`
		V string `bun:"v"`
	}
	if err := db.NewRaw(q).Scan(context.Background(), &rs); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range rs {
		out[r.K] = r.V
	}
	return out
}

func dump(t *testing.T, db *bun.DB) string {
	t.Helper()
	var parts []string
	for _, q := range []string{
		"SELECT string_agg(concat_ws(',', address, denom, hour, amount), ';' ORDER BY address, denom, hour) FROM osmosis_balances_hourly",
		"SELECT string_agg(concat_ws(',', pool_id, hour, total_shares), ';' ORDER BY pool_id, hour) FROM osmosis_pool_shares_hourly",
		"SELECT string_agg(concat_ws(',', address, denom, hour, amount), ';' ORDER BY address, denom, hour) FROM osmosis_locked_hourly",
		"SELECT string_agg(concat_ws(',', position_id, hour, address, liquidity), ';' ORDER BY position_id, hour) FROM osmosis_cl_position_liquidity_hourly",
	} {
		var s string
		if err := db.NewRaw(q).Scan(context.Background(), &s); err != nil {
			t.Fatal(err)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "\n")
}

// TestPortfolioIncremental spreads the localnet over three days (block h at
// h × 10 minutes after the genesis at 2026-11-21 00:00), runs dex_portfolio
// at growing indexed tips, and compares its tables with one run from
// scratch; the last balances still equal the node's.
func TestPortfolioIncremental(t *testing.T) {
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
	exec("UPDATE blocks SET time = '2026-11-21T00:00:00Z'::timestamptz + height * interval '10 minutes'")
	exec("UPDATE genesis_imports SET genesis_time = '2026-11-21T00:00:00Z'")
	sched, err := aggregator.New(db, config.Aggregator{}, slog.New(slog.DiscardHandler), nil, dex.Portfolio{Market: m})
	if err != nil {
		t.Fatal(err)
	}
	for _, tip := range []int64{1, 5, 6, 50, 75, 100, 144, 150, 200, 230, 260, 299} {
		exec("UPDATE sync_state SET next_height = ?", tip+1)
		if err := sched.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	stepped := dump(t, db)
	var hours int
	if err := db.NewRaw("SELECT count(DISTINCT hour) FROM osmosis_balances_hourly").Scan(ctx, &hours); err != nil || hours < 40 {
		t.Fatalf("balances over %d hours (%v)", hours, err)
	}
	exec(`DELETE FROM aggregator_jobs; DELETE FROM osmosis_balances_hourly; DELETE FROM osmosis_locked_hourly;
		DELETE FROM osmosis_pool_shares_hourly; DELETE FROM osmosis_cl_position_liquidity_hourly`)
	if err := sched.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if once := dump(t, db); once != stepped {
		t.Errorf("step by step and at once differ:\n%.2000s\n%.2000s", stepped, once)
	}
	var truth map[string][]struct{ Denom, Amount string }
	readTruth(t, "balances.json", &truth)
	got := lastRows(t, db, `SELECT DISTINCT ON (address, denom) address || ' ' || denom AS k, amount::text AS v
		FROM osmosis_balances_hourly ORDER BY address, denom, hour DESC`)
	for addr, coins := range truth {
		for _, c := range coins {
			if got[addr+" "+c.Denom] != c.Amount {
				t.Errorf("%s %s: %s, node %s", addr, c.Denom, got[addr+" "+c.Denom], c.Amount)
			}
		}
	}
}
