package perp

import (
	"math/big"
	"testing"
)

func TestFundingArithmetic(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in     []int64
		n      int64
		median int64
		avg    int64
	}{
		{[]int64{556, 556}, 4, 278, 278},           // [0 0 556 556]
		{[]int64{556, 556}, 5, 0, 222},             // [0 0 0 556 556]
		{[]int64{3}, 2, 2, 1},                      // (0+3)/2 = 1.5 → 2 away from zero; 3/2 truncated
		{[]int64{-3}, 2, -2, -1},                   // -1.5 → -2; -3/2 → -1 toward zero
		{[]int64{278}, 12, 0, 23},                  // one sample of twelve
		{nil, 0, 0, 0},                             // nothing to take
		{[]int64{-7, 5, 100}, 3, 5, 32},            // odd count: the middle value
		{[]int64{-100, -20, -10, 40}, 4, -15, -22}, // (-20 + -10)/2 = -15
	} {
		p := padded(c.in, c.n)
		if got := median(p); got != c.median {
			t.Errorf("median(%v) = %d, want %d", p, got, c.median)
		}
		if got := average(p); got != c.avg {
			t.Errorf("average(%v) = %d, want %d", p, got, c.avg)
		}
	}
	for _, c := range []struct {
		seconds, rate int64
		price         int64
		exp, res      int64
		want          string
	}{
		// BTC-USD of the dYdX localnet: 60 s × 20,000 ppm at 28,690 (price 2869000000 e-5), atomic resolution -10.
		{60, 20000, 2869000000, -5, -10, "119"},
		// ETH-USD: -15,000 ppm truncates toward zero (-56.x → -56).
		{60, -15000, 180000000000, -8, -9, "-56"},
		{3600, 0, 1, 0, 0, "0"},
	} {
		if got := FundingIndexDelta(c.seconds, c.rate, big.NewInt(c.price), c.exp, c.res); got.String() != c.want {
			t.Errorf("FundingIndexDelta(%d s, %d ppm, %d e%d, res %d) = %s, want %s", c.seconds, c.rate, c.price, c.exp, c.res, got, c.want)
		}
	}
}
