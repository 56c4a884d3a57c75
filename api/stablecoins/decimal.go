package stablecoins

import (
	"math/big"
	"strings"
)

// Exact arithmetic on the decimal strings the report tables return.

func rat(s string) *big.Rat {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return new(big.Rat)
	}
	return r
}

func scale(s string) int {
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return len(s) - i - 1
	}
	return 0
}

func add(a, b string) string {
	return new(big.Rat).Add(rat(a), rat(b)).FloatString(max(scale(a), scale(b)))
}

func sub(a, b string) string {
	return new(big.Rat).Sub(rat(a), rat(b)).FloatString(max(scale(a), scale(b)))
}

func cmpDecimal(a, b string) int { return rat(a).Cmp(rat(b)) }
