package snapshot

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	banktypes "github.com/cosmos/cosmos-sdk/x/bank/types"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// KindHolder is one holder of a denom: key = the account address, denom,
// amount = its balance. Its taken marker's key is HolderMarker(denom), so
// the latest holder list of each denom is found on its own. Only the
// newest holder list of a denom is kept (Store prunes older ones).
const KindHolder = "holder"

const pathDenomOwners = "/cosmos.bank.v1beta1.Query/DenomOwners"

// HolderMarker is the key of the taken marker of denom's holder list.
func HolderMarker(denom string) string { return KindHolder + ":" + denom }

// TakeHolders lists every holder of each denom at height through the bank
// module's DenomOwners query, plus a taken marker per denom. A node without
// the query marks the denoms skipped.
func TakeHolders(ctx context.Context, q Querier, height int64, denoms []string) ([]Row, error) {
	t := &taker{q: q, height: height}
	var rows, markers []Row
	var seen []string
	for _, d := range denoms {
		if d == "" || slices.Contains(seen, d) {
			continue
		}
		seen = append(seen, d)
		var got []Row
		err := paginate(pathDenomOwners, func(key []byte) ([]byte, error) {
			var resp banktypes.QueryDenomOwnersResponse
			if err := t.call(ctx, pathDenomOwners, &banktypes.QueryDenomOwnersRequest{Denom: d, Pagination: pageRequest(key)}, &resp); err != nil {
				return nil, err
			}
			for _, o := range resp.DenomOwners {
				if o == nil || !o.Balance.Amount.IsPositive() {
					continue
				}
				got = append(got, Row{Kind: KindHolder, Key: o.Address, Denom: d, Amount: intString(o.Balance.Amount)})
			}
			return nextKey(resp.Pagination), nil
		})
		switch {
		case IsUnknownPath(err):
			markers = append(markers, Row{Kind: KindSkipped, Key: HolderMarker(d), Data: mustJSON(map[string]string{"reason": err.Error()})})
		case err != nil:
			return nil, fmt.Errorf("holders of %s at %d: %w", d, height, err)
		default:
			rows = append(rows, got...)
			markers = append(markers, Row{Kind: KindTaken, Key: HolderMarker(d), Data: mustJSON(map[string]int{"rows": len(got)})})
		}
	}
	return append(rows, markers...), nil
}

// RuleHolderDenoms are the denoms the rule audiences of chainID hold
// conditions on (engagement rules: {"chain": ..., "holds": {"denom": ...}}):
// the holder lists a snapshot of the chain must take.
func RuleHolderDenoms(ctx context.Context, db bun.IDB, chainID string) ([]string, error) {
	var denoms []string
	err := db.NewRaw(`SELECT DISTINCT rule->'holds'->>'denom' FROM audiences
		WHERE kind = 'rule' AND rule->>'chain' = ? AND rule->'holds'->>'denom' IS NOT NULL ORDER BY 1`, chainID).Scan(ctx, &denoms)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("holder denoms of %s: %w", chainID, err)
	}
	return denoms, nil
}

// pruneHolders deletes the holder lists of the denoms stored at height
// from older snapshots of the chain (holder lists are large; only the
// newest is read).
func pruneHolders(ctx context.Context, tx bun.Tx, chainID string, height int64, rows []Row) error {
	var keys []string
	for _, r := range rows {
		if r.Kind == KindTaken && len(r.Key) > len(KindHolder)+1 && r.Key[:len(KindHolder)+1] == KindHolder+":" {
			keys = append(keys, r.Key)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	denoms := make([]string, len(keys))
	for i, k := range keys {
		denoms[i] = k[len(KindHolder)+1:]
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM state_snapshots WHERE chain_id = ? AND height < ?
		AND ((kind = ? AND denom = ANY(?::text[])) OR (kind IN (?, ?) AND key = ANY(?::text[])))`,
		chainID, height, KindHolder, pgdialect.Array(denoms), KindTaken, KindSkipped, pgdialect.Array(keys)); err != nil {
		return fmt.Errorf("prune older holder lists: %w", err)
	}
	return nil
}
