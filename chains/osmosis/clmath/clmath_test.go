package clmath

import (
	"math/big"
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
