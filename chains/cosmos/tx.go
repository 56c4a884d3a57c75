package cosmos

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"

	codectypes "github.com/cosmos/cosmos-sdk/codec/types"
	"github.com/cosmos/cosmos-sdk/crypto/keys/ed25519"
	"github.com/cosmos/cosmos-sdk/crypto/keys/secp256k1"
	"github.com/cosmos/cosmos-sdk/types/bech32"
	txtypes "github.com/cosmos/cosmos-sdk/types/tx"
	dsecp "github.com/decred/dcrd/dcrec/secp256k1/v4"
	"golang.org/x/crypto/sha3"

	"github.com/chainlens/chainlens/chains"
)

// TxHash is the CometBFT hash of raw tx bytes: upper-case hex SHA-256.
func TxHash(b []byte) string {
	sum := sha256.Sum256(b)
	return strings.ToUpper(hex.EncodeToString(sum[:]))
}

// DecodeTx decodes raw tx bytes tolerantly (chain-events.md §4.5): TxRaw,
// TxBody and AuthInfo are read with their generated protobuf methods, never
// the SDK's strict TxDecoder, so unknown message types cannot fail it.
// Bytes that are not a TxRaw (e.g. dYdX's vote-extension blob) give a Tx
// with Undecodable set and only Hash filled. Index and the result fields
// are left for the caller.
func DecodeTx(b []byte, opt Options) chains.Tx {
	tx := chains.Tx{Hash: TxHash(b)}
	var raw txtypes.TxRaw
	// A TxRaw that skipped unknown fields re-encodes shorter than its input:
	// that, or an empty body, means the bytes are something else.
	if len(b) == 0 || raw.Unmarshal(b) != nil || raw.Size() != len(b) || len(raw.BodyBytes) == 0 {
		tx.Undecodable = true
		return tx
	}
	var body txtypes.TxBody
	if body.Unmarshal(raw.BodyBytes) != nil {
		tx.Undecodable = true
		return tx
	}
	tx.Memo = body.Memo
	if n := len(body.Messages); n > 0 {
		tx.Messages = make([]chains.Message, n)
	}
	for i, m := range body.Messages {
		msg := chains.Message{Index: i}
		if m != nil {
			msg.TypeURL = m.TypeUrl
			msg.Raw = m.Value
			if opt.Registry != nil {
				var complete bool
				msg.JSON, complete, _ = opt.Registry.Decode(m.TypeUrl, m.Value)
				msg.Partial = msg.JSON != nil && !complete
			}
		}
		tx.Messages[i] = msg
	}

	// AuthInfo is optional for the tx to count as decoded: a fee amount that
	// is not a valid integer fails only the fee and signers.
	var auth txtypes.AuthInfo
	if len(raw.AuthInfoBytes) == 0 || auth.Unmarshal(raw.AuthInfoBytes) != nil {
		return tx
	}
	if auth.Fee != nil {
		for _, c := range auth.Fee.Amount {
			amount := "0"
			if !c.Amount.IsNil() {
				amount = c.Amount.String()
			}
			tx.Fee = append(tx.Fee, chains.Coin{Denom: c.Denom, Amount: amount})
		}
		tx.FeePayer = auth.Fee.Payer
	}
	for i, si := range auth.SignerInfos {
		if si == nil {
			continue
		}
		addr, ok := PubKeyAddress(si.PublicKey)
		if !ok || opt.Bech32Prefix == "" {
			continue
		}
		s, err := bech32.ConvertAndEncode(opt.Bech32Prefix, addr)
		if err != nil {
			continue
		}
		tx.Signers = append(tx.Signers, s)
		// The SDK's fee payer is the first signer: only signer_infos[0]
		// stands for it.
		if i == 0 && tx.FeePayer == "" {
			tx.FeePayer = s
		}
	}
	return tx
}

// Public-key type URLs whose address DecodeTx derives.
const (
	TypeSecp256k1 = "/cosmos.crypto.secp256k1.PubKey"
	TypeEd25519   = "/cosmos.crypto.ed25519.PubKey"
	TypeMultisig  = "/cosmos.crypto.multisig.LegacyAminoPubKey"
	// TypeNilPubKey is the key of XION abstract (smart-contract) accounts:
	// {bytes address_bytes = 1}, the account's own address.
	TypeNilPubKey = "/abstractaccount.v1.NilPubKey"
)

// ethSecp256k1Types are the Ethermint-family secp256k1 key types whose
// address is Ethereum's (last 20 bytes of keccak256 of the uncompressed
// key). Their protobuf is the same as cosmos.crypto.secp256k1.PubKey
// (bytes key = 1).
var ethSecp256k1Types = map[string]bool{
	"/ethermint.crypto.v1.ethsecp256k1.PubKey":      true, // Ethermint, Evmos before its rename
	"/injective.crypto.v1beta1.ethsecp256k1.PubKey": true,
	"/os.crypto.v1.ethsecp256k1.PubKey":             true, // evmos/os
	"/cosmos.evm.crypto.v1.ethsecp256k1.PubKey":     true, // cosmos/evm
}

// PubKeyAddress derives the account address of a signer public key:
// secp256k1, ed25519, Ethermint-style ethsecp256k1 and legacy amino multisig
// (20 bytes), and XION's NilPubKey, which carries the address itself (32
// bytes for a contract); ok is false for a nil key, an unknown type, or
// bytes that are not a key of the type.
func PubKeyAddress(pk *codectypes.Any) (addr []byte, ok bool) {
	if pk == nil {
		return nil, false
	}
	switch {
	case pk.TypeUrl == TypeSecp256k1:
		var k secp256k1.PubKey
		if k.Unmarshal(pk.Value) != nil || len(k.Key) != secp256k1.PubKeySize {
			return nil, false
		}
		return k.Address(), true
	case pk.TypeUrl == TypeEd25519:
		var k ed25519.PubKey
		if k.Unmarshal(pk.Value) != nil || len(k.Key) != ed25519.PubKeySize {
			return nil, false
		}
		return k.Address(), true
	case ethSecp256k1Types[pk.TypeUrl]:
		var k secp256k1.PubKey // same wire form: bytes key = 1
		if k.Unmarshal(pk.Value) != nil {
			return nil, false
		}
		return ethAddress(k.Key)
	case pk.TypeUrl == TypeMultisig:
		amino, ok := multisigAmino(pk.Value, 0)
		if !ok {
			return nil, false
		}
		sum := sha256.Sum256(amino)
		return sum[:20], true
	case pk.TypeUrl == TypeNilPubKey:
		var k secp256k1.PubKey // same wire form: bytes address_bytes = 1
		if k.Unmarshal(pk.Value) != nil || (len(k.Key) != 20 && len(k.Key) != 32) {
			return nil, false
		}
		return k.Key, true
	}
	return nil, false
}

// ethAddress is the Ethereum address of a secp256k1 key (33-byte
// compressed or 65-byte uncompressed).
func ethAddress(key []byte) ([]byte, bool) {
	if len(key) != 33 && len(key) != 65 {
		return nil, false
	}
	p, err := dsecp.ParsePubKey(key)
	if err != nil {
		return nil, false
	}
	h := sha3.NewLegacyKeccak256()
	h.Write(p.SerializeUncompressed()[1:])
	return h.Sum(nil)[12:], true
}

// Amino prefixes of the legacy key types (the first 4 bytes of the
// registered concrete type's name hash).
var (
	aminoPrefixMultisig  = []byte{0x22, 0xc1, 0xf7, 0xe2} // tendermint/PubKeyMultisigThreshold
	aminoPrefixSecp256k1 = []byte{0xeb, 0x5a, 0xe9, 0x87} // tendermint/PubKeySecp256k1
	aminoPrefixEd25519   = []byte{0x16, 0x24, 0xde, 0x64} // tendermint/PubKeyEd25519
)

// maxMultisigDepth bounds nested multisig keys.
const maxMultisigDepth = 4

// multisigAmino re-encodes a LegacyAminoPubKey protobuf as the amino bytes
// whose SHA-256 prefix is its address (what the SDK's
// LegacyAminoPubKey.Address computes), without the SDK's amino codec so
// that no malformed key can make it panic.
func multisigAmino(value []byte, depth int) ([]byte, bool) {
	if depth > maxMultisigDepth {
		return nil, false
	}
	var m multisigPB
	if m.Unmarshal(value) != nil {
		return nil, false
	}
	out := append([]byte{}, aminoPrefixMultisig...)
	if m.threshold != 0 {
		out = append(out, 0x08)
		out = appendUvarint(out, uint64(m.threshold))
	}
	for _, k := range m.keys {
		var inner []byte
		switch k.TypeUrl {
		case TypeSecp256k1:
			var pk secp256k1.PubKey
			if pk.Unmarshal(k.Value) != nil || len(pk.Key) != secp256k1.PubKeySize {
				return nil, false
			}
			inner = append(append(append([]byte{}, aminoPrefixSecp256k1...), byte(len(pk.Key))), pk.Key...)
		case TypeEd25519:
			var pk ed25519.PubKey
			if pk.Unmarshal(k.Value) != nil || len(pk.Key) != ed25519.PubKeySize {
				return nil, false
			}
			inner = append(append(append([]byte{}, aminoPrefixEd25519...), byte(len(pk.Key))), pk.Key...)
		case TypeMultisig:
			var ok bool
			if inner, ok = multisigAmino(k.Value, depth+1); !ok {
				return nil, false
			}
		default:
			return nil, false
		}
		out = append(out, 0x12)
		out = appendUvarint(out, uint64(len(inner)))
		out = append(out, inner...)
	}
	return out, true
}

func appendUvarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// multisigPB is cosmos.crypto.multisig.LegacyAminoPubKey
// {uint32 threshold = 1; repeated google.protobuf.Any public_keys = 2}.
type multisigPB struct {
	threshold uint32
	keys      []codectypes.Any
}

// Unmarshal reads the two fields and skips unknown ones.
func (m *multisigPB) Unmarshal(b []byte) error {
	for len(b) > 0 {
		tag, n := readUvarint(b)
		if n <= 0 {
			return errBadProto
		}
		b = b[n:]
		field, wire := tag>>3, tag&7
		switch wire {
		case 0:
			v, n := readUvarint(b)
			if n <= 0 {
				return errBadProto
			}
			b = b[n:]
			if field == 1 {
				m.threshold = uint32(v)
			}
		case 2:
			l, n := readUvarint(b)
			if n <= 0 || l > uint64(len(b)-n) {
				return errBadProto
			}
			val := b[n : n+int(l)]
			b = b[n+int(l):]
			if field == 2 {
				var a codectypes.Any
				if a.Unmarshal(val) != nil {
					return errBadProto
				}
				m.keys = append(m.keys, a)
			}
		case 1:
			if len(b) < 8 {
				return errBadProto
			}
			b = b[8:]
		case 5:
			if len(b) < 4 {
				return errBadProto
			}
			b = b[4:]
		default:
			return errBadProto
		}
	}
	return nil
}

var errBadProto = errors.New("malformed protobuf")

// readUvarint reads a protobuf varint; n <= 0 when it is truncated or too long.
func readUvarint(b []byte) (v uint64, n int) {
	for i := 0; i < len(b) && i < 10; i++ {
		v |= uint64(b[i]&0x7f) << (7 * uint(i))
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
}
