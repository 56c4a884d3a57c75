package cosmos

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	upgradev1beta1 "cosmossdk.io/api/cosmos/upgrade/v1beta1"
	"github.com/cosmos/cosmos-sdk/codec"
	codectypes "github.com/cosmos/cosmos-sdk/codec/types"
	"github.com/cosmos/cosmos-sdk/crypto/keys/secp256k1"
	sdktestdata "github.com/cosmos/cosmos-sdk/testutil/testdata"
	sdk "github.com/cosmos/cosmos-sdk/types"
	govv1 "github.com/cosmos/cosmos-sdk/x/gov/types/v1"
	protov2 "google.golang.org/protobuf/proto"

	"github.com/chainlens/chainlens/chains"
)

func TestRegistryKnown(t *testing.T) {
	r := registry()
	tests := []struct {
		typeURL string
		known   bool
	}{
		{"/cosmos.bank.v1beta1.MsgSend", true},
		{"/cosmos.bank.v1beta1.MsgMultiSend", true},
		{"/cosmos.staking.v1beta1.MsgDelegate", true},
		{"/cosmos.staking.v1beta1.MsgCancelUnbondingDelegation", true},
		{"/cosmos.distribution.v1beta1.MsgWithdrawDelegatorReward", true},
		{"/cosmos.gov.v1.MsgSubmitProposal", true},
		{"/cosmos.gov.v1beta1.MsgSubmitProposal", true},
		{"/cosmos.gov.v1beta1.TextProposal", true},
		{"/cosmos.params.v1beta1.ParameterChangeProposal", true},
		{"/cosmos.authz.v1beta1.MsgExec", true},
		{"/cosmos.authz.v1beta1.GenericAuthorization", true},
		{"/cosmos.slashing.v1beta1.MsgUnjail", true},
		{"/cosmos.vesting.v1beta1.MsgCreateVestingAccount", true},
		{"/cosmos.auth.v1beta1.MsgUpdateParams", true},
		{"/cosmos.auth.v1beta1.BaseAccount", true},
		{"/cosmos.mint.v1beta1.MsgUpdateParams", true},
		{"/cosmos.group.v1.MsgCreateGroup", true},
		{"/cosmos.crypto.secp256k1.PubKey", true},
		{"/cosmos.crypto.ed25519.PubKey", true},
		{"/cosmos.crypto.multisig.LegacyAminoPubKey", true},
		{"/cosmos.feegrant.v1beta1.MsgGrantAllowance", true},
		{"/cosmos.feegrant.v1beta1.BasicAllowance", true},
		{"/cosmos.upgrade.v1beta1.MsgSoftwareUpgrade", true},
		{"/cosmos.upgrade.v1beta1.SoftwareUpgradeProposal", true},
		{"/osmosis.gamm.v1beta1.MsgSwapExactAmountIn", false},
		{"/ibc.core.client.v1.MsgUpdateClient", false},
		{"/cosmwasm.wasm.v1.MsgExecuteContract", false},
		{"cosmos.bank.v1beta1.MsgSend", false},
		{"", false},
	}
	for _, tc := range tests {
		if got := r.Known(tc.typeURL); got != tc.known {
			t.Errorf("Known(%q) = %v, want %v", tc.typeURL, got, tc.known)
		}
	}
	var nilReg *Registry
	if nilReg.Known("/cosmos.bank.v1beta1.MsgSend") {
		t.Error("nil registry knows a type")
	}
	if _, err := nilReg.MessageJSON("/cosmos.bank.v1beta1.MsgSend", nil); !errors.Is(err, ErrUnknownType) {
		t.Errorf("nil registry: %v", err)
	}
}

func TestRegistryMessageJSON(t *testing.T) {
	r := registry()
	plan := &upgradev1beta1.Plan{Name: "v2", Height: 100, Info: "i"}
	upg, err := protov2.Marshal(&upgradev1beta1.MsgSoftwareUpgrade{Authority: "gov", Plan: plan})
	if err != nil {
		t.Fatal(err)
	}
	const upgJSON = `{"authority":"gov","plan":{"name":"v2","time":null,"height":"100","info":"i","upgraded_client_state":null}}`
	// A gogoproto gov proposal holding the pulsar-only upgrade message.
	prop, err := (&govv1.MsgSubmitProposal{
		Messages: []*codectypes.Any{{TypeUrl: "/cosmos.upgrade.v1beta1.MsgSoftwareUpgrade", Value: upg}},
		Proposer: "p", Title: "t",
	}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	propWithUnknown, _ := (&govv1.MsgSubmitProposal{
		Messages: []*codectypes.Any{{TypeUrl: "/osmosis.superfluid.v1beta1.SetSuperfluidAssetsProposal", Value: []byte{1}}},
	}).Marshal()

	tests := []struct {
		name    string
		typeURL string
		value   []byte
		json    string
		err     error // nil: any error when json is ""
	}{
		{"empty message", "/cosmos.bank.v1beta1.MsgSend", nil, `{"from_address":"","to_address":"","amount":[]}`, nil},
		{"pulsar type (x/upgrade)", "/cosmos.upgrade.v1beta1.MsgSoftwareUpgrade", upg, upgJSON, nil},
		{"pulsar type inside a gogoproto Any", "/cosmos.gov.v1.MsgSubmitProposal", prop,
			`{"messages":[{"@type":"/cosmos.upgrade.v1beta1.MsgSoftwareUpgrade","authority":"gov","plan":{"name":"v2","time":null,"height":"100","info":"i","upgraded_client_state":null}}],` +
				`"initial_deposit":[],"proposer":"p","metadata":"","title":"t","summary":"","expedited":false}`, nil},
		{"unknown type", "/osmosis.gamm.v1beta1.MsgSwapExactAmountIn", []byte{1}, "", ErrUnknownType},
		{"bytes that do not decode", "/cosmos.bank.v1beta1.MsgSend", []byte{0x0a, 0x05, 'a'}, "", nil},
		{"pulsar bytes that do not decode", "/cosmos.upgrade.v1beta1.MsgSoftwareUpgrade", []byte{0x12, 0x05}, "", nil},
		{"known type holding an unknown Any", "/cosmos.gov.v1.MsgSubmitProposal", propWithUnknown, "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := r.MessageJSON(tc.typeURL, tc.value)
			if tc.json != "" {
				if err != nil {
					t.Fatal(err)
				}
				assertJSONEqual(t, got, tc.json)
				return
			}
			if got != nil || err == nil || (tc.err != nil && !errors.Is(err, tc.err)) || (tc.err == nil && errors.Is(err, ErrUnknownType)) {
				t.Errorf("MessageJSON = %s, %v; want error %v", got, err, tc.err)
			}
		})
	}

	// The registry is shared: concurrent use must be safe (run with -race).
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				if b, err := r.MessageJSON("/cosmos.gov.v1.MsgSubmitProposal", prop); err != nil || len(b) == 0 {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// NewRegistryWith adds types; NewRegistry's registries are independent.
func TestNewRegistryWith(t *testing.T) {
	called := 0
	r := NewRegistryWith(func(ir codectypes.InterfaceRegistry) {
		called++
		sdktestdata.RegisterInterfaces(ir)
	})
	if called != 1 || !r.Known("/testpb.TestMsg") || registry().Known("/testpb.TestMsg") {
		t.Fatalf("called %d, known %v", called, r.Known("/testpb.TestMsg"))
	}
	value, _ := (&sdktestdata.TestMsg{Signers: []string{"a"}}).Marshal()
	got, err := r.MessageJSON("/testpb.TestMsg", value)
	if err != nil {
		t.Fatal(err)
	}
	assertJSONEqual(t, got, `{"signers":["a"]}`)
}

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
	cdc := codec.NewProtoCodec(registry().ir)
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
