package dex_test

import (
	"math/big"
	"math/rand"
	"testing"

	"cosmossdk.io/math"

	"github.com/chainlens/chainlens/config"
	report "github.com/chainlens/chainlens/report/dex"
)

// TestUSDValue: amount × price ÷ 10^exponent, exactly as LegacyDec
// computes it, for every exponent an asset may have (the usual ones come
// from a table, the others are computed).
func TestUSDValue(t *testing.T) {
	ch := config.Chain{ID: "c"}
	for e := 0; e <= 30; e++ {
		ch.Assets = append(ch.Assets, config.Asset{Denom: "d" + string(rune('a'+e)), Exponent: e})
	}
	m := report.NewMarket(ch)
	amount, price := math.NewInt(123_456_789_012_345), math.LegacyMustNewDecFromStr("1.234567890123456789")
	for _, a := range ch.Assets {
		want := math.LegacyNewDecFromInt(amount).Mul(price).Quo(math.LegacyNewDec(10).Power(uint64(a.Exponent)))
		if got := m.USDValue(a.Denom, amount, price); !got.Equal(want) {
			t.Errorf("exponent %d: %s, want %s", a.Exponent, got, want)
		}
	}
	// Its shortcut against the expression: random amounts and prices over
	// the range an answer meets (and far past it), ties at each exponent
	// (rounded half to even: up from an odd quotient, not from an even),
	// negative values, zero, and a product past LegacyDec's range (the
	// expression's own panic).
	rng := rand.New(rand.NewSource(21))
	type value struct {
		amount math.Int
		price  math.LegacyDec
	}
	var cases []value
	for range 20_000 {
		a := new(big.Int).Rand(rng, new(big.Int).Lsh(big.NewInt(1), uint(1+rng.Intn(120))))
		p := new(big.Int).Rand(rng, new(big.Int).Lsh(big.NewInt(1), uint(1+rng.Intn(100))))
		cases = append(cases, value{math.NewIntFromBigInt(a), math.LegacyNewDecFromBigIntWithPrec(p, math.LegacyPrecision)})
	}
	for e := 1; e <= 18; e++ {
		half := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(e)), nil)
		half.Rsh(half, 1) // 5·10^(e−1)
		for _, q := range []int64{0, 1, 2, 3} {
			// amount × price's raw integer = q·10^e + 10^e/2: a tie.
			raw := new(big.Int).Mul(big.NewInt(q), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(e)), nil))
			raw.Add(raw, half)
			cases = append(cases, value{math.OneInt(), math.LegacyNewDecFromBigIntWithPrec(raw, math.LegacyPrecision)})
		}
	}
	cases = append(cases,
		value{math.NewInt(-5), math.LegacyMustNewDecFromStr("0.5")},
		value{math.NewInt(5), math.LegacyMustNewDecFromStr("-0.000000000000000005")},
		value{math.ZeroInt(), math.LegacyMustNewDecFromStr("3")})
	for _, c := range cases {
		for _, a := range ch.Assets[:19] {
			want := math.LegacyNewDecFromInt(c.amount).Mul(c.price).Quo(math.LegacyNewDec(10).Power(uint64(a.Exponent)))
			if got := m.USDValue(a.Denom, c.amount, c.price); !got.Equal(want) {
				t.Fatalf("%s × %s at exponent %d: %s, want %s", c.amount, c.price, a.Exponent, got, want)
			}
		}
	}
	huge := math.NewIntFromBigInt(new(big.Int).Lsh(big.NewInt(1), 200))
	func() {
		defer func() {
			if recover() == nil {
				t.Error("a product past LegacyDec's range did not panic as the expression does")
			}
		}()
		m.USDValue("dg", huge, math.LegacyNewDecFromBigIntWithPrec(new(big.Int).Lsh(big.NewInt(1), 120), math.LegacyPrecision))
	}()

	// The table is not changed by its use.
	if got := m.USDValue("da", math.NewInt(7), math.LegacyOneDec()); !got.Equal(math.LegacyNewDec(7)) {
		t.Errorf("exponent 0 after use: %s", got)
	}
}
