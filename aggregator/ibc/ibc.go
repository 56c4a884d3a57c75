// Package ibc builds ibc_packet_status, the open IBC packets of every
// indexed cosmos chain, from the ibc_packets rows of chains/cosmos.
package ibc

import (
	"context"
	"fmt"

	"github.com/chainlens/chainlens/aggregator"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/config"
)

// Packets is the ibc_packets.<chain id> job of one indexed cosmos chain:
//   - each send_packet of the chain opens (chain, src port, src channel,
//     sequence) at its block time;
//   - each acknowledge_packet or timeout_packet of the chain closes its
//     own packet;
//   - each recv_packet of the chain closes the packet of the sending
//     chain, found through the declared channels (config ibc.channels:
//     this chain's dst channel ↔ the sender's src channel) when the sender
//     is an indexed chain; receipts on other channels are not tracked.
//
// Upserts set fields rather than toggle them, and a packet keeps the first
// closure recorded, so a rerun from the same watermark writes the same rows.
type Packets struct {
	Chain    config.Chain
	Chains   []config.Chain
	Channels []config.IBCChannel
}

// Name is the job name.
func (j Packets) Name() string { return "ibc_packets." + j.Chain.ID }

// Version is the version of the job's rows (see aggregator.Job).
func (Packets) Version() string { return "1" }

// Tables are the tables the job writes, the chain's rows only.
func (j Packets) Tables() aggregator.Tables {
	return aggregator.Tables{Owned: []string{"ibc_packet_status"}, ChainID: j.Chain.ID}
}

// Run advances the chain's packets from the watermark to its indexed tip.
func (j Packets) Run(ctx context.Context, tx bun.Tx, wm, bound int64) (int64, int64, error) {
	var tip int64
	if err := tx.NewRaw("SELECT coalesce((SELECT next_height - 1 FROM sync_state WHERE chain_id = ?), 0)", j.Chain.ID).Scan(ctx, &tip); err != nil {
		return 0, 0, fmt.Errorf("tip of %s: %w", j.Chain.ID, err)
	}
	if tip <= wm {
		return wm, 0, nil
	}
	chain := j.Chain.ID
	var rows int64
	res, err := tx.NewRaw(`INSERT INTO ibc_packet_status (chain_id, src_port, src_channel, sequence, sent_height, sent_at)
		SELECT DISTINCT ON (p.src_port, p.src_channel, p.sequence) p.chain_id, p.src_port, p.src_channel, p.sequence, p.height, b.time
		FROM ibc_packets p JOIN blocks b ON b.chain_id = p.chain_id AND b.height = p.height
		WHERE p.chain_id = ?0 AND p.kind = 'send' AND p.height > ?1 AND p.height <= ?2
		ORDER BY p.src_port, p.src_channel, p.sequence, p.height
		ON CONFLICT (chain_id, src_port, src_channel, sequence) DO UPDATE SET sent_height = EXCLUDED.sent_height, sent_at = EXCLUDED.sent_at`,
		chain, wm, tip).Exec(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("sends of %s: %w", chain, err)
	}
	n, _ := res.RowsAffected()
	rows += n
	res, err = tx.NewRaw(`INSERT INTO ibc_packet_status (chain_id, src_port, src_channel, sequence, closed_chain, closed_height, closed_by)
		SELECT DISTINCT ON (src_port, src_channel, sequence) chain_id, src_port, src_channel, sequence, chain_id, height, kind
		FROM ibc_packets WHERE chain_id = ?0 AND kind IN ('ack', 'timeout') AND height > ?1 AND height <= ?2
		ORDER BY src_port, src_channel, sequence, height, tx_index, event_index
		ON CONFLICT (chain_id, src_port, src_channel, sequence) DO UPDATE SET
			closed_chain = coalesce(ibc_packet_status.closed_chain, EXCLUDED.closed_chain),
			closed_height = coalesce(ibc_packet_status.closed_height, EXCLUDED.closed_height),
			closed_by = coalesce(ibc_packet_status.closed_by, EXCLUDED.closed_by)`,
		chain, wm, tip).Exec(ctx)
	if err != nil {
		return 0, 0, fmt.Errorf("acknowledgements of %s: %w", chain, err)
	}
	n, _ = res.RowsAffected()
	rows += n
	n, err = j.receipts(ctx, tx, wm, tip)
	return tip, rows + n, err
}

// receipts closes the packets of indexed senders received on this chain.
func (j Packets) receipts(ctx context.Context, tx bun.Tx, wm, tip int64) (int64, error) {
	ids := map[string]string{} // chain-registry name -> indexed chain id
	for _, c := range j.Chains {
		if c.Name != "" {
			ids[c.Name] = c.ID
		}
	}
	type end struct{ port, channel string }
	type sender struct {
		chainID string
		end
	}
	from := map[end]sender{} // this chain's dst end -> the sender's src end
	for _, c := range j.Channels {
		switch j.Chain.Name {
		case c.Chain:
			if id, ok := ids[c.Counterparty]; ok {
				from[end{c.Port, c.Channel}] = sender{id, end{c.CounterpartyPort, c.CounterpartyChannel}}
			}
		case c.Counterparty:
			if id, ok := ids[c.Chain]; ok {
				from[end{c.CounterpartyPort, c.CounterpartyChannel}] = sender{id, end{c.Port, c.Channel}}
			}
		}
	}
	if j.Chain.Name == "" || len(from) == 0 {
		return 0, nil
	}
	var recvs []struct {
		Height     int64  `bun:"height"`
		SrcPort    string `bun:"src_port"`
		SrcChannel string `bun:"src_channel"`
		DstPort    string `bun:"dst_port"`
		DstChannel string `bun:"dst_channel"`
		Sequence   int64  `bun:"sequence"`
	}
	if err := tx.NewRaw(`SELECT height, src_port, src_channel, dst_port, dst_channel, sequence FROM ibc_packets
		WHERE chain_id = ? AND kind = 'recv' AND height > ? AND height <= ? ORDER BY height, tx_index, event_index`,
		j.Chain.ID, wm, tip).Scan(ctx, &recvs); err != nil {
		return 0, fmt.Errorf("receipts of %s: %w", j.Chain.ID, err)
	}
	var rows int64
	for _, r := range recvs {
		s, ok := from[end{r.DstPort, r.DstChannel}]
		if !ok || s.port != r.SrcPort || s.channel != r.SrcChannel {
			continue
		}
		if _, err := tx.NewRaw(`INSERT INTO ibc_packet_status (chain_id, src_port, src_channel, sequence, closed_chain, closed_height, closed_by)
			VALUES (?, ?, ?, ?, ?, ?, 'recv')
			ON CONFLICT (chain_id, src_port, src_channel, sequence) DO UPDATE SET
				closed_chain = coalesce(ibc_packet_status.closed_chain, EXCLUDED.closed_chain),
				closed_height = coalesce(ibc_packet_status.closed_height, EXCLUDED.closed_height),
				closed_by = coalesce(ibc_packet_status.closed_by, EXCLUDED.closed_by)`,
			s.chainID, r.SrcPort, r.SrcChannel, r.Sequence, j.Chain.ID, r.Height).Exec(ctx); err != nil {
			return 0, fmt.Errorf("receipt %s/%s %d: %w", r.SrcPort, r.SrcChannel, r.Sequence, err)
		}
		rows++
	}
	return rows, nil
}
