// Package dex2 serves the second dex chain group (Neutron x/dex) from the
// report tables of the dex2 job (aggregator/dex2), which reads the tick
// updates of the neutron adapter (chains/neutron).
//
// Tick indexes are given in the orientation of the path: 1.0001^index is
// the price of denom0 in denom1. A reserve of denom0 sitting at tick t
// (taker to maker, as the chain keys it) is at index t; a reserve of
// denom1 at -t. A fill's index is that of the reserve it took.
package dex2

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	report "github.com/chainlens/chainlens/report/dex2"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/problem"
	"github.com/chainlens/chainlens/api/route"
	"github.com/chainlens/chainlens/config"
)

// Service answers the dex2 endpoints from the neutron chain's reports.
type Service struct {
	db      *bun.DB
	chainID string
	ok      bool
}

// New returns the service of the first configured chain of kind neutron;
// without one every endpoint answers 503.
func New(cfg *config.Config, db *bun.DB) *Service {
	ch, ok := report.Chain(cfg)
	return &Service{db: db, chainID: ch.ID, ok: ok}
}

// Handlers binds the operations to the service.
func (s *Service) Handlers() map[route.ID]api.Handler {
	return map[route.ID]api.Handler{
		route.Dex2Pairs:      s.pairs,
		route.Dex2Liquidity:  s.liquidity,
		route.Dex2Price:      s.price,
		route.Dex2Trades:     s.trades,
		route.Dex2SwapVolume: s.swapVolume,
		route.Dex2Volume:     s.volume,
	}
}

// state is the height the dex2 job has aggregated to and its block time.
type state struct {
	height int64
	time   time.Time
	fresh  api.Freshness
}

func (s *Service) begin(ctx context.Context) (state, error) {
	if !s.ok {
		return state{}, api.NoChainOfKind("neutron")
	}
	h, err := api.JobHeight(ctx, api.Reader(ctx, s.db), s.chainID, report.Job)
	if err != nil {
		return state{}, err
	}
	return state{height: h.Height, time: h.Time, fresh: api.Freshness{Chains: []api.ChainHeight{h}}}, nil
}

// reaches answers 503 for a range that starts after the last aggregated
// block: the indexer has not reached it yet.
func (st state) reaches(from time.Time) error {
	if from.After(st.time) {
		return fmt.Errorf("the range starts at %s, after the last aggregated block (%s): %w",
			from.UTC().Format(time.RFC3339), st.time.UTC().Format(time.RFC3339), problem.ErrNotIndexed)
	}
	return nil
}

// column describes one column of data.
type column struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Units string `json:"units,omitempty"`
}

// envelope is the answer of the /dex endpoints.
type envelope struct {
	Data   any      `json:"data"`
	Meta   []column `json:"meta"`
	Height string   `json:"height"`
	Time   string   `json:"time,omitempty"`
}

func (st state) envelope(data any, meta ...column) *api.Response {
	return &api.Response{Body: envelope{Data: data, Meta: meta, Height: strconv.FormatInt(st.height, 10),
		Time: st.time.Format(time.RFC3339Nano)}, Freshness: st.fresh}
}

// rowTime renders a row time.
func rowTime(t time.Time) string { return t.UTC().Format(time.DateTime) }

// pair returns the path's denoms and the canonical (sorted) pair.
func pair(req *api.Request) (d0, d1, token0, token1 string, err error) {
	d0, d1 = req.Params.String("denom0"), req.Params.String("denom1")
	if d0 == d1 {
		return "", "", "", "", problem.BadParam("denom1", "must differ from denom0")
	}
	token0, token1 = d0, d1
	if token1 < token0 {
		token0, token1 = token1, token0
	}
	return d0, d1, token0, token1, nil
}

// pairs lists every pair that ever had liquidity.
func (s *Service) pairs(ctx context.Context, req *api.Request) (*api.Response, error) {
	st, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	var rows []struct {
		Token0 string    `bun:"token0"`
		Token1 string    `bun:"token1"`
		CH     int64     `bun:"created_height"`
		CT     time.Time `bun:"created_time"`
		UH     int64     `bun:"updated_height"`
		UT     time.Time `bun:"updated_time"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT token0, token1, created_height, created_time, updated_height, updated_time FROM dex2_pairs
		WHERE chain_id = ? ORDER BY created_height, token0, token1`, s.chainID).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("pairs: %w", err)
	}
	type out struct {
		Token0 string `json:"token_0"`
		Token1 string `json:"token_1"`
		CH     string `json:"created_at_height"`
		UH     string `json:"updated_at_height"`
		CT     string `json:"created_at"`
		UT     string `json:"updated_at"`
	}
	data := make([]out, 0, len(rows))
	for _, r := range rows {
		data = append(data, out{r.Token0, r.Token1, strconv.FormatInt(r.CH, 10), strconv.FormatInt(r.UH, 10), rowTime(r.CT), rowTime(r.UT)})
	}
	// The pairs envelope has no time member.
	meta := []column{{Name: "token_0", Type: "string"}, {Name: "token_1", Type: "string"},
		{Name: "created_at_height", Type: "string"}, {Name: "updated_at_height", Type: "string"},
		{Name: "created_at", Type: "string"}, {Name: "updated_at", Type: "string"}}
	return &api.Response{Body: envelope{Data: data, Meta: meta, Height: strconv.FormatInt(st.height, 10)}, Freshness: st.fresh}, nil
}

// liquidity is the current reserves per tick index, lowest index first.
func (s *Service) liquidity(ctx context.Context, req *api.Request) (*api.Response, error) {
	d0, d1, token0, token1, err := pair(req)
	if err != nil {
		return nil, err
	}
	st, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	var rows []struct {
		Index int64          `bun:"idx"`
		R0    sql.NullString `bun:"r0"`
		R1    sql.NullString `bun:"r1"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT CASE WHEN maker_denom = ? THEN tick_index ELSE -tick_index END AS idx,
			(sum(reserves) FILTER (WHERE maker_denom = ?))::text AS r0,
			(sum(reserves) FILTER (WHERE maker_denom = ?))::text AS r1
		FROM dex2_reserves WHERE chain_id = ? AND token0 = ? AND token1 = ? AND reserves > 0
		GROUP BY 1 ORDER BY 1`, d0, d0, d1, s.chainID, token0, token1).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("liquidity: %w", err)
	}
	type out struct {
		Index string  `json:"index"`
		R0    *string `json:"reserves_0"`
		R1    *string `json:"reserves_1"`
	}
	data := make([]out, 0, len(rows))
	for _, r := range rows {
		o := out{Index: strconv.FormatInt(r.Index, 10)}
		if r.R0.Valid {
			o.R0 = &r.R0.String
		}
		if r.R1.Valid {
			o.R1 = &r.R1.String
		}
		data = append(data, o)
	}
	return st.envelope(data, column{Name: "index", Type: "string", Units: "tick index (price of " + d0 + " in " + d1 + " = 1.0001^index)"},
		column{Name: "reserves_0", Type: "string", Units: d0}, column{Name: "reserves_1", Type: "string", Units: d1}), nil
}

// window is the from/to parameters as times: to defaults to now, from to
// 24 h before to.
func window(req *api.Request) (time.Time, time.Time, error) {
	to := req.Now.UTC()
	if req.Params.Has("to") {
		to = time.Unix(req.Params.Int("to"), 0).UTC()
	}
	from := to.Add(-24 * time.Hour)
	if req.Params.Has("from") {
		from = time.Unix(req.Params.Int("from"), 0).UTC()
	}
	if from.After(to) {
		return time.Time{}, time.Time{}, problem.BadParam("from", "must not be after to")
	}
	return from, to, nil
}

// bucket is the SQL bucket of a fill time for period × periods.
func bucket(period string, periods int64) (string, []any) {
	n := max(periods, 1)
	switch period {
	case "minute", "hour", "day":
		return `date_bin(?::interval, time, timestamptz '1970-01-01 00:00:00+00')`, []any{fmt.Sprintf("%d %ss", n, period)}
	case "week": // ISO weeks: 1970-01-05 was a Monday
		return `date_bin(?::interval, time, timestamptz '1970-01-05 00:00:00+00')`, []any{fmt.Sprintf("%d days", 7*n)}
	case "month":
		return `make_timestamptz(1970, 1, 1, 0, 0, 0, 'UTC') + make_interval(months =>
			((extract(year FROM time AT TIME ZONE 'UTC')::int - 1970) * 12 + extract(month FROM time AT TIME ZONE 'UTC')::int - 1) / ?::int * ?::int)`,
			[]any{n, n}
	}
	return "", nil
}

// fillIndex is the SQL of a fill's index in the path's orientation
// (argument: denom0).
const fillIndex = `CASE WHEN maker_denom = ? THEN tick_index ELSE -tick_index END`

// pairWindow is what the price and swap-volume endpoints read: the pair,
// the from/to window, the freshness, and the SQL of a fill's bucket (the
// window start without period).
type pairWindow struct {
	d0, d1, token0, token1 string
	from, to               time.Time
	st                     state
	bucket                 string
	bucketArgs             []any
}

func (s *Service) pairWindow(ctx context.Context, req *api.Request, periods int64) (pairWindow, error) {
	var w pairWindow
	var err error
	if w.d0, w.d1, w.token0, w.token1, err = pair(req); err != nil {
		return w, err
	}
	if w.from, w.to, err = window(req); err != nil {
		return w, err
	}
	if w.st, err = s.begin(ctx); err != nil {
		return w, err
	}
	if err := w.st.reaches(w.from); err != nil {
		return w, err
	}
	w.bucket, w.bucketArgs = `?::timestamptz`, []any{w.from}
	if p := req.Params.String("period"); p != "" {
		w.bucket, w.bucketArgs = bucket(p, periods)
	}
	return w, nil
}

// price is the OHLC of fill indexes per bucket (oldest first), or one
// summary row of the range without period. Fills below
// show_trades_above_value USD are left out; fills whose value is not known
// (neither denom is USD-pegged) are kept.
func (s *Service) price(ctx context.Context, req *api.Request) (*api.Response, error) {
	w, err := s.pairWindow(ctx, req, req.Params.Int("periods"))
	if err != nil {
		return nil, err
	}
	d0, d1, bexpr, st := w.d0, w.d1, w.bucket, w.st
	limit := int64(10000)
	if req.Params.Has("limit") {
		limit = req.Params.Int("limit")
	}
	args := append([]any{}, w.bucketArgs...)
	args = append(args, d0, s.chainID, w.token0, w.token1, w.from, w.to, req.Params.Float("show_trades_above_value"), limit)
	var rows []struct {
		Bucket time.Time `bun:"bucket"`
		Open   int64     `bun:"open"`
		High   int64     `bun:"high"`
		Low    int64     `bun:"low"`
		Close  int64     `bun:"close"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT * FROM (
		SELECT bucket, (array_agg(idx ORDER BY height, tx_index, event_index))[1] AS open, max(idx) AS high, min(idx) AS low,
			(array_agg(idx ORDER BY height DESC, tx_index DESC, event_index DESC))[1] AS close
		FROM (SELECT `+bexpr+` AS bucket, `+fillIndex+` AS idx, height, tx_index, event_index FROM dex2_fills
			WHERE chain_id = ? AND token0 = ? AND token1 = ? AND time >= ? AND time <= ?
			AND (usd IS NULL OR usd >= ?)) f
		GROUP BY bucket ORDER BY bucket DESC LIMIT ?) b ORDER BY bucket`, args...).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("price: %w", err)
	}
	type out struct {
		Time  string `json:"time"`
		Open  int64  `json:"open"`
		High  int64  `json:"high"`
		Low   int64  `json:"low"`
		Close int64  `json:"close"`
	}
	data := make([]out, 0, len(rows))
	for _, r := range rows {
		data = append(data, out{rowTime(r.Bucket), r.Open, r.High, r.Low, r.Close})
	}
	units := "tick index (price of " + d0 + " in " + d1 + " = 1.0001^index)"
	return st.envelope(data, column{Name: "time", Type: "string"}, column{Name: "open", Type: "number", Units: units},
		column{Name: "high", Type: "number", Units: units}, column{Name: "low", Type: "number", Units: units},
		column{Name: "close", Type: "number", Units: units}), nil
}

// trades lists fills newest first: buy = denom0 the trader bought (the
// fill took a denom0 reserve), sell = denom0 the trader sold; *_at the
// fill's index. Fills moving less than show_trades_above_amount base units
// of denom0 are left out.
func (s *Service) trades(ctx context.Context, req *api.Request) (*api.Response, error) {
	d0, _, token0, token1, err := pair(req)
	if err != nil {
		return nil, err
	}
	st, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	from, to := time.Unix(0, 0).UTC(), req.Now.UTC()
	if req.Params.Has("from") {
		from = time.Unix(req.Params.Int("from"), 0).UTC()
	}
	if req.Params.Has("to") {
		to = time.Unix(req.Params.Int("to"), 0).UTC()
	}
	if from.After(to) {
		return nil, problem.BadParam("from", "must not be after to")
	}
	if err := st.reaches(from); err != nil {
		return nil, err
	}
	var rows []struct {
		Time   time.Time `bun:"time"`
		Height int64     `bun:"height"`
		Tx     string    `bun:"tx_hash"`
		Buy    bool      `bun:"buy"`
		Amount string    `bun:"amount"`
		Index  int64     `bun:"idx"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT time, height, tx_hash, maker_denom = ? AS buy,
			(CASE WHEN maker_denom = ? THEN taker_out ELSE taker_in END)::text AS amount, `+fillIndex+` AS idx
		FROM dex2_fills WHERE chain_id = ? AND token0 = ? AND token1 = ? AND time >= ? AND time <= ?
			AND (CASE WHEN maker_denom = ? THEN taker_out ELSE taker_in END) >= ?
		ORDER BY height DESC, tx_index DESC, event_index DESC LIMIT ?`,
		d0, d0, d0, s.chainID, token0, token1, from, to, d0, req.Params.Float("show_trades_above_amount"), req.Params.Int("limit")).
		Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("trades: %w", err)
	}
	type out struct {
		Time   string `json:"time"`
		Height string `json:"height"`
		Tx     string `json:"tx,omitempty"`
		Buy    string `json:"buy,omitempty"`
		Sell   string `json:"sell,omitempty"`
		BuyAt  string `json:"buy_at,omitempty"`
		SellAt string `json:"sell_at,omitempty"`
	}
	data := make([]out, 0, len(rows))
	for _, r := range rows {
		o := out{Time: rowTime(r.Time), Height: strconv.FormatInt(r.Height, 10), Tx: r.Tx}
		idx := strconv.FormatInt(r.Index, 10)
		if r.Buy {
			o.Buy, o.BuyAt = r.Amount, idx
		} else {
			o.Sell, o.SellAt = r.Amount, idx
		}
		data = append(data, o)
	}
	return st.envelope(data, column{Name: "time", Type: "string"}, column{Name: "height", Type: "string"},
		column{Name: "tx", Type: "string"}, column{Name: "buy", Type: "string", Units: d0}, column{Name: "sell", Type: "string", Units: d0},
		column{Name: "buy_at", Type: "string", Units: "tick index"}, column{Name: "sell_at", Type: "string", Units: "tick index"}), nil
}

// swapVolume is the denom0 amount swapped (bought and sold) per bucket,
// oldest first; without period, one row: the 24 h ending at to.
func (s *Service) swapVolume(ctx context.Context, req *api.Request) (*api.Response, error) {
	w, err := s.pairWindow(ctx, req, 1)
	if err != nil {
		return nil, err
	}
	d0, bexpr, st, from := w.d0, w.bucket, w.st, w.from
	args := append(append([]any{}, w.bucketArgs...), d0, s.chainID, w.token0, w.token1, w.from, w.to)
	var rows []struct {
		Bucket time.Time `bun:"bucket"`
		Volume string    `bun:"volume"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT `+bexpr+` AS bucket,
			sum(CASE WHEN maker_denom = ? THEN taker_out ELSE taker_in END)::text AS volume
		FROM dex2_fills WHERE chain_id = ? AND token0 = ? AND token1 = ? AND time >= ? AND time <= ?
		GROUP BY 1 ORDER BY 1`, args...).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("swap volume: %w", err)
	}
	type out struct {
		Time   string `json:"time"`
		Volume string `json:"volume"`
	}
	data := make([]out, 0, len(rows))
	for _, r := range rows {
		data = append(data, out{rowTime(r.Bucket), r.Volume})
	}
	if req.Params.String("period") == "" && len(data) == 0 {
		data = append(data, out{rowTime(from), "0"})
	}
	return st.envelope(data, column{Name: "time", Type: "string"}, column{Name: "volume", Type: "string", Units: d0}), nil
}

// volume is the USD volume of the fills with a known value per UTC day of
// the range (up to the last aggregated block; 0 on a day without fills).
func (s *Service) volume(ctx context.Context, req *api.Request) (*api.Response, error) {
	rng, err := req.Params.DateRange(req.Now, false)
	if err != nil {
		return nil, err
	}
	st, err := s.begin(ctx)
	if err != nil {
		return nil, err
	}
	days, err := api.Buckets(rng.Start, rng.End, st.fresh.Chains[0], api.Day)
	if err != nil {
		return nil, err
	}
	type out struct {
		Day   string      `json:"day"`
		Value json.Number `json:"value"`
	}
	body := make([]out, 0, len(days))
	if len(days) == 0 {
		return &api.Response{Body: body, Freshness: st.fresh}, nil
	}
	var rows []struct {
		Day time.Time `bun:"day"`
		USD string    `bun:"usd"`
	}
	if err := api.Reader(ctx, s.db).NewRaw(`SELECT day, usd::text AS usd FROM dex2_volume_daily
		WHERE chain_id = ? AND day >= ?::date AND day <= ?::date
		ORDER BY day`, s.chainID, days[0].Format(time.DateOnly), days[len(days)-1].Format(time.DateOnly)).Scan(ctx, &rows); err != nil {
		return nil, fmt.Errorf("volume: %w", err)
	}
	i := 0
	for _, d := range days {
		v := json.Number("0")
		if i < len(rows) && rows[i].Day.Equal(d) {
			v = api.Number(rows[i].USD)
			i++
		}
		body = append(body, out{d.Format(time.DateOnly), v})
	}
	return &api.Response{Body: body, Freshness: st.fresh}, nil
}
