// Package chains holds the decoded form of a height shared by every chain
// kind, and the Adapter interface each kind implements to turn a decoded
// height into domain rows. Decoders and adapters are pure: no network, no
// database.
package chains

import (
	"encoding/json"
	"fmt"
	"time"
)

// RawBlock is what the indexer fetched for one height: the `result` objects
// of CometBFT's /block and /block_results.
type RawBlock struct {
	ChainID string
	Height  int64
	Block   json.RawMessage
	Results json.RawMessage
}

// AttrEncoding tells how event attribute keys and values are encoded.
type AttrEncoding int

// Attribute encodings: Auto detects per response (CometBFT 0.34 and Sei use
// base64; 0.37, 0.38 and 1.0 plain strings).
const (
	AttrAuto AttrEncoding = iota
	AttrPlain
	AttrBase64
)

// Block is one decoded height.
type Block struct {
	ChainID  string
	Height   int64
	Hash     string // upper-case hex
	Time     time.Time
	Proposer string // upper-case hex consensus address
	AppHash  string
	Txs      []Tx
	// CommitHeight is the height the block's last commit signs (Height-1)
	// and Signatures its votes, in the order of the validator set at
	// CommitHeight; none at a chain's first height.
	CommitHeight int64
	Signatures   []CommitSig
	// Events are the block-level events (begin/end block, or finalize block),
	// in order; their TxIndex is -1.
	Events []Event
	Stats  Stats
	// Part is set when the Block holds only a part of its height (see
	// StreamAdapter); nil for a whole height.
	Part *Part
}

// CommitSig is one validator's vote in a block's last commit.
type CommitSig struct {
	// Flag is CometBFT's BlockIDFlag: 1 absent, 2 commit (signed the
	// block), 3 nil (voted nil).
	Flag int
	// Validator is the upper-case hex consensus address; an absent vote
	// carries none, so it is filled from the validator set when known.
	Validator string
	// Power is the validator's voting power at CommitHeight, -1 when the
	// set is not known.
	Power int64
}

// Commit flags (CometBFT BlockIDFlag).
const (
	FlagAbsent = 1
	FlagCommit = 2
	FlagNil    = 3
)

// Stats counts what the decoder passed over without failing the height.
type Stats struct {
	Messages        int // messages of the height's txs
	UnknownMessages int // messages whose type URL the kind does not decode; kept raw
	// UnknownTypes are the type URLs of the unknown messages, one per
	// message.
	UnknownTypes []string
	// PartialMessages are decoded messages holding fields the descriptors
	// do not define; kept raw beside their JSON.
	PartialMessages int
	UndecodableTxs  int // tx bytes that are not a cosmos tx (e.g. dYdX vote-extension blobs)
	// ForeignEvents are contract events (wasm, wasm-<name>) of a name the
	// kind reads whose attributes are not of that shape: any contract may
	// emit them, so they are skipped, not a failed height.
	ForeignEvents    int
	Base64Attributes bool
}

// Tx is one transaction of a height.
type Tx struct {
	Index     int
	Hash      string // upper-case hex SHA-256 of the raw bytes
	Code      uint32
	Codespace string
	Log       string
	GasWanted int64
	GasUsed   int64
	// Undecodable is set when the bytes are not a cosmos-sdk tx; then only
	// Index, Hash and the results are known.
	Undecodable bool
	Memo        string
	Fee         []Coin
	FeePayer    string   // bech32
	Signers     []string // bech32 addresses, from the signer infos' public keys
	Messages    []Message
	Events      []Event
}

// Succeeded reports whether the transaction executed (code 0).
func (t *Tx) Succeeded() bool { return t.Code == 0 }

// Message is one message of a transaction.
type Message struct {
	Index   int
	TypeURL string
	// JSON is the proto3 JSON of the message when the chain's descriptors
	// know its type; nil otherwise. Raw is the protobuf bytes; it is stored
	// when JSON is nil or Partial.
	JSON json.RawMessage
	Raw  []byte
	// Partial: the bytes hold fields the descriptors do not define (a newer
	// version of the chain), which JSON leaves out.
	Partial bool
	// Addresses are the accounts the message involves (its tx's signers,
	// the addresses in its body and in its events), as address bytes (20
	// or 32), sorted and distinct: one account under any bech32 prefix or
	// as 0x is one value.
	Addresses [][]byte
}

// Event is one ABCI event.
type Event struct {
	TxIndex  int    // -1 for block-level events
	Index    int    // position within its tx, or within the block-level list
	MsgIndex int    // the msg_index attribute, -1 when absent
	Mode     string // BeginBlock, EndBlock or "" (the mode attribute, or the legacy list it came from)
	Type     string // may be "" (seen on dYdX)
	Attrs    []Attr
	// Repeat marks a second copy of the tx's ante-handler events after its
	// messages' (cosmos-sdk 0.45 and 0.46 with a post handler, fixed by
	// cosmos-sdk#13983): stored as the node gave it, but its movements
	// happened once.
	Repeat bool
}

// Attr is one event attribute, decoded to plain text.
type Attr struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Get returns the first value of the attribute key, and whether it is present.
func (e *Event) Get(key string) (string, bool) {
	for _, a := range e.Attrs {
		if a.Key == key {
			return a.Value, true
		}
	}
	return "", false
}

// Coin is an amount of one denom; Amount is a base-unit integer (or, for
// DecCoins, a decimal) written as a string.
type Coin struct {
	Denom  string `json:"denom"`
	Amount string `json:"amount"`
}

// SetMember is a member of a validator set, in the set's order.
type SetMember struct {
	Validator string // upper-case hex consensus address
	Power     int64
}

// AttributeCommit fills the block's signatures from the validator set at
// CommitHeight (the votes are in its order): the absent ones' validator
// and every vote's power. A set that does not line up with the votes (a
// different length, or a present vote of another address) changes
// nothing and is an error.
func (b *Block) AttributeCommit(set []SetMember) error {
	if len(set) != len(b.Signatures) {
		return fmt.Errorf("height %d: %d votes but %d validators at %d", b.Height, len(b.Signatures), len(set), b.CommitHeight)
	}
	for i, s := range b.Signatures {
		if s.Validator != "" && s.Validator != set[i].Validator {
			return fmt.Errorf("height %d: vote %d is %s's but validator %d at %d is %s", b.Height, i, s.Validator, i, b.CommitHeight, set[i].Validator)
		}
	}
	for i := range b.Signatures {
		b.Signatures[i].Validator = set[i].Validator
		b.Signatures[i].Power = set[i].Power
	}
	return nil
}
