package dex

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"time"

	"cosmossdk.io/math"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/problem"
	report "github.com/chainlens/chainlens/report/dex"
)

// StreamToken is a token of a pool in the pool stream.
type StreamToken struct {
	Denom           string  `json:"denom"`
	Amount          string  `json:"amount"`
	Name            *string `json:"name"`
	Symbol          *string `json:"symbol"`
	Display         *string `json:"display"`
	Exponent        *string `json:"exponent"`
	MarketDataID    *string `json:"market_data_id"`
	WeightOrScaling *string `json:"weight_or_scaling"`
	Percent         *string `json:"percent"`
	Price           *string `json:"price"`
	Price24hChange  *string `json:"price_24h_change"`
}

// StreamShares is a pool's LP share denom and total.
type StreamShares struct {
	Denom  *string `json:"denom"`
	Amount *string `json:"amount"`
}

// StreamPool is a pool of the pool stream.
type StreamPool struct {
	Main                 bool         `json:"main"`
	Type                 string       `json:"type"`
	PoolID               int64        `json:"pool_id"`
	SwapFees             json.Number  `json:"swap_fees"`
	ExitFees             json.Number  `json:"exit_fees"`
	TotalWeightOrScaling json.Number  `json:"total_weight_or_scaling"`
	TotalShares          StreamShares `json:"total_shares"`
	// PoolTokens is []StreamToken, or for concentrated-liquidity pools
	// {asset0, asset1}.
	PoolTokens           any          `json:"pool_tokens"`
	Liquidity            *json.Number `json:"liquidity"`
	Liquidity24hChange   *json.Number `json:"liquidity_24h_change"`
	Volume24h            *json.Number `json:"volume_24h"`
	Volume24hChange      *json.Number `json:"volume_24h_change"`
	Volume7d             *json.Number `json:"volume_7d"`
	Address              string       `json:"address"`
	ExponentAtPriceOne   *string      `json:"exponent_at_price_one"`
	SpreadFactor         *string      `json:"spread_factor"`
	CurrentSqrtPrice     *string      `json:"current_sqrt_price"`
	TickSpacing          *string      `json:"tick_spacing"`
	CurrentTick          *string      `json:"current_tick"`
	CurrentTickLiquidity *string      `json:"current_tick_liquidity"`
	CodeID               *string      `json:"code_id"`
	InstantiateMsg       *string      `json:"instantiate_msg"`
}

// StreamPage is the pool stream answer.
type StreamPage struct {
	Pagination struct {
		NextOffset *int64 `json:"next_offset"`
		TotalPools int64  `json:"total_pools"`
	} `json:"pagination"`
	Pools []StreamPool `json:"pools"`
}

// streamTypes are the published type names of the pool types.
var streamTypes = map[string]string{
	"balancer":     "osmosis.gamm.v1beta1.Pool",
	"stableswap":   "osmosis.gamm.poolmodels.stableswap.v1beta1.Pool",
	"concentrated": "osmosis.concentratedliquidity.v1beta1.Pool",
	"cosmwasm":     "osmosis.cosmwasmpool.v1beta1.CosmWasmPool",
}

// balancerWeightScale is the factor by which a balancer pool scales the
// weights of its create message (GuaranteedWeightPrecision, 2^30).
var balancerWeightScale = math.NewInt(1 << 30)

// streamPool is a pool of the stream's catalog (osmosis_known_pools).
type streamPool struct {
	PoolID  int64    `bun:"pool_id"`
	Type    string   `bun:"type"`
	Denoms  []string `bun:"denoms,array"`
	Fee     *string  `bun:"fee"`
	Weights []string `bun:"weights,array"`
	Spacing *int64   `bun:"tick_spacing"`
	ExitFee *string  `bun:"exit_fee"`
}

// streamVolume is a pool's volume over the last 24 hours, the 24 hours
// before and the last 7 days, as Postgres summed them.
type streamVolume struct {
	PoolID int64  `bun:"pool_id"`
	V24    string `bun:"v24"`
	VPrev  string `bun:"vprev"`
	V7     string `bun:"v7"`
}

// streamRow is one pool with its liquidity (nil when unpriced) and, once
// the order needs it, its sort key.
type streamRow struct {
	pool      *streamPool
	liquidity *math.LegacyDec
	key       *math.LegacyDec
}

// streamData is what every pool's row is built from; the reserves 24 hours
// back are read for the pools that need them (the page, or every pool when
// the order is by liquidity change).
type streamData struct {
	back                time.Time // the end of the hour 24 hours back
	pools               []streamPool
	resNow, resBack     map[int64]map[string]math.Int
	priceNow, priceBack map[string]math.LegacyDec
	volumes             map[int64]streamVolume
}

// poolStream answers every pool of known type with its tokens, reserves,
// liquidity and volumes from the report tables: the pool's create row
// (osmosis_known_pools: type, denoms, swap and exit fees, weights or scaling
// factors, tick spacing; exit_fees 0 when unknown), its last
// reserves (osmosis_pool_reserves_hourly, dex_liquidity) and total shares
// (osmosis_pool_shares_hourly, dex_portfolio), the concentrated-liquidity
// state (osmosis_cl_state_hourly, dex_cl_state), the last closes
// (osmosis_asset_prices, dex_prices) and the hourly volume
// (osmosis_pool_volume_hourly, dex_volume). liquidity = Σ reserves at their
// close; liquidity_24h_change compares it with the reserves at the end of
// the hour 24 hours back at that hour's closes, in percent; volume_24h and
// volume_7d add the hourly buckets overlapping the last 24 hours and 7
// days, volume_24h_change compares volume_24h with the 24 hours before, in
// percent. A change without a base is null. Pools below min_liquidity
// (unpriced pools included) are left out unless named in pool_ids.
//
// Every pool's liquidity and the order's key are computed; the rest of a
// pool (tokens, shares, state, changes) only for the pools of the page.
func (s *Service) poolStream(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	var wanted map[int64]bool
	if ids := req.Params.Strings("pool_ids"); len(ids) > 0 {
		wanted = map[int64]bool{}
		for _, v := range ids {
			id, err := strconv.ParseInt(v, 10, 64)
			if err != nil || id < 1 {
				return nil, problem.BadParam("pool_ids", "must be pool ids (digits)")
			}
			wanted[id] = true
		}
	}
	minLiq, err := math.LegacyNewDecFromStr(strconv.FormatFloat(req.Params.Float("min_liquidity"), 'f', -1, 64))
	if err != nil {
		return nil, problem.BadParam("min_liquidity", "must be a number")
	}
	now := req.Now.UTC()
	d, err := s.streamData(ctx, now)
	if err != nil {
		return nil, err
	}
	var kept []streamRow
	for i := range d.pools {
		p := &d.pools[i]
		r := streamRow{pool: p}
		if liq, priced := s.poolValue(d.resNow[p.PoolID], d.priceNow); priced {
			r.liquidity = &liq
		}
		if wanted != nil {
			if wanted[p.PoolID] {
				kept = append(kept, r)
			}
			continue
		}
		if r.liquidity != nil && r.liquidity.GTE(minLiq) {
			kept = append(kept, r)
		}
	}
	orderKey := req.Params.String("order_key")
	if orderKey == "liquidity_change" {
		if err := s.readReservesBack(ctx, &d, nil); err != nil {
			return nil, err
		}
	}
	for i := range kept {
		r := &kept[i]
		switch orderKey {
		case "volume_24h":
			v, _, err := d.volume(r.pool.PoolID)
			if err != nil {
				return nil, err
			}
			r.key = &v.v24
		case "volume_24h_change":
			_, ch, err := d.volume(r.pool.PoolID)
			if err != nil {
				return nil, err
			}
			r.key = ch
		case "liquidity_change":
			r.key = s.liquidityChange(&d, r)
		default:
			r.key = r.liquidity
		}
	}
	desc := req.Params.String("order_by") != "asc"
	sort.SliceStable(kept, func(i, j int) bool {
		a, b := kept[i].key, kept[j].key
		switch {
		case a == nil && b == nil:
			return kept[i].pool.PoolID < kept[j].pool.PoolID
		case a == nil || b == nil:
			return b == nil // nulls last
		case a.Equal(*b):
			return kept[i].pool.PoolID < kept[j].pool.PoolID
		case desc:
			return a.GT(*b)
		}
		return a.LT(*b)
	})
	out := StreamPage{Pools: []StreamPool{}}
	out.Pagination.TotalPools = int64(len(kept))
	offset := req.Params.Int("offset")
	limit := req.Params.Int("limit")
	if wanted != nil {
		limit = int64(len(kept))
	}
	var page []streamRow
	for i := offset; i < int64(len(kept)) && i < offset+limit; i++ {
		page = append(page, kept[i])
	}
	if out.Pools, err = s.streamPage(ctx, &d, page); err != nil {
		return nil, err
	}
	if next := offset + int64(len(out.Pools)); next < int64(len(kept)) {
		out.Pagination.NextOffset = &next
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}

// streamData reads the catalog's pools of a known type, every pool's
// reserves now, the prices now and at the end of the hour 24 hours back,
// and every pool's volumes.
func (s *Service) streamData(ctx context.Context, now time.Time) (streamData, error) {
	chain := s.market.ChainID
	d := streamData{back: now.Add(-24 * time.Hour).Truncate(time.Hour).Add(time.Hour)}
	var pools []streamPool
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT DISTINCT ON (pool_id) pool_id, type, denoms, swap_fee::text AS fee, coalesce(weights::text[], '{}') AS weights, tick_spacing,
			exit_fee::text AS exit_fee
		FROM osmosis_known_pools WHERE chain_id = ? ORDER BY pool_id, height DESC, tx_index DESC, event_index DESC`, chain).Scan(ctx, &pools); err != nil {
		return d, fmt.Errorf("pools: %w", err)
	}
	for _, p := range pools {
		if _, ok := streamTypes[p.Type]; !ok || (p.Type == "concentrated" && len(p.Denoms) != 2) {
			continue
		}
		d.pools = append(d.pools, p)
	}
	// Each "latest before" is a backward index probe per key, not a scan
	// of the history.
	rs, err := report.ReservesAt(ctx, api.Reader(ctx, s.db), chain, []time.Time{endOfTime.Add(-time.Microsecond)})
	if err != nil {
		return d, err
	}
	if d.resNow, err = reservesByPool(rs); err != nil {
		return d, err
	}
	prices, err := s.pricesAtEach(ctx, []time.Time{endOfTime.Add(-time.Microsecond), d.back.Add(-time.Microsecond)}, nil)
	if err != nil {
		return d, err
	}
	d.priceNow, d.priceBack = prices[0], prices[1]
	var vols []streamVolume
	w := volumeWindowsAt(now)
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT pool_id, v24::text AS v24, vprev::text AS vprev, v7::text AS v7 FROM (`+poolVolumeWindows+`) v`,
		w.args(chain)...).Scan(ctx, &vols); err != nil {
		return d, fmt.Errorf("pool volumes: %w", err)
	}
	d.volumes = make(map[int64]streamVolume, len(vols))
	for _, v := range vols {
		d.volumes[v.PoolID] = v
	}
	return d, nil
}

// volumeWindows are the bounds of the volume windows of an answer at a
// time: the hourly buckets of the last 24 hours (from day), of the 24
// before (from prevDay) and of the last 7 days (from week), and the bounds
// of the 7 days' whole UTC days [weekDays, today).
type volumeWindows struct {
	day, prevDay, week, today, weekDays time.Time
}

func volumeWindowsAt(now time.Time) volumeWindows {
	w := volumeWindows{day: now.Add(-24 * time.Hour).Truncate(time.Hour), prevDay: now.Add(-48 * time.Hour).Truncate(time.Hour),
		week: now.Add(-7 * 24 * time.Hour).Truncate(time.Hour), today: now.Truncate(24 * time.Hour)}
	w.weekDays = w.week.Truncate(24 * time.Hour)
	if w.weekDays.Before(w.week) {
		w.weekDays = w.weekDays.Add(24 * time.Hour)
	}
	return w
}

// args are poolVolumeWindows' arguments.
func (w volumeWindows) args(chain string) []any {
	return []any{chain, w.day, w.prevDay, w.week, w.today, w.weekDays}
}

// poolVolumeWindows selects each pool's volume (numeric) over the last 24
// hours (v24), the 24 before (vprev) and the last 7 days (v7) for the
// arguments of volumeWindows.args. The 7 days are the hours of the first
// day's remainder and of today, and the whole days between from their daily
// sums (osmosis_pool_volume_daily, exact sums of the same hours by the same
// job): 54 rows a pool at most instead of 168.
const poolVolumeWindows = `SELECT pool_id, sum(v24) AS v24, sum(vprev) AS vprev, sum(v7) AS v7 FROM (
		SELECT pool_id,
			coalesce(sum(volume_usd) FILTER (WHERE hour >= ?1), 0) AS v24,
			coalesce(sum(volume_usd) FILTER (WHERE hour >= ?2 AND hour < ?1), 0) AS vprev,
			coalesce(sum(volume_usd) FILTER (WHERE hour >= ?4 OR (hour >= ?3 AND hour < ?5)), 0) AS v7
		FROM osmosis_pool_volume_hourly WHERE chain_id = ?0 AND (hour >= least(?2::timestamptz, ?4::timestamptz) OR (hour >= ?3 AND hour < ?5))
		GROUP BY pool_id
		UNION ALL
		SELECT pool_id, 0, 0, sum(volume_usd) FROM osmosis_pool_volume_daily WHERE chain_id = ?0 AND day >= ?5 AND day < ?4 GROUP BY pool_id) v
	GROUP BY pool_id`

// reservesByPool is reserves (of one time) by pool and denom.
func reservesByPool(rs []report.Reserve) (map[int64]map[string]math.Int, error) {
	out := map[int64]map[string]math.Int{}
	for _, r := range rs {
		a, ok := math.NewIntFromString(r.Amount)
		if !ok {
			return nil, fmt.Errorf("reserve %q", r.Amount)
		}
		if out[r.PoolID] == nil {
			out[r.PoolID] = map[string]math.Int{}
		}
		out[r.PoolID][r.Denom] = a
	}
	return out, nil
}

// readReservesBack reads the reserves at d.back of pools (every pool:
// nil) not read yet.
func (s *Service) readReservesBack(ctx context.Context, d *streamData, pools []int64) error {
	at := []time.Time{d.back.Add(-time.Microsecond)}
	var rs []report.Reserve
	var err error
	if pools == nil {
		rs, err = report.ReservesAt(ctx, api.Reader(ctx, s.db), s.market.ChainID, at)
	} else {
		rs, err = report.PoolReservesAt(ctx, api.Reader(ctx, s.db), s.market.ChainID, at, pools)
	}
	if err != nil {
		return err
	}
	back, err := reservesByPool(rs)
	if err != nil {
		return err
	}
	if d.resBack == nil {
		d.resBack = back
		return nil
	}
	for id, r := range back {
		d.resBack[id] = r
	}
	return nil
}

// poolValue is Σ reserves at their prices, and whether any was priced.
func (s *Service) poolValue(res map[string]math.Int, px map[string]math.LegacyDec) (math.LegacyDec, bool) {
	total, priced := math.LegacyZeroDec(), false
	for d, a := range res {
		if p, ok := px[d]; ok {
			total = total.Add(s.market.USDValue(d, a, p))
			priced = true
		}
	}
	return total, priced
}

// liquidityChange is a pool's liquidity change over 24 hours in percent;
// nil without a priced, positive liquidity then (or without one now).
// d.resBack holds the pool's reserves then.
func (s *Service) liquidityChange(d *streamData, r *streamRow) *math.LegacyDec {
	if r.liquidity == nil {
		return nil
	}
	before, ok := s.poolValue(d.resBack[r.pool.PoolID], d.priceBack)
	if !ok || !before.IsPositive() {
		return nil
	}
	ch := r.liquidity.Sub(before).MulInt64(100).Quo(before)
	return &ch
}

// volume is a pool's volumes (zero without a row) and its 24-hour change
// in percent (nil without volume the 24 hours before).
func (d *streamData) volume(pool int64) (streamVolumes, *math.LegacyDec, error) {
	v, ok := d.volumes[pool]
	if !ok {
		z := math.LegacyZeroDec()
		return streamVolumes{z, z, z}, nil, nil
	}
	a, err1 := math.LegacyNewDecFromStr(v.V24)
	b, err2 := math.LegacyNewDecFromStr(v.VPrev)
	c, err3 := math.LegacyNewDecFromStr(v.V7)
	if err1 != nil || err2 != nil || err3 != nil {
		return streamVolumes{}, nil, fmt.Errorf("volume of pool %d: %q %q %q", pool, v.V24, v.VPrev, v.V7)
	}
	out := streamVolumes{a, b, c}
	if !b.IsPositive() {
		return out, nil, nil
	}
	ch := a.Sub(b).MulInt64(100).Quo(b)
	return out, &ch, nil
}

// streamVolumes are a pool's parsed volumes.
type streamVolumes struct{ v24, prev, v7 math.LegacyDec }

// streamPage builds the page's pools: their shares and concentrated
// states, and their reserves 24 hours back, read for these pools only.
func (s *Service) streamPage(ctx context.Context, d *streamData, page []streamRow) ([]StreamPool, error) {
	out := make([]StreamPool, 0, len(page))
	if len(page) == 0 {
		return out, nil
	}
	chain := s.market.ChainID
	ids := make([]int64, len(page))
	for i, r := range page {
		ids[i] = r.pool.PoolID
	}
	if d.resBack == nil {
		if err := s.readReservesBack(ctx, d, ids); err != nil {
			return nil, err
		}
	}
	shares := map[int64]string{}
	var sh []struct {
		PoolID int64  `bun:"pool_id"`
		Total  string `bun:"total"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT p.id AS pool_id, t.total::text AS total FROM unnest(?::bigint[]) p(id)
		CROSS JOIN LATERAL (SELECT total_shares AS total FROM osmosis_pool_shares_hourly WHERE chain_id = ? AND pool_id = p.id
			ORDER BY hour DESC LIMIT 1) t`, pgdialect.Array(ids), chain).Scan(ctx, &sh); err != nil {
		return nil, fmt.Errorf("pool shares: %w", err)
	}
	for _, r := range sh {
		shares[r.PoolID] = r.Total
	}
	var cls []streamCL
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT p.id AS pool_id, c.sqrt_price::text AS sqrt_price, c.tick, c.liquidity::text AS liquidity
		FROM unnest(?::bigint[]) p(id) CROSS JOIN LATERAL (SELECT sqrt_price, tick, liquidity FROM osmosis_cl_state_hourly
			WHERE chain_id = ? AND pool_id = p.id ORDER BY hour DESC LIMIT 1) c`, pgdialect.Array(ids), chain).Scan(ctx, &cls); err != nil {
		return nil, fmt.Errorf("pool states: %w", err)
	}
	clByPool := map[int64]*streamCL{}
	for i := range cls {
		clByPool[cls[i].PoolID] = &cls[i]
	}
	for _, row := range page {
		sp, err := s.streamPool(d, row, shares, clByPool[row.pool.PoolID])
		if err != nil {
			return nil, err
		}
		out = append(out, sp)
	}
	return out, nil
}

// streamCL is a concentrated pool's latest state.
type streamCL struct {
	PoolID    int64  `bun:"pool_id"`
	SqrtPrice string `bun:"sqrt_price"`
	Tick      int64  `bun:"tick"`
	Liquidity string `bun:"liquidity"`
}

// streamPool builds a pool of the page from its row, its total shares
// (balancer and stableswap pools) and its state (concentrated pools; nil
// before one was replayed).
func (s *Service) streamPool(d *streamData, row streamRow, shares map[int64]string, cl *streamCL) (StreamPool, error) {
	p := row.pool
	addr, err := s.poolAddress(p.PoolID)
	if err != nil {
		return StreamPool{}, fmt.Errorf("address of pool %d: %w", p.PoolID, err)
	}
	sp := StreamPool{Type: streamTypes[p.Type], PoolID: p.PoolID, ExitFees: "0", TotalWeightOrScaling: "0", Address: addr, Main: true}
	if p.Fee != nil {
		sp.SwapFees = api.Number(*p.Fee)
	} else {
		sp.SwapFees = "0"
	}
	if p.ExitFee != nil {
		sp.ExitFees = api.Number(*p.ExitFee)
	}
	if row.liquidity != nil {
		n := api.Number(row.liquidity.String())
		sp.Liquidity = &n
		if ch := s.liquidityChange(d, &row); ch != nil {
			n := api.Number(ch.String())
			sp.Liquidity24hChange = &n
		}
	}
	v, vch, err := d.volume(p.PoolID)
	if err != nil {
		return StreamPool{}, err
	}
	v24, v7 := api.Number(v.v24.String()), api.Number(v.v7.String())
	sp.Volume24h, sp.Volume7d = &v24, &v7
	if vch != nil {
		n := api.Number(vch.String())
		sp.Volume24hChange = &n
	}
	token := func(denom string, weight *string) StreamToken {
		t, known := s.streamToken(d, row.liquidity, denom, weight, d.resNow[p.PoolID])
		if !known {
			sp.Main = false // a token without metadata
		}
		return t
	}
	switch p.Type {
	case "concentrated":
		sp.PoolTokens = map[string]StreamToken{"asset0": token(p.Denoms[0], nil), "asset1": token(p.Denoms[1], nil)}
		sp.TotalShares = StreamShares{}
		sp.ExponentAtPriceOne = strPtr("-6")
		if p.Spacing != nil {
			sp.TickSpacing = strPtr(strconv.FormatInt(*p.Spacing, 10))
		}
		if p.Fee != nil {
			sp.SpreadFactor = strPtr(*p.Fee)
		}
		if cl != nil {
			tick := strconv.FormatInt(cl.Tick, 10)
			sp.CurrentSqrtPrice, sp.CurrentTick, sp.CurrentTickLiquidity = strPtr(cl.SqrtPrice), &tick, strPtr(cl.Liquidity)
		}
	case "cosmwasm":
		tokens := []StreamToken{}
		for _, d := range sortedDenoms(p.Denoms) {
			tokens = append(tokens, token(d, nil))
		}
		sp.PoolTokens = tokens
	default: // balancer, stableswap: tokens by denom, as the pool keeps them
		denom := "gamm/pool/" + strconv.FormatInt(p.PoolID, 10)
		sp.TotalShares = StreamShares{Denom: &denom}
		if t, ok := shares[p.PoolID]; ok {
			sp.TotalShares.Amount = strPtr(t)
		}
		weightOf, total, err := poolWeights(p)
		if err != nil {
			return StreamPool{}, err
		}
		sp.TotalWeightOrScaling = json.Number(total.String())
		tokens := []StreamToken{}
		for _, d := range sortedDenoms(p.Denoms) {
			var w *string
			if x, ok := weightOf[d]; ok {
				w = &x
			}
			tokens = append(tokens, token(d, w))
		}
		sp.PoolTokens = tokens
	}
	return sp, nil
}

// streamToken is a pool's token with its metadata (known: the denom has
// some), amount, price, share of the pool's liquidity (nil: unpriced) and
// price change.
func (s *Service) streamToken(d *streamData, liquidity *math.LegacyDec, denom string, weight *string, reserves map[string]math.Int) (t StreamToken, known bool) {
	amount, ok := reserves[denom]
	if !ok {
		amount = math.ZeroInt()
	}
	t = StreamToken{Denom: denom, Amount: amount.String(), WeightOrScaling: weight}
	a, known := s.market.Assets[denom]
	if known {
		exp := strconv.Itoa(a.Exponent)
		t.Name, t.Symbol, t.Display, t.Exponent = strPtr(a.Name), strPtr(a.Symbol), strPtr(a.Display), &exp
		if a.MarketDataID != "" {
			t.MarketDataID = strPtr(a.MarketDataID)
		}
	}
	if px, ok := d.priceNow[denom]; ok {
		t.Price = strPtr(string(api.Number(px.String())))
		if liquidity != nil && liquidity.IsPositive() {
			pct := s.market.USDValue(denom, amount, px).MulInt64(100).Quo(*liquidity)
			t.Percent = strPtr(string(api.Number(pct.String())))
		}
		if old, ok := d.priceBack[denom]; ok && old.IsPositive() {
			t.Price24hChange = strPtr(string(api.Number(px.Sub(old).MulInt64(100).Quo(old).String())))
		}
	}
	return t, known
}

// poolWeights are a balancer or stableswap pool's weights (scaled as the
// pool keeps a balancer's) or scaling factors by denom, and their total.
func poolWeights(p *streamPool) (map[string]string, math.Int, error) {
	weightOf := map[string]string{}
	total := math.ZeroInt()
	for i, d := range p.Denoms {
		if i >= len(p.Weights) {
			break
		}
		w, ok := math.NewIntFromString(api.Number(p.Weights[i]).String())
		if !ok {
			return nil, math.Int{}, fmt.Errorf("weight %q of pool %d", p.Weights[i], p.PoolID)
		}
		if p.Type == "balancer" {
			w = w.Mul(balancerWeightScale)
		}
		weightOf[d] = w.String()
		total = total.Add(w)
	}
	return weightOf, total, nil
}

func sortedDenoms(ds []string) []string {
	out := append([]string(nil), ds...)
	sort.Strings(out)
	return out
}

func strPtr(s string) *string { return &s }
