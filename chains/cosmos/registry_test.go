package cosmos

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/cosmos/cosmos-sdk/codec"
	codectypes "github.com/cosmos/cosmos-sdk/codec/types"
	"github.com/cosmos/cosmos-sdk/crypto/keys/secp256k1"
	"github.com/cosmos/cosmos-sdk/std"
	sdk "github.com/cosmos/cosmos-sdk/types"
	banktypes "github.com/cosmos/cosmos-sdk/x/bank/types"
	distrtypes "github.com/cosmos/cosmos-sdk/x/distribution/types"
	stakingtypes "github.com/cosmos/cosmos-sdk/x/staking/types"

	"github.com/chainlens/chainlens/chains"
)

// The cosmoshub files are REST txs (hash, height, messages as JSON, events),
// not RPC, and hold no tx bytes. What can be checked: their events decode as
// plain SDK 0.53 events (msg_index on message events, none on the ante and
// feemarket events), and their messages, re-encoded to protobuf inside a tx,
// decode back to the same JSON.
var cosmoshubTxFiles = []struct {
	file       string
	events     int
	msgIndexed int
	types      map[string]int
}{
	{"cosmoshub/tx-claim-multicoin-30959419.json", 18, 6, map[string]int{
		"message": 4, "coin_spent": 3, "coin_received": 3, "transfer": 3, "tx": 2, "withdraw_rewards": 1, "fee_pay": 1, "tip_pay": 1}},
	{"cosmoshub/tx-delegate-principal-30672570.json", 16, 4, map[string]int{
		"coin_spent": 3, "coin_received": 3, "message": 3, "tx": 2, "transfer": 2, "delegate": 1, "fee_pay": 1, "tip_pay": 1}},
	{"cosmoshub/tx-redelegate-two-validators-32495937.json", 24, 12, map[string]int{
		"message": 5, "coin_spent": 4, "coin_received": 4, "transfer": 4, "tx": 2, "withdraw_rewards": 2, "redelegate": 1, "fee_pay": 1, "tip_pay": 1}},
}

func TestCosmoshubRESTTxs(t *testing.T) {
	ir := codectypes.NewInterfaceRegistry()
	std.RegisterInterfaces(ir)
	banktypes.RegisterInterfaces(ir)
	stakingtypes.RegisterInterfaces(ir)
	distrtypes.RegisterInterfaces(ir)
	cdc := codec.NewProtoCodec(ir)
	key := secp256k1.GenPrivKeyFromSecret([]byte("hub")).PubKey()
	for _, w := range cosmoshubTxFiles {
		t.Run(w.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join(testdata, w.file))
			if err != nil {
				t.Fatal(err)
			}
			var rest struct {
				Hash     string            `json:"hash"`
				Height   string            `json:"height"`
				Code     uint32            `json:"code"`
				Messages []json.RawMessage `json:"messages"`
				Events   json.RawMessage   `json:"events"`
			}
			if err := json.Unmarshal(b, &rest); err != nil {
				t.Fatal(err)
			}
			res := json.RawMessage(fmt.Sprintf(`{"height":%q,"txs_results":[{"code":%d,"events":%s}]}`, rest.Height, rest.Code, rest.Events))
			r, err := parseResults(res, chains.AttrAuto)
			if err != nil || r.base64 {
				t.Fatalf("base64 %v, %v", r != nil && r.base64, err)
			}
			evs := r.txs[0].events
			types, msgIndexed := map[string]int{}, 0
			for _, ev := range evs {
				types[ev.Type]++
				if ev.MsgIndex == 0 {
					msgIndexed++
				}
				if (ev.Type == "fee_pay" || ev.Type == "tip_pay" || ev.Type == "tx") && ev.MsgIndex != -1 {
					t.Errorf("%s event with msg_index %d", ev.Type, ev.MsgIndex)
				}
			}
			if len(evs) != w.events || msgIndexed != w.msgIndexed {
				t.Errorf("%d events, %d with msg_index 0; want %d, %d", len(evs), msgIndexed, w.events, w.msgIndexed)
			}
			assertCounts(t, "event types", types, w.types)

			var anys []*codectypes.Any
			for _, m := range rest.Messages {
				var msg sdk.Msg
				if err := cdc.UnmarshalInterfaceJSON(m, &msg); err != nil {
					t.Fatal(err)
				}
				anys = append(anys, mustAny(t, msg))
			}
			tx := DecodeTx(buildTx(t, anys, "", nil, mustAny(t, key)), Options{Bech32Prefix: "cosmos", Registry: registry()})
			if tx.Undecodable || len(tx.Messages) != len(rest.Messages) || len(tx.Signers) != 1 {
				t.Fatalf("%+v", tx)
			}
			for i, m := range rest.Messages {
				var want map[string]any
				_ = json.Unmarshal(m, &want)
				if tx.Messages[i].TypeURL != want["@type"] {
					t.Errorf("type %s, want %s", tx.Messages[i].TypeURL, want["@type"])
				}
				delete(want, "@type")
				wantJSON, _ := json.Marshal(want)
				assertJSONEqual(t, tx.Messages[i].JSON, string(wantJSON))
			}
		})
	}
}
