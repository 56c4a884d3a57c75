package perp

import (
	"context"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/chains/cosmos"
)

// buyStake adds the programme address's hours of (from, to] to
// perp_buystake_hourly: NATIVE received from accounts other than the
// distribution module, the staking pools and the subaccounts module (its
// own withdrawals from its subaccounts) (bought), USDC received from them
// (deposited), NATIVE and USDC balance changes, net delegations, and
// withdrawn rewards.
func buyStake(ctx context.Context, tx bun.Tx, chainID, prefix, address string, from, to int64) (int64, error) {
	if address == "" {
		return 0, nil
	}
	var modules []string
	for _, m := range []string{"distribution", "bonded_tokens_pool", "not_bonded_tokens_pool", "subaccounts"} {
		a, err := cosmos.ModuleAddress(prefix, m)
		if err != nil {
			return 0, err
		}
		modules = append(modules, a)
	}
	res, err := tx.NewRaw(buyStakeSQL, chainID, from, to, address, bun.List(modules)).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("perp_buystake_hourly: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// buyStakeSQL: ?0 chain, ?1 watermark, ?2 last height, ?3 the address,
// ?4 the module accounts whose payments are not purchases. The native and
// quote denoms come from the genesis catalog (dydx_native_token).
const buyStakeSQL = `WITH n AS (SELECT denom, quote_denom FROM dydx_native_token WHERE chain_id = ?0 ORDER BY height DESC LIMIT 1),
	b AS (SELECT height, date_trunc('hour', time, 'UTC') AS hour FROM blocks WHERE chain_id = ?0 AND height > ?1 AND height <= ?2
		UNION ALL -- the genesis state counts in the first block's hour
		SELECT 0, (SELECT date_trunc('hour', time, 'UTC') FROM blocks WHERE chain_id = ?0 ORDER BY height LIMIT 1) WHERE ?1 = 0),
	rows AS (
		SELECT b.hour, CASE WHEN t.denom = n.denom THEN t.amount ELSE 0 END AS native_in,
			CASE WHEN t.denom = n.quote_denom THEN t.amount ELSE 0 END AS usdc_in,
			0 AS native_delta, 0 AS usdc_delta, 0 AS staked_delta, 0 AS claimed_native, 0 AS claimed_usdc
		FROM transfers t JOIN b ON b.height = t.height JOIN n ON t.denom IN (n.denom, n.quote_denom)
		WHERE t.chain_id = ?0 AND t.recipient = ?3 AND t.sender <> ?3 AND t.sender NOT IN (?4) AND t.kind = 'transfer'
		UNION ALL
		SELECT b.hour, 0, 0, CASE WHEN c.denom = n.denom THEN c.delta ELSE 0 END, CASE WHEN c.denom = n.quote_denom THEN c.delta ELSE 0 END, 0, 0, 0
		FROM balance_changes c JOIN b ON b.height = c.height CROSS JOIN n
		WHERE c.chain_id = ?0 AND c.address = ?3 AND c.denom IN (n.denom, n.quote_denom)
		UNION ALL
		SELECT b.hour, 0, 0, 0, 0,
			CASE WHEN s.kind IN ('delegate', 'create_validator') AND s.denom = n.denom THEN s.amount
				WHEN s.kind = 'unbond' AND s.denom = n.denom THEN -s.amount ELSE 0 END,
			CASE WHEN s.kind = 'withdraw_rewards' AND s.denom = n.denom THEN s.amount ELSE 0 END,
			CASE WHEN s.kind = 'withdraw_rewards' AND s.denom = n.quote_denom THEN s.amount ELSE 0 END
		FROM staking_events s JOIN b ON b.height = s.height CROSS JOIN n
		WHERE s.chain_id = ?0 AND s.delegator = ?3 AND s.kind IN ('delegate', 'create_validator', 'unbond', 'withdraw_rewards'))
	INSERT INTO perp_buystake_hourly AS p (chain_id, address, hour, native_in, usdc_in, native_delta, usdc_delta, staked_delta, claimed_native, claimed_usdc)
	SELECT ?0, ?3, hour, sum(native_in), sum(usdc_in), sum(native_delta), sum(usdc_delta), sum(staked_delta), sum(claimed_native), sum(claimed_usdc)
	FROM rows GROUP BY hour
	ON CONFLICT (chain_id, address, hour) DO UPDATE SET native_in = p.native_in + EXCLUDED.native_in, usdc_in = p.usdc_in + EXCLUDED.usdc_in,
		native_delta = p.native_delta + EXCLUDED.native_delta, usdc_delta = p.usdc_delta + EXCLUDED.usdc_delta,
		staked_delta = p.staked_delta + EXCLUDED.staked_delta, claimed_native = p.claimed_native + EXCLUDED.claimed_native,
		claimed_usdc = p.claimed_usdc + EXCLUDED.claimed_usdc`
