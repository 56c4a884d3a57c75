package evmreplay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/common/hexutil"
	"github.com/ethereum/go-ethereum/ethclient"

	chainevm "github.com/chainlens/chainlens/chains/evm"
	"github.com/chainlens/chainlens/devchain/evmreplay"
	"github.com/chainlens/chainlens/internal/evmtest"
)

// TestServesRecording reads the recording back through go-ethereum's own
// client: chain id, head, headers with their recorded hashes, and
// eth_getLogs filtered by range, address and topics with the counts of
// the recording's README.
func TestServesRecording(t *testing.T) {
	url := evmtest.Start(t, evmreplay.Options{StartHeight: 200})
	ctx := context.Background()
	ec, err := ethclient.Dial(url)
	if err != nil {
		t.Fatal(err)
	}
	defer ec.Close()
	id, err := ec.ChainID(ctx)
	if err != nil || id.Int64() != 1337 {
		t.Fatalf("chain id %v, %v", id, err)
	}
	head, err := ec.BlockNumber(ctx)
	if err != nil || head != 200 {
		t.Fatalf("head %d, %v", head, err)
	}
	h, err := ec.HeaderByNumber(ctx, big.NewInt(1))
	if err != nil {
		t.Fatal(err)
	}
	if h.Time != 1795299265 || h.Hash() != common.HexToHash(hashOf(t, url, "0x1")) {
		t.Errorf("block 1: time %d hash %s", h.Time, h.Hash())
	}
	if h, err := ec.HeaderByNumber(ctx, big.NewInt(201)); err != ethereum.NotFound {
		t.Errorf("block above the head: %v, %v", h, err)
	}
	tests := []struct {
		name  string
		q     ethereum.FilterQuery
		count int
	}{
		{"all logs to the head", ethereum.FilterQuery{FromBlock: big.NewInt(0), ToBlock: big.NewInt(200)}, -1},
		{"transfers of the three tokens", ethereum.FilterQuery{FromBlock: big.NewInt(0), ToBlock: big.NewInt(200),
			Addresses: []common.Address{common.HexToAddress(evmtest.USDC), common.HexToAddress(evmtest.USDT), common.HexToAddress(evmtest.DAI)},
			Topics:    [][]common.Hash{{chainevm.TopicTransfer}}}, -2},
		{"DepositForBurn", ethereum.FilterQuery{FromBlock: big.NewInt(0), ToBlock: big.NewInt(200),
			Addresses: []common.Address{common.HexToAddress(evmtest.TokenMessenger)}, Topics: [][]common.Hash{{chainevm.TopicDepositForBurn}}}, -3},
		{"empty block", ethereum.FilterQuery{FromBlock: big.NewInt(0), ToBlock: big.NewInt(0)}, 0},
	}
	full, err := ec.FilterLogs(ctx, ethereum.FilterQuery{FromBlock: big.NewInt(0), ToBlock: big.NewInt(200)})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int]int{}
	for _, l := range full {
		if l.BlockNumber > 200 {
			t.Fatalf("log of block %d above the head", l.BlockNumber)
		}
		want[-1]++
		if len(l.Topics) > 0 && l.Topics[0] == chainevm.TopicTransfer {
			want[-2]++
		}
		if len(l.Topics) > 0 && l.Topics[0] == chainevm.TopicDepositForBurn {
			want[-3]++
		}
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ec.FilterLogs(ctx, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			w := tt.count
			if w < 0 {
				w = want[w]
			}
			if len(got) != w || (tt.count < 0 && w == 0) {
				t.Errorf("%d logs, want %d", len(got), w)
			}
		})
	}
	// Up to the last block: the README's 1517 logs, 961 Transfers, 65 deposits.
	last := evmtest.Start(t, evmreplay.Options{})
	ec2, _ := ethclient.Dial(last)
	defer ec2.Close()
	for _, c := range []struct {
		topic common.Hash
		want  int
	}{{common.Hash{}, 1517}, {chainevm.TopicTransfer, 961}, {chainevm.TopicDepositForBurn, 65}, {chainevm.TopicMintAndWithdraw, 45}} {
		q := ethereum.FilterQuery{FromBlock: big.NewInt(0), ToBlock: big.NewInt(evmtest.LastHeight)}
		if c.topic != (common.Hash{}) {
			q.Topics = [][]common.Hash{{c.topic}}
		}
		got, err := ec2.FilterLogs(ctx, q)
		if err != nil || len(got) != c.want {
			t.Errorf("topic %s: %d logs (%v), want %d", c.topic, len(got), err, c.want)
		}
	}
}

// TestErrors: the geth errors of the recording's edge_cases.json.
func TestErrors(t *testing.T) {
	url := evmtest.Start(t, evmreplay.Options{StartHeight: 100})
	tests := []struct{ body, want string }{
		{`{"jsonrpc":"2.0","id":3,"method":"eth_getLogs","params":[{"fromBlock":"0x187d7","toBlock":"0x187d7"}]}`,
			`{"jsonrpc":"2.0","id":3,"error":{"code":-32602,"message":"block range extends beyond current head block"}}`},
		{`{"jsonrpc":"2.0","id":4,"method":"eth_getLogs","params":[{"fromBlock":"0x10","toBlock":"0x5"}]}`,
			`{"jsonrpc":"2.0","id":4,"error":{"code":-32602,"message":"invalid block range params"}}`},
		{`{"jsonrpc":"2.0","id":5,"method":"eth_getBlockByNumber","params":["0xzz",false]}`,
			`{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"invalid argument 0: invalid hex string"}}`},
		{`{"jsonrpc":"2.0","id":6,"method":"eth_doesNotExist","params":[]}`,
			`{"jsonrpc":"2.0","id":6,"error":{"code":-32601,"message":"the method eth_doesNotExist does not exist/is not available"}}`},
		{`{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":["0x187d7",false]}`,
			`{"jsonrpc":"2.0","id":1,"result":null}`},
		{`[{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber"},{"jsonrpc":"2.0","id":2,"method":"eth_chainId"}]`,
			`[{"jsonrpc":"2.0","id":1,"result":"0x64"},{"jsonrpc":"2.0","id":2,"result":"0x539"}]`},
	}
	for _, tt := range tests {
		if got := post(t, url, tt.body); got != tt.want {
			t.Errorf("%s\n got %s\nwant %s", tt.body, got, tt.want)
		}
	}
}

// TestRebaseAndReveal: with Rebase the start block is "now" and the
// others keep their distance to it; with BlockTime the head grows to the
// last block and stops there.
func TestRebaseAndReveal(t *testing.T) {
	now := time.Unix(1_900_000_000, 0)
	rec, err := evmreplay.Load(evmtest.Dir())
	if err != nil {
		t.Fatal(err)
	}
	n := evmreplay.New(rec, evmreplay.Options{StartHeight: 1, Rebase: true, Now: func() time.Time { return now }, BlockTime: time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = n.Run(ctx); close(done) }()
	deadline := time.Now().Add(10 * time.Second)
	for n.Head() < evmtest.LastHeight && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(10 * time.Millisecond)
	cancel()
	<-done
	if n.Head() != evmtest.LastHeight {
		t.Fatalf("head %d, want %d", n.Head(), evmtest.LastHeight)
	}
	url := evmtest.Start(t, evmreplay.Options{StartHeight: 311, Rebase: true, Now: func() time.Time { return now }})
	ec, _ := ethclient.Dial(url)
	defer ec.Close()
	// Block 311 is 311 s after block 1 in the recording (1795299265 → 1795299576).
	for _, c := range []struct{ height, want int64 }{{311, 1_900_000_000}, {1, 1_900_000_000 - 311}} {
		h, err := ec.HeaderByNumber(context.Background(), big.NewInt(c.height))
		if err != nil || int64(h.Time) != c.want {
			t.Errorf("block %d time %v (%v), want %d", c.height, h, err, c.want)
		}
	}
	// Logs carry their block's rebased timestamp (block 19 has a CCTP deposit).
	h19, err := ec.HeaderByNumber(context.Background(), big.NewInt(19))
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Result []struct {
			BlockTimestamp hexutil.Uint64 `json:"blockTimestamp"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(post(t, url, `{"jsonrpc":"2.0","id":1,"method":"eth_getLogs","params":[{"fromBlock":"0x13","toBlock":"0x13"}]}`)), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Result) == 0 {
		t.Fatal("no logs in block 19")
	}
	for _, l := range rep.Result {
		if uint64(l.BlockTimestamp) != h19.Time || h19.Time > 1_900_000_000 || h19.Time < 1_900_000_000-311 {
			t.Errorf("log time %d, block 19 time %d", l.BlockTimestamp, h19.Time)
		}
	}
}

func post(t *testing.T, url, body string) string {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(bytes.TrimSpace(b))
}

func hashOf(t *testing.T, url, height string) string {
	var rep struct {
		Result struct {
			Hash string `json:"hash"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(post(t, url, `{"jsonrpc":"2.0","id":1,"method":"eth_getBlockByNumber","params":["`+height+`",false]}`)), &rep); err != nil {
		t.Fatal(err)
	}
	return rep.Result.Hash
}
