package stablecoins_test

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/core/types"
	"github.com/uptrace/bun"

	chainevm "github.com/chainlens/chainlens/chains/evm"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/apitest"
	"github.com/chainlens/chainlens/internal/evmtest"
)

// lastBlock is the time of the recording's last block, 311.
var lastBlock = time.Date(2026, 11, 21, 22, 19, 36, 0, time.UTC)

// indexed indexes the recorded devnet through the replay node, runs the
// aggregator jobs and serves the API with the clock at now.
func indexed(t *testing.T, now time.Time) (apitest.Server, *bun.DB, *config.Config) {
	t.Helper()
	db, ch := evmtest.Index(t)
	cfg := &config.Config{Chains: []config.Chain{ch}}
	apitest.RunJobs(t, db, cfg)
	cfg.API = apitest.DefaultAPI(t, true)
	srv := apitest.Serve(t, db, cfg, now)
	return srv, db, cfg
}

// dec renders base units of a token as the API's USD number (price 1).
func dec(base *big.Int, decimals int) string {
	s := new(big.Rat).SetFrac(base, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil)).FloatString(decimals)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

func ratOf(t *testing.T, s string) *big.Rat {
	t.Helper()
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		t.Fatalf("not a decimal: %q", s)
	}
	return r
}

func sameNumber(t *testing.T, what string, got json.Number, want string) {
	t.Helper()
	if ratOf(t, string(got)).Cmp(ratOf(t, want)) != 0 {
		t.Errorf("%s = %s, want %s", what, got, want)
	}
}

func bigOf(s string) *big.Int { n, _ := new(big.Int).SetString(s, 10); return n }

var decimals = map[string]int{"USDC": 6, "USDT": 6, "DAI": 18}

func readTruth(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(evmtest.Dir(), name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// TestStablecoinsOnRecordedDevnet checks every endpoint of the group over
// HTTP against the recording's own ground truth (truth/*.json, made from
// the generator's action log and cross-checked with eth_call).
func TestStablecoinsOnRecordedDevnet(t *testing.T) {
	t.Parallel()
	now := lastBlock.Add(24 * time.Second) // 22:20:00
	srv, _, _ := indexed(t, now)

	var summary struct {
		Tokens map[string]struct {
			TransferVolume string `json:"transferVolume"`
		} `json:"tokens"`
	}
	readTruth(t, "summary.json", &summary)
	t.Run("volume-per-token", func(t *testing.T) {
		var got []struct {
			Name   string      `json:"token_name"`
			Symbol string      `json:"token_symbol"`
			Total  json.Number `json:"total_amount"`
		}
		resp := srv.GetJSON(t, "/stablecoins/volume-per-token?time_range=10m", &got)
		if h := resp.Header.Get("X-Data-Height"); h != "311" {
			t.Errorf("X-Data-Height %q", h)
		}
		want := []struct{ name, symbol string }{{"Tether USD", "USDT"}, {"USD Coin", "USDC"}, {"Dai Stablecoin", "DAI"}}
		if len(got) != len(want) {
			t.Fatalf("got %+v", got)
		}
		for i, w := range want {
			if got[i].Name != w.name || got[i].Symbol != w.symbol {
				t.Errorf("row %d = %+v, want %s", i, got[i], w.symbol)
			}
			sameNumber(t, w.symbol+" volume", got[i].Total, dec(bigOf(summary.Tokens[w.symbol].TransferVolume), decimals[w.symbol]))
		}
		var one []map[string]any
		srv.GetJSON(t, "/stablecoins/volume-per-token?time_range=10m&token_symbol=DAI&chain_id=binance-smart-chain-56", &one)
		if len(one) != 1 || one[0]["token_symbol"] != "DAI" {
			t.Errorf("DAI only: %v", one)
		}
		srv.GetJSON(t, "/stablecoins/volume-per-token?time_range=10m&token_symbol=FRAX", &one)
		if len(one) != 0 {
			t.Errorf("FRAX is not configured: %v", one)
		}
	})

	var series struct {
		Buckets []struct {
			Start  int64 `json:"bucketStart"`
			Tokens map[string]struct {
				Minted        string `json:"minted"`
				Burned        string `json:"burned"`
				ActiveSenders int64  `json:"activeSenders"`
			} `json:"tokens"`
		} `json:"buckets"`
	}
	readTruth(t, "timeseries.json", &series)
	t.Run("issuing per minute", func(t *testing.T) {
		var got []struct {
			Labels string      `json:"labels"`
			Symbol string      `json:"token_symbol"`
			Minted json.Number `json:"minted"`
			Burned json.Number `json:"burned"`
		}
		srv.GetJSON(t, "/stablecoins/issuing/over-time?time_range=10m&time_agg=1m", &got)
		// Every bucket of the window up to the last aggregated block has a
		// row for each token, in symbol order, 0 when nothing moved.
		type mb struct{ minted, burned string }
		truth := map[string]mb{}
		nonzero := 0
		for _, b := range series.Buckets {
			l := time.Unix(b.Start, 0).UTC().Format(time.DateTime)
			for sym, w := range b.Tokens {
				truth[l+" "+sym] = mb{w.Minted, w.Burned}
				if w.Minted != "0" || w.Burned != "0" {
					nonzero++
				}
			}
		}
		if len(got) == 0 || len(got)%3 != 0 {
			t.Fatalf("%d rows: not one per bucket and token", len(got))
		}
		seen := 0
		for i, g := range got {
			if sym := []string{"DAI", "USDC", "USDT"}[i%3]; g.Symbol != sym || g.Labels != got[i-i%3].Labels {
				t.Fatalf("row %d = %s %s, want %s of bucket %s", i, g.Labels, g.Symbol, sym, got[i-i%3].Labels)
			}
			if i >= 3 && i%3 == 0 {
				prev, _ := time.Parse(time.DateTime, got[i-3].Labels)
				if cur, _ := time.Parse(time.DateTime, g.Labels); cur.Sub(prev) != time.Minute {
					t.Fatalf("bucket %s after %s: not the next minute", g.Labels, got[i-3].Labels)
				}
			}
			w, ok := truth[g.Labels+" "+g.Symbol]
			if !ok {
				w = mb{"0", "0"}
			}
			if w.minted != "0" || w.burned != "0" {
				seen++
			}
			sameNumber(t, g.Labels+" "+g.Symbol+" minted", g.Minted, dec(bigOf(w.minted), decimals[g.Symbol]))
			sameNumber(t, g.Labels+" "+g.Symbol+" burned", g.Burned, dec(bigOf(w.burned), decimals[g.Symbol]))
		}
		if seen != nonzero || seen < 10 {
			t.Errorf("%d buckets with supply changes answered, %d in the recording", seen, nonzero)
		}
	})
	t.Run("active senders per minute", func(t *testing.T) {
		var got []struct {
			Labels  string `json:"labels"`
			Senders []struct {
				N      int64  `json:"active_senders"`
				Symbol string `json:"token_symbol"`
				Denom  string `json:"token_denom"`
			} `json:"active_senders"`
		}
		srv.GetJSON(t, "/stablecoins/active-senders/over-time?time_range=10m&time_agg=1m", &got)
		labels := make([]string, len(got))
		for i, g := range got {
			labels[i] = g.Labels
		}
		consecutive(t, labels, time.Minute)
		byLabel := map[string]map[string]int64{}
		for _, g := range got {
			byLabel[g.Labels] = map[string]int64{}
			for _, s := range g.Senders {
				byLabel[g.Labels][s.Symbol] = s.N
				if want := map[string]string{"USDC": evmtest.USDC, "USDT": evmtest.USDT, "DAI": evmtest.DAI}[s.Symbol]; s.Denom != want {
					t.Errorf("%s denom %s", s.Symbol, s.Denom)
				}
			}
		}
		for _, b := range series.Buckets {
			l := time.Unix(b.Start, 0).UTC().Format(time.DateTime)
			for sym, w := range b.Tokens {
				if byLabel[l][sym] != w.ActiveSenders {
					t.Errorf("%s %s: %d senders, want %d", l, sym, byLabel[l][sym], w.ActiveSenders)
				}
			}
		}
		// One 1h bucket holds the whole recording: distinct over the hour.
		var hour []struct {
			Labels  string `json:"labels"`
			Senders []struct {
				N      int64  `json:"active_senders"`
				Symbol string `json:"token_symbol"`
			} `json:"active_senders"`
		}
		srv.GetJSON(t, "/stablecoins/active-senders/over-time?time_range=1h&time_agg=1h", &hour)
		if len(hour) != 1 || hour[0].Labels != "2026-11-21 22:00:00" || len(hour[0].Senders) != 3 {
			t.Fatalf("1h buckets: %+v", hour)
		}
		for _, s := range hour[0].Senders {
			if s.N != 15 { // the README: 15 distinct senders per token
				t.Errorf("%s: %d senders in the hour, want 15", s.Symbol, s.N)
			}
		}
	})

	t.Run("whale alerts", func(t *testing.T) {
		var whales struct {
			Alerts []struct {
				Token  string `json:"token"`
				Block  int64  `json:"block"`
				TxHash string `json:"txHash"`
				From   string `json:"from"`
				To     string `json:"to"`
				Amount string `json:"amountDecimal"`
			} `json:"alerts"`
		}
		readTruth(t, "whales.json", &whales)
		var got []struct {
			Chain  string      `json:"chain_id"`
			Time   string      `json:"block_timestamp"`
			Height string      `json:"block_height"`
			Denom  string      `json:"token_denom"`
			Symbol string      `json:"token_symbol"`
			Sender string      `json:"sender"`
			Recv   string      `json:"receiver"`
			Amount json.Number `json:"amount_usd"`
		}
		srv.GetJSON(t, "/stablecoins/whale-alerts?limit=1000", &got)
		if len(got) != len(whales.Alerts) || len(got) != 73 {
			t.Fatalf("%d alerts, want %d", len(got), len(whales.Alerts))
		}
		want := map[string]int{}
		for _, w := range whales.Alerts {
			want[fmt.Sprintf("%d %s %s %s %s", w.Block, w.Token, w.From, w.To, w.Amount)]++
		}
		for i, g := range got {
			if i > 0 && g.Time > got[i-1].Time {
				t.Errorf("alert %d newer than the one before", i)
			}
			k := fmt.Sprintf("%s %s %s %s %s", g.Height, g.Symbol, g.Sender, g.Recv, ratOf(t, string(g.Amount)).FloatString(decimals[g.Symbol]))
			k = strings.TrimSuffix(strings.TrimRight(k, "0"), ".")
			found := false
			for wk := range want {
				if strings.TrimSuffix(strings.TrimRight(wk, "0"), ".") == k && want[wk] > 0 {
					want[wk]--
					found = true
					break
				}
			}
			if !found || g.Chain != evmtest.ChainID {
				t.Errorf("alert %+v not in the truth", g)
			}
		}
		var five []map[string]any
		srv.GetJSON(t, "/stablecoins/whale-alerts", &five)
		if len(five) != 5 || five[0]["block_height"] != got[0].Height {
			t.Errorf("default limit: %v", five)
		}
	})

	t.Run("bridge", func(t *testing.T) { checkBridge(t, srv) })
	t.Run("categories", func(t *testing.T) { checkCategories(t, srv) })
}

// escrowFlows sums, per token symbol, the plain transfers into (out) and
// out of (in) the lock-and-mint escrow, read from the recorded logs.
func escrowFlows(t *testing.T) (out, in *big.Rat) {
	t.Helper()
	f, err := os.Open(filepath.Join(evmtest.Dir(), "logs.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, _ := gzip.NewReader(f)
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	out, in = new(big.Rat), new(big.Rat)
	sym := map[string]string{evmtest.USDC: "USDC", evmtest.USDT: "USDT", evmtest.DAI: "DAI"}
	for sc.Scan() {
		var l types.Log
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		m, ok := chainevm.Decode(&l)
		s, tok := sym[m.Token]
		if !ok || !tok || m.Kind != chainevm.KindTransfer {
			continue
		}
		v, _ := new(big.Rat).SetString(dec(bigOf(m.Amount), decimals[s]))
		switch {
		case m.To == evmtest.BridgeEscrow && m.From != evmtest.BridgeEscrow:
			out.Add(out, v)
		case m.From == evmtest.BridgeEscrow && m.To != evmtest.BridgeEscrow:
			in.Add(in, v)
		}
	}
	return out, in
}

func checkBridge(t *testing.T, srv apitest.Server) {
	var bridge struct {
		CCTP struct {
			Out map[string]struct {
				Amount string `json:"amountDecimal"`
			} `json:"outflowByDestinationDomain"`
			In map[string]struct {
				Amount string `json:"amountDecimal"`
			} `json:"inflowBySourceDomain"`
		} `json:"cctp"`
	}
	readTruth(t, "bridge.json", &bridge)
	domainChain := map[string]string{"0": "ethereum-1", "1": "avalanche-43114", "2": "optimism-10", "3": "arbitrum-42161",
		"6": "base-8453", "7": "polygon-137"}
	escOut, escIn := escrowFlows(t)
	self := evmtest.ChainID
	// Flows of the devnet: out to each domain's chain, in from it.
	wantIn, wantOut := map[string]*big.Rat{self: new(big.Rat).Set(escIn)}, map[string]*big.Rat{self: new(big.Rat).Set(escOut)}
	for d, c := range domainChain {
		o, i := ratOf(t, bridge.CCTP.Out[d].Amount), ratOf(t, bridge.CCTP.In[d].Amount)
		wantIn[c], wantOut[c] = o, i // what the devnet sent to c arrived in c
		wantIn[self].Add(wantIn[self], i)
		wantOut[self].Add(wantOut[self], o)
	}
	if wantOut[self].Cmp(new(big.Rat).Add(ratOf(t, "3152514.662907"), escOut)) != 0 {
		t.Fatalf("the README's total CCTP outflow does not add up: %s", wantOut[self].FloatString(6))
	}
	type row struct {
		Chain string      `json:"chain_id"`
		Total json.Number `json:"total_amount"`
	}
	for _, c := range []struct {
		path string
		want func(chain string) *big.Rat
	}{
		{"total-inflow", func(ch string) *big.Rat { return wantIn[ch] }},
		{"total-outflow", func(ch string) *big.Rat { return wantOut[ch] }},
		{"total-netflow", func(ch string) *big.Rat { return new(big.Rat).Sub(wantIn[ch], wantOut[ch]) }},
	} {
		var got []row
		srv.GetJSON(t, "/stablecoins/bridge/"+c.path+"?time_range=24h", &got)
		if len(got) != 7 {
			t.Fatalf("%s: %d rows, want one per supported chain", c.path, len(got))
		}
		for i, g := range got {
			if ratOf(t, string(g.Total)).Cmp(c.want(g.Chain)) != 0 {
				t.Errorf("%s %s = %s, want %s", c.path, g.Chain, g.Total, c.want(g.Chain).FloatString(18))
			}
			if i > 0 && ratOf(t, string(g.Total)).Cmp(ratOf(t, string(got[i-1].Total))) > 0 {
				t.Errorf("%s: not largest first", c.path)
			}
		}
	}
	// chain_id keeps the flows whose other side is that chain.
	var got []row
	srv.GetJSON(t, "/stablecoins/bridge/total-outflow?time_range=24h&chain_ids=binance-smart-chain-56,base-8453&chain_id=base-8453", &got)
	if len(got) != 2 || got[0].Chain != self || ratOf(t, string(got[0].Total)).Cmp(ratOf(t, bridge.CCTP.Out["6"].Amount)) != 0 ||
		ratOf(t, string(got[1].Total)).Sign() != 0 {
		t.Errorf("outflow to base only: %+v", got)
	}

	var pairs []struct {
		Src   string      `json:"src_chain_id"`
		Dst   string      `json:"dst_chain_id"`
		Total json.Number `json:"total_amount"`
	}
	srv.GetJSON(t, "/stablecoins/bridge/cross-chain-volume?time_range=24h", &pairs)
	if len(pairs) != 12 {
		t.Fatalf("%d pairs, want 12 (6 domains × 2 directions): %+v", len(pairs), pairs)
	}
	for _, p := range pairs {
		var want *big.Rat
		for d, c := range domainChain {
			if p.Src == self && p.Dst == c {
				want = ratOf(t, bridge.CCTP.Out[d].Amount)
			}
			if p.Dst == self && p.Src == c {
				want = ratOf(t, bridge.CCTP.In[d].Amount)
			}
		}
		if want == nil || ratOf(t, string(p.Total)).Cmp(want) != 0 {
			t.Errorf("pair %s → %s = %s", p.Src, p.Dst, p.Total)
		}
	}

	var net []map[string]any
	srv.GetJSON(t, "/stablecoins/bridge/netflow-over-time?time_range=1h&time_agg=1h&chain_ids=binance-smart-chain-56,ethereum-1", &net)
	if len(net) != 1 {
		t.Fatalf("one hour bucket expected: %v", net)
	}
	// Total over every supported chain: flows between two of them cancel,
	// the escrow's unknown-side flows remain.
	num := func(k string) json.Number { n, _ := net[0][k].(json.Number); return n }
	if net[0]["labels"] != "2026-11-21 22:00:00" {
		t.Errorf("labels %v", net[0]["labels"])
	}
	sameNumber(t, "netflow devnet", num(self), new(big.Rat).Sub(wantIn[self], wantOut[self]).FloatString(18))
	sameNumber(t, "netflow ethereum", num("ethereum-1"), new(big.Rat).Sub(wantIn["ethereum-1"], wantOut["ethereum-1"]).FloatString(18))
	sameNumber(t, "netflow total", num("total"), new(big.Rat).Sub(escIn, escOut).FloatString(18))
	if len(net[0]) != 4 {
		t.Errorf("columns: %v", net[0])
	}
	// Minute buckets: one row per minute from the first indexed block's to
	// the last aggregated block's, zero without flows, adding up to the hour.
	var minutes []map[string]any
	srv.GetJSON(t, "/stablecoins/bridge/netflow-over-time?time_range=1h&time_agg=1m&chain_ids=ethereum-1", &minutes)
	if len(minutes) < 2 {
		t.Fatalf("minute buckets: %v", minutes)
	}
	sum, zeros := new(big.Rat), 0
	for i, m := range minutes {
		at, err := time.Parse(time.DateTime, m["labels"].(string))
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			prev, _ := time.Parse(time.DateTime, minutes[i-1]["labels"].(string))
			if at.Sub(prev) != time.Minute {
				t.Errorf("row %d: %s after %s, want consecutive minutes", i, at, prev)
			}
		}
		n, _ := m["total"].(json.Number)
		if n == "0" {
			zeros++
		}
		sum.Add(sum, ratOf(t, string(n)))
	}
	sameNumber(t, "minutes add up to the hour", json.Number(sum.FloatString(18)), new(big.Rat).Sub(escIn, escOut).FloatString(18))
	t.Logf("%d minute rows, %d without flows", len(minutes), zeros)
}

func checkCategories(t *testing.T, srv apitest.Server) {
	var cv struct {
		Tokens map[string]struct {
			BySender   map[string]struct{ Volume string } `json:"bySenderCategory"`
			ByReceiver map[string]struct{ Volume string } `json:"byReceiverCategory"`
		} `json:"tokens"`
	}
	readTruth(t, "category_volume.json", &cv)
	var mb struct {
		Events []struct {
			Token   string `json:"token"`
			Kind    string `json:"kind"`
			Account string `json:"account"`
			Amount  string `json:"amount"`
		} `json:"mintBurnEvents"`
	}
	readTruth(t, "timeseries.json", &mb)
	var labels map[string]struct{ Category string }
	readTruth(t, "labels.json", &labels)
	ours := map[string]string{"exchange": "cex", "dex": "dex", "bridge": "bridge"} // as evmtest.Chain labels them
	cat := func(truthCat string) string {
		if c, ok := ours[truthCat]; ok {
			return c
		}
		return "other"
	}
	in, out := map[string]*big.Rat{}, map[string]*big.Rat{}
	add := func(m map[string]*big.Rat, c string, v *big.Rat) {
		if m[c] == nil {
			m[c] = new(big.Rat)
		}
		m[c].Add(m[c], v)
	}
	for sym, tk := range cv.Tokens {
		for c, v := range tk.ByReceiver {
			add(in, cat(c), ratOf(t, dec(bigOf(v.Volume), decimals[sym])))
		}
		for c, v := range tk.BySender {
			add(out, cat(c), ratOf(t, dec(bigOf(v.Volume), decimals[sym])))
		}
	}
	for _, e := range mb.Events {
		v := ratOf(t, dec(bigOf(e.Amount), decimals[e.Token]))
		c := cat(labels[e.Account].Category)
		if e.Kind == "mint" { // the zero address sends, the account receives
			add(out, "mint_burn", v)
			add(in, c, v)
		} else {
			add(in, "mint_burn", v)
			add(out, c, v)
		}
	}
	type row struct {
		Category string      `json:"category"`
		Total    json.Number `json:"total_amount"`
	}
	for _, c := range []struct {
		path string
		want func(string) *big.Rat
	}{
		{"total-inflow", func(c string) *big.Rat { return in[c] }},
		{"total-outflow", func(c string) *big.Rat { return out[c] }},
		{"total-netflow", func(c string) *big.Rat {
			n := new(big.Rat)
			if in[c] != nil {
				n.Add(n, in[c])
			}
			if out[c] != nil {
				n.Sub(n, out[c])
			}
			return n
		}},
	} {
		var got []row
		srv.GetJSON(t, "/stablecoins/category/"+c.path+"?time_range=24h", &got)
		if len(got) != 6 {
			t.Fatalf("%s: %d rows, want the 6 categories", c.path, len(got))
		}
		for _, g := range got {
			want := c.want(g.Category)
			if want == nil {
				want = new(big.Rat) // lending: no labelled address
			}
			if ratOf(t, string(g.Total)).Cmp(want) != 0 {
				t.Errorf("%s %s = %s, want %s", c.path, g.Category, g.Total, want.FloatString(18))
			}
		}
	}
	var two []row
	srv.GetJSON(t, "/stablecoins/category/total-inflow?time_range=24h&category=cex,lending", &two)
	if len(two) != 2 || two[0].Category != "cex" || two[1].Category != "lending" {
		t.Errorf("two categories: %+v", two)
	}

	// Volume by category: every movement once, so the categories of a
	// bucket add up to its transfers, mints and burns.
	var byCat []struct {
		Labels string `json:"labels"`
		Vol    []struct {
			Category string      `json:"category"`
			Total    json.Number `json:"total_volume"`
		} `json:"volume_by_category"`
	}
	srv.GetJSON(t, "/stablecoins/volume-by-category/over-time?time_range=10m&time_agg=1m", &byCat)
	catLabels, empty := make([]string, len(byCat)), 0
	for i, b := range byCat {
		catLabels[i] = b.Labels
		if len(b.Vol) == 0 {
			empty++
		}
	}
	consecutive(t, catLabels, time.Minute)
	if empty == 0 {
		t.Errorf("no minute without volume among %d: the quiet minutes are missing", len(byCat))
	}
	srv.GetJSON(t, "/stablecoins/volume-by-category/over-time?time_range=1h&time_agg=1h", &byCat)
	if len(byCat) != 1 {
		t.Fatalf("one hour bucket expected: %+v", byCat)
	}
	sum := new(big.Rat)
	for _, v := range byCat[0].Vol {
		sum.Add(sum, ratOf(t, string(v.Total)))
	}
	var summary struct {
		Tokens map[string]struct{ Minted, Burned, TransferVolume string } `json:"tokens"`
	}
	readTruth(t, "summary.json", &summary)
	want := new(big.Rat)
	for sym, s := range summary.Tokens {
		for _, v := range []string{s.Minted, s.Burned, s.TransferVolume} {
			want.Add(want, ratOf(t, dec(bigOf(v), decimals[sym])))
		}
	}
	if sum.Cmp(want) != 0 {
		t.Errorf("categories add up to %s, want %s", sum.FloatString(18), want.FloatString(18))
	}
	for _, v := range byCat[0].Vol {
		if v.Category == "mint_burn" {
			mbWant := new(big.Rat)
			for sym, s := range summary.Tokens {
				mbWant.Add(mbWant, ratOf(t, dec(bigOf(s.Minted), decimals[sym])))
				mbWant.Add(mbWant, ratOf(t, dec(bigOf(s.Burned), decimals[sym])))
			}
			if ratOf(t, string(v.Total)).Cmp(mbWant) != 0 {
				t.Errorf("mint_burn volume %s, want %s", v.Total, mbWant.FloatString(18))
			}
		}
	}
}

// TestStablecoinsNotIndexed: 503 for a chain that is not indexed, and for
// a window that starts after the last aggregated block.
func TestStablecoinsNotIndexed(t *testing.T) {
	t.Parallel()
	srv, _, _ := indexed(t, lastBlock.Add(2*time.Hour))
	for _, c := range []struct {
		path   string
		status int
	}{
		{"/stablecoins/volume-per-token?time_range=1h", 503},
		{"/stablecoins/volume-per-token?time_range=3h", 200},
		{"/stablecoins/volume-per-token?time_range=24h&chain_id=base-8453", 503},
		{"/stablecoins/bridge/total-inflow?time_range=24h&chain_id=base-8453", 200}, // chain_id is the other side here
		{"/stablecoins/whale-alerts", 200},
		{"/stablecoins/volume-per-token?time_range=2h", 400},
		{"/stablecoins/issuing/over-time?time_agg=3m", 400},
		{"/stablecoins/category/total-inflow?category=exchange", 400},
		{"/stablecoins/whale-alerts?limit=1001", 400},
	} {
		resp, body := srv.Get(t, c.path)
		if resp.StatusCode != c.status {
			t.Errorf("%s: %d %s, want %d", c.path, resp.StatusCode, body, c.status)
		}
	}
}

// TestStablecoinsRebuild: running the jobs again adds nothing; a new token
// price revalues the history; a block at the watermark that the indexer
// replaced (a reorg) rebuilds the reports rather than adding to them.
func TestStablecoinsRebuild(t *testing.T) {
	t.Parallel()
	now := lastBlock.Add(24 * time.Second)
	_, db, cfg := indexed(t, now)
	total := func() string {
		var s string
		if err := db.NewRaw("SELECT sum(volume_usd)::text FROM stablecoin_minute WHERE token = ?", evmtest.DAI).Scan(context.Background(), &s); err != nil {
			t.Fatal(err)
		}
		return strings.TrimRight(s, "0")
	}
	const daiVolume = "9513476.697433970069661967"
	if got := total(); got != daiVolume {
		t.Fatalf("DAI volume %s, want %s", got, daiVolume)
	}
	apitest.RunJobs(t, db, cfg)
	if got := total(); got != daiVolume {
		t.Fatalf("after a second run: %s", got)
	}
	cfg.Chains[0].Tokens[2].PriceUSD = "2"
	apitest.RunJobs(t, db, cfg)
	if got := total(); got != "19026953.394867940139323934" {
		t.Fatalf("at 2 USD: %s", got)
	}
	if _, err := db.NewRaw("UPDATE evm_blocks SET hash = '0x00' WHERE height = ?", evmtest.LastHeight).Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
	apitest.RunJobs(t, db, cfg)
	if got := total(); got != "19026953.394867940139323934" {
		t.Fatalf("after a replaced block: %s", got)
	}
	var hash string
	if err := db.NewRaw("SELECT block_hash FROM stablecoin_report_state").Scan(context.Background(), &hash); err != nil || hash != "0x00" {
		t.Fatalf("report state hash %q %v: not rebuilt", hash, err)
	}
}

// TestStablecoinsWithAChainNotAggregated: a second EVM chain whose job has
// not run leaves the default answers to the chains that are there, and
// answers 503 when it is asked for by name.
func TestStablecoinsWithAChainNotAggregated(t *testing.T) {
	t.Parallel()
	_, db, cfg := indexed(t, lastBlock.Add(24*time.Second))
	late := evmtest.Chain("http://127.0.0.1:1")
	late.ID, late.EVMChainID = "base-8453", 0
	cfg.Chains = append(cfg.Chains, late)
	srv := apitest.Serve(t, db, cfg, lastBlock.Add(24*time.Second))
	var got []map[string]any
	resp := srv.GetJSON(t, "/stablecoins/volume-per-token?time_range=10m", &got)
	if len(got) != 3 || resp.Header.Get("X-Data-Height") != "311" {
		t.Errorf("default chains: %d rows, X-Data-Height %q", len(got), resp.Header.Get("X-Data-Height"))
	}
	if resp, body := srv.Get(t, "/stablecoins/volume-per-token?time_range=10m&chain_id=base-8453"); resp.StatusCode != 503 {
		t.Errorf("named chain not aggregated: %d %s", resp.StatusCode, body)
	}
}

// TestOverTimeBucketsStartInTheWindow: at 23:16 the last hour starts at
// 22:16, so the 22:00 hour bucket (which started before it) is not in the
// answer, while the minute buckets from 22:16 on are.
func TestOverTimeBucketsStartInTheWindow(t *testing.T) {
	t.Parallel()
	srv, _, _ := indexed(t, time.Date(2026, 11, 21, 23, 16, 0, 0, time.UTC))
	var hour, minutes []map[string]any
	srv.GetJSON(t, "/stablecoins/issuing/over-time?time_range=1h&time_agg=1h", &hour)
	srv.GetJSON(t, "/stablecoins/issuing/over-time?time_range=1h&time_agg=1m", &minutes)
	if len(hour) != 0 {
		t.Errorf("hour buckets %v: the 22:00 bucket starts before the window", hour)
	}
	if len(minutes) == 0 || minutes[0]["labels"] != "2026-11-21 22:16:00" {
		t.Errorf("minute buckets start at %v, want 22:16", minutes)
	}
}

// consecutive checks that labels are buckets of step, one after another.
func consecutive(t *testing.T, labels []string, step time.Duration) {
	t.Helper()
	if len(labels) < 2 {
		t.Fatalf("%d buckets", len(labels))
	}
	for i := 1; i < len(labels); i++ {
		prev, _ := time.Parse(time.DateTime, labels[i-1])
		if cur, _ := time.Parse(time.DateTime, labels[i]); cur.Sub(prev) != step {
			t.Fatalf("bucket %s after %s: not the next one", labels[i], labels[i-1])
		}
	}
}
