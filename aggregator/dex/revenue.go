package dex

import (
	"context"
	"fmt"
	"time"

	"github.com/chainlens/chainlens/aggregator"

	report "github.com/chainlens/chainlens/report/dex"
	"github.com/chainlens/chainlens/store"

	"cosmossdk.io/math"
	"github.com/cosmos/cosmos-sdk/types/bech32"
	authtypes "github.com/cosmos/cosmos-sdk/x/auth/types"
	"github.com/uptrace/bun"
)

// Revenue is the dex_revenue job: osmosis_revenue_daily, the chain's USD
// revenue per UTC day by source — tx_fees (the fees of every tx, from the
// txs table) and taker_fees (swap taker fees: bank transfers into the
// taker_fee_collector module account, since the fee is netted out of a
// hop's tokens_in before the pool sees it) and protorev (the profit of
// each protorev_backrun arbitrage, in its arb_denom, which the module
// keeps). Amounts are valued at their denom's hourly close of the hour
// they were paid (the latest close before, when that hour has none);
// amounts in denoms without a price are left out.
//
// It follows the dex_prices job's watermark and recomputes whole days from
// the first day with a new payment, so it is idempotent and exact.
type Revenue struct{ Market report.Market }

// Name is the job name.
func (Revenue) Name() string { return report.JobRevenue }

// RawInputs: protorev's back-runs.
func (j Revenue) RawInputs() aggregator.RawInputs {
	return aggregator.RawInputs{ChainID: j.Market.ChainID, Events: []string{"protorev_backrun"}}
}

// Upstream: the job values its rows with the prices job's prices, so it runs after
// it and never past it.
func (Revenue) Upstream() []string { return []string{report.JobPrices} }

// Version is the version of the job's rows (see aggregator.Job).
func (Revenue) Version() string { return "1" }

// Tables are the tables the job writes: its own, the dex chain's rows only.
func (j Revenue) Tables() aggregator.Tables {
	return aggregator.Tables{Owned: []string{"osmosis_revenue_daily"}, ChainID: j.Market.ChainID}
}

// TakerFeeCollector is the module account that receives Osmosis taker fees.
func (j Revenue) TakerFeeCollector() (string, error) {
	return bech32.ConvertAndEncode(j.Market.Prefix, authtypes.NewModuleAddress("taker_fee_collector"))
}

// payments are every revenue payment with its source, denom, amount and time.
const payments = `
	SELECT 'tx_fees' AS source, f->>'denom' AS denom, (f->>'amount')::numeric AS amount, b.time, t.height
		FROM txs t CROSS JOIN LATERAL jsonb_array_elements(t.fee) f
		JOIN blocks b ON b.chain_id = t.chain_id AND b.height = t.height
		WHERE t.chain_id = ?0 AND NOT t.undecodable
	UNION ALL SELECT 'taker_fees', tr.denom, tr.amount, b.time, tr.height FROM transfers tr
		JOIN blocks b ON b.chain_id = tr.chain_id AND b.height = tr.height
		WHERE tr.chain_id = ?0 AND tr.kind = 'transfer' AND tr.recipient = ?3
	UNION ALL SELECT 'protorev', pr.arb_denom, pr.profit, b.time, e.height FROM events e
		CROSS JOIN LATERAL (SELECT max(a->>'value') FILTER (WHERE a->>'key' = 'arb_denom') AS arb_denom,
			max(a->>'value') FILTER (WHERE a->>'key' = 'profit')::numeric AS profit
			FROM jsonb_array_elements(e.attributes) a) pr
		JOIN blocks b ON b.chain_id = e.chain_id AND b.height = e.height
		WHERE e.chain_id = ?0 AND e.type = 'protorev_backrun' AND pr.profit > 0`

// Run advances the revenue to the prices job's watermark.
func (j Revenue) Run(ctx context.Context, tx bun.Tx, wm, bound int64) (int64, int64, error) {
	tip := bound
	if tip <= wm {
		return wm, 0, nil
	}
	collector, err := j.TakerFeeCollector()
	if err != nil {
		return 0, 0, fmt.Errorf("taker fee collector address: %w", err)
	}
	chain := j.Market.ChainID
	var first *time.Time
	if err := tx.NewRaw("SELECT min(time) FROM ("+payments+") p WHERE height > ?1 AND height <= ?2", chain, wm, tip, collector).
		Scan(ctx, &first); err != nil {
		return 0, 0, fmt.Errorf("first new payment: %w", err)
	}
	if first == nil {
		return tip, 0, nil
	}
	d0 := first.UTC().Truncate(24 * time.Hour)
	from, err := store.HeightBefore(ctx, tx, chain, d0)
	if err != nil {
		return 0, 0, err
	}
	var paid []struct {
		Day    time.Time `bun:"day"`
		Source string    `bun:"source"`
		Denom  string    `bun:"denom"`
		Amount string    `bun:"amount"`
		Price  string    `bun:"price"`
	}
	if err := tx.NewRaw(`SELECT date_trunc('day', p.time) AS day, p.source, p.denom, p.amount::text AS amount,
			coalesce((SELECT price_usd::text FROM osmosis_asset_prices a WHERE a.chain_id = ?0 AND a.denom = p.denom
				AND a.hour <= date_trunc('hour', p.time) ORDER BY a.hour DESC LIMIT 1), '') AS price
		FROM (`+payments+`) p WHERE p.height > ?1 AND p.height <= ?2 ORDER BY p.height`, chain, from, tip, collector).Scan(ctx, &paid); err != nil {
		return 0, 0, fmt.Errorf("payments from %s: %w", d0, err)
	}
	type daySource struct {
		day    time.Time
		source string
	}
	sums := map[daySource]math.LegacyDec{}
	var order []daySource
	for _, p := range paid {
		k := daySource{p.Day.UTC(), p.Source}
		if _, ok := sums[k]; !ok {
			sums[k] = math.LegacyZeroDec()
			order = append(order, k)
		}
		if p.Price == "" {
			continue
		}
		amt, ok := math.NewIntFromString(p.Amount)
		price, err := math.LegacyNewDecFromStr(p.Price)
		if !ok || err != nil {
			return 0, 0, fmt.Errorf("payment %s %s at %q", p.Amount, p.Denom, p.Price)
		}
		sums[k] = sums[k].Add(j.Market.USDValue(p.Denom, amt, price))
	}
	if _, err := tx.NewRaw("DELETE FROM osmosis_revenue_daily WHERE chain_id = ? AND day >= ?", chain, d0).Exec(ctx); err != nil {
		return 0, 0, fmt.Errorf("delete revenue: %w", err)
	}
	rows := make([]revenueRow, 0, len(order))
	for _, k := range order {
		rows = append(rows, revenueRow{ChainID: chain, Day: k.day, Source: k.source, AmountUSD: sums[k].String()})
	}
	if err := insertBatches(ctx, tx, rows); err != nil {
		return 0, 0, fmt.Errorf("insert revenue: %w", err)
	}
	return tip, int64(len(rows)), nil
}

// revenueRow is a row of osmosis_revenue_daily.
type revenueRow struct {
	bun.BaseModel `bun:"table:osmosis_revenue_daily"`
	ChainID       string    `bun:"chain_id"`
	Day           time.Time `bun:"day"`
	Source        string    `bun:"source"`
	AmountUSD     string    `bun:"amount_usd"`
}
