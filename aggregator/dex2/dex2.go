// Package dex2 builds the report tables of the second dex chain group
// (Neutron x/dex) from the tick updates of the neutron adapter
// (chains/neutron): pairs, current reserves per tick, fills and USD volume.
package dex2

import (
	"context"
	"fmt"
	"strconv"

	"github.com/chainlens/chainlens/aggregator"

	report "github.com/chainlens/chainlens/report/dex2"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/store"
)

// maxHeights bounds the heights one run reads.
const maxHeights = 50_000

// Tables are the job's report tables.
var Tables = []string{"dex2_pairs", "dex2_reserves", "dex2_fills", "dex2_usd_prices", "dex2_volume_daily"}

// Job adds the tick updates past its watermark to
//   - dex2_pairs: first and last update of each pair;
//   - dex2_reserves: the last reserves of every pool side and tranche;
//   - dex2_fills: every update a swap filled against, valued in USD when
//     one side is a USD-pegged asset (config assets with symbol USDC/USDT
//     or market_data_id usd-coin/tether), else at a side's price from its
//     last fill against a USD-pegged asset in an earlier block;
//   - dex2_volume_daily: the USD value of the fills per UTC day.
//
// A watermark of 0 rebuilds from scratch.
type Job struct {
	Chain config.Chain
}

// Name is the job name.
func (Job) Name() string { return report.Job }

// Version is the version of the job's rows (see aggregator.Job).
func (Job) Version() string { return "1" }

// Tables are the tables the job writes: Tables, the chain's rows only.
func (j Job) Tables() aggregator.Tables { return aggregator.Tables{Owned: Tables, ChainID: j.Chain.ID} }

// usdPegged reports the USD-pegged assets of the chain: denom → display exponent.
func usdPegged(ch config.Chain) (denoms []string, scales []string) {
	for _, a := range ch.Assets {
		if a.Symbol == "USDC" || a.Symbol == "USDT" || a.MarketDataID == "usd-coin" || a.MarketDataID == "tether" {
			denoms = append(denoms, a.Denom)
			scales = append(scales, "1e-"+strconv.Itoa(a.Exponent))
		}
	}
	return denoms, scales
}

// Run advances the reports from wm to the indexed tip.
func (j Job) Run(ctx context.Context, tx bun.Tx, wm, bound int64) (int64, int64, error) {
	id := j.Chain.ID
	wm, to, err := store.NextRange(ctx, tx, id, wm, maxHeights, Tables...)
	if err != nil {
		return 0, 0, err
	}
	if to <= wm {
		return wm, 0, nil
	}
	denoms, scales := usdPegged(j.Chain)
	args := []any{id, wm, to, pgdialect.Array(denoms), pgdialect.Array(scales)}
	var rows int64
	for _, step := range []struct{ name, query string }{
		{"dex2_pairs", pairsSQL},
		{"dex2_reserves", reservesSQL},
		{"dex2_fills", fillsSQL},
		{"dex2_usd_prices", usdPricesSQL},
		{"dex2_fills priced through a USD pair", derivedSQL},
		{"dex2_volume_daily", volumeSQL},
	} {
		res, err := tx.NewRaw(step.query, args...).Exec(ctx)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %w", step.name, err)
		}
		n, _ := res.RowsAffected()
		rows += n
	}
	return to, rows, nil
}

// Queries; arguments ?0 chain, ?1 watermark, ?2 last height, ?3 USD-pegged
// denoms, ?4 their display scales.
const (
	pairsSQL = `INSERT INTO dex2_pairs AS p (chain_id, token0, token1, created_height, created_time, updated_height, updated_time)
		SELECT ?0, token0, token1, min(height), min(time), max(height), max(time)
		FROM neutron_dex_tick_updates WHERE chain_id = ?0 AND height > ?1 AND height <= ?2
		GROUP BY token0, token1
		ON CONFLICT (chain_id, token0, token1) DO UPDATE SET
			updated_height = EXCLUDED.updated_height, updated_time = EXCLUDED.updated_time`

	reservesSQL = `INSERT INTO dex2_reserves AS r (chain_id, token0, token1, maker_denom, tick_index, pool_key, reserves, height)
		SELECT DISTINCT ON (token0, token1, maker_denom, tick_index, pool_key)
			?0, token0, token1, maker_denom, tick_index, pool_key, reserves, height
		FROM (SELECT *, CASE WHEN tranche_key <> '' THEN tranche_key ELSE 'fee ' || fee END AS pool_key
			FROM neutron_dex_tick_updates WHERE chain_id = ?0 AND height > ?1 AND height <= ?2) u
		ORDER BY token0, token1, maker_denom, tick_index, pool_key, height DESC, tx_index DESC, event_index DESC
		ON CONFLICT (chain_id, token0, token1, maker_denom, tick_index, pool_key) DO UPDATE SET
			reserves = EXCLUDED.reserves, height = EXCLUDED.height`

	fillsSQL = `WITH usd AS (SELECT * FROM unnest(?3::text[], ?4::numeric[]) AS u(denom, scale))
		INSERT INTO dex2_fills (chain_id, height, tx_index, event_index, time, tx_hash, token0, token1, maker_denom, tick_index,
			taker_in, taker_out, usd)
		SELECT ?0, t.height, t.tx_index, t.event_index, t.time, t.tx_hash, t.token0, t.token1, t.maker_denom, t.tick_index,
			t.swap_in, t.swap_out,
			coalesce(t.swap_in * (SELECT scale FROM usd WHERE denom = CASE WHEN t.maker_denom = t.token0 THEN t.token1 ELSE t.token0 END),
				t.swap_out * (SELECT scale FROM usd WHERE denom = t.maker_denom))
		FROM neutron_dex_tick_updates t
		WHERE t.chain_id = ?0 AND t.height > ?1 AND t.height <= ?2 AND t.swap_in IS NOT NULL AND t.swap_out IS NOT NULL
			AND (t.swap_in > 0 OR t.swap_out > 0)
		ON CONFLICT (chain_id, height, tx_index, event_index) DO NOTHING`

	volumeSQL = `INSERT INTO dex2_volume_daily AS v (chain_id, day, usd, fills)
		SELECT ?0, (time AT TIME ZONE 'UTC')::date, sum(usd), count(*)
		FROM dex2_fills WHERE chain_id = ?0 AND height > ?1 AND height <= ?2 AND usd IS NOT NULL
		GROUP BY 2
		ON CONFLICT (chain_id, day) DO UPDATE SET usd = v.usd + EXCLUDED.usd, fills = v.fills + EXCLUDED.fills`
)

const (
	// usdPricesSQL records the fills of the range of a denom against a
	// USD-pegged asset: their USD value and amount of the denom.
	usdPricesSQL = `INSERT INTO dex2_usd_prices (chain_id, denom, height, tx_index, event_index, usd, amount)
		SELECT ?0, x.denom, f.height, f.tx_index, f.event_index, f.usd, x.amount
		FROM dex2_fills f
		CROSS JOIN LATERAL (SELECT CASE WHEN f.token0 = ANY(?3::text[]) THEN f.token1 ELSE f.token0 END AS denom) d
		CROSS JOIN LATERAL (SELECT d.denom, CASE WHEN f.maker_denom = d.denom THEN f.taker_out ELSE f.taker_in END AS amount) x
		WHERE f.chain_id = ?0 AND f.height > ?1 AND f.height <= ?2 AND f.usd > 0
			AND (f.token0 = ANY(?3::text[])) <> (f.token1 = ANY(?3::text[])) AND x.amount > 0
		ON CONFLICT DO NOTHING`

	// derivedSQL values the fills of the range that have no USD-pegged
	// side: a side's denom is priced by its last fill against a USD-pegged
	// asset in an earlier block (dex2_usd_prices: that fill's USD value
	// over its amount of the denom, multiplied before dividing); the
	// taker's input side first, as fillsSQL.
	derivedSQL = `UPDATE dex2_fills f SET usd = v.usd
		FROM (SELECT g.height, g.tx_index, g.event_index, coalesce(g.taker_in * pin.usd / pin.amount, g.taker_out * pout.usd / pout.amount) AS usd
			FROM dex2_fills g
			CROSS JOIN LATERAL (SELECT CASE WHEN g.maker_denom = g.token0 THEN g.token1 ELSE g.token0 END AS denom) i
			LEFT JOIN LATERAL (SELECT p.usd, p.amount FROM dex2_usd_prices p WHERE p.chain_id = ?0 AND p.denom = i.denom AND p.height < g.height
				ORDER BY p.height DESC, p.tx_index DESC, p.event_index DESC LIMIT 1) pin ON true
			LEFT JOIN LATERAL (SELECT p.usd, p.amount FROM dex2_usd_prices p WHERE p.chain_id = ?0 AND p.denom = g.maker_denom AND p.height < g.height
				ORDER BY p.height DESC, p.tx_index DESC, p.event_index DESC LIMIT 1) pout ON true
			WHERE g.chain_id = ?0 AND g.height > ?1 AND g.height <= ?2 AND g.usd IS NULL) v
		WHERE f.chain_id = ?0 AND f.height = v.height AND f.tx_index = v.tx_index AND f.event_index = v.event_index
			AND v.usd IS NOT NULL`
)
