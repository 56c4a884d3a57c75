package clmath

import (
	"math/big"
	"strings"
)

// SqrtPriceRat is the sqrt price of a tick as the module computes it
// (TickSqrtPrice), as an exact fraction.
func SqrtPriceRat(tick int64) *big.Rat {
	return new(big.Rat).SetFrac(TickSqrtPrice(tick), e36)
}

// AmountsPerLiquidity is what one unit of liquidity between the ticks
// lower and upper holds of each token at the sqrt price sp, exactly (no
// module rounding): the valuation of a position, not its withdrawal.
func AmountsPerLiquidity(sp *big.Rat, lower, upper int64) (amount0, amount1 *big.Rat) {
	sa, sb := SqrtPriceRat(lower), SqrtPriceRat(upper)
	amount0, amount1 = new(big.Rat), new(big.Rat)
	inv := func(x *big.Rat) *big.Rat { return new(big.Rat).Inv(x) }
	switch {
	case sp.Cmp(sa) <= 0:
		amount0.Sub(inv(sa), inv(sb))
	case sp.Cmp(sb) >= 0:
		amount1.Sub(sb, sa)
	default:
		amount0.Sub(inv(sp), inv(sb))
		amount1.Sub(sp, sa)
	}
	return amount0, amount1
}

// PriceString is the price of a tick as a decimal string without trailing
// zeros (36 decimals at most).
func PriceString(tick int64) string {
	s := TickPrice(tick).String()
	for len(s) <= 36 {
		s = "0" + s
	}
	s = s[:len(s)-36] + "." + s[len(s)-36:]
	return strings.TrimRight(strings.TrimRight(s, "0"), ".")
}
