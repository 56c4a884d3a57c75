package perp

import (
	"cmp"
	"context"
	"fmt"
	"math/big"
	"slices"
	"time"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/chainlens/chainlens/chains/dydx"
)

// fundingTicks adds to perp_funding_ticks every funding tick at a height up
// to `to` that is not there yet, replaying x/perpetuals (v4 EndBlocker:
// funding-sample first, then funding-tick):
//   - at each funding-sample epoch start S, a perpetual's sample is the
//     median (the two middle values' average rounded away from zero) of its
//     non-zero premium votes of the blocks since the previous sample epoch
//     (S₀, S], padded with zeros to max(vote messages, min_num_votes_per_sample);
//   - at each funding-tick epoch start T, its premium is the average
//     (truncated) of its samples of (T₀, T], padded with zeros to
//     max(sample epochs, ⌈tick ÷ sample duration⌉); the 8-hour rate is
//     premium + default_funding_ppm, clamped to the liquidity tier's bound;
//   - the funding index moves by tick seconds × rate × the oracle price in
//     quote quantums per base quantum ÷ 28,800 s (truncated twice, as
//     funding.GetFundingIndexDelta does).
//
// A tick is computed only when the tick before it is indexed (or the chain
// is indexed from its first block), so its samples are all known. Each
// perpetual is replayed from its first funding parameters on (genesis, or
// the state snapshot that first listed it: a market listed after genesis
// has no funding ticks between its listing and that snapshot), each tick
// and sample with the parameters and catalog entry in force at its height
// (the newest at or below it, else the first). Ticks already computed are
// kept, per perpetual.
func fundingTicks(ctx context.Context, tx bun.Tx, chainID string, to int64) (int64, error) {
	perps, err := loadFundingPerpetuals(ctx, tx, chainID)
	if err != nil {
		return 0, err
	}
	if len(perps) == 0 {
		return 0, nil // no genesis funding parameters: nothing to replay
	}
	after := perps[0].after
	for _, p := range perps {
		after = min(after, p.after)
	}
	var ticks []struct {
		Height int64     `bun:"height"`
		Prev   int64     `bun:"prev"`
		Time   time.Time `bun:"time"`
	}
	if err := tx.NewRaw(`SELECT e.height, e.prev, b.time FROM (
			SELECT height, lag(height, 1, 0::bigint) OVER (ORDER BY height) AS prev FROM dydx_funding_epochs
			WHERE chain_id = ?0 AND name = ?1 AND height <= ?2) e
		JOIN blocks b ON b.chain_id = ?0 AND b.height = e.height
		WHERE e.height > ?3
			AND (e.prev > 0 OR (SELECT min(height) FROM blocks WHERE chain_id = ?0 AND height > 0) <= 1)
		ORDER BY e.height`, chainID, dydx.EpochFundingTick, to, after).Scan(ctx, &ticks); err != nil {
		return 0, fmt.Errorf("funding ticks: %w", err)
	}
	if len(ticks) == 0 {
		return 0, nil
	}
	from, last := ticks[0].Prev, ticks[len(ticks)-1].Height
	// The sample epochs of the pending ticks, with the vote messages of each.
	var samples []struct {
		Height int64 `bun:"height"`
		Prev   int64 `bun:"prev"`
		Msgs   int64 `bun:"msgs"`
	}
	if err := tx.NewRaw(`SELECT s.height, s.prev, (SELECT count(*) FROM messages m WHERE m.chain_id = ?0 AND m.type_url = ?4
				AND m.height > s.prev AND m.height <= s.height) AS msgs
		FROM (SELECT height, lag(height, 1, 0::bigint) OVER (ORDER BY height) AS prev FROM dydx_funding_epochs
			WHERE chain_id = ?0 AND name = ?1 AND height <= ?3) s
		WHERE s.height > ?2 ORDER BY s.height`, chainID, dydx.EpochFundingSample, from, last, dydx.MsgAddPremiumVotes).Scan(ctx, &samples); err != nil {
		return 0, fmt.Errorf("funding samples: %w", err)
	}
	// Each sample epoch's non-zero samples per perpetual, the votes read in
	// height order once (each vote belongs to the first sample epoch at or
	// after its height).
	sampled := make([]map[int64]int64, len(samples))
	if len(samples) > 0 {
		rs, err := tx.QueryContext(ctx, `SELECT height, perpetual_id, premium_ppm FROM dydx_premium_votes
			WHERE chain_id = ? AND height > ? AND height <= ? ORDER BY height`, chainID, samples[0].Prev, samples[len(samples)-1].Height)
		if err != nil {
			return 0, fmt.Errorf("dydx_premium_votes: %w", err)
		}
		defer rs.Close()
		votes := map[int64][]int64{}
		next := 0
		summarize := func() {
			s := samples[next]
			sampled[next] = map[int64]int64{}
			for _, p := range perps {
				if m := median(padded(votes[p.id], max(s.Msgs, p.params(s.Height).MinVotes))); m != 0 {
					sampled[next][p.id] = m
				}
			}
			clear(votes)
			next++
		}
		for rs.Next() {
			var h, perp, premium int64
			if err := rs.Scan(&h, &perp, &premium); err != nil {
				return 0, fmt.Errorf("dydx_premium_votes: %w", err)
			}
			for next < len(samples) && h > samples[next].Height {
				summarize()
			}
			votes[perp] = append(votes[perp], premium)
		}
		if err := rs.Close(); err != nil { // frees the connection for the inserts below
			return 0, fmt.Errorf("dydx_premium_votes: %w", err)
		}
		if err := rs.Err(); err != nil {
			return 0, fmt.Errorf("dydx_premium_votes: %w", err)
		}
		for next < len(samples) {
			summarize()
		}
	}
	var rows int64
	next := 0 // first sample epoch not yet past
	for _, t := range ticks {
		// Each perpetual's non-zero samples of (T₀, T] and the sample count.
		perTick := map[int64][]int64{}
		var numSamples int64
		for ; next < len(samples) && samples[next].Height <= t.Height; next++ {
			if samples[next].Height <= t.Prev {
				continue
			}
			numSamples++
			for perp, m := range sampled[next] {
				perTick[perp] = append(perTick[perp], m)
			}
		}
		for _, pp := range perps {
			if t.Height <= pp.after {
				continue // computed already, or before the perpetual was listed
			}
			p, c := pp.params(t.Height), pp.catalog(t.Height)
			minSamples := (p.Tick + p.Sample - 1) / p.Sample
			premium := average(padded(perTick[pp.id], max(numSamples, minSamples)))
			rate := min(max(premium+p.Default, -p.Bound), p.Bound)
			delta := new(big.Int)
			if rate != 0 {
				// A market not updated yet since its listing has the price
				// the listing set: 0 (x/prices CreateMarket), and so no
				// funding payment.
				var price struct {
					Price    string `bun:"price"`
					Exponent *int64 `bun:"exponent"`
				}
				if err := tx.NewRaw(`SELECT coalesce((SELECT price::text FROM dydx_prices WHERE chain_id = ?0 AND market_id = ?1 AND height <= ?2
						ORDER BY height DESC LIMIT 1), '0') AS price,
					(SELECT exponent FROM dydx_markets WHERE chain_id = ?0 AND market_id = ?1
						ORDER BY height > ?2, abs(height - ?2) LIMIT 1) AS exponent`,
					chainID, c.Market, t.Height).Scan(ctx, &price); err != nil {
					return 0, fmt.Errorf("funding tick %d: market %d price: %w", t.Height, c.Market, err)
				}
				px, ok := new(big.Int).SetString(price.Price, 10)
				if !ok {
					return 0, fmt.Errorf("funding tick %d: market %d price %q", t.Height, c.Market, price.Price)
				}
				if price.Exponent == nil {
					return 0, fmt.Errorf("funding tick %d: market %d is not in the catalog", t.Height, c.Market)
				}
				delta = FundingIndexDelta(p.Tick, rate, px, *price.Exponent, c.Atomic)
			}
			if _, err := tx.NewRaw(`INSERT INTO perp_funding_ticks (chain_id, height, perpetual_id, time, rate_ppm, premium_ppm, index_delta)
				VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, chainID, t.Height, pp.id, t.Time, rate, premium, delta.String()).Exec(ctx); err != nil {
				return 0, fmt.Errorf("perp_funding_ticks: %w", err)
			}
			rows++
		}
	}
	return rows, nil
}

// fundingPerpetual is one perpetual's funding parameters and catalog
// entries over time (genesis, then each state snapshot that changed them),
// oldest first.
type fundingPerpetual struct {
	id int64
	// after is the height after which its ticks are due: its last computed
	// tick, else just below its first funding parameters (genesis, or the
	// state snapshot that first listed it).
	after   int64
	history []fundingParams
	entries []catalogEntry
}

type fundingParams struct {
	Perpetual int64 `bun:"perpetual_id"`
	Height    int64 `bun:"height"`
	Default   int64 `bun:"default_funding_ppm"`
	Bound     int64 `bun:"max_abs_rate_ppm"`
	Tick      int64 `bun:"tick_seconds"`
	Sample    int64 `bun:"sample_seconds"`
	MinVotes  int64 `bun:"min_votes_per_sample"`
}

type catalogEntry struct {
	Perpetual int64 `bun:"perpetual_id"`
	Height    int64 `bun:"height"`
	Market    int64 `bun:"market_id"`
	Atomic    int64 `bun:"atomic_resolution"`
}

// inForce returns the newest of rows (oldest first, non-empty) at or below
// height, else the oldest: a snapshot describes the state as of its height,
// which held since the change it reflects.
func inForce[T any](rows []T, height func(T) int64, h int64) T {
	i, _ := slices.BinarySearchFunc(rows, h+1, func(r T, target int64) int {
		return cmp.Compare(height(r), target)
	})
	return rows[max(i-1, 0)]
}

func (p fundingPerpetual) params(h int64) fundingParams {
	return inForce(p.history, func(r fundingParams) int64 { return r.Height }, h)
}

func (p fundingPerpetual) catalog(h int64) catalogEntry {
	return inForce(p.entries, func(r catalogEntry) int64 { return r.Height }, h)
}

// loadFundingPerpetuals reads every perpetual with funding parameters and a
// catalog entry, with its histories and last computed tick.
func loadFundingPerpetuals(ctx context.Context, tx bun.Tx, chainID string) ([]fundingPerpetual, error) {
	var params []fundingParams
	if err := tx.NewRaw(`SELECT perpetual_id, height, default_funding_ppm, max_abs_rate_ppm, tick_seconds, sample_seconds, min_votes_per_sample
		FROM dydx_funding_params WHERE chain_id = ? ORDER BY perpetual_id, height`, chainID).Scan(ctx, &params); err != nil {
		return nil, fmt.Errorf("dydx_funding_params: %w", err)
	}
	var entries []catalogEntry
	if err := tx.NewRaw(`SELECT perpetual_id, height, market_id, atomic_resolution FROM dydx_perpetuals
		WHERE chain_id = ? ORDER BY perpetual_id, height`, chainID).Scan(ctx, &entries); err != nil {
		return nil, fmt.Errorf("dydx_perpetuals: %w", err)
	}
	byID := map[int64]*fundingPerpetual{}
	var ids []int64
	for _, p := range params {
		fp, ok := byID[p.Perpetual]
		if !ok {
			fp = &fundingPerpetual{id: p.Perpetual, after: p.Height - 1}
			byID[p.Perpetual] = fp
			ids = append(ids, p.Perpetual)
		}
		fp.history = append(fp.history, p)
	}
	for _, e := range entries {
		if fp, ok := byID[e.Perpetual]; ok {
			fp.entries = append(fp.entries, e)
		}
	}
	if len(ids) == 0 {
		return nil, nil
	}
	var last []struct {
		Perpetual int64  `bun:"perpetual_id"`
		Height    *int64 `bun:"height"`
	}
	if err := tx.NewRaw(`SELECT p.id AS perpetual_id,
			(SELECT max(height) FROM perp_funding_ticks t WHERE t.chain_id = ?0 AND t.perpetual_id = p.id) AS height
		FROM unnest(?1::bigint[]) p(id)`, chainID, pgdialect.Array(ids)).Scan(ctx, &last); err != nil {
		return nil, fmt.Errorf("perp_funding_ticks: %w", err)
	}
	for _, l := range last {
		if l.Height != nil {
			byID[l.Perpetual].after = *l.Height
		}
	}
	out := make([]fundingPerpetual, 0, len(ids))
	for _, id := range ids {
		if fp := byID[id]; len(fp.entries) > 0 { // no catalog entry: no market to price it
			out = append(out, *fp)
		}
	}
	return out, nil
}

// FundingIndexDelta is funding.GetFundingIndexDelta: seconds × rate (ppm,
// 8-hour) as base quantums converted to quote quantums at the oracle price
// (× price × 10^(exponent + atomic resolution + 6), truncated), ÷ 28,800
// (truncated toward zero).
func FundingIndexDelta(seconds, ratePpm int64, price *big.Int, exponent, atomicResolution int64) *big.Int {
	v := new(big.Int).Mul(big.NewInt(seconds), big.NewInt(ratePpm))
	v.Mul(v, price)
	if e := exponent + atomicResolution + 6; e >= 0 {
		v.Mul(v, new(big.Int).Exp(big.NewInt(10), big.NewInt(e), nil))
	} else {
		v.Quo(v, new(big.Int).Exp(big.NewInt(10), big.NewInt(-e), nil))
	}
	return v.Quo(v, big.NewInt(8*60*60))
}

// padded is values followed by zeros up to n values.
func padded(values []int64, n int64) []int64 {
	out := slices.Clone(values)
	for int64(len(out)) < n {
		out = append(out, 0)
	}
	return out
}

// median is lib.Median: the middle value, or the two middle values' average
// rounded away from zero; 0 for no values.
func median(values []int64) int64 {
	if len(values) == 0 {
		return 0
	}
	s := slices.Clone(values)
	slices.Sort(s)
	mid := len(s) / 2
	if len(s)%2 == 1 {
		return s[mid]
	}
	sum := s[mid-1] + s[mid]
	if sum%2 == 0 {
		return sum / 2
	}
	if sum > 0 {
		return sum/2 + 1
	}
	return sum/2 - 1
}

// average is lib.AvgInt32: the sum ÷ the count, truncated toward zero; 0
// for no values.
func average(values []int64) int64 {
	if len(values) == 0 {
		return 0
	}
	var sum int64
	for _, v := range values {
		sum += v
	}
	return sum / int64(len(values))
}
