package cosmos

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chainlens/chainlens/chains"
	"github.com/chainlens/chainlens/chains/protoset"
)

// Expected values of the recorded /block_results files, from
// /work/shared/testdata/README.md (and, where the README is silent, read
// off the files: noted per field).
type resultsWant struct {
	file         string
	height       int64
	base64       bool
	txResults    int
	failed       int
	blockEvents  map[string]int // "type/mode" ("type" when no mode)
	txEventTypes map[string]int
	actions      map[string]int
	emptyValues  int // attribute values that are JSON null (or "") in the file
	untyped      int // events without a type
	msgIndexed   int // events with a msg_index attribute
}

var resultsFiles = []resultsWant{
	{file: "cometbft/v0.34/block_results-10.json", height: 10},
	{file: "cometbft/v0.37/block_results-10.json", height: 10},
	{file: "cometbft/v0.38/block_results-10.json", height: 10},
	{
		file: "osmosis/mainnet-block_results-10499831.json", height: 10499831, base64: true, txResults: 8,
		blockEvents: map[string]int{
			"commission/BeginBlock": 151, "rewards/BeginBlock": 151, "proposer_reward/BeginBlock": 1, "liveness/BeginBlock": 1,
			"coin_spent/BeginBlock": 1, "coin_received/BeginBlock": 1, "transfer/BeginBlock": 1, "message/BeginBlock": 1,
		},
		txEventTypes: map[string]int{
			"message": 59, "tx": 48, "coin_received": 36, "coin_spent": 35, "transfer": 35, "token_swapped": 7, "wasm": 7,
			"fungible_token_packet": 5, "recv_packet": 4, "write_acknowledgement": 4, "update_client": 3, "execute": 3,
			"reply": 3, "acknowledge_packet": 2, "sudo": 1, "denomination_trace": 1, "coinbase": 1,
		},
		actions: map[string]int{
			"/ibc.core.channel.v1.MsgRecvPacket": 4, "/ibc.core.client.v1.MsgUpdateClient": 3,
			"/ibc.core.channel.v1.MsgAcknowledgement": 2, "/osmosis.gamm.v1beta1.MsgSwapExactAmountIn": 2,
			"/osmosis.gamm.v1beta1.MsgSwapExactAmountOut": 1, "/cosmwasm.wasm.v1.MsgExecuteContract": 2,
		},
		emptyValues: 6,
	},
	{
		file: "injective/mainnet-block_results-4555980-v0.34.json", height: 4555980, base64: true, txResults: 4,
		blockEvents: map[string]int{
			"commission/BeginBlock": 24, "rewards/BeginBlock": 24, "coin_received/BeginBlock": 3, "message/BeginBlock": 3,
			"coin_spent/BeginBlock": 2, "transfer/BeginBlock": 2, "coinbase/BeginBlock": 1, "mint/BeginBlock": 1,
			"proposer_reward/BeginBlock": 1, "send_packet/BeginBlock": 1,
			"injective.exchange.v1beta1.EventBatchDepositUpdate/EndBlock": 1,
		},
		txEventTypes: map[string]int{ // read off the file (README: "EventCancelSpotOrder ×3 and delegate")
			"tx": 11, "message": 9, "coin_spent": 5, "coin_received": 5, "transfer": 4,
			"injective.exchange.v1beta1.EventCancelSpotOrder": 3, "delegate": 1,
		},
		actions: map[string]int{
			"/injective.exchange.v1beta1.MsgBatchCancelSpotOrders": 2, "/injective.exchange.v1beta1.MsgCancelSpotOrder": 1,
			"/cosmos.staking.v1beta1.MsgDelegate": 1,
		},
		emptyValues: 3, // read off the file
	},
	{
		file: "injective/mainnet-block_results-137512194-comet1.json", height: 137512194, txResults: 3,
		blockEvents: map[string]int{ // 117 events; modes read off the file: 111 BeginBlock, 6 EndBlock
			"commission/BeginBlock": 50, "rewards/BeginBlock": 50, "coin_received/BeginBlock": 3, "coin_spent/BeginBlock": 2,
			"transfer/BeginBlock": 2, "message/BeginBlock": 2, "coinbase/BeginBlock": 1, "mint/BeginBlock": 1,
			"block_bloom/EndBlock": 1, "injective.exchange.v2.EventBatchDepositUpdate/EndBlock": 1,
			"injective.exchange.v1beta1.EventBatchDepositUpdate/EndBlock": 1, "injective.exchange.v2.EventOrderbookUpdate/EndBlock": 1,
			"injective.exchange.v1beta1.EventOrderbookUpdate/EndBlock": 1, "cosmos.bank.v1beta1.EventSetBalances/EndBlock": 1,
		},
		txEventTypes: map[string]int{
			"tx": 9, "message": 8, "coin_spent": 5, "coin_received": 5, "transfer": 5,
			"injective.exchange.v2.EventCancelDerivativeOrder": 3, "injective.exchange.v1beta1.EventCancelDerivativeOrder": 3,
			"injective.exchange.v2.EventNewDerivativeOrders": 3, "injective.exchange.v1beta1.EventNewDerivativeOrders": 3,
			"injective.exchange.v2.EventOrderFail": 1, "injective.exchange.v1beta1.EventOrderFail": 1,
			"withdraw_rewards": 1, "unbond": 1,
		},
		actions:     map[string]int{"/cosmos.authz.v1beta1.MsgExec": 2, "/cosmos.staking.v1beta1.MsgUndelegate": 1},
		emptyValues: 1, msgIndexed: 27,
	},
	{
		// Sei: finalize_block_events with base64 attributes and no mode
		// attribute, so Mode stays "".
		file: "sei/mainnet-block_results-54810790-failed-txs.json", height: 54810790, base64: true, txResults: 28, failed: 2,
		blockEvents:  map[string]int{"commission": 40, "rewards": 40, "proposer_reward": 1},
		txEventTypes: map[string]int{"tx": 78, "message": 52, "aggregate_vote": 26},
		actions:      map[string]int{"/seiprotocol.seichain.oracle.MsgAggregateExchangeRateVote": 26},
		emptyValues:  82, // read off the file
	},
	{
		file: "dydx/mainnet-block_results-12791634-missing-type.json", height: 12791634, txResults: 1,
		blockEvents: map[string]int{"": 4}, untyped: 4,
	},
}

func TestRecordedBlockResults(t *testing.T) {
	for _, w := range resultsFiles {
		t.Run(w.file, func(t *testing.T) {
			res, ok := rpcFile(t, w.file)
			if !ok {
				t.Fatal("error response")
			}
			r, err := parseResults(res, chains.AttrAuto)
			if err != nil {
				t.Fatal(err)
			}
			if det, err := DetectBase64(res); err != nil || det != w.base64 || r.base64 != w.base64 {
				t.Errorf("base64 detected %v/%v (%v), want %v", det, r.base64, err, w.base64)
			}
			if r.height != w.height || len(r.txs) != w.txResults {
				t.Errorf("height %d, %d tx results; want %d, %d", r.height, len(r.txs), w.height, w.txResults)
			}
			blockEvents, txEventTypes, actions := map[string]int{}, map[string]int{}, map[string]int{}
			failed, empty, untyped, msgIndexed := 0, 0, 0, 0
			count := func(ev chains.Event) {
				if ev.Type == "" {
					untyped++
				}
				if ev.MsgIndex >= 0 {
					msgIndexed++
				}
				for _, a := range ev.Attrs {
					if a.Value == "" {
						empty++
					}
				}
			}
			for i, ev := range r.events {
				if ev.Index != i || ev.TxIndex != -1 {
					t.Errorf("block event %d: index %d tx %d", i, ev.Index, ev.TxIndex)
				}
				k := ev.Type
				if ev.Mode != "" {
					k += "/" + ev.Mode
				}
				blockEvents[k]++
				count(ev)
			}
			for i, tr := range r.txs {
				if tr.code != 0 {
					failed++
				}
				for j, ev := range tr.events {
					if ev.Index != j || ev.TxIndex != i || ev.Mode != "" {
						t.Errorf("tx %d event %d: %+v", i, j, ev)
					}
					txEventTypes[ev.Type]++
					if a, ok := ev.Get("action"); ok && ev.Type == "message" {
						actions[a]++
					}
					count(ev)
				}
			}
			if failed != w.failed || empty != w.emptyValues || untyped != w.untyped || msgIndexed != w.msgIndexed {
				t.Errorf("failed/empty values/untyped/msg_index = %d/%d/%d/%d, want %d/%d/%d/%d",
					failed, empty, untyped, msgIndexed, w.failed, w.emptyValues, w.untyped, w.msgIndexed)
			}
			assertCounts(t, "block events", blockEvents, orEmpty(w.blockEvents))
			assertCounts(t, "tx event types", txEventTypes, orEmpty(w.txEventTypes))
			assertCounts(t, "actions", actions, orEmpty(w.actions))
		})
	}
}

func orEmpty(m map[string]int) map[string]int {
	if m == nil {
		return map[string]int{}
	}
	return m
}

// TestRecordedValues checks decoded attribute values of the recorded files.
func TestRecordedValues(t *testing.T) {
	load := func(file string) *decodedResults {
		t.Helper()
		res, _ := rpcFile(t, file)
		r, err := parseResults(res, chains.AttrAuto)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	attrs := func(ev chains.Event) string {
		var s []string
		for _, a := range ev.Attrs {
			s = append(s, a.Key+"="+a.Value)
		}
		return strings.Join(s, " ")
	}
	find := func(evs []chains.Event, typ string) *chains.Event {
		for i := range evs {
			if evs[i].Type == typ {
				return &evs[i]
			}
		}
		t.Fatalf("no %s event", typ)
		return nil
	}

	// 0.34 base64 (chain-events.md §3.2 sample).
	osmo := load("osmosis/mainnet-block_results-10499831.json")
	if got, want := attrs(*find(osmo.txs[0].events, "token_swapped")),
		"module=gamm sender=osmo1ddl9hnacgqfls5xgm7jy30uvc3lll4jdrdk35n pool_id=872 "+
			"tokens_in=360000000ibc/D189335C6E4A68B513C10AB227BF1C1D38C746766278BA3EEB4FB14124F1D858 "+
			"tokens_out=360484932ibc/9F9B07EF9AD291167CF5700628145DE1DEB777C2CFC7907553B24446515F6D0E"; got != want {
		t.Errorf("token_swapped: %s", got)
	}
	if got := attrs(osmo.events[0]); got != "spender=osmo17xpfvakm2amg962yls6f84z3kell8c5lczssa0 amount=39206uosmo" ||
		osmo.events[0].Type != "coin_spent" || osmo.events[0].Mode != ModeBeginBlock || osmo.events[0].MsgIndex != -1 {
		t.Errorf("first begin-block event: %+v", osmo.events[0])
	}
	// The 6 JSON-null values (README: "zero amount on proposer_reward/
	// commission/rewards") are 3 block-level amounts of one validator and 3
	// memo attributes of tx fungible_token_packet events.
	nulls := map[string]int{}
	for _, ev := range osmo.events {
		if v, ok := ev.Get("amount"); ok && v == "" {
			val, _ := ev.Get("validator")
			nulls[ev.Type+" "+val]++
		}
	}
	for _, tr := range osmo.txs {
		for _, ev := range tr.events {
			if v, ok := ev.Get("memo"); ok && v == "" {
				nulls[ev.Type+" memo"]++
			}
		}
	}
	assertCounts(t, "null values", nulls, map[string]int{
		"proposer_reward osmovaloper1c9ye54e3pzwm3e0zpdlel6pnavrj9qqv5qgdz9": 1,
		"commission osmovaloper1c9ye54e3pzwm3e0zpdlel6pnavrj9qqv5qgdz9":      1,
		"rewards osmovaloper1c9ye54e3pzwm3e0zpdlel6pnavrj9qqv5qgdz9":         1,
		"fungible_token_packet memo":                                         3,
	})

	// 1.0: mode and msg_index attributes; typed-event JSON values kept as text.
	inj := load("injective/mainnet-block_results-137512194-comet1.json")
	if got := attrs(inj.events[104]); inj.events[104].Type != "rewards" || inj.events[104].Mode != ModeBeginBlock ||
		got != "amount=787511187942170.188356736266466532inj validator=injvaloper1guh04j8x8fxpax3ghf7wlf798xey8576kyfwza mode=BeginBlock" {
		t.Errorf("rewards event 104: %+v", inj.events[104])
	}
	if ev := inj.events[116]; ev.Type != "cosmos.bank.v1beta1.EventSetBalances" || ev.Mode != ModeEndBlock || ev.Index != 116 {
		t.Errorf("last finalize event: %s %s %d", ev.Type, ev.Mode, ev.Index)
	}
	ante, msg := inj.txs[0].events[3], inj.txs[0].events[7]
	if ante.Type != "message" || ante.MsgIndex != -1 || msg.MsgIndex != 0 {
		t.Errorf("msg_index: ante %d, message %d", ante.MsgIndex, msg.MsgIndex)
	}
	if a, _ := msg.Get("action"); a != "/cosmos.authz.v1beta1.MsgExec" {
		t.Errorf("action %q", a)
	}
	typed := inj.txs[0].events[14]
	if mid, _ := typed.Get("market_id"); typed.Type != "injective.exchange.v2.EventNewDerivativeOrders" ||
		mid != `"0x9f70beeed6a8ea48b1eab7a608a2af600d432ee6eda7fba2965875a8e9702b77"` {
		t.Errorf("typed event: %s market_id %s", typed.Type, mid)
	}
	if v, _ := typed.Get("buy_orders"); v != "[]" {
		t.Errorf("buy_orders %q", v)
	}

	// Sei: failed txs without gas, events and data; base64 finalize events.
	sei := load("sei/mainnet-block_results-54810790-failed-txs.json")
	for i, got := range []string{"25569339", "25569340"} {
		tr := sei.txs[i]
		if tr.code != 32 || tr.codespace != "sdk" || tr.gasWanted != 0 || tr.gasUsed != 0 || tr.events != nil ||
			tr.log != "account sequence mismatch, expected 25569347, got "+got+": incorrect account sequence" {
			t.Errorf("sei failed tx %d: %+v", i, tr)
		}
	}
	if got := attrs(sei.events[0]); sei.events[0].Type != "proposer_reward" || sei.events[0].Mode != "" ||
		got != "amount= validator=seivaloper1qae8v3h6wd6f5yfxyx3zeumuddwhm4qeyz5qre" {
		t.Errorf("sei first finalize event: %s %q", sei.events[0].Type, got)
	}

	// dYdX: events without a type, with an empty key.
	dydx := load("dydx/mainnet-block_results-12791634-missing-type.json")
	if ev := dydx.events[0]; ev.Type != "" || len(ev.Attrs) != 1 || ev.Attrs[0].Key != "" ||
		ev.Attrs[0].Value != "\n0/dydxprotocol.clob.MsgProposedOperationsResponse" {
		t.Errorf("dydx event: %+v", ev)
	}
	if dydx.txs[0].events != nil {
		t.Errorf("dydx tx events: %+v", dydx.txs[0].events)
	}
}

// TestRecordedBlocks decodes every recorded /block file. The kvstore blocks
// have no txs; heights without a recorded /block_results get an empty one.
func TestRecordedBlocks(t *testing.T) {
	tests := []struct {
		file, results       string // results "" = synthetic empty
		height              int64
		hash, time, propose string
		appHash             string
	}{
		{"cometbft/v0.34/block-1.json", "", 1, "56527562E5142C279254641CE18DB0D845767F2933AAFB784D752905ABF410E8", "2022-09-22T18:57:22.193215438Z", "675F52E8FDA5F4047B8EAF498F946F551ED53DC2", ""},
		{"cometbft/v0.34/block-10.json", "cometbft/v0.34/block_results-10.json", 10, "6AA59493037B1673949755B88F86B840FB75285485D95FDBA5BE79D28588F2AC", "2022-09-22T18:57:27.243575136Z", "675F52E8FDA5F4047B8EAF498F946F551ED53DC2", "0000000000000000"},
		{"cometbft/v0.37/block-1.json", "", 1, "D55CD72165688BE21F2DF8C9AE46FA2BCA423223E99FC665DD2E621066F443C5", "2023-02-27T07:13:03.391799721Z", "DD8A65495B6240145764A74E78CF203D51510371", ""},
		{"cometbft/v0.37/block-10.json", "cometbft/v0.37/block_results-10.json", 10, "FCF9C2537FC3534CA71001FE1F14C4F769090948C1A521682F612E7CF73AE639", "2023-02-27T07:13:08.140032018Z", "DD8A65495B6240145764A74E78CF203D51510371", "0000000000000000"},
		{"cometbft/v0.38/block-1.json", "", 1, "6CD5CF4E23A49D9BC073D6F305D29D1B8B5193B534C237696D42FEA5AFBCD520", "2023-05-17T14:12:48.347696215Z", "2DD9F44FD9067555C322243C3C913BA7B51D2BE0", "0000000000000000"},
		{"cometbft/v0.38/block-10.json", "cometbft/v0.38/block_results-10.json", 10, "00ECDAC463C201ECD4BDBBAAE4A53A4C80291D4051FD69ED97F6420CE1388BFE", "2023-05-17T14:12:53.088875124Z", "2DD9F44FD9067555C322243C3C913BA7B51D2BE0", "0000000000000000"},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			blk, ok := rpcFile(t, tc.file)
			if !ok {
				t.Fatal("error response")
			}
			res := json.RawMessage(fmt.Sprintf(`{"height":"%d","txs_results":null}`, tc.height))
			if tc.results != "" {
				res, _ = rpcFile(t, tc.results)
			}
			b, err := DecodeBlock(chains.RawBlock{ChainID: "dockerchain", Height: tc.height, Block: blk, Results: res}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			want, _ := time.Parse(time.RFC3339Nano, tc.time)
			if b.Height != tc.height || b.Hash != tc.hash || !b.Time.Equal(want) || b.Proposer != tc.propose ||
				b.AppHash != tc.appHash || b.ChainID != "dockerchain" || b.Txs != nil || b.Events != nil ||
				!reflect.DeepEqual(b.Stats, chains.Stats{}) {
				t.Errorf("%+v", b)
			}
		})
	}
	// block-0-error.json: /block at height 0 is a JSON-RPC error; its error
	// object is not a block.
	for _, v := range []string{"v0.34", "v0.37", "v0.38"} {
		errObj, ok := rpcFile(t, "cometbft/"+v+"/block-0-error.json")
		if ok || !strings.Contains(string(errObj), "height must be greater than 0, but got 0") {
			t.Errorf("%s block-0-error: ok %v %s", v, ok, errObj)
		}
		_, err := DecodeBlock(chains.RawBlock{Height: 0, Block: errObj, Results: json.RawMessage(`{"height":"0"}`)}, Options{})
		if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "height 0") {
			t.Errorf("%s block-0-error: err %v", v, err)
		}
	}
}

// TestOsmosisMainnetBlock decodes the 64 txs of Osmosis height 2,836,990
// (Tendermint 0.34 era) and compares them with the REST txs of that block.
// Its block_results was not recorded: the results are built from the REST
// txs' code, codespace, log and gas.
func TestOsmosisMainnetBlock(t *testing.T) {
	blk, _ := rpcFile(t, "osmosis/mainnet-block-2836990.json")
	var rest struct {
		TotalCount string `json:"total_count"`
		Txs        []struct {
			TxHash    string `json:"txhash"`
			Code      uint32 `json:"code"`
			Codespace string `json:"codespace"`
			RawLog    string `json:"raw_log"`
			GasWanted string `json:"gas_wanted"`
			GasUsed   string `json:"gas_used"`
			Tx        struct {
				Body struct {
					Messages []map[string]any `json:"messages"`
					Memo     string           `json:"memo"`
				} `json:"body"`
				AuthInfo struct {
					Fee struct {
						Amount []chains.Coin `json:"amount"`
					} `json:"fee"`
				} `json:"auth_info"`
			} `json:"tx"`
		} `json:"txs"`
	}
	b, err := os.ReadFile(filepath.Join(testdata, "osmosis/mainnet-txs-block-2836990.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rest); err != nil {
		t.Fatal(err)
	}
	type txResult struct {
		Code      uint32 `json:"code"`
		Codespace string `json:"codespace"`
		Log       string `json:"log"`
		GasWanted string `json:"gas_wanted"`
		GasUsed   string `json:"gas_used"`
	}
	results := struct {
		Height     string     `json:"height"`
		TxsResults []txResult `json:"txs_results"`
	}{Height: "2836990"}
	for _, tx := range rest.Txs {
		results.TxsResults = append(results.TxsResults, txResult{tx.Code, tx.Codespace, tx.RawLog, tx.GasWanted, tx.GasUsed})
	}
	res, _ := json.Marshal(results)
	blockResult, err := DecodeBlock(chains.RawBlock{ChainID: "osmosis-1", Height: 2836990, Block: blk, Results: res},
		Options{Bech32Prefix: "osmo", Registry: chainRegistry("osmosis")})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := time.Parse(time.RFC3339Nano, "2022-01-17T17:14:01.589129908Z")
	if blockResult.Hash != "CC3F7B8C711393E0A6BF42F743C1E96A5E147C03CD2ACF50E15DF93515E4DCC5" || !blockResult.Time.Equal(want) ||
		blockResult.Proposer != "1B002B6EBEB8653C721301B1B56472B1B4DE7247" ||
		blockResult.AppHash != "7356565B67989D373662FC5553E97A206BB8A58385FF42698F1A411C698555F3" {
		t.Errorf("header: %s %v %s %s", blockResult.Hash, blockResult.Time, blockResult.Proposer, blockResult.AppHash)
	}
	// The last commit: 118 votes for height 2,836,989, every one a signature.
	if blockResult.CommitHeight != 2836989 || len(blockResult.Signatures) != 118 {
		t.Fatalf("commit %d, %d votes", blockResult.CommitHeight, len(blockResult.Signatures))
	}
	for i, s := range blockResult.Signatures {
		if s.Flag != chains.FlagCommit || len(s.Validator) != 40 || s.Power != -1 {
			t.Errorf("vote %d: %+v", i, s)
		}
	}
	if rest.TotalCount != "64" || len(blockResult.Txs) != 64 {
		t.Fatalf("%d txs (REST total %s), want 64", len(blockResult.Txs), rest.TotalCount)
	}
	// 65 messages (one tx has MsgUpdateClient + MsgRecvPacket), none of them
	// from an SDK module: all decoded from Osmosis's and ibc-go's shipped
	// descriptors, none with fields they lack.
	if blockResult.Stats.UnknownMessages != 0 || blockResult.Stats.PartialMessages != 0 || blockResult.Stats.UndecodableTxs != 0 || blockResult.Stats.Base64Attributes {
		t.Errorf("stats %+v", blockResult.Stats)
	}
	all, succeeded := map[string]int{}, map[string]int{}
	failed := 0
	for i, tx := range blockResult.Txs {
		r := rest.Txs[i]
		if tx.Hash != r.TxHash {
			t.Errorf("tx %d: hash %s, REST %s", i, tx.Hash, r.TxHash)
		}
		if tx.Undecodable || tx.Memo != r.Tx.Body.Memo || len(tx.Messages) != len(r.Tx.Body.Messages) {
			t.Errorf("tx %d: undecodable %v memo %q, %d messages", i, tx.Undecodable, tx.Memo, len(tx.Messages))
			continue
		}
		if !reflect.DeepEqual(tx.Fee, r.Tx.AuthInfo.Fee.Amount) && !(len(tx.Fee) == 0 && len(r.Tx.AuthInfo.Fee.Amount) == 0) {
			t.Errorf("tx %d: fee %v, REST %v", i, tx.Fee, r.Tx.AuthInfo.Fee.Amount)
		}
		// The signer derived from the secp256k1 key is the message's
		// sender (signer for IBC client msgs, owner for lockup).
		m0 := r.Tx.Body.Messages[0]
		sender := firstString(m0, "sender", "signer", "owner")
		if len(tx.Signers) != 1 || tx.Signers[0] != sender || tx.FeePayer != sender {
			t.Errorf("tx %d: signers %v payer %s, message sender %s", i, tx.Signers, tx.FeePayer, sender)
		}
		for j, m := range tx.Messages {
			if m.TypeURL != r.Tx.Body.Messages[j]["@type"] || m.JSON == nil || len(m.Raw) == 0 {
				t.Errorf("tx %d msg %d: %s json %s", i, j, m.TypeURL, m.JSON)
			}
			restJSON := maps.Clone(r.Tx.Body.Messages[j])
			delete(restJSON, "@type")
			wantJSON, _ := json.Marshal(restJSON)
			var g, w any
			_ = json.Unmarshal(m.JSON, &g)
			_ = json.Unmarshal(wantJSON, &w)
			if !reflect.DeepEqual(camelKeys(g), w) && !reflect.DeepEqual(g, w) {
				// The block is of January 2022 (ibc-go v2): later versions
				// renamed MsgUpdateClient.header and added fields.
				if path, ok := sameAsOlderVersion(g, w, ""); !ok {
					t.Errorf("tx %d msg %d %s: %s differs from the chain's JSON:\n got %.400s\nrest %.400s", i, j, m.TypeURL, path, m.JSON, wantJSON)
				}
			}
			all[m.TypeURL]++
			if tx.Succeeded() {
				succeeded[m.TypeURL]++
			}
		}
		if !tx.Succeeded() {
			failed++
			if tx.Code != 7 || tx.Codespace != "gamm" {
				t.Errorf("tx %d: code %d %s", i, tx.Code, tx.Codespace)
			}
		}
	}
	if failed != 50 {
		t.Errorf("%d failed txs, want 50", failed)
	}
	// README: the succeeded txs' actions; the failed ones are all swaps.
	assertCounts(t, "succeeded message types", succeeded, map[string]int{
		"/osmosis.gamm.v1beta1.MsgSwapExactAmountIn": 9, "/ibc.applications.transfer.v1.MsgTransfer": 3,
		"/ibc.core.client.v1.MsgUpdateClient": 1, "/ibc.core.channel.v1.MsgRecvPacket": 1, "/osmosis.lockup.MsgBeginUnlocking": 1,
	})
	assertCounts(t, "message types", all, map[string]int{
		"/osmosis.gamm.v1beta1.MsgSwapExactAmountIn": 59, "/ibc.applications.transfer.v1.MsgTransfer": 3,
		"/ibc.core.client.v1.MsgUpdateClient": 1, "/ibc.core.channel.v1.MsgRecvPacket": 1, "/osmosis.lockup.MsgBeginUnlocking": 1,
	})
	memo := blockResult.Txs[0].Memo
	for _, tx := range blockResult.Txs {
		if tx.Memo != "" {
			memo = tx.Memo
		}
	}
	if memo != "Connect the Interchain. Stake with Cephalopod 🐙 | hermes 0.10.0+7cf35419 (https://hermes.informal.systems)" {
		t.Errorf("memo %q", memo)
	}
}

func firstString(m map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := m[k].(string); ok {
			return s
		}
	}
	return ""
}

// TestEveryRecordedFileCovered fails when a /block or /block_results file
// in the copied testdata is not exercised by the tests above.
func TestEveryRecordedFileCovered(t *testing.T) {
	covered := map[string]string{
		"osmosis/mainnet-block-2836990.json":     "block",
		"osmosis/mainnet-txs-block-2836990.json": "rest txs", // REST GetTxsEvent, not RPC
	}
	for _, w := range resultsFiles {
		covered[w.file] = "block_results"
	}
	for _, v := range []string{"v0.34", "v0.37", "v0.38"} {
		covered["cometbft/"+v+"/block-1.json"] = "block"
		covered["cometbft/"+v+"/block-10.json"] = "block"
		covered["cometbft/"+v+"/block-0-error.json"] = "error"
	}
	covered["cometbft/v0.38/blockchain-1-10.json"] = "block sizes (devchain/replaynode TestBlockSizeMatchesCometBFT)"
	for _, f := range cosmoshubTxFiles {
		covered[f.file] = "rest tx"
	}
	var seen []string
	for _, dir := range []string{"cometbft", "osmosis", "dydx", "injective", "sei", "cosmoshub"} {
		err := filepath.WalkDir(filepath.Join(testdata, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") {
				return err
			}
			rel, _ := filepath.Rel(testdata, path)
			rel = filepath.ToSlash(rel)
			seen = append(seen, rel)
			kind, ok := covered[rel]
			if !ok {
				t.Errorf("%s is not covered by a test", rel)
				return nil
			}
			b, _ := os.ReadFile(path)
			res, isResult := unwrap(t, b)
			var probe map[string]json.RawMessage
			_ = json.Unmarshal(res, &probe)
			_, hasBlock := probe["block_id"]
			_, hasResults := probe["txs_results"]
			got := map[bool]string{true: "block"}[hasBlock]
			switch {
			case !isResult:
				got = "error"
			case hasResults:
				got = "block_results"
			case !hasBlock:
				got = kind // REST shapes
			}
			if got != kind {
				t.Errorf("%s looks like %s, covered as %s", rel, got, kind)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	sort.Strings(seen)
	if len(seen) != 23 {
		t.Errorf("%d recorded files: %v", len(seen), seen)
	}
}

// camelKeys renames the keys of decoded JSON from proto field names to
// their lowerCamelCase JSON names (what a gogoproto jsonpb without OrigName
// writes), "@type" aside.
func camelKeys(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[protoset.JSONName(k)] = camelKeys(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = camelKeys(x[i])
		}
		return out
	}
	return v
}

// olderNames maps a field name to the name an older version of its
// message gave it.
var olderNames = map[string]string{"client_message": "header"} // ibc-go v7 renamed MsgUpdateClient.header

// sameAsOlderVersion reports whether got, decoded with newer descriptors,
// says what want (the chain's JSON at an older version) says: every field
// of want is in got with the same value (by proto or JSON name, or its
// older name), a field want lacks is a default value (added since), and an
// empty bytes field written as null then is "" now. It returns the path of
// the first difference.
func sameAsOlderVersion(got, want any, path string) (string, bool) {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return path, false
		}
		seen := map[string]bool{}
		for k, wv := range w {
			found := false
			for gk, gv := range g {
				if gk == k || protoset.JSONName(gk) == k || olderNames[gk] == k {
					if p, ok := sameAsOlderVersion(gv, wv, path+"."+k); !ok {
						return p, false
					}
					seen[gk], found = true, true
					break
				}
			}
			if !found {
				return path + "." + k, false
			}
		}
		for gk, gv := range g {
			if !seen[gk] && !isDefault(gv) {
				return path + "." + gk + " (not in the older version)", false
			}
		}
		return "", true
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return path, false
		}
		for i := range w {
			if p, ok := sameAsOlderVersion(g[i], w[i], fmt.Sprintf("%s[%d]", path, i)); !ok {
				return p, false
			}
		}
		return "", true
	case nil:
		return path, got == nil || got == ""
	}
	return path, reflect.DeepEqual(got, want)
}

// isDefault reports whether decoded JSON is a proto3 default value.
func isDefault(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case bool:
		return !x
	case string:
		return x == "" || x == "0"
	case float64:
		return x == 0
	case []any:
		return len(x) == 0
	case map[string]any:
		for _, e := range x {
			if !isDefault(e) {
				return false
			}
		}
		return true
	}
	return false
}
