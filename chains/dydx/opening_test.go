package dydx_test

import (
	"fmt"
	"math/big"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/chains/dydx"
	"github.com/chainlens/chainlens/chains/protoset"
)

// TestOpeningPositions decodes Subaccount items encoded with dYdX's own
// message types (the shipped descriptors) into one row per open perpetual
// position: longs positive, shorts negative, closed positions (zero, which
// SerializableInt writes as no bytes) and asset positions left out.
func TestOpeningPositions(t *testing.T) {
	reg, err := protoset.NewShipped("cosmos", "dydx")
	if err != nil {
		t.Fatal(err)
	}
	mt, err := reg.FindMessageByName("dydxprotocol.subaccounts.Subaccount")
	if err != nil {
		t.Fatal(err)
	}
	type position struct {
		perpetual uint32
		quantums  *big.Int
	}
	subaccount := func(owner string, number uint32, positions ...position) []byte {
		t.Helper()
		m := dynamicpb.NewMessage(mt.Descriptor())
		fields := mt.Descriptor().Fields()
		id := m.Mutable(fields.ByName("id")).Message()
		id.Set(id.Descriptor().Fields().ByName("owner"), protoreflect.ValueOfString(owner))
		id.Set(id.Descriptor().Fields().ByName("number"), protoreflect.ValueOfUint32(number))
		assets := m.Mutable(fields.ByName("asset_positions")).List()
		usdc := assets.NewElement().Message()
		usdc.Set(usdc.Descriptor().Fields().ByName("asset_id"), protoreflect.ValueOfUint32(0))
		gob, _ := big.NewInt(5_000_000).GobEncode()
		usdc.Set(usdc.Descriptor().Fields().ByName("quantums"), protoreflect.ValueOfBytes(gob))
		assets.Append(protoreflect.ValueOfMessage(usdc))
		perps := m.Mutable(fields.ByName("perpetual_positions")).List()
		for _, p := range positions {
			e := perps.NewElement().Message()
			e.Set(e.Descriptor().Fields().ByName("perpetual_id"), protoreflect.ValueOfUint32(p.perpetual))
			if p.quantums.Sign() != 0 {
				gob, err := p.quantums.GobEncode()
				if err != nil {
					t.Fatal(err)
				}
				e.Set(e.Descriptor().Fields().ByName("quantums"), protoreflect.ValueOfBytes(gob))
			}
			fi, _ := big.NewInt(-123).GobEncode()
			e.Set(e.Descriptor().Fields().ByName("funding_index"), protoreflect.ValueOfBytes(fi))
			perps.Append(protoreflect.ValueOfMessage(e))
		}
		b, err := proto.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	huge, _ := new(big.Int).SetString("-123456789012345678901234567890", 10)
	items := [][]byte{
		subaccount("dydx1alice", 0, position{0, big.NewInt(2_000_000_000)}, position{1, big.NewInt(-35_000)}, position{7, big.NewInt(0)}),
		subaccount("dydx1bob", 128, position{33, huge}),
		subaccount("dydx1carol", 1), // USDC only
	}
	a := dydx.NewAdapter("dydx")
	rows := chains.NewRows()
	if err := a.OpeningRows("dydx-mainnet-1", 499, dydx.PathSubaccountAll, "", items, rows); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"[dydx-mainnet-1 499 dydx1alice 0 0 2000000000]",
		"[dydx-mainnet-1 499 dydx1alice 0 1 -35000]",
		"[dydx-mainnet-1 499 dydx1bob 128 33 -123456789012345678901234567890]",
	}
	got := rows.Of("dydx_opening_positions")
	if len(got) != len(want) {
		t.Fatalf("%d rows %v, want %d", len(got), got, len(want))
	}
	for i, r := range got {
		if s := fmt.Sprint(r); s != want[i] {
			t.Errorf("row %d: %s, want %s", i, s, want[i])
		}
	}
	for _, bad := range []struct {
		name  string
		path  string
		items [][]byte
	}{
		{"another query", "/dydxprotocol.subaccounts.Query/Subaccount", items},
		{"no owner", dydx.PathSubaccountAll, [][]byte{{0x18, 0x01}}},
		{"truncated", dydx.PathSubaccountAll, [][]byte{items[0][:len(items[0])-3]}},
	} {
		if err := a.OpeningRows("dydx-mainnet-1", 499, bad.path, "", bad.items, chains.NewRows()); err == nil {
			t.Errorf("%s: no error", bad.name)
		}
	}
}
