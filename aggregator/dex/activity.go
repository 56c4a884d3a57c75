package dex

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/chainlens/chainlens/aggregator"

	report "github.com/chainlens/chainlens/report/dex"
	"github.com/chainlens/chainlens/store"

	"cosmossdk.io/math"
	"github.com/uptrace/bun"
)

// Activity is the dex_activity job: osmosis_wallet_daily (per wallet and UTC
// day: swap hops sent and their USD value, USD liquidity added plus removed,
// USD delegated plus undelegated), osmosis_pool_flow_daily (per pool and
// day: USD liquidity added and removed) and osmosis_traders_30d (distinct
// wallets with a swap on the 30 days ending each day).
//
// Swap hops are the tx-level rows of osmosis_swaps (block-level epoch swaps
// have no trader), valued as Volume values them. Liquidity movements are
// the rows of osmosis_pool_liquidity (create, join, exit) and
// osmosis_cl_positions (create, withdraw; add_to_position is a withdraw
// plus a create); staking the delegate and unbond rows of staking_events.
// Each amount is valued at its denom's hourly close of its hour (the latest
// close before, when that hour has none); amounts without a price add
// nothing.
//
// It follows the dex_prices job's watermark and recomputes whole days from
// the first day with a new event, so it is idempotent and exact.
type Activity struct{ Market report.Market }

// Name is the job name.
func (Activity) Name() string { return report.JobActivity }

// Upstream: the job values its rows with the prices job's prices, so it runs after
// it and never past it.
func (Activity) Upstream() []string { return []string{report.JobPrices} }

// Version is the version of the job's rows (see aggregator.Job).
func (Activity) Version() string { return "1" }

// Tables are the tables the job writes: its own, the dex chain's rows only.
func (j Activity) Tables() aggregator.Tables {
	return aggregator.Tables{Owned: []string{"osmosis_traders_30d", "osmosis_pool_flow_daily", "osmosis_wallet_daily", report.WalletWeek, report.WalletWeekEnd},
		ChainID: j.Market.ChainID}
}

// movements are the liquidity and staking amounts: who, which pool (0 for
// staking), kind, denom, signed amount, time and height. An add_to_position
// is stored as a withdraw of the old position and a create of the new one
// (osmosis_cl_adds links them, in the same message): the two count as one
// movement, their sum per denom, which is what was added.
const movements = `WITH cl AS (
		SELECT c.chain_id, c.height, c.tx_index, c.sender, c.pool_id, c.amount0, c.amount1,
			coalesce('add ' || a.event_index, 'position ' || c.event_index) AS grp
		FROM osmosis_cl_positions c
		LEFT JOIN LATERAL (SELECT a.event_index FROM osmosis_cl_adds a WHERE a.chain_id = c.chain_id AND a.height = c.height
			AND a.tx_index = c.tx_index AND a.msg_index = c.msg_index AND c.position_id IN (a.position_id, a.new_position_id)
			ORDER BY a.event_index LIMIT 1) a ON true
		WHERE c.chain_id = ?0
	), clm AS NOT MATERIALIZED (
		-- Inlined: the callers' height and time filters reach the scan.
		SELECT cl.sender, cl.pool_id, p.denoms[1] AS denom0, p.denoms[2] AS denom1, sum(cl.amount0) AS amount0, sum(cl.amount1) AS amount1,
			b.time, cl.height
		FROM cl JOIN osmosis_known_pools p ON p.chain_id = cl.chain_id AND p.pool_id = cl.pool_id
		JOIN blocks b ON b.chain_id = cl.chain_id AND b.height = cl.height
		GROUP BY cl.sender, cl.pool_id, p.denoms[1], p.denoms[2], b.time, cl.height, cl.tx_index, cl.grp
	)
	SELECT l.sender AS address, l.pool_id, 'lp' AS kind, l.denom, l.delta AS amount, b.time, l.height FROM osmosis_pool_liquidity l
		JOIN blocks b ON b.chain_id = l.chain_id AND b.height = l.height WHERE l.chain_id = ?0
	UNION ALL SELECT sender, pool_id, 'lp', denom0, amount0, time, height FROM clm
	UNION ALL SELECT sender, pool_id, 'lp', denom1, amount1, time, height FROM clm
	UNION ALL SELECT s.delegator, 0, 'staking', s.denom, s.amount, b.time, s.height FROM staking_events s
		JOIN blocks b ON b.chain_id = s.chain_id AND b.height = s.height
		WHERE s.chain_id = ?0 AND s.kind IN ('delegate', 'unbond')`

// Run advances the activity tables to the prices job's watermark.
func (j Activity) Run(ctx context.Context, tx bun.Tx, wm, bound int64) (int64, int64, error) {
	tip := bound
	if tip <= wm {
		return wm, 0, nil
	}
	chain := j.Market.ChainID
	var first *time.Time
	if err := tx.NewRaw(`SELECT least((SELECT min(time) FROM (`+movements+`) m WHERE height > ?1 AND height <= ?2),
			(SELECT min(time) FROM osmosis_swaps WHERE chain_id = ?0 AND height > ?1 AND height <= ?2))`, chain, wm, tip).Scan(ctx, &first); err != nil {
		return 0, 0, fmt.Errorf("first new activity: %w", err)
	}
	if first == nil {
		return tip, 0, nil
	}
	d0 := first.UTC().Truncate(24 * time.Hour)
	wallets := map[walletDay]*walletRow{}
	pools := map[poolDay]*poolFlowRow{}
	wallet := func(addr string, day time.Time) *walletRow {
		k := walletDay{addr, day}
		if wallets[k] == nil {
			wallets[k] = &walletRow{ChainID: chain, Day: day, Address: addr, trading: math.LegacyZeroDec(), lp: math.LegacyZeroDec(), staking: math.LegacyZeroDec()}
		}
		return wallets[k]
	}

	closes, err := hourlyCloses(ctx, tx, chain, d0)
	if err != nil {
		return 0, 0, err
	}
	var swaps []struct {
		Swap
		Sender string `bun:"sender"`
	}
	if err := tx.NewRaw(`SELECT `+swapColumns+`, sender FROM osmosis_swaps WHERE chain_id = ? AND time >= ? AND height <= ? AND tx_index >= 0
		ORDER BY height, tx_index, event_index`, chain, d0, tip).Scan(ctx, &swaps); err != nil {
		return 0, 0, fmt.Errorf("swaps from %s: %w", d0, err)
	}
	vol := Volume{Market: j.Market}
	for _, s := range swaps {
		w := wallet(s.Sender, s.Time.UTC().Truncate(24*time.Hour))
		w.Swaps++
		if v, ok := vol.hopValue(s.Swap, s.Time.UTC().Truncate(time.Hour), closes); ok {
			w.trading = w.trading.Add(v)
		}
	}

	// The day's heights bound the scans (block times are not indexed).
	before, err := store.HeightBefore(ctx, tx, chain, d0)
	if err != nil {
		return 0, 0, err
	}
	var moves []struct {
		Address string    `bun:"address"`
		PoolID  int64     `bun:"pool_id"`
		Kind    string    `bun:"kind"`
		Denom   string    `bun:"denom"`
		Amount  string    `bun:"amount"`
		Day     time.Time `bun:"day"`
		Price   string    `bun:"price"`
	}
	if err := tx.NewRaw(`SELECT m.address, m.pool_id, m.kind, m.denom, m.amount::text AS amount, date_trunc('day', m.time, 'UTC') AS day,
			coalesce((SELECT price_usd::text FROM osmosis_asset_prices a WHERE a.chain_id = ?0 AND a.denom = m.denom
				AND a.hour <= date_trunc('hour', m.time) ORDER BY a.hour DESC LIMIT 1), '') AS price
		FROM (`+movements+`) m WHERE m.time >= ?1 AND m.height > ?3 AND m.height <= ?2 ORDER BY m.height`, chain, d0, tip, before).Scan(ctx, &moves); err != nil {
		return 0, 0, fmt.Errorf("movements from %s: %w", d0, err)
	}
	for _, m := range moves {
		day := m.Day.UTC()
		w := wallet(m.Address, day)
		var pf *poolFlowRow
		if m.Kind == "lp" {
			k := poolDay{m.PoolID, day}
			if pools[k] == nil {
				pools[k] = &poolFlowRow{ChainID: chain, PoolID: m.PoolID, Day: day, added: math.LegacyZeroDec(), removed: math.LegacyZeroDec()}
			}
			pf = pools[k]
		}
		if m.Price == "" {
			continue
		}
		amt, ok := math.NewIntFromString(m.Amount)
		price, err := math.LegacyNewDecFromStr(m.Price)
		if !ok || err != nil {
			return 0, 0, fmt.Errorf("movement %s %s at %q", m.Amount, m.Denom, m.Price)
		}
		v := j.Market.USDValue(m.Denom, amt.Abs(), price)
		switch {
		case m.Kind == "staking":
			w.staking = w.staking.Add(v)
		case amt.IsNegative():
			w.lp, pf.removed = w.lp.Add(v), pf.removed.Add(v)
		default:
			w.lp, pf.added = w.lp.Add(v), pf.added.Add(v)
		}
	}

	n, err := j.write(ctx, tx, d0, wallets, pools)
	if err != nil {
		return 0, 0, err
	}
	return tip, n, nil
}

func (j Activity) write(ctx context.Context, tx bun.Tx, d0 time.Time, wallets map[walletDay]*walletRow, pools map[poolDay]*poolFlowRow) (int64, error) {
	chain := j.Market.ChainID
	for _, t := range []string{"osmosis_wallet_daily", "osmosis_pool_flow_daily"} {
		if _, err := tx.NewRaw("DELETE FROM "+t+" WHERE chain_id = ? AND day >= ?", chain, d0).Exec(ctx); err != nil {
			return 0, fmt.Errorf("delete %s: %w", t, err)
		}
	}
	wrows := make([]walletRow, 0, len(wallets))
	for _, w := range wallets {
		w.TradingUSD, w.LPUSD, w.StakingUSD = w.trading.String(), w.lp.String(), w.staking.String()
		wrows = append(wrows, *w)
	}
	slices.SortFunc(wrows, func(a, b walletRow) int {
		if c := a.Day.Compare(b.Day); c != 0 {
			return c
		}
		return cmpString(a.Address, b.Address)
	})
	prows := make([]poolFlowRow, 0, len(pools))
	for _, p := range pools {
		p.AddedUSD, p.RemovedUSD = p.added.String(), p.removed.String()
		prows = append(prows, *p)
	}
	slices.SortFunc(prows, func(a, b poolFlowRow) int {
		if c := a.Day.Compare(b.Day); c != 0 {
			return c
		}
		return int(a.PoolID - b.PoolID)
	})
	if err := insertBatches(ctx, tx, wrows); err != nil {
		return 0, fmt.Errorf("insert wallet activity: %w", err)
	}
	if err := insertBatches(ctx, tx, prows); err != nil {
		return 0, fmt.Errorf("insert pool flows: %w", err)
	}
	n, err := j.countTraders(ctx, tx, d0)
	if err != nil {
		return 0, err
	}
	w, err := j.keepWeek(ctx, tx)
	if err != nil {
		return 0, err
	}
	return int64(len(wrows)+len(prows)) + n + w, nil
}

// keepWeek keeps report.WalletWeek: every wallet's sums over the 7 days
// ending on the last day with activity. While that day stays the same the
// week's wallets are summed again and only those whose sums moved are
// written (a run at the tip moves a few); on a new day the week is
// rebuilt (wallets leave it only then). Its reads are the week's wallet
// rows, whatever the history.
func (j Activity) keepWeek(ctx context.Context, tx bun.Tx) (int64, error) {
	chain := j.Market.ChainID
	var last, end *time.Time
	if err := tx.NewRaw(`SELECT (SELECT max(day) FROM osmosis_wallet_daily WHERE chain_id = ?0),
			(SELECT day FROM `+report.WalletWeekEnd+` WHERE chain_id = ?0)`, chain).Scan(ctx, &last, &end); err != nil {
		return 0, fmt.Errorf("last activity day: %w", err)
	}
	if last == nil || end == nil || !end.Equal(*last) {
		for _, t := range []string{report.WalletWeek, report.WalletWeekEnd} {
			if _, err := tx.NewRaw("DELETE FROM "+t+" WHERE chain_id = ?", chain).Exec(ctx); err != nil {
				return 0, fmt.Errorf("delete %s: %w", t, err)
			}
		}
		if last == nil {
			return 0, nil
		}
		if _, err := tx.NewRaw("INSERT INTO "+report.WalletWeekEnd+" (chain_id, day) VALUES (?, ?)", chain, *last).Exec(ctx); err != nil {
			return 0, fmt.Errorf("week end: %w", err)
		}
	}
	res, err := tx.NewRaw(`INSERT INTO `+report.WalletWeek+` AS w (chain_id, address, trading_usd, lp_usd, staking_usd, total_usd)
		SELECT chain_id, address, sum(trading_usd), sum(lp_usd), sum(staking_usd), sum(trading_usd + lp_usd + staking_usd)
		FROM osmosis_wallet_daily WHERE chain_id = ? AND day >= ?::timestamptz - interval '144 hours' AND day <= ?
		GROUP BY chain_id, address
		ON CONFLICT (chain_id, address) DO UPDATE SET trading_usd = EXCLUDED.trading_usd, lp_usd = EXCLUDED.lp_usd,
			staking_usd = EXCLUDED.staking_usd, total_usd = EXCLUDED.total_usd
		WHERE (w.trading_usd::text, w.lp_usd::text, w.staking_usd::text, w.total_usd::text)
			IS DISTINCT FROM (EXCLUDED.trading_usd::text, EXCLUDED.lp_usd::text, EXCLUDED.staking_usd::text, EXCLUDED.total_usd::text)`,
		chain, *last, *last).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("wallets of the week to %s: %w", *last, err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// countTraders rewrites osmosis_traders_30d from the day d0 on: a wallet
// counts on each of its swap days until its next swap day or for 30 days,
// whichever comes first, so the running sum of starts minus ends is the
// number of distinct wallets with a swap on the 30 days ending each day.
// Windows ending on or after d0 only see swap days from d0 - 29 days on.
func (j Activity) countTraders(ctx context.Context, tx bun.Tx, d0 time.Time) (int64, error) {
	chain := j.Market.ChainID
	if _, err := tx.NewRaw("DELETE FROM osmosis_traders_30d WHERE chain_id = ? AND day >= ?", chain, d0).Exec(ctx); err != nil {
		return 0, fmt.Errorf("delete traders: %w", err)
	}
	res, err := tx.NewRaw(`INSERT INTO osmosis_traders_30d (chain_id, day, traders)
		WITH iv AS (SELECT day AS s, least(coalesce(lead(day) OVER (PARTITION BY address ORDER BY day), day + interval '720 hours'),
				day + interval '720 hours') AS e
			FROM osmosis_wallet_daily WHERE chain_id = ?0 AND swaps > 0 AND day >= ?1::timestamptz - interval '696 hours'),
		ds AS (SELECT d, sum(c) AS c FROM (SELECT s AS d, 1 AS c FROM iv UNION ALL SELECT e, -1 FROM iv) ev GROUP BY d),
		run AS (SELECT d, sum(c) OVER (ORDER BY d) AS n, lead(d) OVER (ORDER BY d) AS nd FROM ds)
		SELECT ?0, g.day, run.n FROM run CROSS JOIN LATERAL generate_series(run.d, run.nd - interval '24 hours', interval '24 hours') g(day)
		WHERE g.day >= ?1 AND run.n > 0`, chain, d0).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("count traders: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

type walletDay struct {
	address string
	day     time.Time
}

type poolDay struct {
	pool int64
	day  time.Time
}

// walletRow is a row of osmosis_wallet_daily.
type walletRow struct {
	bun.BaseModel `bun:"table:osmosis_wallet_daily"`
	ChainID       string    `bun:"chain_id"`
	Day           time.Time `bun:"day"`
	Address       string    `bun:"address"`
	Swaps         int       `bun:"swaps"`
	TradingUSD    string    `bun:"trading_usd"`
	LPUSD         string    `bun:"lp_usd"`
	StakingUSD    string    `bun:"staking_usd"`

	trading, lp, staking math.LegacyDec
}

// poolFlowRow is a row of osmosis_pool_flow_daily.
type poolFlowRow struct {
	bun.BaseModel `bun:"table:osmosis_pool_flow_daily"`
	ChainID       string    `bun:"chain_id"`
	PoolID        int64     `bun:"pool_id"`
	Day           time.Time `bun:"day"`
	AddedUSD      string    `bun:"added_usd"`
	RemovedUSD    string    `bun:"removed_usd"`

	added, removed math.LegacyDec
}
