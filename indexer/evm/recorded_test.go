package evm_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chainlens/chainlens/devchain/evmreplay"
	"github.com/chainlens/chainlens/indexer"
	evmindexer "github.com/chainlens/chainlens/indexer/evm"
	"github.com/chainlens/chainlens/internal/evmtest"
	"github.com/chainlens/chainlens/internal/testdb"
)

// TestIndexRecordedDevnet indexes the recorded go-ethereum devnet through
// the replay node (real recorded JSON-RPC replies), behind a first
// endpoint that is down, and compares the rows
// with the recording's ground truth: mints, burns and transfer volume per
// token (the USDT owner from config, not eth_call) and every CCTP deposit
// and receive with its domain.
func TestIndexRecordedDevnet(t *testing.T) {
	t.Parallel()
	url := evmtest.Start(t, evmreplay.Options{})
	db, _ := testdb.New(t)
	cfg := evmtest.Chain(url)
	cfg.Confirmations = 0
	// The first endpoint is down: every call fails over to the second.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()
	cfg.RPC = []string{dead, url}
	clients, err := evmindexer.Dial(cfg.RPC)
	if err != nil {
		t.Fatal(err)
	}
	defer evmindexer.CloseAll(clients)
	m, _ := indexer.NewMetrics(nil)
	x := evmindexer.New(cfg, db, clients, slog.New(slog.DiscardHandler), m)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := x.Run(ctx, evmtest.LastHeight); err != nil {
		t.Fatal(err)
	}

	var summary struct {
		Tokens map[string]struct {
			Address        string `json:"address"`
			Minted         string `json:"minted"`
			MintCount      int64  `json:"mintCount"`
			Burned         string `json:"burned"`
			BurnCount      int64  `json:"burnCount"`
			TransferVolume string `json:"transferVolume"`
			TransferCount  int64  `json:"transferCount"`
		} `json:"tokens"`
	}
	readRecorded(t, "summary.json", &summary)
	for sym, w := range summary.Tokens {
		for _, c := range []struct {
			kind   string
			amount string
			n      int64
		}{{"mint", w.Minted, w.MintCount}, {"burn", w.Burned, w.BurnCount}, {"transfer", w.TransferVolume, w.TransferCount}} {
			var got struct {
				N      int64  `bun:"n"`
				Amount string `bun:"amount"`
			}
			if err := db.NewRaw(`SELECT count(*) AS n, coalesce(sum(amount), 0)::text AS amount FROM erc20_transfers
				WHERE chain_id = ? AND token = ? AND kind = ? AND sender <> '' AND recipient <> ''`, evmtest.ChainID, w.Address, c.kind).Scan(ctx, &got); err != nil {
				t.Fatal(err)
			}
			if got.N != c.n || got.Amount != c.amount {
				t.Errorf("%s %s: %d rows, %s; want %d, %s", sym, c.kind, got.N, got.Amount, c.n, c.amount)
			}
		}
	}

	type flow struct {
		Block     int64  `json:"block" bun:"height"`
		TxHash    string `json:"txHash" bun:"tx_hash"`
		Domain    int64  `json:"domain" bun:"remote_domain"`
		Amount    string `json:"amount" bun:"amount"`
		Depositor string `json:"depositor"`
		Recipient string `json:"recipient"`
		Account   string `bun:"account"`
		Direction string `bun:"direction"`
		Token     string `bun:"token"`
	}
	var bridge struct {
		CCTP struct {
			Deposits []flow `json:"deposits"`
			Receives []flow `json:"receives"`
		} `json:"cctp"`
	}
	readRecorded(t, "bridge.json", &bridge)
	var want []flow
	for _, d := range bridge.CCTP.Deposits {
		want = append(want, flow{Block: d.Block, TxHash: d.TxHash, Domain: d.Domain, Amount: d.Amount, Account: d.Depositor, Direction: "out", Token: evmtest.USDC})
	}
	for _, r := range bridge.CCTP.Receives {
		want = append(want, flow{Block: r.Block, TxHash: r.TxHash, Domain: r.Domain, Amount: r.Amount, Account: r.Recipient, Direction: "in", Token: evmtest.USDC})
	}
	var got []flow
	if err := db.NewRaw(`SELECT height, tx_hash, remote_domain, amount::text AS amount, account, direction, token
		FROM evm_bridge_transfers WHERE chain_id = ? AND protocol = 'cctp' ORDER BY height, log_index`, evmtest.ChainID).Scan(ctx, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 110 {
		t.Fatalf("%d bridge rows, want 65 deposits + 45 receives", len(got))
	}
	byTx := map[string]flow{}
	for _, f := range got {
		byTx[f.TxHash] = f
	}
	for _, w := range want {
		if g := byTx[w.TxHash]; g != w {
			t.Errorf("tx %s:\n got %+v\nwant %+v", w.TxHash, g, w)
		}
	}
}

func readRecorded(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(evmtest.Dir(), name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// TestGiveUpOnUnreadableBlocks: a node that answers eth_blockNumber but
// never eth_getLogs fails a run with GiveUpAfter (index --until) instead
// of being waited for ever.
func TestGiveUpOnUnreadableBlocks(t *testing.T) {
	t.Parallel()
	url := evmtest.Start(t, evmreplay.Options{})
	db, _ := testdb.New(t)
	p := newProxy(t, url)
	p.set(func(p *proxy) { p.logsDown = true })
	cfg := evmtest.Chain(p.URL())
	cfg.Confirmations = 0
	clients, err := evmindexer.Dial(cfg.RPC)
	if err != nil {
		t.Fatal(err)
	}
	defer evmindexer.CloseAll(clients)
	x := evmindexer.New(cfg, db, clients, slog.New(slog.DiscardHandler), nil)
	x.Retry = evmindexer.Retry{Attempts: 2, Base: time.Millisecond, Max: 5 * time.Millisecond}
	x.GiveUpAfter = 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := x.Run(ctx, evmtest.LastHeight); err == nil || !strings.Contains(err.Error(), "blocks from 0 could not be read for 300ms") {
		t.Fatalf("run against a node whose logs fail: %v", err)
	}
}
