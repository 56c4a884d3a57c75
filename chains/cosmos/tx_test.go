package cosmos

import (
	"bytes"
	"compress/zlib"
	"encoding/hex"
	"reflect"
	"strings"
	"testing"

	sdkmath "cosmossdk.io/math"
	codectypes "github.com/cosmos/cosmos-sdk/codec/types"
	"github.com/cosmos/cosmos-sdk/crypto/keys/ed25519"
	kmultisig "github.com/cosmos/cosmos-sdk/crypto/keys/multisig"
	"github.com/cosmos/cosmos-sdk/crypto/keys/secp256k1"
	cryptotypes "github.com/cosmos/cosmos-sdk/crypto/types"
	sdk "github.com/cosmos/cosmos-sdk/types"
	"github.com/cosmos/cosmos-sdk/types/bech32"
	txtypes "github.com/cosmos/cosmos-sdk/types/tx"
	banktypes "github.com/cosmos/cosmos-sdk/x/bank/types"
	gogoproto "github.com/cosmos/gogoproto/proto"

	"github.com/chainlens/chainlens/chains"
)

func mustAny(t testing.TB, m gogoproto.Message) *codectypes.Any {
	t.Helper()
	a, err := codectypes.NewAnyWithValue(m)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func rawAny(typeURL string, value []byte) *codectypes.Any {
	return &codectypes.Any{TypeUrl: typeURL, Value: value}
}

// buildTx encodes a TxRaw of the messages, signed (in form only) by keys.
func buildTx(t testing.TB, msgs []*codectypes.Any, memo string, fee *txtypes.Fee, keys ...*codectypes.Any) []byte {
	t.Helper()
	body, err := (&txtypes.TxBody{Messages: msgs, Memo: memo}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	ai := &txtypes.AuthInfo{Fee: fee}
	for i, k := range keys {
		ai.SignerInfos = append(ai.SignerInfos, &txtypes.SignerInfo{PublicKey: k, Sequence: uint64(i)})
	}
	auth, err := ai.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	b, err := (&txtypes.TxRaw{BodyBytes: body, AuthInfoBytes: auth, Signatures: [][]byte{{1, 2, 3}}}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func bech(t testing.TB, prefix string, addr []byte) string {
	t.Helper()
	s, err := bech32.ConvertAndEncode(prefix, addr)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPubKeyAddress(t *testing.T) {
	sk := secp256k1.GenPrivKeyFromSecret([]byte("chainlens")).PubKey().(*secp256k1.PubKey)
	ek := ed25519.GenPrivKeyFromSecret([]byte("chainlens")).PubKey().(*ed25519.PubKey)
	sk2 := secp256k1.GenPrivKeyFromSecret([]byte("second")).PubKey().(*secp256k1.PubKey)
	multi := kmultisig.NewLegacyAminoPubKey(2, []cryptotypes.PubKey{sk, ek, sk2})
	nested := kmultisig.NewLegacyAminoPubKey(1, []cryptotypes.PubKey{multi, sk2})

	// Ethereum's test vector: private key 1, whose public key is the
	// generator G, has address 0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf.
	g, _ := hex.DecodeString("0279BE667EF9DCBBAC55A06295CE870B07029BFCDB2DCE28D959F2815B16F81798")
	gFull, _ := hex.DecodeString("0479BE667EF9DCBBAC55A06295CE870B07029BFCDB2DCE28D959F2815B16F81798" +
		"483ADA7726A3C4655DA4FBFC0E1108A8FD17B448A68554199C47D08FFB10D4B8")
	ethAddr, _ := hex.DecodeString("7E5F4552091A69125d5DfCb7b8C2659029395Bdf")
	keyBytes := func(k []byte) []byte { b, _ := (&secp256k1.PubKey{Key: k}).Marshal(); return b }
	aa := bytes.Repeat([]byte{7}, 32)

	tests := []struct {
		name string
		pk   *codectypes.Any
		want []byte // nil: no address
	}{
		{"secp256k1", mustAny(t, sk), sk.Address()},
		{"ed25519", mustAny(t, ek), ek.Address()},
		{"multisig of secp256k1 and ed25519 (SDK amino address)", mustAny(t, multi), multi.Address()},
		{"nested multisig", mustAny(t, nested), nested.Address()},
		{"ethermint ethsecp256k1, compressed", rawAny("/ethermint.crypto.v1.ethsecp256k1.PubKey", keyBytes(g)), ethAddr},
		{"injective ethsecp256k1, uncompressed", rawAny("/injective.crypto.v1beta1.ethsecp256k1.PubKey", keyBytes(gFull)), ethAddr},
		{"cosmos/evm ethsecp256k1", rawAny("/cosmos.evm.crypto.v1.ethsecp256k1.PubKey", keyBytes(g)), ethAddr},
		{"xion NilPubKey carries the address", rawAny(TypeNilPubKey, keyBytes(aa)), aa},
		{"nil", nil, nil},
		{"unknown type", rawAny("/cosmos.crypto.secp256r1.PubKey", keyBytes(g)), nil},
		{"secp256k1 of the wrong length", rawAny(TypeSecp256k1, keyBytes(g[:32])), nil},
		{"ed25519 of the wrong length", rawAny(TypeEd25519, keyBytes(g)), nil},
		{"secp256k1 not protobuf", rawAny(TypeSecp256k1, []byte{0xff, 0xff}), nil},
		{"ethsecp256k1 not on the curve", rawAny("/ethermint.crypto.v1.ethsecp256k1.PubKey", keyBytes(append([]byte{2}, bytes.Repeat([]byte{0xff}, 32)...))), nil},
		{"multisig with an unknown key", rawAny(TypeMultisig, []byte{0x08, 0x01, 0x12, 0x05, 0x0a, 0x03, '/', 'x', 'y'}), nil},
		{"multisig truncated", rawAny(TypeMultisig, []byte{0x08}), nil},
		{"NilPubKey of odd length", rawAny(TypeNilPubKey, keyBytes([]byte{1, 2, 3})), nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := PubKeyAddress(tc.pk)
			if ok != (tc.want != nil) || !bytes.Equal(got, tc.want) {
				t.Errorf("PubKeyAddress = %X %v, want %X", got, ok, tc.want)
			}
		})
	}
}

func TestDecodeTx(t *testing.T) {
	sk := secp256k1.GenPrivKeyFromSecret([]byte("payer")).PubKey().(*secp256k1.PubKey)
	sk2 := secp256k1.GenPrivKeyFromSecret([]byte("cosigner")).PubKey().(*secp256k1.PubKey)
	payer, cosigner := bech(t, "osmo", sk.Address()), bech(t, "osmo", sk2.Address())
	send := &banktypes.MsgSend{FromAddress: payer, ToAddress: cosigner, Amount: sdk.NewCoins(sdk.NewInt64Coin("uosmo", 5))}
	fee := &txtypes.Fee{Amount: sdk.NewCoins(sdk.NewInt64Coin("uosmo", 700), sdk.NewInt64Coin("uion", 3)), GasLimit: 1}
	unknown := rawAny("/osmosis.gamm.v1beta1.MsgSwapExactAmountIn", []byte{0x0a, 0x01, 'a'})
	broken := rawAny("/cosmos.bank.v1beta1.MsgSend", []byte{0x0a, 0xff})
	opt := Options{Bech32Prefix: "osmo", Registry: registry()}

	t.Run("messages, fee, memo, signers", func(t *testing.T) {
		b := buildTx(t, []*codectypes.Any{mustAny(t, send), unknown, broken}, "hi", fee, mustAny(t, sk), mustAny(t, sk2))
		tx := DecodeTx(b, opt)
		if tx.Undecodable || tx.Hash != TxHash(b) || tx.Memo != "hi" || tx.FeePayer != payer ||
			!reflect.DeepEqual(tx.Signers, []string{payer, cosigner}) ||
			!reflect.DeepEqual(tx.Fee, []chains.Coin{{Denom: "uion", Amount: "3"}, {Denom: "uosmo", Amount: "700"}}) {
			t.Fatalf("%+v", tx)
		}
		assertJSONEqual(t, tx.Messages[0].JSON, `{"from_address":"`+payer+`","to_address":"`+cosigner+`","amount":[{"denom":"uosmo","amount":"5"}]}`)
		for i, m := range tx.Messages[1:] {
			if m.JSON != nil || m.Index != i+1 || len(m.Raw) == 0 {
				t.Errorf("message %d: %+v", i+1, m)
			}
		}
		if !registry().Known(broken.TypeUrl) || registry().Known(unknown.TypeUrl) {
			t.Error("Known")
		}
		// In a block, the unknown and the undecodable registered message
		// are both counted.
		blk, err := DecodeBlock(chains.RawBlock{Height: 3, Block: blockJSONFor(3, "", b), Results: []byte(`{"height":"3","txs_results":[{}]}`)}, opt)
		if err != nil || blk.Stats.UnknownMessages != 2 || blk.Stats.UndecodableTxs != 0 {
			t.Errorf("stats %+v, %v", blk.Stats, err)
		}
	})
	t.Run("fee payer field, no prefix, no registry", func(t *testing.T) {
		f := *fee
		f.Payer = "osmo1payerfield"
		b := buildTx(t, []*codectypes.Any{mustAny(t, send)}, "", &f, mustAny(t, sk))
		tx := DecodeTx(b, Options{})
		if tx.FeePayer != "osmo1payerfield" || tx.Signers != nil || tx.Messages[0].JSON != nil || tx.Undecodable {
			t.Errorf("%+v", tx)
		}
	})
	t.Run("first signer unknown: no fee payer from a later signer", func(t *testing.T) {
		b := buildTx(t, []*codectypes.Any{mustAny(t, send)}, "", fee, rawAny("/x.PubKey", nil), mustAny(t, sk2))
		tx := DecodeTx(b, opt)
		if tx.FeePayer != "" || !reflect.DeepEqual(tx.Signers, []string{cosigner}) {
			t.Errorf("%+v", tx)
		}
	})
	t.Run("fee amount that is not an integer fails only fee and signers", func(t *testing.T) {
		body, _ := (&txtypes.TxBody{Messages: []*codectypes.Any{mustAny(t, send)}}).Marshal()
		// AuthInfo{fee: Fee{amount: [Coin{denom: "u", amount: "x"}]}}
		auth := []byte{0x12, 0x08, 0x0a, 0x06, 0x0a, 0x01, 'u', 0x12, 0x01, 'x'}
		b, _ := (&txtypes.TxRaw{BodyBytes: body, AuthInfoBytes: auth}).Marshal()
		tx := DecodeTx(b, opt)
		if tx.Undecodable || tx.Fee != nil || len(tx.Messages) != 1 || tx.Messages[0].JSON == nil {
			t.Errorf("%+v", tx)
		}
	})
	t.Run("zero fee coin", func(t *testing.T) {
		b := buildTx(t, []*codectypes.Any{mustAny(t, send)}, "", &txtypes.Fee{Amount: sdk.Coins{{Denom: "uosmo", Amount: sdkmath.ZeroInt()}}})
		if tx := DecodeTx(b, opt); !reflect.DeepEqual(tx.Fee, []chains.Coin{{Denom: "uosmo", Amount: "0"}}) {
			t.Errorf("%+v", tx.Fee)
		}
	})

	var zbuf bytes.Buffer
	zw := zlib.NewWriter(&zbuf)
	_, _ = zw.Write([]byte(strings.Repeat("extended commit info ", 20)))
	_ = zw.Close()
	good := buildTx(t, []*codectypes.Any{mustAny(t, send)}, "", fee, mustAny(t, sk))
	undecodable := []struct {
		name string
		b    []byte
	}{
		{"nil", nil},
		{"empty", []byte{}},
		{"zlib blob (dYdX vote extensions)", zbuf.Bytes()},
		{"text", []byte("not a tx at all")},
		{"TxRaw with an unknown field", append(append([]byte{}, good...), 0x20, 0x01)},
		{"TxRaw without a body", []byte{0x12, 0x00, 0x1a, 0x01, 0x00}},
		{"body that is not a TxBody", []byte{0x0a, 0x02, 0xff, 0xff}},
		{"truncated", good[:len(good)-1]},
	}
	for _, tc := range undecodable {
		t.Run("undecodable/"+tc.name, func(t *testing.T) {
			tx := DecodeTx(tc.b, opt)
			if !tx.Undecodable || tx.Hash != TxHash(tc.b) || tx.Messages != nil || tx.Signers != nil || tx.Fee != nil {
				t.Errorf("%+v", tx)
			}
		})
	}
	if TxHash(nil) != "E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855" {
		t.Error("TxHash of nothing")
	}
}
