package dex

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/chainlens/chainlens/aggregator"

	report "github.com/chainlens/chainlens/report/dex"

	"cosmossdk.io/math"
	"github.com/uptrace/bun"
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

// Run advances the candles to the prices job's watermark.
func (j Candles) Run(ctx context.Context, tx bun.Tx, wm, bound int64) (int64, int64, error) {
	tip := bound
	if tip <= wm {
		return wm, 0, nil
	}
	chain := j.Market.ChainID
	h0, ok, err := firstHour(ctx, tx, chain, wm, tip)
	if err != nil || !ok {
		return tip, 0, err
	}
	book, err := lastSwapsBefore(ctx, tx, chain, h0)
	if err != nil {
		return 0, 0, err
	}
	closes, err := hourlyCloses(ctx, tx, chain, h0)
	if err != nil {
		return 0, 0, err
	}
	swaps, err := swapsFrom(ctx, tx, chain, h0, tip)
	if err != nil {
		return 0, 0, err
	}
	assets := map[assetKey]*candle{}
	pairs := map[pairKey]*candle{}
	vol := Volume{Market: j.Market}
	for _, s := range swaps {
		book.Add(s)
		minute, hour := s.Time.UTC().Truncate(time.Minute), s.Time.UTC().Truncate(time.Hour)
		moved := []string{s.DenomIn, s.DenomOut}
		if pairOf(s.DenomIn, s.DenomOut) == pairOf(j.Market.Hub, j.Market.Anchor) {
			moved = book.Denoms()
		}
		for _, d := range moved {
			if p, ok := book.USD(j.Market, d); ok {
				assetBar(assets, assetKey{d, minute}).price(p)
			}
		}
		value, valued := vol.hopValue(s, hour, closes)
		if valued {
			for _, d := range []string{s.DenomIn, s.DenomOut} {
				c := assetBar(assets, assetKey{d, minute})
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
	n, err := j.write(ctx, tx, h0, assets, pairs)
	if err != nil {
		return 0, 0, err
	}
	return tip, n, nil
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

// write replaces the 1-minute bars from h0 and rolls every coarser size up
// from the start of its bar containing h0.
func (j Candles) write(ctx context.Context, tx bun.Tx, h0 time.Time, assets map[assetKey]*candle, pairs map[pairKey]*candle) (int64, error) {
	chain := j.Market.ChainID
	for _, t := range []string{"osmosis_asset_candles", "osmosis_pair_candles"} {
		if _, err := tx.NewRaw("DELETE FROM "+t+" WHERE chain_id = ? AND tf = 1 AND bucket >= ?", chain, h0).Exec(ctx); err != nil {
			return 0, fmt.Errorf("delete minute bars of %s: %w", t, err)
		}
	}
	arows := make([]assetCandleRow, 0, len(assets))
	for k, c := range assets {
		if c.open.IsNil() {
			continue // volume before the denom's first price: no bar
		}
		arows = append(arows, assetCandleRow{ChainID: chain, Denom: k.denom, TF: 1, Bucket: k.minute, Open: c.open.String(), High: c.high.String(),
			Low: c.low.String(), Close: c.close.String(), VolumeUSD: c.volume.String()})
	}
	slices.SortFunc(arows, func(a, b assetCandleRow) int {
		if c := a.Bucket.Compare(b.Bucket); c != 0 {
			return c
		}
		return cmpString(a.Denom, b.Denom)
	})
	prows := make([]pairCandleRow, 0, len(pairs))
	for k, c := range pairs {
		prows = append(prows, pairCandleRow{ChainID: chain, PoolID: k.pool, Base: k.base, Quote: k.quote, TF: 1, Bucket: k.minute,
			Open: c.open.String(), High: c.high.String(), Low: c.low.String(), Close: c.close.String(),
			BaseAmount: c.base.String(), QuoteAmount: c.quote.String(), VolumeUSD: c.volume.String()})
	}
	slices.SortFunc(prows, func(a, b pairCandleRow) int {
		if c := a.Bucket.Compare(b.Bucket); c != 0 {
			return c
		}
		if a.PoolID != b.PoolID {
			return int(a.PoolID - b.PoolID)
		}
		if c := cmpString(a.Base, b.Base); c != 0 {
			return c
		}
		return cmpString(a.Quote, b.Quote)
	})
	if err := insertBatches(ctx, tx, arows); err != nil {
		return 0, fmt.Errorf("insert asset bars: %w", err)
	}
	if err := insertBatches(ctx, tx, prows); err != nil {
		return 0, fmt.Errorf("insert pair bars: %w", err)
	}
	n := int64(len(arows) + len(prows))
	for _, tf := range report.Resolutions[1:] {
		start, src, bar := report.BarStart(h0, tf), rollupSource[tf], barSQL(tf)
		for _, q := range []struct{ table, keys, sumCols, sums string }{
			{"osmosis_asset_candles", "denom", "volume_usd", "sum(volume_usd)"},
			{"osmosis_pair_candles", "pool_id, base, quote", "base_amount, quote_amount, volume_usd", "sum(base_amount), sum(quote_amount), sum(volume_usd)"},
		} {
			if _, err := tx.NewRaw("DELETE FROM "+q.table+" WHERE chain_id = ? AND tf = ? AND bucket >= ?", chain, tf, start).Exec(ctx); err != nil {
				return 0, fmt.Errorf("delete %d-minute bars of %s: %w", tf, q.table, err)
			}
			res, err := tx.NewRaw(`INSERT INTO `+q.table+` (chain_id, `+q.keys+`, tf, bucket, open, high, low, close, `+q.sumCols+`)
				SELECT chain_id, `+q.keys+`, ?, `+bar+` AS b, (array_agg(open ORDER BY bucket))[1], max(high), min(low),
					(array_agg(close ORDER BY bucket DESC))[1], `+q.sums+`
				FROM `+q.table+` WHERE chain_id = ? AND tf = ? AND bucket >= ?
				GROUP BY chain_id, `+q.keys+`, b`, tf, chain, src, start).Exec(ctx)
			if err != nil {
				return 0, fmt.Errorf("roll up %d-minute bars of %s: %w", tf, q.table, err)
			}
			r, _ := res.RowsAffected()
			n += r
		}
	}
	return n, nil
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
	var prices []struct {
		Denom string    `bun:"denom"`
		Hour  time.Time `bun:"hour"`
		Price string    `bun:"price"`
	}
	if err := db.NewRaw("SELECT denom, hour, price_usd::text AS price FROM osmosis_asset_prices WHERE chain_id = ? AND hour >= ?",
		chainID, h0).Scan(ctx, &prices); err != nil {
		return nil, fmt.Errorf("prices from %s: %w", h0, err)
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
