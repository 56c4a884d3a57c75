package synthcomet

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	abci "github.com/cometbft/cometbft/abci/types"
	cmtjson "github.com/cometbft/cometbft/libs/json"
	cmtproto "github.com/cometbft/cometbft/proto/tendermint/types"
	coretypes "github.com/cometbft/cometbft/rpc/core/types"
)

// TestResultsJSONIsCometBFTs: the hand-written block_results encoder writes
// what CometBFT's encoder writes for results with every kind of string an
// attribute may carry (quotes, HTML, control characters, invalid UTF-8,
// line separators), empty and nil lists, nil and empty data.
func TestResultsJSONIsCometBFTs(t *testing.T) {
	cp := cmtproto.ConsensusParams{
		Block:     &cmtproto.BlockParams{MaxBytes: 4194304, MaxGas: -1},
		Evidence:  &cmtproto.EvidenceParams{MaxAgeNumBlocks: 100000, MaxAgeDuration: 48 * time.Hour, MaxBytes: 1048576},
		Validator: &cmtproto.ValidatorParams{PubKeyTypes: []string{"ed25519"}},
		Version:   &cmtproto.VersionParams{},
		Abci:      &cmtproto.ABCIParams{VoteExtensionsEnableHeight: 1},
	}
	params, err := cmtjson.Marshal(&cp)
	if err != nil {
		t.Fatal(err)
	}
	strs := []string{"", "plain", `a "quoted" \ value`, "<b>&amp;</b>", "tab\tnew\nline\rret", "\x00\x01\x1f", "bad \xff utf-8",
		"line\u2028sep\u2029", "ünïcödé €", "ibc/8E27BA2D5493AF5636760E354E46004562C46AB7EC0CC4C1CA14E9E20E2545B5"}
	var events []abci.Event
	for _, s := range strs {
		events = append(events, abci.Event{Type: s, Attributes: []abci.EventAttribute{{Key: s, Value: s, Index: true}, {Key: "k", Value: s}}})
	}
	for _, c := range []struct {
		name     string
		txs      []*abci.ExecTxResult
		finalize []abci.Event
	}{
		{"events of every string", []*abci.ExecTxResult{{Code: 7, Data: []byte{1, 2, 3}, Log: strs[3], Info: strs[2], GasWanted: -1, GasUsed: 5,
			Events: events, Codespace: strs[6]}}, events},
		{"empty lists and nil data", []*abci.ExecTxResult{{Events: []abci.Event{}}, {Events: []abci.Event{{Type: "x"}}}, {Data: []byte{}}}, nil},
		{"no txs", nil, []abci.Event{{Type: "y", Attributes: []abci.EventAttribute{}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			appHash := []byte{0xde, 0xad}
			got := ResultsJSON(9, c.txs, c.finalize, params, appHash)
			want, err := cmtjson.Marshal(&coretypes.ResultBlockResults{Height: 9, TxsResults: c.txs, FinalizeBlockEvents: c.finalize,
				ConsensusParamUpdates: &cp, AppHash: appHash})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("ours:\n%s\nCometBFT's:\n%s", got, want)
			}
			if !json.Valid(got) {
				t.Fatal("not valid JSON")
			}
		})
	}
}
