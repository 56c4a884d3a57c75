package dex

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"cosmossdk.io/math"

	"github.com/chainlens/chainlens/api"
)

// StakingAPR is one day of the staking APR.
type StakingAPR struct {
	Labels string      `json:"labels"`
	Symbol string      `json:"symbol"`
	APR    json.Number `json:"apr"`
}

// secondsPerYear annualises the rewards (365 days).
const secondsPerYear = 365 * 24 * 60 * 60

// trailingDays maps the trailing_period values to days.
var trailingDays = map[string]int{"1d": 1, "7d": 7, "30d": 30}

// stakingAPR is, for every day of the range that the dex_staking job has
// with bonded tokens, newest first: the rewards distributed in the staking
// denom over the trailing period ending that day, annualised over the
// seconds the indexed blocks cover, divided by the bonded tokens, in
// percent. Days are weighted by their covered seconds:
// apr = Σ rewards × secondsPerYear × 100 / Σ (bonded × seconds).
func (s *Service) stakingAPR(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	r, err := req.Params.DateRange(req.Now, false)
	if err != nil {
		return nil, err
	}
	n := trailingDays[req.Params.String("trailing_period")]
	if n == 0 {
		n = 1
	}
	first := r.Start.UTC().Truncate(day)
	if first.Before(r.Start) {
		first = first.Add(day)
	}
	var rows []struct {
		Day     time.Time `bun:"day"`
		Rewards string    `bun:"rewards"`
		Seconds string    `bun:"seconds"`
		Bonded  string    `bun:"bonded"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT day, rewards::text AS rewards, seconds::text AS seconds, bonded::text AS bonded
		FROM osmosis_staking_daily WHERE chain_id = ? AND bonded IS NOT NULL AND day >= ? AND day <= ? ORDER BY day`,
		s.market.ChainID, first.Add(-time.Duration(n-1)*day), r.End).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("staking days: %w", err)
	}
	type dayParts struct {
		day             time.Time
		rewards, weight math.LegacyDec // rewards; bonded × seconds
	}
	parts := make([]dayParts, 0, len(rows))
	for _, row := range rows {
		rw, err1 := math.LegacyNewDecFromStr(row.Rewards)
		sec, err2 := math.LegacyNewDecFromStr(row.Seconds)
		bonded, err3 := math.LegacyNewDecFromStr(row.Bonded)
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, fmt.Errorf("staking day %s: rewards %q, seconds %q, bonded %q", row.Day, row.Rewards, row.Seconds, row.Bonded)
		}
		parts = append(parts, dayParts{day: row.Day.UTC(), rewards: rw, weight: bonded.Mul(sec)})
	}
	symbol := s.market.Assets[s.market.Hub].Symbol
	out := []StakingAPR{}
	for i := len(parts) - 1; i >= 0; i-- {
		d := parts[i].day
		if d.Before(first) {
			break
		}
		rewards, weight := math.LegacyZeroDec(), math.LegacyZeroDec()
		for k := i; k >= 0 && !parts[k].day.Before(d.Add(-time.Duration(n-1)*day)); k-- {
			rewards, weight = rewards.Add(parts[k].rewards), weight.Add(parts[k].weight)
		}
		if !weight.IsPositive() {
			continue
		}
		apr := rewards.MulInt64(secondsPerYear * 100).Quo(weight)
		out = append(out, StakingAPR{Labels: d.Format(time.DateTime), Symbol: symbol, APR: api.Number(apr.String())})
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}
