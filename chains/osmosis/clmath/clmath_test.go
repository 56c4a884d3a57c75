package clmath

import (
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestTickPrice checks the tick scheme of chain-events.md §5.2 (exponent at
// price one −6, 9,000,000 ticks per decade) on values worked by hand.
func TestTickPrice(t *testing.T) {
	for _, c := range []struct {
		tick  int64
		price string // decimal, 36 places
	}{
		{0, "1"},
		{1, "1.000001"},
		{-1, "0.9999999"},
		{1491096, "2.491096"},
		{9000000, "10"},
		{36650010, "16500.1"}, // the module README's worked example
		{MinTick, "0.000000000001"},
		{MaxTick, "100000000000000000000000000000000000000"},
	} {
		want, ok := new(big.Int).SetString(StripPoint(c.price, 36), 10)
		if !ok {
			t.Fatal(c.price)
		}
		if got := TickPrice(c.tick); got.Cmp(want) != 0 {
			t.Errorf("tick %d: price %s, want %s", c.tick, Fixed(got, 36), c.price)
		}
		if got := SqrtPriceTick(TickSqrtPrice(c.tick)); got != c.tick {
			t.Errorf("tick %d: back from its sqrt price %d", c.tick, got)
		}
	}
}

// TestSqrtPriceTickMatchesBisection: SqrtPriceTick gives what a bisection
// of the whole tick range by its definition gives (the highest tick whose
// sqrt price is at most sp) at every tick's sqrt price, one unit either
// side of it and half way to the next, over decade boundaries, the range's
// ends and seeded random ticks; and MinTick below every sqrt price.
func TestSqrtPriceTickMatchesBisection(t *testing.T) {
	bisect := func(sp *big.Int) int64 {
		lo, hi := int64(MinTick), int64(MaxTick)
		for lo < hi {
			m := lo + (hi-lo+1)/2
			if TickSqrtPrice(m).Cmp(sp) <= 0 {
				lo = m
			} else {
				hi = m - 1
			}
		}
		return lo
	}
	ticks := []int64{MinTick, MinTick + 1, MaxTick - 1, MaxTick, 0, 1, -1}
	for d := int64(-12); d <= 38; d++ {
		b := d * ticksPerDecade
		ticks = append(ticks, b-2, b-1, b, b+1, b+2)
	}
	rnd := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		ticks = append(ticks, MinTick+rnd.Int64N(MaxTick-MinTick))
	}
	one := big.NewInt(1)
	for _, tick := range ticks {
		if tick < MinTick || tick > MaxTick {
			continue
		}
		sp := TickSqrtPrice(tick)
		sps := []*big.Int{sp, new(big.Int).Sub(sp, one), new(big.Int).Add(sp, one)}
		if tick < MaxTick {
			next := TickSqrtPrice(tick + 1)
			sps = append(sps, new(big.Int).Rsh(new(big.Int).Add(sp, next), 1))
		}
		for _, s := range sps {
			if got, want := SqrtPriceTick(s), bisect(s); got != want {
				t.Fatalf("SqrtPriceTick(sqrt price of tick %d %+d) = %d, want %d", tick, new(big.Int).Sub(s, sp), got, want)
			}
		}
	}
	for _, s := range []*big.Int{big.NewInt(0), big.NewInt(1), new(big.Int).Sub(TickSqrtPrice(MinTick), one)} {
		if got := SqrtPriceTick(s); got != MinTick {
			t.Errorf("SqrtPriceTick(%s) = %d, want MinTick", s, got)
		}
	}
}
