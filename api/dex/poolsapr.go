package dex

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/problem"
	"github.com/chainlens/chainlens/chains/osmosis/clmath"
	report "github.com/chainlens/chainlens/report/dex"
)

// aprWindow is the trailing period whose earnings the pools APRs annualise.
const aprWindow = 7 * 24 * time.Hour

// How the pools APRs are computed (all from report tables):
//
//   - The window is the 7 days before the last indexed block, or the part of
//     them the indexed blocks cover. Earnings are the dex_pool_rewards
//     hours that overlap it: swap fees (volume × swap fee), native and boost
//     incentives (incentives-module payments into a concentrated-liquidity
//     pool's incentives account, by denom).
//   - Pool APR of a source (/pools_apr, and both ends of the range for
//     classic pools) = earnings ÷ the pool's latest USD liquidity
//     (osmosis_pool_liquidity_daily) × year ÷ window × 100.
//   - A concentrated-liquidity position [lower, upper) earns, each hour, the
//     hour's earnings × its liquidity ÷ the pool's in-range liquidity when
//     the pool's tick at the hour's end (osmosis_cl_state_hourly) is in its
//     range; its value per unit of liquidity is its token amounts at the
//     current sqrt price, at the latest hourly closes. APR = earnings ÷ value
//     × year ÷ window × 100. The range of a concentrated pool goes from the
//     full-range position (lower) to the narrowest position around the
//     current tick, one tick spacing wide (upper).
//   - Incentives paid by lock gauges to the owners of locked classic pool
//     shares are tied to no pool by any event: native and boost of classic
//     pools are null (and total_apr with them) when the incentives module
//     paid any lock owner in the window, and 0 otherwise (nothing was paid).
//   - superfluid is 0 for pools whose shares are not a superfluid asset (the
//     chain pays them no superfluid rewards); for a classic pool whose shares
//     are, the staking rewards of its superfluid-staked shares over their
//     USD value (see superfluidAPR), the same at both ends of the range.
//     It is null (and total_apr with it) when it cannot be computed: no
//     share staked yet, or a concentrated-liquidity superfluid asset.

// aprSources is what a pool earned over the window, in USD.
type aprSources struct {
	fees, native, boost *big.Rat
}

// superfluidShares is what the superfluid APR of a classic pool needs.
type superfluidShares struct {
	staked, total *big.Rat // shares staked through superfluid; all shares
}

// poolAPRRow is a row of /pools_apr.
type poolAPRRow struct {
	PoolID     string       `json:"pool_id"`
	SwapFees   json.Number  `json:"swap_fees"`
	Superfluid *json.Number `json:"superfluid"`
	Native     *json.Number `json:"native"`
	Boost      *json.Number `json:"boost"`
	TotalAPR   *json.Number `json:"total_apr"`
}

// aprRange is the lowest and highest APR of one source.
type aprRange struct {
	Lower *json.Number `json:"lower"`
	Upper *json.Number `json:"upper"`
}

// poolAPRRangeRow is a row of the pools APR range endpoints.
type poolAPRRangeRow struct {
	PoolID     string   `json:"pool_id"`
	SwapFees   aprRange `json:"swap_fees"`
	Superfluid aprRange `json:"superfluid"`
	Native     aprRange `json:"native"`
	Boost      aprRange `json:"boost"`
	TotalAPR   aprRange `json:"total_apr"`
}

// aprPool is a pool with what the APRs need.
type aprPool struct {
	ID         int64
	Type       string
	Liquidity  *big.Rat // USD, nil when unknown
	Superfluid bool     // its share denom is a superfluid asset
	SF         *superfluidShares
	// Earned is what the pool earned over the window, per source, and
	// SFEarned the rewards of its superfluid-staked shares (summed by
	// Postgres, exactly).
	Earned   aprSources
	SFEarned *big.Rat
}

// aprContext is the window of the pools APRs.
type aprContext struct {
	seconds *big.Rat // of the window
	from    time.Time
	// lockPaid: the incentives module paid lock owners in the window, so
	// the incentives of classic pools are unknown.
	lockPaid bool
}

// window is the APR window ending at the indexed tip.
func (s *Service) window(ctx context.Context, fresh api.Freshness) (aprContext, error) {
	var first, tip time.Time
	// The first block's time is the earliest (block times never decrease):
	// one probe, where min(time) read every block of the chain.
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT (SELECT time FROM blocks WHERE chain_id = ?0 ORDER BY height LIMIT 1),
			(SELECT time FROM blocks WHERE chain_id = ?0 AND height = ?1)`,
		s.market.ChainID, fresh.Chains[0].Height).Scan(ctx, &first, &tip); err != nil {
		return aprContext{}, fmt.Errorf("first and last block: %w", err)
	}
	from := tip.Add(-aprWindow)
	if first.After(from) {
		from = first
	}
	secs := new(big.Rat).SetFrac64(tip.Sub(from).Microseconds(), 1_000_000)
	var paid bool
	if err := api.Reader(ctx, s.db).NewRaw("SELECT EXISTS (SELECT 1 FROM osmosis_lock_rewards_hourly WHERE chain_id = ? AND hour > ? AND payments > 0)",
		s.market.ChainID, from.Add(-time.Hour)).Scan(ctx, &paid); err != nil {
		return aprContext{}, fmt.Errorf("lock rewards: %w", err)
	}
	behind, err := report.PoolRewardsDailyBehind(ctx, api.Reader(ctx, s.db), s.market.ChainID)
	if err != nil {
		return aprContext{}, err
	}
	if behind {
		return aprContext{}, fmt.Errorf("the daily pool rewards of %s are being built (%s): %w", s.market.ChainID, report.JobPoolRewards, problem.ErrNotIndexed)
	}
	return aprContext{seconds: secs, from: from, lockPaid: paid}, nil
}

// aprPools loads the pools (every pool for nil ids, else those of ids) with
// their window earnings.
func (s *Service) aprPools(ctx context.Context, w aprContext, ids []int64) ([]*aprPool, error) {
	// Every pool (ids nil) or those of ids: an index range per id, not a
	// scan of every pool's window for each.
	filter := ""
	if ids != nil {
		if len(ids) == 0 {
			return nil, nil
		}
		filter = " AND p.pool_id = ANY(?1::bigint[])"
	}
	var rows []struct {
		ID         int64  `bun:"pool_id"`
		Type       string `bun:"type"`
		Liquidity  string `bun:"liquidity"`
		Superfluid bool   `bun:"superfluid"`
		Staked     string `bun:"staked"`
		Total      string `bun:"total"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT DISTINCT ON (p.pool_id) p.pool_id, p.type,
			coalesce((SELECT liquidity_usd::text FROM osmosis_pool_liquidity_daily l WHERE l.chain_id = p.chain_id AND l.pool_id = p.pool_id
				ORDER BY day DESC LIMIT 1), '') AS liquidity,
			EXISTS (SELECT 1 FROM osmosis_superfluid_assets a WHERE a.chain_id = p.chain_id
				AND a.denom IN ('gamm/pool/' || p.pool_id, 'cl/pool/' || p.pool_id)) AS superfluid,
			coalesce((SELECT sum(shares)::text FROM osmosis_superfluid_locks l WHERE l.chain_id = p.chain_id
				AND l.denom = 'gamm/pool/' || p.pool_id), '') AS staked,
			coalesce((SELECT total::text FROM osmosis_pool_shares t WHERE t.chain_id = p.chain_id AND t.pool_id = p.pool_id), '') AS total
		FROM osmosis_known_pools p WHERE p.chain_id = ?0`+filter+` ORDER BY p.pool_id, p.height`,
		s.market.ChainID, pgdialect.Array(ids)).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("pools: %w", err)
	}
	pools := make([]*aprPool, 0, len(rows))
	byID := map[int64]*aprPool{}
	for _, r := range rows {
		p := &aprPool{ID: r.ID, Type: r.Type, Superfluid: r.Superfluid}
		if r.Liquidity != "" {
			l, ok := new(big.Rat).SetString(r.Liquidity)
			if !ok {
				return nil, fmt.Errorf("pool %d liquidity %q", r.ID, r.Liquidity)
			}
			p.Liquidity = l
		}
		if r.Staked != "" && r.Total != "" {
			st, ok1 := new(big.Rat).SetString(r.Staked)
			tot, ok2 := new(big.Rat).SetString(r.Total)
			if !ok1 || !ok2 {
				return nil, fmt.Errorf("pool %d superfluid shares %q of %q", r.ID, r.Staked, r.Total)
			}
			p.SF = &superfluidShares{st, tot}
		}
		pools = append(pools, p)
		byID[r.ID] = p
	}
	// The window's sums of every pool (whole days from the daily sums).
	sums, err := report.PoolRewardsFrom(ctx, api.Reader(ctx, s.db), s.market.ChainID, w.from, ids)
	if err != nil {
		return nil, err
	}
	for _, p := range pools {
		p.Earned, p.SFEarned = aprSources{new(big.Rat), new(big.Rat), new(big.Rat)}, new(big.Rat)
	}
	for _, r := range sums {
		p, ok := byID[r.PoolID]
		if !ok {
			continue
		}
		e, sf, err := parseRewards(r.Fees, r.Native, r.Boost, r.Superfluid)
		if err != nil {
			return nil, fmt.Errorf("pool %d: %w", r.PoolID, err)
		}
		p.Earned, p.SFEarned = e, sf
	}
	return pools, nil
}

// parseRewards reads a pool's USD earnings per source (decimal strings):
// swap fees, native and boost incentives, superfluid rewards.
func parseRewards(fees, native, boost, superfluid string) (aprSources, *big.Rat, error) {
	f, ok1 := parseRat(fees)
	n, ok2 := parseRat(native)
	b, ok3 := parseRat(boost)
	sf, ok4 := parseRat(superfluid)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return aprSources{}, nil, fmt.Errorf("rewards %q %q %q %q", fees, native, boost, superfluid)
	}
	return aprSources{f, n, b}, sf, nil
}

// parseRat parses a decimal (a numeric's text). Most of a pool's sources
// earn nothing: a zero is made without SetString's reduction of the
// fraction.
func parseRat(s string) (*big.Rat, bool) {
	zero := s != ""
	for i := 0; i < len(s) && zero; i++ {
		zero = s[i] == '0' || s[i] == '.' || (i == 0 && s[i] == '-')
	}
	if zero && strings.ContainsRune(s, '0') {
		return new(big.Rat), true
	}
	return new(big.Rat).SetString(s)
}

// sum is the pool's window earnings (a copy).
func (p *aprPool) sum() aprSources {
	return aprSources{new(big.Rat).Set(p.Earned.fees), new(big.Rat).Set(p.Earned.native), new(big.Rat).Set(p.Earned.boost)}
}

// annualised is earnings ÷ value × year ÷ window × 100 (percent).
func (w aprContext) annualised(earned, value *big.Rat) *big.Rat {
	if value.Sign() <= 0 || w.seconds.Sign() <= 0 || earned.Sign() == 0 {
		return new(big.Rat)
	}
	r := new(big.Rat).Quo(earned, value)
	r.Mul(r, big.NewRat(secondsPerYear*100, 1))
	return r.Quo(r, w.seconds)
}

// ratNumber renders a rational as a JSON number with 18 decimals at most.
func ratNumber(r *big.Rat) json.Number { return api.Number(r.FloatString(18)) }

func numPtr(n json.Number) *json.Number { return &n }

// poolLevel is the pool's APR per source over its whole liquidity; the
// incentives of a classic pool are unknown (nil) when the incentives module
// paid lock owners in the window.
func (w aprContext) poolLevel(p *aprPool) (fees, native, boost *big.Rat) {
	e := p.sum()
	fees = w.annualised(e.fees, p.Liquidity)
	if p.Type != "concentrated" && w.lockPaid {
		return fees, nil, nil
	}
	return fees, w.annualised(e.native, p.Liquidity), w.annualised(e.boost, p.Liquidity)
}

// superfluidAPR is 0 for a pool whose shares are not a superfluid asset;
// for a classic pool whose shares are, the staking rewards its
// superfluid-staked shares earned over the window (dex_pool_rewards) over
// the USD value of those shares (their part of all shares × the pool's
// liquidity), annualised; unknown (nil) when no share is superfluid-staked
// or for a concentrated-liquidity pool (not computed).
func (w aprContext) superfluidAPR(p *aprPool) *big.Rat {
	if !p.Superfluid {
		return new(big.Rat)
	}
	if p.Type == "concentrated" || p.SF == nil || p.SF.staked.Sign() <= 0 || p.SF.total.Sign() <= 0 ||
		p.Liquidity == nil || p.Liquidity.Sign() <= 0 {
		return nil
	}
	earned := new(big.Rat).Set(p.SFEarned)
	value := new(big.Rat).Mul(p.Liquidity, p.SF.staked)
	value.Quo(value, p.SF.total)
	return w.annualised(earned, value)
}

// total is the sum of the sources, nil when one is unknown.
func total(parts ...*big.Rat) *big.Rat {
	t := new(big.Rat)
	for _, p := range parts {
		if p == nil {
			return nil
		}
		if p.Sign() != 0 { // adding zero would still reduce the sum
			t.Add(t, p)
		}
	}
	return t
}

func optNumber(r *big.Rat) *json.Number {
	if r == nil {
		return nil
	}
	return numPtr(ratNumber(r))
}

// poolIDs is the pool filter of aprPools for a pool parameter (0: every
// pool, nil).
func poolIDs(id int64) []int64 {
	if id == 0 {
		return nil
	}
	return []int64{id}
}

// poolFilter reads the optional pool parameter (0 = all pools).
func poolFilter(req *api.Request) (int64, error) {
	if !req.Params.Has("pool") {
		return 0, nil
	}
	id, err := strconv.ParseInt(strings.TrimSpace(req.Params.String("pool")), 10, 64)
	if err != nil || id <= 0 {
		return 0, problem.BadParam("pool", "must be a pool id (digits)")
	}
	return id, nil
}

// poolsAPR answers /pools_apr: each pool's APR per source over its whole
// liquidity. Pools without a known USD liquidity are left out.
func (s *Service) poolsAPR(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	id, err := poolFilter(req)
	if err != nil {
		return nil, err
	}
	w, err := s.window(ctx, fresh)
	if err != nil {
		return nil, err
	}
	pools, err := s.aprPools(ctx, w, poolIDs(id))
	if err != nil {
		return nil, err
	}
	out := []poolAPRRow{}
	for _, p := range pools {
		if p.Liquidity == nil || p.Liquidity.Sign() <= 0 {
			continue
		}
		fees, native, boost := w.poolLevel(p)
		sf := w.superfluidAPR(p)
		out = append(out, poolAPRRow{PoolID: strconv.FormatInt(p.ID, 10), SwapFees: ratNumber(fees), Superfluid: optNumber(sf),
			Native: optNumber(native), Boost: optNumber(boost), TotalAPR: optNumber(total(fees, native, boost, sf))})
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}

// poolsAPRRange answers both versions of /pools_apr_range.
func (s *Service) poolsAPRRange(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	id, err := poolFilter(req)
	if err != nil {
		return nil, err
	}
	w, err := s.window(ctx, fresh)
	if err != nil {
		return nil, err
	}
	pools, err := s.aprPools(ctx, w, poolIDs(id))
	if err != nil {
		return nil, err
	}
	cls, err := s.clPools(ctx, pools)
	if err != nil {
		return nil, err
	}
	// Each concentrated pool's two ranges: full range (lower) and one tick
	// spacing around the current tick (upper), their earnings read at once.
	var ranges []report.Range
	first := map[int64]int{} // pool → index of its full range in ranges
	for _, p := range pools {
		if cl, ok := cls[p.ID]; ok && p.Type == "concentrated" {
			lower := floorTo(cl.tick, cl.spacing)
			first[p.ID] = len(ranges)
			ranges = append(ranges, report.Range{Pool: p.ID, Lower: clmath.MinTick, Upper: clmath.MaxTick},
				report.Range{Pool: p.ID, Lower: lower, Upper: lower + cl.spacing})
		}
	}
	earned, err := s.earnedPerLiquidity(ctx, w, ranges)
	if err != nil {
		return nil, err
	}
	out := []poolAPRRangeRow{}
	for _, p := range pools {
		var lo, hi [3]*big.Rat // fees, native, boost
		if p.Type == "concentrated" {
			cl, ok := cls[p.ID]
			if !ok {
				continue
			}
			i := first[p.ID]
			full := cl.positionAPR(w, earned[i], ranges[i].Lower, ranges[i].Upper)
			narrow := cl.positionAPR(w, earned[i+1], ranges[i+1].Lower, ranges[i+1].Upper)
			lo = [3]*big.Rat{full.fees, full.native, full.boost}
			hi = [3]*big.Rat{narrow.fees, narrow.native, narrow.boost}
		} else {
			if p.Liquidity == nil || p.Liquidity.Sign() <= 0 {
				continue
			}
			f, n, b := w.poolLevel(p)
			lo, hi = [3]*big.Rat{f, n, b}, [3]*big.Rat{f, n, b}
		}
		sf := w.superfluidAPR(p)
		// A classic pool's range is one value: rendered (and summed) once.
		rng := func(a, b *big.Rat) aprRange {
			n := optNumber(a)
			if a == b {
				return aprRange{Lower: n, Upper: n}
			}
			return aprRange{Lower: n, Upper: optNumber(b)}
		}
		totLo := total(lo[0], lo[1], lo[2], sf)
		totHi := totLo
		if lo != hi {
			totHi = total(hi[0], hi[1], hi[2], sf)
		}
		out = append(out, poolAPRRangeRow{PoolID: strconv.FormatInt(p.ID, 10),
			SwapFees: rng(lo[0], hi[0]), Superfluid: rng(sf, sf), Native: rng(lo[1], hi[1]), Boost: rng(lo[2], hi[2]),
			TotalAPR: rng(totLo, totHi)})
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}

// positionAPR answers both versions of /cl/.../apr/rewards/{pool}: the APR
// of swap fees and incentives of a position between lower_tick and
// upper_tick (full range when absent, v1 only).
func (s *Service) positionAPR(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	id, err := strconv.ParseInt(req.Params.String("pool"), 10, 64)
	if err != nil || id <= 0 {
		return nil, problem.BadParam("pool", "must be a pool id (digits)")
	}
	lower, upper := int64(clmath.MinTick), int64(clmath.MaxTick)
	if req.Params.Has("lower_tick") {
		lower = req.Params.Int("lower_tick")
	}
	if req.Params.Has("upper_tick") {
		upper = req.Params.Int("upper_tick")
	}
	if lower < clmath.MinTick || lower > clmath.MaxTick {
		return nil, problem.BadParam("lower_tick", fmt.Sprintf("must be between %d and %d", clmath.MinTick, clmath.MaxTick))
	}
	if upper < clmath.MinTick || upper > clmath.MaxTick {
		return nil, problem.BadParam("upper_tick", fmt.Sprintf("must be between %d and %d", clmath.MinTick, clmath.MaxTick))
	}
	if upper <= lower {
		return nil, problem.BadParam("upper_tick", "must be above lower_tick")
	}
	w, err := s.window(ctx, fresh)
	if err != nil {
		return nil, err
	}
	pools, err := s.aprPools(ctx, w, poolIDs(id))
	if err != nil {
		return nil, err
	}
	if len(pools) == 0 {
		return nil, problem.Status(http.StatusNotFound, "pool %d not found", id)
	}
	if pools[0].Type != "concentrated" {
		return nil, problem.BadParam("pool", fmt.Sprintf("must be a concentrated-liquidity pool: %d is a %s pool", id, pools[0].Type))
	}
	cl, ok, err := s.clPool(ctx, pools[0])
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("pool %d has no replayed state yet: %w", id, problem.ErrNotIndexed)
	}
	earned, err := s.earnedPerLiquidity(ctx, w, []report.Range{{Pool: id, Lower: lower, Upper: upper}})
	if err != nil {
		return nil, err
	}
	e := cl.positionAPR(w, earned[0], lower, upper)
	return &api.Response{Body: struct {
		APR json.Number `json:"APR"`
	}{ratNumber(total(e.fees, e.native, e.boost))}, Freshness: fresh}, nil
}

func floorTo(tick, spacing int64) int64 {
	q := tick / spacing
	if tick%spacing != 0 && tick < 0 {
		q--
	}
	return q * spacing
}

// clState is a concentrated-liquidity pool with what position APRs need.
type clState struct {
	*aprPool
	spacing   int64
	tick      int64    // current
	sqrtPrice *big.Rat // current
	price0    *big.Rat // USD per base unit of token0
	price1    *big.Rat // USD per base unit of token1
}

// clPool loads the state of a concentrated-liquidity pool; false when it
// has no replayed state, tick spacing or prices yet.
func (s *Service) clPool(ctx context.Context, p *aprPool) (*clState, bool, error) {
	cls, err := s.clPools(ctx, []*aprPool{p})
	if err != nil {
		return nil, false, err
	}
	cl, ok := cls[p.ID]
	return cl, ok, nil
}

// clPools loads the current state of the concentrated-liquidity pools
// among pools, by pool id; a pool without replayed state, tick spacing or
// prices yet is left out. Two statements whatever the number of pools.
func (s *Service) clPools(ctx context.Context, pools []*aprPool) (map[int64]*clState, error) {
	byID := map[int64]*aprPool{}
	var ids []int64
	for _, p := range pools {
		if p.Type != "concentrated" {
			continue
		}
		byID[p.ID] = p
		ids = append(ids, p.ID)
	}
	out := map[int64]*clState{}
	if len(ids) == 0 {
		return out, nil
	}
	db := api.Reader(ctx, s.db)
	var rows []struct {
		PoolID    int64    `bun:"pool_id"`
		Spacing   int64    `bun:"tick_spacing"`
		SqrtPrice string   `bun:"sqrt_price"`
		Tick      int64    `bun:"tick"`
		Denoms    []string `bun:"denoms,array"`
	}
	if err := db.NewRaw(`SELECT c.pool_id, c.tick_spacing, st.sqrt_price::text AS sqrt_price, st.tick,
			(SELECT denoms FROM osmosis_known_pools p WHERE p.chain_id = c.chain_id AND p.pool_id = c.pool_id ORDER BY height LIMIT 1) AS denoms
		FROM osmosis_cl_pools c
		JOIN LATERAL (SELECT sqrt_price, tick FROM osmosis_cl_state_hourly st WHERE st.chain_id = c.chain_id AND st.pool_id = c.pool_id
			ORDER BY hour DESC LIMIT 1) st ON true
		WHERE c.chain_id = ? AND c.pool_id IN (?)`, s.market.ChainID, bun.List(ids)).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("concentrated pools' state: %w", err)
	}
	var denoms []string
	for _, r := range rows {
		if len(r.Denoms) == 2 && r.Spacing > 0 {
			denoms = append(denoms, r.Denoms...)
		}
	}
	// Each denom's latest price: the kept latest closes (a denom never
	// priced has no row).
	var prices []struct {
		Denom string  `bun:"denom"`
		Price *string `bun:"price"`
	}
	if err := db.NewRaw(`SELECT denom, price_usd::text AS price FROM `+report.AssetPricesLatest+` WHERE chain_id = ? AND denom = ANY(?::text[])`,
		s.market.ChainID, pgdialect.Array(denoms)).Scan(ctx, &prices); err != nil {
		return nil, fmt.Errorf("concentrated pools' prices: %w", err)
	}
	priceOf := map[string]*big.Rat{}
	for _, p := range prices {
		if p.Price == nil {
			continue
		}
		r, ok := new(big.Rat).SetString(*p.Price)
		if !ok {
			return nil, fmt.Errorf("price of %s %q", p.Denom, *p.Price)
		}
		priceOf[p.Denom] = r.Quo(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(s.market.Exponent(p.Denom))), nil)))
	}
	for _, r := range rows {
		if len(r.Denoms) != 2 || r.Spacing <= 0 {
			continue
		}
		p0, ok0 := priceOf[r.Denoms[0]]
		p1, ok1 := priceOf[r.Denoms[1]]
		if !ok0 || !ok1 {
			continue
		}
		sp, ok := new(big.Rat).SetString(r.SqrtPrice)
		if !ok {
			return nil, fmt.Errorf("pool %d sqrt price %q", r.PoolID, r.SqrtPrice)
		}
		out[r.PoolID] = &clState{aprPool: byID[r.PoolID], spacing: r.Spacing, tick: r.Tick, sqrtPrice: sp, price0: p0, price1: p1}
	}
	return out, nil
}

// valuePerLiquidity is the USD value of one unit of liquidity between
// lower and upper at the current sqrt price.
func (cl *clState) valuePerLiquidity(lower, upper int64) *big.Rat {
	amount0, amount1 := clmath.AmountsPerLiquidity(cl.sqrtPrice, lower, upper)
	v := new(big.Rat).Mul(amount0, cl.price0)
	return v.Add(v, new(big.Rat).Mul(amount1, cl.price1))
}

// positionAPR is the APR per source of a position between lower and
// upper that earned earned per unit of liquidity over the window
// (earnedPerLiquidity).
func (cl *clState) positionAPR(w aprContext, earned aprSources, lower, upper int64) aprSources {
	v := cl.valuePerLiquidity(lower, upper)
	return aprSources{w.annualised(earned.fees, v), w.annualised(earned.native, v), w.annualised(earned.boost, v)}
}

// earnedPerLiquidity is, for each of ranges, what one unit of liquidity in
// it earned over the window, in USD per source: each hour whose end tick is
// in the range pays the hour's earnings over that hour's liquidity in range
// (report.EarnedFrom: the dex_cl_earnings job's quotients, each truncated
// by less than 10^-80 USD, summed by Postgres).
func (s *Service) earnedPerLiquidity(ctx context.Context, w aprContext, ranges []report.Range) ([]aprSources, error) {
	// 503 until the job has run (a new job after an upgrade): no row yet
	// would read as nothing earned.
	if _, err := api.JobHeight(ctx, api.Reader(ctx, s.db), s.market.ChainID, report.JobCLEarnings); err != nil {
		return nil, err
	}
	sums, err := report.EarnedFrom(ctx, api.Reader(ctx, s.db), s.market.ChainID, w.from, ranges)
	if err != nil {
		return nil, err
	}
	out := make([]aprSources, len(sums))
	for i, e := range sums {
		var src [3]*big.Rat
		for k, v := range []string{e.Fees, e.Native, e.Boost} {
			n, ok := new(big.Int).SetString(v, 10)
			if !ok {
				return nil, fmt.Errorf("earnings per liquidity of pool %d: %q", ranges[i].Pool, v)
			}
			src[k] = new(big.Rat).SetFrac(n, report.EarnedUnit)
		}
		out[i] = aprSources{src[0], src[1], src[2]}
	}
	return out, nil
}

func isNoRows(err error) bool { return errors.Is(err, sql.ErrNoRows) }
