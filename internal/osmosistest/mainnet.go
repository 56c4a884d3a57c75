package osmosistest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/chains/osmosis"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/indexer"
	"github.com/chainlens/chainlens/indexer/cometbft"
)

// The recorded Osmosis mainnet block with REST transactions
// (testdata/osmosis/mainnet-block-2836990.json and
// mainnet-txs-block-2836990.json): chain id, height and block time.
const (
	MainnetChainID = "osmosis-1"
	MainnetHeight  = 2836990
)

// MainnetTime is the time of block MainnetHeight.
var MainnetTime = time.Date(2022, 1, 17, 17, 14, 1, 589129908, time.UTC)

// MainnetBlock returns the `result` of /block at MainnetHeight and a
// /block_results result built from the REST transactions of the same
// block: per tx its code, codespace, raw_log, gas and, as events, the
// events of its `logs` in order, each with a msg_index attribute (the
// REST form has no `events`; the ante-handler events such as `tx` are
// therefore absent, the message events are the node's own).
func MainnetBlock(t testing.TB) (block, results json.RawMessage) {
	t.Helper()
	dir := filepath.Join(filepath.Dir(Dir()), "..", "osmosis")
	block, err := os.ReadFile(filepath.Join(dir, "mainnet-block-2836990.json"))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "mainnet-txs-block-2836990.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rest struct {
		Txs []struct {
			Code      uint32 `json:"code"`
			Codespace string `json:"codespace"`
			RawLog    string `json:"raw_log"`
			GasWanted string `json:"gas_wanted"`
			GasUsed   string `json:"gas_used"`
			Logs      []struct {
				MsgIndex int `json:"msg_index"`
				Events   []struct {
					Type       string `json:"type"`
					Attributes []struct {
						Key   string `json:"key"`
						Value string `json:"value"`
					} `json:"attributes"`
				} `json:"events"`
			} `json:"logs"`
		} `json:"txs"`
	}
	if err := json.Unmarshal(raw, &rest); err != nil {
		t.Fatal(err)
	}
	type attr struct {
		Key   string `json:"key"`
		Value string `json:"value"`
	}
	type event struct {
		Type       string `json:"type"`
		Attributes []attr `json:"attributes"`
	}
	type txResult struct {
		Code      uint32  `json:"code"`
		Codespace string  `json:"codespace"`
		Log       string  `json:"log"`
		GasWanted string  `json:"gas_wanted"`
		GasUsed   string  `json:"gas_used"`
		Events    []event `json:"events"`
	}
	out := struct {
		Height     string     `json:"height"`
		TxsResults []txResult `json:"txs_results"`
	}{Height: strconv.Itoa(MainnetHeight)}
	for _, tx := range rest.Txs {
		r := txResult{Code: tx.Code, Codespace: tx.Codespace, Log: tx.RawLog, GasWanted: tx.GasWanted, GasUsed: tx.GasUsed, Events: []event{}}
		for _, l := range tx.Logs {
			for _, e := range l.Events {
				ev := event{Type: e.Type}
				for _, a := range e.Attributes {
					ev.Attributes = append(ev.Attributes, attr(a))
				}
				ev.Attributes = append(ev.Attributes, attr{Key: "msg_index", Value: strconv.Itoa(l.MsgIndex)})
				r.Events = append(r.Events, ev)
			}
		}
		out.TxsResults = append(out.TxsResults, r)
	}
	results, err = json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return block, results
}

// mainnetSource serves MainnetBlock as a node whose only height is
// MainnetHeight (attributes are plain strings, as in the REST logs).
type mainnetSource struct{ block, results json.RawMessage }

func (s mainnetSource) Status(context.Context) (cometbft.Status, error) {
	return cometbft.Status{Network: MainnetChainID, Version: "0.37.0", LatestHeight: MainnetHeight, LatestTime: MainnetTime,
		EarliestHeight: MainnetHeight}, nil
}

func (s mainnetSource) Block(_ context.Context, h int64) ([]byte, error) {
	if h != MainnetHeight {
		return nil, fmt.Errorf("height %d is not recorded", h)
	}
	return s.block, nil
}

func (s mainnetSource) BlockResults(_ context.Context, h, _ int64) (cometbft.Answer, error) {
	if h != MainnetHeight {
		return cometbft.Answer{}, fmt.Errorf("height %d is not recorded", h)
	}
	return cometbft.Answer{Result: s.results, Size: int64(len(s.results))}, nil
}

// MainnetChain is the config of the recorded mainnet chain.
func MainnetChain() config.Chain {
	return config.Chain{ID: MainnetChainID, Name: "osmosis", Kind: osmosis.Kind, RPC: []string{"http://127.0.0.1:1"}, BatchSize: 1, Concurrency: 1,
		PollInterval: config.Duration(50 * time.Millisecond), Bech32Prefix: "osmo", StartHeight: MainnetHeight}
}

// IndexMainnet indexes block MainnetHeight into db through the real
// indexer and returns the chain config used.
func IndexMainnet(t testing.TB, db *bun.DB) config.Chain {
	t.Helper()
	block, results := MainnetBlock(t)
	cfg := MainnetChain()
	m, _ := indexer.NewMetrics(nil)
	x := indexer.NewCosmos(cfg, db, mainnetSource{block, results}, osmosis.NewAdapter(cfg.Bech32Prefix), slog.New(slog.DiscardHandler), m)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := x.Run(ctx, MainnetHeight); err != nil {
		t.Fatal(err)
	}
	return cfg
}
