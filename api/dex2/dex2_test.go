package dex2_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/apitest"
	"github.com/chainlens/chainlens/internal/localnet"
	"github.com/chainlens/chainlens/internal/neutrontest"
	"github.com/chainlens/chainlens/internal/testdb"
)

// lastBlock is the time of the recording's last block (193).
var lastBlock = time.Date(2026, 11, 21, 22, 3, 41, 189774229, time.UTC)

func indexed(t *testing.T) (apitest.Server, *bun.DB) {
	t.Helper()
	db, _ := testdb.New(t)
	ch := localnet.Neutron.Index(t, db)
	cfg := &config.Config{Chains: []config.Chain{ch}}
	apitest.RunJobs(t, db, cfg)
	cfg.API = apitest.DefaultAPI(t, true)
	srv := apitest.Serve(t, db, cfg, lastBlock.Add(time.Minute))
	return srv, db
}

type envelope[T any] struct {
	Data []T `json:"data"`
	Meta []struct {
		Name  string `json:"name"`
		Type  string `json:"type"`
		Units string `json:"units"`
	} `json:"meta"`
	Height string `json:"height"`
	Time   string `json:"time"`
}

type trade struct {
	Time   string `json:"time"`
	Height string `json:"height"`
	Tx     string `json:"tx"`
	Buy    string `json:"buy"`
	Sell   string `json:"sell"`
	BuyAt  string `json:"buy_at"`
	SellAt string `json:"sell_at"`
}

// TestDex2OnRecordedLocalnet checks the group over HTTP against the
// recorded Neutron localnet: liquidity against the node's own reserves,
// fills against the dex's own message events, prices against the amounts.
func TestDex2OnRecordedLocalnet(t *testing.T) {
	t.Parallel()
	srv, db := indexed(t)
	ctx := context.Background()

	var truthPairs struct {
		Pairs map[string]json.RawMessage `json:"pairs"`
	}
	localnet.Neutron.Truth(t, "dex_pairs_liquidity.json", &truthPairs)
	var pairs envelope[map[string]string]
	srv.GetJSON(t, "/dex/pairs", &pairs)
	if pairs.Height != "193" || len(pairs.Data) != len(truthPairs.Pairs) || len(pairs.Meta) != 6 {
		t.Fatalf("pairs: %+v", pairs)
	}
	for _, p := range pairs.Data {
		if _, ok := truthPairs.Pairs[p["token_0"]+"<>"+p["token_1"]]; !ok {
			t.Errorf("pair %v is not one of the node's", p)
		}
		if atoi(t, p["created_at_height"]) > atoi(t, p["updated_at_height"]) {
			t.Errorf("pair %v updated before created", p)
		}
	}

	t.Run("liquidity", func(t *testing.T) {
		type side struct{ r0, r1 *big.Int }
		want := map[string]map[int64]*side{} // "d0/d1" → index
		add := func(m map[int64]*side, idx int64, first bool, v string) {
			if m[idx] == nil {
				m[idx] = &side{}
			}
			n, _ := new(big.Int).SetString(v, 10)
			p := &m[idx].r1
			if first {
				p = &m[idx].r0
			}
			if *p == nil {
				*p = new(big.Int)
			}
			(*p).Add(*p, n)
		}
		for _, r := range neutrontest.Reserves(t) {
			for _, o := range [][2]string{{r.Token0, r.Token1}, {r.Token1, r.Token0}} {
				k := o[0] + "/" + o[1]
				if want[k] == nil {
					want[k] = map[int64]*side{}
				}
				if r.Maker == o[0] {
					add(want[k], r.Tick, true, r.Reserves)
				} else {
					add(want[k], -r.Tick, false, r.Reserves)
				}
			}
		}
		if len(want) < 4 {
			t.Fatalf("truth has reserves in %d orientations", len(want))
		}
		for k, ticks := range want {
			d := strings.Split(k, "/")
			var got envelope[struct {
				Index string  `json:"index"`
				R0    *string `json:"reserves_0"`
				R1    *string `json:"reserves_1"`
			}]
			srv.GetJSON(t, "/dex/liquidity/"+url.PathEscape(d[0])+"/"+url.PathEscape(d[1]), &got)
			if got.Height != "193" || got.Time != "2026-11-21T22:03:41.189774Z" /* Postgres keeps µs */ {
				t.Errorf("%s: height %s time %s", k, got.Height, got.Time)
			}
			if len(got.Data) != len(ticks) {
				t.Errorf("%s: %d ticks, want %d", k, len(got.Data), len(ticks))
			}
			for i, row := range got.Data {
				idx, _ := strconv.ParseInt(row.Index, 10, 64)
				w := ticks[idx]
				str := func(p *string) string {
					if p == nil {
						return "<nil>"
					}
					return *p
				}
				num := func(n *big.Int) string {
					if n == nil {
						return "<nil>"
					}
					return n.String()
				}
				if w == nil || str(row.R0) != num(w.r0) || str(row.R1) != num(w.r1) {
					t.Errorf("%s index %d: %s / %s, want %+v", k, idx, str(row.R0), str(row.R1), w)
				}
				if i > 0 && atoi(t, row.Index) <= atoi(t, got.Data[i-1].Index) {
					t.Errorf("%s: not ascending", k)
				}
			}
		}
	})

	// Every successful swap message: the chain's own record of what the
	// taker paid and got, against the fills the trades endpoint lists.
	var msgs []struct {
		TxHash string          `bun:"tx_hash"`
		Attrs  json.RawMessage `bun:"attributes"`
	}
	if err := db.NewRaw(`SELECT t.hash AS tx_hash, e.attributes FROM events e
		JOIN txs t ON t.chain_id = e.chain_id AND t.height = e.height AND t.tx_index = e.tx_index
		WHERE e.chain_id = ? AND e.type = 'message' AND e.attributes @> '[{"key":"module","value":"dex"}]'
		AND (e.attributes @> '[{"key":"action","value":"PlaceLimitOrder"}]' OR e.attributes @> '[{"key":"action","value":"MultihopSwap"}]')`,
		localnet.Neutron.ChainID).Scan(ctx, &msgs); err != nil {
		t.Fatal(err)
	}
	if len(msgs) < 10 {
		t.Fatalf("%d swap messages", len(msgs))
	}
	t.Run("trades", func(t *testing.T) {
		type key struct{ tx, pair string }
		paid := map[key]*big.Int{} // what single-hop takers paid, by tx and "in/out" denoms
		for _, m := range msgs {
			a := map[string]string{}
			var list []struct{ Key, Value string }
			if err := json.Unmarshal(m.Attrs, &list); err != nil {
				t.Fatal(err)
			}
			for _, kv := range list {
				a[kv.Key] = kv.Value
			}
			in, out, amount := a["TokenIn"], a["TokenOut"], a["SwapAmountIn"]
			if a["action"] == "MultihopSwap" {
				if strings.Count(a["Route"], ",") != 1 {
					continue // several hops: each hop's amounts are not in the message
				}
				amount = a["AmountIn"]
			}
			if amount == "" || amount == "0" {
				continue
			}
			n, _ := new(big.Int).SetString(amount, 10)
			k := key{strings.ToLower(m.TxHash), in + "/" + out}
			if paid[k] == nil {
				paid[k] = new(big.Int)
			}
			paid[k].Add(paid[k], n)
		}
		got := map[key]*big.Int{}
		fills := map[key]int64{}
		checked := 0
		for _, p := range pairs.Data {
			for _, o := range [][2]string{{p["token_0"], p["token_1"]}, {p["token_1"], p["token_0"]}} {
				var tr envelope[trade]
				srv.GetJSON(t, "/dex/trades/"+url.PathEscape(o[0])+"/"+url.PathEscape(o[1])+"?limit=1000&show_trades_above_amount=0", &tr)
				for i, f := range tr.Data {
					if i > 0 && atoi(t, f.Height) > atoi(t, tr.Data[i-1].Height) {
						t.Errorf("trades not newest first")
					}
					if (f.Buy == "") == (f.Sell == "") || (f.Buy == "") != (f.BuyAt == "") || (f.Sell == "") != (f.SellAt == "") {
						t.Errorf("trade %+v: one of buy or sell", f)
					}
					if f.Sell != "" { // the taker sold o[0] for o[1]
						k := key{strings.ToLower(f.Tx), o[0] + "/" + o[1]}
						if got[k] == nil {
							got[k] = new(big.Int)
						}
						n, _ := new(big.Int).SetString(f.Sell, 10)
						got[k].Add(got[k], n)
						fills[k]++
					}
				}
			}
		}
		// Each TickUpdate's integer amount is its exact (Dec) amount rounded
		// down, the message's the rounded sum: n fills may add up to n-1
		// base units less.
		for k, w := range paid {
			g := got[k]
			if g == nil {
				t.Errorf("tx %s %s: no fills, the message says %s", k.tx, k.pair, w)
				continue
			}
			short := new(big.Int).Sub(w, g)
			if short.Sign() < 0 || short.Cmp(big.NewInt(max(fills[k]-1, 0))) > 0 {
				t.Errorf("tx %s %s: %d fills sold %v, the message says %s", k.tx, k.pair, fills[k], g, w)
			}
			checked++
		}
		if checked < 5 {
			t.Errorf("only %d swaps checked", checked)
		}
	})

	t.Run("price follows the amounts", func(t *testing.T) {
		// For every sizeable fill, denom1 paid per denom0 is 1.0001^index.
		var fills []struct {
			Maker string `bun:"maker_denom"`
			T0    string `bun:"token0"`
			T1    string `bun:"token1"`
			Tick  int64  `bun:"tick_index"`
			In    string `bun:"taker_in"`
			Out   string `bun:"taker_out"`
		}
		if err := db.NewRaw(`SELECT maker_denom, token0, token1, tick_index, taker_in::text AS taker_in, taker_out::text AS taker_out
			FROM dex2_fills WHERE taker_out >= 1000000`).Scan(ctx, &fills); err != nil {
			t.Fatal(err)
		}
		if len(fills) < 5 {
			t.Fatalf("%d sizeable fills", len(fills))
		}
		for _, f := range fills {
			in, _ := strconv.ParseFloat(f.In, 64)
			out, _ := strconv.ParseFloat(f.Out, 64)
			// Orientation (token0, token1): the taker got `out` of the maker denom.
			price := in / out // of the maker denom, in the other one
			idx := float64(f.Tick)
			if f.Maker == f.T1 {
				price, idx = out/in, -idx // of token0 in token1
			}
			if d := math.Log(price)/math.Log(1.0001) - idx; math.Abs(d) > 1 {
				t.Errorf("fill %+v: price %g is tick %.2f, index %g", f, price, math.Log(price)/math.Log(1.0001), idx)
			}
		}
		var p envelope[struct {
			Time                   string
			Open, High, Low, Close float64
		}]
		srv.GetJSON(t, "/dex/price/uibcatom/untrn?period=minute&show_trades_above_value=0", &p)
		var tr envelope[trade]
		srv.GetJSON(t, "/dex/trades/uibcatom/untrn?limit=1000&show_trades_above_amount=0", &tr)
		if len(p.Data) == 0 || len(tr.Data) == 0 {
			t.Fatalf("no prices (%d) or trades (%d)", len(p.Data), len(tr.Data))
		}
		// The last bucket's close is the newest trade's index.
		newest := tr.Data[0].BuyAt + tr.Data[0].SellAt
		if last := p.Data[len(p.Data)-1]; fmt.Sprint(last.Close) != newest || last.Low > last.High {
			t.Errorf("last bucket %+v, newest trade at %s", last, newest)
		}
		var rev envelope[struct {
			Time                   string
			Open, High, Low, Close float64
		}]
		srv.GetJSON(t, "/dex/price/untrn/uibcatom?period=minute&show_trades_above_value=0", &rev)
		if len(rev.Data) != len(p.Data) {
			t.Fatalf("reversed pair: %d buckets, %d", len(rev.Data), len(p.Data))
		}
		for i := range p.Data {
			if rev.Data[i].Open != -p.Data[i].Open || rev.Data[i].High != -p.Data[i].Low || rev.Data[i].Low != -p.Data[i].High ||
				rev.Data[i].Close != -p.Data[i].Close {
				t.Errorf("reversed pair bucket %d: %+v vs %+v", i, rev.Data[i], p.Data[i])
			}
		}
	})

	t.Run("volume", func(t *testing.T) {
		// USD volume from the decoder's own rows: a fill with a USDC side is
		// worth that side; another is valued at a side's price from its last
		// fill against USDC in an earlier block (taker's input side first).
		var fills []struct {
			Height  int64  `bun:"height"`
			Token0  string `bun:"token0"`
			Token1  string `bun:"token1"`
			Maker   string `bun:"maker_denom"`
			SwapIn  string `bun:"swap_in"`
			SwapOut string `bun:"swap_out"`
		}
		if err := db.NewRaw(`SELECT height, token0, token1, maker_denom, swap_in::text, swap_out::text FROM neutron_dex_tick_updates
			WHERE swap_in IS NOT NULL AND swap_out IS NOT NULL AND (swap_in > 0 OR swap_out > 0)
			ORDER BY height, tx_index, event_index`).Scan(context.Background(), &fills); err != nil {
			t.Fatal(err)
		}
		pegged := map[string]bool{"uusdc": true, "uibcusdc": true}
		rat := func(s string) *big.Rat { r, _ := new(big.Rat).SetString(s); return r }
		usdc := func(s string) *big.Rat { return new(big.Rat).Quo(rat(s), big.NewRat(1_000_000, 1)) }
		price, next := map[string]*big.Rat{}, map[string]*big.Rat{} // before this block; set in this block
		want, derived := new(big.Rat), 0
		for i, f := range fills {
			if i > 0 && f.Height != fills[i-1].Height {
				for d, p := range next {
					price[d] = p
				}
				clear(next)
			}
			in := f.Token0
			if f.Maker == f.Token0 {
				in = f.Token1
			}
			var v *big.Rat
			switch {
			case pegged[in]:
				v = usdc(f.SwapIn)
			case pegged[f.Maker]:
				v = usdc(f.SwapOut)
			case price[in] != nil:
				v, derived = new(big.Rat).Mul(rat(f.SwapIn), price[in]), derived+1
			case price[f.Maker] != nil:
				v, derived = new(big.Rat).Mul(rat(f.SwapOut), price[f.Maker]), derived+1
			}
			if v == nil {
				continue
			}
			want.Add(want, v)
			// A fill of a denom against USDC prices that denom.
			if pegged[in] != pegged[f.Maker] {
				x, amount := in, rat(f.SwapIn)
				if pegged[in] {
					x, amount = f.Maker, rat(f.SwapOut)
				}
				if amount.Sign() > 0 {
					next[x] = new(big.Rat).Quo(v, amount)
				}
			}
		}
		if derived == 0 {
			t.Fatal("no fill valued through a USD pair: the recording no longer covers it")
		}
		var days []struct {
			Day   string      `json:"day"`
			Value json.Number `json:"value"`
		}
		srv.GetJSON(t, "/trading/volume", &days)
		if len(days) != 1 || days[0].Day != "2026-11-21" {
			t.Fatalf("days %+v", days)
		}
		// A price is a division: Postgres numeric rounds it (20 digits and
		// more), the expectation is exact.
		got, _ := new(big.Rat).SetString(string(days[0].Value))
		diff := new(big.Rat).Sub(got, want)
		if diff.Abs(diff).Cmp(big.NewRat(1, 1_000_000_000_000)) > 0 || want.Sign() == 0 {
			t.Errorf("USD volume %s, want %s", days[0].Value, want.FloatString(18))
		}
		// A day belongs to the range when its start is in it.
		srv.GetJSON(t, "/trading/volume?start_date=2026-11-21T01:00:00Z", &days)
		if len(days) != 0 {
			t.Errorf("a range starting after midnight holds the day: %+v", days)
		}
	})

	t.Run("swap volume", func(t *testing.T) {
		var tr envelope[trade]
		srv.GetJSON(t, "/dex/trades/uibcatom/untrn?limit=1000&show_trades_above_amount=0", &tr)
		total := new(big.Int)
		for _, f := range tr.Data {
			n, _ := new(big.Int).SetString(f.Buy+f.Sell, 10)
			total.Add(total, n)
		}
		var v envelope[struct{ Time, Volume string }]
		srv.GetJSON(t, "/dex/swap-volume/uibcatom/untrn", &v)
		if len(v.Data) != 1 || v.Data[0].Volume != total.String() || v.Meta[1].Units != "uibcatom" {
			t.Errorf("rolling 24 h: %+v, want %s", v, total)
		}
		var byMin envelope[struct{ Time, Volume string }]
		srv.GetJSON(t, "/dex/swap-volume/uibcatom/untrn?period=minute", &byMin)
		sum := new(big.Int)
		times := []string{}
		for _, r := range byMin.Data {
			n, _ := new(big.Int).SetString(r.Volume, 10)
			sum.Add(sum, n)
			times = append(times, r.Time)
		}
		if sum.Cmp(total) != 0 || !sort.StringsAreSorted(times) || len(times) < 2 {
			t.Errorf("per minute: %v sums to %s, want %s", times, sum, total)
		}
	})
}

// TestDex2Errors: bad input is 400, a chain that is not configured or a
// range after the data 503.
func TestDex2Errors(t *testing.T) {
	t.Parallel()
	srv, _ := indexed(t)
	for _, c := range []struct {
		path   string
		status int
	}{
		{"/dex/liquidity/untrn/untrn", 400},
		{"/dex/price/uibcatom/untrn?period=year", 400},
		{"/dex/price/uibcatom/untrn?from=200&to=100", 400},
		{"/dex/trades/uibcatom/untrn?limit=0", 400},
		{"/dex/trades/uibcatom/untrn?from=abc", 400},
		{"/dex/liquidity/unknown/untrn", 200},
		{"/dex/liquidity/ibc%2F27394FB092D2ECCD56123C74F36E4C1F926001CEADA9CA97EA622B25F41E5EB2/untrn", 200},
		{"/trading/volume?start_date=2026-11-22&end_date=2026-11-21", 400},
		// A range that starts after the last aggregated block is not indexed yet.
		{fmt.Sprintf("/dex/price/uibcatom/untrn?from=%d&to=%d", lastBlock.Unix()+1, lastBlock.Unix()+60), 503},
		{fmt.Sprintf("/dex/swap-volume/uibcatom/untrn?from=%d", lastBlock.Unix()+1), 503},
		{fmt.Sprintf("/dex/trades/uibcatom/untrn?from=%d", lastBlock.Unix()+1), 503},
		{fmt.Sprintf("/dex/trades/uibcatom/untrn?from=%d", lastBlock.Unix()), 200},
	} {
		resp, body := srv.Get(t, c.path)
		if resp.StatusCode != c.status {
			t.Errorf("%s: %d %s, want %d", c.path, resp.StatusCode, body, c.status)
		}
	}
	db, _ := testdb.New(t)
	cfg := &config.Config{API: apitest.DefaultAPI(t, true)}
	s := apitest.Serve(t, db, cfg, time.Now())
	empty := s
	if resp, body := empty.Get(t, "/dex/pairs"); resp.StatusCode != 503 {
		t.Errorf("no neutron chain: %d %s", resp.StatusCode, body)
	}
}

func atoi(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("not an integer: %q", s)
	}
	return n
}
