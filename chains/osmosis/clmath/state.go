package clmath

import (
	"fmt"
	"math/big"

	"cosmossdk.io/math"
)

// CLTick is an initialized tick as osmosis_cl_tick_changes stores it.
type CLTick struct {
	Tick  int64  `bun:"tick"`
	Net   string `bun:"net"`
	Gross string `bun:"gross"`
}

// CLPoolFromState rebuilds a pool from a row of osmosis_cl_state_hourly
// and its ticks (decimal strings as stored).
func CLPoolFromState(sqrtPrice string, tick int64, liquidity string, ticks []CLTick) (*CLPool, error) {
	sp, ok := new(big.Int).SetString(StripPoint(sqrtPrice, 36), 10)
	liq, err := DecInt(liquidity)
	if !ok || err != nil {
		return nil, fmt.Errorf("pool state %q %q", sqrtPrice, liquidity)
	}
	p := NewCLPool(bi(0))
	p.SqrtPrice, p.Tick, p.Liquidity = sp, tick, liq
	for _, t := range ticks {
		net, err1 := DecInt(t.Net)
		gross, err2 := DecInt(t.Gross)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("tick %d: %q %q", t.Tick, t.Net, t.Gross)
		}
		p.Net[t.Tick], p.Gross[t.Tick] = net, gross
	}
	return p, nil
}

// DecInt reads a decimal string with at most 18 places as a Dec integer.
func DecInt(s string) (*big.Int, error) {
	d, err := math.LegacyNewDecFromStr(s)
	if err != nil {
		return nil, fmt.Errorf("decimal %q: %w", s, err)
	}
	return d.BigInt(), nil
}

// StripPoint writes a decimal string with places decimals as the integer
// of its smallest unit.
func StripPoint(s string, places int) string {
	i, f := s, ""
	for k := 0; k < len(s); k++ {
		if s[k] == '.' {
			i, f = s[:k], s[k+1:]
			break
		}
	}
	for len(f) < places {
		f += "0"
	}
	return i + f[:places]
}

// Fixed renders an integer of 10^-places units as a decimal string.
func Fixed(v *big.Int, places int) string {
	neg := v.Sign() < 0
	s := new(big.Int).Abs(v).String()
	for len(s) <= places {
		s = "0" + s
	}
	out := s[:len(s)-places] + "." + s[len(s)-places:]
	if neg {
		out = "-" + out
	}
	return out
}

// PositionAmounts is what a concentrated-liquidity position of liquidity
// (a Dec string) in [lower, upper) holds in a pool at sqrtPrice (a BigDec
// string, 36 decimals) and tick, as the module's position queries compute
// it (CalcActualAmounts of the liquidity, rounded up: checked against the
// localnet's cl_user_positions).
func PositionAmounts(liquidity string, lower, upper int64, sqrtPrice string, tick int64) (math.Int, math.Int, error) {
	l, err := DecInt(liquidity)
	if err != nil {
		return math.Int{}, math.Int{}, err
	}
	sp, ok := new(big.Int).SetString(StripPoint(sqrtPrice, 36), 10)
	if !ok {
		return math.Int{}, math.Int{}, fmt.Errorf("sqrt price %q", sqrtPrice)
	}
	l = decToBig(l)
	a, b := TickSqrtPrice(lower), TickSqrtPrice(upper)
	zero := bi(0)
	a0, a1 := zero, zero
	switch {
	case tick < lower:
		a0 = amount0Delta(l, a, b, true)
	case tick < upper:
		a0 = amount0Delta(l, sp, b, true)
		a1 = amount1Delta(l, a, sp, true)
	default:
		a1 = amount1Delta(l, a, b, true)
	}
	return math.NewIntFromBigInt(ceilDiv(a0, e36)), math.NewIntFromBigInt(ceilDiv(a1, e36)), nil
}
