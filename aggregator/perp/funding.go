package perp

import (
	"context"
	"fmt"
	"math/big"
	"slices"
	"time"

	"github.com/uptrace/bun"

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
// perpetual is replayed with its newest funding parameters, from its first
// ones on: genesis, or the state snapshot that first listed it (a market
// listed after genesis has no funding ticks between its listing and that
// snapshot). Ticks already computed are kept, per perpetual.
func fundingTicks(ctx context.Context, tx bun.Tx, chainID string, to int64) (int64, error) {
	var params []struct {
		Perpetual int64 `bun:"perpetual_id"`
		Default   int64 `bun:"default_funding_ppm"`
		Bound     int64 `bun:"max_abs_rate_ppm"`
		Tick      int64 `bun:"tick_seconds"`
		Sample    int64 `bun:"sample_seconds"`
		MinVotes  int64 `bun:"min_votes_per_sample"`
		Market    int64 `bun:"market_id"`
		Atomic    int64 `bun:"atomic_resolution"`
		// After is the height after which the perpetual's ticks are due:
		// its last computed tick, else just below its first funding
		// parameters (genesis, or the state snapshot that first listed it).
		After int64 `bun:"after"`
	}
	if err := tx.NewRaw(`SELECT DISTINCT ON (f.perpetual_id) f.perpetual_id, f.default_funding_ppm, f.max_abs_rate_ppm, f.tick_seconds,
			f.sample_seconds, f.min_votes_per_sample, p.market_id, p.atomic_resolution,
			coalesce((SELECT max(height) FROM perp_funding_ticks t WHERE t.chain_id = f.chain_id AND t.perpetual_id = f.perpetual_id),
				(SELECT min(height) FROM dydx_funding_params s WHERE s.chain_id = f.chain_id AND s.perpetual_id = f.perpetual_id) - 1) AS after
		FROM dydx_funding_params f
		JOIN LATERAL (SELECT market_id, atomic_resolution FROM dydx_perpetuals p WHERE p.chain_id = f.chain_id AND p.perpetual_id = f.perpetual_id
			ORDER BY height DESC LIMIT 1) p ON true
		WHERE f.chain_id = ? ORDER BY f.perpetual_id, f.height DESC`, chainID).Scan(ctx, &params); err != nil {
		return 0, fmt.Errorf("dydx_funding_params: %w", err)
	}
	if len(params) == 0 {
		return 0, nil // no genesis funding parameters: nothing to replay
	}
	after := params[0].After
	for _, p := range params {
		after = min(after, p.After)
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
			for _, p := range params {
				if m := median(padded(votes[p.Perpetual], max(s.Msgs, p.MinVotes))); m != 0 {
					sampled[next][p.Perpetual] = m
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
		for _, p := range params {
			if t.Height <= p.After {
				continue // computed already, or before the perpetual was listed
			}
			minSamples := (p.Tick + p.Sample - 1) / p.Sample
			premium := average(padded(perTick[p.Perpetual], max(numSamples, minSamples)))
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
					chainID, p.Market, t.Height).Scan(ctx, &price); err != nil {
					return 0, fmt.Errorf("funding tick %d: market %d price: %w", t.Height, p.Market, err)
				}
				px, ok := new(big.Int).SetString(price.Price, 10)
				if !ok {
					return 0, fmt.Errorf("funding tick %d: market %d price %q", t.Height, p.Market, price.Price)
				}
				if price.Exponent == nil {
					return 0, fmt.Errorf("funding tick %d: market %d is not in the catalog", t.Height, p.Market)
				}
				delta = FundingIndexDelta(p.Tick, rate, px, *price.Exponent, p.Atomic)
			}
			if _, err := tx.NewRaw(`INSERT INTO perp_funding_ticks (chain_id, height, perpetual_id, time, rate_ppm, premium_ppm, index_delta)
				VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`, chainID, t.Height, p.Perpetual, t.Time, rate, premium, delta.String()).Exec(ctx); err != nil {
				return 0, fmt.Errorf("perp_funding_ticks: %w", err)
			}
			rows++
		}
	}
	return rows, nil
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
