// Package clmath is Osmosis concentrated-liquidity arithmetic, exactly as
// x/concentrated-liquidity computes it: tick prices, sqrt prices, swaps
// across initialized ticks and position amounts. The aggregator replays
// pools with it; the API values positions with it.
package clmath

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"sort"
)

// Concentrated-liquidity arithmetic as x/concentrated-liquidity does it:
// BigDec values are integers scaled by 10^36, Dec values by 10^18, with the
// module's rounding direction at every step (swaps.go, swapstrategy/,
// math/math.go, math/tick.go of osmosis v31).

var (
	e18 = new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)
	e36 = new(big.Int).Exp(big.NewInt(10), big.NewInt(36), nil)
)

// CL tick bounds (exponent at price one −6, 9,000,000 ticks per decade).
const (
	MinTick        = -108000000
	MaxTick        = 342000000
	ticksPerDecade = 9000000
)

func bi(x int64) *big.Int { return big.NewInt(x) }

func add(a, b *big.Int) *big.Int { return new(big.Int).Add(a, b) }
func sub(a, b *big.Int) *big.Int { return new(big.Int).Sub(a, b) }

// floorDiv and ceilDiv divide with a positive divisor.
func floorDiv(a, b *big.Int) *big.Int {
	q, m := new(big.Int).DivMod(a, b, new(big.Int))
	_ = m
	return q
}

func ceilDiv(a, b *big.Int) *big.Int {
	q, m := new(big.Int).DivMod(a, b, new(big.Int))
	if m.Sign() != 0 {
		q.Add(q, bi(1))
	}
	return q
}

// BigDec operations (scale 10^36).
func mulTrunc(a, b *big.Int) *big.Int { return floorDiv(new(big.Int).Mul(a, b), e36) }
func mulUp(a, b *big.Int) *big.Int    { return ceilDiv(new(big.Int).Mul(a, b), e36) }
func quoTrunc(a, b *big.Int) *big.Int { return floorDiv(new(big.Int).Mul(a, e36), b) }
func quoUp(a, b *big.Int) *big.Int    { return ceilDiv(new(big.Int).Mul(a, e36), b) }
func ceilBig(a *big.Int) *big.Int     { return new(big.Int).Mul(ceilDiv(a, e36), e36) }

// decToBig, bigToDecUp and bigToDecDown convert between the scales.
func decToBig(d *big.Int) *big.Int     { return new(big.Int).Mul(d, e18) }
func bigToDecUp(a *big.Int) *big.Int   { return ceilDiv(a, e18) }
func bigToDecDown(a *big.Int) *big.Int { return floorDiv(a, e18) }

func pow10Int(n int64) *big.Int { return new(big.Int).Exp(bi(10), bi(n), nil) }

// tenTo is 10^n as a BigDec (n ≥ −36).
func tenTo(n int64) *big.Int {
	if n >= 0 {
		return new(big.Int).Mul(pow10Int(n), e36)
	}
	return new(big.Int).Quo(e36, pow10Int(-n))
}

// TickPrice is the price of a tick as a BigDec: 10^d + n·10^(d−6) with d
// the tick's decade (one lower below price one) and n its ticks into it.
func TickPrice(tick int64) *big.Int {
	d := tick / ticksPerDecade // truncated toward zero
	exp := -6 + d
	if tick < 0 {
		exp--
	}
	n := tick - d*ticksPerDecade
	return add(tenTo(d), new(big.Int).Mul(bi(n), tenTo(exp)))
}

// TickSqrtPrice is the square root of the tick's price as a BigDec
// (floored at the 36th decimal).
func TickSqrtPrice(tick int64) *big.Int {
	return new(big.Int).Sqrt(new(big.Int).Mul(TickPrice(tick), e36))
}

// SqrtPriceTick is the highest tick whose sqrt price is at most sp
// (MinTick when none is). It starts from the tick the price sp² falls in,
// estimated in floating point, and settles on the answer by that
// definition, one TickSqrtPrice a step: a step or two where a bisection
// over the whole tick range took 28 big square roots (most of a pool
// replay's time: every swap that stops between two ticks asks for it).
func SqrtPriceTick(sp *big.Int) int64 {
	t := estimateTick(sp)
	for t > MinTick && TickSqrtPrice(t).Cmp(sp) > 0 {
		t--
	}
	for t < MaxTick && TickSqrtPrice(t+1).Cmp(sp) <= 0 {
		t++
	}
	return t
}

// estimateTick is about the tick of the price sp² (sp a BigDec sqrt
// price), within the tick range: the inverse of TickPrice in float64.
func estimateTick(sp *big.Int) int64 {
	f, _ := new(big.Float).SetInt(sp).Float64()
	price := (f / 1e36) * (f / 1e36)
	if !(price > 0) || math.IsInf(price, 0) {
		if sp.Sign() <= 0 {
			return MinTick
		}
		return MaxTick
	}
	k := math.Floor(math.Log10(price)) // 10^k <= price < 10^(k+1)
	var est float64
	if k >= 0 {
		est = k*ticksPerDecade + (price-math.Pow(10, k))/math.Pow(10, k-6)
	} else {
		est = (k+1)*ticksPerDecade + (price-math.Pow(10, k+1))/math.Pow(10, k-6)
	}
	return int64(max(MinTick, min(MaxTick, math.Round(est))))
}

// amount0Delta = L·(b−a)/(b·a); amount1Delta = L·(b−a).
func amount0Delta(l, a, b *big.Int, up bool) *big.Int {
	if a.Cmp(b) > 0 {
		a, b = b, a
	}
	d := sub(b, a)
	if up {
		return ceilBig(quoUp(quoUp(mulUp(l, d), b), a))
	}
	return quoTrunc(quoTrunc(mulTrunc(l, d), b), a)
}

func amount1Delta(l, a, b *big.Int, up bool) *big.Int {
	if a.Cmp(b) > 0 {
		a, b = b, a
	}
	d := sub(b, a)
	if up {
		return ceilBig(mulUp(l, d))
	}
	return mulTrunc(l, d)
}

// CLPool is a concentrated-liquidity pool's state for replay.
type CLPool struct {
	SpreadFactor *big.Int // Dec
	SqrtPrice    *big.Int // BigDec; nil until the first position
	Tick         int64
	Liquidity    *big.Int // Dec, in range
	Net, Gross   map[int64]*big.Int
}

// NewCLPool returns an empty pool with the spread factor (Dec).
func NewCLPool(spreadFactor *big.Int) *CLPool {
	return &CLPool{SpreadFactor: spreadFactor, Liquidity: bi(0), Net: map[int64]*big.Int{}, Gross: map[int64]*big.Int{}}
}

func (p *CLPool) clone() *CLPool {
	c := &CLPool{SpreadFactor: p.SpreadFactor, SqrtPrice: p.SqrtPrice, Tick: p.Tick, Liquidity: p.Liquidity,
		Net: make(map[int64]*big.Int, len(p.Net)), Gross: make(map[int64]*big.Int, len(p.Gross))}
	for k, v := range p.Net {
		c.Net[k] = v
	}
	for k, v := range p.Gross {
		c.Gross[k] = v
	}
	return c
}

// Initialize sets the initial price of a pool from its first position's
// provided amounts: sqrt(amount1/amount0) at Dec precision, as the module does.
func (p *CLPool) Initialize(amount0, amount1 *big.Int) error {
	if amount0.Sign() <= 0 || amount1.Sign() <= 0 {
		return errors.New("first position without both tokens")
	}
	price := floorDiv(new(big.Int).Mul(amount1, e18), amount0) // Dec
	sq := new(big.Int).Sqrt(new(big.Int).Mul(price, e18))      // Dec
	p.SqrtPrice = decToBig(sq)
	p.Tick = SqrtPriceTick(p.SqrtPrice)
	return nil
}

// Position applies a position's liquidity change (Dec, negative for withdrawals).
func (p *CLPool) Position(lower, upper int64, liq *big.Int) {
	for _, t := range []struct {
		tick int64
		net  *big.Int
	}{{lower, liq}, {upper, new(big.Int).Neg(liq)}} {
		net := add(p.netAt(t.tick), t.net)
		gross := add(p.grossAt(t.tick), new(big.Int).Abs(liq))
		if liq.Sign() < 0 {
			gross = sub(p.grossAt(t.tick), new(big.Int).Abs(liq))
		}
		if gross.Sign() <= 0 {
			delete(p.Net, t.tick)
			delete(p.Gross, t.tick)
			continue
		}
		p.Net[t.tick], p.Gross[t.tick] = net, gross
	}
	if p.SqrtPrice != nil && lower <= p.Tick && p.Tick < upper {
		p.Liquidity = add(p.Liquidity, liq)
	}
}

func (p *CLPool) netAt(t int64) *big.Int {
	if v, ok := p.Net[t]; ok {
		return v
	}
	return bi(0)
}

func (p *CLPool) grossAt(t int64) *big.Int {
	if v, ok := p.Gross[t]; ok {
		return v
	}
	return bi(0)
}

// Ticks lists the initialized ticks, ascending.
func (p *CLPool) Ticks() []int64 {
	ts := make([]int64, 0, len(p.Gross))
	for t := range p.Gross {
		ts = append(ts, t)
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	return ts
}

// nextTick is the next initialized tick in the swap's direction: the
// highest at or below the current tick when the price falls (zeroForOne),
// the lowest above it when it rises.
func (p *CLPool) nextTick(zeroForOne bool) (int64, error) {
	best, found := int64(0), false
	for t := range p.Gross {
		if zeroForOne && t <= p.Tick && (!found || t > best) {
			best, found = t, true
		}
		if !zeroForOne && t > p.Tick && (!found || t < best) {
			best, found = t, true
		}
	}
	if !found {
		return 0, errors.New("no liquidity left in the swap's direction")
	}
	return best, nil
}

// cross moves the pool onto tick t reached by a swap step.
func (p *CLPool) cross(t int64, zeroForOne bool) {
	if zeroForOne {
		p.Liquidity = sub(p.Liquidity, p.netAt(t))
		p.Tick = t - 1
		return
	}
	p.Liquidity = add(p.Liquidity, p.netAt(t))
	p.Tick = t
}

// SwapIn swaps amountIn (an integer amount, spread reward included) of
// token0 (zeroForOne) or token1 into the pool and returns the integer
// amount out and the total spread reward charged (Dec).
func (p *CLPool) SwapIn(zeroForOne bool, amountIn *big.Int) (out, spread *big.Int, err error) {
	rem := new(big.Int).Mul(amountIn, e18)
	calc, spread := bi(0), bi(0)
	one := e36
	keep := sub(one, decToBig(p.SpreadFactor))
	for rem.Cmp(bi(1)) > 0 {
		t, err := p.nextTick(zeroForOne)
		if err != nil {
			return nil, nil, err
		}
		target, l, cur := TickSqrtPrice(t), decToBig(p.Liquidity), p.SqrtPrice
		if l.Sign() <= 0 {
			p.SqrtPrice = target
			p.cross(t, zeroForOne)
			continue
		}
		less := mulTrunc(decToBig(rem), keep)
		var in, o, next *big.Int
		if zeroForOne {
			in = amount0Delta(l, target, cur, true)
			if less.Cmp(in) >= 0 {
				next = target
			} else if less.Sign() == 0 {
				next = cur
			} else {
				next = quoUp(mulUp(l, cur), add(mulTrunc(less, cur), l))
			}
			if next.Cmp(target) != 0 {
				in = amount0Delta(l, next, cur, true)
			}
			o = amount1Delta(l, next, cur, false)
		} else {
			in = amount1Delta(l, target, cur, true)
			if less.Cmp(in) >= 0 {
				next = target
			} else {
				next = add(quoTrunc(less, l), cur)
			}
			if next.Cmp(target) != 0 {
				in = amount1Delta(l, next, cur, true)
			}
			o = amount0Delta(l, next, cur, false)
		}
		reached := next.Cmp(target) == 0
		inDec := bigToDecUp(in)
		fee := bi(0)
		switch {
		case p.SpreadFactor.Sign() == 0:
		case reached:
			fee = ceilDiv(new(big.Int).Mul(ceilDiv(new(big.Int).Mul(inDec, p.SpreadFactor), e18), e18), sub(e18, p.SpreadFactor))
		default:
			fee = sub(rem, inDec)
		}
		rem = sub(rem, add(inDec, fee))
		calc = add(calc, bigToDecDown(o))
		spread = add(spread, fee)
		p.SqrtPrice = next
		if reached {
			p.cross(t, zeroForOne)
		} else {
			p.Tick = SqrtPriceTick(next)
		}
	}
	return floorDiv(calc, e18), spread, nil
}

// SwapOut swaps token0 in (zeroForOne) or token1 in for exactly amountOut
// of the other token and returns the integer amount in without spread.
func (p *CLPool) SwapOut(zeroForOne bool, amountOut *big.Int) (*big.Int, error) {
	rem := new(big.Int).Mul(amountOut, e18)
	calc := bi(0)
	for rem.Cmp(bi(1)) > 0 {
		t, err := p.nextTick(zeroForOne)
		if err != nil {
			return nil, err
		}
		target, l, cur := TickSqrtPrice(t), decToBig(p.Liquidity), p.SqrtPrice
		if l.Sign() <= 0 {
			p.SqrtPrice = target
			p.cross(t, zeroForOne)
			continue
		}
		remB := decToBig(rem)
		var in, o, next *big.Int
		if zeroForOne {
			o = amount1Delta(l, target, cur, false)
			if remB.Cmp(o) >= 0 {
				next = target
			} else {
				next = sub(cur, quoUp(remB, l))
			}
			if next.Cmp(target) != 0 {
				o = amount1Delta(l, next, cur, false)
			}
			in = amount0Delta(l, next, cur, true)
		} else {
			o = amount0Delta(l, target, cur, false)
			if remB.Cmp(o) >= 0 {
				next = target
			} else {
				next = quoUp(mulUp(l, cur), sub(l, mulUp(remB, cur)))
			}
			if next.Cmp(target) != 0 {
				o = amount0Delta(l, next, cur, false)
			}
			in = amount1Delta(l, next, cur, true)
		}
		rem = sub(rem, bigToDecDown(o))
		calc = add(calc, bigToDecUp(in))
		p.SqrtPrice = next
		if next.Cmp(target) == 0 {
			p.cross(t, zeroForOne)
		} else {
			p.Tick = SqrtPriceTick(next)
		}
	}
	return ceilDiv(calc, e18), nil
}

// SwapInNet replays an exact-in hop whose token_swapped event gives
// tokensIn net of the spread reward (the reward goes to the pool's spread
// rewards account): it finds the gross amount F with F − ⌊spread⌋ =
// tokensIn whose swap gives tokensOut, and applies that swap. When no gross
// amount reproduces tokensOut exactly (rounding across ticks), the one
// closest to it is applied and exact is false.
func (p *CLPool) SwapInNet(zeroForOne bool, tokensIn, tokensOut *big.Int) (exact bool, err error) {
	guess := floorDiv(new(big.Int).Mul(tokensIn, e18), sub(e18, p.SpreadFactor))
	var best *CLPool
	var bestDiff *big.Int
	for d := int64(-2); d <= 2; d++ {
		f := add(guess, bi(d))
		if f.Sign() <= 0 {
			continue
		}
		c := p.clone()
		out, spread, err := c.SwapIn(zeroForOne, f)
		if err != nil {
			continue
		}
		if sub(f, floorDiv(spread, e18)).Cmp(tokensIn) != 0 {
			continue
		}
		diff := new(big.Int).Abs(sub(out, tokensOut))
		if best == nil || diff.Cmp(bestDiff) < 0 {
			best, bestDiff = c, diff
		}
	}
	if best == nil {
		return false, fmt.Errorf("no gross amount gives %s in net of the spread reward", tokensIn)
	}
	*p = *best
	return bestDiff.Sign() == 0, nil
}

// SellDepth is the amount (base units, floored) of token0 (zeroForOne) or
// token1 that, swapped into the pool without fees, moves its sqrt price to
// target (below the current one for token0, above for token1), walking the
// initialized ticks; the pool's whole reserve in that direction when the
// liquidity runs out first. The pool is not changed.
func (p *CLPool) SellDepth(zeroForOne bool, target *big.Int) *big.Int {
	cur, tick, liq := p.SqrtPrice, p.Tick, p.Liquidity
	total := bi(0)
	for {
		next, found := int64(0), false
		for t := range p.Gross {
			if zeroForOne && t <= tick && (!found || t > next) {
				next, found = t, true
			}
			if !zeroForOne && t > tick && (!found || t < next) {
				next, found = t, true
			}
		}
		if !found {
			break
		}
		stop, reached := TickSqrtPrice(next), false
		if (zeroForOne && stop.Cmp(target) <= 0) || (!zeroForOne && stop.Cmp(target) >= 0) {
			stop, reached = target, true
		}
		if liq.Sign() > 0 && stop.Cmp(cur) != 0 {
			if zeroForOne {
				total = add(total, amount0Delta(decToBig(liq), stop, cur, false))
			} else {
				total = add(total, amount1Delta(decToBig(liq), stop, cur, false))
			}
		}
		if reached {
			break
		}
		cur = stop
		if zeroForOne {
			liq, tick = sub(liq, p.netAt(next)), next-1
		} else {
			liq, tick = add(liq, p.netAt(next)), next
		}
	}
	return floorDiv(total, e36)
}

// ScaleSqrtPrice is sqrtPrice · √ratio (ratio a Dec), the sqrt price at
// which the spot price is ratio times the current one.
func ScaleSqrtPrice(sqrtPrice, ratio *big.Int) *big.Int {
	root := new(big.Int).Sqrt(new(big.Int).Mul(decToBig(ratio), e36)) // BigDec √ratio
	return mulTrunc(sqrtPrice, root)
}
