package perp

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	report "github.com/chainlens/chainlens/report/perp"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/problem"
)

// Liquidation is one row of /liquidation/list.
type Liquidation struct {
	Labels              string      `json:"labels"`
	TxHash              string      `json:"tx_hash"`
	Account             string      `json:"account"`
	Market              string      `json:"market"`
	Position            string      `json:"position"`
	LiquidatedValue     json.Number `json:"liquidated_value"`
	LiquidatedValueUSDC json.Number `json:"liquidated_value_usdc"`
	InsuranceDelta      json.Number `json:"perp_insurance_delta"`
}

// liquidationList lists the liquidation fills in the range, newest first
// (perp_liquidations): the liquidated subaccount (<address>/<number>), the
// market, the liquidated position, its size in base units and USDC, and
// the insurance fund's delta.
func (s *Service) liquidationList(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, err := s.begin(ctx, report.Liquidations)
	if err != nil {
		return nil, err
	}
	r, err := req.Params.DateRange(req.Now, false)
	if err != nil {
		return nil, err
	}
	if tip := fresh.Chains[0].Time; r.Start.After(tip) {
		return nil, fmt.Errorf("the reports reach %s, before start_date: %w", tip.Format(time.DateTime), problem.ErrNotIndexed)
	}
	var rows []struct {
		Time      time.Time `bun:"time"`
		TxHash    *string   `bun:"tx_hash"`
		Address   string    `bun:"address"`
		Number    int64     `bun:"subaccount_number"`
		Perp      int64     `bun:"perpetual_id"`
		Position  string    `bun:"position"`
		Size      *string   `bun:"size"`
		Notional  string    `bun:"notional"`
		Insurance string    `bun:"insurance"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT time, tx_hash, address, subaccount_number, perpetual_id, position, size::text AS size,
			notional_usdc::text AS notional, insurance_usdc::text AS insurance
		FROM perp_liquidations WHERE chain_id = ? AND time >= ? AND time <= ?
		ORDER BY time DESC, height DESC, tx_index DESC, event_index DESC`, s.chainID, r.Start, r.End).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("liquidations: %w", err)
	}
	markets, err := s.markets(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Liquidation, len(rows))
	for i, l := range rows {
		if l.Size == nil {
			return nil, fmt.Errorf("perpetual %d is not in the market catalog (listed after genesis): its sizes are unknown: %w",
				l.Perp, problem.ErrNotIndexed)
		}
		hash := ""
		if l.TxHash != nil {
			hash = *l.TxHash
		}
		out[i] = Liquidation{Labels: l.Time.UTC().Format(time.DateTime), TxHash: hash, Account: fmt.Sprintf("%s/%d", l.Address, l.Number),
			Market: ticker(markets, l.Perp), Position: l.Position, LiquidatedValue: api.Number(*l.Size),
			LiquidatedValueUSDC: api.Number(l.Notional), InsuranceDelta: api.Number(l.Insurance)}
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}

// LiquidationFlow is one bucket of /liquidation/flow_by_market.
type LiquidationFlow struct {
	Labels       string      `json:"labels"`
	TotalLong    json.Number `json:"total_long_liquidation_volume"`
	TopLong      json.Number `json:"top_long_liquidation"`
	TopLongTxID  *string     `json:"top_long_liquidation_tx_id"`
	TotalShort   json.Number `json:"total_short_liquidation_volume"`
	TopShort     json.Number `json:"top_short_liquidation"`
	TopShortTxID *string     `json:"top_short_liquidation_tx_id"`
}

// liquidationFlow is, per bucket (granularity, default hour), the USDC
// notional of liquidated longs and shorts of one market or all, the
// largest single liquidation of each side and its tx hash (the earliest of
// equal ones; null when none).
func (s *Service) liquidationFlow(ctx context.Context, req *api.Request) (*api.Response, error) {
	id, all, err := s.market(ctx, "market", req.Params.String("market"))
	if err != nil {
		return nil, err
	}
	res := req.Params.String("granularity")
	fresh, bs, err := s.window(ctx, req, res, report.Liquidations)
	if err != nil {
		return nil, err
	}
	out := make([]LiquidationFlow, len(bs))
	for i, b := range bs {
		out[i] = LiquidationFlow{Labels: b.Format(time.DateTime), TotalLong: "0", TopLong: "0", TotalShort: "0", TopShort: "0"}
	}
	if len(bs) == 0 {
		return &api.Response{Body: out, Freshness: fresh}, nil
	}
	var rows []struct {
		Bucket   time.Time `bun:"bucket"`
		Position string    `bun:"position"`
		Total    string    `bun:"total"`
		Top      string    `bun:"top"`
		TopTx    *string   `bun:"top_tx"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT date_trunc(?0, time, 'UTC') AS bucket, position, sum(notional_usdc)::text AS total,
			max(notional_usdc)::text AS top,
			(array_agg(tx_hash ORDER BY notional_usdc DESC, height, tx_index, event_index))[1] AS top_tx
		FROM perp_liquidations WHERE chain_id = ?1 AND time >= ?2 AND time < ?3 AND (?4 OR perpetual_id = ?5)
		GROUP BY 1, 2`, res, s.chainID, bs[0], api.NextBucket(bs[len(bs)-1], res), all, id).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("liquidation flow: %w", err)
	}
	at := map[time.Time]int{}
	for i, b := range bs {
		at[b] = i
	}
	for _, l := range rows {
		i, ok := at[l.Bucket.UTC()]
		if !ok {
			continue
		}
		if l.Position == "long" {
			out[i].TotalLong, out[i].TopLong, out[i].TopLongTxID = api.Number(l.Total), api.Number(l.Top), l.TopTx
		} else {
			out[i].TotalShort, out[i].TopShort, out[i].TopShortTxID = api.Number(l.Total), api.Number(l.Top), l.TopTx
		}
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}
