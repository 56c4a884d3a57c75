package evm_test

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"math/big"
	"os"
	"path/filepath"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/chainlens/chainlens/chains/evm"
)

// recordedLogs reads every log of the recorded devnet.
func recordedLogs(t *testing.T) []types.Log {
	t.Helper()
	f, err := os.Open(filepath.Join(testdata, "recorded", "logs.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []types.Log
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var l types.Log
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDecodeCCTPRecorded decodes the recording's CCTP flows and compares
// each with the generator's own log of deposits and receives.
func TestDecodeCCTPRecorded(t *testing.T) {
	var deploy struct {
		Contracts map[string]struct {
			Address string `json:"address"`
		} `json:"contracts"`
	}
	type flow struct {
		Block     int64  `json:"block"`
		TxHash    string `json:"txHash"`
		Domain    int64  `json:"domain"`
		Amount    string `json:"amount"`
		Depositor string `json:"depositor"`
		Recipient string `json:"recipient"`
	}
	var bridge struct {
		Token string `json:"token"`
		CCTP  struct {
			Deposits []flow `json:"deposits"`
			Receives []flow `json:"receives"`
		} `json:"cctp"`
	}
	readJSON(t, "deployments.json", &deploy)
	readJSON(t, "bridge.json", &bridge)
	c := evm.CCTP{
		TokenMessenger:     common.HexToAddress(deploy.Contracts["TokenMessenger"].Address),
		MessageTransmitter: common.HexToAddress(deploy.Contracts["MessageTransmitter"].Address),
	}
	got := c.DecodeCCTP(recordedLogs(t))
	var want []evm.BridgeFlow
	for _, d := range bridge.CCTP.Deposits {
		want = append(want, evm.BridgeFlow{Height: d.Block, TxHash: d.TxHash, Direction: evm.BridgeOut, Domain: d.Domain,
			Token: bridge.Token, Account: d.Depositor, Amount: d.Amount})
	}
	for _, r := range bridge.CCTP.Receives {
		want = append(want, evm.BridgeFlow{Height: r.Block, TxHash: r.TxHash, Direction: evm.BridgeIn, Domain: r.Domain,
			Token: bridge.Token, Account: r.Recipient, Amount: r.Amount})
	}
	if len(got) != 110 || len(want) != 110 {
		t.Fatalf("decoded %d flows, the truth has %d; the README says 65 deposits and 45 receives", len(got), len(want))
	}
	byTx := map[string]evm.BridgeFlow{}
	for _, f := range got {
		if _, dup := byTx[f.TxHash]; dup {
			t.Fatalf("two flows in tx %s", f.TxHash)
		}
		byTx[f.TxHash] = f
	}
	for _, w := range want {
		g, ok := byTx[w.TxHash]
		if !ok {
			t.Errorf("flow of tx %s not decoded", w.TxHash)
			continue
		}
		g.LogIndex = 0
		if g != w {
			t.Errorf("tx %s:\n got %+v\nwant %+v", w.TxHash, g, w)
		}
	}
}

// TestDecodeCCTPPairing: a mint takes the domain of its tx's
// MessageReceived, before or after it (Circle's order is after), the i-th
// mint of a batch the i-th message's; a mint without one has an unknown
// domain; logs of other contracts are ignored.
func TestDecodeCCTPPairing(t *testing.T) {
	messenger := common.HexToAddress("0x00000000000000000000000000000000000000aa")
	transmitter := common.HexToAddress("0x00000000000000000000000000000000000000bb")
	recipient := "0x00000000000000000000000000000000000000cc"
	token := "0x00000000000000000000000000000000000000dd"
	mint := func(addr common.Address, tx byte, idx uint) types.Log {
		return types.Log{Address: addr, BlockNumber: 7, TxHash: common.Hash{tx}, Index: idx,
			Topics: []common.Hash{evm.TopicMintAndWithdraw, addrTopic(recipient), addrTopic(token)},
			Data:   word(bigInt(5))}
	}
	received := func(tx byte, domain int64) types.Log {
		data := append(word(bigInt(domain)), make([]byte, 32)...)
		data = append(data, word(bigInt(96))...)
		data = append(data, make([]byte, 32)...) // empty messageBody
		return types.Log{Address: transmitter, BlockNumber: 7, TxHash: common.Hash{tx},
			Topics: []common.Hash{evm.TopicMessageReceived, addrTopic(recipient), common.BigToHash(bigInt(1))}, Data: data}
	}
	tests := []struct {
		name string
		logs []types.Log
		want []int64 // domains of the decoded flows
	}{
		{"paired", []types.Log{received(1, 3), mint(messenger, 1, 1)}, []int64{3}},
		{"message in another tx", []types.Log{received(1, 3), mint(messenger, 2, 1)}, []int64{evm.UnknownDomain}},
		{"message after the mint (Circle's order)", []types.Log{mint(messenger, 1, 0), received(1, 3)}, []int64{3}},
		{"a batch of two receives", []types.Log{mint(messenger, 1, 0), received(1, 3), mint(messenger, 1, 2), received(1, 6)}, []int64{3, 6}},
		{"two mints, one message", []types.Log{mint(messenger, 1, 0), received(1, 7), mint(messenger, 1, 2)}, []int64{7, evm.UnknownDomain}},
		{"other contract", []types.Log{received(1, 3), mint(transmitter, 1, 1)}, nil},
		{"removed", func() []types.Log { l := mint(messenger, 1, 1); l.Removed = true; return []types.Log{l} }(), nil},
	}
	c := evm.CCTP{TokenMessenger: messenger, MessageTransmitter: transmitter}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := c.DecodeCCTP(tt.logs)
			if len(got) != len(tt.want) {
				t.Fatalf("got %d flows %+v, want %d", len(got), got, len(tt.want))
			}
			for i, f := range got {
				if f.Domain != tt.want[i] || f.Amount != "5" || f.Account != recipient || f.Token != token || f.Direction != evm.BridgeIn {
					t.Errorf("flow %d = %+v", i, f)
				}
			}
		})
	}
}

func bigInt(v int64) *big.Int { return big.NewInt(v) }
