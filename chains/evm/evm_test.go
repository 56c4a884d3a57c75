package evm_test

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ethereum/go-ethereum/accounts/abi"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/types"

	"github.com/chainlens/chainlens/chains/evm"
)

var testdata = filepath.Join("..", "..", "testdata", "evm")

// TestTopics pins topic0 of every decoded event to chain-events.md §11.3/§11.4.
func TestTopics(t *testing.T) {
	want := map[common.Hash]string{
		evm.TopicTransfer:            "0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef",
		evm.TopicIssue:               "0xcb8241adb0c3fdb35b70c24ce35c5eb0c17af7431c99f827d44a445ca624176a",
		evm.TopicRedeem:              "0x702d5967f45f6513a38ffc42d6ba9bf230bd40e8f53b16363c7eb4fd2deb9a44",
		evm.TopicDestroyedBlackFunds: "0x61e6e66b0d6339b2980aecc6ccc0039736791f0ccde9ed512e789a7fbdd698c6",
	}
	for got, w := range want {
		if got.Hex() != w {
			t.Errorf("topic %s, want %s", got.Hex(), w)
		}
	}
	if len(evm.Topics()) != 4 {
		t.Fatalf("Topics() = %v", evm.Topics())
	}
}

// TestRecordedABIs checks that the recorded contracts' ABIs declare the
// events with the topics the decoder uses.
func TestRecordedABIs(t *testing.T) {
	for file, events := range map[string][]string{
		"FiatTokenLike.abi.json":   {"Transfer"},
		"DaiLike.abi.json":         {"Transfer"},
		"TetherTokenLike.abi.json": {"Transfer", "Issue", "Redeem"},
	} {
		f, err := os.Open(filepath.Join(testdata, file))
		if err != nil {
			t.Fatal(err)
		}
		a, err := abi.JSON(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		ids := map[string]common.Hash{"Transfer": evm.TopicTransfer, "Issue": evm.TopicIssue, "Redeem": evm.TopicRedeem}
		for _, name := range events {
			ev, ok := a.Events[name]
			if !ok || ev.ID != ids[name] {
				t.Errorf("%s: event %s id %s, want %s", file, name, ev.ID.Hex(), ids[name].Hex())
			}
		}
	}
}

func word(v *big.Int) []byte { return common.BigToHash(v).Bytes() }

func addrTopic(a string) common.Hash { return common.BytesToHash(common.HexToAddress(a).Bytes()) }

func TestDecode(t *testing.T) {
	token := common.HexToAddress("0xD87F14A1B784F5EDA472997FD01530C7F60F4781")
	alice, bob := "0x00000000000000000000000000000000000a11ce", "0x0000000000000000000000000000000000000b0b"
	maxU256 := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 256), big.NewInt(1))
	base := types.Log{Address: token, BlockNumber: 7, BlockHash: common.HexToHash("0xAB"), TxHash: common.HexToHash("0xCD"), Index: 3}
	mk := func(topics []common.Hash, data []byte) *types.Log {
		l := base
		l.Topics, l.Data = topics, data
		return &l
	}
	cases := []struct {
		name string
		log  *types.Log
		ok   bool
		want evm.Movement
	}{
		{"transfer", mk([]common.Hash{evm.TopicTransfer, addrTopic(alice), addrTopic(bob)}, word(big.NewInt(1234))), true,
			evm.Movement{Kind: evm.KindTransfer, From: alice, To: bob, Amount: "1234"}},
		{"mint", mk([]common.Hash{evm.TopicTransfer, {}, addrTopic(bob)}, word(maxU256)), true,
			evm.Movement{Kind: evm.KindMint, From: evm.ZeroAddress, To: bob, Amount: maxU256.String()}},
		{"burn", mk([]common.Hash{evm.TopicTransfer, addrTopic(alice), {}}, word(big.NewInt(5))), true,
			evm.Movement{Kind: evm.KindBurn, From: alice, To: evm.ZeroAddress, Amount: "5"}},
		{"zero to zero", mk([]common.Hash{evm.TopicTransfer, {}, {}}, word(big.NewInt(5))), true,
			evm.Movement{Kind: evm.KindTransfer, From: evm.ZeroAddress, To: evm.ZeroAddress, Amount: "5"}},
		{"zero amount", mk([]common.Hash{evm.TopicTransfer, addrTopic(alice), addrTopic(bob)}, word(big.NewInt(0))), true,
			evm.Movement{Kind: evm.KindTransfer, From: alice, To: bob, Amount: "0"}},
		{"issue", mk([]common.Hash{evm.TopicIssue}, word(big.NewInt(10))), true,
			evm.Movement{Kind: evm.KindMint, From: evm.ZeroAddress, Amount: "10", Owner: evm.OwnerRecipient}},
		{"redeem", mk([]common.Hash{evm.TopicRedeem}, word(big.NewInt(11))), true,
			evm.Movement{Kind: evm.KindBurn, To: evm.ZeroAddress, Amount: "11", Owner: evm.OwnerSender}},
		{"destroyed black funds", mk([]common.Hash{evm.TopicDestroyedBlackFunds}, append(addrTopic(alice).Bytes(), word(big.NewInt(12))...)), true,
			evm.Movement{Kind: evm.KindBurn, From: alice, To: evm.ZeroAddress, Amount: "12"}},
		{"erc721 transfer", mk([]common.Hash{evm.TopicTransfer, addrTopic(alice), addrTopic(bob), common.BigToHash(big.NewInt(1))}, nil), false, evm.Movement{}},
		{"short data", mk([]common.Hash{evm.TopicTransfer, addrTopic(alice), addrTopic(bob)}, []byte{1}), false, evm.Movement{}},
		{"issue with topics", mk([]common.Hash{evm.TopicIssue, addrTopic(alice)}, word(big.NewInt(1))), false, evm.Movement{}},
		{"approval", mk([]common.Hash{common.HexToHash("0x8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925"), addrTopic(alice), addrTopic(bob)}, word(big.NewInt(1))), false, evm.Movement{}},
		{"no topics", mk(nil, nil), false, evm.Movement{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := evm.Decode(c.log)
			if ok != c.ok {
				t.Fatalf("ok = %v, want %v", ok, c.ok)
			}
			if !ok {
				return
			}
			c.want.Token = "0xd87f14a1b784f5eda472997fd01530c7f60f4781"
			c.want.Height, c.want.LogIndex = 7, 3
			c.want.BlockHash, c.want.TxHash = common.HexToHash("0xAB").Hex(), common.HexToHash("0xCD").Hex()
			if got != c.want {
				t.Fatalf("got  %+v\nwant %+v", got, c.want)
			}
		})
	}
	removed := mk([]common.Hash{evm.TopicTransfer, addrTopic(alice), addrTopic(bob)}, word(big.NewInt(1)))
	removed.Removed = true
	if _, ok := evm.Decode(removed); ok {
		t.Fatal("a removed log must not decode")
	}

	m, _ := evm.Decode(mk([]common.Hash{evm.TopicIssue}, word(big.NewInt(10))))
	m.SetOwner("0xAbC0000000000000000000000000000000000001")
	if m.To != "0xabc0000000000000000000000000000000000001" || m.Owner != evm.OwnerNone {
		t.Fatalf("SetOwner: %+v", m)
	}
	owner, err := evm.DecodeOwner(addrTopic(alice).Bytes())
	if err != nil || owner != alice {
		t.Fatalf("DecodeOwner = %q, %v", owner, err)
	}
	if got := common.Bytes2Hex(evm.OwnerCallData()); got != "8da5cb5b" {
		t.Fatalf("owner() selector %s", got)
	}
}

// TestRecordedDevnet decodes every log of the recorded geth --dev chain and
// rebuilds the ground truth: minted, burned, transfer volume and counts
// per token, distinct senders, and every labelled balance and totalSupply
// as eth_call returned them at block 311.
func TestRecordedDevnet(t *testing.T) {
	var deploy struct {
		Contracts map[string]struct {
			Address  string `json:"address"`
			Deployer string `json:"deployer"`
		} `json:"contracts"`
	}
	var summary struct {
		Tokens map[string]struct {
			Address        string   `json:"address"`
			Minted         string   `json:"minted"`
			MintCount      int      `json:"mintCount"`
			Burned         string   `json:"burned"`
			BurnCount      int      `json:"burnCount"`
			TransferVolume string   `json:"transferVolume"`
			TransferCount  int      `json:"transferCount"`
			Senders        []string `json:"senders"`
		} `json:"tokens"`
	}
	var tokens struct {
		Tokens map[string]struct {
			TotalSupply               string            `json:"totalSupply"`
			InitialSupplyWithoutEvent string            `json:"initialSupplyWithoutEvent"`
			Balances                  map[string]string `json:"balances"`
		} `json:"tokens"`
	}
	readJSON(t, "deployments.json", &deploy)
	readJSON(t, "summary.json", &summary)
	readJSON(t, "tokens.json", &tokens)
	symbol := map[string]string{}
	for _, s := range []string{"USDC", "USDT", "DAI"} {
		symbol[deploy.Contracts[s].Address] = s
	}
	// TetherTokenLike never changes owner in the recording: its deployer.
	usdtOwner := deploy.Contracts["USDT"].Deployer

	f, err := os.Open(filepath.Join(testdata, "recorded", "logs.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	type agg struct {
		minted, burned, volume  *big.Int
		mints, burns, transfers int
		senders                 map[string]bool
		balances                map[string]*big.Int
	}
	per := map[string]*agg{}
	for _, s := range symbol {
		per[s] = &agg{minted: new(big.Int), burned: new(big.Int), volume: new(big.Int), senders: map[string]bool{}, balances: map[string]*big.Int{}}
	}
	add := func(m map[string]*big.Int, k string, v *big.Int) {
		if m[k] == nil {
			m[k] = new(big.Int)
		}
		m[k].Add(m[k], v)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		var l types.Log
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		n++
		sym, ok := symbol[evm.Address(l.Address)]
		if !ok {
			continue
		}
		m, ok := evm.Decode(&l)
		if !ok {
			continue
		}
		if m.Owner != evm.OwnerNone {
			m.SetOwner(usdtOwner)
		}
		if m.From == "" || m.To == "" || strings.ToLower(m.From) != m.From || m.Token != deploy.Contracts[sym].Address {
			t.Fatalf("bad movement %+v", m)
		}
		a := per[sym]
		v, ok := new(big.Int).SetString(m.Amount, 10)
		if !ok {
			t.Fatalf("amount %q", m.Amount)
		}
		switch m.Kind {
		case evm.KindMint:
			a.mints++
			a.minted.Add(a.minted, v)
		case evm.KindBurn:
			a.burns++
			a.burned.Add(a.burned, v)
		case evm.KindTransfer:
			a.transfers++
			a.volume.Add(a.volume, v)
			a.senders[m.From] = true
		}
		add(a.balances, m.To, v)
		add(a.balances, m.From, new(big.Int).Neg(v))
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if n != 1517 {
		t.Fatalf("read %d logs, the recording has 1517", n)
	}
	for sym, want := range summary.Tokens {
		a := per[sym]
		if a == nil {
			t.Fatalf("no token %s", sym)
		}
		check := func(what string, got any, want any) {
			t.Helper()
			if got != want {
				t.Errorf("%s %s = %v, want %v", sym, what, got, want)
			}
		}
		check("minted", a.minted.String(), want.Minted)
		check("mints", a.mints, want.MintCount)
		check("burned", a.burned.String(), want.Burned)
		check("burns", a.burns, want.BurnCount)
		check("transfer volume", a.volume.String(), want.TransferVolume)
		check("transfers", a.transfers, want.TransferCount)
		check("distinct senders", len(a.senders), len(want.Senders))

		truth := tokens.Tokens[sym]
		initial := new(big.Int)
		if truth.InitialSupplyWithoutEvent != "" {
			initial.SetString(truth.InitialSupplyWithoutEvent, 10)
			add(a.balances, usdtOwner, initial) // the constructor's credit without event
		}
		supply := new(big.Int).Sub(a.minted, a.burned)
		check("totalSupply", supply.Add(supply, initial).String(), truth.TotalSupply)
		for addr, bal := range truth.Balances {
			got := a.balances[addr]
			if got == nil {
				got = new(big.Int)
			}
			check("balance of "+addr, got.String(), bal)
		}
	}
}

func readJSON(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testdata, "recorded", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}
