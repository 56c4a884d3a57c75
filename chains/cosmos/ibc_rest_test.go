package cosmos_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/chains/osmosis"
	"github.com/chainlens/chainlens/internal/osmosistest"
)

// TestIBCPacketsMainnetREST decodes the IBC packets of the recorded Osmosis
// mainnet block 2,836,990 (events from the REST transactions' logs): three
// MsgTransfer sends (txs 47, 50 and 51: ustars vouchers back to stargaze on
// channel-75, sequences 8595 and 8596; ulum vouchers to lum on channel-115,
// sequence 2190) and one receipt of uatom from the Cosmos Hub's channel-141
// on channel-0 (tx 52, message 1, sequence 304240). Its success stays
// unknown (nil): the SDK 0.44 logs merge events by type in alphabetical
// order, so fungible_token_packet comes before recv_packet and the
// decoder only reads outcome events that follow the packet. Values read
// off mainnet-txs-block-2836990.json.
func TestIBCPacketsMainnetREST(t *testing.T) {
	block, results := osmosistest.MainnetBlock(t)
	a := osmosis.NewAdapter("osmo")
	b, err := a.Decode(chains.RawBlock{ChainID: "osmosis-1", Height: osmosistest.MainnetHeight, Block: block, Results: results}, chains.AttrPlain)
	if err != nil {
		t.Fatal(err)
	}
	out := chains.NewRows()
	if err := a.Rows(b, out); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range out.Of("ibc_packets") {
		parts := make([]string, len(r))
		for i, v := range r {
			if p, ok := v.(*bool); ok && p != nil {
				v = *p
			}
			parts[i] = fmt.Sprint(v)
		}
		got = append(got, strings.Join(parts, " "))
	}
	want := []string{
		"osmosis-1 2836990 47 5 0 send transfer channel-75 transfer channel-0 8595 0 transfer/channel-75/ustars 577557 osmo13nwv9d4swmn90rvrmnmscshm5utecul9h985rp stars13nwv9d4swmn90rvrmnmscshm5utecul9tzre7z <nil>",
		"osmosis-1 2836990 50 5 0 send transfer channel-75 transfer channel-0 8596 0 transfer/channel-75/ustars 1901008 osmo14hhte7m2vw8pk2s5qjyyfpya5pafws2qavpz7q stars14hhte7m2vw8pk2s5qjyyfpya5pafws2qpt90rr <nil>",
		"osmosis-1 2836990 51 5 0 send transfer channel-115 transfer channel-3 2190 0 transfer/channel-115/ulum 214565367 osmo1rek8l6ed80yn4l2kmfskr965h9yvt7t5rtxfvq lum1rek8l6ed80yn4l2kmfskr965h9yvt7t576gs0x <nil>",
		"osmosis-1 2836990 52 8 1 recv transfer channel-141 transfer channel-0 304240 0 uatom 120000 cosmos1wvny9sasrfjjphn5s0q9gymh374efg87f8w6fa osmo1wvny9sasrfjjphn5s0q9gymh374efg87pua2l0 <nil>",
	}
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("row %d\n%s\nwant\n%s", i, got[i], want[i])
		}
	}
}
