package dex

import (
	"math/big"
	"math/rand"
	"testing"
)

// TestParseRat: zeros (the usual value of most sources) skip SetString and
// are still exactly zero; everything else parses as SetString does,
// malformed text included.
func TestParseRat(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // "" = not parsed
	}{
		{"0", "0/1"}, {"0.000000000000000000", "0/1"}, {"-0.0", "0/1"}, {"00", "0/1"},
		{"10", "10/1"}, {"0.5", "1/2"}, {"-0.25", "-1/4"}, {"308.480834314517063308", "77120208578629265827/250000000000000000"},
		{"", ""}, {".", ""}, {"-", ""}, {"0.0x", ""}, {"--0", ""},
	} {
		got, ok := parseRat(c.in)
		_, okLib := new(big.Rat).SetString(c.in)
		if ok != okLib {
			t.Errorf("%q: parsed %v, SetString %v", c.in, ok, okLib)
		}
		if !ok {
			if c.want != "" {
				t.Errorf("%q: not parsed, want %s", c.in, c.want)
			}
			continue
		}
		if got.String() != c.want {
			t.Errorf("%q: %s, want %s", c.in, got, c.want)
		}
	}
}

// TestEarnedPerLiquidity: the hours' quotients summed as integers of
// 10^-80 USD stay within a unit per hour of the exact sum, and give the
// exact sum's 18 decimals (what answers show) on random windows: hours in
// and out of the range, hours without active liquidity, zero sources.
func TestEarnedPerLiquidity(t *testing.T) {
	rng := rand.New(rand.NewSource(8))
	dec := func(digits int) *big.Rat { // a numeric of 18 decimals
		n := new(big.Int).Rand(rng, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(digits)), nil))
		return new(big.Rat).SetFrac(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil))
	}
	for trial := range 200 {
		cl := &clState{aprPool: &aprPool{}}
		for h := range 1 + rng.Intn(168) {
			src := aprSources{dec(18 + rng.Intn(8)), new(big.Rat), dec(10 + rng.Intn(20))}
			if rng.Intn(3) == 0 {
				src.fees = new(big.Rat)
			}
			cl.Hours = append(cl.Hours, aprHour{aprSources: src})
			active := dec(20 + rng.Intn(20))
			if h%17 == 0 {
				active = new(big.Rat)
			}
			cl.hourActive = append(cl.hourActive, active)
			cl.hourTick = append(cl.hourTick, int64(rng.Intn(2000)-1000))
		}
		lower, upper := int64(-500), int64(700)
		got := cl.earnedPerLiquidity(lower, upper)
		want := aprSources{new(big.Rat), new(big.Rat), new(big.Rat)}
		in := 0
		for i, h := range cl.Hours {
			if cl.hourActive[i].Sign() <= 0 || cl.hourTick[i] < lower || cl.hourTick[i] >= upper {
				continue
			}
			in++
			want.fees.Add(want.fees, new(big.Rat).Quo(h.fees, cl.hourActive[i]))
			want.native.Add(want.native, new(big.Rat).Quo(h.native, cl.hourActive[i]))
			want.boost.Add(want.boost, new(big.Rat).Quo(h.boost, cl.hourActive[i]))
		}
		bound := new(big.Rat).SetFrac(big.NewInt(int64(in)), perLiquidityUnit)
		for k, pair := range [][2]*big.Rat{{got.fees, want.fees}, {got.native, want.native}, {got.boost, want.boost}} {
			diff := new(big.Rat).Sub(pair[1], pair[0])
			if diff.Sign() < 0 || diff.Cmp(bound) > 0 {
				t.Fatalf("trial %d source %d: %s short of the exact sum, bound %s", trial, k, diff.FloatString(90), bound.FloatString(90))
			}
			// As an answer shows it: times a large liquidity, annualised.
			scale := new(big.Rat).Mul(big.NewRat(secondsPerYear*100, 3600), big.NewRat(1_000_000_000_000, 1))
			g, w := new(big.Rat).Mul(pair[0], scale).FloatString(18), new(big.Rat).Mul(pair[1], scale).FloatString(18)
			if g != w {
				t.Fatalf("trial %d source %d: %s, exactly %s", trial, k, g, w)
			}
		}
	}
}
