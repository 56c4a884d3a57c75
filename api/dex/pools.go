package dex

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	report "github.com/chainlens/chainlens/report/dex"

	"cosmossdk.io/math"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/problem"
)

// PoolListing is one pool of the filter menus.
type PoolListing struct {
	QueryKey    int64       `json:"query_key"`
	Name        string      `json:"name"`
	Type        string      `json:"type"`
	DailyVolume json.Number `json:"daily_volume"`
}

// poolListings lists every pool with its USD swap volume over the hourly
// buckets that start in the last 24 hours (osmosis_pool_volume_hourly, built
// by the dex_volume job), busiest first. The name joins the symbols of the
// pool's denoms (the denom where no metadata is configured).
func (s *Service) poolListings(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, err := s.beginJob(ctx, report.JobVolume)
	if err != nil {
		return nil, err
	}
	// The hourly buckets that start in the last 24 hours.
	since := api.BucketStart(req.Now.Add(-24*time.Hour), api.Hour)
	if since.Before(req.Now.Add(-24 * time.Hour)) {
		since = since.Add(time.Hour)
	}
	var rows []struct {
		PoolID int64    `bun:"pool_id"`
		Type   string   `bun:"type"`
		Denoms []string `bun:"denoms,array"`
		Volume string   `bun:"volume"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT p.pool_id, p.type, p.denoms, coalesce(sum(v.volume_usd), 0)::text AS volume
		FROM osmosis_known_pools p
		LEFT JOIN osmosis_pool_volume_hourly v ON v.chain_id = p.chain_id AND v.pool_id = p.pool_id AND v.hour >= ?
		WHERE p.chain_id = ?
		GROUP BY p.pool_id, p.type, p.denoms
		ORDER BY coalesce(sum(v.volume_usd), 0) DESC, p.pool_id`, since, s.market.ChainID).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("pool listings: %w", err)
	}
	out := make([]PoolListing, 0, len(rows))
	for _, r := range rows {
		names := make([]string, len(r.Denoms))
		for i, d := range r.Denoms {
			names[i] = d
			if a, ok := s.market.Assets[d]; ok && a.Symbol != "" {
				names[i] = a.Symbol
			}
		}
		out = append(out, PoolListing{QueryKey: r.PoolID, Name: strings.Join(names, "/"), Type: r.Type, DailyVolume: api.Number(r.Volume)})
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}

// PoolFees is one pool's volume and the swap fees its traders paid.
type PoolFees struct {
	PoolID         string      `json:"pool_id"`
	Volume24h      json.Number `json:"volume_24h"`
	Volume7d       json.Number `json:"volume_7d"`
	FeesSpent24h   json.Number `json:"fees_spent_24h"`
	FeesSpent7d    json.Number `json:"fees_spent_7d"`
	FeesPercentage string      `json:"fees_percentage"`
}

// PoolFeesReport is the pools fees answer.
type PoolFeesReport struct {
	LastUpdateAt int64      `json:"last_update_at"`
	Data         []PoolFees `json:"data"`
}

// poolFees reports every pool's USD volume over the hourly buckets that
// overlap the last 24 hours and 7 days, and the swap fees paid on it
// (volume × the pool's swap fee rate, to 18 decimals; pools whose rate is
// unknown show 0 and an empty fees_percentage).
// last_update_at is the time of the last indexed block.
func (s *Service) poolFees(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	w := volumeWindowsAt(req.Now.UTC())
	var rows []struct {
		PoolID int64   `bun:"pool_id"`
		Fee    *string `bun:"fee"`
		V24    string  `bun:"v24"`
		V7     string  `bun:"v7"`
		F24    *string `bun:"f24"`
		F7     *string `bun:"f7"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT p.pool_id, p.swap_fee::text AS fee,
			coalesce(sum(v.v24), 0)::text AS v24,
			coalesce(sum(v.v7), 0)::text AS v7,
			round(coalesce(sum(v.v24), 0) * p.swap_fee, 18)::text AS f24,
			round(coalesce(sum(v.v7), 0) * p.swap_fee, 18)::text AS f7
		FROM osmosis_known_pools p
		LEFT JOIN (`+poolVolumeWindows+`) v ON v.pool_id = p.pool_id
		WHERE p.chain_id = ?0
		GROUP BY p.pool_id, p.swap_fee
		ORDER BY p.pool_id`, w.args(s.market.ChainID)...).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("pool fees: %w", err)
	}
	out := PoolFeesReport{Data: make([]PoolFees, 0, len(rows))}
	if len(fresh.Chains) > 0 {
		out.LastUpdateAt = fresh.Chains[0].Time.Unix()
	}
	for _, r := range rows {
		pf := PoolFees{PoolID: fmt.Sprint(r.PoolID), Volume24h: api.Number(r.V24), Volume7d: api.Number(r.V7), FeesSpent24h: "0", FeesSpent7d: "0"}
		if r.Fee != nil {
			pf.FeesSpent24h, pf.FeesSpent7d = api.Number(*r.F24), api.Number(*r.F7)
			pf.FeesPercentage = percent(*r.Fee)
		}
		out.Data = append(out.Data, pf)
	}
	return &api.Response{Body: out, Freshness: fresh}, nil
}

// percent renders a fee rate ("0.002000") as a percentage ("0.2%") without
// going through floating point.
func percent(rate string) string {
	d, err := math.LegacyNewDecFromStr(rate)
	if err != nil {
		return ""
	}
	return string(api.Number(d.MulInt64(100).String())) + "%"
}

// LiquidityPoint is a pool's USD liquidity at the end of a UTC day.
type LiquidityPoint struct {
	Timestamp    string      `json:"timestamp"`
	LiquidityUSD json.Number `json:"liquidity_usd"`
}

// poolLiquidity lists a pool's daily USD liquidity over its history
// (osmosis_pool_liquidity_daily, built by the dex_liquidity job); an
// unknown pool is a 404.
func (s *Service) poolLiquidity(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	id, err := strconv.ParseInt(req.Params.String("pool_id"), 10, 64)
	if err != nil || id < 1 {
		return nil, problem.BadParam("pool_id", "must be a pool id (digits)")
	}
	var exists bool
	if err := api.Reader(ctx, s.db).NewRaw("SELECT EXISTS (SELECT 1 FROM osmosis_known_pools WHERE chain_id = ? AND pool_id = ?)", s.market.ChainID, id).Scan(ctx, &exists); err != nil {
		return nil, fmt.Errorf("pool %d: %w", id, err)
	}
	if !exists {
		return nil, problem.Status(http.StatusNotFound, "pool %d not found", id)
	}
	// A year is 366 points: written straight from the rows as the JSON
	// array of LiquidityPoint.
	rows, err := api.Reader(ctx, s.db).QueryContext(ctx, "SELECT day, liquidity_usd::text FROM osmosis_pool_liquidity_daily WHERE chain_id = ? AND pool_id = ? ORDER BY day",
		s.market.ChainID, id)
	if err != nil {
		return nil, fmt.Errorf("liquidity of pool %d: %w", id, err)
	}
	defer rows.Close()
	var (
		d     time.Time
		value sql.RawBytes
	)
	buf := make([]byte, 0, 4096)
	buf = append(buf, '[')
	for n := 0; rows.Next(); n++ {
		if err := rows.Scan(&d, &value); err != nil {
			return nil, fmt.Errorf("liquidity of pool %d: %w", id, err)
		}
		if n > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, `{"timestamp":"`...)
		buf = d.UTC().AppendFormat(buf, time.DateTime)
		buf = append(buf, `","liquidity_usd":`...)
		buf = append(buf, api.Number(string(value))...)
		buf = append(buf, '}')
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("liquidity of pool %d: %w", id, err)
	}
	return &api.Response{Body: json.RawMessage(append(buf, ']')), Freshness: fresh}, nil
}
