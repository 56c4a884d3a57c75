package cosmos

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/cosmos/cosmos-sdk/types/bech32"

	"github.com/chainlens/chainlens/chains"
)

func TestInvolvedAddresses(t *testing.T) {
	key := bytes.Repeat([]byte{0x11}, 20)
	other := bytes.Repeat([]byte{0x22}, 20)
	contract := bytes.Repeat([]byte{0x33}, 32)
	evm := bytes.Repeat([]byte{0x44}, 20)
	payer := bytes.Repeat([]byte{0x55}, 20)
	enc := func(hrp string, b []byte) string {
		s, err := bech32.ConvertAndEncode(hrp, b)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	tx := chains.Tx{
		Signers:  []string{enc("osmo", key)},
		FeePayer: enc("osmo", payer),
		Messages: []chains.Message{
			// The signer again under another prefix and as a validator
			// operator, a contract, a denom holding an address, and strings
			// that only look like addresses.
			{Index: 0, JSON: []byte(`{"sender":"` + enc("cosmos", key) + `","validator":"` + enc("osmovaloper", key) + `","contract":"` + enc("osmo", contract) +
				`","denom":"factory/` + enc("osmo", other) + `/ufoo","hash":"` + strings.Repeat("AB", 32) + `","sig":"KlkAi0IphGnjzmRPRBI9rRI/bofSufgZiZ9klmsH","bad":"` + enc("osmo", other)[:40] + `x"}`)},
			// Kept raw: signers and its events only.
			{Index: 1},
		},
		Events: []chains.Event{
			{MsgIndex: 1, Attrs: []chains.Attr{{Key: "recipient", Value: "0x" + hex.EncodeToString(evm)}, {Key: "upper", Value: strings.ToUpper(enc("osmo", other))}}},
			{MsgIndex: -1, Attrs: []chains.Attr{{Key: "fee_payer", Value: enc("osmo", contract)}}}, // not a message's event
		},
	}
	setInvolved(&tx)
	tests := []struct {
		msg  int
		want [][]byte
	}{
		{0, [][]byte{key, other, contract, payer}},
		{1, [][]byte{key, other, evm, payer}},
	}
	for _, tc := range tests {
		got := tx.Messages[tc.msg].Addresses
		want := sortedAddresses(tc.want)
		if len(got) != len(want) {
			t.Fatalf("msg %d: %x, want %x", tc.msg, got, want)
		}
		for i := range want {
			if !bytes.Equal(got[i], want[i]) {
				t.Errorf("msg %d: %x, want %x", tc.msg, got, want)
				break
			}
		}
	}
}

func sortedAddresses(in [][]byte) [][]byte {
	out := append([][]byte(nil), in...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if bytes.Compare(out[j], out[i]) < 0 {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// Every message of the recorded localnets involves at least its signer (or,
// for the proposer-injected dYdX messages without one, its body's).
func TestLocalnetMessagesInvolveAccounts(t *testing.T) {
	for _, w := range localnets {
		ln := loadLocalnet(t, w.name, w.chainID, w.prefix)
		none, msgs := 0, 0
		for h := int64(1); h <= int64(len(ln.blocks)); h++ {
			b, err := DecodeBlock(ln.raw(h), ln.opts())
			if err != nil {
				t.Fatal(err)
			}
			for _, tx := range b.Txs {
				for _, m := range tx.Messages {
					msgs++
					if len(m.Addresses) == 0 {
						none++
					}
					for _, a := range m.Addresses {
						if len(a) != 20 && len(a) != 32 {
							t.Errorf("%s height %d: address of %d bytes", w.name, h, len(a))
						}
					}
				}
			}
		}
		// dYdX's proposer-injected messages (4 per block, unsigned) name
		// no account; every other message does.
		if (w.name != "dydx" && none > 0) || none > 4*len(ln.blocks) {
			t.Errorf("%s: %d of %d messages involve no account", w.name, none, msgs)
		}
		t.Logf("%s: %d messages, %d without an account", w.name, msgs, none)
	}
}
