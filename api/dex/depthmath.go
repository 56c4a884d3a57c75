package dex

import (
	"errors"
	"fmt"

	"cosmossdk.io/math"
)

// Depth arithmetic of the gamm pool models, in exact decimals (18 places).
//
// Selling an amount of token "in" into a pool lowers the spot price of "in"
// (measured in the other token, "out") by the ratio r = new price / old
// price (< 1). The depth is the amount of "in", in base units, that moves
// the price to exactly that ratio; swap and taker fees are not part of it
// (they do not reach the pool's reserves).

// maxRoot bounds the denominator of a balancer weight ratio.
const maxRoot = 1000

// balancerDepth is the amount of "in" that moves its price to ratio r in a
// balancer pool: the pair keeps R_in^w_in · R_out^w_out constant, so the
// spot price (R_out/w_out)/(R_in/w_in) changes by (R_in/R_in')^((w_in+w_out)/w_out)
// and R_in' = R_in · (1/r)^(w_out/(w_in+w_out)).
func balancerDepth(reserveIn, weightIn, weightOut math.Int, r math.LegacyDec) (math.LegacyDec, error) {
	if !reserveIn.IsPositive() || !weightIn.IsPositive() || !weightOut.IsPositive() {
		return math.LegacyDec{}, errors.New("empty reserve or weight")
	}
	num, den := weightOut, weightIn.Add(weightOut)
	if g := gcd(num, den); !g.Equal(math.OneInt()) {
		num, den = num.Quo(g), den.Quo(g)
	}
	if !den.IsUint64() || den.Uint64() > maxRoot {
		return math.LegacyDec{}, fmt.Errorf("weight ratio %s/%s is too fine to take its root exactly", num, den)
	}
	grow, err := math.LegacyOneDec().Quo(r).Power(num.Uint64()).ApproxRoot(den.Uint64())
	if err != nil {
		return math.LegacyDec{}, fmt.Errorf("root: %w", err)
	}
	return math.LegacyNewDecFromInt(reserveIn).Mul(grow.Sub(math.LegacyOneDec())), nil
}

func gcd(a, b math.Int) math.Int {
	for !b.IsZero() {
		a, b = b, a.Mod(b)
	}
	return a
}

// stableswap is a stableswap pool seen from a pair: x and y are the
// scaled reserves of "in" and "out" (base units / scaling factor) and w the
// sum of the squares of the other scaled reserves. The invariant of the pair
// is x·y·(x² + y² + w) (the CFMM of x/gamm/pool-models/stableswap, whose
// product term of the other reserves is constant in a pair swap).
type stableswap struct{ x, y, w math.LegacyDec }

func (s stableswap) k() math.LegacyDec {
	return s.x.Mul(s.y).Mul(s.x.Mul(s.x).Add(s.y.Mul(s.y)).Add(s.w))
}

// price is the spot price of x in y: −dy/dx = y(3x²+y²+w) / (x(x²+3y²+w)).
func price(x, y, w math.LegacyDec) math.LegacyDec {
	x2, y2 := x.Mul(x), y.Mul(y)
	return y.Mul(x2.MulInt64(3).Add(y2).Add(w)).Quo(x.Mul(x2.Add(y2.MulInt64(3)).Add(w)))
}

// yAt solves x·y·(x²+y²+w) = k for y by Newton's method from above (the
// function is increasing and convex in y, so the iterates decrease to the root).
func (s stableswap) yAt(x, k, from math.LegacyDec) math.LegacyDec {
	c := x.Mul(x.Mul(x).Add(s.w))
	y := from
	for range 200 {
		g := x.Mul(y).Mul(y).Mul(y).Add(c.Mul(y)).Sub(k)
		d := x.Mul(y).Mul(y).MulInt64(3).Add(c)
		if !g.IsPositive() || d.IsZero() {
			return y
		}
		next := y.Sub(g.Quo(d))
		if !next.LT(y) {
			return y
		}
		y = next
	}
	return y
}

// depth is the scaled amount of x that moves the price of x to ratio r,
// found by bisection to the 18th decimal.
func (s stableswap) depth(r math.LegacyDec) (math.LegacyDec, error) {
	if !s.x.IsPositive() || !s.y.IsPositive() {
		return math.LegacyDec{}, errors.New("empty reserve")
	}
	k, p0 := s.k(), price(s.x, s.y, s.w)
	target := p0.Mul(r)
	ratioAt := func(x math.LegacyDec) math.LegacyDec { return price(x, s.yAt(x, k, s.y), s.w) }
	lo, hi := s.x, s.x.MulInt64(2)
	for i := 0; !ratioAt(hi).LTE(target); i++ {
		if i > 200 {
			return math.LegacyDec{}, errors.New("price does not fall that far")
		}
		lo, hi = hi, hi.MulInt64(2)
	}
	eps := math.LegacyNewDecWithPrec(1, math.LegacyPrecision)
	for hi.Sub(lo).GT(eps) {
		mid := lo.Add(hi).QuoInt64(2)
		if ratioAt(mid).LTE(target) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi.Sub(s.x), nil
}
