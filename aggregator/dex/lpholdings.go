package dex

import (
	"context"
	"fmt"

	"github.com/chainlens/chainlens/aggregator"

	report "github.com/chainlens/chainlens/report/dex"
	"github.com/chainlens/chainlens/store"

	"github.com/cosmos/cosmos-sdk/types/bech32"
	authtypes "github.com/cosmos/cosmos-sdk/x/auth/types"
	"github.com/uptrace/bun"
)

// LPHoldings is the dex_lp_holdings job: the liquidity each address holds.
//
//   - osmosis_lp_holdings: classic pool shares (gamm/pool/N) owned per
//     address = its bank balance (balance_changes; the lockup module
//     account's own balance is its lockers' shares) + the shares it locked
//     (lock_tokens and add_tokens_to_lock events, owner and amount) − the
//     shares the lockup module account sent back to it (transfers: unlocks);
//     locked and superfluid-staked shares stay their owner's.
//   - osmosis_pool_shares: each classic pool's total shares, the sum of all
//     bank balances of its share denom.
//   - osmosis_cl_open_positions: concentrated-liquidity positions with
//     liquidity left (create rows minus withdraw rows of
//     osmosis_cl_positions), owned by their creator; a late start's
//     opening positions (opening.go) count as create rows of their owner
//     at the state's height.
//
// Its watermark is the indexed tip. Holdings and pool totals move by the
// run's own share movements (heights past the watermark; the opening
// balances at height 0 in the first run), committed with the watermark: a
// run costs its new rows, not the history of the keys it touches (each
// pool's total re-summed every share movement of the pool before: 8 s an
// hour at one day of the generated Osmosis). Positions are recomputed per
// touched position (a position's rows are few).
type LPHoldings struct{ Market report.Market }

// Name is the job name.
func (LPHoldings) Name() string { return report.JobLPHoldings }

// RawInputs: the lock events of pool shares.
func (j LPHoldings) RawInputs() aggregator.RawInputs {
	return aggregator.RawInputs{ChainID: j.Market.ChainID, Events: []string{"lock_tokens", "add_tokens_to_lock"}}
}

// Version is the version of the job's rows (see aggregator.Job).
func (LPHoldings) Version() string { return "1" }

// Tables are the tables the job writes: its own, the dex chain's rows only.
func (j LPHoldings) Tables() aggregator.Tables {
	return aggregator.Tables{Owned: []string{"osmosis_cl_open_positions", "osmosis_lp_holdings", "osmosis_pool_shares"}, ChainID: j.Market.ChainID}
}

// shareMoves are the movements of classic pool shares per owner: ?0 chain,
// ?1 lockup module address.
const shareMoves = `
	SELECT height, address, denom, delta FROM balance_changes
		WHERE chain_id = ?0 AND denom LIKE 'gamm/pool/%' AND address <> ?1
	UNION ALL SELECT e.height,
			(SELECT a->>'value' FROM jsonb_array_elements(e.attributes) a WHERE a->>'key' = 'owner' LIMIT 1),
			(regexp_match(c, '^[0-9]+(.+)$'))[1], (regexp_match(c, '^([0-9]+)'))[1]::numeric
		FROM events e
		CROSS JOIN LATERAL regexp_split_to_table(
			(SELECT a->>'value' FROM jsonb_array_elements(e.attributes) a WHERE a->>'key' = 'amount' LIMIT 1), ',') c
		WHERE e.chain_id = ?0 AND e.type IN ('lock_tokens', 'add_tokens_to_lock') AND e.tx_index >= 0 AND c LIKE '%gamm/pool/%'
	UNION ALL SELECT height, recipient, denom, -amount FROM transfers
		WHERE chain_id = ?0 AND kind = 'transfer' AND sender = ?1 AND denom LIKE 'gamm/pool/%'`

// Run advances the holdings to the indexed tip.
func (j LPHoldings) Run(ctx context.Context, tx bun.Tx, wm, bound int64) (int64, int64, error) {
	chain := j.Market.ChainID
	tip, err := store.IndexedTip(ctx, tx, chain)
	if err != nil || tip <= wm {
		return wm, 0, err
	}
	lockup, err := bech32.ConvertAndEncode(j.Market.Prefix, authtypes.NewModuleAddress("lockup"))
	if err != nil {
		return 0, 0, fmt.Errorf("lockup module address: %w", err)
	}
	// The heights after from are the run's; the first run also takes the
	// opening balances (height 0: a genesis or a late start's import).
	from := wm
	if wm == 0 {
		from = -1
	}
	var n int64
	for _, q := range []struct{ what, sql string }{
		{"share holdings", `WITH moves AS (` + shareMoves + `)
			INSERT INTO osmosis_lp_holdings (chain_id, address, pool_id, shares)
			SELECT ?0, address, substring(denom FROM 11)::bigint, sum(delta) FROM moves
			WHERE height > ?2 AND height <= ?3 AND address IS NOT NULL AND denom ~ '^gamm/pool/[0-9]+$'
			GROUP BY address, denom
			ON CONFLICT (chain_id, address, pool_id) DO UPDATE SET shares = osmosis_lp_holdings.shares + EXCLUDED.shares`},
		{"emptied holdings", `DELETE FROM osmosis_lp_holdings WHERE chain_id = ?0 AND shares <= 0`},
		{"pool shares", `INSERT INTO osmosis_pool_shares (chain_id, pool_id, total)
			SELECT ?0, substring(denom FROM 11)::bigint, sum(delta) FROM balance_changes
			WHERE chain_id = ?0 AND height > ?2 AND height <= ?3 AND denom ~ '^gamm/pool/[0-9]+$' GROUP BY denom
			ON CONFLICT (chain_id, pool_id) DO UPDATE SET total = osmosis_pool_shares.total + EXCLUDED.total`},
		{"open positions", `WITH opening AS NOT MATERIALIZED (` + openingPositions + `),
			touched AS (SELECT position_id FROM osmosis_cl_positions WHERE chain_id = ?0 AND height > ?2 AND height <= ?3
				UNION SELECT position_id FROM opening WHERE height > ?2 AND height <= ?3),
			sums AS (SELECT position_id, sum(liquidity) AS liquidity FROM (
					SELECT c.position_id, c.liquidity FROM osmosis_cl_positions c JOIN touched t USING (position_id)
					WHERE c.chain_id = ?0 AND c.height <= ?3
					UNION ALL SELECT o.position_id, o.liquidity FROM opening o JOIN touched t USING (position_id) WHERE o.height <= ?3) l
				GROUP BY position_id)
			INSERT INTO osmosis_cl_open_positions (chain_id, position_id, pool_id, address, lower_tick, upper_tick, liquidity)
			SELECT ?0, s.position_id, c.pool_id, c.sender, c.lower_tick, c.upper_tick, s.liquidity FROM sums s
			JOIN LATERAL (SELECT * FROM (
					SELECT height, pool_id, sender, lower_tick, upper_tick FROM osmosis_cl_positions c
					WHERE c.chain_id = ?0 AND c.position_id = s.position_id AND c.kind = 'create'
					UNION ALL SELECT height, pool_id, address, lower_tick, upper_tick FROM opening o WHERE o.position_id = s.position_id) c
				ORDER BY height LIMIT 1) c ON true
			ON CONFLICT (chain_id, position_id) DO UPDATE SET pool_id = EXCLUDED.pool_id, address = EXCLUDED.address,
				lower_tick = EXCLUDED.lower_tick, upper_tick = EXCLUDED.upper_tick, liquidity = EXCLUDED.liquidity`},
		{"closed positions", `DELETE FROM osmosis_cl_open_positions WHERE chain_id = ?0 AND liquidity <= 0`},
	} {
		res, err := tx.NewRaw(q.sql, chain, lockup, from, tip).Exec(ctx)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %w", q.what, err)
		}
		k, _ := res.RowsAffected()
		n += k
	}
	return tip, n, nil
}
