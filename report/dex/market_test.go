package dex_test

import (
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
	// The table is not changed by its use.
	if got := m.USDValue("da", math.NewInt(7), math.LegacyOneDec()); !got.Equal(math.LegacyNewDec(7)) {
		t.Errorf("exponent 0 after use: %s", got)
	}
}
