package campaigns

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/chainlens/chainlens/aggregator"

	"github.com/chainlens/chainlens/store"
	"github.com/chainlens/chainlens/store/snapshots"

	"cosmossdk.io/math"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/engagement"
)

// errNotReady is returned for a rule whose data does not exist yet, or
// cannot on its chain (a perp rule on a chain that is not dYdX): the
// audience keeps its members and the job goes on with the others.
var errNotReady = errors.New("rule data not ready")

// Audiences materialises the members of every rule audience
// (engagement.Rule) into audience_members, replacing the previous members
// in the same transaction, so /campaign never sees a half-built audience.
type Audiences struct {
	// Chains are the configured chains by id.
	Chains map[string]config.Chain
	// Prices values dex volume; nil without a dex chain.
	Prices *Prices
	Now    func() time.Time
	Log    *slog.Logger
}

// Name is engagement_audiences.
func (Audiences) Name() string { return "engagement_audiences" }

// Version is the version of the job's rows (see aggregator.Job).
func (Audiences) Version() string { return "1" }

// Tables: the audiences' members are recomputed by every run; the
// audiences themselves are the operator's (imported campaigns), so nothing
// is cleared on a rebuild.
func (Audiences) Tables() aggregator.Tables {
	return aggregator.Tables{Shared: []string{"audiences", "audience_members"}}
}

// Run rebuilds every rule audience.
func (j Audiences) Run(ctx context.Context, tx bun.Tx, wm, bound int64) (int64, int64, error) {
	now := time.Now()
	if j.Now != nil {
		now = j.Now()
	}
	var auds []struct {
		ID   int64  `bun:"id"`
		Name string `bun:"name"`
		Rule string `bun:"rule"`
	}
	if err := tx.NewRaw(`SELECT id, name, rule::text AS rule FROM audiences WHERE kind = 'rule' ORDER BY id`).Scan(ctx, &auds); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return wm, 0, fmt.Errorf("rule audiences: %w", err)
	}
	var rows int64
	for _, a := range auds {
		r, err := engagement.ParseRule([]byte(a.Rule))
		if err != nil {
			return wm, rows, fmt.Errorf("audience %q: %w", a.Name, err)
		}
		ch, ok := j.Chains[r.Chain]
		if !ok {
			// Refused at import; a chain removed from the config since keeps
			// the audience's last members rather than emptying it.
			if j.Log != nil {
				j.Log.Warn("rule audience names a chain not configured; members kept", "audience", a.Name, "chain", r.Chain)
			}
			continue
		}
		members, err := j.members(ctx, tx, ch, r, now)
		if errors.Is(err, errNotReady) {
			// Members stay as they were (refreshed_at tells how old they are).
			if j.Log != nil {
				j.Log.Warn("rule audience not refreshed", "audience", a.Name, "err", err)
			}
			continue
		}
		if err != nil {
			return wm, rows, fmt.Errorf("audience %q: %w", a.Name, err)
		}
		if _, err := tx.NewRaw(`DELETE FROM audience_members WHERE audience_id = ?`, a.ID).Exec(ctx); err != nil {
			return wm, rows, fmt.Errorf("audience %q: %w", a.Name, err)
		}
		if len(members) > 0 {
			res, err := tx.NewRaw(`INSERT INTO audience_members (audience_id, address) SELECT ?, unnest(?::text[]) ON CONFLICT DO NOTHING`,
				a.ID, pgdialect.Array(members)).Exec(ctx)
			if err != nil {
				return wm, rows, fmt.Errorf("audience %q members: %w", a.Name, err)
			}
			n, _ := res.RowsAffected()
			rows += n
		}
		if _, err := tx.NewRaw(`UPDATE audiences SET refreshed_at = ? WHERE id = ?`, now, a.ID).Exec(ctx); err != nil {
			return wm, rows, fmt.Errorf("audience %q: %w", a.Name, err)
		}
	}
	return now.Unix(), rows, nil
}

// members evaluates r on ch: the normalised addresses meeting every
// condition, sorted.
func (j Audiences) members(ctx context.Context, tx bun.Tx, ch config.Chain, r *engagement.Rule, now time.Time) ([]string, error) {
	var sets [][]string
	evm := ch.IsEVM()
	if r.ActiveWithinDays > 0 {
		since := now.Add(-time.Duration(r.ActiveWithinDays) * 24 * time.Hour)
		// A chain indexed only up to before the window tells nothing of it
		// (the members stay as they were), rather than everyone ever seen.
		var tip sql.NullTime
		if err := tx.NewRaw(`SELECT (SELECT time FROM block_headers WHERE chain_id = ? ORDER BY height DESC LIMIT 1)`, ch.ID).Scan(ctx, &tip); err != nil {
			return nil, fmt.Errorf("last indexed block of %s: %w", ch.ID, err)
		}
		if !tip.Valid || tip.Time.Before(since) {
			return nil, fmt.Errorf("%w: %s is indexed to %v, before the %d days of active_within_days", errNotReady, ch.ID,
				tip.Time.UTC().Format(time.RFC3339), r.ActiveWithinDays)
		}
		// The window's heights (block headers are not indexed by time).
		before, err := store.HeightBefore(ctx, tx, ch.ID, since)
		if err != nil {
			return nil, err
		}
		var addrs []string
		if evm {
			err = tx.NewRaw(`SELECT DISTINCT t.sender FROM erc20_transfers t
				WHERE t.chain_id = ? AND t.kind = 'transfer' AND t.height > ?`,
				ch.ID, before).Scan(ctx, &addrs)
		} else if ch.Kind == "dydx" {
			// Short-term orders reach the chain inside the proposer's
			// unsigned MsgProposedOperations: a trader who only trades so
			// signs nothing, and is active by their fills.
			err = tx.NewRaw(`SELECT s FROM txs t, unnest(t.signers) s
				WHERE t.chain_id = ? AND t.code = 0 AND t.height > ?
				UNION SELECT address FROM dydx_fills WHERE chain_id = ? AND time >= ?`,
				ch.ID, before, ch.ID, since).Scan(ctx, &addrs)
		} else {
			err = tx.NewRaw(`SELECT DISTINCT s FROM txs t, unnest(t.signers) s
				WHERE t.chain_id = ? AND t.code = 0 AND t.height > ?`,
				ch.ID, before).Scan(ctx, &addrs)
		}
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("active addresses: %w", err)
		}
		sets = append(sets, normalizeAll(addrs))
	}
	if r.Holds != nil {
		var addrs []string
		var err error
		if evm {
			err = tx.NewRaw(`SELECT a FROM (
					SELECT recipient AS a, amount AS d FROM erc20_transfers WHERE chain_id = ? AND lower(token) = lower(?)
					UNION ALL SELECT sender, -amount FROM erc20_transfers WHERE chain_id = ? AND lower(token) = lower(?)) m
				GROUP BY a HAVING sum(d) >= ?::numeric AND sum(d) > 0`, ch.ID, r.Holds.Denom, ch.ID, r.Holds.Denom, r.Holds.MinAmount).Scan(ctx, &addrs)
		} else {
			// The newest holder list the snapshotter took (DenomOwners at a
			// fixed height): exact whatever height indexing started at.
			var h sql.NullInt64
			if err := tx.NewRaw(`SELECT max(height) FROM state_snapshots WHERE chain_id = ? AND kind = ? AND key = ?`,
				ch.ID, snapshots.KindTaken, snapshots.HolderMarker(r.Holds.Denom)).Scan(ctx, &h); err != nil {
				return nil, fmt.Errorf("holder list of %s: %w", r.Holds.Denom, err)
			}
			if !h.Valid {
				return nil, fmt.Errorf("%w: no holder list of %s on %s yet (state snapshots must be on: snapshot_every)", errNotReady, r.Holds.Denom, ch.ID)
			}
			err = tx.NewRaw(`SELECT key FROM state_snapshots WHERE chain_id = ? AND height = ? AND kind = ? AND denom = ? AND amount >= ?::numeric`,
				ch.ID, h.Int64, snapshots.KindHolder, r.Holds.Denom, r.Holds.MinAmount).Scan(ctx, &addrs)
		}
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("holders of %s: %w", r.Holds.Denom, err)
		}
		sets = append(sets, normalizeAll(addrs))
	}
	if r.MinDexVolumeUSD != "" {
		if j.Prices == nil || j.Prices.Market.ChainID != ch.ID {
			// Not refused at import (any configured chain may be named):
			// skipped with a warning, so that the other audiences refresh.
			return nil, fmt.Errorf("%w: min_dex_volume_usd needs the dex chain, not %s", errNotReady, ch.ID)
		}
		addrs, err := j.dexTraders(ctx, tx, ch, r, now)
		if err != nil {
			return nil, err
		}
		sets = append(sets, normalizeAll(addrs))
	}
	if r.MinPerpVolumeUSD != "" || r.MinPerpTrades > 0 {
		if ch.Kind != "dydx" {
			return nil, fmt.Errorf("%w: min_perp_volume_usd and min_perp_trades need a chain of kind dydx, not %s (%s)", errNotReady, ch.ID, ch.Kind)
		}
		addrs, err := perpTraders(ctx, tx, ch, r, now)
		if err != nil {
			return nil, err
		}
		sets = append(sets, normalizeAll(addrs))
	}
	return intersect(sets), nil
}

// perpTraders are the owners of the subaccounts whose fills (as taker or
// maker, dydx_fills) reach the rule's minimum notional in USD (quote
// quantums are USDC, 6 decimals) and number of fills.
func perpTraders(ctx context.Context, tx bun.Tx, ch config.Chain, r *engagement.Rule, now time.Time) ([]string, error) {
	since := time.Time{}
	if r.ActiveWithinDays > 0 {
		since = now.Add(-time.Duration(r.ActiveWithinDays) * 24 * time.Hour)
	}
	minVolume := "0"
	if r.MinPerpVolumeUSD != "" {
		minVolume = r.MinPerpVolumeUSD
	}
	var addrs []string
	if err := tx.NewRaw(`SELECT address FROM dydx_fills WHERE chain_id = ? AND time >= ?
		GROUP BY address HAVING sum(notional) >= ?::numeric * 1000000 AND count(*) >= ?`,
		ch.ID, since, minVolume, r.MinPerpTrades).Scan(ctx, &addrs); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("perp traders: %w", err)
	}
	return addrs, nil
}

// dexTraders are the senders whose swap volume in USD (amount in at the
// hour's price) reaches the rule's minimum.
func (j Audiences) dexTraders(ctx context.Context, tx bun.Tx, ch config.Chain, r *engagement.Rule, now time.Time) ([]string, error) {
	since := time.Time{}
	if r.ActiveWithinDays > 0 {
		since = now.Add(-time.Duration(r.ActiveWithinDays) * 24 * time.Hour)
	}
	var rows []struct {
		Sender string `bun:"sender"`
		Denom  string `bun:"denom_in"`
		Amount string `bun:"amount"`
		Price  string `bun:"price_usd"`
	}
	if err := tx.NewRaw(`SELECT s.sender, s.denom_in, sum(s.amount_in)::text AS amount, p.price_usd::text AS price_usd
		FROM osmosis_swaps s JOIN osmosis_asset_prices p ON p.chain_id = s.chain_id AND p.denom = s.denom_in AND p.hour = date_trunc('hour', s.time)
		WHERE s.chain_id = ? AND s.tx_index >= 0 AND s.time >= ?
		GROUP BY s.sender, s.denom_in, p.hour, p.price_usd`, ch.ID, since).Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("dex volume: %w", err)
	}
	minVolume, err := math.LegacyNewDecFromStr(r.MinDexVolumeUSD)
	if err != nil {
		return nil, err
	}
	vol := map[string]math.LegacyDec{}
	for _, row := range rows {
		amt, ok := math.NewIntFromString(row.Amount)
		if !ok {
			return nil, fmt.Errorf("swap amount %q", row.Amount)
		}
		price, err := math.LegacyNewDecFromStr(row.Price)
		if err != nil {
			return nil, fmt.Errorf("price %q: %w", row.Price, err)
		}
		v := j.Prices.Market.USDValue(row.Denom, amt, price)
		if cur, ok := vol[row.Sender]; ok {
			v = v.Add(cur)
		}
		vol[row.Sender] = v
	}
	var out []string
	for s, v := range vol {
		if v.GTE(minVolume) && v.IsPositive() {
			out = append(out, s)
		}
	}
	return out, nil
}

func normalizeAll(addrs []string) []string {
	out := make([]string, 0, len(addrs))
	for _, a := range addrs {
		if n, err := engagement.Normalize(a); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// intersect is the sorted set of strings present in every set.
func intersect(sets [][]string) []string {
	if len(sets) == 0 {
		return nil
	}
	count := map[string]int{}
	for _, s := range sets {
		seen := map[string]bool{}
		for _, a := range s {
			if !seen[a] {
				seen[a] = true
				count[a]++
			}
		}
	}
	var out []string
	for a, n := range count {
		if n == len(sets) {
			out = append(out, a)
		}
	}
	slices.Sort(out)
	return out
}
