package protoset

import (
	"math/big"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

func TestAppendDecimal(t *testing.T) {
	tests := []struct {
		text   string
		places int
		want   string
		ok     bool
	}{
		{"50000000000000000", 18, "0.050000000000000000", true},
		{"1000000000000000000", 18, "1.000000000000000000", true},
		{"-5", 18, "-0.000000000000000005", true},
		{"", 18, "0.000000000000000000", true}, // a nil Dec
		{"0", 18, "0.000000000000000000", true},
		{"-0", 18, "0.000000000000000000", true},
		{"007", 3, "0.007", true},
		{"123456789", 3, "123456.789", true},
		{"500000000000000000000000000", 27, "0.500000000000000000000000000", true},
		{"1.5", 18, "", false},
		{"12a", 18, "", false},
	}
	for _, tc := range tests {
		got, ok := appendDecimal(nil, tc.text, tc.places)
		if ok != tc.ok || (ok && string(got) != tc.want) {
			t.Errorf("appendDecimal(%q, %d) = %q, %v; want %q, %v", tc.text, tc.places, got, ok, tc.want, tc.ok)
		}
	}
}

// SerializableInt's bytes are big.Int's GobEncode form.
func TestAppendGobInt(t *testing.T) {
	for _, s := range []string{"0", "1", "-1", "255", "-256", "123456789012345678901234567890", "-98765432109876543210"} {
		x, _ := new(big.Int).SetString(s, 10)
		gob, err := x.GobEncode()
		if err != nil {
			t.Fatal(err)
		}
		got, ok := appendGobInt(nil, gob)
		if !ok || string(got) != s {
			t.Errorf("%s: %q, %v", s, got, ok)
		}
	}
	if got, ok := appendGobInt(nil, nil); !ok || string(got) != "0" {
		t.Errorf("empty: %q, %v", got, ok)
	}
	if _, ok := appendGobInt(nil, []byte{0x05, 1}); ok {
		t.Error("gob version 2 accepted")
	}
}

// The Go types behind gogoproto options decide a field's JSON, as the
// chain's own encoder writes it: wasmd's contract messages are JSON, not
// base64; Neutron's PrecDec has 27 decimals; an absent nullable decimal is
// null.
func TestGoTypesOfFields(t *testing.T) {
	wasm, err := NewShipped()
	if err != nil {
		t.Fatal(err)
	}
	neutron, err := NewShipped("neutron")
	if err != nil {
		t.Fatal(err)
	}
	var exec []byte
	exec = protowire.AppendTag(exec, 1, protowire.BytesType)
	exec = protowire.AppendString(exec, "sender")
	exec = protowire.AppendTag(exec, 2, protowire.BytesType)
	exec = protowire.AppendString(exec, "contract")
	exec = protowire.AppendTag(exec, 3, protowire.BytesType)
	exec = protowire.AppendString(exec, `{ "swap": {"min": "<1&2>"} }`)
	var notJSON []byte
	notJSON = protowire.AppendTag(notJSON, 3, protowire.BytesType)
	notJSON = protowire.AppendString(notJSON, `{"swap":`)
	var hop []byte
	hop = protowire.AppendTag(hop, 1, protowire.BytesType)
	hop = protowire.AppendString(hop, "c")
	hop = protowire.AppendTag(hop, 5, protowire.BytesType)
	hop = protowire.AppendString(hop, "1500000000000000000000000000")
	tests := []struct {
		name    string
		r       *Registry
		typeURL string
		value   []byte
		want    string // "" = an error
	}{
		{"wasm msg is JSON, compacted and HTML-escaped", wasm, "/cosmwasm.wasm.v1.MsgExecuteContract", exec,
			`{"sender":"sender","contract":"contract","msg":{"swap":{"min":"\u003c1\u00262\u003e"}},"funds":[]}`},
		{"wasm msg that is not JSON", wasm, "/cosmwasm.wasm.v1.MsgExecuteContract", notJSON, ""},
		{"PrecDec", neutron, "/neutron.dex.MsgMultiHopSwap", hop,
			`{"creator":"c","receiver":"","routes":[],"amount_in":"0","exit_limit_price":"1.500000000000000000000000000","pick_best_route":false}`},
		{"absent nullable PrecDec and Int", neutron, "/neutron.dex.MsgPlaceLimitOrder", nil,
			`{"creator":"","receiver":"","token_in":"","token_out":"","tick_index_in_to_out":"0","amount_in":"0","order_type":"GOOD_TIL_CANCELLED","expiration_time":null,"max_amount_out":null,"limit_sell_price":null,"min_average_sell_price":null}`},
	}
	for _, tc := range tests {
		got, err := tc.r.MessageJSON(tc.typeURL, tc.value)
		if tc.want == "" {
			if err == nil {
				t.Errorf("%s: %s, want an error", tc.name, got)
			}
			continue
		}
		if err != nil || string(got) != tc.want {
			t.Errorf("%s:\n got %s (%v)\nwant %s", tc.name, got, err, tc.want)
		}
	}
}

// An absent bytes field is null, as the SDK's codec writes it (gogoproto
// leaves it nil); a present one is base64.
func TestAbsentBytesAreNull(t *testing.T) {
	ref := newSDKReference()
	key := protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), []byte{2, 3})
	for _, value := range [][]byte{nil, key} {
		want, err := ref.MessageJSON("/cosmos.crypto.secp256k1.PubKey", value)
		if err != nil {
			t.Fatal(err)
		}
		got, err := registry().MessageJSON("/cosmos.crypto.secp256k1.PubKey", value)
		if err != nil || string(got) != string(want) {
			t.Errorf("%x: %s (%v), the SDK writes %s", value, got, err, want)
		}
	}
}
