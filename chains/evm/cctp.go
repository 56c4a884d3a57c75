package evm

import (
	"math/big"
	"strings"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"
)

// Bridge flow directions, stored in evm_bridge_transfers.direction.
const (
	BridgeOut = "out" // value leaves this chain (burned for another domain)
	BridgeIn  = "in"  // value arrives on this chain (minted from another domain)
)

// UnknownDomain is the remote domain of an inbound mint whose
// MessageReceived was not seen in the same transaction.
const UnknownDomain = -1

// BridgeFlow is one CCTP v1 transfer seen on this chain (chain-events.md
// §11.6): a DepositForBurn (outflow to DestinationDomain) or a
// MintAndWithdraw (inflow), whose source domain comes from the
// MessageTransmitter's MessageReceived earlier in the same transaction.
type BridgeFlow struct {
	Height    int64
	TxHash    string // lower-case 0x hex
	LogIndex  int64
	Direction string // BridgeOut or BridgeIn
	Domain    int64  // the other side's CCTP domain; UnknownDomain if not seen
	Token     string // burned or minted token, lower-case
	Account   string // depositor (out) or mint recipient (in), lower-case
	Amount    string // uint256 as a decimal string
}

// cctpABI declares the CCTP v1 events read here, with the signatures of
// circlefin/evm-cctp-contracts (TokenMessenger.sol, MessageTransmitter.sol).
const cctpABI = `[
 {"type":"event","name":"DepositForBurn","anonymous":false,"inputs":[
   {"name":"nonce","type":"uint64","indexed":true},
   {"name":"burnToken","type":"address","indexed":true},
   {"name":"amount","type":"uint256","indexed":false},
   {"name":"depositor","type":"address","indexed":true},
   {"name":"mintRecipient","type":"bytes32","indexed":false},
   {"name":"destinationDomain","type":"uint32","indexed":false},
   {"name":"destinationTokenMessenger","type":"bytes32","indexed":false},
   {"name":"destinationCaller","type":"bytes32","indexed":false}]},
 {"type":"event","name":"MintAndWithdraw","anonymous":false,"inputs":[
   {"name":"mintRecipient","type":"address","indexed":true},
   {"name":"amount","type":"uint256","indexed":false},
   {"name":"mintToken","type":"address","indexed":true}]},
 {"type":"event","name":"MessageReceived","anonymous":false,"inputs":[
   {"name":"caller","type":"address","indexed":true},
   {"name":"sourceDomain","type":"uint32","indexed":false},
   {"name":"nonce","type":"uint64","indexed":true},
   {"name":"sender","type":"bytes32","indexed":false},
   {"name":"messageBody","type":"bytes","indexed":false}]}
]`

var (
	cctp = mustABI(cctpABI)

	evDepositForBurn  = cctp.Events["DepositForBurn"]
	evMintAndWithdraw = cctp.Events["MintAndWithdraw"]
	evMessageReceived = cctp.Events["MessageReceived"]

	// TopicDepositForBurn is the topic0 of TokenMessenger.DepositForBurn.
	TopicDepositForBurn = evDepositForBurn.ID
	// TopicMintAndWithdraw is the topic0 of TokenMessenger.MintAndWithdraw.
	TopicMintAndWithdraw = evMintAndWithdraw.ID
	// TopicMessageReceived is the topic0 of MessageTransmitter.MessageReceived.
	TopicMessageReceived = evMessageReceived.ID
)

// CCTPTopics are the topic0 values DecodeCCTP reads.
func CCTPTopics() []common.Hash {
	return []common.Hash{TopicDepositForBurn, TopicMintAndWithdraw, TopicMessageReceived}
}

// CCTP names the contracts of one chain's CCTP v1 deployment.
type CCTP struct {
	TokenMessenger     common.Address
	MessageTransmitter common.Address
}

// DecodeCCTP returns the bridge flows among logs (in block order): each
// DepositForBurn and MintAndWithdraw emitted by the TokenMessenger. An
// inbound mint takes the source domain of the MessageReceived of the same
// transaction that the MessageTransmitter emitted for it: the i-th
// MintAndWithdraw of a tx pairs with its i-th MessageReceived, whichever
// comes first (Circle's MessageTransmitter emits MessageReceived after the
// mint; a relayer may batch several receives in one tx). A mint without
// its message has UnknownDomain. Logs of other contracts and malformed
// logs are ignored.
func (c CCTP) DecodeCCTP(logs []types.Log) []BridgeFlow {
	var out []BridgeFlow
	var mints []int     // indexes in out of the current tx's mints
	var domains []int64 // the current tx's MessageReceived domains
	var tx common.Hash
	flush := func() {
		for i, m := range mints {
			if i < len(domains) {
				out[m].Domain = domains[i]
			}
		}
		mints, domains = mints[:0], domains[:0]
	}
	for i := range logs {
		l := &logs[i]
		if l.Removed || len(l.Topics) == 0 {
			continue
		}
		if l.TxHash != tx {
			flush()
			tx = l.TxHash
		}
		switch {
		case l.Address == c.MessageTransmitter && l.Topics[0] == TopicMessageReceived:
			if d, ok := messageReceivedDomain(l); ok {
				domains = append(domains, d)
			}
		case l.Address == c.TokenMessenger && l.Topics[0] == TopicDepositForBurn:
			if f, ok := depositForBurn(l); ok {
				out = append(out, f)
			}
		case l.Address == c.TokenMessenger && l.Topics[0] == TopicMintAndWithdraw:
			if f, ok := mintAndWithdraw(l); ok {
				f.Domain = UnknownDomain
				mints = append(mints, len(out))
				out = append(out, f)
			}
		}
	}
	flush()
	return out
}

func flowOf(l *types.Log, dir string) BridgeFlow {
	return BridgeFlow{Height: int64(l.BlockNumber), TxHash: strings.ToLower(l.TxHash.Hex()), LogIndex: int64(l.Index), Direction: dir}
}

func depositForBurn(l *types.Log) (BridgeFlow, bool) {
	if len(l.Topics) != 4 {
		return BridgeFlow{}, false
	}
	var idx struct {
		Nonce     uint64
		BurnToken common.Address
		Depositor common.Address
	}
	if err := abi.ParseTopics(&idx, indexed(evDepositForBurn.Inputs), l.Topics[1:]); err != nil {
		return BridgeFlow{}, false
	}
	vals, err := evDepositForBurn.Inputs.NonIndexed().Unpack(l.Data)
	if err != nil || len(vals) != 5 {
		return BridgeFlow{}, false
	}
	amt, ok1 := vals[0].(*big.Int)
	dst, ok2 := vals[2].(uint32)
	if !ok1 || !ok2 {
		return BridgeFlow{}, false
	}
	f := flowOf(l, BridgeOut)
	f.Domain, f.Token, f.Account, f.Amount = int64(dst), Address(idx.BurnToken), Address(idx.Depositor), amt.String()
	return f, true
}

func mintAndWithdraw(l *types.Log) (BridgeFlow, bool) {
	if len(l.Topics) != 3 {
		return BridgeFlow{}, false
	}
	var idx struct {
		MintRecipient common.Address
		MintToken     common.Address
	}
	if err := abi.ParseTopics(&idx, indexed(evMintAndWithdraw.Inputs), l.Topics[1:]); err != nil {
		return BridgeFlow{}, false
	}
	v, err := amount(evMintAndWithdraw, l.Data, 0)
	if err != nil {
		return BridgeFlow{}, false
	}
	f := flowOf(l, BridgeIn)
	f.Token, f.Account, f.Amount = Address(idx.MintToken), Address(idx.MintRecipient), v
	return f, true
}

func messageReceivedDomain(l *types.Log) (int64, bool) {
	if len(l.Topics) != 3 {
		return 0, false
	}
	vals, err := evMessageReceived.Inputs.NonIndexed().Unpack(l.Data)
	if err != nil || len(vals) != 3 {
		return 0, false
	}
	d, ok := vals[0].(uint32)
	return int64(d), ok
}
