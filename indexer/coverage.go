package indexer

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"
)

// Coverage says how much of a chain's stored messages is decoded.
type Coverage struct {
	Messages int64 // stored messages
	// Undecoded have no body (their type is in no descriptor set yet);
	// Partial have a body that lacks fields the bytes hold.
	Undecoded, Partial int64
	// KeptRaw lists the type URLs of both, the most frequent first.
	KeptRaw []TypeCount
}

// TypeCount is the number of a type's messages kept raw.
type TypeCount struct {
	TypeURL   string `bun:"type_url"`
	Undecoded int64  `bun:"undecoded"`
	Partial   int64  `bun:"partial"`
}

// Decoded is the share of messages stored with their whole body (1 when
// there are none).
func (c Coverage) Decoded() float64 {
	if c.Messages == 0 {
		return 1
	}
	return float64(c.Messages-c.Undecoded-c.Partial) / float64(c.Messages)
}

// MessageCoverage counts a chain's stored messages and those kept raw by
// type (through messages_kept_raw_idx: few rows).
func MessageCoverage(ctx context.Context, db bun.IDB, chainID string) (Coverage, error) {
	var c Coverage
	if err := db.NewRaw("SELECT count(*) FROM messages WHERE chain_id = ?", chainID).Scan(ctx, &c.Messages); err != nil {
		return c, fmt.Errorf("messages of %s: %w", chainID, err)
	}
	if err := db.NewRaw(`SELECT type_url, count(*) FILTER (WHERE body IS NULL) AS undecoded, count(*) FILTER (WHERE body IS NOT NULL) AS partial
		FROM messages WHERE chain_id = ? AND raw IS NOT NULL GROUP BY type_url ORDER BY count(*) DESC, type_url`, chainID).Scan(ctx, &c.KeptRaw); err != nil {
		return c, fmt.Errorf("messages of %s kept raw: %w", chainID, err)
	}
	for _, t := range c.KeptRaw {
		c.Undecoded += t.Undecoded
		c.Partial += t.Partial
	}
	return c, nil
}
