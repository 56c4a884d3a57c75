package synthosmosis

import (
	"errors"
	"math"
	"math/big"

	"github.com/chainlens/chainlens/chains/osmosis/clmath"
)

var errNoLiquidity = errors.New("not enough liquidity")

// swapOut is what pl pays out for amountIn of denomIn (the taker fee
// already taken), by the pool's own math, and moves its state; spread is
// the part of amountIn a concentrated pool's spread reward takes (whole
// units, sent to its spread rewards account rather than the pool: the
// swap's tokens_in is amountIn − spread, as x/concentrated-liquidity
// reports it). A swap the pool cannot serve returns errNoLiquidity; the
// caller restores the pool (snapshot).
func (pl *pool) swapOut(denomIn string, amountIn int64) (denomOut string, out, spread int64, err error) {
	i, o := 0, 1
	if denomIn != pl.denoms[0] {
		i, o = 1, 0
	}
	denomOut = pl.denoms[o]
	switch pl.kind {
	case balancer:
		out = balancerOut(pl.reserve[denomIn], pl.reserve[denomOut], pl.weights[i], pl.weights[o], amountIn, pl.feePPM)
	case stableswap:
		out = stableswapOut(pl.reserve[denomIn], pl.reserve[denomOut], pl.scaling[i], pl.scaling[o], amountIn, pl.feePPM)
	case cl:
		got, reward, err := pl.clp.SwapIn(i == 0, big.NewInt(amountIn))
		if err != nil || !got.IsInt64() || got.Int64() >= pl.reserve[denomOut] || got.Sign() <= 0 {
			return "", 0, 0, errNoLiquidity
		}
		out, spread = got.Int64(), new(big.Int).Quo(reward, e18).Int64()
	}
	if out <= 0 || out >= pl.reserve[denomOut] {
		return "", 0, 0, errNoLiquidity
	}
	pl.reserve[denomIn] += amountIn - spread
	pl.reserve[denomOut] -= out
	return denomOut, out, spread, nil
}

func copyTicks(m map[int64]*big.Int) map[int64]*big.Int {
	c := make(map[int64]*big.Int, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// balancerOut is the weighted constant product: bo·(1 − (bi/(bi + a·(1−fee)))^(wi/wo)),
// rounded down. Equal weights are exact integer arithmetic; other weights
// take the power in float64 (the generator's reserves then stay within a
// part in 10^15 of the module's BigDec power series).
func balancerOut(bi, bo, wi, wo, amount, feePPM int64) int64 {
	in := new(big.Int).Mul(big.NewInt(amount), big.NewInt(1_000_000-feePPM))
	in.Quo(in, big.NewInt(1_000_000))
	if in.Sign() <= 0 {
		return 0
	}
	if wi == wo {
		num := new(big.Int).Mul(big.NewInt(bo), in)
		return num.Quo(num, in.Add(in, big.NewInt(bi))).Int64()
	}
	ratio := float64(bi) / (float64(bi) + float64(in.Int64()))
	keep := math.Pow(ratio, float64(wi)/float64(wo))
	out, _ := new(big.Float).Mul(new(big.Float).SetInt64(bo), big.NewFloat(1-keep)).Int64()
	return out
}

// stableswapOut solves Osmosis's two-asset stableswap CFMM
// x·y·(x² + y²) = k over reserves divided by their scaling factors: the
// output y − y' keeps k with x' = x + a·(1−fee), found by bisection,
// rounded down.
func stableswapOut(bi, bo, si, so, amount, feePPM int64) int64 {
	const prec = 256
	f := func(v int64) *big.Float { return new(big.Float).SetPrec(prec).SetInt64(v) }
	x := new(big.Float).SetPrec(prec).Quo(f(bi), f(si))
	y := new(big.Float).SetPrec(prec).Quo(f(bo), f(so))
	in := new(big.Float).SetPrec(prec).Mul(f(amount), new(big.Float).SetPrec(prec).Quo(f(1_000_000-feePPM), f(1_000_000)))
	in.Quo(in, f(si))
	cfmm := func(a, b *big.Float) *big.Float {
		a2 := new(big.Float).SetPrec(prec).Mul(a, a)
		b2 := new(big.Float).SetPrec(prec).Mul(b, b)
		s := new(big.Float).SetPrec(prec).Add(a2, b2)
		return s.Mul(s, a).Mul(s, b)
	}
	k := cfmm(x, y)
	x2 := new(big.Float).SetPrec(prec).Add(x, in)
	lo, hi := new(big.Float).SetPrec(prec), new(big.Float).SetPrec(prec).Set(y)
	two := f(2)
	for range 200 {
		mid := new(big.Float).SetPrec(prec).Add(lo, hi)
		mid.Quo(mid, two)
		if cfmm(x2, mid).Cmp(k) < 0 {
			lo = mid
		} else {
			hi = mid
		}
	}
	// y' rounded up keeps k: the pool never pays more than the curve.
	d := new(big.Float).SetPrec(prec).Sub(y, hi)
	d.Mul(d, f(so))
	out, _ := d.Int64()
	return out
}

// joinAmounts are the tokens a join for shareOut shares brings in: each
// reserve's share, rounded up.
func (pl *pool) joinAmounts(shareOut *big.Int) [2]int64 {
	var in [2]int64
	for i, d := range pl.denoms {
		v := new(big.Int).Mul(big.NewInt(pl.reserve[d]), shareOut)
		v.Add(v, new(big.Int).Sub(pl.shares, big.NewInt(1)))
		in[i] = v.Quo(v, pl.shares).Int64()
	}
	return in
}

// exitAmounts are the tokens an exit of shareIn shares takes out: each
// reserve's share, rounded down (no exit fee).
func (pl *pool) exitAmounts(shareIn *big.Int) [2]int64 {
	var out [2]int64
	for i, d := range pl.denoms {
		v := new(big.Int).Mul(big.NewInt(pl.reserve[d]), shareIn)
		out[i] = v.Quo(v, pl.shares).Int64()
	}
	return out
}

// e18 scales Dec values.
var e18 = new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)

// sqrtPriceRat is the pool's current sqrt price (BigDec, 10^36) as a
// rational.
func (pl *pool) sqrtPriceRat() *big.Rat {
	return new(big.Rat).SetFrac(pl.clp.SqrtPrice, new(big.Int).Exp(big.NewInt(10), big.NewInt(36), nil))
}

// positionAmounts are the tokens liquidity (Dec) holds in [lower, upper)
// at the pool's price: rounded up when deposited, down when withdrawn.
func (pl *pool) positionAmounts(lower, upper int64, liquidity *big.Int, up bool) (int64, int64) {
	a0, a1 := clmath.AmountsPerLiquidity(pl.sqrtPriceRat(), lower, upper)
	l := new(big.Rat).SetFrac(liquidity, e18)
	round := func(r *big.Rat) int64 {
		v := new(big.Rat).Mul(r, l)
		q := new(big.Int).Quo(v.Num(), v.Denom())
		if up && new(big.Int).Mul(q, v.Denom()).Cmp(v.Num()) != 0 {
			q.Add(q, big.NewInt(1))
		}
		return q.Int64()
	}
	return round(a0), round(a1)
}
