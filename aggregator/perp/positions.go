package perp

import (
	"context"
	"fmt"
	"time"

	"cosmossdk.io/math"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/chainlens/chainlens/chains/dydx"
)

// priceHourlySQL keeps, per market and UTC hour, the last oracle price set
// in (?1, ?2] (a later height replaces an earlier one); the first run also
// takes the genesis prices (height 0).
const priceHourlySQL = `INSERT INTO perp_price_hourly AS p (chain_id, market_id, hour, height, price)
	SELECT DISTINCT ON (market_id, date_trunc('hour', time, 'UTC')) ?0, market_id, date_trunc('hour', time, 'UTC'), height, price
	FROM dydx_prices WHERE chain_id = ?0 AND (height > ?1 OR (?1 = 0 AND height = 0)) AND height <= ?2
	ORDER BY market_id, date_trunc('hour', time, 'UTC'), height DESC
	ON CONFLICT (chain_id, market_id, hour) DO UPDATE SET height = EXCLUDED.height, price = EXCLUDED.price
	WHERE EXCLUDED.height > p.height`

type positionKey struct {
	address string
	number  int64
	perp    int64
}

type perpHour struct {
	perp int64
	hour time.Time
}

// positionsSpan is how many heights positions replays at a time: memory
// holds one span's fill sides (a rebuild's run covers up to maxHeights;
// mainnet dYdX blocks carry hundreds of fills).
const positionsSpan = 1_000

// positions replays the fill sides of (from, to] in chain order onto the
// subaccounts' positions (perp_positions) and records each market's open
// interest, the sum of long positions, after the last fill of every hour
// (perp_open_interest_hourly), positionsSpan heights at a time. It returns
// the rows written.
func positions(ctx context.Context, tx bun.Tx, chainID string, from, to int64) (int64, error) {
	return positionsBySpan(ctx, tx, chainID, from, to, positionsSpan)
}

// A chain indexed from after its initial height starts from the positions
// the indexer imported at the height before (state_imports records the
// import of SubaccountAll, dydx_opening_positions holds them), and each
// market's open interest from them, at the hour of the first block after.
// Arguments ?0 chain, ?1 the import's part.
const (
	openingPositionsSQL = `INSERT INTO perp_positions (chain_id, address, subaccount_number, perpetual_id, size)
		SELECT o.chain_id, o.address, o.subaccount_number, o.perpetual_id, o.quantums
		FROM dydx_opening_positions o JOIN state_imports i ON i.chain_id = o.chain_id AND i.part = ?1 AND i.height = o.height
		WHERE o.chain_id = ?0
		ON CONFLICT (chain_id, address, subaccount_number, perpetual_id) DO UPDATE SET size = EXCLUDED.size`
	openingOpenInterestSQL = `INSERT INTO perp_open_interest_hourly (chain_id, perpetual_id, hour, open_interest)
		SELECT o.chain_id, o.perpetual_id,
			date_trunc('hour', (SELECT time FROM blocks WHERE chain_id = ?0 AND height > i.height ORDER BY height LIMIT 1), 'UTC'),
			coalesce(sum(o.quantums) FILTER (WHERE o.quantums > 0), 0)
		FROM dydx_opening_positions o JOIN state_imports i ON i.chain_id = o.chain_id AND i.part = ?1 AND i.height = o.height
		WHERE o.chain_id = ?0
		GROUP BY o.chain_id, o.perpetual_id, i.height
		ON CONFLICT (chain_id, perpetual_id, hour) DO UPDATE SET open_interest = EXCLUDED.open_interest`
)

// positionsBySpan is positions, span heights at a time; a run from the
// first height (from 0: the first, or a rebuild) starts from the opening
// positions, if any.
func positionsBySpan(ctx context.Context, tx bun.Tx, chainID string, from, to, span int64) (int64, error) {
	var rows int64
	if from == 0 {
		for _, q := range []string{openingPositionsSQL, openingOpenInterestSQL} {
			res, err := tx.NewRaw(q, chainID, dydx.PathSubaccountAll).Exec(ctx)
			if err != nil {
				return 0, fmt.Errorf("opening positions: %w", err)
			}
			n, _ := res.RowsAffected()
			rows += n
		}
	}
	for lo := from; lo < to; lo += span {
		n, err := replayPositions(ctx, tx, chainID, lo, min(lo+span, to))
		if err != nil {
			return 0, err
		}
		rows += n
	}
	return rows, nil
}

// replayPositions is positions over (from, to] at once.
func replayPositions(ctx context.Context, tx bun.Tx, chainID string, from, to int64) (int64, error) {
	var sides []struct {
		Address string    `bun:"address"`
		Number  int64     `bun:"subaccount_number"`
		Perp    int64     `bun:"perpetual_id"`
		Size    string    `bun:"size"`
		IsBuy   bool      `bun:"is_buy"`
		Time    time.Time `bun:"time"`
	}
	if err := tx.NewRaw(`SELECT address, subaccount_number, perpetual_id, size::text AS size, is_buy, time FROM dydx_fills
		WHERE chain_id = ? AND height > ? AND height <= ? ORDER BY height, tx_index, event_index, role`, chainID, from, to).Scan(ctx, &sides); err != nil {
		return 0, fmt.Errorf("fills: %w", err)
	}
	if len(sides) == 0 {
		return 0, nil
	}
	addrs := map[string]bool{}
	perps := map[int64]bool{}
	for _, s := range sides {
		addrs[s.Address], perps[s.Perp] = true, true
	}
	var held []struct {
		Address string `bun:"address"`
		Number  int64  `bun:"subaccount_number"`
		Perp    int64  `bun:"perpetual_id"`
		Size    string `bun:"size"`
	}
	if err := tx.NewRaw(`SELECT address, subaccount_number, perpetual_id, size::text AS size FROM perp_positions
		WHERE chain_id = ? AND address = ANY(?)`, chainID, pgdialect.Array(keys(addrs))).Scan(ctx, &held); err != nil {
		return 0, fmt.Errorf("positions: %w", err)
	}
	pos := map[positionKey]math.Int{}
	for _, h := range held {
		n, ok := math.NewIntFromString(h.Size)
		if !ok {
			return 0, fmt.Errorf("position %s/%d perpetual %d: %q is not an integer", h.Address, h.Number, h.Perp, h.Size)
		}
		pos[positionKey{h.Address, h.Number, h.Perp}] = n
	}
	var last []struct {
		Perp int64  `bun:"perpetual_id"`
		OI   string `bun:"open_interest"`
	}
	if err := tx.NewRaw(`SELECT DISTINCT ON (perpetual_id) perpetual_id, open_interest::text AS open_interest FROM perp_open_interest_hourly
		WHERE chain_id = ? AND perpetual_id = ANY(?) ORDER BY perpetual_id, hour DESC`, chainID, pgdialect.Array(keys(perps))).Scan(ctx, &last); err != nil {
		return 0, fmt.Errorf("open interest: %w", err)
	}
	oi := map[int64]math.Int{}
	for p := range perps {
		oi[p] = math.ZeroInt()
	}
	for _, l := range last {
		n, ok := math.NewIntFromString(l.OI)
		if !ok {
			return 0, fmt.Errorf("open interest of %d: %q is not an integer", l.Perp, l.OI)
		}
		oi[l.Perp] = n
	}
	longPart := func(n math.Int) math.Int {
		if n.IsPositive() {
			return n
		}
		return math.ZeroInt()
	}
	changed := map[positionKey]bool{}
	hourly := map[perpHour]math.Int{}
	for _, s := range sides {
		size, ok := math.NewIntFromString(s.Size)
		if !ok {
			return 0, fmt.Errorf("fill size %q is not an integer", s.Size)
		}
		if !s.IsBuy {
			size = size.Neg()
		}
		k := positionKey{s.Address, s.Number, s.Perp}
		old, ok := pos[k]
		if !ok {
			old = math.ZeroInt()
		}
		now := old.Add(size)
		pos[k], changed[k] = now, true
		oi[s.Perp] = oi[s.Perp].Add(longPart(now)).Sub(longPart(old))
		hourly[perpHour{s.Perp, s.Time.UTC().Truncate(time.Hour)}] = oi[s.Perp]
	}
	// One statement per table: the changed positions and the hours' open
	// interest, as arrays.
	var addrs2 []string
	var numbers, perpIDs []int64
	var sizes []string
	for k := range changed {
		addrs2, numbers, perpIDs, sizes = append(addrs2, k.address), append(numbers, k.number), append(perpIDs, k.perp), append(sizes, pos[k].String())
	}
	if _, err := tx.NewRaw(`INSERT INTO perp_positions (chain_id, address, subaccount_number, perpetual_id, size)
		SELECT ?, a, n, p, s::numeric FROM unnest(?::text[], ?::int[], ?::int[], ?::text[]) AS u(a, n, p, s)
		ON CONFLICT (chain_id, address, subaccount_number, perpetual_id) DO UPDATE SET size = EXCLUDED.size`,
		chainID, pgdialect.Array(addrs2), pgdialect.Array(numbers), pgdialect.Array(perpIDs), pgdialect.Array(sizes)).Exec(ctx); err != nil {
		return 0, fmt.Errorf("positions: %w", err)
	}
	var hourPerps []int64
	var hours []time.Time
	var values []string
	for k, v := range hourly {
		hourPerps, hours, values = append(hourPerps, k.perp), append(hours, k.hour), append(values, v.String())
	}
	if _, err := tx.NewRaw(`INSERT INTO perp_open_interest_hourly (chain_id, perpetual_id, hour, open_interest)
		SELECT ?, p, h, v::numeric FROM unnest(?::int[], ?::timestamptz[], ?::text[]) AS u(p, h, v)
		ON CONFLICT (chain_id, perpetual_id, hour) DO UPDATE SET open_interest = EXCLUDED.open_interest`,
		chainID, pgdialect.Array(hourPerps), pgdialect.Array(hours), pgdialect.Array(values)).Exec(ctx); err != nil {
		return 0, fmt.Errorf("open interest: %w", err)
	}
	rows := int64(len(changed) + len(hourly))
	return rows, nil
}

func keys[K comparable](m map[K]bool) []K {
	out := make([]K, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
