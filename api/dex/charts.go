package dex

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	report "github.com/chainlens/chainlens/report/dex"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/problem"
)

// maxBars is the most bars a token chart returns (the latest ones).
const maxBars = 1000

// TokenBar is one bar of the token chart: USD prices and USD volume.
type TokenBar struct {
	Time   int64       `json:"time"`
	Open   json.Number `json:"open"`
	Close  json.Number `json:"close"`
	High   json.Number `json:"high"`
	Low    json.Number `json:"low"`
	Volume json.Number `json:"volume"`
}

// tokenChart lists the latest (at most 1000) tf-minute bars of an asset
// from osmosis_asset_candles (dex_candles job), oldest first; the bar that
// contains the request time is included only with realtime=true.
func (s *Service) tokenChart(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	asset := req.Params.String("asset")
	denom := s.denomOf(asset)
	tf := int(req.Params.Int("tf"))
	now := req.Now.UTC()
	cond := "bucket < ?" // bars closed before the current one
	if req.Params.Bool("realtime") {
		cond = "bucket <= ?"
	}
	body, n, err := s.barsJSON(ctx, `SELECT concat('{"time":', floor(extract(epoch FROM bucket))::bigint, ',"open":', trim_scale(open),
			',"close":', trim_scale(close), ',"high":', trim_scale(high), ',"low":', trim_scale(low), ',"volume":', trim_scale(volume_usd), '}')
		FROM (SELECT * FROM osmosis_asset_candles WHERE chain_id = ? AND denom = ? AND tf = ? AND `+cond+`
			ORDER BY bucket DESC LIMIT ?) b ORDER BY bucket`, s.market.ChainID, denom, tf, report.BarStart(now, tf), maxBars)
	if err != nil {
		return nil, fmt.Errorf("bars of %s: %w", denom, err)
	}
	// An asset is known when it is configured or has bars. Only an answer
	// without bars asks the second (the chart is the hottest read: a
	// statement less for every other answer).
	if _, configured := s.market.Assets[denom]; !configured && n == 0 {
		var known bool
		if err := api.Reader(ctx, s.db).NewRaw("SELECT EXISTS (SELECT 1 FROM osmosis_asset_candles WHERE chain_id = ? AND tf = ? AND denom = ?)",
			s.market.ChainID, report.Month, denom).Scan(ctx, &known); err != nil {
			return nil, fmt.Errorf("bars of %s: %w", denom, err)
		}
		if !known {
			return nil, problem.Status(http.StatusNotFound, "%s symbol not found", asset)
		}
	}
	return &api.Response{Body: body, Freshness: fresh}, nil
}

// PairBar is one bar of the pair chart: asset_out per one asset_in.
type PairBar struct {
	Time  int64       `json:"time"`
	Open  json.Number `json:"open"`
	Close json.Number `json:"close"`
	High  json.Number `json:"high"`
	Low   json.Number `json:"low"`
}

// pairRanges are the chart ranges: their length (0: all history) and bar size.
var pairRanges = map[string]struct {
	span time.Duration
	tf   int
}{
	"1h":  {time.Hour, 1},
	"1d":  {24 * time.Hour, 15},
	"7d":  {7 * 24 * time.Hour, 60},
	"1mo": {30 * 24 * time.Hour, 240},
	"1y":  {365 * 24 * time.Hour, 1440},
	"all": {0, report.Week},
}

// pairChart lists the bars of a pool's pair (osmosis_pair_candles, dex_candles
// job) that start in the range ending at the request time, oldest first.
// An unknown pool or an asset not in the pool is a 404.
func (s *Service) pairChart(ctx context.Context, req *api.Request) (*api.Response, error) {
	fresh, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	id, err := strconv.ParseInt(req.Params.String("pool_id"), 10, 64)
	if err != nil || id < 1 {
		return nil, problem.BadParam("pool_id", "must be a pool id (digits)")
	}
	var pools []struct {
		Denoms []string `bun:"denoms,array"`
	}
	if err := api.Reader(ctx, s.db).NewRaw("SELECT denoms FROM osmosis_known_pools WHERE chain_id = ? AND pool_id = ?", s.market.ChainID, id).Scan(ctx, &pools); err != nil {
		return nil, fmt.Errorf("pool %d: %w", id, err)
	}
	if len(pools) == 0 {
		return nil, problem.Status(http.StatusNotFound, "pool %d not found", id)
	}
	denoms := pools[0].Denoms
	var pair [2]string
	for i, name := range []string{"asset_in", "asset_out"} {
		v := req.Params.String(name)
		d := v
		if req.Params.String("asset_type") == "symbol" {
			d = s.denomOfSymbol(v)
		}
		if !slices.Contains(denoms, d) {
			return nil, problem.Status(http.StatusNotFound, "%s %s not found in pool %d", name, v, id)
		}
		pair[i] = d
	}
	if pair[0] == pair[1] {
		return nil, problem.BadParam("asset_out", "must differ from asset_in")
	}
	rg := pairRanges[req.Params.String("range")]
	now := req.Now.UTC()
	from := time.Time{}
	if rg.span > 0 {
		from = report.BarStart(now.Add(-rg.span), rg.tf)
	}
	body, _, err := s.barsJSON(ctx, `SELECT concat('{"time":', floor(extract(epoch FROM bucket))::bigint, ',"open":', trim_scale(open),
			',"close":', trim_scale(close), ',"high":', trim_scale(high), ',"low":', trim_scale(low), '}')
		FROM osmosis_pair_candles WHERE chain_id = ? AND pool_id = ? AND base = ? AND quote = ? AND tf = ? AND bucket >= ? AND bucket <= ?
		ORDER BY bucket`, s.market.ChainID, id, pair[0], pair[1], rg.tf, from, now)
	if err != nil {
		return nil, fmt.Errorf("bars of pool %d: %w", id, err)
	}
	return &api.Response{Body: body, Freshness: fresh}, nil
}

// barsJSON renders the rows of q, each one bar's JSON object (a TokenBar or
// a PairBar, rendered by Postgres: numbers by trim_scale, which drops the
// trailing zeros as Number does), as a JSON array. A chart is up to 1000
// bars: one text column per bar instead of six keeps the driver's work
// small. It also returns the number of bars.
func (s *Service) barsJSON(ctx context.Context, q string, args ...any) (json.RawMessage, int, error) {
	rows, err := api.Reader(ctx, s.db).QueryContext(ctx, q, args...)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var bar sql.RawBytes
	buf := make([]byte, 0, 4096)
	buf = append(buf, '[')
	n := 0
	for ; rows.Next(); n++ {
		if err := rows.Scan(&bar); err != nil {
			return nil, 0, err
		}
		if n > 0 {
			buf = append(buf, ',')
		}
		buf = append(buf, bar...)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, err
	}
	return append(buf, ']'), n, nil
}

// denomOfSymbol resolves a configured symbol (case-insensitive) to its
// denom; anything else is returned unchanged.
func (s *Service) denomOfSymbol(symbol string) string {
	for d, a := range s.market.Assets {
		if a.Symbol != "" && strings.EqualFold(a.Symbol, symbol) {
			return d
		}
	}
	return symbol
}
