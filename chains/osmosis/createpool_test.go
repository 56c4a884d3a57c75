package osmosis

import (
	"reflect"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/chainlens/chainlens/chains"
)

func msg(build func(b []byte) []byte) []byte { return build(nil) }

func bytesField(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

func coin(denom, amount string) []byte {
	return bytesField(bytesField(nil, 1, []byte(denom)), 2, []byte(amount))
}

func TestDecodeCreatePool(t *testing.T) {
	balancer := msg(func(b []byte) []byte {
		b = bytesField(b, 1, []byte("osmo1creator"))
		b = bytesField(b, 2, bytesField(bytesField(nil, 1, []byte("2000000000000000")), 2, []byte("10000000000000000")))
		b = bytesField(b, 3, bytesField(bytesField(nil, 1, coin("uatom", "5")), 2, []byte("1")))
		b = bytesField(b, 3, bytesField(bytesField(nil, 1, coin("uosmo", "50")), 2, []byte("1")))
		return protowire.AppendVarint(protowire.AppendTag(b, 9, protowire.VarintType), 7) // unknown field, skipped
	})
	cl := msg(func(b []byte) []byte {
		b = bytesField(b, 1, []byte("osmo1cl"))
		b = bytesField(b, 2, []byte("uion"))
		b = bytesField(b, 3, []byte("uosmo"))
		b = protowire.AppendVarint(protowire.AppendTag(b, 4, protowire.VarintType), 100)
		return bytesField(b, 5, []byte("0.002"))
	})
	stable := func(packed bool) []byte {
		b := bytesField(nil, 1, []byte("osmo1stable"))
		b = bytesField(b, 2, bytesField(nil, 1, []byte("1000000000000000")))
		b = bytesField(b, 3, coin("uusdc", "30"))
		b = bytesField(b, 3, coin("uweth", "10"))
		if packed {
			return bytesField(b, 4, protowire.AppendVarint(protowire.AppendVarint(nil, 1), 1000))
		}
		b = protowire.AppendVarint(protowire.AppendTag(b, 4, protowire.VarintType), 1)
		return protowire.AppendVarint(protowire.AppendTag(b, 4, protowire.VarintType), 1000)
	}
	usdcWeth := []chains.Coin{{Denom: "uusdc", Amount: "30"}, {Denom: "uweth", Amount: "10"}}
	cases := []struct {
		url     string
		raw     []byte
		typ     string
		who     string
		dens    []string
		dep     []chains.Coin
		fee     string
		weights []string
	}{
		{msgCreateBalancer, balancer, "balancer", "osmo1creator", nil, []chains.Coin{{Denom: "uatom", Amount: "5"}, {Denom: "uosmo", Amount: "50"}}, "0.002000000000000000", []string{"1", "1"}},
		{msgCreateStableswap, stable(true), "stableswap", "osmo1stable", nil, usdcWeth, "0.001000000000000000", []string{"1", "1000"}},
		{msgCreateStableswap, stable(false), "stableswap", "osmo1stable", nil, usdcWeth, "0.001000000000000000", []string{"1", "1000"}},
		{msgCreateConcentrated, cl, "concentrated", "osmo1cl", []string{"uion", "uosmo"}, nil, "0.002000000000000000", nil},
		{"/cosmos.bank.v1beta1.MsgSend", []byte{0xff}, "", "", nil, nil, "", nil},
	}
	for _, c := range cases {
		p, err := decodeCreatePool(c.url, c.raw)
		if err != nil {
			t.Fatalf("%s: %v", c.url, err)
		}
		fee := ""
		if p.SwapFee != nil {
			fee = p.SwapFee.String()
		}
		if p.Type != c.typ || p.Creator != c.who || !reflect.DeepEqual(p.Denoms, c.dens) || !reflect.DeepEqual(p.Deposit, c.dep) || fee != c.fee ||
			!reflect.DeepEqual(p.Weights, c.weights) {
			t.Errorf("%s: got %+v fee %s", c.url, p, fee)
		}
	}
	// Exit fee (PoolParams field 2, 0.01 here; absent: nil) and tick spacing.
	if p, _ := decodeCreatePool(msgCreateBalancer, balancer); p.ExitFee == nil || p.ExitFee.String() != "0.010000000000000000" {
		t.Errorf("balancer exit fee %v", p.ExitFee)
	}
	if p, _ := decodeCreatePool(msgCreateStableswap, stable(true)); p.ExitFee != nil || p.TickSpacing != 0 {
		t.Errorf("stableswap exit fee %v, tick spacing %d", p.ExitFee, p.TickSpacing)
	}
	if p, _ := decodeCreatePool(msgCreateConcentrated, cl); p.TickSpacing != 100 || p.ExitFee != nil {
		t.Errorf("CL tick spacing %d, exit fee %v", p.TickSpacing, p.ExitFee)
	}
	for _, bad := range [][]byte{{0x0a, 0x05, 'a'}, {0x1a, 0x02, 0x0a, 0x09}, bytesField(nil, 2, bytesField(nil, 1, []byte("x1")))} {
		if _, err := decodeCreatePool(msgCreateBalancer, bad); err == nil {
			t.Errorf("%x: no error", bad)
		}
	}
}
