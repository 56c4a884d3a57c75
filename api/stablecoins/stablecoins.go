// Package stablecoins serves the stablecoin group from the report tables
// of the stablecoins:<chain> jobs (aggregator/stablecoins), one per
// configured EVM chain, which read the token movements and bridge flows of
// the EVM indexer (chains/evm).
package stablecoins

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	report "github.com/chainlens/chainlens/report/stablecoins"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/problem"
	"github.com/chainlens/chainlens/api/route"
	"github.com/chainlens/chainlens/config"
)

// token is a configured token of one chain.
type token struct {
	chain, address, symbol, name string
}

// Service answers the stablecoin endpoints.
type Service struct {
	db     *bun.DB
	chains []string // configured EVM chains, in config order
	tokens []token
	// cctpChains report their own CCTP flows (a flow to one of them is
	// counted from the source's record only).
	cctpChains []string
}

// New returns the service of every configured EVM chain.
func New(cfg *config.Config, db *bun.DB) *Service {
	s := &Service{db: db}
	for _, ch := range cfg.Chains {
		if !ch.IsEVM() {
			continue
		}
		s.chains = append(s.chains, ch.ID)
		if ch.CCTP != nil {
			s.cctpChains = append(s.cctpChains, ch.ID)
		}
		for _, t := range ch.Tokens {
			name := t.Name
			if name == "" {
				name = t.Symbol
			}
			s.tokens = append(s.tokens, token{ch.ID, strings.ToLower(t.Address), t.Symbol, name})
		}
	}
	return s
}

// Handlers binds the operations to the service.
func (s *Service) Handlers() map[route.ID]api.Handler {
	return map[route.ID]api.Handler{
		route.StablecoinsVolumePerToken:   s.volumePerToken,
		route.StablecoinsIssuing:          s.issuing,
		route.StablecoinsActiveSenders:    s.activeSenders,
		route.StablecoinsVolumeByCategory: s.volumeByCategory,
		route.StablecoinsWhaleAlerts:      s.whaleAlerts,
		route.StablecoinsBridgeInflow:     s.bridgeTotal(inflow),
		route.StablecoinsBridgeOutflow:    s.bridgeTotal(outflow),
		route.StablecoinsBridgeNetflow:    s.bridgeTotal(netflow),
		route.StablecoinsCrossChain:       s.crossChain,
		route.StablecoinsNetflowOverTime:  s.netflowOverTime,
		route.StablecoinsCategoryInflow:   s.categoryTotal(inflow),
		route.StablecoinsCategoryOutflow:  s.categoryTotal(outflow),
		route.StablecoinsCategoryNetflow:  s.categoryTotal(netflow),
	}
}

// Supported are the chain_id values of the group (route.scChains).
func Supported() []string {
	for _, op := range route.Table() {
		if op.ID() == route.StablecoinsBridgeInflow {
			for _, p := range op.Params {
				if p.Name == "chain_ids" {
					return p.Enum
				}
			}
		}
	}
	return nil
}

// query is what every windowed request selects.
type query struct {
	chains  []string      // chains read (the chain_id filter, else all configured)
	tokens  []token       // the selected chains' tokens (the token_symbol filter, else all)
	from    time.Time     // window start, inclusive (a whole minute)
	to      time.Time     // window end (now)
	bucket  string        // time_agg as a Postgres interval, over-time endpoints
	step    time.Duration // time_agg
	fresh   api.Freshness
	byAddr  map[string]token
	allSelf []string // every configured chain (bridge dedupe)
}

var ranges = map[string]time.Duration{"10m": 10 * time.Minute, "30m": 30 * time.Minute, "1h": time.Hour,
	"3h": 3 * time.Hour, "6h": 6 * time.Hour, "24h": 24 * time.Hour}

var buckets = func() map[string]time.Duration {
	out := map[string]time.Duration{}
	for name, secs := range report.Buckets {
		out[name] = time.Duration(secs) * time.Second
	}
	return out
}()

// begin resolves the common parameters and the freshness of the chains
// read: 503 when no EVM chain (or not the requested one) is indexed, or
// when none has reached the window yet. The chain_id filter selects the
// chain read unless otherSide (bridge endpoints: it filters the other
// side of each flow, so every chain is read).
func (s *Service) begin(ctx context.Context, req *api.Request, otherSide bool) (*query, error) {
	q := &query{byAddr: map[string]token{}, allSelf: s.chains, to: req.Now.UTC()}
	if len(s.chains) == 0 {
		return nil, api.NoChainOfKind("evm")
	}
	q.chains = s.chains
	if c := req.Params.Optional("chain_id"); c != "" && !otherSide {
		if !slices.Contains(s.chains, c) {
			return nil, fmt.Errorf("chain %s is not indexed here: %w", c, problem.ErrNotIndexed)
		}
		q.chains = []string{c}
	}
	sym := req.Params.Optional("token_symbol")
	for _, t := range s.tokens {
		if slices.Contains(q.chains, t.chain) && (sym == "" || t.symbol == sym) {
			q.tokens = append(q.tokens, t)
			q.byAddr[t.chain+"/"+t.address] = t
		}
	}
	if r, ok := ranges[req.Params.Optional("time_range")]; ok {
		q.from = q.to.Add(-r).Truncate(time.Minute)
		if q.from.Before(q.to.Add(-r)) {
			q.from = q.from.Add(time.Minute) // buckets whose start is in the window
		}
	}
	if d, ok := buckets[req.Params.Optional("time_agg")]; ok {
		q.step, q.bucket = d, fmt.Sprintf("%d seconds", int64(d/time.Second))
	}
	latest := time.Time{}
	named := req.Params.Optional("chain_id") != "" && !otherSide
	var missing error
	for _, c := range q.chains {
		st, err := api.JobHeight(ctx, api.Reader(ctx, s.db), c, report.Job(c))
		if errors.Is(err, problem.ErrNotIndexed) {
			// A chain the request names must be there; of all chains,
			// those not aggregated yet are left out.
			missing = fmt.Errorf("chain %s: the %s job has not aggregated a block yet: %w", c, report.JobPrefix+c, problem.ErrNotIndexed)
			if named {
				return nil, missing
			}
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("freshness of %s: %w", c, err)
		}
		q.fresh.Chains = append(q.fresh.Chains, st)
		if st.Time.After(latest) {
			latest = st.Time
		}
	}
	if len(q.fresh.Chains) == 0 {
		return nil, missing
	}
	if !q.from.IsZero() && latest.Before(q.from) {
		return nil, fmt.Errorf("the window starts at %s, after the last aggregated block (%s): %w",
			q.from.Format(time.RFC3339), latest.UTC().Format(time.RFC3339), problem.ErrNotIndexed)
	}
	return q, nil
}

// tok returns the configured token of a chain and address.
func (q *query) tok(chain, address string) token {
	if t, ok := q.byAddr[chain+"/"+address]; ok {
		return t
	}
	return token{chain: chain, address: address, symbol: address, name: address}
}

// tk is the SQL of a CTE "tk(chain_id, token, symbol, name)" of the
// selected tokens, and its arguments.
func (q *query) tk() (string, []any) {
	var c, a, sy, n []string
	for _, t := range q.tokens {
		c, a, sy, n = append(c, t.chain), append(a, t.address), append(sy, t.symbol), append(n, t.name)
	}
	return `tk AS (SELECT * FROM unnest(?::text[], ?::text[], ?::text[], ?::text[]) AS t(chain_id, token, symbol, name))`,
		[]any{pgdialect.Array(c), pgdialect.Array(a), pgdialect.Array(sy), pgdialect.Array(n)}
}

// windowBuckets lists the buckets (time_agg) of the window that have
// data to show, oldest first: a bucket belongs to the window when its
// start does; they run from the bucket of the first indexed block of the
// chains read (when later) to the bucket of the newest aggregated block
// (when earlier than the window's end). None before anything is indexed.
func (s *Service) windowBuckets(ctx context.Context, q *query) ([]time.Time, error) {
	var ids []string
	var newest time.Time
	for _, c := range q.fresh.Chains {
		ids = append(ids, c.ChainID)
		if c.Time.After(newest) {
			newest = c.Time
		}
	}
	var first sql.NullTime
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT min((SELECT time FROM evm_blocks b WHERE b.chain_id = c ORDER BY height LIMIT 1)) FROM unnest(?::text[]) c`,
		pgdialect.Array(ids)).Scan(ctx, &first); err != nil {
		return nil, fmt.Errorf("first indexed blocks: %w", err)
	}
	if !first.Valid {
		return nil, nil
	}
	if q.step <= 0 {
		return nil, fmt.Errorf("no bucket size (time_agg)")
	}
	b := q.from.Truncate(q.step)
	if b.Before(q.from) {
		b = b.Add(q.step)
	}
	if f := first.Time.UTC().Truncate(q.step); f.After(b) {
		b = f
	}
	last := q.to
	if newest.Before(last) {
		last = newest.UTC()
	}
	var bs []time.Time
	for ; !b.After(last); b = b.Add(q.step) {
		bs = append(bs, b)
	}
	return bs, nil
}

// perBucket makes one row per bucket (mk gets the bucket's label) and the
// index of each bucket start's row.
func perBucket[T any](bs []time.Time, mk func(label string) T) ([]T, map[time.Time]int) {
	rows := make([]T, len(bs))
	at := make(map[time.Time]int, len(bs))
	for i, b := range bs {
		rows[i] = mk(label(b))
		at[b] = i
	}
	return rows, at
}

// label renders a bucket start.
func label(t time.Time) string { return t.UTC().Format(time.DateTime) }

// bucketExpr is the SQL of a row's bucket: time_agg buckets aligned to
// whole UTC minutes since the epoch (so 1h buckets start on the hour).
const bucketExpr = `date_bin(?::interval, minute, timestamptz '1970-01-01 00:00:00+00')`

// volumePerToken is the transfer volume per token symbol, descending.
func (s *Service) volumePerToken(ctx context.Context, req *api.Request) (*api.Response, error) {
	q, err := s.begin(ctx, req, false)
	if err != nil {
		return nil, err
	}
	cte, args := q.tk()
	var rows []struct {
		Name   string `bun:"name"`
		Symbol string `bun:"symbol"`
		Volume string `bun:"volume"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`WITH `+cte+`
		SELECT min(tk.name) AS name, tk.symbol, sum(m.volume_usd)::text AS volume
		FROM stablecoin_minute m JOIN tk USING (chain_id, token)
		WHERE m.minute >= ? AND m.minute <= ? GROUP BY tk.symbol HAVING sum(m.transfers) > 0
		ORDER BY sum(m.volume_usd) DESC, tk.symbol`,
		append(args, q.from, q.to)...).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("volume per token: %w", err)
	}
	type out struct {
		TokenName   string      `json:"token_name"`
		TokenSymbol string      `json:"token_symbol"`
		TotalAmount json.Number `json:"total_amount"`
	}
	body := make([]out, 0, len(rows))
	for _, r := range rows {
		body = append(body, out{r.Name, r.Symbol, api.Number(r.Volume)})
	}
	return &api.Response{Body: body, Freshness: q.fresh}, nil
}

// issuing is minted and burned USD per bucket and token symbol.
func (s *Service) issuing(ctx context.Context, req *api.Request) (*api.Response, error) {
	q, err := s.begin(ctx, req, false)
	if err != nil {
		return nil, err
	}
	cte, args := q.tk()
	var rows []struct {
		Bucket time.Time `bun:"bucket"`
		Name   string    `bun:"name"`
		Symbol string    `bun:"symbol"`
		Minted string    `bun:"minted"`
		Burned string    `bun:"burned"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`WITH `+cte+`
		SELECT `+bucketExpr+` AS bucket, min(tk.name) AS name, tk.symbol,
			sum(m.minted_usd)::text AS minted, sum(m.burned_usd)::text AS burned
		FROM stablecoin_minute m JOIN tk USING (chain_id, token)
		WHERE m.minute >= ? AND m.minute <= ?
		GROUP BY 1, tk.symbol HAVING sum(m.minted_usd) > 0 OR sum(m.burned_usd) > 0 ORDER BY 1, tk.symbol`,
		append(append(args, q.bucket), q.from, q.to)...).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("issuing: %w", err)
	}
	type out struct {
		Labels      string      `json:"labels"`
		TokenName   string      `json:"token_name"`
		TokenSymbol string      `json:"token_symbol"`
		Minted      json.Number `json:"minted"`
		Burned      json.Number `json:"burned"`
	}
	// One row per bucket and selected token symbol, 0 when nothing was
	// minted or burned.
	bs, err := s.windowBuckets(ctx, q)
	if err != nil {
		return nil, err
	}
	names := map[string]string{}
	for _, t := range q.tokens {
		if n, ok := names[t.symbol]; !ok || t.name < n {
			names[t.symbol] = t.name
		}
	}
	symbols := slices.Sorted(maps.Keys(names))
	type key struct {
		bucket time.Time
		symbol string
	}
	got := map[key]int{}
	for i, r := range rows {
		got[key{r.Bucket.UTC(), r.Symbol}] = i
	}
	body := make([]out, 0, len(bs)*len(symbols))
	for _, b := range bs {
		for _, sym := range symbols {
			o := out{label(b), names[sym], sym, "0", "0"}
			if i, ok := got[key{b, sym}]; ok {
				o.Minted, o.Burned = api.Number(rows[i].Minted), api.Number(rows[i].Burned)
			}
			body = append(body, o)
		}
	}
	return &api.Response{Body: body, Freshness: q.fresh}, nil
}

// activeSenders is the distinct senders per bucket and token contract.
func (s *Service) activeSenders(ctx context.Context, req *api.Request) (*api.Response, error) {
	q, err := s.begin(ctx, req, false)
	if err != nil {
		return nil, err
	}
	cte, args := q.tk()
	var rows []struct {
		Bucket  time.Time `bun:"bucket"`
		Chain   string    `bun:"chain_id"`
		Token   string    `bun:"token"`
		Senders int64     `bun:"senders"`
	}
	// The job keeps each bucket's distinct senders; the window's buckets
	// are those that start in it (windowBuckets). A bucket holds every
	// minute aggregated, so when aggregated blocks are later than the
	// request's now (a clock behind the chain's), the bucket of now is
	// counted from its minutes through now instead.
	agg := int64(q.step / time.Second)
	cut := q.to.Add(time.Nanosecond) // every bucket that starts by now
	for _, c := range q.fresh.Chains {
		if c.Time.After(q.to) {
			cut = time.Unix(q.to.Unix()/agg*agg, 0).UTC()
		}
	}
	sqlText := `WITH ` + cte + `
		SELECT m.bucket, m.chain_id, m.token, m.senders
		FROM stablecoin_senders_bucket m JOIN tk USING (chain_id, token)
		WHERE m.agg_s = ? AND m.bucket >= ? AND m.bucket < ?`
	qargs := append(args, agg, q.from, cut)
	if !cut.After(q.to) {
		sqlText += `
		UNION ALL
		SELECT ?::timestamptz, m.chain_id, m.token, count(DISTINCT m.sender)
		FROM stablecoin_senders_minute m JOIN tk USING (chain_id, token)
		WHERE m.minute >= ? AND m.minute <= ? GROUP BY 2, 3`
		qargs = append(qargs, cut, cut, q.to)
	}
	if err := api.Reader(ctx, s.db).NewRaw(sqlText+`
		ORDER BY 1, 4 DESC, 2, 3`, qargs...).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("active senders: %w", err)
	}
	type entry struct {
		ActiveSenders int64  `json:"active_senders"`
		TokenName     string `json:"token_name"`
		TokenSymbol   string `json:"token_symbol"`
		TokenDenom    string `json:"token_denom"`
	}
	type out struct {
		Labels        string  `json:"labels"`
		ActiveSenders []entry `json:"active_senders"`
	}
	// One row per bucket, listing the tokens that had senders in it (most
	// first); an empty list when none had.
	bs, err := s.windowBuckets(ctx, q)
	if err != nil {
		return nil, err
	}
	body, at := perBucket(bs, func(l string) out { return out{Labels: l, ActiveSenders: []entry{}} })
	for _, r := range rows {
		i, ok := at[r.Bucket.UTC()]
		if !ok {
			continue // outside the window's buckets
		}
		t := q.tok(r.Chain, r.Token)
		body[i].ActiveSenders = append(body[i].ActiveSenders, entry{r.Senders, t.name, t.symbol, t.address})
	}
	return &api.Response{Body: body, Freshness: q.fresh}, nil
}

// categories are the category values, in the order of the interface.
var categories = []string{"dex", "cex", "bridge", "lending", "mint_burn", "other"}

// volumeByCategory is the volume attributed to each category per bucket.
func (s *Service) volumeByCategory(ctx context.Context, req *api.Request) (*api.Response, error) {
	q, err := s.begin(ctx, req, false)
	if err != nil {
		return nil, err
	}
	var rows []struct {
		Bucket   time.Time `bun:"bucket"`
		Category string    `bun:"category"`
		Volume   string    `bun:"volume"`
	}
	cte, args := q.tk()
	if err := api.Reader(ctx, s.db).NewRaw(`WITH `+cte+`
		SELECT `+bucketExpr+` AS bucket, m.category, sum(m.volume_usd)::text AS volume
		FROM stablecoin_category_minute m JOIN tk USING (chain_id, token)
		WHERE m.minute >= ? AND m.minute <= ?
		GROUP BY 1, 2 HAVING sum(m.volume_usd) > 0 ORDER BY 1, sum(m.volume_usd) DESC, 2`,
		append(append(args, q.bucket), q.from, q.to)...).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("volume by category: %w", err)
	}
	type entry struct {
		Category    string      `json:"category"`
		TotalVolume json.Number `json:"total_volume"`
	}
	type out struct {
		Labels           string  `json:"labels"`
		VolumeByCategory []entry `json:"volume_by_category"`
	}
	// One row per bucket, listing the categories with volume in it
	// (largest first); an empty list when none had.
	bs, err := s.windowBuckets(ctx, q)
	if err != nil {
		return nil, err
	}
	body, at := perBucket(bs, func(l string) out { return out{Labels: l, VolumeByCategory: []entry{}} })
	for _, r := range rows {
		i, ok := at[r.Bucket.UTC()]
		if !ok {
			continue // outside the window's buckets
		}
		body[i].VolumeByCategory = append(body[i].VolumeByCategory, entry{r.Category, api.Number(r.Volume)})
	}
	return &api.Response{Body: body, Freshness: q.fresh}, nil
}

// whaleAlerts is the newest movements of at least report.WhaleUSD.
func (s *Service) whaleAlerts(ctx context.Context, req *api.Request) (*api.Response, error) {
	q, err := s.begin(ctx, req, false)
	if err != nil {
		return nil, err
	}
	var rows []struct {
		Chain     string    `bun:"chain_id"`
		Height    int64     `bun:"height"`
		Time      time.Time `bun:"time"`
		Token     string    `bun:"token"`
		Sender    string    `bun:"sender"`
		Recipient string    `bun:"recipient"`
		Amount    string    `bun:"amount"`
	}
	cte, args := q.tk()
	if err := api.Reader(ctx, s.db).NewRaw(`WITH `+cte+`
		SELECT w.chain_id, w.height, w.time, w.token, w.sender, w.recipient, w.amount_usd::text AS amount
		FROM stablecoin_whales w JOIN tk USING (chain_id, token)
		ORDER BY w.time DESC, w.height DESC, w.log_index DESC LIMIT ?`,
		append(args, req.Params.Int("limit"))...).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("whale alerts: %w", err)
	}
	type out struct {
		ChainID        string      `json:"chain_id"`
		BlockTimestamp string      `json:"block_timestamp"`
		BlockHeight    string      `json:"block_height"`
		TokenDenom     string      `json:"token_denom"`
		TokenSymbol    string      `json:"token_symbol"`
		TokenName      string      `json:"token_name"`
		Sender         string      `json:"sender"`
		Receiver       string      `json:"receiver"`
		AmountUSD      json.Number `json:"amount_usd"`
	}
	body := make([]out, 0, len(rows))
	for _, r := range rows {
		t := q.tok(r.Chain, r.Token)
		body = append(body, out{r.Chain, label(r.Time), fmt.Sprint(r.Height), t.address, t.symbol, t.name, r.Sender, r.Recipient,
			api.Number(r.Amount)})
	}
	return &api.Response{Body: body, Freshness: q.fresh}, nil
}
