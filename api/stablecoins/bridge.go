package stablecoins

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/chainlens/chainlens/api"
)

// measure is what a total endpoint sums.
type measure int

const (
	inflow measure = iota
	outflow
	netflow
)

// flowsCTE is the SQL of "flows(bucket, src, dst, usd)": every bridge flow
// of the selected tokens in the window, once. A flow between two chains
// that both report their CCTP flows is seen twice (burned on one, minted
// on the other): it counts as the source chain's outflow, and the
// destination's record of it is dropped. An empty remote chain is unknown.
// Arguments: tk's, then the bucket interval, the window and the chains
// whose CCTP flows are indexed.
const flowsCTE = `raw AS (
		SELECT ` + bucketExpr + ` AS bucket, b.chain_id, b.direction, b.remote_chain, b.amount_usd
		FROM stablecoin_bridge_minute b JOIN tk USING (chain_id, token)
		WHERE b.minute >= ? AND b.minute <= ?),
	flows AS (
		SELECT bucket,
			CASE WHEN direction = 'out' THEN chain_id ELSE remote_chain END AS src,
			CASE WHEN direction = 'out' THEN remote_chain ELSE chain_id END AS dst,
			amount_usd AS usd
		FROM raw WHERE NOT (direction = 'in' AND remote_chain = ANY(?::text[])))`

// flowArgs are the arguments of tk and flowsCTE.
func (s *Service) flowArgs(q *query, bucket string) []any {
	_, args := q.tk()
	if bucket == "" {
		bucket = "100000 days" // one bucket: date_bin takes no months or years
	}
	return append(args, bucket, q.from, q.to, pgdialect.Array(s.cctpChains))
}

// requestedChains is the chain_ids filter, by default every supported chain.
func requestedChains(req *api.Request) []string {
	if cs := req.Params.Strings("chain_ids"); len(cs) > 0 {
		return cs
	}
	return Supported()
}

// bridgeTotal serves total-inflow, -outflow and -netflow: one row per
// requested chain, largest first. chain_id keeps the flows whose other
// side is that chain.
func (s *Service) bridgeTotal(m measure) api.Handler {
	return func(ctx context.Context, req *api.Request) (*api.Response, error) {
		q, err := s.begin(ctx, req, true)
		if err != nil {
			return nil, err
		}
		want := requestedChains(req)
		other := req.Params.String("chain_id")
		cte, _ := q.tk()
		var rows []struct {
			Chain string `bun:"chain"`
			In    string `bun:"inflow"`
			Out   string `bun:"outflow"`
		}
		if err := api.Reader(ctx, s.db).NewRaw(`WITH `+cte+`, `+flowsCTE+`,
			want AS (SELECT unnest(?::text[]) AS chain)
			SELECT want.chain,
				(SELECT coalesce(sum(usd), 0) FROM flows WHERE dst = want.chain AND (? = '' OR src = ?))::text AS inflow,
				(SELECT coalesce(sum(usd), 0) FROM flows WHERE src = want.chain AND (? = '' OR dst = ?))::text AS outflow
			FROM want`, append(s.flowArgs(q, ""), pgdialect.Array(want), other, other, other, other)...).Scan(ctx, &rows); err != nil {
			return nil, fmt.Errorf("bridge totals: %w", err)
		}
		type out struct {
			ChainID     string      `json:"chain_id"`
			TotalAmount json.Number `json:"total_amount"`
		}
		body := make([]out, 0, len(rows))
		for _, r := range rows {
			v := r.In
			switch m {
			case outflow:
				v = r.Out
			case netflow:
				v = sub(r.In, r.Out)
			}
			body = append(body, out{r.Chain, api.Number(v)})
		}
		slices.SortStableFunc(body, func(a, b out) int { return cmpDecimal(string(b.TotalAmount), string(a.TotalAmount)) })
		return &api.Response{Body: body, Freshness: q.fresh}, nil
	}
}

// crossChain is the bridged value per ordered chain pair, largest first:
// pairs with a requested chain on either side (chain_id: on one side).
func (s *Service) crossChain(ctx context.Context, req *api.Request) (*api.Response, error) {
	q, err := s.begin(ctx, req, true)
	if err != nil {
		return nil, err
	}
	want := requestedChains(req)
	other := req.Params.String("chain_id")
	cte, _ := q.tk()
	var rows []struct {
		Src    string `bun:"src"`
		Dst    string `bun:"dst"`
		Amount string `bun:"amount"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`WITH `+cte+`, `+flowsCTE+`
		SELECT src, dst, sum(usd)::text AS amount FROM flows
		WHERE src <> '' AND dst <> '' AND (src = ANY(?::text[]) OR dst = ANY(?::text[])) AND (? = '' OR src = ? OR dst = ?)
		GROUP BY src, dst ORDER BY sum(usd) DESC, src, dst`,
		append(s.flowArgs(q, ""), pgdialect.Array(want), pgdialect.Array(want), other, other, other)...).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("cross-chain volume: %w", err)
	}
	type out struct {
		Src         string      `json:"src_chain_id"`
		Dst         string      `json:"dst_chain_id"`
		TotalAmount json.Number `json:"total_amount"`
	}
	body := make([]out, 0, len(rows))
	for _, r := range rows {
		body = append(body, out{r.Src, r.Dst, api.Number(r.Amount)})
	}
	return &api.Response{Body: body, Freshness: q.fresh}, nil
}

// netflowOverTime is, per bucket of the window (from the bucket of the
// first indexed block of the chains read to the one of the newest
// aggregated block; 0 without flows), the net bridged value of each
// requested chain and the total over every supported chain.
func (s *Service) netflowOverTime(ctx context.Context, req *api.Request) (*api.Response, error) {
	q, err := s.begin(ctx, req, true)
	if err != nil {
		return nil, err
	}
	want := requestedChains(req)
	other := req.Params.String("chain_id")
	cte, _ := q.tk()
	var rows []struct {
		Bucket time.Time `bun:"bucket"`
		Chain  string    `bun:"chain"`
		Net    string    `bun:"net"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`WITH `+cte+`, `+flowsCTE+`,
		f AS (SELECT * FROM flows WHERE ? = '' OR src = ? OR dst = ?),
		side AS (SELECT bucket, dst AS chain, usd FROM f UNION ALL SELECT bucket, src, -usd FROM f)
		SELECT bucket, chain, sum(usd)::text AS net FROM side WHERE chain = ANY(?::text[])
		GROUP BY bucket, chain ORDER BY bucket, chain`,
		append(s.flowArgs(q, q.bucket), other, other, other, pgdialect.Array(Supported()))...).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("netflow over time: %w", err)
	}
	cols := append(slices.Clone(want), "total")
	bs, err := s.windowBuckets(ctx, q)
	if err != nil {
		return nil, err
	}
	body, at := perBucket(bs, func(l string) api.SeriesRow {
		vals := make([]json.Number, len(cols))
		for i := range vals {
			vals[i] = "0"
		}
		return api.SeriesRow{Labels: l, Columns: cols, Values: vals}
	})
	for _, r := range rows {
		i, ok := at[r.Bucket.UTC()]
		if !ok {
			continue // outside the window's buckets
		}
		row := &body[i]
		if k := slices.Index(want, r.Chain); k >= 0 {
			row.Values[k] = api.Number(r.Net)
		}
		row.Values[len(cols)-1] = api.Number(add(string(row.Values[len(cols)-1]), r.Net))
	}
	return &api.Response{Body: body, Freshness: q.fresh}, nil
}

// categoryTotal serves category/total-inflow, -outflow and -netflow: one
// row per requested category, largest first.
func (s *Service) categoryTotal(m measure) api.Handler {
	return func(ctx context.Context, req *api.Request) (*api.Response, error) {
		q, err := s.begin(ctx, req, false)
		if err != nil {
			return nil, err
		}
		want := req.Params.Strings("category")
		if len(want) == 0 {
			want = categories
		}
		expr := map[measure]string{inflow: "c.inflow_usd", outflow: "c.outflow_usd", netflow: "c.inflow_usd - c.outflow_usd"}[m]
		cte, args := q.tk()
		var rows []struct {
			Category string `bun:"category"`
			Amount   string `bun:"amount"`
		}
		if err := api.Reader(ctx, s.db).NewRaw(`WITH `+cte+`, want AS (SELECT unnest(?::text[]) AS category)
			SELECT want.category, coalesce((SELECT sum(`+expr+`) FROM stablecoin_category_minute c JOIN tk USING (chain_id, token)
				WHERE c.category = want.category AND c.minute >= ? AND c.minute <= ?), 0)::text AS amount
			FROM want`, append(args, pgdialect.Array(want), q.from, q.to)...).Scan(ctx, &rows); err != nil {
			return nil, fmt.Errorf("category totals: %w", err)
		}
		type out struct {
			Category    string      `json:"category"`
			TotalAmount json.Number `json:"total_amount"`
		}
		body := make([]out, 0, len(rows))
		for _, r := range rows {
			body = append(body, out{r.Category, api.Number(r.Amount)})
		}
		slices.SortStableFunc(body, func(a, b out) int { return cmpDecimal(string(b.TotalAmount), string(a.TotalAmount)) })
		return &api.Response{Body: body, Freshness: q.fresh}, nil
	}
}
