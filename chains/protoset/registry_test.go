package protoset

import (
	"errors"
	"sync"
	"testing"

	upgradev1beta1 "cosmossdk.io/api/cosmos/upgrade/v1beta1"
	codectypes "github.com/cosmos/cosmos-sdk/codec/types"
	govv1 "github.com/cosmos/cosmos-sdk/x/gov/types/v1"
	protov2 "google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
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
		{"/ibc.core.client.v1.MsgUpdateClient", true},
		{"/ibc.applications.transfer.v1.MsgTransfer", true},
		{"/ibc.lightclients.tendermint.v1.Header", true},
		{"/cosmwasm.wasm.v1.MsgExecuteContract", true},
		{"/interchain_security.ccv.provider.v1.MsgAssignConsumerKey", true},
		{"type.googleapis.com/cosmos.bank.v1beta1.MsgSend", true},
		{"/osmosis.gamm.v1beta1.MsgSwapExactAmountIn", false}, // not in the common set
		{"/cosmos.bank.v1beta1.MsgSendX", false},
		{"cosmos.bank.v1beta1.MsgSend", true},
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
	// Plan.time is a non-nullable stdtime: x/upgrade writes the zero time,
	// never null.
	const upgJSON = `{"authority":"gov","plan":{"name":"v2","time":"0001-01-01T00:00:00Z","height":"100","info":"i","upgraded_client_state":null}}`
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
			`{"messages":[{"@type":"/cosmos.upgrade.v1beta1.MsgSoftwareUpgrade","authority":"gov","plan":{"name":"v2","time":"0001-01-01T00:00:00Z","height":"100","info":"i","upgraded_client_state":null}}],` +
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

// A name two sets define in files of different paths is the earlier set's
// (a node's own descriptors come before the shipped ones).
func TestEarlierSetWins(t *testing.T) {
	set := func(path, field string) *descriptorpb.FileDescriptorSet {
		str := descriptorpb.FieldDescriptorProto_TYPE_STRING
		opt := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL
		return &descriptorpb.FileDescriptorSet{File: []*descriptorpb.FileDescriptorProto{{Name: protov2.String(path), Package: protov2.String("pkg.v1"),
			Syntax: protov2.String("proto3"), MessageType: []*descriptorpb.DescriptorProto{{Name: protov2.String("MsgX"),
				Field: []*descriptorpb.FieldDescriptorProto{{Name: protov2.String(field), Number: protov2.Int32(1), Type: &str, Label: &opt}}}}}}}
	}
	r, err := New(set("pkg/v1/tx2.proto", "node_field"), set("pkg/v1/msgs.proto", "shipped_field"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.MessageJSON("/pkg.v1.MsgX", nil)
	if err != nil || string(got) != `{"node_field":""}` {
		t.Errorf("%s (%v), want the first set's field", got, err)
	}
}
