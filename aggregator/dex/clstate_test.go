package dex_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/aggregator/dex"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/devchain/synthosmosis"
	report "github.com/chainlens/chainlens/report/dex"
)

// ticksEachHourQ lists every pool's initialized ticks at the end of each
// hour the pool has a state row for, folded from all the changes up to
// that hour (the base untouched): the whole tick set per pool and hour, as
// version 1 of the job stored it.
const ticksEachHourQ = `SELECT concat_ws(' ', s.pool_id, s.hour, t.tick, t.liquidity_net, t.liquidity_gross) FROM osmosis_cl_state_hourly s
	CROSS JOIN LATERAL (SELECT * FROM (SELECT DISTINCT ON (tick) tick, liquidity_net, liquidity_gross FROM osmosis_cl_tick_changes c
		WHERE c.chain_id = s.chain_id AND c.pool_id = s.pool_id AND c.hour <= s.hour ORDER BY tick, hour DESC) x WHERE liquidity_gross > 0) t`

// TestTicksAreThePositionsSums: a generated Osmosis's concentrated pools
// (positions opened and withdrawn, swaps crossing ticks) with its blocks a
// minute apart, so 300 heights span five hours, replayed by dex_cl_state at
// growing tips (the tick base moves with each run, and a run rewinds into
// an hour already written): at the end of every hour, each pool's ticks as
// report.TicksAt reads them (base and changes) are the sums of the indexed
// position changes up to that hour — net: liquidity added at a lower tick
// less that at an upper tick; gross: both —, and the job's rows equal
// those of one run over the whole range.
func TestTicksAreThePositionsSums(t *testing.T) {
	t.Parallel()
	const last = 300
	p := synthosmosis.Mainnet(1, 12)
	p.Traders, p.BalancerPools, p.StableswapPools, p.CLPools = 200, 4, 1, 6
	ch, client := serveGenerated(t, p, last)
	db := indexGeneratedOnly(t, ch, client, 0, last)
	ctx := context.Background()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec("UPDATE blocks SET time = '2026-11-21T00:00:00Z'::timestamptz + height * interval '1 minute'")
	exec("UPDATE osmosis_swaps SET time = '2026-11-21T00:00:00Z'::timestamptz + height * interval '1 minute'")
	m := report.NewMarket(ch)
	sched, err := aggregator.New(db, config.Aggregator{}, slog.New(slog.DiscardHandler), nil, dex.CLState{Market: m})
	if err != nil {
		t.Fatal(err)
	}
	for _, tip := range []int64{40, 70, 119, 125, 180, 181, 240, last} {
		exec("UPDATE sync_state SET next_height = ?", tip+1)
		if err := sched.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
	}
	read := func(q string, args ...any) []string {
		t.Helper()
		var out []string
		if err := db.NewRaw(q, args...).Scan(ctx, &out); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return out
	}
	var base time.Time
	if err := db.NewRaw("SELECT hour FROM osmosis_cl_tick_base_hour").Scan(ctx, &base); err != nil {
		t.Fatal(err)
	}
	hours := read("SELECT DISTINCT hour::text FROM osmosis_cl_state_hourly ORDER BY 1")
	if len(hours) < 5 {
		t.Fatalf("state at %d hours, want 5 or more", len(hours))
	}
	for _, hs := range hours {
		h, err := time.Parse("2006-01-02 15:04:05-07", hs)
		if err != nil {
			t.Fatal(err)
		}
		ticks, err := report.TicksAt(ctx, db, ch.ID, 0, h)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, tk := range ticks {
			got = append(got, fmt.Sprintf("%d %d %s %s", tk.PoolID, tk.Tick, tk.Net, tk.Gross))
		}
		// Only pools with a state: a pool's ticks are written once it has a price.
		want := read(`SELECT concat_ws(' ', pool_id, tick, sum(net), sum(gross)) FROM (
				SELECT c.pool_id, c.lower_tick AS tick, c.liquidity AS net, c.liquidity AS gross FROM osmosis_cl_positions c JOIN blocks b USING (chain_id, height)
					WHERE b.time < ?0::timestamptz + interval '1 hour'
				UNION ALL SELECT c.pool_id, c.upper_tick, -c.liquidity, c.liquidity FROM osmosis_cl_positions c JOIN blocks b USING (chain_id, height)
					WHERE b.time < ?0::timestamptz + interval '1 hour') p
			WHERE pool_id IN (SELECT pool_id FROM osmosis_cl_state_hourly WHERE hour <= ?0)
			GROUP BY pool_id, tick HAVING sum(gross) > 0 ORDER BY pool_id, tick`, h)
		if len(want) == 0 || !slices.Equal(normalize(got), normalize(want)) {
			t.Errorf("ticks at the end of %s (base at %s): %d, want %d; %s", hs, base, len(got), len(want), firstDiff(normalize(got), normalize(want)))
		}
	}
	changes := `SELECT concat_ws(' ', pool_id, hour, tick, liquidity_net, liquidity_gross) FROM osmosis_cl_tick_changes ORDER BY 1`
	states := `SELECT concat_ws(' ', pool_id, hour, sqrt_price, tick, liquidity) FROM osmosis_cl_state_hourly ORDER BY 1`
	stepped, steppedStates := read(changes), read(states)
	if n := len(read("SELECT 1 FROM osmosis_cl_tick_changes WHERE liquidity_gross = 0")); n == 0 {
		t.Errorf("no tick went back to uninitialized: the test does not cover withdrawals")
	}
	exec("DELETE FROM osmosis_cl_tick_changes; DELETE FROM osmosis_cl_state_hourly; DELETE FROM osmosis_cl_tick_base; DELETE FROM osmosis_cl_tick_base_hour; DELETE FROM aggregator_jobs")
	if err := sched.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if whole := read(changes); !slices.Equal(stepped, whole) {
		t.Errorf("tick changes at growing tips differ from one run: %s", firstDiff(stepped, whole))
	}
	if whole := read(states); !slices.Equal(steppedStates, whole) {
		t.Errorf("states at growing tips differ from one run: %s", firstDiff(steppedStates, whole))
	}
}
