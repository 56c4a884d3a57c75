package perp

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/problem"
)

// OpBuyStake is the buy-and-stake programme's endpoint.
const OpBuyStake = "GET /perp/tokenomics/buystake_address_metrics"

// buyStake is, per UTC hour of the range up to the last aggregated block
// (newest first), the programme address's NATIVE bought in the hour and,
// at the hour's end, its delegated NATIVE, its NATIVE and USDC balances and
// the NATIVE and USDC staking rewards it has withdrawn
// (perp_buystake_hourly), with the hour's last oracle price of NATIVE in
// USDC (the raw price × 10^exponent of its oracle market).
// Unwithdrawn rewards are null: the events do not give them (the
// distribution module's state does).
func (s *Service) buyStake(ctx context.Context, req *api.Request) (*api.Response, error) {
	if s.buyStakeAddress == "" {
		return nil, fmt.Errorf("no perp.buystake_address is configured: %w", problem.ErrNotIndexed)
	}
	// Hourly rows by design, with no resolution parameter: the 92-day
	// limit of a client-chosen hourly resolution does not apply.
	fresh, bs, err := s.windowOf(ctx, req, api.Hour, false)
	if err != nil {
		return nil, err
	}
	type row struct {
		Labels        string       `json:"labels"`
		Price         *json.Number `json:"priceNATIVE"`
		Acquired      *json.Number `json:"nativeAcquired"`
		Staked        *json.Number `json:"stakingBalance"`
		LiquidNative  *json.Number `json:"liquidBalanceNATIVE"`
		LiquidUSDC    *json.Number `json:"liquidBalanceUSDC"`
		UnclaimedNat  *json.Number `json:"stakingRewardsUnclaimedNATIVE"`
		UnclaimedUSDC *json.Number `json:"stakingRewardsUnclaimedUSDC"`
		ClaimedNative *json.Number `json:"stakingRewardsClaimedNATIVE"`
		ClaimedUSDC   *json.Number `json:"stakingRewardsClaimedUSDC"`
	}
	out := make([]row, 0, len(bs))
	if len(bs) == 0 {
		return &api.Response{Body: out, Freshness: fresh}, nil
	}
	var rows []struct {
		Hour     time.Time      `bun:"hour"`
		Price    sql.NullString `bun:"price"`
		Acquired string         `bun:"acquired"`
		Staked   string         `bun:"staked"`
		Native   string         `bun:"native"`
		USDC     string         `bun:"usdc"`
		CNative  string         `bun:"claimed_native"`
		CUSDC    string         `bun:"claimed_usdc"`
	}
	if err := s.db.NewRaw(`WITH n AS (SELECT decimals, market_id FROM dydx_native_token WHERE chain_id = ?0 ORDER BY height DESC LIMIT 1),
		m AS (SELECT d.exponent FROM dydx_markets d, n WHERE d.chain_id = ?0 AND d.market_id = n.market_id ORDER BY d.height DESC LIMIT 1),
		c AS (SELECT hour, native_in,
			sum(staked_delta) OVER w AS staked, sum(native_delta) OVER w AS native, sum(usdc_delta) OVER w AS usdc,
			sum(claimed_native) OVER w AS claimed_native, sum(claimed_usdc) OVER w AS claimed_usdc
			FROM perp_buystake_hourly WHERE chain_id = ?0 AND address = ?1 WINDOW w AS (ORDER BY hour))
		SELECT h.hour,
			((SELECT p.price FROM perp_price_hourly p WHERE p.chain_id = ?0 AND p.market_id = n.market_id AND p.hour <= h.hour
				ORDER BY p.hour DESC LIMIT 1) * ('1e' || (SELECT exponent FROM m))::numeric)::text AS price,
			(coalesce((SELECT native_in FROM c WHERE c.hour = h.hour), 0) * ('1e' || -n.decimals)::numeric)::text AS acquired,
			(coalesce(l.staked, 0) * ('1e' || -n.decimals)::numeric)::text AS staked,
			(coalesce(l.native, 0) * ('1e' || -n.decimals)::numeric)::text AS native,
			(coalesce(l.usdc, 0) * 0.000001)::text AS usdc,
			(coalesce(l.claimed_native, 0) * ('1e' || -n.decimals)::numeric)::text AS claimed_native,
			(coalesce(l.claimed_usdc, 0) * 0.000001)::text AS claimed_usdc
		FROM unnest(?2::timestamptz[]) AS h(hour) CROSS JOIN n
		LEFT JOIN LATERAL (SELECT * FROM c WHERE c.hour <= h.hour ORDER BY c.hour DESC LIMIT 1) l ON true
		ORDER BY h.hour DESC`, s.chainID, s.buyStakeAddress, pgdialect.Array(bs)).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("perp_buystake_hourly: %w", err)
	}
	num := func(v string) *json.Number { n := api.Number(v); return &n }
	for _, r := range rows {
		o := row{Labels: r.Hour.UTC().Format(time.DateTime), Acquired: num(r.Acquired), Staked: num(r.Staked),
			LiquidNative: num(r.Native), LiquidUSDC: num(r.USDC), ClaimedNative: num(r.CNative), ClaimedUSDC: num(r.CUSDC)}
		if r.Price.Valid {
			o.Price = num(r.Price.String)
		}
		out = append(out, o)
	}
	if len(out) == 0 { // no genesis catalog: NATIVE is unknown
		return nil, fmt.Errorf("chain %s: the native token is not in the catalog: %w", s.chainID, problem.ErrNotIndexed)
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}
