package indexer

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/chains/cosmos"
)

// MessageRef is one stored message.
type MessageRef struct {
	ChainID  string `bun:"chain_id"`
	Height   int64  `bun:"height"`
	TxIndex  int    `bun:"tx_index"`
	MsgIndex int    `bun:"msg_index"`
	TypeURL  string `bun:"type_url"`
	TxHash   string `bun:"hash"`
}

// MessagesTouching lists the newest messages (of chainID, or of every chain
// when it is empty) that involve an account, given as a bech32 address of
// any prefix or as 0x hex: an index scan of message_addresses.
func MessagesTouching(ctx context.Context, db bun.IDB, chainID, address string, limit int) ([]MessageRef, error) {
	addr, ok := cosmos.AddressBytes(address)
	if !ok {
		return nil, fmt.Errorf("%q is not a bech32 or 0x address of 20 or 32 bytes", address)
	}
	if limit <= 0 {
		return nil, fmt.Errorf("limit must be positive")
	}
	var refs []MessageRef
	q := `SELECT a.chain_id, a.height, a.tx_index, a.msg_index, m.type_url, t.hash
		FROM message_addresses a
		JOIN messages m ON m.chain_id = a.chain_id AND m.height = a.height AND m.tx_index = a.tx_index AND m.msg_index = a.msg_index
		JOIN txs t ON t.chain_id = a.chain_id AND t.height = a.height AND t.tx_index = a.tx_index
		WHERE a.address = ? AND (? = '' OR a.chain_id = ?)
		ORDER BY a.height DESC, a.tx_index DESC, a.msg_index DESC LIMIT ?`
	if err := db.NewRaw(q, addr, chainID, chainID, limit).Scan(ctx, &refs); err != nil {
		return nil, fmt.Errorf("messages touching %s: %w", address, err)
	}
	return refs, nil
}
