package dex

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/chainlens/chainlens/aggregator"

	report "github.com/chainlens/chainlens/report/dex"

	"cosmossdk.io/math"
	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"
)

// rollupSource is the finer bar size each coarser one is built from.
var rollupSource = map[int]int{5: 1, 10: 5, 15: 5, 30: 15, 60: 30, 120: 60, 240: 120, 480: 240, 720: 240,
	1440: 720, report.Week: 1440, report.Month: 1440}

// barSQL is the SQL expression of the start of the tf-minute bar that
// contains the column bucket (the same as report.BarStart).
func barSQL(tf int) string {
	switch tf {
	case report.Week:
		return "date_trunc('week', bucket, 'UTC')"
	case report.Month:
		return "date_trunc('month', bucket, 'UTC')"
	}
	return fmt.Sprintf("to_timestamp(floor(extract(epoch FROM bucket) / %d) * %d)", tf*60, tf*60)
}

// Candles is the dex_candles job: osmosis_asset_candles and
// osmosis_pair_candles at every bar size of report.Resolutions.
//
// Asset bars: after every swap hop the USD price of the hop's two denoms is
// read from the same last-trade book as dex_prices (of every priced denom
// when the hop trades the hub against the anchor, since all prices routed
// through the hub move then); the 1-minute bar of a denom opens with its
// first price in the minute, closes with its last. So the close of an
// hour's last bar equals the hour's close in osmosis_asset_prices. Volume
// is the USD value of the hops of the denom in the minute by the convention
// of Volume (hourly close prices), so an hour's bars add up to
// osmosis_asset_volume_hourly, except for minutes before the denom's very
// first price, which have no bar.
//
// Pair bars: the execution price of every hop in its pool, in display units
// of the token out per display unit of the token in, and the inverse for
// the opposite direction; base_amount/quote_amount the base units traded
// and volume_usd the USD value of the hops (by the convention of Volume).
//
// Coarser bars are rolled up in SQL from the finer bars of rollupSource.
// It follows the dex_prices job's watermark and recomputes from the start
// of the hour of the first new swap (that hour's close prices may have
// moved), so a run is idempotent and exact.
type Candles struct{ Market report.Market }

// Name is the job name.
func (Candles) Name() string { return report.JobCandles }

// Upstream: the job values its rows with the prices job's prices, so it runs after
// it and never past it.
func (Candles) Upstream() []string { return []string{report.JobPrices} }

// Version is the version of the job's rows (see aggregator.Job).
func (Candles) Version() string { return "1" }

// Tables are the tables the job writes: its own, the dex chain's rows only.
func (j Candles) Tables() aggregator.Tables {
	return aggregator.Tables{Owned: []string{"osmosis_asset_candles", "osmosis_pair_candles"}, ChainID: j.Market.ChainID}
}

// candle is a bar being built.
type candle struct {
	open, high, low, close math.LegacyDec
	volume                 math.LegacyDec // asset bars: USD
	base, quote            math.Int       // pair bars: amounts traded
	traded                 bool           // asset bars: a hop of the denom in the minute
}

func (c *candle) price(p math.LegacyDec) {
	if c.open.IsNil() {
		c.open, c.high, c.low = p, p, p
	}
	if p.GT(c.high) {
		c.high = p
	}
	if p.LT(c.low) {
		c.low = p
	}
	c.close = p
}

type assetKey struct {
	denom  string
	minute time.Time
}

type pairKey struct {
	pool        int64
	base, quote string
	minute      time.Time
}

// Run advances the candles to the prices job's watermark, an hour at a
// time, so a run holds one hour's bars whatever the range (a first build).
//
// What a run writes follows the new swaps, not the hours they fall in: m0 is
// the minute of the first new swap and h0 its hour. The minute bars from m0
// on are replaced. A bar before m0 (in [h0, m0)) moved only if it holds a
// hop: its swaps were all read by the last run, so its prices stand, but
// its volume is valued at the hour's closes, which the new swaps may move;
// those bars (every pair bar, and the asset bars of the denoms traded in
// the minute) are upserted, the rest (asset bars whose price moved with
// the hub's, most of an hour's rows) left alone. The coarser bars are
// rolled up from m0's bar of each size on for every key, and, for sizes
// under an hour, also for the bars of [h0, m0) whose minute bars moved.
func (j Candles) Run(ctx context.Context, tx bun.Tx, wm, bound int64) (int64, int64, error) {
	tip := bound
	if tip <= wm {
		return wm, 0, nil
	}
	chain := j.Market.ChainID
	var first, last *time.Time
	if err := tx.NewRaw("SELECT min(time), max(time) FROM osmosis_swaps WHERE chain_id = ? AND height > ? AND height <= ?", chain, wm, tip).
		Scan(ctx, &first, &last); err != nil {
		return 0, 0, fmt.Errorf("new swaps: %w", err)
	}
	if first == nil {
		return tip, 0, nil
	}
	m0 := first.UTC().Truncate(time.Minute)
	h0 := m0.Truncate(time.Hour)
	book, err := lastSwapsBefore(ctx, tx, chain, h0)
	if err != nil {
		return 0, 0, err
	}
	// Every minute bar from m0 on is rewritten.
	for _, t := range []string{"osmosis_asset_candles", "osmosis_pair_candles"} {
		if _, err := tx.NewRaw("DELETE FROM "+t+" WHERE chain_id = ? AND tf = 1 AND bucket >= ?", chain, m0).Exec(ctx); err != nil {
			return 0, 0, fmt.Errorf("delete minute bars of %s: %w", t, err)
		}
	}
	earlier := &movedBars{}
	var n int64
	for h := h0; !h.After(last.UTC()); h = h.Add(time.Hour) {
		w, err := j.hour(ctx, tx, h, tip, book, m0, earlier)
		if err != nil {
			return 0, 0, err
		}
		n += w
	}
	r, err := j.rollUp(ctx, tx, m0, earlier)
	if err != nil {
		return 0, 0, err
	}
	return tip, n + r, nil
}

// movedBars are the minute bars before m0 a run rewrote, by table: the
// keys (denom; pool, base, quote) and minute of each.
type movedBars struct {
	denoms       []string
	assetMinutes []time.Time
	pools        []int64
	bases        []string
	quotes       []string
	pairMinutes  []time.Time
}

// hour builds the minute bars of hour h from its swaps (up to height tip),
// moving book through them, and writes those from m0 on and those before
// m0 that hold a hop (recorded in earlier).
func (j Candles) hour(ctx context.Context, tx bun.Tx, h time.Time, tip int64, book *Book, m0 time.Time, earlier *movedBars) (int64, error) {
	chain := j.Market.ChainID
	var swaps []Swap
	if err := tx.NewRaw(`SELECT `+swapColumns+` FROM osmosis_swaps WHERE chain_id = ? AND time >= ? AND time < ? AND height <= ?
		ORDER BY height, tx_index, event_index`, chain, h, h.Add(time.Hour), tip).Scan(ctx, &swaps); err != nil {
		return 0, fmt.Errorf("swaps of %s: %w", h, err)
	}
	if len(swaps) == 0 {
		return 0, nil
	}
	closes, err := closesOf(ctx, tx, chain, h)
	if err != nil {
		return 0, err
	}
	assets := map[assetKey]*candle{}
	pairs := map[pairKey]*candle{}
	vol := Volume{Market: j.Market}
	for _, s := range swaps {
		book.Add(s)
		minute := s.Time.UTC().Truncate(time.Minute)
		moved := []string{s.DenomIn, s.DenomOut}
		if pairOf(s.DenomIn, s.DenomOut) == pairOf(j.Market.Hub, j.Market.Anchor) {
			moved = book.Denoms()
		}
		for _, d := range moved {
			if p, ok := book.USD(j.Market, d); ok {
				assetBar(assets, assetKey{d, minute}).price(p)
			}
		}
		value, valued := vol.hopValue(s, h, closes)
		for _, d := range []string{s.DenomIn, s.DenomOut} {
			c := assetBar(assets, assetKey{d, minute})
			c.traded = true
			if valued {
				c.volume = c.volume.Add(value)
			}
		}
		in, ok1 := math.NewIntFromString(s.AmountIn)
		out, ok2 := math.NewIntFromString(s.AmountOut)
		if !ok1 || !ok2 || !in.IsPositive() || !out.IsPositive() {
			continue
		}
		for _, side := range []struct {
			base, quote       string
			baseAmt, quoteAmt math.Int
		}{{s.DenomIn, s.DenomOut, in, out}, {s.DenomOut, s.DenomIn, out, in}} {
			k := pairKey{s.PoolID, side.base, side.quote, minute}
			c := pairs[k]
			if c == nil {
				c = &candle{base: math.ZeroInt(), quote: math.ZeroInt(), volume: math.LegacyZeroDec()}
				pairs[k] = c
			}
			c.price(j.Market.PairPrice(side.base, side.quote, side.baseAmt, side.quoteAmt))
			c.base, c.quote = c.base.Add(side.baseAmt), c.quote.Add(side.quoteAmt)
			if valued {
				c.volume = c.volume.Add(value)
			}
		}
	}
	return j.writeMinutes(ctx, tx, m0, assets, pairs, earlier)
}

// writeMinutes writes hour h's minute bars from m0 on (deleted by Run)
// and upserts its bars before m0 that hold a hop.
func (j Candles) writeMinutes(ctx context.Context, tx bun.Tx, m0 time.Time, assets map[assetKey]*candle, pairs map[pairKey]*candle, earlier *movedBars) (int64, error) {
	chain := j.Market.ChainID
	arows := make([]assetCandleRow, 0, len(assets))
	for k, c := range assets {
		if c.open.IsNil() {
			continue // volume before the denom's first price: no bar
		}
		if k.minute.Before(m0) {
			if !c.traded {
				continue // its price and volume stand
			}
			earlier.denoms, earlier.assetMinutes = append(earlier.denoms, k.denom), append(earlier.assetMinutes, k.minute)
		}
		arows = append(arows, assetCandleRow{ChainID: chain, Denom: k.denom, TF: 1, Bucket: k.minute, Open: c.open.String(), High: c.high.String(),
			Low: c.low.String(), Close: c.close.String(), VolumeUSD: c.volume.String()})
	}
	// In primary key order: each key's new bars go to one place of the
	// index (in bucket order, every minute would touch every key's page of
	// an index far larger than the cache).
	slices.SortFunc(arows, func(a, b assetCandleRow) int {
		if c := cmpString(a.Denom, b.Denom); c != 0 {
			return c
		}
		return a.Bucket.Compare(b.Bucket)
	})
	prows := make([]pairCandleRow, 0, len(pairs))
	for k, c := range pairs {
		if k.minute.Before(m0) {
			earlier.pools, earlier.bases, earlier.quotes = append(earlier.pools, k.pool), append(earlier.bases, k.base), append(earlier.quotes, k.quote)
			earlier.pairMinutes = append(earlier.pairMinutes, k.minute)
		}
		prows = append(prows, pairCandleRow{ChainID: chain, PoolID: k.pool, Base: k.base, Quote: k.quote, TF: 1, Bucket: k.minute,
			Open: c.open.String(), High: c.high.String(), Low: c.low.String(), Close: c.close.String(),
			BaseAmount: c.base.String(), QuoteAmount: c.quote.String(), VolumeUSD: c.volume.String()})
	}
	slices.SortFunc(prows, func(a, b pairCandleRow) int {
		if a.PoolID != b.PoolID {
			return int(a.PoolID - b.PoolID)
		}
		if c := cmpString(a.Base, b.Base); c != 0 {
			return c
		}
		if c := cmpString(a.Quote, b.Quote); c != 0 {
			return c
		}
		return a.Bucket.Compare(b.Bucket)
	})
	if err := upsertBatches(ctx, tx, arows, `CONFLICT (chain_id, tf, denom, bucket) DO UPDATE SET open = EXCLUDED.open, high = EXCLUDED.high,
		low = EXCLUDED.low, close = EXCLUDED.close, volume_usd = EXCLUDED.volume_usd`); err != nil {
		return 0, fmt.Errorf("write asset bars: %w", err)
	}
	if err := upsertBatches(ctx, tx, prows, `CONFLICT (chain_id, tf, pool_id, base, quote, bucket) DO UPDATE SET open = EXCLUDED.open,
		high = EXCLUDED.high, low = EXCLUDED.low, close = EXCLUDED.close, base_amount = EXCLUDED.base_amount,
		quote_amount = EXCLUDED.quote_amount, volume_usd = EXCLUDED.volume_usd`); err != nil {
		return 0, fmt.Errorf("write pair bars: %w", err)
	}
	return int64(len(arows) + len(prows)), nil
}

// assetBar is the bar of k, created empty when missing.
func assetBar(bars map[assetKey]*candle, k assetKey) *candle {
	c := bars[k]
	if c == nil {
		c = &candle{volume: math.LegacyZeroDec()}
		bars[k] = c
	}
	return c
}

// upsertBatches inserts rows (a slice of a bun model) in statements of at
// most 1000 rows, with the ON clause on.
func upsertBatches[T any](ctx context.Context, tx bun.Tx, rows []T, on string) error {
	for len(rows) > 0 {
		n := min(len(rows), 1000)
		batch := rows[:n]
		if _, err := tx.NewInsert().Model(&batch).On(on).Exec(ctx); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

// candleTable is how the coarser bars of a candle table are rolled up.
type candleTable struct {
	name    string
	keys    []string // the columns of a bar's key besides chain_id, tf and bucket
	keyType []string // their SQL types
	sumCols string
	sums    string
}

var candleTables = []candleTable{
	{"osmosis_asset_candles", []string{"denom"}, []string{"text"}, "volume_usd", "sum(volume_usd)"},
	{"osmosis_pair_candles", []string{"pool_id", "base", "quote"}, []string{"bigint", "text", "text"},
		"base_amount, quote_amount, volume_usd", "sum(base_amount), sum(quote_amount), sum(volume_usd)"},
}

// rollUp rolls every coarser size up from its source size: each key's
// bars from the one that contains m0 on, and, for sizes under an hour, the
// bars of [h0, m0) that contain a rewritten minute bar (earlier).
func (j Candles) rollUp(ctx context.Context, tx bun.Tx, m0 time.Time, earlier *movedBars) (int64, error) {
	chain := j.Market.ChainID
	var n int64
	for _, tf := range report.Resolutions[1:] {
		start, src, bar := report.BarStart(m0, tf), rollupSource[tf], barSQL(tf)
		for ti, q := range candleTables {
			keys := strings.Join(q.keys, ", ")
			if _, err := tx.NewRaw("DELETE FROM "+q.name+" WHERE chain_id = ? AND tf = ? AND bucket >= ?", chain, tf, start).Exec(ctx); err != nil {
				return 0, fmt.Errorf("delete %d-minute bars of %s: %w", tf, q.name, err)
			}
			res, err := tx.NewRaw(`INSERT INTO `+q.name+` (chain_id, `+keys+`, tf, bucket, open, high, low, close, `+q.sumCols+`)
				SELECT chain_id, `+keys+`, ?, `+bar+` AS b, (array_agg(open ORDER BY bucket))[1], max(high), min(low),
					(array_agg(close ORDER BY bucket DESC))[1], `+q.sums+`
				FROM `+q.name+` WHERE chain_id = ? AND tf = ? AND bucket >= ?
				GROUP BY chain_id, `+keys+`, b`, tf, chain, src, start).Exec(ctx)
			if err != nil {
				return 0, fmt.Errorf("roll up %d-minute bars of %s: %w", tf, q.name, err)
			}
			r, _ := res.RowsAffected()
			n += r
			if tf >= 60 {
				continue // the bar of m0 starts at or before h0
			}
			cols := earlier.columns(ti, tf, start)
			if len(cols[0].([]time.Time)) == 0 {
				continue
			}
			r, err = j.rollUpBars(ctx, tx, q, tf, src, cols)
			if err != nil {
				return 0, err
			}
			n += r
		}
	}
	return n, nil
}

// columns lists table ti's bars of size tf before start that contain a
// rewritten minute bar, distinct, as arrays: the bar starts, then the key
// columns.
func (m movedBars) columns(ti, tf int, start time.Time) []any {
	type k struct {
		pool        int64
		denom, base string
		quote       string
		bar         time.Time
	}
	seen := map[k]bool{}
	var bars []time.Time
	var denoms, bases, quotes []string
	var pools []int64
	if ti == 0 {
		for i, d := range m.denoms {
			b := report.BarStart(m.assetMinutes[i], tf)
			if key := (k{denom: d, bar: b}); b.Before(start) && !seen[key] {
				seen[key] = true
				bars, denoms = append(bars, b), append(denoms, d)
			}
		}
		return []any{bars, denoms}
	}
	for i, p := range m.pools {
		b := report.BarStart(m.pairMinutes[i], tf)
		if key := (k{pool: p, base: m.bases[i], quote: m.quotes[i], bar: b}); b.Before(start) && !seen[key] {
			seen[key] = true
			bars, pools, bases, quotes = append(bars, b), append(pools, p), append(bases, m.bases[i]), append(quotes, m.quotes[i])
		}
	}
	return []any{bars, pools, bases, quotes}
}

// rollUpBars replaces the tf-minute bars (a size under a day) whose starts
// and keys cols lists with the roll-up of their src-minute bars.
func (j Candles) rollUpBars(ctx context.Context, tx bun.Tx, q candleTable, tf, src int, cols []any) (int64, error) {
	chain := j.Market.ChainID
	args := make([]any, 0, len(cols))
	arrays := []string{"?::timestamptz[]"}
	join := []string{}
	for i, c := range cols {
		args = append(args, pgdialect.Array(c))
		if i > 0 {
			arrays = append(arrays, "?::"+q.keyType[i-1]+"[]")
			join = append(join, "s."+q.keys[i-1]+" = c."+q.keys[i-1])
		}
	}
	keys := strings.Join(q.keys, ", ")
	moved := "unnest(" + strings.Join(arrays, ", ") + ") AS c(b, " + keys + ")"
	if _, err := tx.NewRaw(`DELETE FROM `+q.name+` s USING `+moved+` WHERE s.chain_id = ? AND s.tf = ? AND s.bucket = c.b AND `+strings.Join(join, " AND "),
		append(args, chain, tf)...).Exec(ctx); err != nil {
		return 0, fmt.Errorf("delete %d-minute bars of %s: %w", tf, q.name, err)
	}
	sKeys := "s." + strings.Join(q.keys, ", s.")
	res, err := tx.NewRaw(`INSERT INTO `+q.name+` (chain_id, `+keys+`, tf, bucket, open, high, low, close, `+q.sumCols+`)
		SELECT s.chain_id, `+sKeys+`, ?, c.b, (array_agg(s.open ORDER BY s.bucket))[1], max(s.high), min(s.low),
			(array_agg(s.close ORDER BY s.bucket DESC))[1], `+q.sums+`
		FROM `+moved+` JOIN `+q.name+` s ON s.chain_id = ? AND s.tf = ? AND `+strings.Join(join, " AND ")+`
			AND s.bucket >= c.b AND s.bucket < c.b + ? * interval '1 minute'
		GROUP BY s.chain_id, `+sKeys+`, c.b`, append([]any{tf}, append(args, chain, src, tf)...)...).Exec(ctx)
	if err != nil {
		return 0, fmt.Errorf("roll up %d-minute bars of %s: %w", tf, q.name, err)
	}
	r, _ := res.RowsAffected()
	return r, nil
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// assetCandleRow is a row of osmosis_asset_candles.
type assetCandleRow struct {
	bun.BaseModel `bun:"table:osmosis_asset_candles"`
	ChainID       string    `bun:"chain_id"`
	Denom         string    `bun:"denom"`
	TF            int       `bun:"tf"`
	Bucket        time.Time `bun:"bucket"`
	Open          string    `bun:"open"`
	High          string    `bun:"high"`
	Low           string    `bun:"low"`
	Close         string    `bun:"close"`
	VolumeUSD     string    `bun:"volume_usd"`
}

// pairCandleRow is a row of osmosis_pair_candles.
type pairCandleRow struct {
	bun.BaseModel `bun:"table:osmosis_pair_candles"`
	ChainID       string    `bun:"chain_id"`
	PoolID        int64     `bun:"pool_id"`
	Base          string    `bun:"base"`
	Quote         string    `bun:"quote"`
	TF            int       `bun:"tf"`
	Bucket        time.Time `bun:"bucket"`
	Open          string    `bun:"open"`
	High          string    `bun:"high"`
	Low           string    `bun:"low"`
	Close         string    `bun:"close"`
	BaseAmount    string    `bun:"base_amount"`
	QuoteAmount   string    `bun:"quote_amount"`
	VolumeUSD     string    `bun:"volume_usd"`
}

// hourlyCloses reads the USD closes of every hour from h0.
func hourlyCloses(ctx context.Context, db bun.IDB, chainID string, h0 time.Time) (map[denomHour]math.LegacyDec, error) {
	return closesWhere(ctx, db, chainID, "hour >= ?", h0)
}

// closesOf reads the USD closes of hour h.
func closesOf(ctx context.Context, db bun.IDB, chainID string, h time.Time) (map[denomHour]math.LegacyDec, error) {
	return closesWhere(ctx, db, chainID, "hour = ?", h)
}

func closesWhere(ctx context.Context, db bun.IDB, chainID, cond string, h time.Time) (map[denomHour]math.LegacyDec, error) {
	var prices []struct {
		Denom string    `bun:"denom"`
		Hour  time.Time `bun:"hour"`
		Price string    `bun:"price"`
	}
	if err := db.NewRaw("SELECT denom, hour, price_usd::text AS price FROM osmosis_asset_prices WHERE chain_id = ? AND "+cond,
		chainID, h).Scan(ctx, &prices); err != nil {
		return nil, fmt.Errorf("prices (%s, %s): %w", cond, h, err)
	}
	out := make(map[denomHour]math.LegacyDec, len(prices))
	for _, p := range prices {
		d, err := math.LegacyNewDecFromStr(p.Price)
		if err != nil {
			return nil, fmt.Errorf("price of %s at %s: %w", p.Denom, p.Hour, err)
		}
		out[denomHour{p.Denom, p.Hour.UTC()}] = d
	}
	return out, nil
}

// lastSwapsBefore is the book of the last swap of every pool and pair
// executed before h0, read (never written) from the dex_prices job's state
// when it reaches back far enough, else from all swaps before h0.
func lastSwapsBefore(ctx context.Context, db bun.IDB, chainID string, h0 time.Time) (*Book, error) {
	var state time.Time
	err := db.NewRaw("SELECT hour FROM osmosis_price_state WHERE chain_id = ?", chainID).Scan(ctx, &state)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("price state: %w", err)
	}
	from, book := "-infinity", NewBook()
	if !state.IsZero() && !h0.Before(state) {
		from = state.UTC().Format(time.RFC3339Nano)
		var prior []Swap
		if err := db.NewRaw("SELECT "+swapColumns+" FROM osmosis_pair_last_swaps WHERE chain_id = ?", chainID).Scan(ctx, &prior); err != nil {
			return nil, fmt.Errorf("last swaps: %w", err)
		}
		for _, s := range prior {
			book.Add(s)
		}
	}
	var recent []Swap
	if err := db.NewRaw(`SELECT DISTINCT ON (`+pairKeys+`) `+swapColumns+` FROM osmosis_swaps
		WHERE chain_id = ? AND time >= ?::timestamptz AND time < ?
		ORDER BY `+pairKeys+`, height DESC, tx_index DESC, event_index DESC`, chainID, from, h0).Scan(ctx, &recent); err != nil {
		return nil, fmt.Errorf("last swaps before %s: %w", h0, err)
	}
	for _, s := range recent {
		book.Add(s)
	}
	return book, nil
}
