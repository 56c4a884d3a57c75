package perp

import (
	"math/big"
	"testing"
)

// TestValuer: the running total equals Σ quantums × price ×
// 10^(atomic+exponent) computed whole with big.Rat and printed by
// FloatString(6), through changes of one term at a time, including
// halves to round (away from zero), terms below 10^-6 and a market
// without exponent (never valued).
func TestValuer(t *testing.T) {
	type market struct {
		exp *int64
	}
	e := func(n int64) *int64 { return &n }
	markets := []market{{e(-10 + -5)}, {e(-9 + -6)}, {e(-6 + 2)}, {nil}, {e(-3)}, {e(-7)}}
	steps := []struct {
		k        int
		quantums string
		price    string
		want     string
	}{
		{0, "322451000000", "", "0.000000"},
		{0, "", "2905712945", "936950.044828"}, // 936950.044828195
		{1, "5", "", "936950.044828"},
		{1, "", "100000", "936950.044828"},       // + 0.0000000005
		{2, "15", "3", "936950.049328"},          // + 0.0045
		{2, "5", "1", "936950.045328"},           // 0.0005 instead
		{4, "1", "1", "936950.046328"},           // + 0.001
		{3, "999999", "999999", "936950.046328"}, // no exponent: not valued
		{0, "0", "", "0.001500"},                 // 0.0015000005
		{4, "-3", "", "-0.002500"},               // -0.0024999995
		{1, "1", "1", "-0.002500"},               // -0.002499999999999
		{2, "0", "", "-0.003000"},                // -0.002999999999999999
		{1, "0", "", "-0.003000"},
		{4, "0", "", "0.000000"},
		{5, "5", "1", "0.000001"},   // a half: away from zero
		{5, "-5", "", "-0.000001"},  // likewise
		{5, "-4", "", "-0.000000"},  // as FloatString prints it
		{5, "-30", "", "-0.000003"}, // exactly
	}
	exps := make([]*int64, len(markets))
	for k, m := range markets {
		exps[k] = m.exp
	}
	v := newValuer(exps)
	q, p := make([]*big.Rat, len(markets)), make([]*big.Rat, len(markets))
	for n, s := range steps {
		if s.quantums != "" {
			if err := v.setQuantums(s.k, s.quantums); err != nil {
				t.Fatal(err)
			}
			q[s.k], _ = new(big.Rat).SetString(s.quantums)
		}
		if s.price != "" {
			if err := v.setPrice(s.k, s.price); err != nil {
				t.Fatal(err)
			}
			p[s.k], _ = new(big.Rat).SetString(s.price)
		}
		whole := new(big.Rat)
		for k, m := range markets {
			if q[k] == nil || p[k] == nil || m.exp == nil {
				continue
			}
			x := new(big.Rat).Mul(q[k], p[k])
			whole.Add(whole, x.Mul(x, pow10(*m.exp)))
		}
		if got := v.String(); got != s.want || got != whole.FloatString(6) {
			t.Errorf("step %d: %s, want %s (whole: %s)", n, got, s.want, whole.FloatString(6))
		}
	}
	if err := v.setPrice(0, "1.5"); err == nil {
		t.Error("a price with decimals was taken")
	}
}
