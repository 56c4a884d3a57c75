package dex

import (
	"context"
	"fmt"
	"time"

	"github.com/chainlens/chainlens/aggregator"

	report "github.com/chainlens/chainlens/report/dex"
	"github.com/chainlens/chainlens/store"

	"cosmossdk.io/math"
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/chains"
)

// RewardsReceived is the dex_rewards_received job:
// osmosis_rewards_received_daily, the rewards each address received per
// UTC day, denom and source, in base units:
//
//   - cl: the spread rewards and incentives collected from concentrated-
//     liquidity positions (osmosis_cl_rewards kinds spread and incentives;
//     forfeited incentives are not received), credited to the position's
//     creator (its create row in osmosis_cl_positions; transfers of
//     positions are not followed), or for a position a late start imported
//     its owner then;
//   - gamm: the incentives module's gauge distributions (`distribution`
//     events, receiver and amount), that is the rewards of locked classic
//     pool shares, superfluid included;
//   - staking: the staking rewards withdrawn from the address's
//     delegations (withdraw_rewards rows of staking_events), credited to the
//     withdraw address the delegator last set before (set_withdraw_address
//     events of successful txs), else to the delegator.
//
// Its watermark is the indexed tip; each run recomputes whole days from the
// day of the first new block, so reruns give the same rows.
type RewardsReceived struct{ Market report.Market }

// Name is the job name.
func (RewardsReceived) Name() string { return report.JobRewardsReceived }

// RawInputs: withdraw-address changes (with their message's delegator)
// and the incentive gauges' distributions.
func (j RewardsReceived) RawInputs() aggregator.RawInputs {
	return aggregator.RawInputs{ChainID: j.Market.ChainID, Events: []string{"set_withdraw_address", "distribution"},
		Messages: []string{"/cosmos.distribution.v1beta1.MsgSetWithdrawAddress"}}
}

// Version is the version of the job's rows (see aggregator.Job).
func (RewardsReceived) Version() string { return "1" }

// Tables are the tables the job writes: its own, the dex chain's rows only.
func (j RewardsReceived) Tables() aggregator.Tables {
	return aggregator.Tables{Owned: []string{"osmosis_rewards_received_daily"}, ChainID: j.Market.ChainID}
}

// Run advances the rewards received to the indexed tip.
func (j RewardsReceived) Run(ctx context.Context, tx bun.Tx, wm, bound int64) (int64, int64, error) {
	chain := j.Market.ChainID
	tip, err := store.IndexedTip(ctx, tx, chain)
	if err != nil || tip <= wm {
		return wm, 0, err
	}
	var first *time.Time
	if err := tx.NewRaw("SELECT min(time) FROM blocks WHERE chain_id = ? AND height > ? AND height <= ?", chain, wm, tip).
		Scan(ctx, &first); err != nil {
		return 0, 0, fmt.Errorf("first new block: %w", err)
	}
	if first == nil {
		return tip, 0, nil
	}
	d0 := first.UTC().Truncate(24 * time.Hour)
	var got []struct {
		Day     time.Time `bun:"day"`
		Source  string    `bun:"source"`
		Address string    `bun:"address"`
		Denom   string    `bun:"denom"`
		Amount  string    `bun:"amount"`
	}
	if err := tx.NewRaw(`WITH withdraw AS (
			SELECT e.height, e.tx_index, coalesce(m.body->>'delegator_address', t.signers[1]) AS delegator,
				(SELECT a->>'value' FROM jsonb_array_elements(e.attributes) a WHERE a->>'key' = 'withdraw_address' LIMIT 1) AS address
			FROM events e JOIN txs t ON t.chain_id = e.chain_id AND t.height = e.height AND t.tx_index = e.tx_index
			LEFT JOIN messages m ON m.chain_id = e.chain_id AND m.height = e.height AND m.tx_index = e.tx_index AND m.msg_index = e.msg_index
			WHERE e.chain_id = ?0 AND e.type = 'set_withdraw_address' AND e.height <= ?2 AND t.code = 0)
		SELECT date_trunc('day', b.time) AS day, r.source, r.address, r.denom, r.amount
		FROM (
			SELECT r.height, 'cl' AS source, c.sender AS address, r.denom, r.amount::text AS amount
				FROM osmosis_cl_rewards r
				JOIN LATERAL (SELECT sender FROM (
						SELECT height, sender FROM osmosis_cl_positions c WHERE c.chain_id = r.chain_id AND c.position_id = r.position_id
							AND c.kind = 'create'
						UNION ALL SELECT height, address FROM (`+openingPositions+`) o WHERE o.position_id = r.position_id) c
					ORDER BY height LIMIT 1) c ON true
				WHERE r.chain_id = ?0 AND r.kind IN ('spread', 'incentives') AND r.amount > 0
			UNION ALL SELECT s.height, 'staking',
					coalesce((SELECT w.address FROM withdraw w WHERE w.delegator = s.delegator
						AND (w.height, w.tx_index) < (s.height, s.tx_index) ORDER BY w.height DESC, w.tx_index DESC LIMIT 1), s.delegator),
					s.denom, s.amount::text FROM staking_events s
				WHERE s.chain_id = ?0 AND s.kind = 'withdraw_rewards' AND s.amount > 0
			UNION ALL SELECT e.height, 'gamm',
					(SELECT a->>'value' FROM jsonb_array_elements(e.attributes) a WHERE a->>'key' = 'receiver' LIMIT 1),
					'', (SELECT a->>'value' FROM jsonb_array_elements(e.attributes) a WHERE a->>'key' = 'amount' LIMIT 1)
				FROM events e WHERE e.chain_id = ?0 AND e.type = 'distribution'
		) r JOIN blocks b ON b.chain_id = ?0 AND b.height = r.height
		WHERE b.time >= ?1 AND r.height <= ?2 AND r.address IS NOT NULL AND r.amount IS NOT NULL`,
		chain, d0, tip).Scan(ctx, &got); err != nil {
		return 0, 0, fmt.Errorf("rewards received from %s: %w", d0.Format(time.DateOnly), err)
	}
	type key struct {
		day                    time.Time
		address, denom, source string
	}
	sums := map[key]math.Int{}
	var order []key
	add := func(k key, amount string) error {
		a, ok := math.NewIntFromString(amount)
		if !ok {
			return fmt.Errorf("reward amount %q of %s", amount, k.address)
		}
		if !a.IsPositive() {
			return nil
		}
		if prev, ok := sums[k]; ok {
			sums[k] = prev.Add(a)
			return nil
		}
		sums[k] = a
		order = append(order, k)
		return nil
	}
	for _, g := range got {
		k := key{g.Day.UTC(), g.Address, g.Denom, g.Source}
		if g.Source != "gamm" {
			if err := add(k, g.Amount); err != nil {
				return 0, 0, err
			}
			continue
		}
		coins, err := chains.ParseCoins(g.Amount)
		if err != nil {
			return 0, 0, fmt.Errorf("distribution to %s: %w", g.Address, err)
		}
		for _, c := range coins {
			k.denom = c.Denom
			if err := add(k, c.Amount); err != nil {
				return 0, 0, err
			}
		}
	}
	if _, err := tx.NewRaw("DELETE FROM osmosis_rewards_received_daily WHERE chain_id = ? AND day >= ?", chain, d0).Exec(ctx); err != nil {
		return 0, 0, fmt.Errorf("delete rewards received: %w", err)
	}
	rows := make([]rewardReceivedRow, 0, len(order))
	for _, k := range order {
		rows = append(rows, rewardReceivedRow{ChainID: chain, Address: k.address, Denom: k.denom, Day: k.day, Source: k.source,
			Amount: sums[k].String()})
	}
	if err := insertBatches(ctx, tx, rows); err != nil {
		return 0, 0, fmt.Errorf("insert rewards received: %w", err)
	}
	return tip, int64(len(rows)), nil
}

// rewardReceivedRow is a row of osmosis_rewards_received_daily.
type rewardReceivedRow struct {
	bun.BaseModel `bun:"table:osmosis_rewards_received_daily"`
	ChainID       string    `bun:"chain_id"`
	Address       string    `bun:"address"`
	Denom         string    `bun:"denom"`
	Day           time.Time `bun:"day"`
	Source        string    `bun:"source"`
	Amount        string    `bun:"amount"`
}
