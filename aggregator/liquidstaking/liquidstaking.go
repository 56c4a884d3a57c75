// Package liquidstaking builds the liquid-staking report of the staking
// group: the flows of the configured providers' accounts on the Cosmos Hub
// (config staking.providers), from the staking and x/liquid events the
// indexer stored (chain-events.md §8.1, §8.2).
package liquidstaking

import (
	"context"
	"fmt"

	"github.com/chainlens/chainlens/aggregator"

	report "github.com/chainlens/chainlens/report/staking"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/store"
)

// maxHeights bounds the heights one run reads.
const maxHeights = 50_000

// Job writes liquid_provider_daily from the delegation snapshots
// (each provider's delegations at the last snapshot of each day) and
// liquid_flows: for every successful tx event past the
// watermark where a provider account is the delegator, an inflow
// (delegate, redeem_shares) or an outflow (unbond, tokenize_shares).
// Redelegations move stake between validators and are no flow. A
// watermark reset, or a change of the provider accounts (part of Version),
// rebuilds the flows from scratch.
type Job struct {
	Chain     config.Chain
	Providers map[string][]string
}

// Name is the job name.
func (Job) Name() string { return report.JobLiquidStaking }

// RawInputs: the staking and liquid-staking events of providers.
func (j Job) RawInputs() aggregator.RawInputs {
	return aggregator.RawInputs{ChainID: j.Chain.ID, Events: []string{"delegate", "unbond", "cancel_unbonding_delegation", "tokenize_shares", "redeem_shares"}}
}

// Version is the version of the job's rules and of the providers' accounts its rows
// depend on: a change of either rebuilds them.
func (j Job) Version() string { return aggregator.SettingsVersion("1", j.Providers) }

// Tables are the tables the job writes, the chain's rows only.
func (j Job) Tables() aggregator.Tables {
	return aggregator.Tables{Owned: []string{"liquid_flows", "liquid_provider_daily"}, ChainID: j.Chain.ID}
}

// Run advances liquid_flows from wm to the indexed tip.
func (j Job) Run(ctx context.Context, tx bun.Tx, wm, bound int64) (int64, int64, error) {
	id := j.Chain.ID
	wm, to, err := store.NextRange(ctx, tx, id, wm, maxHeights, "liquid_flows", "liquid_provider_daily")
	if err != nil {
		return 0, 0, err
	}
	if to <= wm {
		return wm, 0, nil
	}
	var accounts, names []string
	for name, list := range j.Providers {
		for _, a := range list {
			accounts, names = append(accounts, a), append(names, name)
		}
	}
	if len(accounts) == 0 {
		return to, 0, nil
	}
	var rows int64
	for _, step := range []struct{ name, query string }{{"liquid_flows", flowsSQL}, {"liquid_provider_daily", dailySQL}} {
		res, err := tx.NewRaw(step.query, id, wm, to, pgdialect.Array(accounts), pgdialect.Array(names)).Exec(ctx)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %w", step.name, err)
		}
		n, _ := res.RowsAffected()
		rows += n
	}
	return to, rows, nil
}

// dailySQL: each provider's delegations at the last snapshot of each UTC
// day that took delegations (same arguments as flowsSQL).
const dailySQL = `WITH p AS (SELECT * FROM unnest(?3::text[], ?4::text[]) AS p(account, provider)),
	snaps AS (
		SELECT DISTINCT ON ((time AT TIME ZONE 'UTC')::date) height, (time AT TIME ZONE 'UTC')::date AS day
		FROM state_snapshots WHERE chain_id = ?0 AND kind = 'taken' AND key = 'delegation' AND height > ?1 AND height <= ?2
		ORDER BY (time AT TIME ZONE 'UTC')::date, height DESC),
	totals AS (
		SELECT s.day, s.height, pr.provider,
			coalesce((SELECT sum(d.amount) FROM state_snapshots d JOIN p ON p.account = split_part(d.key, '/', 1) AND p.provider = pr.provider
				WHERE d.chain_id = ?0 AND d.height = s.height AND d.kind = 'delegation'), 0) AS amount
		FROM snaps s CROSS JOIN (SELECT DISTINCT provider FROM p) pr)
	INSERT INTO liquid_provider_daily AS l (chain_id, day, provider, amount, height)
	SELECT ?0, day, provider, amount, height FROM totals
	ON CONFLICT (chain_id, day, provider) DO UPDATE SET amount = EXCLUDED.amount, height = EXCLUDED.height
		WHERE l.height < EXCLUDED.height`

// flowsSQL: ?0 chain, ?1 watermark, ?2 last height, ?3 provider accounts,
// ?4 their provider names. An amount is "<integer><denom>"; share tokens
// (<valoper>/<record>) count at face value. A cancelled unbonding brings
// the stake back: an inflow, as a delegation.
const flowsSQL = `WITH p AS (SELECT * FROM unnest(?3::text[], ?4::text[]) AS p(account, provider)),
	e AS (
		SELECT e.height, e.tx_index, e.event_index, e.type,
			(SELECT a->>'value' FROM jsonb_array_elements(e.attributes) a WHERE a->>'key' = 'delegator' LIMIT 1) AS delegator,
			(SELECT a->>'value' FROM jsonb_array_elements(e.attributes) a WHERE a->>'key' = 'amount' LIMIT 1) AS amount,
			t.hash, b.time
		FROM events e
		JOIN txs t ON t.chain_id = e.chain_id AND t.height = e.height AND t.tx_index = e.tx_index AND t.code = 0
		JOIN blocks b ON b.chain_id = e.chain_id AND b.height = e.height
		WHERE e.chain_id = ?0 AND e.height > ?1 AND e.height <= ?2
			AND e.type IN ('delegate', 'unbond', 'cancel_unbonding_delegation', 'tokenize_shares', 'redeem_shares'))
	INSERT INTO liquid_flows (chain_id, height, tx_index, event_index, time, tx_hash, provider, direction, kind, amount)
	SELECT ?0, e.height, e.tx_index, e.event_index, e.time, e.hash, p.provider,
		CASE WHEN e.type IN ('delegate', 'redeem_shares', 'cancel_unbonding_delegation') THEN 'in' ELSE 'out' END, e.type,
		substring(e.amount FROM '^[0-9]+')::numeric
	FROM e JOIN p ON p.account = e.delegator
	WHERE e.amount ~ '^[0-9]+'
	ON CONFLICT (chain_id, height, tx_index, event_index) DO NOTHING`
