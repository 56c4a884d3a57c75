package perp

import (
	"context"
	"fmt"
	"slices"

	"github.com/uptrace/bun"
)

// Roles of the configured addresses with reports of their own
// (perp_tracked_wallets.role), and the table each role's rows are in.
const (
	roleBuyStake = "buystake"
	roleTreasury = "treasury_subdao"
)

var roleTables = map[string]string{roleBuyStake: "perp_buystake_hourly", roleTreasury: "perp_wallet_daily"}

// trackWallets makes the role's report rows follow the configured
// addresses: rows of an address no longer configured are deleted, and an
// address configured since the last run is aggregated over the heights
// already aggregated, (0, wm], by aggregate; the run then adds (wm, to] for
// every configured address. perp_tracked_wallets records the addresses.
func trackWallets(ctx context.Context, tx bun.Tx, chainID, role string, want []string, wm int64,
	aggregate func(addresses []string, from, to int64) (int64, error)) (int64, error) {
	var have []string
	if err := tx.NewRaw("SELECT address FROM perp_tracked_wallets WHERE chain_id = ? AND role = ? ORDER BY address", chainID, role).
		Scan(ctx, &have); err != nil {
		return 0, fmt.Errorf("perp_tracked_wallets: %w", err)
	}
	var gone, added []string
	for _, a := range have {
		if !slices.Contains(want, a) {
			gone = append(gone, a)
		}
	}
	for _, a := range want {
		if !slices.Contains(have, a) {
			added = append(added, a)
		}
	}
	if len(gone) > 0 {
		if _, err := tx.NewRaw("DELETE FROM "+roleTables[role]+" WHERE chain_id = ? AND address IN (?)", chainID, bun.List(gone)).Exec(ctx); err != nil {
			return 0, fmt.Errorf("%s: drop unconfigured addresses: %w", roleTables[role], err)
		}
		if _, err := tx.NewRaw("DELETE FROM perp_tracked_wallets WHERE chain_id = ? AND role = ? AND address IN (?)", chainID, role, bun.List(gone)).Exec(ctx); err != nil {
			return 0, fmt.Errorf("perp_tracked_wallets: %w", err)
		}
	}
	if len(added) == 0 {
		return 0, nil
	}
	var n int64
	if wm > 0 {
		var err error
		if n, err = aggregate(added, 0, wm); err != nil {
			return 0, err
		}
	}
	for _, a := range added {
		if _, err := tx.NewRaw("INSERT INTO perp_tracked_wallets (chain_id, role, address) VALUES (?, ?, ?)", chainID, role, a).Exec(ctx); err != nil {
			return 0, fmt.Errorf("perp_tracked_wallets: %w", err)
		}
	}
	return n, nil
}

// treasuryWallets adds the heights (from, to] of the addresses to
// perp_wallet_daily: each address's balance change per denom and day, and
// the native token it delegated net of undelegations (staking events:
// delegations, validator creation and cancelled unbondings add,
// undelegations subtract; a slash is not an event of the delegator and is
// not seen).
func treasuryWallets(ctx context.Context, tx bun.Tx, chainID string, addresses []string, from, to int64) (int64, error) {
	if len(addresses) == 0 {
		return 0, nil
	}
	res, err := tx.NewRaw(walletDailySQL, chainID, from, to, bun.List(addresses)).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("perp_wallet_daily: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// walletDailySQL: ?0 chain, ?1 from (exclusive), ?2 to, ?3 the addresses.
// Height 0 holds the genesis balances and delegations; they count in the
// first block's day.
const walletDailySQL = `WITH n AS (SELECT denom FROM dydx_native_token WHERE chain_id = ?0 ORDER BY height DESC LIMIT 1),
	b AS (SELECT height, date_trunc('day', time, 'UTC') AS day FROM blocks WHERE chain_id = ?0 AND height > ?1 AND height <= ?2
		UNION ALL
		SELECT 0, (SELECT date_trunc('day', time, 'UTC') FROM blocks WHERE chain_id = ?0 ORDER BY height LIMIT 1) WHERE ?1 = 0),
	rows AS (
		SELECT c.address, b.day, c.denom, c.delta AS liquid, 0 AS staked
		FROM balance_changes c JOIN b ON b.height = c.height
		WHERE c.chain_id = ?0 AND c.address IN (?3)
		UNION ALL
		SELECT s.delegator, b.day, n.denom, 0,
			CASE WHEN s.kind = 'unbond' THEN -s.amount ELSE s.amount END
		FROM staking_events s JOIN b ON b.height = s.height JOIN n ON s.denom IN (n.denom, '')
		WHERE s.chain_id = ?0 AND s.delegator IN (?3) AND s.kind IN ('delegate', 'create_validator', 'unbond', 'cancel_unbonding'))
	INSERT INTO perp_wallet_daily AS p (chain_id, address, day, denom, liquid_delta, staked_delta)
	SELECT ?0, address, day, denom, sum(liquid), sum(staked) FROM rows GROUP BY address, day, denom
	ON CONFLICT (chain_id, address, day, denom) DO UPDATE SET liquid_delta = p.liquid_delta + EXCLUDED.liquid_delta,
		staked_delta = p.staked_delta + EXCLUDED.staked_delta`
