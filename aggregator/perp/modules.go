package perp

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	report "github.com/chainlens/chainlens/report/perp"

	"cosmossdk.io/math"
	"github.com/cosmos/cosmos-sdk/types/bech32"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/chainlens/chainlens/chains/cosmos"
)

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
	addrs := make([]string, 0, len(report.TreasuryModules))
	for _, m := range report.TreasuryModules {
		a, err := cosmos.ModuleAddress(prefix, m)
		if err != nil {
			return 0, fmt.Errorf("module %s: %w", m, err)
		}
		names[a] = m
		addrs = append(addrs, a)
	}
	var sums []daySum
	if err := tx.NewRaw(`SELECT c.address AS key, date_trunc('day', coalesce(b.time, g.genesis_time), 'UTC') AS day, sum(c.delta)::text AS delta
		FROM balance_changes c
		LEFT JOIN blocks b ON b.chain_id = c.chain_id AND b.height = c.height
		LEFT JOIN genesis_imports g ON g.chain_id = c.chain_id AND c.height = 0
		WHERE c.chain_id = ?0 AND c.address = ANY(?1) AND c.denom = ?2 AND (c.height > ?3 OR (?3 = 0 AND c.height = 0)) AND c.height <= ?4
			AND coalesce(b.time, g.genesis_time) IS NOT NULL
		GROUP BY 1, 2 ORDER BY 2`,
		chainID, pgdialect.Array(addrs), native, from, to).Scan(ctx, &sums); err != nil {
		return 0, fmt.Errorf("module balance changes: %w", err)
	}
	for i := range sums {
		sums[i].Key = names[sums[i].Key]
	}
	return dailyTotals(ctx, tx, chainID, "perp_module_balances_daily", "account", "balance", sums)
}

// validatorTokens adds the staking changes of (from, to] (and the genesis
// validators on the first run) to each validator's tokens per day
// (perp_validator_tokens_daily). Amounts in the bond denom (NATIVE) count;
// SDK 0.47 and older write delegate amounts without a denom ("").
func validatorTokens(ctx context.Context, tx bun.Tx, chainID string, from, to int64) (int64, error) {
	var sums []daySum
	if err := tx.NewRaw(`WITH s AS (
			SELECT s.*, date_trunc('day', coalesce(b.time, g.genesis_time), 'UTC') AS day FROM staking_events s
			LEFT JOIN blocks b ON b.chain_id = s.chain_id AND b.height = s.height
			LEFT JOIN genesis_imports g ON g.chain_id = s.chain_id AND s.height = 0
			JOIN LATERAL (SELECT denom FROM dydx_native_token WHERE chain_id = ?0 ORDER BY height DESC LIMIT 1) n ON s.denom IN (n.denom, '')
			WHERE s.chain_id = ?0 AND (s.height > ?1 OR (?1 = 0 AND s.height = 0)) AND s.height <= ?2
				AND s.kind IN ('create_validator', 'delegate', 'unbond', 'redelegate', 'cancel_unbonding')
				AND coalesce(b.time, g.genesis_time) IS NOT NULL
		)
		SELECT key, day, sum(delta)::text AS delta FROM (
			SELECT validator AS key, day, CASE kind WHEN 'unbond' THEN -amount ELSE amount END AS delta FROM s
			UNION ALL
			SELECT src_validator, day, -amount FROM s WHERE kind = 'redelegate' AND src_validator <> ''
		) x GROUP BY key, day ORDER BY day, key`, chainID, from, to).Scan(ctx, &sums); err != nil {
		return 0, fmt.Errorf("validator tokens: %w", err)
	}
	return dailyTotals(ctx, tx, chainID, "perp_validator_tokens_daily", "validator", "tokens", sums)
}

// validatorStatusSQL copies the validators' bond status of the state
// snapshots of (?1, ?2] into perp_validator_status (?0 the chain).
const validatorStatusSQL = `INSERT INTO perp_validator_status (chain_id, validator, height, time, bonded, jailed)
	SELECT chain_id, key, height, time, coalesce(data->>'status' = 'BOND_STATUS_BONDED', true), coalesce((data->>'jailed')::boolean, false)
	FROM state_snapshots WHERE chain_id = ?0 AND kind = 'validator' AND height > ?1 AND height <= ?2
	ON CONFLICT (chain_id, validator, height) DO UPDATE SET time = EXCLUDED.time, bonded = EXCLUDED.bonded, jailed = EXCLUDED.jailed`

// daySum is a key's change over a UTC day.
type daySum struct {
	Key   string    `bun:"key"`
	Day   time.Time `bun:"day"`
	Delta string    `bun:"delta"`
}

// dailyTotals adds day sums, in day order, to running totals kept per key
// in table (chain_id, keyCol, day, valCol): each day's row holds the key's
// total at the day's end, its last stored total plus the day's sum.
func dailyTotals(ctx context.Context, tx bun.Tx, chainID, table, keyCol, valCol string, sums []daySum) (int64, error) {
	var rows int64
	last := map[string]math.Int{}
	for _, s := range sums {
		total, ok := last[s.Key]
		if !ok {
			var prev string
			err := tx.NewRaw("SELECT "+valCol+"::text FROM "+table+" WHERE chain_id = ? AND "+keyCol+" = ? ORDER BY day DESC LIMIT 1",
				chainID, s.Key).Scan(ctx, &prev)
			switch {
			case errors.Is(err, sql.ErrNoRows):
				total = math.ZeroInt()
			case err != nil:
				return 0, fmt.Errorf("%s of %s: %w", table, s.Key, err)
			default:
				if total, ok = math.NewIntFromString(prev); !ok {
					return 0, fmt.Errorf("%s of %s: %q is not an integer", table, s.Key, prev)
				}
			}
		}
		d, ok := math.NewIntFromString(s.Delta)
		if !ok {
			return 0, fmt.Errorf("%s change of %s: %q is not an integer", table, s.Key, s.Delta)
		}
		total = total.Add(d)
		last[s.Key] = total
		if _, err := tx.NewRaw("INSERT INTO "+table+" (chain_id, "+keyCol+", day, "+valCol+") VALUES (?, ?, ?, ?) ON CONFLICT (chain_id, "+
			keyCol+", day) DO UPDATE SET "+valCol+" = EXCLUDED."+valCol, chainID, s.Key, s.Day, total.String()).Exec(ctx); err != nil {
			return 0, fmt.Errorf("%s of %s: %w", table, s.Key, err)
		}
		rows++
	}
	return rows, nil
}

// treasuryAddresses are the accounts of the report.TreasuryModules.
func treasuryAddresses(prefix string) ([]string, error) {
	out := make([]string, 0, len(report.TreasuryModules))
	for _, m := range report.TreasuryModules {
		a, err := cosmos.ModuleAddress(prefix, m)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// rewards adds the trading rewards of (from, to] to perp_rewards_daily:
// NATIVE transfers from the rewards_treasury module account to accounts
// other than the treasury modules (as treasuryOutflows counts them).
func rewards(ctx context.Context, tx bun.Tx, chainID, prefix string, from, to int64) (int64, error) {
	treasury, err := cosmos.ModuleAddress(prefix, "rewards_treasury")
	if err != nil {
		return 0, err
	}
	modules, err := treasuryAddresses(prefix)
	if err != nil {
		return 0, err
	}
	res, err := tx.NewRaw(`INSERT INTO perp_rewards_daily AS r (chain_id, day, address, amount)
		SELECT ?0, date_trunc('day', b.time, 'UTC'), t.recipient, sum(t.amount)
		FROM transfers t
		JOIN blocks b ON b.chain_id = t.chain_id AND b.height = t.height
		JOIN LATERAL (SELECT denom FROM dydx_native_token WHERE chain_id = ?0 ORDER BY height DESC LIMIT 1) n ON n.denom = t.denom
		WHERE t.chain_id = ?0 AND t.height > ?1 AND t.height <= ?2 AND t.kind = 'transfer' AND t.sender = ?3
			AND NOT t.recipient = ANY(?4)
		GROUP BY 2, 3
		ON CONFLICT (chain_id, day, address) DO UPDATE SET amount = r.amount + EXCLUDED.amount`,
		chainID, from, to, treasury, pgdialect.Array(modules)).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("perp_rewards_daily: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}

// treasuryOutflows adds the transfers of (from, to] from the treasury
// module accounts to accounts outside them to perp_treasury_outflows_daily,
// by destination: trading_rewards from rewards_treasury, grants to a
// configured grant recipient, validators to the operator account of a
// validator that existed then (staking_events), other otherwise.
func treasuryOutflows(ctx context.Context, tx bun.Tx, chainID, prefix string, grants []string, from, to int64) (int64, error) {
	modules, err := treasuryAddresses(prefix)
	if err != nil {
		return 0, err
	}
	rewardsTreasury, err := cosmos.ModuleAddress(prefix, "rewards_treasury")
	if err != nil {
		return 0, err
	}
	// Validators' operator accounts, each from the height it was created:
	// a transfer is to a validator only if the validator existed then.
	var created []struct {
		Operator string `bun:"validator"`
		Height   int64  `bun:"height"`
	}
	if err := tx.NewRaw("SELECT validator, min(height) AS height FROM staking_events WHERE chain_id = ? AND kind = 'create_validator' GROUP BY 1", chainID).
		Scan(ctx, &created); err != nil {
		return 0, fmt.Errorf("validators: %w", err)
	}
	var accounts []string
	var since []int64
	for _, c := range created {
		if _, bz, err := bech32.DecodeAndConvert(c.Operator); err == nil {
			if a, err := bech32.ConvertAndEncode(prefix, bz); err == nil {
				accounts, since = append(accounts, a), append(since, c.Height)
			}
		}
	}
	res, err := tx.NewRaw(`INSERT INTO perp_treasury_outflows_daily AS o (chain_id, day, destination, denom, amount)
		SELECT ?0, date_trunc('day', b.time, 'UTC'),
			CASE WHEN t.sender = ?4 THEN 'trading_rewards'
				WHEN t.recipient = ANY(?7) THEN 'grants'
				WHEN EXISTS (SELECT 1 FROM unnest(?5::text[], ?6::bigint[]) AS v(account, since) WHERE v.account = t.recipient AND v.since <= t.height)
				THEN 'validators' ELSE 'other' END,
			t.denom, sum(t.amount)
		FROM transfers t JOIN blocks b ON b.chain_id = t.chain_id AND b.height = t.height
		WHERE t.chain_id = ?0 AND t.height > ?1 AND t.height <= ?2 AND t.kind = 'transfer'
			AND t.sender = ANY(?3) AND NOT t.recipient = ANY(?3)
		GROUP BY 2, 3, 4
		ON CONFLICT (chain_id, day, destination, denom) DO UPDATE SET amount = o.amount + EXCLUDED.amount`,
		chainID, from, to, pgdialect.Array(modules), rewardsTreasury, pgdialect.Array(accounts), pgdialect.Array(since),
		pgdialect.Array(append([]string{}, grants...))).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("perp_treasury_outflows_daily: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}
