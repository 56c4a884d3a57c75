package dex

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	report "github.com/chainlens/chainlens/report/dex"

	"cosmossdk.io/math"
	"github.com/cosmos/cosmos-sdk/types/bech32"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/problem"
	"github.com/chainlens/chainlens/chains/osmosis/clmath"
)

// PortfolioValue is the current portfolio answer.
type PortfolioValue struct {
	USD json.Number `json:"usd"`
}

// PortfolioPoint is one point of the portfolio over time.
type PortfolioPoint struct {
	Timestamp string      `json:"timestamp"`
	USD       json.Number `json:"usd"`
}

// portfolioCurrent answers the USD value of an address's liquid balances,
// balancer/stableswap LP shares and concentrated-liquidity positions now
// (see portfolio.valueAt). Staked tokens are not counted.
func (s *Service) portfolioCurrent(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	addr, err := s.portfolioAddress(req)
	if err != nil {
		return nil, err
	}
	if _, err := s.genesisTime(ctx); err != nil {
		return nil, err
	}
	p, err := s.loadPortfolio(ctx, addr, endOfTime)
	if err != nil {
		return nil, err
	}
	v, err := p.valueAt(endOfTime)
	if err != nil {
		return nil, err
	}
	return &api.Response{Body: PortfolioValue{USD: api.Number(v.String())}, Freshness: fresh}, nil
}

// portfolioSteps are the over-time ranges: their length (0: since genesis)
// and step in minutes.
var portfolioSteps = map[string]struct {
	span time.Duration
	tf   int
}{
	"1d":  {24 * time.Hour, 60},
	"7d":  {7 * 24 * time.Hour, 60},
	"1mo": {30 * 24 * time.Hour, 1440},
	"1y":  {365 * 24 * time.Hour, 1440},
	"all": {0, report.Week},
}

// portfolioOverTime answers the portfolio's value at the end of every step
// (the hour, day or ISO week labelled by its start) from the step holding
// the start of the range, or the genesis, whichever is later, to the step
// holding the request time, oldest first.
func (s *Service) portfolioOverTime(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	addr, err := s.portfolioAddress(req)
	if err != nil {
		return nil, err
	}
	genesis, err := s.genesisTime(ctx)
	if err != nil {
		return nil, err
	}
	rg := portfolioSteps[req.Params.String("range")]
	now := req.Now.UTC()
	from := genesis
	if rg.span > 0 && now.Add(-rg.span).After(from) {
		from = now.Add(-rg.span)
	}
	// The first value asked is at the end of the first step.
	p, err := s.loadPortfolio(ctx, addr, nextBar(report.BarStart(from, rg.tf), rg.tf))
	if err != nil {
		return nil, err
	}
	out := []PortfolioPoint{}
	for b := report.BarStart(from, rg.tf); !b.After(now); b = nextBar(b, rg.tf) {
		v, err := p.valueAt(nextBar(b, rg.tf))
		if err != nil {
			return nil, err
		}
		out = append(out, PortfolioPoint{Timestamp: b.Format(time.DateTime), USD: api.Number(v.String())})
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}

func nextBar(b time.Time, tf int) time.Time {
	if tf == report.Week {
		return b.AddDate(0, 0, 7)
	}
	return b.Add(time.Duration(tf) * time.Minute)
}

// portfolioAddress is the address parameter: an account of the dex chain.
func (s *Service) portfolioAddress(req *api.Request) (string, error) {
	a := req.Params.String("address")
	hrp, _, err := bech32.DecodeAndConvert(a)
	if err != nil || hrp != s.market.Prefix || a != strings.ToLower(a) {
		return "", problem.BadParam("address", "must be a "+s.market.Prefix+"1... address")
	}
	return a, nil
}

// genesisTime is the dex chain's genesis time; balances are known only when
// it was indexed from genesis (genesis_imports), else 503.
func (s *Service) genesisTime(ctx context.Context) (time.Time, error) {
	var g time.Time
	err := api.Reader(ctx, s.db).NewRaw("SELECT genesis_time FROM genesis_imports WHERE chain_id = ?", s.market.ChainID).Scan(ctx, &g)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, fmt.Errorf("chain %s was not indexed from its genesis: balances before its first indexed height are unknown: %w",
			s.market.ChainID, problem.ErrNotIndexed)
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("genesis of %s: %w", s.market.ChainID, err)
	}
	return g.UTC(), nil
}

// endOfTime bounds no row: the latest state.
var endOfTime = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// point is a value at the end of an hour.
type point struct {
	hour time.Time
	v    string
}

// series is a history of hourly values, oldest first.
type series []point

// at is the last value of an hour before end ("" when none).
func (s series) at(end time.Time) string {
	i := sort.Search(len(s), func(i int) bool { return !s[i].hour.Before(end) })
	if i == 0 {
		return ""
	}
	return s[i-1].v
}

// positionPoint is a position's owner, range and liquidity at the end of an hour.
type positionPoint struct {
	Hour      time.Time `bun:"hour"`
	PoolID    int64     `bun:"pool_id"`
	Address   string    `bun:"address"`
	LowerTick int64     `bun:"lower_tick"`
	UpperTick int64     `bun:"upper_tick"`
	Liquidity string    `bun:"liquidity"`
}

// clPoint is a concentrated-liquidity pool's price at the end of an hour.
type clPoint struct {
	hour      time.Time
	sqrtPrice string
	tick      int64
}

// portfolio is the history of one address's holdings and of everything
// valuing them, from the report tables: osmosis_balances_hourly,
// osmosis_pool_shares_hourly, osmosis_cl_position_liquidity_hourly
// (dex_portfolio job), osmosis_pool_reserves_hourly (dex_liquidity),
// osmosis_cl_state_hourly (dex_cl_state) and osmosis_asset_prices
// (dex_prices).
type portfolio struct {
	market     report.Market
	address    string
	balances   map[string]series // denom → amount
	locked     map[string]series // denom → amount locked in the lockup module
	prices     map[string]series // denom → USD per display unit
	shares     map[int64]series  // pool → total shares
	reserves   map[int64]map[string]series
	positions  map[int64][]positionPoint
	clStates   map[int64][]clPoint
	poolDenoms map[int64][]string
	// The values parsed so far: a chart values the same rows at many of
	// its steps.
	ints map[string]math.Int
	decs map[string]math.LegacyDec
}

// int parses an integer (amounts), once per text.
func (p *portfolio) int(s string) (math.Int, bool) {
	if v, ok := p.ints[s]; ok {
		return v, true
	}
	v, ok := math.NewIntFromString(s)
	if ok {
		if p.ints == nil {
			p.ints = map[string]math.Int{}
		}
		p.ints[s] = v
	}
	return v, ok
}

// dec parses a decimal (prices), once per text.
func (p *portfolio) dec(s string) (math.LegacyDec, error) {
	if v, ok := p.decs[s]; ok {
		return v, nil
	}
	v, err := math.LegacyNewDecFromStr(s)
	if err == nil {
		if p.decs == nil {
			p.decs = map[string]math.LegacyDec{}
		}
		p.decs[s] = v
	}
	return v, err
}

// boundedHistory is the query of an hourly series per key bounded by a
// time: each key's last row before ?1 (its value at ?1) and, unless latest,
// its rows from ?1 on, ordered by key and hour. keys selects the keys (their
// columns named as in table), match joins table t to them, cols are the
// value columns read (expressions of t with their names). An answer valued
// at times from ?1 on needs nothing older: reading whole histories cost an
// address holding 2,000 denoms every hourly close of each (17,000 rows at
// a day of history, half a million at a month).
func boundedHistory(table, keys, keyCols, match, cols, names string, latest bool) string {
	rows := `(SELECT t.hour, ` + cols + ` FROM ` + table + ` t WHERE t.chain_id = ?0 AND ` + match + ` AND t.hour < ?1 ORDER BY t.hour DESC LIMIT 1)`
	if !latest {
		rows += ` UNION ALL (SELECT t.hour, ` + cols + ` FROM ` + table + ` t WHERE t.chain_id = ?0 AND ` + match + ` AND t.hour >= ?1 ORDER BY t.hour)`
	}
	return `SELECT ` + keyCols + `, x.hour, ` + names + ` FROM (` + keys + `) k CROSS JOIN LATERAL (` + rows + `) x ORDER BY ` + keyCols + `, x.hour`
}

// loadPortfolio reads what valueAt needs for times from from on (endOfTime:
// the latest state only).
func (s *Service) loadPortfolio(ctx context.Context, addr string, from time.Time) (*portfolio, error) {
	p := &portfolio{market: s.market, address: addr, balances: map[string]series{}, locked: map[string]series{}, prices: map[string]series{},
		shares: map[int64]series{}, reserves: map[int64]map[string]series{}, positions: map[int64][]positionPoint{},
		clStates: map[int64][]clPoint{}, poolDenoms: map[int64][]string{}}
	denoms, pools, clPools, err := s.loadHoldings(ctx, p, from)
	if err != nil {
		return nil, err
	}
	if err := s.loadPools(ctx, p, from, pools, clPools, denoms); err != nil {
		return nil, err
	}
	if err := s.loadPrices(ctx, p, from, denoms); err != nil {
		return nil, err
	}
	return p, nil
}

// loadHoldings reads the address's coins (held and locked) and the
// positions it ever owned into p: the denoms to price, the pools whose
// shares it holds and the concentrated pools of its positions.
func (s *Service) loadHoldings(ctx context.Context, p *portfolio, from time.Time) (map[string]bool, map[int64]bool, map[int64]bool, error) {
	chain, addr, latest := s.market.ChainID, p.address, from.Equal(endOfTime)
	type coinRow struct {
		Denom  string    `bun:"denom"`
		Hour   time.Time `bun:"hour"`
		Amount string    `bun:"amount"`
	}
	// The address's coins: one walk of its rows (by denom and hour), each
	// denom's last row before from kept, not a probe per denom.
	coins := func(table string) ([]coinRow, error) {
		var rows []coinRow
		err := api.Reader(ctx, s.db).NewRaw(`SELECT denom, hour, amount FROM (
				(SELECT DISTINCT ON (denom) denom, hour, amount::text AS amount FROM `+table+`
					WHERE chain_id = ?0 AND address = ?2 AND hour < ?1 ORDER BY denom, hour DESC)
				UNION ALL
				(SELECT denom, hour, amount::text FROM `+table+` WHERE chain_id = ?0 AND address = ?2 AND hour >= ?1)) c
			ORDER BY denom, hour`, chain, from, addr).Scan(ctx, &rows)
		return rows, err
	}
	bal, err := coins("osmosis_balances_hourly")
	if err != nil {
		return nil, nil, nil, fmt.Errorf("balances of %s: %w", addr, err)
	}
	locked, err := coins("osmosis_locked_hourly")
	if err != nil {
		return nil, nil, nil, fmt.Errorf("locked coins of %s: %w", addr, err)
	}
	denoms := map[string]bool{}
	pools := map[int64]bool{}
	for _, b := range locked {
		p.locked[b.Denom] = append(p.locked[b.Denom], point{b.Hour, b.Amount})
		if id, ok := gammPool(b.Denom); ok {
			pools[id] = true
		} else {
			denoms[b.Denom] = true
		}
	}
	for _, b := range bal {
		p.balances[b.Denom] = append(p.balances[b.Denom], point{b.Hour, b.Amount})
		if id, ok := gammPool(b.Denom); ok {
			pools[id] = true
		} else {
			denoms[b.Denom] = true
		}
	}
	// Every position the address ever owned (a position transferred away
	// keeps rows of the new owner).
	var pos []struct {
		PositionID int64 `bun:"position_id"`
		positionPoint
	}
	if err := api.Reader(ctx, s.db).NewRaw(boundedHistory("osmosis_cl_position_liquidity_hourly",
		`SELECT DISTINCT position_id FROM osmosis_cl_position_liquidity_hourly WHERE chain_id = ?0 AND address = ?2`, "k.position_id",
		"t.position_id = k.position_id",
		"t.pool_id, t.address, t.lower_tick, t.upper_tick, t.liquidity::text AS liquidity", "x.pool_id, x.address, x.lower_tick, x.upper_tick, x.liquidity", latest),
		chain, from, addr).Scan(ctx, &pos); err != nil {
		return nil, nil, nil, fmt.Errorf("positions of %s: %w", addr, err)
	}
	clPools := map[int64]bool{}
	for _, r := range pos {
		p.positions[r.PositionID] = append(p.positions[r.PositionID], r.positionPoint)
		clPools[r.PoolID] = true
	}
	return denoms, pools, clPools, nil
}

// loadPools reads into p the pools' denoms, and the series that value
// shares (total shares, reserves) and positions (concentrated states);
// the pools' denoms join denoms.
func (s *Service) loadPools(ctx context.Context, p *portfolio, from time.Time, pools, clPools map[int64]bool, denoms map[string]bool) error {
	chain, latest := s.market.ChainID, from.Equal(endOfTime)
	var ids []int64
	for id := range pools {
		ids = append(ids, id)
	}
	for id := range clPools {
		ids = append(ids, id)
	}
	if len(ids) > 0 {
		var pd []struct {
			PoolID int64    `bun:"pool_id"`
			Denoms []string `bun:"denoms,array"`
		}
		if err := api.Reader(ctx, s.db).NewRaw("SELECT DISTINCT ON (pool_id) pool_id, denoms FROM osmosis_known_pools WHERE chain_id = ? AND pool_id IN (?) ORDER BY pool_id, height DESC",
			chain, bun.List(ids)).Scan(ctx, &pd); err != nil {
			return fmt.Errorf("pool denoms: %w", err)
		}
		for _, r := range pd {
			p.poolDenoms[r.PoolID] = r.Denoms
			for _, d := range r.Denoms {
				denoms[d] = true
			}
		}
	}
	if len(pools) > 0 {
		var gammIDs []int64
		for id := range pools {
			gammIDs = append(gammIDs, id)
		}
		var sh []struct {
			PoolID int64     `bun:"pool_id"`
			Hour   time.Time `bun:"hour"`
			Total  string    `bun:"total"`
		}
		if err := api.Reader(ctx, s.db).NewRaw(boundedHistory("osmosis_pool_shares_hourly",
			"SELECT unnest(?2::bigint[]) AS pool_id", "k.pool_id", "t.pool_id = k.pool_id", "t.total_shares::text AS total", "x.total", latest),
			chain, from, pgdialect.Array(gammIDs)).Scan(ctx, &sh); err != nil {
			return fmt.Errorf("pool shares: %w", err)
		}
		for _, r := range sh {
			p.shares[r.PoolID] = append(p.shares[r.PoolID], point{r.Hour, r.Total})
		}
		// The pools' (pool, denom) keys are those of the kept latest rows.
		var rs []struct {
			PoolID int64     `bun:"pool_id"`
			Denom  string    `bun:"denom"`
			Hour   time.Time `bun:"hour"`
			Amount string    `bun:"amount"`
		}
		q := boundedHistory(report.PoolReserves,
			"SELECT pool_id, denom FROM "+report.PoolReservesLatest+" WHERE chain_id = ?0 AND pool_id = ANY(?2::bigint[])", "k.pool_id, k.denom",
			"t.pool_id = k.pool_id AND t.denom = k.denom", "t.amount::text AS amount", "x.amount", latest)
		if latest { // the kept latest rows themselves, not a probe per key
			q = "SELECT pool_id, denom, hour, amount::text AS amount FROM " + report.PoolReservesLatest +
				" WHERE chain_id = ?0 AND pool_id = ANY(?2::bigint[]) ORDER BY pool_id, denom"
		}
		if err := api.Reader(ctx, s.db).NewRaw(q, chain, from, pgdialect.Array(gammIDs)).Scan(ctx, &rs); err != nil {
			return fmt.Errorf("pool reserves: %w", err)
		}
		for _, r := range rs {
			if p.reserves[r.PoolID] == nil {
				p.reserves[r.PoolID] = map[string]series{}
			}
			p.reserves[r.PoolID][r.Denom] = append(p.reserves[r.PoolID][r.Denom], point{r.Hour, r.Amount})
			denoms[r.Denom] = true
		}
	}
	if len(clPools) > 0 {
		var clIDs []int64
		for id := range clPools {
			clIDs = append(clIDs, id)
		}
		var st []struct {
			PoolID    int64     `bun:"pool_id"`
			Hour      time.Time `bun:"hour"`
			SqrtPrice string    `bun:"sqrt_price"`
			Tick      int64     `bun:"tick"`
		}
		if err := api.Reader(ctx, s.db).NewRaw(boundedHistory("osmosis_cl_state_hourly",
			"SELECT unnest(?2::bigint[]) AS pool_id", "k.pool_id", "t.pool_id = k.pool_id",
			"t.sqrt_price::text AS sqrt_price, t.tick", "x.sqrt_price, x.tick", latest),
			chain, from, pgdialect.Array(clIDs)).Scan(ctx, &st); err != nil {
			return fmt.Errorf("pool states: %w", err)
		}
		for _, r := range st {
			p.clStates[r.PoolID] = append(p.clStates[r.PoolID], clPoint{r.Hour, r.SqrtPrice, r.Tick})
		}
	}
	return nil
}

// loadPrices reads the closes of denoms into p.
func (s *Service) loadPrices(ctx context.Context, p *portfolio, from time.Time, denoms map[string]bool) error {
	chain, latest := s.market.ChainID, from.Equal(endOfTime)
	if len(denoms) > 0 {
		var ds []string
		for d := range denoms {
			ds = append(ds, d)
		}
		var pr []struct {
			Denom string    `bun:"denom"`
			Hour  time.Time `bun:"hour"`
			Price string    `bun:"price"`
		}
		q := boundedHistory(report.AssetPrices,
			"SELECT unnest(?2::text[]) AS denom", "k.denom", "t.denom = k.denom", "t.price_usd::text AS price", "x.price", latest)
		if latest {
			q = "SELECT denom, hour, price_usd::text AS price FROM " + report.AssetPricesLatest + " WHERE chain_id = ?0 AND denom = ANY(?2::text[]) ORDER BY denom"
		}
		if err := api.Reader(ctx, s.db).NewRaw(q, chain, from, pgdialect.Array(ds)).Scan(ctx, &pr); err != nil {
			return fmt.Errorf("prices: %w", err)
		}
		for _, r := range pr {
			p.prices[r.Denom] = append(p.prices[r.Denom], point{r.Hour, r.Price})
		}
	}
	return nil
}

// gammPool is the pool id of an LP share denom gamm/pool/N.
func gammPool(denom string) (int64, bool) {
	rest, ok := strings.CutPrefix(denom, "gamm/pool/")
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(rest, 10, 64)
	return id, err == nil && id > 0
}

// usd is amount base units of denom at its last hourly close before end
// (0 for a denom never priced).
func (p *portfolio) usd(denom string, amount math.Int, end time.Time) (math.LegacyDec, error) {
	ps := p.prices[denom].at(end)
	if ps == "" || amount.IsZero() {
		return math.LegacyZeroDec(), nil
	}
	price, err := p.dec(ps)
	if err != nil {
		return math.LegacyDec{}, fmt.Errorf("price of %s: %q", denom, ps)
	}
	return p.market.USDValue(denom, amount, price), nil
}

// valueAt is the USD value at the end of the last hour before end of the
// address's bank balances (each denom at its close), LP shares (the share
// of the pool's reserves at their closes: shares / total shares), held or
// locked in the lockup module, and concentrated-liquidity positions it owns
// (the amounts their liquidity holds at the pool's replayed price, at their
// closes). Staked tokens are not counted.
func (p *portfolio) valueAt(end time.Time) (math.LegacyDec, error) {
	total := math.LegacyZeroDec()
	for _, held := range []map[string]series{p.balances, p.locked} {
		v, err := p.coinsValue(held, end)
		if err != nil {
			return math.LegacyDec{}, err
		}
		total = total.Add(v)
	}
	for id, hist := range p.positions {
		i := sort.Search(len(hist), func(i int) bool { return !hist[i].Hour.Before(end) })
		if i == 0 {
			continue
		}
		pos := hist[i-1]
		if pos.Address != p.address || strings.TrimLeft(pos.Liquidity, "0.") == "" {
			continue
		}
		states := p.clStates[pos.PoolID]
		j := sort.Search(len(states), func(k int) bool { return !states[k].hour.Before(end) })
		denoms := p.poolDenoms[pos.PoolID]
		if j == 0 || len(denoms) != 2 {
			continue // no replayed state yet
		}
		st := states[j-1]
		a0, a1, err := clmath.PositionAmounts(pos.Liquidity, pos.LowerTick, pos.UpperTick, st.sqrtPrice, st.tick)
		if err != nil {
			return math.LegacyDec{}, fmt.Errorf("position %d: %w", id, err)
		}
		for k, a := range []math.Int{a0, a1} {
			v, err := p.usd(denoms[k], a, end)
			if err != nil {
				return math.LegacyDec{}, err
			}
			total = total.Add(v)
		}
	}
	return total, nil
}

// coinsValue is the USD value of held coins at the end of the last hour
// before end: LP shares as their share of the pool, other denoms at their
// close.
func (p *portfolio) coinsValue(held map[string]series, end time.Time) (math.LegacyDec, error) {
	total := math.LegacyZeroDec()
	for denom, s := range held {
		amt, ok := p.int(s.at(end))
		if !ok || amt.IsZero() {
			continue
		}
		if id, ok := gammPool(denom); ok {
			v, err := p.sharesValue(id, amt, end)
			if err != nil {
				return math.LegacyDec{}, err
			}
			total = total.Add(v)
			continue
		}
		v, err := p.usd(denom, amt, end)
		if err != nil {
			return math.LegacyDec{}, err
		}
		total = total.Add(v)
	}
	return total, nil
}

// sharesValue is shares of pool id: its reserves' USD value × shares /
// total shares.
func (p *portfolio) sharesValue(id int64, shares math.Int, end time.Time) (math.LegacyDec, error) {
	totalShares, ok := p.int(p.shares[id].at(end))
	if !ok || !totalShares.IsPositive() {
		return math.LegacyZeroDec(), nil
	}
	pool := math.LegacyZeroDec()
	for denom, s := range p.reserves[id] {
		amt, ok := p.int(s.at(end))
		if !ok {
			continue
		}
		v, err := p.usd(denom, amt, end)
		if err != nil {
			return math.LegacyDec{}, err
		}
		pool = pool.Add(v)
	}
	return pool.MulInt(shares).QuoInt(totalShares), nil
}
