package clmath

import "testing"

// TestPriceString: the order book's ticks follow the concentrated
// liquidity scheme (chain-events.md §5.6: exponent at price one −6,
// 9,000,000 ticks per decade): tick −1,500,000 is 1 − 1,500,000 × 10^−7.
func TestPriceString(t *testing.T) {
	for tick, want := range map[int64]string{0: "1", -1500000: "0.85", 2000000: "3", 9000000: "10", -9000000: "0.1",
		-108000000: "0.000000000001", 9000001: "10.00001"} {
		if got := PriceString(tick); got != want {
			t.Errorf("tick %d: %s, want %s", tick, got, want)
		}
	}
}
