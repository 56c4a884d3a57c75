package perp

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"time"

	report "github.com/chainlens/chainlens/report/perp"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/problem"
)

// nativeDecimals are the decimals of the native token (genesis catalog);
// 503 without one.
func (s *Service) nativeDecimals(ctx context.Context) (int64, error) {
	var d int64
	err := api.Reader(ctx, s.db).NewRaw("SELECT decimals FROM dydx_native_token WHERE chain_id = ? ORDER BY height DESC LIMIT 1", s.chainID).Scan(ctx, &d)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("chain %s: the native token is not known (no genesis imported): %w", s.chainID, problem.ErrNotIndexed)
	}
	if err != nil {
		return 0, fmt.Errorf("native token: %w", err)
	}
	return d, nil
}

// validatorListings lists the bonded validators holding tokens at the last
// aggregated block, in NATIVE, most first (ties: operator address), from
// perp_validator_tokens_daily (genesis validators and staking events;
// slashes are not tracked) and perp_validator_status (a validator whose
// latest snapshot status is not bonded is left out).
func (s *Service) validatorListings(ctx context.Context, _ *api.Request) (*api.Response, error) {
	fresh, err := s.begin(ctx, report.ValidatorStatus, report.ValidatorTokensDaily)
	if err != nil {
		return nil, err
	}
	decimals, err := s.nativeDecimals(ctx)
	if err != nil {
		return nil, err
	}
	var rows []struct {
		Validator string `bun:"validator"`
		Tokens    string `bun:"tokens"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT validator, (tokens * ('1e' || -?1::int)::numeric)::text AS tokens FROM (
			SELECT DISTINCT ON (validator) validator, tokens FROM perp_validator_tokens_daily WHERE chain_id = ?0
			ORDER BY validator, day DESC) v
		WHERE tokens > 0 AND coalesce((SELECT bonded FROM perp_validator_status st WHERE st.chain_id = ?0 AND st.validator = v.validator
			ORDER BY st.height DESC LIMIT 1), true)
		ORDER BY v.tokens DESC, validator`, s.chainID, decimals).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("validators: %w", err)
	}
	type listing struct {
		Validator string      `json:"validator"`
		Tokens    json.Number `json:"token_amount"`
	}
	out := make([]listing, len(rows))
	for i, r := range rows {
		out[i] = listing{Validator: r.Validator, Tokens: api.Number(r.Tokens)}
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}

// shareByValidator is, per day in the range up to the day of the last
// aggregated block, the NATIVE each requested validator holds at the day's
// end and (total) all validators together; a validator never seen is 400.
func (s *Service) shareByValidator(ctx context.Context, req *api.Request) (*api.Response, error) {
	cols := req.Params.Strings("validators")
	var known []string
	if err := api.Reader(ctx, s.db).NewRaw("SELECT DISTINCT validator FROM perp_validator_tokens_daily WHERE chain_id = ?", s.chainID).Scan(ctx, &known); err != nil {
		return nil, fmt.Errorf("validators: %w", err)
	}
	if len(known) == 0 {
		// Nothing to check the validators against yet.
		if _, err := s.begin(ctx, report.ValidatorStatus, report.ValidatorTokensDaily); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("no validator is aggregated yet: %w", problem.ErrNotIndexed)
	}
	for _, c := range cols {
		if c != "total" && !slices.Contains(known, c) {
			return nil, problem.BadParam("validators", "must be operator addresses of /aux/validator_listings, or total: "+c+" is not one")
		}
	}
	fresh, bs, err := s.window(ctx, req, "day", report.ValidatorStatus, report.ValidatorTokensDaily)
	if err != nil {
		return nil, err
	}
	decimals, err := s.nativeDecimals(ctx)
	if err != nil {
		return nil, err
	}
	out := []api.SeriesRow{}
	if len(bs) == 0 {
		return &api.Response{Body: out, Freshness: fresh}, nil
	}
	var rows []struct {
		Validator string    `bun:"validator"`
		Day       time.Time `bun:"day"`
		Tokens    string    `bun:"tokens"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT validator, day, tokens::text AS tokens FROM perp_validator_tokens_daily
		WHERE chain_id = ? AND day < ? ORDER BY day`, s.chainID, api.NextBucket(bs[len(bs)-1], "day")).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("validator tokens: %w", err)
	}
	status, err := s.loadBondStatus(ctx, api.NextBucket(bs[len(bs)-1], "day"))
	if err != nil {
		return nil, err
	}
	unit := pow10(-decimals)
	tokens := map[string]*big.Rat{}
	i := 0
	for _, b := range bs {
		status.until(api.NextBucket(b, "day"))
		for ; i < len(rows) && rows[i].Day.Before(api.NextBucket(b, "day")); i++ {
			v, err := rat(rows[i].Tokens)
			if err != nil {
				return nil, err
			}
			tokens[rows[i].Validator] = v
		}
		total := new(big.Rat)
		for val, v := range tokens {
			if status.bonded(val) {
				total.Add(total, v)
			}
		}
		row := api.SeriesRow{Labels: b.Format(time.DateTime), Columns: cols, Values: make([]json.Number, len(cols))}
		for k, c := range cols {
			v := total
			if c != "total" {
				if v = tokens[c]; v == nil || !status.bonded(c) {
					v = new(big.Rat)
				}
			}
			row.Values[k] = api.Number(new(big.Rat).Mul(v, unit).FloatString(int(decimals)))
		}
		out = append(out, row)
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}

// bondStatus follows the validators' bond status (perp_validator_status,
// from the state snapshots) through time: a validator whose latest status
// is not bonded holds no bonded stake; one never seen in a snapshot counts
// as bonded (a chain without snapshots counts every validator).
type bondStatus struct {
	changes []struct {
		Validator string    `bun:"validator"`
		Time      time.Time `bun:"time"`
		Bonded    bool      `bun:"bonded"`
	}
	next     int
	unbonded map[string]bool
}

// loadBondStatus reads the status changes before end.
func (s *Service) loadBondStatus(ctx context.Context, end time.Time) (*bondStatus, error) {
	b := &bondStatus{unbonded: map[string]bool{}}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT validator, time, bonded FROM perp_validator_status WHERE chain_id = ? AND time < ? ORDER BY time, height`,
		s.chainID, end).Scan(ctx, &b.changes); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("validator status: %w", err)
	}
	return b, nil
}

// until applies the statuses taken before t (call with increasing t).
func (b *bondStatus) until(t time.Time) {
	for ; b.next < len(b.changes) && b.changes[b.next].Time.Before(t); b.next++ {
		c := b.changes[b.next]
		if c.Bonded {
			delete(b.unbonded, c.Validator)
		} else {
			b.unbonded[c.Validator] = true
		}
	}
}

// bonded reports whether validator is bonded at the last time given to until.
func (b *bondStatus) bonded(validator string) bool { return !b.unbonded[validator] }
