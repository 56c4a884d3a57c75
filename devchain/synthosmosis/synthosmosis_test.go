package synthosmosis

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"testing"
	"time"

	"github.com/chainlens/chainlens/chains/osmosis"
	"github.com/chainlens/chainlens/chains/protoset"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/devchain/replaynode"
	"github.com/chainlens/chainlens/internal/replaytest"
	"github.com/chainlens/chainlens/internal/testdb"
	dexreport "github.com/chainlens/chainlens/report/dex"
	cmtjson "github.com/cometbft/cometbft/libs/json"
	coretypes "github.com/cometbft/cometbft/rpc/core/types"
	sdk "github.com/cosmos/cosmos-sdk/types"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// small is a day of the mainnet profile with fewer traders and pools, for
// tests.
func small(seed uint64) Profile {
	p := Mainnet(1, seed)
	p.Traders, p.BalancerPools, p.StableswapPools, p.CLPools = 200, 60, 4, 8
	return p
}

// TestWireIsCometBFTs: blocks and results decode with CometBFT's own types,
// each block's hash is its header's and links to the one before.
func TestWireIsCometBFTs(t *testing.T) {
	c, err := New(small(1))
	if err != nil {
		t.Fatal(err)
	}
	var prev []byte
	start := time.Now()
	for h := int64(1); h <= 400; h++ {
		b, err := c.Block(h)
		if err != nil {
			t.Fatal(err)
		}
		var blk coretypes.ResultBlock
		if err := cmtjson.Unmarshal(b.Block, &blk); err != nil {
			t.Fatalf("height %d: %v", h, err)
		}
		if got := blk.Block.Hash(); !bytes.Equal(got, blk.BlockID.Hash) || fmt.Sprintf("%X", got) != b.Hash {
			t.Fatalf("height %d: block id %X, header hash %X", h, blk.BlockID.Hash, got)
		}
		if h > 1 && !bytes.Equal(blk.Block.LastBlockID.Hash, prev) {
			t.Fatalf("height %d: last_block_id %X, want %X", h, blk.Block.LastBlockID.Hash, prev)
		}
		prev = blk.BlockID.Hash
		var res coretypes.ResultBlockResults
		if err := cmtjson.Unmarshal(b.Results, &res); err != nil {
			t.Fatalf("height %d results: %v", h, err)
		}
		if len(res.TxsResults) != len(blk.Block.Txs) {
			t.Fatalf("height %d: %d results for %d txs", h, len(res.TxsResults), len(blk.Block.Txs))
		}
	}
	t.Logf("400 blocks in %s", time.Since(start))
	var g map[string]any
	if err := json.Unmarshal(c.Genesis(), &g); err != nil {
		t.Fatal(err)
	}
}

// TestIndexedPoolsMatchTheChain indexes the generated chain with the real
// indexer and the Osmosis adapter, served by the replay node, and compares
// what it wrote with the generator's own state: every pool created, every
// swap hop, every position, and each pool address's bank balance (from
// the indexed transfers) equal to the pool's reserves. It also replays the
// chain's coin events over the genesis balances: no balance goes negative.
func TestIndexedPoolsMatchTheChain(t *testing.T) {
	t.Parallel()
	const heights = 500
	c, err := New(small(3))
	if err != nil {
		t.Fatal(err)
	}
	swaps, creates, withdraws := replayBank(t, c, heights)
	db, _ := testdb.New(t)
	cfg := config.Chain{ID: "osmosis-1", Kind: osmosis.Kind, BatchSize: 50, Concurrency: 4, Bech32Prefix: "osmo"}
	replaytest.IndexSource(t, db, c, replaynode.Options{StartHeight: heights}, cfg, osmosis.NewAdapter("osmo"), heights)
	ctx := context.Background()
	var got struct{ Pools, Swaps, Creates, Withdraws int }
	if err := db.NewRaw(`SELECT (SELECT count(*) FROM osmosis_pools) AS pools, (SELECT count(*) FROM osmosis_swaps) AS swaps,
		(SELECT count(*) FROM osmosis_cl_positions WHERE kind = 'create') AS creates,
		(SELECT count(*) FROM osmosis_cl_positions WHERE kind = 'withdraw') AS withdraws`).Scan(ctx, &got); err != nil {
		t.Fatal(err)
	}
	err = c.At(heights, func(g *generator) error {
		if want := fmt.Sprintf("%d %d %d %d", g.st.created, swaps, creates, withdraws); fmt.Sprintf("%d %d %d %d", got.Pools, got.Swaps, got.Creates, got.Withdraws) != want {
			t.Errorf("indexed pools swaps creates withdraws = %+v, want %s", got, want)
		}
		t.Logf("%d pools, %d swaps, %d positions created, %d withdrawn", g.st.created, swaps, creates, withdraws)
		if swaps < 100 || creates < 3 || withdraws < 1 {
			t.Errorf("%d swaps, %d positions created, %d withdrawn: too few to check", swaps, creates, withdraws)
		}
		for _, pl := range g.st.pools[:g.st.created] {
			var rows []struct {
				Denom string
				Sum   string
			}
			if err := db.NewRaw("SELECT denom, sum(delta)::text AS sum FROM balance_changes WHERE address = ? GROUP BY denom ORDER BY denom", pl.addr).Scan(ctx, &rows); err != nil {
				return err
			}
			indexed := map[string]string{}
			for _, r := range rows {
				indexed[r.Denom] = r.Sum
			}
			for _, d := range pl.denoms {
				if want := strconv.FormatInt(pl.reserve[d], 10); indexed[d] != want {
					t.Errorf("pool %d (%s): indexed %s balance %s, reserves %s", pl.id, pl.kind, d, indexed[d], want)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// replayBank applies every coin_spent and coin_received of heights 1..n to
// the genesis balances, failing on a negative one, and counts the swap
// hops and the positions created and withdrawn.
func replayBank(t *testing.T, c *Chain, n int64) (swaps, creates, withdraws int) {
	t.Helper()
	var gen struct {
		AppState struct {
			Bank struct {
				Balances []struct {
					Address string
					Coins   []struct{ Denom, Amount string }
				}
			}
		} `json:"app_state"`
	}
	if err := json.Unmarshal(c.Genesis(), &gen); err != nil {
		t.Fatal(err)
	}
	bank := map[[2]string]*big.Int{}
	for _, b := range gen.AppState.Bank.Balances {
		for _, co := range b.Coins {
			v, _ := new(big.Int).SetString(co.Amount, 10)
			bank[[2]string{b.Address, co.Denom}] = v
		}
	}
	type attr struct{ Key, Value string }
	type event struct {
		Type       string
		Attributes []attr
	}
	for h := int64(1); h <= n; h++ {
		b, err := c.Block(h)
		if err != nil {
			t.Fatal(err)
		}
		var res struct {
			TxsResults []struct{ Events []event } `json:"txs_results"`
			Finalize   []event                    `json:"finalize_block_events"`
		}
		if err := json.Unmarshal(b.Results, &res); err != nil {
			t.Fatal(err)
		}
		events := res.Finalize
		for _, r := range res.TxsResults {
			events = append(events, r.Events...)
		}
		for _, e := range events {
			get := func(k string) string {
				for _, a := range e.Attributes {
					if a.Key == k {
						return a.Value
					}
				}
				return ""
			}
			switch e.Type {
			case "token_swapped":
				swaps++
			case "create_position":
				creates++
			case "withdraw_position":
				withdraws++
			case "coin_spent", "coin_received":
				coins, err := sdk.ParseCoinsNormalized(get("amount"))
				if err != nil {
					t.Fatalf("height %d: %s amount %q: %v", h, e.Type, get("amount"), err)
				}
				who := get("spender") + get("receiver")
				for _, co := range coins {
					k := [2]string{who, co.Denom}
					if bank[k] == nil {
						bank[k] = new(big.Int)
					}
					if e.Type == "coin_spent" {
						bank[k].Sub(bank[k], co.Amount.BigInt())
						if bank[k].Sign() < 0 {
							t.Fatalf("height %d: %s's %s went negative: %s", h, who, co.Denom, bank[k])
						}
					} else {
						bank[k].Add(bank[k], co.Amount.BigInt())
					}
				}
			}
		}
	}
	return swaps, creates, withdraws
}

// TestConfigIsAValidChain: the printed config entry parses as an osmosis
// chain pointed at the node, with USDC as the dex's USD anchor.
func TestConfigIsAValidChain(t *testing.T) {
	p := Mainnet(1, 1)
	cfg, err := config.Parse([]byte("database: {url: \"postgres://postgres@127.0.0.1:5432/x\"}\nchains:\n"+Config(p, "http://127.0.0.1:26657")), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	ch := cfg.Chains[0]
	if ch.ID != "osmosis-1" || ch.Kind != osmosis.Kind || ch.Bech32Prefix != "osmo" || len(ch.RPC) != 1 || len(ch.Assets) != len(Assets) {
		t.Fatalf("chain %+v", ch)
	}
	if m := dexreport.NewMarket(ch); m.Anchor != Assets[0].denom {
		t.Errorf("anchor %q, want USDC %q", m.Anchor, Assets[0].denom)
	}
}

// TestQueriesAnswerTheState: at a height, AllPools (decoded with
// Osmosis's own types) lists every pool created with the reserves that
// DenomOwners gives for the pool's address, and the positions of the
// concentrated-liquidity store add up, over those in range, to each
// pool's current tick liquidity.
func TestQueriesAnswerTheState(t *testing.T) {
	const height = 300
	c, err := New(small(5))
	if err != nil {
		t.Fatal(err)
	}
	reg, err := protoset.NewShipped("cosmos", "osmosis")
	if err != nil {
		t.Fatal(err)
	}
	decode := func(typeURL string, b []byte) map[string]any {
		t.Helper()
		mt, err := reg.FindMessageByURL(typeURL)
		if err != nil {
			t.Fatal(err)
		}
		m := mt.New().Interface()
		if err := proto.Unmarshal(b, m); err != nil {
			t.Fatalf("%s: %v", typeURL, err)
		}
		js, err := protojson.MarshalOptions{Resolver: reg, UseProtoNames: true}.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var out map[string]any
		if err := json.Unmarshal(js, &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	res, err := c.ABCIQuery(pathAllPools, nil, height)
	if err != nil {
		t.Fatal(err)
	}
	pools, _ := decode("/osmosis.poolmanager.v1beta1.AllPoolsResponse", res)["pools"].([]any)
	p := small(5)
	if len(pools) != p.BalancerPools+p.StableswapPools+p.CLPools {
		t.Fatalf("%d pools, want all %d created", len(pools), p.BalancerPools+p.StableswapPools+p.CLPools)
	}
	// balanceOf asks DenomOwners, page by page (limit 7), for addr's denom.
	balanceOf := func(addr, denom string) string {
		var key []byte
		for {
			var page []byte
			page = protowire.AppendTag(page, 1, protowire.BytesType)
			page = protowire.AppendBytes(page, key)
			page = protowire.AppendTag(page, 3, protowire.VarintType)
			page = protowire.AppendVarint(page, 7)
			var req []byte
			req = protowire.AppendTag(req, 1, protowire.BytesType)
			req = protowire.AppendString(req, denom)
			req = protowire.AppendTag(req, 2, protowire.BytesType)
			req = protowire.AppendBytes(req, page)
			res, err := c.ABCIQuery(pathDenomOwners, req, height)
			if err != nil {
				t.Fatal(err)
			}
			r := decode("/cosmos.bank.v1beta1.QueryDenomOwnersResponse", res)
			owners, _ := r["denom_owners"].([]any)
			for _, o := range owners {
				o := o.(map[string]any)
				if o["address"] == addr {
					return o["balance"].(map[string]any)["amount"].(string)
				}
			}
			next, _ := r["pagination"].(map[string]any)["next_key"].(string)
			if next == "" {
				return "0"
			}
			key, _ = base64.StdEncoding.DecodeString(next)
		}
	}
	clLiquidity := map[string]string{}
	for _, x := range pools {
		pl := x.(map[string]any)
		switch pl["@type"] {
		case "/osmosis.gamm.v1beta1.Pool":
			for _, a := range pl["pool_assets"].([]any) {
				tok := a.(map[string]any)["token"].(map[string]any)
				if got := balanceOf(pl["address"].(string), tok["denom"].(string)); got != tok["amount"] {
					t.Errorf("pool %s: %s reserve %s, bank %s", pl["id"], tok["denom"], tok["amount"], got)
				}
			}
		case "/osmosis.gamm.poolmodels.stableswap.v1beta1.Pool":
			for _, a := range pl["pool_liquidity"].([]any) {
				tok := a.(map[string]any)
				if got := balanceOf(pl["address"].(string), tok["denom"].(string)); got != tok["amount"] {
					t.Errorf("pool %s: %s reserve %s, bank %s", pl["id"], tok["denom"], tok["amount"], got)
				}
			}
		case "/osmosis.concentratedliquidity.v1beta1.Pool":
			clLiquidity[pl["id"].(string)] = pl["current_tick_liquidity"].(string)
			tick, _ := strconv.ParseInt(pl["current_tick"].(string), 10, 64)
			clLiquidity[pl["id"].(string)+"/tick"] = strconv.FormatInt(tick, 10)
		default:
			t.Errorf("pool type %v", pl["@type"])
		}
	}
	res, err = c.ABCIQuery(pathCLSubspace, []byte{positionIDPrefix}, height)
	if err != nil {
		t.Fatal(err)
	}
	inRange := map[string]*big.Int{} // Dec integers, as the store writes them
	n := 0
	for len(res) > 0 {
		_, _, tn := protowire.ConsumeTag(res)
		pair, pn := protowire.ConsumeBytes(res[tn:])
		res = res[tn+pn:]
		_, _, kn := protowire.ConsumeTag(pair)
		_, vn := protowire.ConsumeBytes(pair[kn:])
		_, _, vtn := protowire.ConsumeTag(pair[kn+vn:])
		value, _ := protowire.ConsumeBytes(pair[kn+vn+vtn:])
		pos := decode("/osmosis.concentratedliquidity.v1beta1.Position", value)
		n++
		pool := pos["pool_id"].(string)
		tick, _ := strconv.ParseInt(clLiquidity[pool+"/tick"], 10, 64)
		lower, _ := strconv.ParseInt(pos["lower_tick"].(string), 10, 64)
		upper, _ := strconv.ParseInt(pos["upper_tick"].(string), 10, 64)
		if lower <= tick && tick < upper {
			l, ok := new(big.Int).SetString(pos["liquidity"].(string), 10)
			if !ok {
				t.Fatalf("position liquidity %q is not gogoproto's Dec integer", pos["liquidity"])
			}
			if v, ok := inRange[pool]; ok {
				l.Add(l, v)
			}
			inRange[pool] = l
		}
	}
	if n < p.CLPools {
		t.Fatalf("%d positions, want at least the %d full-range ones", n, p.CLPools)
	}
	for pool, l := range inRange {
		if want := clLiquidity[pool]; l.String() != want {
			t.Errorf("pool %s: positions in range hold %s, current tick liquidity %s", pool, l, want)
		}
	}
}
