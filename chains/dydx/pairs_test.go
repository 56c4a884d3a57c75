package dydx

import (
	"encoding/json"
	"slices"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/chainlens/chainlens/chains"
)

// vote is FundingPremium{perpetual_id=1, premium_ppm=2} on the wire; an
// int32 is written as a sign-extended 64-bit varint.
func vote(perp uint32, premium int32) []byte {
	var inner []byte
	inner = protowire.AppendTag(inner, 1, protowire.VarintType)
	inner = protowire.AppendVarint(inner, uint64(perp))
	inner = protowire.AppendTag(inner, 2, protowire.VarintType)
	inner = protowire.AppendVarint(inner, uint64(int64(premium)))
	out := protowire.AppendTag(nil, 1, protowire.BytesType)
	return protowire.AppendBytes(out, inner)
}

func TestDecodePremiumVotes(t *testing.T) {
	for _, c := range []struct {
		name string
		msg  chains.Message
		want []premiumVote
		err  bool
	}{
		{"wire", chains.Message{Raw: append(vote(0, 556), vote(7, -1200)...)}, []premiumVote{{0, 556}, {7, -1200}}, false},
		{"wire, no votes", chains.Message{Raw: nil}, []premiumVote{}, false},
		{"json", chains.Message{JSON: json.RawMessage(`{"votes":[{"perpetual_id":1,"premium_ppm":"-15"},{"premium_ppm":3}]}`)},
			[]premiumVote{{1, -15}, {0, 3}}, false}, // proto3 JSON leaves a zero id out
		{"json, premium beyond int32", chains.Message{JSON: json.RawMessage(`{"votes":[{"perpetual_id":1,"premium_ppm":4294967296}]}`)}, nil, true},
		{"json, not a number", chains.Message{JSON: json.RawMessage(`{"votes":[{"perpetual_id":"x","premium_ppm":1}]}`)}, nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := decodePremiumVotes(c.msg)
			if (err != nil) != c.err {
				t.Fatalf("error %v, want error %v", err, c.err)
			}
			if !c.err && !slices.Equal(got, c.want) {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
}

func TestMaxAbsFundingRatePpm(t *testing.T) {
	for _, c := range []struct{ clamp, im, mf, want int64 }{
		{6_000_000, 150_000, 800_000, 180_000}, // x/perpetuals' own example: 600 % × (15 % − 12 %) = 18 %
		{6_000_000, 450_000, 1_000_000, 0},
		{6_000_000, 20_000, 600_000, 48_000}, // the dYdX localnet's Large-Cap tier
	} {
		if got := MaxAbsFundingRatePpm(c.clamp, c.im, c.mf); got != c.want {
			t.Errorf("MaxAbsFundingRatePpm(%d, %d, %d) = %d, want %d", c.clamp, c.im, c.mf, got, c.want)
		}
	}
}
