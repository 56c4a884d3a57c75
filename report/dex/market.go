package dex

import (
	"math/big"
	"strings"

	"cosmossdk.io/math"

	"github.com/chainlens/chainlens/config"
)

// DefaultHub is the denom routed through when a token has no anchor pool.
const DefaultHub = "uosmo"

// Market is the dex chain and its pricing settings.
type Market struct {
	ChainID string
	// Anchor is the USD stablecoin denom: the configured asset whose symbol is USDC.
	Anchor string
	// Hub is the routing denom (the chain's staking denom, default uosmo).
	Hub    string
	Assets map[string]config.Asset
	// Prefix is the chain's bech32 account prefix.
	Prefix string
}

// NewMarket reads the pricing settings of a dex chain. Without an asset
// whose symbol is USDC there is no anchor, and every price is unknown.
func NewMarket(ch config.Chain) Market {
	m := Market{ChainID: ch.ID, Hub: ch.StakingDenom, Assets: map[string]config.Asset{}, Prefix: ch.Bech32Prefix}
	if m.Hub == "" {
		m.Hub = DefaultHub
	}
	for _, a := range ch.Assets {
		m.Assets[a.Denom] = a
		if m.Anchor == "" && strings.EqualFold(a.Symbol, "USDC") {
			m.Anchor = a.Denom
		}
	}
	return m
}

// Exponent is the display exponent of denom; a denom without metadata is
// taken to have the anchor's.
func (m Market) Exponent(denom string) int {
	if a, ok := m.Assets[denom]; ok {
		return a.Exponent
	}
	return m.Assets[m.Anchor].Exponent
}

// Scale converts a price in anchor base units per base unit of denom into
// USD per display unit: × 10^(exponent(denom) − exponent(anchor)).
func (m Market) Scale(denom string, raw math.LegacyDec) math.LegacyDec {
	d := m.Exponent(denom) - m.Exponent(m.Anchor)
	switch {
	case d > 0:
		return raw.Mul(pow10(d))
	case d < 0:
		return raw.Quo(pow10(-d))
	}
	return raw
}

// USDValue is amount base units of denom at priceUSD per display unit:
// LegacyNewDecFromInt(amount).Mul(priceUSD).Quo(10^exponent), to the last
// digit. An answer values every reserve of every pool with it, and that
// expression costs three big products and three big divisions; as the
// Mul of a whole amount never rounds, it equals amount × price's 18-digit
// integer divided by 10^exponent, rounded half to even (LegacyDec's
// rounding): one product and one division. Negative values, exponents
// outside the table and products near LegacyDec's range take the
// expression itself.
func (m Market) USDValue(denom string, amount math.Int, priceUSD math.LegacyDec) math.LegacyDec {
	exp := m.Exponent(denom)
	if exp < 0 || exp >= len(pow10Ints) || amount.IsNegative() || priceUSD.IsNegative() {
		return math.LegacyNewDecFromInt(amount).Mul(priceUSD).Quo(pow10(exp))
	}
	x := new(big.Int).Mul(amount.BigIntMut(), priceUSD.BigIntMut())
	if x.BitLen() > math.MaxBitLen {
		return math.LegacyNewDecFromInt(amount).Mul(priceUSD).Quo(pow10(exp))
	}
	if exp == 0 {
		return math.LegacyNewDecFromBigIntWithPrec(x, math.LegacyPrecision)
	}
	unit := pow10Ints[exp]
	q, r := x.QuoRem(x, unit, new(big.Int))
	switch r.Lsh(r, 1).Cmp(unit) { // 2r against 10^exp: below, half, above
	case 1:
		q.Add(q, bigOne)
	case 0:
		if q.Bit(0) == 1 {
			q.Add(q, bigOne)
		}
	}
	return math.LegacyNewDecFromBigIntWithPrec(q, math.LegacyPrecision)
}

var bigOne = big.NewInt(1)

// pow10Ints are 10^n as integers (read only), for USDValue.
var pow10Ints = func() [19]*big.Int {
	var t [19]*big.Int
	for i := range t {
		t[i] = new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(i)), nil)
	}
	return t
}()

// PairPrice is the display units of quote paid per display unit of base
// in a trade of baseAmt for quoteAmt (base units).
func (m Market) PairPrice(base, quote string, baseAmt, quoteAmt math.Int) math.LegacyDec {
	p := math.LegacyNewDecFromInt(quoteAmt).Quo(math.LegacyNewDecFromInt(baseAmt))
	switch d := m.Exponent(base) - m.Exponent(quote); {
	case d > 0:
		return p.Mul(pow10(d))
	case d < 0:
		return p.Quo(pow10(-d))
	}
	return p
}

// pow10 is 10^n. USDValue runs for every reserve of every pool an answer
// values, and Power allocates a product per call: the usual exponents come
// from a table (read only; LegacyDec operations return new values).
func pow10(n int) math.LegacyDec {
	if n >= 0 && n < len(pow10s) {
		return pow10s[n]
	}
	return math.LegacyNewDec(10).Power(uint64(n))
}

var pow10s = func() [19]math.LegacyDec {
	var t [19]math.LegacyDec
	for i := range t {
		t[i] = math.LegacyNewDec(10).Power(uint64(i))
	}
	return t
}()
