package indexer

import (
	"context"
	"fmt"
	"log/slog"
	"sort"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/chains/cosmos"
	"github.com/chainlens/chainlens/store"
)

// redecodePage is how many stored messages Redecode reads per statement.
const redecodePage = 2000

// RedecodeResult says what Redecode did.
type RedecodeResult struct {
	// Decoded are messages that had no body and have one now; Completed
	// had a partial body and now have all of it.
	Decoded, Completed int
	// StillRaw counts, by type URL, the messages the descriptors still do
	// not decode (or not completely).
	StillRaw map[string]int
}

// Redecode decodes again the stored messages of a chain that were kept
// raw (no body, or a body that lacked fields), with the adapter's
// descriptors and the node descriptors stored for the chain: no block is
// fetched again and no node is asked. A message it decodes gets its body
// (and loses its bytes once complete) in place; others are left as they
// were, so it can run beside the indexer and be run again.
func Redecode(ctx context.Context, db *bun.DB, chainID string, adapter chains.DescriptorAdapter, log *slog.Logger) (RedecodeResult, error) {
	res := RedecodeResult{StillRaw: map[string]int{}}
	if err := loadNodeDescriptors(ctx, db, chainID, adapter); err != nil {
		return res, err
	}
	type key struct {
		Height  int64 `bun:"height"`
		TxIndex int   `bun:"tx_index"`
		Msg     int   `bun:"msg_index"`
	}
	var after key
	after.Height = -1
	for {
		var rows []struct {
			key
			TypeURL string `bun:"type_url"`
			Raw     []byte `bun:"raw"`
			HasBody bool   `bun:"has_body"`
		}
		if err := db.NewRaw(`SELECT height, tx_index, msg_index, type_url, raw, body IS NOT NULL AS has_body FROM messages
			WHERE chain_id = ? AND raw IS NOT NULL AND (height, tx_index, msg_index) > (?, ?, ?)
			ORDER BY height, tx_index, msg_index LIMIT ?`, chainID, after.Height, after.TxIndex, after.Msg, redecodePage).Scan(ctx, &rows); err != nil {
			return res, fmt.Errorf("redecode %s: %w", chainID, err)
		}
		if len(rows) == 0 {
			break
		}
		var hs []int64
		var txs, msgs []int
		var bodies []string
		var complete []bool
		// The addresses the new bodies name, for message_addresses.
		var ah []int64
		var at, am []int
		var aa [][]byte
		for _, r := range rows {
			body, full, err := adapter.MessageDecoderAt(r.Height).Decode(r.TypeURL, r.Raw)
			if err != nil || (!full && r.HasBody) {
				res.StillRaw[r.TypeURL]++
				continue
			}
			if !full {
				res.StillRaw[r.TypeURL]++
			}
			switch {
			case r.HasBody:
				res.Completed++
			default:
				res.Decoded++
			}
			hs, txs, msgs = append(hs, r.Height), append(txs, r.TxIndex), append(msgs, r.Msg)
			bodies, complete = append(bodies, store.JSONB(body)), append(complete, full)
			for _, a := range cosmos.BodyAddresses(body) {
				ah, at, am, aa = append(ah, r.Height), append(at, r.TxIndex), append(am, r.Msg), append(aa, a)
			}
		}
		if len(hs) > 0 {
			// Only rows still raw are touched: a reindex of the same
			// heights in between wins.
			if _, err := db.NewRaw(`UPDATE messages m SET body = u.body::jsonb, raw = CASE WHEN u.complete THEN NULL ELSE m.raw END
				FROM unnest(?::bigint[], ?::int[], ?::int[], ?::text[], ?::bool[]) AS u(height, tx_index, msg_index, body, complete)
				WHERE m.chain_id = ? AND m.height = u.height AND m.tx_index = u.tx_index AND m.msg_index = u.msg_index AND m.raw IS NOT NULL`,
				pgdialect.Array(hs), pgdialect.Array(txs), pgdialect.Array(msgs), pgdialect.Array(bodies), pgdialect.Array(complete), chainID).Exec(ctx); err != nil {
				return res, fmt.Errorf("redecode %s: %w", chainID, err)
			}
		}
		if len(ah) > 0 {
			// Only those not stored yet: a rerun adds nothing.
			if _, err := db.NewRaw(`INSERT INTO message_addresses (chain_id, height, tx_index, msg_index, address)
				SELECT DISTINCT ?, u.height, u.tx_index, u.msg_index, u.address
				FROM unnest(?::bigint[], ?::int[], ?::int[], ?::bytea[]) AS u(height, tx_index, msg_index, address)
				WHERE NOT EXISTS (SELECT 1 FROM message_addresses a WHERE a.chain_id = ? AND a.address = u.address
					AND a.height = u.height AND a.tx_index = u.tx_index AND a.msg_index = u.msg_index)`,
				chainID, pgdialect.Array(ah), pgdialect.Array(at), pgdialect.Array(am), pgdialect.Array(aa), chainID).Exec(ctx); err != nil {
				return res, fmt.Errorf("redecode %s: addresses: %w", chainID, err)
			}
		}
		last := rows[len(rows)-1]
		after = last.key
		log.Debug("redecoded", "chain", chainID, "through_height", after.Height, "decoded", res.Decoded)
	}
	types := make([]string, 0, len(res.StillRaw))
	for t := range res.StillRaw {
		types = append(types, t)
	}
	sort.Strings(types)
	log.Info("redecode done", "chain", chainID, "decoded", res.Decoded, "completed", res.Completed, "still_raw_types", types)
	return res, nil
}
