package synthdydx_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"testing"

	cmtjson "github.com/cometbft/cometbft/libs/json"
	coretypes "github.com/cometbft/cometbft/rpc/core/types"
	cmttypes "github.com/cometbft/cometbft/types"
	sdktx "github.com/cosmos/cosmos-sdk/types/tx"

	"github.com/chainlens/chainlens/chains/dydx"
	"github.com/chainlens/chainlens/chains/protoset"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/devchain/replaynode"
	"github.com/chainlens/chainlens/devchain/synthdydx"
	"github.com/chainlens/chainlens/internal/replaytest"
	"github.com/chainlens/chainlens/internal/testdb"
)

// testProfile is the mainnet profile with fewer accounts (a faster
// genesis) and liquidations frequent enough to be seen in a few thousand
// heights.
func testProfile(seed uint64) synthdydx.Profile {
	p := synthdydx.Mainnet(1, seed)
	p.Traders, p.Makers, p.LiquidationsPerMille, p.LiquidationsFrom = 3_000, 12, 60, 100
	return p
}

// TestWireIsCometBFTs: blocks and block results decode with CometBFT's
// own types and encode back to the same bytes; each block's id is the
// hash of its header, and each block names the previous one.
func TestWireIsCometBFTs(t *testing.T) {
	t.Parallel()
	c, err := synthdydx.New(testProfile(1))
	if err != nil {
		t.Fatal(err)
	}
	var prev []byte
	for h := int64(1); h <= 120; h++ {
		b, err := c.Block(h)
		if err != nil {
			t.Fatal(err)
		}
		var res coretypes.ResultBlockResults
		if err := cmtjson.Unmarshal(b.Results, &res); err != nil {
			t.Fatalf("height %d: results: %v", h, err)
		}
		again, err := cmtjson.Marshal(&res)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(again, b.Results) {
			t.Fatalf("height %d: block_results differ from CometBFT's encoding:\n%s", h, firstDifference(b.Results, again))
		}
		var blk coretypes.ResultBlock
		if err := cmtjson.Unmarshal(b.Block, &blk); err != nil {
			t.Fatalf("height %d: block: %v", h, err)
		}
		// A node writes no evidence and (at height 1) no signatures as
		// [] (as the recordings show); decoding makes them nil.
		if blk.Block.Evidence.Evidence == nil {
			blk.Block.Evidence.Evidence = cmttypes.EvidenceList{}
		}
		if blk.Block.LastCommit.Signatures == nil {
			blk.Block.LastCommit.Signatures = []cmttypes.CommitSig{}
		}
		if again, _ := cmtjson.Marshal(&blk); !bytes.Equal(again, b.Block) {
			t.Fatalf("height %d: block differs from CometBFT's encoding:\n%s", h, firstDifference(b.Block, again))
		}
		if got := blk.Block.Hash(); !bytes.Equal(got, blk.BlockID.Hash) || fmt.Sprintf("%X", got) != b.Hash {
			t.Fatalf("height %d: block id %X, header hash %X", h, blk.BlockID.Hash, got)
		}
		if err := blk.Block.ValidateBasic(); err != nil {
			t.Fatalf("height %d: %v", h, err)
		}
		if h > 1 && !bytes.Equal(blk.Block.LastBlockID.Hash, prev) {
			t.Fatalf("height %d: last_block_id %X, want %X", h, blk.Block.LastBlockID.Hash, prev)
		}
		if len(res.TxsResults) != len(blk.Block.Txs) {
			t.Fatalf("height %d: %d results for %d txs", h, len(res.TxsResults), len(blk.Block.Txs))
		}
		prev = blk.BlockID.Hash
	}
}

// chainFacts is what the checks read from the genesis: each perpetual's
// quantum conversion exponent and step, and the genesis USDC balances.
type chainFacts struct {
	qce      map[int64]int
	step     map[int64]int64
	balances map[string]*big.Int
}

func factsOf(t *testing.T, genesis []byte) chainFacts {
	var g struct {
		AppState struct {
			Bank struct {
				Balances []struct {
					Address string
					Coins   []struct{ Denom, Amount string }
				}
			}
			Clob struct {
				ClobPairs []struct {
					Meta struct {
						PerpetualID int64 `json:"perpetual_id"`
					} `json:"perpetual_clob_metadata"`
					Step int64 `json:"step_base_quantums"`
					QCE  int   `json:"quantum_conversion_exponent"`
				} `json:"clob_pairs"`
			}
		} `json:"app_state"`
	}
	if err := json.Unmarshal(genesis, &g); err != nil {
		t.Fatal(err)
	}
	f := chainFacts{qce: map[int64]int{}, step: map[int64]int64{}, balances: map[string]*big.Int{}}
	for _, p := range g.AppState.Clob.ClobPairs {
		f.qce[p.Meta.PerpetualID], f.step[p.Meta.PerpetualID] = p.QCE, p.Step
	}
	for _, b := range g.AppState.Bank.Balances {
		for _, c := range b.Coins {
			if c.Denom == synthdydx.USDC {
				v, _ := new(big.Int).SetString(c.Amount, 10)
				f.balances[b.Address] = v
			}
		}
	}
	return f
}

type result struct {
	TxsResults []struct {
		Code   uint32
		Events []rawEvent
	} `json:"txs_results"`
	Finalize []rawEvent `json:"finalize_block_events"`
}

type rawEvent struct {
	Type       string
	Attributes []struct{ Key, Value string }
}

func (e rawEvent) get(k string) string {
	for _, a := range e.Attributes {
		if a.Key == k {
			return a.Value
		}
	}
	return ""
}

func (e rawEvent) int(t *testing.T, k string) int64 {
	v, err := strconv.ParseInt(e.get(k), 10, 64)
	if err != nil {
		t.Fatalf("%s %s=%q: %v", e.Type, k, e.get(k), err)
	}
	return v
}

// truth is what the chain's own events say, summed.
type truth struct {
	fills, liquidations, deposits, withdrawals, transfers int
	takerSize, notional                                   *big.Int
}

// TestChainIsConsistentAndDeterministic replays the generated chain's
// events and operations: every fill belongs to an order of the same
// MsgProposedOperations and is priced at its subticks, fees and quote
// deltas follow the chain's rules, liquidations only reduce the liquidated
// position, USDC bank balances never go negative and the supply holds;
// the same seed gives the same chain, another seed another.
func TestChainIsConsistentAndDeterministic(t *testing.T) {
	t.Parallel()
	const heights = 1_200
	c, err := synthdydx.New(testProfile(1))
	if err != nil {
		t.Fatal(err)
	}
	tr := check(t, c, heights)
	if tr.fills < 1_000 || tr.liquidations == 0 || tr.deposits < 3_000 || tr.withdrawals == 0 || tr.transfers == 0 {
		t.Errorf("too little traffic to check: %+v", tr)
	}
	same, err := synthdydx.New(testProfile(1))
	if err != nil {
		t.Fatal(err)
	}
	other, err := synthdydx.New(testProfile(2))
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range []int64{1, 400} {
		a, _ := c.Block(h)
		b, err := same.Block(h)
		if err != nil {
			t.Fatal(err)
		}
		o, err := other.Block(h)
		if err != nil {
			t.Fatal(err)
		}
		if a.Hash != b.Hash || !bytes.Equal(a.Results, b.Results) {
			t.Errorf("height %d differs between two chains of the same seed", h)
		}
		if a.Hash == o.Hash {
			t.Errorf("height %d is the same for two seeds", h)
		}
	}
	// Reading back past the kept window regenerates the same block.
	again, err := c.Block(5)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := same.Block(5); again.Hash != b.Hash {
		t.Errorf("height 5 read again: %s, want %s", again.Hash, b.Hash)
	}
}

// check replays heights 1..n of c and returns the truth of its events.
func check(t *testing.T, c *synthdydx.Chain, n int64) truth {
	t.Helper()
	reg, err := protoset.NewShipped("cosmos", "dydx")
	if err != nil {
		t.Fatal(err)
	}
	facts := factsOf(t, c.Genesis())
	bank := facts.balances
	supply := new(big.Int)
	for _, v := range bank {
		supply.Add(supply, v)
	}
	type key struct {
		addr string
		perp int64
	}
	pos := map[key]int64{}
	tr := truth{takerSize: new(big.Int), notional: new(big.Int)}
	for h := int64(1); h <= n; h++ {
		b, err := c.Block(h)
		if err != nil {
			t.Fatal(err)
		}
		var blk struct {
			Block struct {
				Data struct{ Txs [][]byte }
			}
		}
		if err := json.Unmarshal(b.Block, &blk); err != nil {
			t.Fatal(err)
		}
		var res result
		if err := json.Unmarshal(b.Results, &res); err != nil {
			t.Fatal(err)
		}
		ops := proposedOperations(t, reg, blk.Block.Data.Txs, h)
		var events []rawEvent
		for _, r := range res.TxsResults {
			events = append(events, r.Events...)
		}
		events = append(events, res.Finalize...)
		var blockFilled int64
		for _, e := range events {
			switch e.Type {
			case "coin_spent", "coin_received":
				amount := e.get("amount")
				if len(amount) <= len(synthdydx.USDC) || amount[len(amount)-len(synthdydx.USDC):] != synthdydx.USDC {
					continue
				}
				v, ok := new(big.Int).SetString(amount[:len(amount)-len(synthdydx.USDC)], 10)
				if !ok {
					t.Fatalf("height %d: amount %q", h, amount)
				}
				who := e.get("spender") + e.get("receiver")
				if bank[who] == nil {
					bank[who] = new(big.Int)
				}
				if e.Type == "coin_spent" {
					bank[who].Sub(bank[who], v)
					if bank[who].Sign() < 0 {
						t.Fatalf("height %d: %s's USDC went negative: %s", h, who, bank[who])
					}
				} else {
					bank[who].Add(bank[who], v)
				}
			case "deposit_to_subaccount":
				tr.deposits++
			case "withdraw_from_subaccount":
				tr.withdrawals++
			case "create_transfer":
				tr.transfers++
			case "match":
				tr.fills++
				perp := e.int(t, "perpetual_id")
				takerFee, makerFee := e.int(t, "taker_order_fee_quote_quantums"), e.int(t, "maker_order_fee_quote_quantums")
				takerQ, makerQ := e.int(t, "taker_quote_balance_delta_quote_quantums"), e.int(t, "maker_quote_balance_delta_quote_quantums")
				takerP, makerP := e.int(t, "taker_perpetual_quantums_delta_base_quantums"), e.int(t, "maker_perpetual_quantums_delta_base_quantums")
				ins := e.int(t, "insurance_fund_delta_quote_quantums")
				liq := e.get("is_liquidation") == "true"
				size := abs(takerP)
				notional := abs(makerQ + makerFee)
				sign := int64(1)
				if takerP < 0 {
					sign = -1
				}
				if takerP != -makerP || size == 0 || size%facts.step[perp] != 0 {
					t.Fatalf("height %d: perpetual deltas %d and %d (step %d)", h, takerP, makerP, facts.step[perp])
				}
				wantTaker, wantMaker, wantIns := ceilPPM(notional, 500), -(notional*110)/1_000_000, int64(0)
				if liq {
					wantTaker, wantMaker, wantIns = 0, 0, notional*5_000/1_000_000
					taker := key{e.get("taker_subaccount"), perp}
					if held := pos[taker]; held == 0 || (held > 0) == (takerP > 0) || abs(takerP) > abs(held) {
						t.Fatalf("height %d: liquidation of %d from a position of %d", h, takerP, held)
					}
					tr.liquidations++
				}
				if takerFee != wantTaker || makerFee != wantMaker || ins != wantIns {
					t.Fatalf("height %d: fees %d/%d insurance %d for notional %d, want %d/%d/%d", h, takerFee, makerFee, ins, notional, wantTaker, wantMaker, wantIns)
				}
				if takerQ != -sign*notional-takerFee-ins || makerQ != sign*notional-makerFee {
					t.Fatalf("height %d: quote deltas %d/%d for notional %d", h, takerQ, makerQ, notional)
				}
				// The fill is one of the block's operations: a maker order
				// placed at a price whose notional this is.
				if !ops.consume(e.get("maker_subaccount"), perp, size, notional, facts.qce[perp]) {
					t.Fatalf("height %d: no placed maker order of %s fills %d at notional %d", h, e.get("maker_subaccount"), size, notional)
				}
				pos[key{e.get("taker_subaccount"), perp}] += takerP
				pos[key{e.get("maker_subaccount"), perp}] += makerP
				blockFilled += size
				tr.takerSize.Add(tr.takerSize, big.NewInt(size))
				tr.notional.Add(tr.notional, big.NewInt(notional))
			}
		}
		if blockFilled != ops.filled {
			t.Fatalf("height %d: matches fill %d base quantums, the operations %d", h, blockFilled, ops.filled)
		}
	}
	total := new(big.Int)
	for _, v := range bank {
		total.Add(total, v)
	}
	if total.Cmp(supply) != 0 {
		t.Errorf("USDC supply %s, want %s (no mint or burn)", total, supply)
	}
	return tr
}

// operations are a block's maker order placements and the total its
// matches fill.
type operations struct {
	makers map[string][]placed // by owner
	filled int64
}

type placed struct {
	perp               int64
	quantums, subticks int64
}

// consume finds (and removes) a placement of owner's on perp for at least
// size whose price gives notional.
func (o *operations) consume(owner string, perp, size, notional int64, qce int) bool {
	for i, p := range o.makers[owner] {
		if p.perp != perp || p.quantums < size {
			continue
		}
		n := new(big.Int).Mul(big.NewInt(p.subticks), big.NewInt(size))
		n.Quo(n, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-qce)), nil))
		if n.Int64() == notional {
			o.makers[owner] = append(o.makers[owner][:i], o.makers[owner][i+1:]...)
			return true
		}
	}
	return false
}

// proposedOperations decodes the block's MsgProposedOperations with the
// shipped descriptors: the placements' orders and the fills' total.
func proposedOperations(t *testing.T, reg *protoset.Registry, txs [][]byte, h int64) *operations {
	t.Helper()
	i := 1
	if h == 1 {
		i = 0
	}
	msg := decodeTx(t, reg, txs[i], "/dydxprotocol.clob.MsgProposedOperations")
	var v struct {
		Queue []struct {
			Placement []byte `json:"short_term_order_placement"`
			Match     *struct {
				Orders *struct {
					Fills []struct {
						Amount string `json:"fill_amount"`
					}
				} `json:"match_orders"`
				Liquidation *struct {
					Fills []struct {
						Amount string `json:"fill_amount"`
					}
				} `json:"match_perpetual_liquidation"`
			}
		} `json:"operations_queue"`
	}
	if err := json.Unmarshal(msg, &v); err != nil {
		t.Fatal(err)
	}
	ops := &operations{makers: map[string][]placed{}}
	for _, op := range v.Queue {
		switch {
		case op.Placement != nil:
			var po struct {
				Order struct {
					ID struct {
						Sub  struct{ Owner string } `json:"subaccount_id"`
						Pair int64                  `json:"clob_pair_id"`
					} `json:"order_id"`
					Side     string
					Quantums string
					Subticks string
				}
			}
			if err := json.Unmarshal(decodeTx(t, reg, op.Placement, "/dydxprotocol.clob.MsgPlaceOrder"), &po); err != nil {
				t.Fatal(err)
			}
			q, _ := strconv.ParseInt(po.Order.Quantums, 10, 64)
			s, _ := strconv.ParseInt(po.Order.Subticks, 10, 64)
			owner := po.Order.ID.Sub.Owner
			ops.makers[owner] = append(ops.makers[owner], placed{perp: po.Order.ID.Pair, quantums: q, subticks: s})
		case op.Match != nil:
			for _, m := range []*struct {
				Fills []struct {
					Amount string `json:"fill_amount"`
				}
			}{op.Match.Orders, op.Match.Liquidation} {
				if m == nil {
					continue
				}
				for _, f := range m.Fills {
					a, _ := strconv.ParseInt(f.Amount, 10, 64)
					ops.filled += a
				}
			}
		}
	}
	return ops
}

// decodeTx decodes a TxRaw of one message of type typeURL to its JSON.
func decodeTx(t *testing.T, reg *protoset.Registry, b []byte, typeURL string) []byte {
	t.Helper()
	var raw sdktx.TxRaw
	if err := raw.Unmarshal(b); err != nil {
		t.Fatalf("tx: %v", err)
	}
	var body sdktx.TxBody
	if err := body.Unmarshal(raw.BodyBytes); err != nil {
		t.Fatal(err)
	}
	if len(body.Messages) != 1 || body.Messages[0].TypeUrl != typeURL {
		t.Fatalf("tx of %v, want one %s", body.Messages, typeURL)
	}
	js, complete, err := reg.Decode(typeURL, body.Messages[0].Value)
	if err != nil || !complete {
		t.Fatalf("%s: %v (complete %v)", typeURL, err, complete)
	}
	return js
}

// firstDifference shows two encodings around the first byte they differ at.
func firstDifference(a, b []byte) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	lo := max(0, i-80)
	return fmt.Sprintf("at byte %d:\n ours %s\n want %s", i, a[lo:min(len(a), i+80)], b[lo:min(len(b), i+80)])
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}

func ceilPPM(n, ppm int64) int64 { return (n*ppm + 999_999) / 1_000_000 }

// TestIndexedFillsMatchTheChain indexes the generated chain with the real
// indexer and the dYdX adapter, served by the replay node, and compares
// the fills and subaccount transfers with the chain's own events.
func TestIndexedFillsMatchTheChain(t *testing.T) {
	t.Parallel()
	const heights = 600
	c, err := synthdydx.New(testProfile(3))
	if err != nil {
		t.Fatal(err)
	}
	tr := check(t, c, heights)
	db, _ := testdb.New(t)
	cfg := config.Chain{ID: "dydx-mainnet-1", Kind: dydx.Kind, BatchSize: 50, Concurrency: 4, Bech32Prefix: "dydx"}
	replaytest.IndexSource(t, db, c, replaynode.Options{StartHeight: heights}, cfg, dydx.NewAdapter("dydx"), heights)
	var got struct {
		Fills, Liquidations, Deposits, Withdrawals, Transfers int
		Size, Notional                                        string
	}
	if err := db.NewRaw(`SELECT
		(SELECT count(*) FROM dydx_fills WHERE role = 'taker') AS fills,
		(SELECT count(*) FROM dydx_fills WHERE role = 'taker' AND is_liquidation) AS liquidations,
		(SELECT coalesce(sum(size), 0)::text FROM dydx_fills WHERE role = 'taker') AS size,
		(SELECT coalesce(sum(notional), 0)::text FROM dydx_fills WHERE role = 'taker') AS notional,
		(SELECT count(*) FROM dydx_transfers WHERE kind = 'deposit') AS deposits,
		(SELECT count(*) FROM dydx_transfers WHERE kind = 'withdraw') AS withdrawals,
		(SELECT count(*) FROM dydx_transfers WHERE kind = 'transfer') AS transfers`).
		Scan(context.Background(), &got); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("%d %d %s %s %d %d %d", tr.fills, tr.liquidations, tr.takerSize, tr.notional, tr.deposits, tr.withdrawals, tr.transfers)
	if g := fmt.Sprintf("%d %d %s %s %d %d %d", got.Fills, got.Liquidations, got.Size, got.Notional, got.Deposits, got.Withdrawals, got.Transfers); g != want {
		t.Errorf("indexed fills liquidations size notional deposits withdrawals transfers = %s, want %s", g, want)
	}
}

// TestConfigIsAValidChain: the printed config entry parses as a dydx chain
// pointed at the node.
func TestConfigIsAValidChain(t *testing.T) {
	p := synthdydx.Mainnet(1, 1)
	cfg, err := config.Parse([]byte("database: {url: \"postgres://postgres@127.0.0.1:5432/x\"}\nchains:\n"+synthdydx.Config(p, "http://127.0.0.1:26657")), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if ch := cfg.Chains[0]; ch.ID != "dydx-mainnet-1" || ch.Kind != dydx.Kind || ch.Bech32Prefix != "dydx" || len(ch.RPC) != 1 || ch.RPC[0] != "http://127.0.0.1:26657" {
		t.Fatalf("chain %+v", ch)
	}
}
