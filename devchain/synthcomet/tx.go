package synthcomet

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"

	abci "github.com/cometbft/cometbft/abci/types"
	codectypes "github.com/cosmos/cosmos-sdk/codec/types"
	"github.com/cosmos/cosmos-sdk/crypto/keys/secp256k1"
	sdk "github.com/cosmos/cosmos-sdk/types"
	sdktx "github.com/cosmos/cosmos-sdk/types/tx"
	"github.com/cosmos/cosmos-sdk/types/tx/signing"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/chainlens/chainlens/chains/protoset"
)

// Encoder encodes a chain's messages with their real protobuf types (the
// chain's shipped descriptor set) into the SDK's tx envelope.
type Encoder struct {
	reg *protoset.Registry
	rng *rand.Rand // signatures; shared with the chain's generator
}

// NewEncoder encodes with the types of reg and signatures drawn from rng.
func NewEncoder(reg *protoset.Registry, rng *rand.Rand) *Encoder { return &Encoder{reg: reg, rng: rng} }

// Any encodes a message given as proto3 JSON with its real protobuf type.
func (e *Encoder) Any(typeURL string, msg map[string]any) (*codectypes.Any, error) {
	mt, err := e.reg.FindMessageByURL(typeURL)
	if err != nil {
		return nil, fmt.Errorf("synthcomet: %s: %w", typeURL, err)
	}
	js, err := json.Marshal(msg)
	if err != nil {
		return nil, err
	}
	m := mt.New().Interface()
	if err := (protojson.UnmarshalOptions{Resolver: e.reg}).Unmarshal(js, m); err != nil {
		return nil, fmt.Errorf("synthcomet: %s %s: %w", typeURL, js, err)
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("synthcomet: %s: %w", typeURL, err)
	}
	return &codectypes.Any{TypeUrl: typeURL, Value: b}, nil
}

// Signer is an account signing a tx: its compressed secp256k1 public key
// and the sequence the tx uses.
type Signer struct {
	Pub []byte
	Seq uint64
}

// Tx is a TxRaw of msgs: signed by s (paying fee, with gas limit gas) or,
// with a nil s, injected by the proposer (no signer, empty fee).
func (e *Encoder) Tx(s *Signer, gas uint64, fee sdk.Coins, msgs ...*codectypes.Any) ([]byte, error) {
	body, err := (&sdktx.TxBody{Messages: msgs}).Marshal()
	if err != nil {
		return nil, err
	}
	info := &sdktx.AuthInfo{Fee: &sdktx.Fee{}}
	var sigs [][]byte
	if s != nil {
		pk, err := (&secp256k1.PubKey{Key: s.Pub}).Marshal()
		if err != nil {
			return nil, err
		}
		info.SignerInfos = []*sdktx.SignerInfo{{
			PublicKey: &codectypes.Any{TypeUrl: "/cosmos.crypto.secp256k1.PubKey", Value: pk},
			ModeInfo:  &sdktx.ModeInfo{Sum: &sdktx.ModeInfo_Single_{Single: &sdktx.ModeInfo_Single{Mode: signing.SignMode_SIGN_MODE_DIRECT}}},
			Sequence:  s.Seq,
		}}
		info.Fee.GasLimit = gas
		if !fee.IsZero() {
			info.Fee.Amount = fee
		}
		sigs = [][]byte{RandomBytes(e.rng, 64)}
	}
	auth, err := info.Marshal()
	if err != nil {
		return nil, err
	}
	return (&sdktx.TxRaw{BodyBytes: body, AuthInfoBytes: auth, Signatures: sigs}).Marshal()
}

// MsgData is a tx result's data: the TxMsgData with each message's
// (empty) response.
func MsgData(typeURLs ...string) []byte {
	var d sdk.TxMsgData
	for _, u := range typeURLs {
		d.MsgResponses = append(d.MsgResponses, &codectypes.Any{TypeUrl: u + "Response"})
	}
	b, _ := d.Marshal()
	return b
}

// Event is an ABCI event with indexed attributes, given as key, value, ...
func Event(typ string, kv ...string) abci.Event {
	e := abci.Event{Type: typ, Attributes: make([]abci.EventAttribute, 0, len(kv)/2)}
	for i := 0; i+1 < len(kv); i += 2 {
		e.Attributes = append(e.Attributes, abci.EventAttribute{Key: kv[i], Value: kv[i+1], Index: true})
	}
	return e
}

// BankSend is the four events of a bank send (coin_spent, coin_received,
// transfer, message), with trailing attributes (msg_index, mode) on each.
func BankSend(from, to, amount string, tail ...string) []abci.Event {
	return []abci.Event{
		Event("coin_spent", append([]string{"spender", from, "amount", amount}, tail...)...),
		Event("coin_received", append([]string{"receiver", to, "amount", amount}, tail...)...),
		Event("transfer", append([]string{"recipient", to, "sender", from, "amount", amount}, tail...)...),
		Event("message", append([]string{"sender", from}, tail...)...),
	}
}

// Poisson draws a Poisson count with mean lambda (Knuth's method; the
// means here are small).
func Poisson(rng *rand.Rand, lambda float64) int {
	if lambda <= 0 {
		return 0
	}
	l, k, p := math.Exp(-lambda), 0, 1.0
	for {
		p *= rng.Float64()
		if p <= l {
			return k
		}
		k++
	}
}
