package staking

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	report "github.com/chainlens/chainlens/report/staking"

	dexreport "github.com/chainlens/chainlens/report/dex"

	"cosmossdk.io/math"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/problem"
)

// revenueShareByConsumer is, per UTC day of the range (up to the last
// aggregated block; 0 on a day without rewards), the USD value of the
// interchain-security rewards the Hub received from each requested consumer
// chain (ics_rewards), each receipt valued at the dex chain's hourly close
// of its token for the hour it arrived in (or the last hour before with a
// price; ics_reward_denoms names the dex chain's denom of the token). A
// consumer's day holding a receipt without a price is null, and so is the
// day's total (the sum over every consumer chain).
func (s *Service) revenueShareByConsumer(ctx context.Context, req *api.Request) (*api.Response, error) {
	rng, err := req.Params.DateRange(req.Now, false)
	if err != nil {
		return nil, err
	}
	if !s.ok {
		return nil, api.NoChainOfKind("cosmoshub")
	}
	if s.consumers == 0 {
		return nil, problem.NotConfigured("staking.consumer_channels", "no consumer chain channel is configured")
	}
	h, err := api.JobHeight(ctx, api.Reader(ctx, s.db), s.chainID, report.JobICSRewards)
	if err != nil {
		return nil, err
	}
	fresh := api.Freshness{Chains: []api.ChainHeight{h}}
	if s.dex.ChainID != "" {
		// The values also read the dex chain's prices.
		d, err := api.JobHeight(ctx, api.Reader(ctx, s.db), s.dex.ChainID, dexreport.JobPrices)
		switch {
		case err == nil:
			fresh.Chains = append(fresh.Chains, d)
		case !errors.Is(err, problem.ErrNotIndexed):
			return nil, err
		}
	}
	cols := req.Params.Strings("consumers")
	if len(cols) == 0 {
		cols = []string{"total"}
	}
	var known []string
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT DISTINCT consumer_chain_id FROM ics_rewards WHERE chain_id = ? ORDER BY consumer_chain_id`,
		s.chainID).Scan(ctx, &known); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("consumer chains: %w", err)
	}
	for _, c := range cols {
		if c != "total" && !slices.Contains(known, c) {
			return nil, problem.BadParam("consumers", fmt.Sprintf("no rewards were received from consumer chain %q; known: %s",
				c, strings.Join(append(known, "total"), ", ")))
		}
	}
	days, err := api.Buckets(rng.Start, rng.End, h, api.Day)
	if err != nil {
		return nil, err
	}
	body := []api.SeriesRow{}
	if len(days) == 0 {
		return &api.Response{Body: body, Freshness: fresh}, nil
	}
	var rows []struct {
		Day      time.Time      `bun:"day"`
		Consumer string         `bun:"consumer_chain_id"`
		Amount   string         `bun:"amount"`
		DexDenom sql.NullString `bun:"dex_denom"`
		Price    sql.NullString `bun:"price"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT date_trunc('day', r.time, 'UTC') AS day, r.consumer_chain_id, r.amount::text AS amount, d.dex_denom,
			(SELECT p.price_usd::text FROM osmosis_asset_prices p
				WHERE p.chain_id = d.dex_chain_id AND p.denom = d.dex_denom AND p.hour <= r.time ORDER BY p.hour DESC LIMIT 1) AS price
		FROM ics_rewards r
		LEFT JOIN ics_reward_denoms d ON d.chain_id = r.chain_id AND d.base_denom = r.base_denom AND d.dex_chain_id = ?
		WHERE r.chain_id = ? AND r.time >= ? AND r.time < ?
		ORDER BY r.time, r.height, r.tx_index, r.event_index`, s.dex.ChainID, s.chainID, days[0], api.NextBucket(days[len(days)-1], api.Day)).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("ics rewards: %w", err)
	}
	type sum struct {
		usd     math.LegacyDec
		unknown bool
	}
	i := 0
	for _, day := range days {
		per := map[string]*sum{}
		total := &sum{usd: math.LegacyZeroDec()}
		for ; i < len(rows) && rows[i].Day.Equal(day); i++ {
			r := rows[i]
			c := per[r.Consumer]
			if c == nil {
				c = &sum{usd: math.LegacyZeroDec()}
				per[r.Consumer] = c
			}
			amount, ok := math.NewIntFromString(r.Amount)
			if !ok {
				return nil, fmt.Errorf("ics reward amount %q", r.Amount)
			}
			if !r.DexDenom.Valid || !r.Price.Valid {
				c.unknown, total.unknown = true, true
				continue
			}
			price, err := math.LegacyNewDecFromStr(r.Price.String)
			if err != nil {
				return nil, fmt.Errorf("price of %s: %w", r.DexDenom.String, err)
			}
			v := s.dex.USDValue(r.DexDenom.String, amount, price)
			c.usd, total.usd = c.usd.Add(v), total.usd.Add(v)
		}
		vals := make([]json.Number, len(cols))
		for k, col := range cols {
			c := per[col]
			if col == "total" {
				c = total
			}
			switch {
			case c == nil:
				vals[k] = "0"
			case c.unknown:
				vals[k] = "null"
			default:
				vals[k] = api.Number(c.usd.String())
			}
		}
		body = append(body, api.SeriesRow{Labels: day.UTC().Format(time.DateTime), Columns: cols, Values: vals})
	}
	return &api.Response{Body: body, Freshness: fresh}, nil
}
