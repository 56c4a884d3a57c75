// Package evm decodes the token movements of EVM chains (chain-events.md
// §11): ERC-20 Transfer logs, and the TetherToken events that change the
// supply without a Transfer (Issue, Redeem, DestroyedBlackFunds). It is
// pure: no network, no database. Decoding goes through go-ethereum's
// accounts/abi with the event definitions below.
//
// Conventions of a Movement: addresses are lower-case 0x hex; a mint has
// the zero address as sender, a burn the zero address as recipient;
// amounts are the uint256 as a decimal string (never a float).
package evm

import (
	"errors"
	"fmt"
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// Movement kinds, stored in erc20_transfers.kind.
const (
	KindTransfer = "transfer"
	KindMint     = "mint"
	KindBurn     = "burn"
)

// ZeroAddress is the sender of a mint and the recipient of a burn.
const ZeroAddress = "0x0000000000000000000000000000000000000000"

// OwnerSide says which side of a Movement is the token contract's owner,
// which the event does not name (TetherToken Issue and Redeem credit and
// debit the owner): the caller resolves it, e.g. with an eth_call of
// owner() at the log's block (OwnerCallData, DecodeOwner).
type OwnerSide uint8

// Owner sides.
const (
	OwnerNone      OwnerSide = iota // both sides are known
	OwnerRecipient                  // Issue: the owner receives the minted amount
	OwnerSender                     // Redeem: the owner's balance is burned
)

// Movement is one decoded token movement.
type Movement struct {
	Token     string // contract address, lower-case
	Height    int64
	BlockHash string // lower-case 0x hex
	TxHash    string // lower-case 0x hex
	LogIndex  int64
	Kind      string // KindTransfer, KindMint or KindBurn
	From      string // sender; ZeroAddress for a mint; "" while Owner == OwnerSender
	To        string // recipient; ZeroAddress for a burn; "" while Owner == OwnerRecipient
	Amount    string // uint256 as a decimal string
	Owner     OwnerSide
}

// tokenABI declares the events and the one view function the package
// decodes. Event signatures are those of EIP-20 and the verified
// TetherToken source (chain-events.md §11.3, §11.4); parameter names do
// not take part in the topic hash.
const tokenABI = `[
 {"type":"event","name":"Transfer","anonymous":false,"inputs":[
   {"name":"from","type":"address","indexed":true},
   {"name":"to","type":"address","indexed":true},
   {"name":"value","type":"uint256","indexed":false}]},
 {"type":"event","name":"Issue","anonymous":false,"inputs":[
   {"name":"amount","type":"uint256","indexed":false}]},
 {"type":"event","name":"Redeem","anonymous":false,"inputs":[
   {"name":"amount","type":"uint256","indexed":false}]},
 {"type":"event","name":"DestroyedBlackFunds","anonymous":false,"inputs":[
   {"name":"blackListedUser","type":"address","indexed":false},
   {"name":"balance","type":"uint256","indexed":false}]},
 {"type":"function","name":"owner","stateMutability":"view","inputs":[],
  "outputs":[{"name":"","type":"address"}]}
]`

var (
	parsed = mustABI(tokenABI)

	evTransfer  = parsed.Events["Transfer"]
	evIssue     = parsed.Events["Issue"]
	evRedeem    = parsed.Events["Redeem"]
	evDestroyed = parsed.Events["DestroyedBlackFunds"]

	// TopicTransfer is keccak256("Transfer(address,address,uint256)").
	TopicTransfer = evTransfer.ID
	// TopicIssue is keccak256("Issue(uint256)") (TetherToken mint).
	TopicIssue = evIssue.ID
	// TopicRedeem is keccak256("Redeem(uint256)") (TetherToken burn).
	TopicRedeem = evRedeem.ID
	// TopicDestroyedBlackFunds is keccak256("DestroyedBlackFunds(address,uint256)")
	// (TetherToken burn of a blacklisted balance).
	TopicDestroyedBlackFunds = evDestroyed.ID
)

func mustABI(s string) abi.ABI {
	a, err := abi.JSON(strings.NewReader(s))
	if err != nil {
		panic(fmt.Sprintf("evm: token ABI: %v", err))
	}
	return a
}

// Topics are the topic0 values of every event Decode understands, for the
// first position of an eth_getLogs topic filter.
func Topics() []common.Hash {
	return []common.Hash{TopicTransfer, TopicIssue, TopicRedeem, TopicDestroyedBlackFunds}
}

// Address renders an address the way every table stores it: lower-case 0x hex.
func Address(a common.Address) string { return strings.ToLower(a.Hex()) }

// Decode turns one log into a Movement. ok is false for logs that are not
// token movements: a removed log, another event, an ERC-721 Transfer (4
// topics) or a malformed one (wrong topic count or data length).
func Decode(l *types.Log) (m Movement, ok bool) {
	if l == nil || l.Removed || len(l.Topics) == 0 {
		return Movement{}, false
	}
	m = Movement{
		Token:     Address(l.Address),
		Height:    int64(l.BlockNumber),
		BlockHash: l.BlockHash.Hex(),
		TxHash:    l.TxHash.Hex(),
		LogIndex:  int64(l.Index),
	}
	switch l.Topics[0] {
	case TopicTransfer:
		// EIP-721 Transfer shares topic0 but has 3 indexed params: require
		// exactly from and to in topics and one uint256 word of data.
		if len(l.Topics) != 3 || len(l.Data) != 32 {
			return Movement{}, false
		}
		var idx struct{ From, To common.Address }
		if err := abi.ParseTopics(&idx, indexed(evTransfer.Inputs), l.Topics[1:]); err != nil {
			return Movement{}, false
		}
		v, err := amount(evTransfer, l.Data, 0)
		if err != nil {
			return Movement{}, false
		}
		m.From, m.To, m.Amount = Address(idx.From), Address(idx.To), v
		switch {
		case m.From == ZeroAddress && m.To != ZeroAddress:
			m.Kind = KindMint
		case m.To == ZeroAddress && m.From != ZeroAddress:
			m.Kind = KindBurn
		default:
			// Including Transfer(0x0, 0x0, v): it neither creates nor
			// destroys a balance anyone holds.
			m.Kind = KindTransfer
		}
	case TopicIssue, TopicRedeem:
		if len(l.Topics) != 1 || len(l.Data) != 32 {
			return Movement{}, false
		}
		ev := evIssue
		if l.Topics[0] == TopicRedeem {
			ev = evRedeem
		}
		v, err := amount(ev, l.Data, 0)
		if err != nil {
			return Movement{}, false
		}
		m.Amount = v
		if ev.ID == TopicIssue {
			m.Kind, m.From, m.Owner = KindMint, ZeroAddress, OwnerRecipient
		} else {
			m.Kind, m.To, m.Owner = KindBurn, ZeroAddress, OwnerSender
		}
	case TopicDestroyedBlackFunds:
		if len(l.Topics) != 1 || len(l.Data) != 64 {
			return Movement{}, false
		}
		vals, err := evDestroyed.Inputs.NonIndexed().Unpack(l.Data)
		if err != nil || len(vals) != 2 {
			return Movement{}, false
		}
		user, ok1 := vals[0].(common.Address)
		bal, ok2 := vals[1].(*big.Int)
		if !ok1 || !ok2 {
			return Movement{}, false
		}
		m.Kind, m.From, m.To, m.Amount = KindBurn, Address(user), ZeroAddress, bal.String()
	default:
		return Movement{}, false
	}
	return m, true
}

// SetOwner fills the side of m that OwnerSide names with the token
// owner's address.
func (m *Movement) SetOwner(owner string) {
	switch m.Owner {
	case OwnerRecipient:
		m.To = strings.ToLower(owner)
	case OwnerSender:
		m.From = strings.ToLower(owner)
	}
	m.Owner = OwnerNone
}

func indexed(args abi.Arguments) abi.Arguments {
	var out abi.Arguments
	for _, a := range args {
		if a.Indexed {
			out = append(out, a)
		}
	}
	return out
}

// amount unpacks the i-th non-indexed uint256 of ev from data.
func amount(ev abi.Event, data []byte, i int) (string, error) {
	vals, err := ev.Inputs.NonIndexed().Unpack(data)
	if err != nil {
		return "", err
	}
	if i >= len(vals) {
		return "", errors.New("missing value")
	}
	v, ok := vals[i].(*big.Int)
	if !ok {
		return "", fmt.Errorf("value is %T, not uint256", vals[i])
	}
	return v.String(), nil
}

// OwnerCallData is the calldata of owner(), the TetherToken owner that
// Issue credits and Redeem debits.
func OwnerCallData() []byte {
	data, err := parsed.Pack("owner")
	if err != nil {
		panic(fmt.Sprintf("evm: pack owner(): %v", err))
	}
	return data
}

// DecodeOwner decodes the return data of owner() to a lower-case address.
func DecodeOwner(ret []byte) (string, error) {
	vals, err := parsed.Unpack("owner", ret)
	if err != nil {
		return "", fmt.Errorf("decode owner(): %w", err)
	}
	a, ok := vals[0].(common.Address)
	if !ok {
		return "", fmt.Errorf("decode owner(): got %T", vals[0])
	}
	return Address(a), nil
}
