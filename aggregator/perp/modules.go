package perp

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"cosmossdk.io/math"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/chainlens/chainlens/chains/cosmos"
)

// TreasuryModules are the module accounts whose NATIVE balances the
// module_accounts report follows (chain-events.md §6.3).
var TreasuryModules = []string{"community_treasury", "community_vester", "rewards_treasury", "rewards_vester"}

// moduleBalances adds the NATIVE balance changes of the treasury module
// accounts in (from, to] (and their genesis balances on the first run) to
// perp_module_balances_daily: each changed day's closing balance.
func moduleBalances(ctx context.Context, tx bun.Tx, chainID, prefix string, from, to int64) (int64, error) {
	var native string
	err := tx.NewRaw("SELECT denom FROM dydx_native_token WHERE chain_id = ? ORDER BY height DESC LIMIT 1", chainID).Scan(ctx, &native)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil // no genesis catalog: the native token is unknown
	}
	if err != nil {
		return 0, fmt.Errorf("native token: %w", err)
	}
	names := map[string]string{}
	addrs := make([]string, 0, len(TreasuryModules))
	for _, m := range TreasuryModules {
		a, err := cosmos.ModuleAddress(prefix, m)
		if err != nil {
			return 0, fmt.Errorf("module %s: %w", m, err)
		}
		names[a] = m
		addrs = append(addrs, a)
	}
	var sums []struct {
		Address string    `bun:"address"`
		Day     time.Time `bun:"day"`
		Delta   string    `bun:"delta"`
	}
	if err := tx.NewRaw(`SELECT c.address, date_trunc('day', coalesce(b.time, g.genesis_time), 'UTC') AS day, sum(c.delta)::text AS delta
		FROM balance_changes c
		LEFT JOIN blocks b ON b.chain_id = c.chain_id AND b.height = c.height
		LEFT JOIN genesis_imports g ON g.chain_id = c.chain_id AND c.height = 0
		WHERE c.chain_id = ?0 AND c.address = ANY(?1) AND c.denom = ?2 AND (c.height > ?3 OR (?3 = 0 AND c.height = 0)) AND c.height <= ?4
			AND coalesce(b.time, g.genesis_time) IS NOT NULL
		GROUP BY 1, 2 ORDER BY 2`,
		chainID, pgdialect.Array(addrs), native, from, to).Scan(ctx, &sums); err != nil {
		return 0, fmt.Errorf("module balance changes: %w", err)
	}
	var rows int64
	last := map[string]math.Int{}
	for _, s := range sums {
		account := names[s.Address]
		bal, ok := last[account]
		if !ok {
			var prev string
			err := tx.NewRaw(`SELECT balance::text FROM perp_module_balances_daily WHERE chain_id = ? AND account = ? ORDER BY day DESC LIMIT 1`,
				chainID, account).Scan(ctx, &prev)
			switch {
			case errors.Is(err, sql.ErrNoRows):
				bal = math.ZeroInt()
			case err != nil:
				return 0, fmt.Errorf("balance of %s: %w", account, err)
			default:
				if bal, ok = math.NewIntFromString(prev); !ok {
					return 0, fmt.Errorf("balance of %s: %q is not an integer", account, prev)
				}
			}
		}
		d, ok := math.NewIntFromString(s.Delta)
		if !ok {
			return 0, fmt.Errorf("balance change of %s: %q is not an integer", account, s.Delta)
		}
		bal = bal.Add(d)
		last[account] = bal
		if _, err := tx.NewRaw(`INSERT INTO perp_module_balances_daily (chain_id, account, day, balance) VALUES (?, ?, ?, ?)
			ON CONFLICT (chain_id, account, day) DO UPDATE SET balance = EXCLUDED.balance`, chainID, account, s.Day, bal.String()).Exec(ctx); err != nil {
			return 0, fmt.Errorf("balance of %s: %w", account, err)
		}
		rows++
	}
	return rows, nil
}

// rewards adds the trading rewards of (from, to] to perp_rewards_daily:
// NATIVE transfers from the rewards_treasury module account.
func rewards(ctx context.Context, tx bun.Tx, chainID, prefix string, from, to int64) (int64, error) {
	treasury, err := cosmos.ModuleAddress(prefix, "rewards_treasury")
	if err != nil {
		return 0, err
	}
	res, err := tx.NewRaw(`INSERT INTO perp_rewards_daily AS r (chain_id, day, address, amount)
		SELECT ?0, date_trunc('day', b.time, 'UTC'), t.recipient, sum(t.amount)
		FROM transfers t
		JOIN blocks b ON b.chain_id = t.chain_id AND b.height = t.height
		JOIN LATERAL (SELECT denom FROM dydx_native_token WHERE chain_id = ?0 ORDER BY height DESC LIMIT 1) n ON n.denom = t.denom
		WHERE t.chain_id = ?0 AND t.height > ?1 AND t.height <= ?2 AND t.kind = 'transfer' AND t.sender = ?3
		GROUP BY 2, 3
		ON CONFLICT (chain_id, day, address) DO UPDATE SET amount = r.amount + EXCLUDED.amount`,
		chainID, from, to, treasury).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("perp_rewards_daily: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}
