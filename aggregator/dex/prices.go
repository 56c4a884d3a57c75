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
	"github.com/chainlens/chainlens/store"

	"cosmossdk.io/math"
	"github.com/uptrace/bun"
)

// Swap is one token_swapped hop as the jobs read it.
type Swap struct {
	Height     int64     `bun:"height"`
	TxIndex    int       `bun:"tx_index"`
	EventIndex int       `bun:"event_index"`
	Time       time.Time `bun:"time"`
	PoolID     int64     `bun:"pool_id"`
	DenomIn    string    `bun:"denom_in"`
	AmountIn   string    `bun:"amount_in"`
	DenomOut   string    `bun:"denom_out"`
	AmountOut  string    `bun:"amount_out"`
}

// before reports whether s executed before o.
func (s Swap) before(o Swap) bool {
	if s.Height != o.Height {
		return s.Height < o.Height
	}
	if s.TxIndex != o.TxIndex {
		return s.TxIndex < o.TxIndex
	}
	return s.EventIndex < o.EventIndex
}

// amountOf is the swap's amount of denom (in or out).
func (s Swap) amountOf(denom string) (math.Int, bool) {
	a := s.AmountIn
	if denom == s.DenomOut {
		a = s.AmountOut
	}
	return math.NewIntFromString(a)
}

const swapColumns = "height, tx_index, event_index, time, pool_id, denom_in, amount_in::text AS amount_in, denom_out, amount_out::text AS amount_out"

type pair struct{ a, b string } // a < b

func pairOf(x, y string) pair {
	if x > y {
		x, y = y, x
	}
	return pair{x, y}
}

// Book holds the last swap of every pool and denom pair: the state the
// prices are read from.
type Book struct {
	last map[pair]map[int64]Swap
	// Answers kept until a swap changes them: the candles ask for every
	// denom's USD price after each hub/anchor swap, and each asked for
	// the hub's price and parsed the same swaps again.
	prices map[[2]string]bookPrice // Price(base, quote), dropped when the pair trades
	denoms []string                // Denoms(), nil when a new pair is seen
}

// bookPrice is an answer of Price.
type bookPrice struct {
	price math.LegacyDec
	ok    bool
}

// NewBook returns an empty book.
func NewBook() *Book {
	return &Book{last: map[pair]map[int64]Swap{}, prices: map[[2]string]bookPrice{}}
}

// Add records a swap as the last of its pool and pair.
func (b *Book) Add(s Swap) {
	p := pairOf(s.DenomIn, s.DenomOut)
	if b.last[p] == nil {
		b.last[p] = map[int64]Swap{}
		b.denoms = nil
	}
	if prev, ok := b.last[p][s.PoolID]; !ok || prev.before(s) {
		b.last[p][s.PoolID] = s
		delete(b.prices, [2]string{p.a, p.b})
		delete(b.prices, [2]string{p.b, p.a})
	}
}

// Denoms lists every denom the book has seen, sorted (shared: callers
// do not modify it).
func (b *Book) Denoms() []string {
	if b.denoms != nil {
		return b.denoms
	}
	seen := map[string]bool{}
	for p := range b.last {
		seen[p.a], seen[p.b] = true, true
	}
	out := make([]string, 0, len(seen))
	for d := range seen {
		out = append(out, d)
	}
	slices.Sort(out)
	b.denoms = out
	return out
}

// Price is the price of one base unit of base in base units of quote: the
// execution price of the most recent swap between them in any pool.
func (b *Book) Price(base, quote string) (math.LegacyDec, bool) {
	k := [2]string{base, quote}
	if c, ok := b.prices[k]; ok {
		return c.price, c.ok
	}
	p, ok := b.price(base, quote)
	b.prices[k] = bookPrice{p, ok}
	return p, ok
}

// price computes Price.
func (b *Book) price(base, quote string) (math.LegacyDec, bool) {
	var last Swap
	found := false
	for _, s := range b.last[pairOf(base, quote)] {
		if !found || last.before(s) {
			last, found = s, true
		}
	}
	if !found {
		return math.LegacyDec{}, false
	}
	q, ok1 := last.amountOf(quote)
	d, ok2 := last.amountOf(base)
	if !ok1 || !ok2 || !d.IsPositive() {
		return math.LegacyDec{}, false
	}
	return math.LegacyNewDecFromInt(q).Quo(math.LegacyNewDecFromInt(d)), true
}

// USD is the USD price of one display unit of denom: direct against the
// anchor, else through the hub.
func (b *Book) USD(m report.Market, denom string) (math.LegacyDec, bool) {
	if m.Anchor == "" {
		return math.LegacyDec{}, false
	}
	if denom == m.Anchor {
		return math.LegacyOneDec(), true
	}
	raw, ok := b.Price(denom, m.Anchor)
	if !ok && denom != m.Hub {
		inHub, ok1 := b.Price(denom, m.Hub)
		hub, ok2 := b.Price(m.Hub, m.Anchor)
		if ok1 && ok2 {
			raw, ok = inHub.Mul(hub), true
		}
	}
	if !ok {
		return math.LegacyDec{}, false
	}
	return m.Scale(denom, raw), true
}

// Prices is the dex_prices job: osmosis_asset_prices, the USD close of
// every priced denom for every hour with swaps. Its watermark is the last
// indexed height it has read; each run recomputes from the start of the
// hour of the first new swap, so a run is exact however the heights of an
// hour arrive.
type Prices struct{ Market report.Market }

// Name is the job name.
func (Prices) Name() string { return report.JobPrices }

// Version is the version of the job's rows (see aggregator.Job).
func (Prices) Version() string { return "1" }

// Tables are the tables the job writes: its own, the dex chain's rows only.
func (j Prices) Tables() aggregator.Tables {
	return aggregator.Tables{Owned: []string{report.AssetPrices, report.AssetPricesLatest, "osmosis_pair_last_swaps", "osmosis_price_state"}, ChainID: j.Market.ChainID}
}

// Run advances the prices to the indexed tip.
func (j Prices) Run(ctx context.Context, tx bun.Tx, wm, bound int64) (int64, int64, error) {
	tip, err := store.IndexedTip(ctx, tx, j.Market.ChainID)
	if err != nil || tip <= wm {
		return wm, 0, err
	}
	h0, ok, err := firstHour(ctx, tx, j.Market.ChainID, wm, tip)
	if err != nil || !ok {
		return tip, 0, err
	}
	book, err := j.bookBefore(ctx, tx, h0)
	if err != nil {
		return 0, 0, err
	}
	swaps, err := swapsFrom(ctx, tx, j.Market.ChainID, h0, tip)
	if err != nil {
		return 0, 0, err
	}
	if _, err := tx.NewRaw("DELETE FROM osmosis_asset_prices WHERE chain_id = ? AND hour >= ?", j.Market.ChainID, h0).Exec(ctx); err != nil {
		return 0, 0, fmt.Errorf("delete prices: %w", err)
	}
	var rows []priceRow
	for i, sw := range swaps {
		book.Add(sw)
		hour := sw.Time.UTC().Truncate(time.Hour)
		if i < len(swaps)-1 && swaps[i+1].Time.UTC().Truncate(time.Hour).Equal(hour) {
			continue
		}
		// The hour closes with this swap.
		for _, d := range book.Denoms() {
			if p, ok := book.USD(j.Market, d); ok {
				rows = append(rows, priceRow{ChainID: j.Market.ChainID, Denom: d, Hour: hour, PriceUSD: p.String()})
			}
		}
	}
	if err := insertBatches(ctx, tx, rows); err != nil {
		return 0, 0, fmt.Errorf("insert prices: %w", err)
	}
	if err := report.KeepLatestPrices(ctx, tx, j.Market.ChainID, h0); err != nil {
		return 0, 0, err
	}
	return tip, int64(len(rows)), nil
}

// priceRow is a row of osmosis_asset_prices.
type priceRow struct {
	bun.BaseModel `bun:"table:osmosis_asset_prices"`
	ChainID       string    `bun:"chain_id"`
	Denom         string    `bun:"denom"`
	Hour          time.Time `bun:"hour"`
	PriceUSD      string    `bun:"price_usd"`
}

// insertBatches inserts rows (a slice of a bun model) in statements of at
// most 1000 rows.
func insertBatches[T any](ctx context.Context, tx bun.Tx, rows []T) error {
	for len(rows) > 0 {
		n := min(len(rows), 1000)
		batch := rows[:n]
		if _, err := tx.NewInsert().Model(&batch).Exec(ctx); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

const pairKeys = "pool_id, least(denom_in, denom_out), greatest(denom_in, denom_out)"

// bookBefore returns the last swap of every pool and pair executed before
// h0. It keeps them in osmosis_pair_last_swaps as of osmosis_price_state.hour
// and folds in only the swaps since, so a run reads the new swaps only; a
// rewind before that hour rebuilds the state from all swaps.
func (j Prices) bookBefore(ctx context.Context, tx bun.Tx, h0 time.Time) (*Book, error) {
	chainID := j.Market.ChainID
	var state time.Time
	err := tx.NewRaw("SELECT hour FROM osmosis_price_state WHERE chain_id = ?", chainID).Scan(ctx, &state)
	switch {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return nil, fmt.Errorf("price state: %w", err)
	}
	from := "-infinity"
	if !state.IsZero() && !h0.Before(state) {
		from = state.UTC().Format(time.RFC3339Nano)
	} else if _, err := tx.NewRaw("DELETE FROM osmosis_pair_last_swaps WHERE chain_id = ?", chainID).Exec(ctx); err != nil {
		return nil, fmt.Errorf("reset price state: %w", err)
	}
	if _, err := tx.NewRaw(`INSERT INTO osmosis_pair_last_swaps
			(chain_id, pool_id, denom_a, denom_b, height, tx_index, event_index, time, denom_in, amount_in, denom_out, amount_out)
		SELECT DISTINCT ON (`+pairKeys+`) chain_id, `+pairKeys+`, height, tx_index, event_index, time, denom_in, amount_in, denom_out, amount_out
		FROM osmosis_swaps WHERE chain_id = ? AND time >= ?::timestamptz AND time < ?
		ORDER BY `+pairKeys+`, height DESC, tx_index DESC, event_index DESC
		ON CONFLICT (chain_id, pool_id, denom_a, denom_b) DO UPDATE SET height = EXCLUDED.height, tx_index = EXCLUDED.tx_index,
			event_index = EXCLUDED.event_index, time = EXCLUDED.time, denom_in = EXCLUDED.denom_in, amount_in = EXCLUDED.amount_in,
			denom_out = EXCLUDED.denom_out, amount_out = EXCLUDED.amount_out`, chainID, from, h0).Exec(ctx); err != nil {
		return nil, fmt.Errorf("advance price state to %s: %w", h0, err)
	}
	if _, err := tx.NewRaw(`INSERT INTO osmosis_price_state (chain_id, hour) VALUES (?, ?)
		ON CONFLICT (chain_id) DO UPDATE SET hour = EXCLUDED.hour`, chainID, h0).Exec(ctx); err != nil {
		return nil, fmt.Errorf("price state: %w", err)
	}
	var prior []Swap
	if err := tx.NewRaw("SELECT "+swapColumns+" FROM osmosis_pair_last_swaps WHERE chain_id = ?", chainID).Scan(ctx, &prior); err != nil {
		return nil, fmt.Errorf("last swaps before %s: %w", h0, err)
	}
	book := NewBook()
	for _, s := range prior {
		book.Add(s)
	}
	return book, nil
}

// firstHour is the start of the hour of the first swap in (from, to].
func firstHour(ctx context.Context, db bun.IDB, chainID string, from, to int64) (time.Time, bool, error) {
	var first *time.Time
	if err := db.NewRaw("SELECT min(time) FROM osmosis_swaps WHERE chain_id = ? AND height > ? AND height <= ?", chainID, from, to).
		Scan(ctx, &first); err != nil {
		return time.Time{}, false, fmt.Errorf("first new swap: %w", err)
	}
	if first == nil {
		return time.Time{}, false, nil
	}
	return first.UTC().Truncate(time.Hour), true, nil
}

// swapsFrom lists the swaps from time h0 up to height tip, in execution order.
func swapsFrom(ctx context.Context, db bun.IDB, chainID string, h0 time.Time, tip int64) ([]Swap, error) {
	var swaps []Swap
	if err := db.NewRaw(`SELECT `+swapColumns+` FROM osmosis_swaps WHERE chain_id = ? AND time >= ? AND height <= ?
		ORDER BY height, tx_index, event_index`, chainID, h0, tip).Scan(ctx, &swaps); err != nil {
		return nil, fmt.Errorf("swaps from %s: %w", h0, err)
	}
	return swaps, nil
}
