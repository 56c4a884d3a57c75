package protoset

import (
	"bytes"
	"encoding/json"
	"fmt"

	feegrantv1beta1 "cosmossdk.io/api/cosmos/feegrant/v1beta1"
	upgradev1beta1 "cosmossdk.io/api/cosmos/upgrade/v1beta1"
	"github.com/cosmos/cosmos-sdk/codec"
	codectypes "github.com/cosmos/cosmos-sdk/codec/types"
	"github.com/cosmos/cosmos-sdk/std"
	authtypes "github.com/cosmos/cosmos-sdk/x/auth/types"
	vestingtypes "github.com/cosmos/cosmos-sdk/x/auth/vesting/types"
	"github.com/cosmos/cosmos-sdk/x/authz"
	banktypes "github.com/cosmos/cosmos-sdk/x/bank/types"
	consensustypes "github.com/cosmos/cosmos-sdk/x/consensus/types"
	crisistypes "github.com/cosmos/cosmos-sdk/x/crisis/types"
	distrtypes "github.com/cosmos/cosmos-sdk/x/distribution/types"
	govv1 "github.com/cosmos/cosmos-sdk/x/gov/types/v1"
	govv1beta1 "github.com/cosmos/cosmos-sdk/x/gov/types/v1beta1"
	"github.com/cosmos/cosmos-sdk/x/group"
	minttypes "github.com/cosmos/cosmos-sdk/x/mint/types"
	paramsproposal "github.com/cosmos/cosmos-sdk/x/params/types/proposal"
	protocolpooltypes "github.com/cosmos/cosmos-sdk/x/protocolpool/types"
	slashingtypes "github.com/cosmos/cosmos-sdk/x/slashing/types"
	stakingtypes "github.com/cosmos/cosmos-sdk/x/staking/types"
	"github.com/cosmos/gogoproto/jsonpb"
	gogoproto "github.com/cosmos/gogoproto/proto"
	"google.golang.org/protobuf/encoding/protojson"
	protov2 "google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// sdkReference is the reference the descriptor-driven encoder is tested
// against: the cosmos-sdk's own codec (compiled gogoproto types of the
// standard modules in an InterfaceRegistry, JSON by codec.ProtoMarshalJSON),
// which is what a chain's node writes.
type sdkReference struct {
	ir codectypes.InterfaceRegistry
	// pulsar holds types whose Go code exists here only as
	// google.golang.org/protobuf ("pulsar") types from cosmossdk.io/api:
	// x/feegrant and x/upgrade live in modules of their own since SDK 0.50.
	pulsar map[string]protoreflect.MessageType
}

// newSDKReference returns the reference with the standard cosmos-sdk v0.53
// modules plus the types that each register function adds.
func newSDKReference(register ...func(codectypes.InterfaceRegistry)) *sdkReference {
	ir := codectypes.NewInterfaceRegistry()
	std.RegisterInterfaces(ir) // sdk.Msg, tx, crypto keys
	for _, f := range []func(codectypes.InterfaceRegistry){
		authtypes.RegisterInterfaces,
		vestingtypes.RegisterInterfaces,
		banktypes.RegisterInterfaces,
		stakingtypes.RegisterInterfaces,
		distrtypes.RegisterInterfaces,
		govv1.RegisterInterfaces,
		govv1beta1.RegisterInterfaces,
		authz.RegisterInterfaces,
		slashingtypes.RegisterInterfaces,
		minttypes.RegisterInterfaces,
		paramsproposal.RegisterInterfaces,
		consensustypes.RegisterInterfaces,
		crisistypes.RegisterInterfaces,
		group.RegisterInterfaces,
		protocolpooltypes.RegisterInterfaces,
	} {
		f(ir)
	}
	for _, f := range register {
		f(ir)
	}
	r := &sdkReference{ir: ir, pulsar: map[string]protoreflect.MessageType{}}
	for _, fd := range []protoreflect.FileDescriptor{
		feegrantv1beta1.File_cosmos_feegrant_v1beta1_feegrant_proto,
		feegrantv1beta1.File_cosmos_feegrant_v1beta1_tx_proto,
		upgradev1beta1.File_cosmos_upgrade_v1beta1_upgrade_proto,
		upgradev1beta1.File_cosmos_upgrade_v1beta1_tx_proto,
	} {
		msgs := fd.Messages()
		for i := 0; i < msgs.Len(); i++ {
			name := msgs.Get(i).FullName()
			url := "/" + string(name)
			if _, err := ir.Resolve(url); err == nil {
				continue // a gogoproto type registered by a register function wins
			}
			if mt, err := protoregistry.GlobalTypes.FindMessageByName(name); err == nil {
				r.pulsar[url] = mt
			}
		}
	}
	return r
}

// Known reports whether the registry decodes the type URL.
func (r *sdkReference) Known(typeURL string) bool {
	if r == nil {
		return false
	}
	if _, err := r.ir.Resolve(typeURL); err == nil {
		return true
	}
	_, ok := r.pulsar[typeURL]
	return ok
}

// MessageJSON returns the proto3 JSON (field names as in the .proto files,
// defaults emitted, as the SDK's codec.ProtoMarshalJSON writes it) of a
// message given its type URL and protobuf bytes. It fails with
// ErrUnknownType for a type the registry does not know, and with another
// error when the bytes do not decode or the message holds an Any of an
// unknown type. It never panics: a panic inside the generated or codec code
// is turned into an error.
func (r *sdkReference) MessageJSON(typeURL string, value []byte) (out json.RawMessage, err error) {
	if r == nil {
		return nil, ErrUnknownType
	}
	defer func() {
		if p := recover(); p != nil {
			out, err = nil, fmt.Errorf("%s: panic while decoding: %v", typeURL, p)
		}
	}()
	res := anyResolver{r}
	msg, err := res.Resolve(typeURL)
	if err != nil { // unknown at the top level
		return nil, fmt.Errorf("%s: %w", typeURL, ErrUnknownType)
	}
	if err := gogoproto.Unmarshal(value, msg); err != nil {
		return nil, fmt.Errorf("%s: %w", typeURL, err)
	}
	b, err := codec.ProtoMarshalJSON(msg, res)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", typeURL, err)
	}
	return b, nil
}

// anyResolver resolves type URLs for the gogoproto JSON marshaller: first
// the interface registry, then the pulsar types.
type anyResolver struct{ r *sdkReference }

// Resolve implements jsonpb.AnyResolver.
func (a anyResolver) Resolve(typeURL string) (gogoproto.Message, error) {
	if m, err := a.r.ir.Resolve(typeURL); err == nil {
		return m, nil
	}
	if mt, ok := a.r.pulsar[typeURL]; ok {
		return &pulsarMessage{m: mt.New().Interface()}, nil
	}
	// Not ErrUnknownType: inside an Any, it is the outer message that fails.
	return nil, fmt.Errorf("unknown type URL %s", typeURL)
}

// pulsarMessage adapts a google.golang.org/protobuf message to the
// gogoproto interfaces the SDK's JSON marshaller uses (also inside Anys).
type pulsarMessage struct{ m protov2.Message }

// Reset implements gogoproto.Message.
func (p *pulsarMessage) Reset() { protov2.Reset(p.m) }

// String implements gogoproto.Message.
func (p *pulsarMessage) String() string { return fmt.Sprint(p.m) }

// ProtoMessage implements gogoproto.Message.
func (p *pulsarMessage) ProtoMessage() {}

// Unmarshal implements gogoproto.Unmarshaler.
func (p *pulsarMessage) Unmarshal(b []byte) error { return protov2.Unmarshal(b, p.m) }

// MarshalJSONPB implements jsonpb.JSONPBMarshaler with the same options the
// SDK uses for gogoproto types, compacted (protojson adds random spaces).
func (p *pulsarMessage) MarshalJSONPB(*jsonpb.Marshaler) ([]byte, error) {
	b, err := protojson.MarshalOptions{UseProtoNames: true, EmitUnpopulated: true}.Marshal(p.m)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
