package dex

import (
	"context"
	"fmt"
	"time"

	"github.com/chainlens/chainlens/aggregator"

	report "github.com/chainlens/chainlens/report/dex"
	"github.com/chainlens/chainlens/store"

	"github.com/uptrace/bun"
)

// Staking is the dex_staking job: osmosis_staking_daily, the staking
// rewards the dex chain actually distributed per UTC day, the base of the
// staking APR.
//
// Why distributed rewards and not mint parameters: Osmosis has its own
// epoch-based mint module, so the cosmos-sdk x/mint queries behind the
// mint snapshots (inflation, annual provisions) are skipped on it, and the
// stakers' share of each epoch's provisions (a module parameter) is not in
// any event. What the distribution module credits every distribution block
// (`rewards` events, chains/cosmos block_rewards) is what stakers really
// earn: the staking share of the mint, the tx fees and the taker fees
// swapped to the staking denom, after the community tax, commission
// included. Rewards in other denoms are not counted.
//
// For each day it stores the rewards and commission in the staking denom,
// the seconds of the day covered by indexed blocks (from the later of the
// day's start and the first indexed block to the earlier of the day's end
// and the indexed tip), and the bonded tokens of the latest staking_pool
// snapshot at or before the day's end and the tip (state_snapshots, NULL
// when there is none yet).
//
// Its watermark is the indexed tip; each run recomputes whole days from the
// day of the first new block, and the bonded tokens of every earlier day
// still without them, so reruns give the same rows.
type Staking struct{ Market report.Market }

// Name is the job name.
func (Staking) Name() string { return report.JobStaking }

// Version is the version of the job's rows (see aggregator.Job).
func (Staking) Version() string { return "1" }

// Tables are the tables the job writes: its own, the dex chain's rows only.
func (j Staking) Tables() aggregator.Tables {
	return aggregator.Tables{Owned: []string{"osmosis_staking_daily"}, ChainID: j.Market.ChainID}
}

// Run advances the daily staking rewards to the indexed tip.
func (j Staking) Run(ctx context.Context, tx bun.Tx, wm, bound int64) (int64, int64, error) {
	chain := j.Market.ChainID
	tip, err := store.IndexedTip(ctx, tx, chain)
	if err != nil || tip <= wm {
		return wm, 0, err
	}
	var first *time.Time
	if err := tx.NewRaw("SELECT min(time) FROM blocks WHERE chain_id = ? AND height > ? AND height <= ?", chain, wm, tip).
		Scan(ctx, &first); err != nil {
		return 0, 0, fmt.Errorf("first day to recompute: %w", err)
	}
	if first == nil {
		return tip, 0, nil
	}
	d0 := first.UTC().Truncate(24 * time.Hour)
	// Earlier days without bonded tokens take a snapshot stored since (a
	// backfill's): only that column, a probe per day; their rewards and
	// seconds are final.
	pending, err := tx.NewRaw(`WITH found AS (
			SELECT d.day, s.height, s.amount FROM osmosis_staking_daily d
			CROSS JOIN LATERAL (`+bondedBy+`) s
			WHERE d.chain_id = ?0 AND d.bonded IS NULL AND d.day < ?3)
		UPDATE osmosis_staking_daily d SET bonded = f.amount, snapshot_height = f.height
		FROM found f WHERE d.chain_id = ?0 AND d.day = f.day`, chain, j.Market.Hub, tip, d0).Exec(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("bonded tokens of days before %s: %w", d0.Format(time.DateOnly), err)
	}
	before, err := store.HeightBefore(ctx, tx, chain, d0)
	if err != nil {
		return 0, 0, err
	}
	// ?3 is the first day, ?4 the last height before it.
	res, err := tx.NewRaw(`WITH span AS (
			SELECT (SELECT time FROM blocks WHERE chain_id = ?0 ORDER BY height LIMIT 1) AS first,
				(SELECT time FROM blocks WHERE chain_id = ?0 AND height = ?2) AS tip),
		days AS (
			SELECT d AS day FROM span, generate_series(greatest(?3::timestamptz, date_trunc('day', span.first)),
				date_trunc('day', span.tip), interval '1 day') d),
		paid AS (
			SELECT date_trunc('day', b.time) AS day,
				coalesce(sum(r.amount) FILTER (WHERE r.kind = 'rewards'), 0) AS rewards,
				coalesce(sum(r.amount) FILTER (WHERE r.kind = 'commission'), 0) AS commission
			FROM block_rewards r JOIN blocks b ON b.chain_id = r.chain_id AND b.height = r.height
			WHERE r.chain_id = ?0 AND r.denom = ?1 AND r.height > ?4 AND r.height <= ?2
			GROUP BY 1),
		bonded AS (
			SELECT d.day, s.height, s.amount FROM days d CROSS JOIN span
			LEFT JOIN LATERAL (`+bondedBy+`) s ON true)
		INSERT INTO osmosis_staking_daily (chain_id, day, denom, rewards, commission, seconds, bonded, snapshot_height)
		SELECT ?0, d.day, ?1, coalesce(p.rewards, 0), coalesce(p.commission, 0),
			extract(epoch FROM least(d.day + interval '1 day', span.tip) - greatest(d.day, span.first)),
			b.amount, b.height
		FROM days d CROSS JOIN span LEFT JOIN paid p ON p.day = d.day LEFT JOIN bonded b ON b.day = d.day
		ON CONFLICT (chain_id, day) DO UPDATE SET denom = EXCLUDED.denom, rewards = EXCLUDED.rewards,
			commission = EXCLUDED.commission, seconds = EXCLUDED.seconds, bonded = EXCLUDED.bonded,
			snapshot_height = EXCLUDED.snapshot_height`,
		chain, j.Market.Hub, tip, d0, before).Exec(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("staking days from %s: %w", d0.Format(time.DateOnly), err)
	}
	n, _ := res.RowsAffected()
	m, _ := pending.RowsAffected()
	return tip, n + m, nil
}

// bondedBy is the bonded tokens (?1) of the latest staking_pool snapshot
// at or before height ?2 taken before the end of day d.day (?0 the chain).
const bondedBy = `SELECT t.height, p.amount FROM state_snapshots t
	JOIN state_snapshots p ON p.chain_id = t.chain_id AND p.height = t.height AND p.kind = 'staking_pool'
		AND p.key = 'bonded' AND p.denom = ?1
	WHERE t.chain_id = ?0 AND t.kind = 'taken' AND t.key = 'staking_pool' AND t.height <= ?2
		AND t.time < d.day + interval '1 day'
	ORDER BY t.time DESC, t.height DESC LIMIT 1`
