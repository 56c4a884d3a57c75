package cosmos

import (
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/chainlens/chainlens/chains"
)

// nodeSet is a node's descriptor set of one version of a module "upg.v1":
// MsgDo{string <field2> = 2}, plus MsgNew when withNew.
func nodeSet(field2 string, withNew bool) *descriptorpb.FileDescriptorSet {
	str := descriptorpb.FieldDescriptorProto_TYPE_STRING
	opt := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL
	msgs := []*descriptorpb.DescriptorProto{{Name: proto.String("MsgDo"), Field: []*descriptorpb.FieldDescriptorProto{
		{Name: proto.String("signer"), Number: proto.Int32(1), Type: &str, Label: &opt},
		{Name: proto.String(field2), Number: proto.Int32(2), Type: &str, Label: &opt},
	}}}
	if withNew {
		msgs = append(msgs, &descriptorpb.DescriptorProto{Name: proto.String("MsgNew")})
	}
	return &descriptorpb.FileDescriptorSet{File: []*descriptorpb.FileDescriptorProto{{
		Name: proto.String("upg/v1/tx.proto"), Package: proto.String("upg.v1"), Syntax: proto.String("proto3"), MessageType: msgs}}}
}

// Each height's messages are decoded with the node descriptors of the
// version in effect there (an upgrade renamed a field: the JSON follows
// the chain), a type that version lacks with another version's, and
// standard types with the shipped sets; versions arriving later (an
// upgrade seen while indexing) apply from then on.
func TestMessagesDecodeWithTheVersionOfTheirHeight(t *testing.T) {
	a := NewAdapter("cosmos", "cosmos")
	var do []byte
	do = protowire.AppendTag(do, 1, protowire.BytesType)
	do = protowire.AppendString(do, "s")
	do = protowire.AppendTag(do, 2, protowire.BytesType)
	do = protowire.AppendString(do, "h")
	send := protowire.AppendTag(nil, 1, protowire.BytesType)
	send = protowire.AppendString(send, "from")
	check := func(height int64, typeURL string, value []byte, want string) {
		t.Helper()
		got, complete, err := a.MessageDecoderAt(height).Decode(typeURL, value)
		switch {
		case want == "":
			if err == nil {
				t.Errorf("height %d %s: %s, want unknown", height, typeURL, got)
			}
		case err != nil || !complete || string(got) != want:
			t.Errorf("height %d %s: %s (%v, complete %v), want %s", height, typeURL, got, err, complete, want)
		}
	}
	check(150, "/upg.v1.MsgDo", do, "") // shipped sets only: unknown
	if err := a.UseNodeDescriptors([]chains.NodeDescriptors{{AppVersion: "v1", FromHeight: 100, Set: nodeSet("header", false)}}); err != nil {
		t.Fatal(err)
	}
	check(150, "/upg.v1.MsgDo", do, `{"signer":"s","header":"h"}`)
	check(150, "/upg.v1.MsgNew", nil, "")
	if err := a.UseNodeDescriptors([]chains.NodeDescriptors{
		{AppVersion: "v1", FromHeight: 100, Set: nodeSet("header", false)},
		{AppVersion: "v2", FromHeight: 200, Set: nodeSet("client_message", true)},
	}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		height  int64
		typeURL string
		value   []byte
		want    string
	}{
		{50, "/upg.v1.MsgDo", do, `{"signer":"s","header":"h"}`}, // below every version: the oldest
		{150, "/upg.v1.MsgDo", do, `{"signer":"s","header":"h"}`},
		{199, "/upg.v1.MsgDo", do, `{"signer":"s","header":"h"}`},
		{200, "/upg.v1.MsgDo", do, `{"signer":"s","client_message":"h"}`},
		{900, "/upg.v1.MsgDo", do, `{"signer":"s","client_message":"h"}`},
		{150, "/upg.v1.MsgNew", nil, `{}`}, // v1 lacks it: v2's
		{150, "/cosmos.bank.v1beta1.MsgSend", send, `{"from_address":"from","to_address":"","amount":[]}`},
		{900, "/upg.v1.MsgGone", nil, ""},
	}
	for _, tc := range tests {
		check(tc.height, tc.typeURL, tc.value, tc.want)
	}
}
