// Package icsrewards builds the Hub's record of interchain-security rewards
// received from consumer chains (chain-events.md §8.3), which the
// multi-chain staking group values in USD (/aez/revenue_share_by_consumer).
package icsrewards

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/chainlens/chainlens/aggregator"

	report "github.com/chainlens/chainlens/report/staking"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/chainlens/chainlens/chains/cosmos"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/store"
)

// maxHeights bounds the heights one run reads.
const maxHeights = 50_000

// Job writes ics_rewards: one row per reward the provider module recorded
// on receipt, from its received_ics_rewards events (ICS ≥ v6.1, Gaia ≥
// v20) or update_consumer events carrying the same attributes (consumer_id,
// consumer_chain_id, reward_denom, reward_amount; seen in an interim
// release's source), in successful txs past the watermark, one per receipt. The token's base
// denom comes from the ICS-20 packet received before the event in the same
// tx (the rewards arrive as an IBC transfer to the consumer rewards pool).
// Earlier providers emitted no event: an ICS-20 receipt by the consumer
// rewards pool over a channel of ConsumerChannels, in a tx without such an
// event, is a reward of that channel's consumer (its consumer_id unknown, left empty).
// A watermark of 0 rebuilds from scratch.
type Job struct {
	Chain config.Chain
	// Dex is the chain whose prices value the rewards (the dex chain, kind
	// osmosis); with no ID no denoms are matched.
	Dex config.Chain
	// ConsumerChannels maps the Hub's channel of each consumer chain to its
	// chain id (config staking.consumer_channels).
	ConsumerChannels map[string]string
}

// Name is the job name.
func (Job) Name() string { return report.JobICSRewards }

// RawInputs: the provider's reward events, which tell consumer rewards
// from other receipts.
func (j Job) RawInputs() aggregator.RawInputs {
	return aggregator.RawInputs{ChainID: j.Chain.ID, Events: []string{"received_ics_rewards", "update_consumer"}}
}

// Version is the version of the job's rules and of the pricing chain and the consumer channels its rows
// depend on: a change of either rebuilds them.
func (j Job) Version() string {
	return aggregator.SettingsVersion("1", []any{j.Dex.ID, j.ConsumerChannels})
}

// Tables are the tables the job writes, the chain's rows only.
func (j Job) Tables() aggregator.Tables {
	return aggregator.Tables{Owned: []string{"ics_rewards", "ics_reward_denoms"}, ChainID: j.Chain.ID}
}

// reward is one ics_rewards row.
type reward struct {
	bun.BaseModel `bun:"table:ics_rewards"`

	ChainID         string    `bun:"chain_id,pk"`
	Height          int64     `bun:"height,pk"`
	TxIndex         int       `bun:"tx_index,pk"`
	EventIndex      int       `bun:"event_index,pk"`
	Time            time.Time `bun:"time"`
	ConsumerID      string    `bun:"consumer_id"`
	ConsumerChainID string    `bun:"consumer_chain_id"`
	Denom           string    `bun:"denom"`
	BaseDenom       string    `bun:"base_denom"`
	Amount          string    `bun:"amount,type:numeric"`
}

// Run advances ics_rewards from wm to the indexed tip.
func (j Job) Run(ctx context.Context, tx bun.Tx, wm, bound int64) (int64, int64, error) {
	id := j.Chain.ID
	wm, to, err := store.NextRange(ctx, tx, id, wm, maxHeights, "ics_rewards", "ics_reward_denoms")
	if err != nil {
		return 0, 0, err
	}
	if to <= wm {
		// No new height; a token may have got its first price meanwhile.
		matched, err := j.matchDenoms(ctx, tx)
		return wm, matched, err
	}
	var found []struct {
		Height          int64          `bun:"height"`
		TxIndex         int            `bun:"tx_index"`
		EventIndex      int            `bun:"event_index"`
		Time            time.Time      `bun:"time"`
		ConsumerID      string         `bun:"consumer_id"`
		ConsumerChainID string         `bun:"consumer_chain_id"`
		Denom           string         `bun:"denom"`
		Amount          string         `bun:"amount"`
		SrcPort         sql.NullString `bun:"src_port"`
		SrcChannel      sql.NullString `bun:"src_channel"`
		DstPort         sql.NullString `bun:"dst_port"`
		DstChannel      sql.NullString `bun:"dst_channel"`
		PacketDenom     sql.NullString `bun:"packet_denom"`
		PacketEvent     sql.NullInt64  `bun:"packet_event"`
	}
	if err := tx.NewRaw(rewardsSQL, id, wm, to).Scan(ctx, &found); err != nil {
		return 0, 0, fmt.Errorf("ics rewards: %w", err)
	}
	fallback, err := j.receiptsWithoutEvents(ctx, tx, wm, to)
	if err != nil {
		return 0, 0, err
	}
	rows := make([]reward, 0, len(found)+len(fallback))
	rows = append(rows, fallback...)
	type receipt struct {
		height int64
		tx     int
		event  int64
	}
	counted := map[receipt]bool{}
	for _, f := range found {
		base := ""
		switch {
		case f.PacketDenom.Valid:
			// One reward per receipt, whatever events a release emitted for it.
			r := receipt{f.Height, f.TxIndex, f.PacketEvent.Int64}
			if counted[r] {
				continue
			}
			counted[r] = true
			// The receipt must be of the rewarded token (its voucher is the
			// provider's reward denom); else the token stays unknown.
			if path := cosmos.ReceivedPath(f.SrcPort.String, f.SrcChannel.String, f.DstPort.String, f.DstChannel.String, f.PacketDenom.String); cosmos.VoucherDenom(path) == f.Denom {
				base = cosmos.BaseDenom(path)
			}
		case !strings.HasPrefix(f.Denom, "ibc/"):
			base = f.Denom // a denom of the Hub itself
		}
		rows = append(rows, reward{ChainID: id, Height: f.Height, TxIndex: f.TxIndex, EventIndex: f.EventIndex, Time: f.Time,
			ConsumerID: f.ConsumerID, ConsumerChainID: f.ConsumerChainID, Denom: f.Denom, BaseDenom: base, Amount: f.Amount})
	}
	var n int64
	if len(rows) > 0 {
		res, err := tx.NewInsert().Model(&rows).On("CONFLICT DO NOTHING").Exec(ctx)
		if err != nil {
			return 0, 0, fmt.Errorf("ics_rewards: %w", err)
		}
		n, _ = res.RowsAffected()
	}
	matched, err := j.matchDenoms(ctx, tx)
	if err != nil {
		return 0, 0, err
	}
	return to, n + matched, nil
}

// matchDenoms rewrites ics_reward_denoms for every rewarded base denom
// (a handful): the dex chain's denom of the token is the one candidate with
// a price there (the base denom itself, or the voucher of each channel the
// dex chain received the base denom on); of several priced candidates, the
// one the dex chain's configured assets list, if only one is. A token with
// no such candidate has no row, and is looked at again on the next run, as
// are the others (a second channel may get a price, a config may change).
func (j Job) matchDenoms(ctx context.Context, tx bun.Tx) (int64, error) {
	if j.Dex.ID == "" {
		return 0, nil
	}
	var bases []string
	if err := tx.NewRaw(`SELECT DISTINCT base_denom FROM ics_rewards WHERE chain_id = ? AND base_denom <> '' ORDER BY base_denom`,
		j.Chain.ID).Scan(ctx, &bases); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("reward denoms: %w", err)
	}
	listed := map[string]bool{}
	for _, a := range j.Dex.Assets {
		listed[a.Denom] = true
	}
	var n int64
	for _, base := range bases {
		var hops []struct {
			Port    string `bun:"dst_port"`
			Channel string `bun:"dst_channel"`
		}
		if err := tx.NewRaw(`SELECT DISTINCT dst_port, dst_channel FROM ibc_packets WHERE chain_id = ? AND kind = 'recv' AND denom = ?`,
			j.Dex.ID, base).Scan(ctx, &hops); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return 0, fmt.Errorf("receipts of %s on %s: %w", base, j.Dex.ID, err)
		}
		candidates := []string{base}
		for _, h := range hops {
			candidates = append(candidates, cosmos.VoucherDenom(h.Port+"/"+h.Channel+"/"+base))
		}
		var priced []string
		if err := tx.NewRaw(`SELECT DISTINCT denom FROM osmosis_asset_prices WHERE chain_id = ? AND denom = ANY(?) ORDER BY denom`,
			j.Dex.ID, pgdialect.Array(candidates)).Scan(ctx, &priced); err != nil && !errors.Is(err, sql.ErrNoRows) {
			return 0, fmt.Errorf("prices of %s on %s: %w", base, j.Dex.ID, err)
		}
		if len(priced) > 1 {
			var inConfig []string
			for _, d := range priced {
				if listed[d] {
					inConfig = append(inConfig, d)
				}
			}
			priced = inConfig
		}
		if len(priced) != 1 {
			if _, err := tx.NewRaw(`DELETE FROM ics_reward_denoms WHERE chain_id = ? AND base_denom = ? AND dex_chain_id = ?`,
				j.Chain.ID, base, j.Dex.ID).Exec(ctx); err != nil {
				return 0, fmt.Errorf("unmatch %s: %w", base, err)
			}
			continue
		}
		res, err := tx.NewRaw(`INSERT INTO ics_reward_denoms (chain_id, base_denom, dex_chain_id, dex_denom) VALUES (?, ?, ?, ?)
			ON CONFLICT (chain_id, base_denom, dex_chain_id) DO UPDATE SET dex_denom = EXCLUDED.dex_denom
			WHERE ics_reward_denoms.dex_denom <> EXCLUDED.dex_denom`, j.Chain.ID, base, j.Dex.ID, priced[0]).Exec(ctx)
		if err != nil {
			return 0, fmt.Errorf("match %s: %w", base, err)
		}
		m, _ := res.RowsAffected()
		n += m
	}
	return n, nil
}

// receiptsWithoutEvents are the rewards of (wm, to] that only their ICS-20
// receipt shows (providers before ICS v6.1): successful receipts by the
// consumer rewards pool over a channel of ConsumerChannels, in successful
// txs that hold no reward event.
func (j Job) receiptsWithoutEvents(ctx context.Context, tx bun.Tx, wm, to int64) ([]reward, error) {
	if len(j.ConsumerChannels) == 0 {
		return nil, nil
	}
	pool, err := cosmos.ModuleAddress(j.Chain.Bech32Prefix, consumerRewardsPool)
	if err != nil {
		return nil, err
	}
	var channels []string
	for ch := range j.ConsumerChannels {
		channels = append(channels, ch)
	}
	var found []struct {
		Height     int64     `bun:"height"`
		TxIndex    int       `bun:"tx_index"`
		EventIndex int       `bun:"event_index"`
		Time       time.Time `bun:"time"`
		SrcPort    string    `bun:"src_port"`
		SrcChannel string    `bun:"src_channel"`
		DstPort    string    `bun:"dst_port"`
		DstChannel string    `bun:"dst_channel"`
		Denom      string    `bun:"denom"`
		Amount     string    `bun:"amount"`
	}
	if err := tx.NewRaw(`SELECT p.height, p.tx_index, p.event_index, b.time, p.src_port, p.src_channel, p.dst_port, p.dst_channel,
			p.denom, p.amount::text AS amount
		FROM ibc_packets p
		JOIN txs t ON t.chain_id = p.chain_id AND t.height = p.height AND t.tx_index = p.tx_index AND t.code = 0
		JOIN blocks b ON b.chain_id = p.chain_id AND b.height = p.height
		WHERE p.chain_id = ?0 AND p.height > ?1 AND p.height <= ?2 AND p.kind = 'recv' AND p.success IS NOT FALSE
			AND p.receiver = ?3 AND p.dst_port = 'transfer' AND p.dst_channel = ANY(?4::text[]) AND p.amount > 0
			AND NOT EXISTS (SELECT 1 FROM events e WHERE e.chain_id = p.chain_id AND e.height = p.height AND e.tx_index = p.tx_index
				AND e.type IN ('received_ics_rewards', 'update_consumer')
				AND e.attributes @> '[{"key": "reward_amount"}]')
		ORDER BY p.height, p.tx_index, p.event_index`, j.Chain.ID, wm, to, pool, pgdialect.Array(channels)).Scan(ctx, &found); err != nil {
		return nil, fmt.Errorf("consumer rewards pool receipts: %w", err)
	}
	out := make([]reward, 0, len(found))
	for _, f := range found {
		path := cosmos.ReceivedPath(f.SrcPort, f.SrcChannel, f.DstPort, f.DstChannel, f.Denom)
		out = append(out, reward{ChainID: j.Chain.ID, Height: f.Height, TxIndex: f.TxIndex, EventIndex: f.EventIndex, Time: f.Time,
			ConsumerChainID: j.ConsumerChannels[f.DstChannel], Denom: cosmos.VoucherDenom(path), BaseDenom: cosmos.BaseDenom(path), Amount: f.Amount})
	}
	return out, nil
}

// consumerRewardsPool is the provider module account the consumers'
// rewards are sent to (chain-events.md §8.3).
const consumerRewardsPool = "consumer_rewards_pool"

// rewardsSQL: ?0 chain, ?1 watermark, ?2 last height. Each reward event of
// a successful tx with its block time and the last ICS-20 receipt before
// it in the tx.
const rewardsSQL = `WITH e AS (
		SELECT e.height, e.tx_index, e.event_index, b.time,
			(SELECT a->>'value' FROM jsonb_array_elements(e.attributes) a WHERE a->>'key' = 'consumer_id' LIMIT 1) AS consumer_id,
			(SELECT a->>'value' FROM jsonb_array_elements(e.attributes) a WHERE a->>'key' = 'consumer_chain_id' LIMIT 1) AS consumer_chain_id,
			(SELECT a->>'value' FROM jsonb_array_elements(e.attributes) a WHERE a->>'key' = 'reward_denom' LIMIT 1) AS denom,
			(SELECT a->>'value' FROM jsonb_array_elements(e.attributes) a WHERE a->>'key' = 'reward_amount' LIMIT 1) AS amount
		FROM events e
		JOIN txs t ON t.chain_id = e.chain_id AND t.height = e.height AND t.tx_index = e.tx_index AND t.code = 0
		JOIN blocks b ON b.chain_id = e.chain_id AND b.height = e.height
		WHERE e.chain_id = ?0 AND e.height > ?1 AND e.height <= ?2
			AND e.type IN ('received_ics_rewards', 'update_consumer'))
	SELECT e.height, e.tx_index, e.event_index, e.time, coalesce(e.consumer_id, '') AS consumer_id, e.consumer_chain_id, e.denom, e.amount,
		p.src_port, p.src_channel, p.dst_port, p.dst_channel, p.denom AS packet_denom, p.event_index AS packet_event
	FROM e LEFT JOIN LATERAL (
		SELECT p.src_port, p.src_channel, p.dst_port, p.dst_channel, p.denom, p.event_index FROM ibc_packets p
		WHERE p.chain_id = ?0 AND p.height = e.height AND p.tx_index = e.tx_index AND p.kind = 'recv' AND p.event_index < e.event_index
		ORDER BY p.event_index DESC LIMIT 1) p ON true
	WHERE e.amount ~ '^[0-9]+$' AND e.consumer_chain_id <> '' AND e.denom <> ''
	ORDER BY e.height, e.tx_index, e.event_index`
