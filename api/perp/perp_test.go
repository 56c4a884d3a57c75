package perp_test

import (
	"bufio"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	report "github.com/chainlens/chainlens/report/perp"

	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/chains/cosmos"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/apitest"
	"github.com/chainlens/chainlens/internal/dydxtest"
)

type server struct{ url, key string }

// serve builds the API for cfg with the clock fixed at now and the
// response cache off.
func serve(t *testing.T, db *bun.DB, cfg *config.Config, now time.Time) server {
	t.Helper()
	cfg.API = apitest.DefaultAPI(t, true)
	srv := apitest.Serve(t, db, cfg, now)
	return server{url: srv.URL, key: srv.Key}
}

func (s server) get(t *testing.T, path string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("GET", s.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+s.key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, body
}

// getJSON gets path, checks a 200 that the served OpenAPI document accepts,
// and decodes the answer into v.
func (s server) getJSON(t *testing.T, path string, v any) *http.Response {
	t.Helper()
	resp, body := s.get(t, path)
	if resp.StatusCode != 200 {
		t.Fatalf("%s: %d %s", path, resp.StatusCode, body)
	}
	_, doc := s.get(t, "/openapi.json")
	apitest.Validate(t, doc, "GET", path, resp, body)
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return resp
}

// usdc renders quote quantums as USDC, as the API does (no trailing zeros).
func usdc(q *big.Int) string {
	return trim(new(big.Rat).SetFrac(q, big.NewInt(1_000_000)).FloatString(6))
}

func trim(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		return "0"
	}
	return s
}

func bigInt(t *testing.T, s string) *big.Int {
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		t.Fatalf("not an integer: %q", s)
	}
	return n
}

// expectedTrader is what the node's own record of the fills
// (dydxtest.Matches) says of a trader.
type expectedTrader struct {
	trades      int64
	volume      *big.Int // quote quantums
	fees        *big.Int
	perMarket   map[int64]*big.Int
	first, last int64 // heights
}

func expectTraders(t *testing.T, matches []dydxtest.Match) map[string]*expectedTrader {
	out := map[string]*expectedTrader{}
	for _, m := range matches {
		notional := bigInt(t, m.Notional)
		for _, side := range []struct{ addr, fee string }{{m.Taker, m.TakerFee}, {m.Maker, m.MakerFee}} {
			e := out[side.addr]
			if e == nil {
				e = &expectedTrader{volume: new(big.Int), fees: new(big.Int), perMarket: map[int64]*big.Int{}, first: m.Height}
				out[side.addr] = e
			}
			e.fees.Add(e.fees, bigInt(t, side.fee))
			if side.addr == m.Maker && m.Maker == m.Taker {
				continue // a self-trade is one trade of its owner
			}
			e.trades++
			e.volume.Add(e.volume, notional)
			if e.perMarket[m.PerpetualID] == nil {
				e.perMarket[m.PerpetualID] = new(big.Int)
			}
			e.perMarket[m.PerpetualID].Add(e.perMarket[m.PerpetualID], notional)
			e.last = m.Height
		}
	}
	return out
}

var tickers = map[int64]string{0: "BTC-USD", 1: "ETH-USD"}

// TestPerpEndpointsOnLocalnet indexes the recorded dYdX localnet, runs the
// aggregator, and checks the perp endpoints against the node's own record
// of its 135 fills (truth/fills.json, fees from its copy of each match
// event) and the README's counts.
func TestPerpEndpointsOnLocalnet(t *testing.T) {
	t.Parallel()
	db, ch := dydxtest.New(t)
	cfg := &config.Config{Chains: []config.Chain{ch}}
	ctx := context.Background()
	run := func() { t.Helper(); apitest.RunJobs(t, db, cfg) }
	run()
	matches := dydxtest.Matches(t)
	if len(matches) != 135 {
		t.Fatalf("truth has %d fills, want 135 (README)", len(matches))
	}
	heightTime := map[int64]time.Time{}
	var times []struct {
		Height int64     `bun:"height"`
		Time   time.Time `bun:"time"`
	}
	if err := db.NewRaw("SELECT height, time FROM blocks WHERE chain_id = ?", ch.ID).Scan(ctx, &times); err != nil {
		t.Fatal(err)
	}
	for _, b := range times {
		heightTime[b.Height] = b.Time.UTC()
	}
	tip := heightTime[dydxtest.LastHeight]
	first := tip // the first indexed block: series start at its bucket
	for h, bt := range heightTime {
		if h > 0 && bt.Before(first) {
			first = bt
		}
	}
	hours := tip.Hour() - first.Hour() + 1 // the recording spans one UTC day
	s := serve(t, db, cfg, tip.Add(time.Hour))
	want := expectTraders(t, matches)

	t.Run("crm", func(t *testing.T) {
		var got []map[string]any
		resp := s.getJSON(t, "/perp/crm?limit=50", &got)
		if h := resp.Header.Get("X-Data-Height"); h != "520" {
			t.Errorf("X-Data-Height %q, want 520", h)
		}
		if len(got) != len(want) {
			t.Fatalf("%d traders, want %d", len(got), len(want))
		}
		var txTotal int64
		for i, g := range got {
			addr := g["user"].(string)
			e := want[addr]
			if e == nil {
				t.Fatalf("unexpected trader %s", addr)
			}
			if i > 0 {
				prev := want[got[i-1]["user"].(string)]
				if c := prev.volume.Cmp(e.volume); c < 0 || (c == 0 && got[i-1]["user"].(string) > addr) {
					t.Errorf("row %d (%s) out of order", i, addr)
				}
			}
			type mv struct {
				id  int64
				vol *big.Int
			}
			var ms []mv
			for id, v := range e.perMarket {
				ms = append(ms, mv{id, v})
			}
			slices.SortFunc(ms, func(a, b mv) int { return cmp.Or(b.vol.Cmp(a.vol), cmp.Compare(a.id, b.id)) })
			var markets, volumes []string
			for _, m := range ms[:min(3, len(ms))] {
				markets, volumes = append(markets, tickers[m.id]), append(volumes, usdc(m.vol))
			}
			avg := trim(new(big.Rat).SetFrac(e.volume, big.NewInt(e.trades*1_000_000)).FloatString(6))
			for _, f := range []struct {
				name string
				want any
			}{
				{"all_time_trades", fmt.Sprint(e.trades)}, {"all_time_volume_usdc", usdc(e.volume)}, {"all_time_fees_usdc", usdc(e.fees)},
				{"all_time_avg_trade_size", avg}, {"all_time_top_3_markets", strings.Join(markets, ",")},
				{"all_time_top_3_volumes", strings.Join(volumes, ",")},
				// The whole recording is inside the last 30 days.
				{"last_30d_trades", fmt.Sprint(e.trades)}, {"last_30d_volume_usdc", usdc(e.volume)}, {"last_30d_fees_usdc", usdc(e.fees)},
				{"last_30d_avg_trade_size", avg}, {"last_30d_top_3_markets", strings.Join(markets, ",")},
				{"last_30d_top_3_volumes", strings.Join(volumes, ",")},
			} {
				if g := render(g[f.name]); g != f.want {
					t.Errorf("%s %s = %v, want %v", addr, f.name, g, f.want)
				}
			}
			// Activity includes signed txs, which may come before the first fill.
			first, _ := time.Parse(time.DateTime, g["first_activity_timestamp"].(string))
			last, _ := time.Parse(time.DateTime, g["last_activity_timestamp"].(string))
			if first.After(heightTime[e.first]) || last.Before(heightTime[e.last].Truncate(time.Second)) {
				t.Errorf("%s activity %v..%v does not cover its fills %v..%v", addr, first, last, heightTime[e.first], heightTime[e.last])
			}
			n, _ := g["all_time_tx_count"].(json.Number).Int64()
			txTotal += n
		}
		// Of the README's 2621 block txs, 520×4 are injected by the proposer
		// and 519 are vote-extension blobs: 22 are signed by users. Protocol
		// vaults and short-term orders sign none.
		var signed int64
		if err := db.NewRaw("SELECT sum(tx_count) FROM perp_traders").Scan(ctx, &signed); err != nil {
			t.Fatal(err)
		}
		if signed != 22 {
			t.Errorf("perp_traders hold %d signed txs, want 22", signed)
		}
		if txTotal > signed {
			t.Errorf("traders' tx counts add up to %d, more than %d", txTotal, signed)
		}
	})

	// Filters, sort and pagination against the same expectation.
	addrs := make([]string, 0, len(want))
	for a := range want {
		addrs = append(addrs, a)
	}
	slices.Sort(addrs)
	users := func(t *testing.T, path string) []string {
		t.Helper()
		var got []map[string]any
		s.getJSON(t, path, &got)
		out := []string{}
		for _, g := range got {
			out = append(out, g["user"].(string))
		}
		return out
	}
	t.Run("crm filters", func(t *testing.T) {
		if got := users(t, "/perp/crm?sort_by=user&sort_order=asc&limit=2&offset=1"); !slices.Equal(got, addrs[1:3]) {
			t.Errorf("sorted by user, page 2: %v, want %v", got, addrs[1:3])
		}
		if got := users(t, "/perp/crm?address="+addrs[0]); !slices.Equal(got, addrs[:1]) {
			t.Errorf("address filter: %v", got)
		}
		var many []string
		for _, a := range addrs {
			if want[a].trades >= 20 {
				many = append(many, a)
			}
		}
		slices.SortFunc(many, func(a, b string) int { return cmp.Or(cmp.Compare(want[b].trades, want[a].trades), cmp.Compare(a, b)) })
		if got := users(t, "/perp/crm?min_all_time_trades=20&sort_by=all_time_trades&limit=50"); !slices.Equal(got, many) {
			t.Errorf("min_all_time_trades=20: %v, want %v", got, many)
		}
		if got := users(t, "/perp/crm?first_activity_after="+strings.ReplaceAll(tip.Format(time.DateTime), " ", "%20")); len(got) != 0 {
			t.Errorf("first activity after the last block: %v", got)
		}
		for _, bad := range []string{"/perp/crm?limit=51", "/perp/crm?sort_by=nope", "/perp/crm?min_all_time_trades=x", "/perp/crm?sort_order=up"} {
			if resp, body := s.get(t, bad); resp.StatusCode != 400 || resp.Header.Get("Content-Type") != "application/problem+json" {
				t.Errorf("%s: %d %s", bad, resp.StatusCode, body)
			}
		}
	})

	t.Run("trades count", func(t *testing.T) {
		perHour := map[string]int64{}
		for _, m := range matches {
			perHour[heightTime[m.Height].Truncate(time.Hour).Format(time.DateTime)]++
		}
		day := tip.Format(time.DateOnly)
		var got []struct {
			Labels      string      `json:"labels"`
			TotalTrades json.Number `json:"total_trades"`
		}
		s.getJSON(t, "/trading/trades_count?start_date="+day+"&end_date="+day, &got)
		if want := hours; len(got) != want {
			t.Fatalf("%d hourly buckets, want %d (the first block's hour to the last block's)", len(got), want)
		}
		var total int64
		for _, g := range got {
			n, _ := g.TotalTrades.Int64()
			if n != perHour[g.Labels] {
				t.Errorf("%s: %d trades, want %d", g.Labels, n, perHour[g.Labels])
			}
			total += n
		}
		if total != 135 {
			t.Errorf("%d trades in all, want 135", total)
		}
		var daily []struct {
			Labels      string      `json:"labels"`
			TotalTrades json.Number `json:"total_trades"`
		}
		s.getJSON(t, "/trading/trades_count?granularity=week&start_date=2026-11-01", &daily)
		if len(daily) != 1 || daily[0].Labels != "2026-11-16 00:00:00" || daily[0].TotalTrades != "135" {
			t.Errorf("weekly: %+v, want the ISO week of the first block (2026-11-16) with 135", daily)
		}
		after := strings.ReplaceAll(tip.Add(time.Minute).Format(time.DateTime), " ", "%20")
		if resp, body := s.get(t, "/trading/trades_count?start_date="+after); resp.StatusCode != 503 {
			t.Errorf("a range after the last block: %d %s", resp.StatusCode, body)
		}
	})

	fees := map[int64]*big.Int{0: new(big.Int), 1: new(big.Int)}
	volume := map[int64]*big.Int{0: new(big.Int), 1: new(big.Int)}
	for _, m := range matches {
		fees[m.PerpetualID].Add(fees[m.PerpetualID], bigInt(t, m.TakerFee))
		fees[m.PerpetualID].Add(fees[m.PerpetualID], bigInt(t, m.MakerFee))
		volume[m.PerpetualID].Add(volume[m.PerpetualID], bigInt(t, m.Notional))
	}
	t.Run("trading fees", func(t *testing.T) {
		day := tip.Format(time.DateOnly)
		all := new(big.Int).Add(fees[0], fees[1])
		for _, c := range []struct{ query, want string }{
			{"market=BTC-USD", usdc(fees[0])}, {"market=0", usdc(fees[0])}, {"pool=ETH-USD", usdc(fees[1])},
			{"market=1&pool=1", usdc(fees[1])}, {"", usdc(all)}, {"market=total", usdc(all)},
		} {
			var got []struct {
				Labels    string      `json:"labels"`
				TotalFees json.Number `json:"total_fees"`
			}
			s.getJSON(t, "/trading/trading_fees?start_date="+day+"&end_date="+day+"&"+c.query, &got)
			if len(got) != 1 || got[0].Labels != day+" 00:00:00" || string(got[0].TotalFees) != c.want {
				t.Errorf("%s: %+v, want [{%s 00:00:00 %s}]", c.query, got, day, c.want)
			}
		}
		for _, bad := range []string{"market=DOGE-XYZ", "market=0&pool=1", "market=99"} {
			if resp, body := s.get(t, "/trading/trading_fees?"+bad); resp.StatusCode != 400 {
				t.Errorf("%s: %d %s", bad, resp.StatusCode, body)
			}
		}
	})

	t.Run("market listings", func(t *testing.T) {
		var got []struct {
			Key         string      `json:"key"`
			QueryKey    int64       `json:"query_key"`
			Name        string      `json:"name"`
			DailyVolume json.Number `json:"daily_volume"`
		}
		s.getJSON(t, "/aux/market_listings", &got)
		// 36 perpetuals in the genesis (README); the recording is shorter
		// than a day, so the daily volume is all of it.
		if len(got) != 36 {
			t.Fatalf("%d markets, want 36", len(got))
		}
		first, second := int64(0), int64(1)
		if volume[1].Cmp(volume[0]) > 0 {
			first, second = 1, 0
		}
		if got[0].QueryKey != first || got[0].Key != tickers[first] || string(got[0].DailyVolume) != usdc(volume[first]) ||
			got[1].QueryKey != second || string(got[1].DailyVolume) != usdc(volume[second]) || got[2].DailyVolume != "0" || got[2].QueryKey != 2 {
			t.Errorf("listings start %+v, want %s %s then %s %s then perpetual 2 with 0", got[:3],
				tickers[first], usdc(volume[first]), tickers[second], usdc(volume[second]))
		}
	})

	t.Run("traders ranking", func(t *testing.T) {
		maker := map[string]*big.Int{}
		for _, m := range matches {
			if maker[m.Maker] == nil {
				maker[m.Maker] = new(big.Int)
			}
			maker[m.Maker].Add(maker[m.Maker], bigInt(t, m.Notional))
		}
		var got []struct {
			Address    string      `json:"address"`
			Total      json.Number `json:"total_volume"`
			Cumulative json.Number `json:"cumulative_volume"`
			V1         json.Number `json:"volume_1d"`
			V30        json.Number `json:"volume_30d"`
		}
		s.getJSON(t, "/trading/traders_ranking?volumeType=maker", &got)
		if len(got) != len(maker) {
			t.Fatalf("%d makers, want %d", len(got), len(maker))
		}
		run := new(big.Int)
		for i, g := range got {
			v := maker[g.Address]
			run.Add(run, v)
			if string(g.Total) != usdc(v) || string(g.V1) != usdc(v) || string(g.V30) != usdc(v) || string(g.Cumulative) != usdc(run) {
				t.Errorf("rank %d %s: %+v, want volume %s, cumulative %s", i+1, g.Address, g, usdc(v), usdc(run))
			}
		}
	})

	t.Run("overview and activity", func(t *testing.T) {
		day := tip.Format(time.DateOnly)
		rng := "start_date=" + day + "&end_date=" + day
		allFees, allVolume := new(big.Int), new(big.Int)
		for id := range fees {
			allFees.Add(allFees, fees[id])
			allVolume.Add(allVolume, volume[id])
		}
		var tf map[string]any
		s.getJSON(t, "/perp/transparency/trading-fees?mode=debug", &tf)
		taker, maker := new(big.Int), new(big.Int)
		for _, m := range matches {
			taker.Add(taker, bigInt(t, m.TakerFee))
			maker.Add(maker, bigInt(t, m.MakerFee))
		}
		comp, _ := tf["components"].(map[string]any)
		for _, f := range []struct {
			got  any
			want string
		}{
			{tf["trading_fees_24h"], usdc(allFees)}, {tf["trading_fees_30d"], usdc(allFees)}, {tf["trading_fees_total"], usdc(allFees)},
			{comp["taker_fees_total"], usdc(taker)}, {comp["maker_fees_30d"], usdc(maker)},
		} {
			if render(f.got) != f.want {
				t.Errorf("trading-fees %v: got %v, want %s", tf, f.got, f.want)
			}
		}
		var plain map[string]any
		s.getJSON(t, "/perp/transparency/trading-fees", &plain)
		if _, ok := plain["components"]; ok || len(plain) != 3 {
			t.Errorf("prod mode: %v", plain)
		}

		var ov []map[string]any
		s.getJSON(t, "/trading/trading_volume_overview?"+rng, &ov)
		if len(ov) != 1 || render(ov[0]["volume_usdc"]) != usdc(allVolume) || render(ov[0]["trades_count"]) != "135" ||
			render(ov[0]["unique_traders"]) != fmt.Sprint(len(want)) {
			t.Errorf("volume overview %v, want volume %s, 135 trades, %d traders", ov, usdc(allVolume), len(want))
		}

		_, body := s.get(t, "/trading/trading_share_by_pool?"+rng)
		first, second := int64(0), int64(1)
		if volume[1].Cmp(volume[0]) > 0 {
			first, second = 1, 0
		}
		wantShare := fmt.Sprintf(`[{"labels":"%s 00:00:00","%s":%s,"%s":%s,"others":0,"total":%s}]`, day,
			tickers[first], usdc(volume[first]), tickers[second], usdc(volume[second]), usdc(allVolume))
		if strings.TrimSpace(string(body)) != wantShare {
			t.Errorf("share by pool\n%s\nwant\n%s", body, wantShare)
		}
		var shareJSON []map[string]any
		s.getJSON(t, "/trading/trading_share_by_pool?"+rng, &shareJSON)

		var at10, at1 int64
		for _, e := range want {
			if e.trades >= 10 {
				at10++
			}
			at1++
		}
		var bt []map[string]any
		s.getJSON(t, "/activity/user_distribution_by_trades?time_resolution=day&"+rng, &bt)
		if len(bt) != 1 || render(bt[0]["at_least_100"]) != "0" || render(bt[0]["at_least_10"]) != fmt.Sprint(at10) ||
			render(bt[0]["at_least_1"]) != fmt.Sprint(at1) {
			t.Errorf("by trades %v, want 0 / %d / %d", bt, at10, at1)
		}
		var ba []map[string]any
		s.getJSON(t, "/activity/user_distribution_by_activity?"+rng, &ba)
		if len(ba) != hours {
			t.Fatalf("%d hourly rows", len(ba))
		}
		if g := ba[len(ba)-1]; render(g["new_users"]) != fmt.Sprint(at1) || render(g["total_users"]) != fmt.Sprint(at1) ||
			render(g["active_users"]) != "0" || render(g["inactive_users"]) != "0" {
			t.Errorf("by activity, last hour: %v", g)
		}
		// Deposits (actions.md): alice 100 USDC; carl 1,500 and dave 20,000.
		var bd []map[string]any
		s.getJSON(t, "/activity/user_distribution_by_deposits?time_resolution=day&"+rng, &bd)
		if got := fmt.Sprint(bd); got != fmt.Sprint([]map[string]any{
			{"labels": day + " 00:00:00", "small_depositors": 1, "medium_depositors": 2, "large_depositors": 0},
		}) {
			t.Errorf("by deposits %s", got)
		}
		var rr []map[string]any
		s.getJSON(t, "/activity/retention_rate?start_date=2026-11-16", &rr)
		if len(rr) != 1 || render(rr[0]["labels"]) != "2026-11-16 00:00:00" || render(rr[0]["new_users"]) != fmt.Sprint(at1) ||
			render(rr[0]["week1"]) != "0" {
			t.Errorf("retention %v", rr)
		}
	})

	t.Run("liquidations", func(t *testing.T) {
		// The tx of a fill is the block's MsgProposedOperations: txs[1] (a
		// vote-extension blob sits at txs[0] from height 2), hashed from the
		// recorded block's bytes.
		hashes := proposedOperationsHashes(t)
		atomic := map[int64]int64{0: -10, 1: -9} // genesis: BTC-USD, ETH-USD
		type liq struct{ labels, tx, account, market, position, value, usdc, insurance string }
		var wantRows []liq
		for _, m := range matches {
			if !m.Liq {
				continue
			}
			position := "long"
			if m.TakerBuy {
				position = "short"
			}
			value := trim(new(big.Rat).SetFrac(bigInt(t, m.Size), new(big.Int).Exp(big.NewInt(10), big.NewInt(-atomic[m.PerpetualID]), nil)).FloatString(12))
			wantRows = append(wantRows, liq{heightTime[m.Height].Format(time.DateTime), hashes[m.Height], fmt.Sprintf("%s/%d", m.Taker, m.TakerNumber),
				tickers[m.PerpetualID], position, value, usdc(bigInt(t, m.Notional)), usdc(bigInt(t, m.Insurance))})
		}
		if len(wantRows) != 20 {
			t.Fatalf("truth has %d liquidations, want 20 (README)", len(wantRows))
		}
		slices.Reverse(wantRows) // newest first (one liquidation per height here)
		var got []struct {
			Labels    string      `json:"labels"`
			TxHash    string      `json:"tx_hash"`
			Account   string      `json:"account"`
			Market    string      `json:"market"`
			Position  string      `json:"position"`
			Value     json.Number `json:"liquidated_value"`
			USDC      json.Number `json:"liquidated_value_usdc"`
			Insurance json.Number `json:"perp_insurance_delta"`
		}
		s.getJSON(t, "/liquidation/list", &got)
		if len(got) != len(wantRows) {
			t.Fatalf("%d liquidations, want %d", len(got), len(wantRows))
		}
		longs, shorts := 0, 0
		for i, g := range got {
			w := wantRows[i]
			if (liq{g.Labels, g.TxHash, g.Account, g.Market, g.Position, string(g.Value), string(g.USDC), string(g.Insurance)}) != w {
				t.Errorf("liquidation %d: %+v\nwant %+v", i, g, w)
			}
			if g.Position == "long" {
				longs++
			} else {
				shorts++
			}
		}
		// The recording's 20 liquidations all sold (liquidation_is_buy false):
		// every liquidated position was long.
		if longs != 20 || shorts != 0 {
			t.Errorf("%d long and %d short liquidations, want 20 and 0", longs, shorts)
		}

		// Per hour of the day, for BTC-USD: totals and the largest of each side.
		type side struct {
			total, top *big.Int
			tx         string
		}
		flow := map[string]map[string]*side{}
		for _, m := range matches {
			if !m.Liq || m.PerpetualID != 0 {
				continue
			}
			h := heightTime[m.Height].Truncate(time.Hour).Format(time.DateTime)
			pos := "long"
			if m.TakerBuy {
				pos = "short"
			}
			if flow[h] == nil {
				flow[h] = map[string]*side{}
			}
			sd := flow[h][pos]
			if sd == nil {
				sd = &side{total: new(big.Int), top: new(big.Int)}
				flow[h][pos] = sd
			}
			n := bigInt(t, m.Notional)
			sd.total.Add(sd.total, n)
			if n.Cmp(sd.top) > 0 {
				sd.top, sd.tx = n, hashes[m.Height]
			}
		}
		day := tip.Format(time.DateOnly)
		var fl []map[string]any
		s.getJSON(t, "/liquidation/flow_by_market?market=BTC-USD&start_date="+day+"&end_date="+day, &fl)
		if len(fl) != hours {
			t.Fatalf("%d hourly rows", len(fl))
		}
		for _, g := range fl {
			h := g["labels"].(string)
			for _, pos := range []string{"long", "short"} {
				total, top, tx := "0", "0", "null"
				if sd := flow[h][pos]; sd != nil {
					total, top, tx = usdc(sd.total), usdc(sd.top), sd.tx
				}
				if render(g["total_"+pos+"_liquidation_volume"]) != total || render(g["top_"+pos+"_liquidation"]) != top ||
					render(g["top_"+pos+"_liquidation_tx_id"]) != tx {
					t.Errorf("%s %s: %v, want total %s top %s tx %s", h, pos, g, total, top, tx)
				}
			}
		}
	})

	t.Run("open interest", func(t *testing.T) {
		// The node's open interest (truth/perpetuals.json, base quantums)
		// and oracle prices (truth/market_prices.json) at the last height.
		var perps struct {
			Perpetual []struct {
				Params struct {
					ID     int64 `json:"id"`
					Market int64 `json:"market_id"`
					Atomic int64 `json:"atomic_resolution"`
				} `json:"params"`
				OI string `json:"open_interest"`
			} `json:"perpetual"`
		}
		dydxtest.Truth(t, "perpetuals.json", &perps)
		byMarket := dydxtest.MarketPrices(t)
		usd := map[string]*big.Rat{}
		total := new(big.Rat)
		for _, p := range perps.Perpetual {
			oi := bigInt(t, p.OI)
			var held string
			if err := db.NewRaw("SELECT coalesce(sum(size) FILTER (WHERE size > 0), 0)::text FROM perp_positions WHERE perpetual_id = ?", p.Params.ID).
				Scan(ctx, &held); err != nil {
				t.Fatal(err)
			}
			if held != oi.String() {
				t.Errorf("perpetual %d: long positions %s, node's open interest %s", p.Params.ID, held, oi)
			}
			if oi.Sign() == 0 {
				continue
			}
			m := byMarket[p.Params.Market]
			v := new(big.Rat).SetInt(oi)
			v.Mul(v, new(big.Rat).SetInt(bigInt(t, m.Price)))
			e := p.Params.Atomic + m.Exponent
			v.Mul(v, new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Exp(big.NewInt(10), big.NewInt(-e), nil)))
			usd[tickers[p.Params.ID]] = v
			total.Add(total, v)
		}
		if len(usd) != 2 {
			t.Fatalf("open interest in %d markets, want BTC-USD and ETH-USD", len(usd))
		}
		day := tip.Format(time.DateOnly)
		// A bad market is a 400 even for a range not reached yet.
		if resp, body := s.get(t, "/trading/open_interest?market=NOPE-USD&start_date=2030-01-01&end_date=2030-01-02&granularity=day"); resp.StatusCode != 400 {
			t.Errorf("bad market after the tip: %d %s, want 400", resp.StatusCode, body)
		}
		for _, c := range []struct {
			market string
			want   *big.Rat
		}{{"BTC-USD", usd["BTC-USD"]}, {"1", usd["ETH-USD"]}, {"total", total}} {
			var got []struct {
				Labels       string      `json:"labels"`
				OpenInterest json.Number `json:"open_interest"`
			}
			s.getJSON(t, "/trading/open_interest?market="+c.market+"&start_date="+day+"&end_date="+day, &got)
			if len(got) != hours {
				t.Fatalf("%d hourly rows", len(got))
			}
			if got[0].Labels != first.Truncate(time.Hour).Format(time.DateTime) {
				t.Errorf("%s: first row %s, want the first block's hour (nothing is known before it)", c.market, got[0].Labels)
			}
			if w := trim(c.want.FloatString(6)); string(got[len(got)-1].OpenInterest) != w {
				t.Errorf("%s: open interest at the last block %s, want %s", c.market, got[len(got)-1].OpenInterest, w)
			}
		}
	})

	t.Run("chain revenue", func(t *testing.T) {
		// 14 signed txs paid 0.01 NATIVE (10^16 adv4tnt) each; NATIVE is
		// priced by oracle market 11 (genesis rewards params), whose last
		// price in the recording's only hour is the node's price at 520.
		var txFees *big.Rat
		if p, ok := dydxtest.MarketPrices(t)[11]; ok {
			txFees = new(big.Rat).SetInt(bigInt(t, p.Price))
			txFees.Mul(txFees, new(big.Rat).SetFrac(big.NewInt(14), new(big.Int).Exp(big.NewInt(10), big.NewInt(2-p.Exponent), nil)))
		}
		if txFees == nil {
			t.Fatal("no price of market 11 in the truth")
		}
		var feeTxs int64
		if err := db.NewRaw(`SELECT count(*) FROM txs WHERE fee @> '[{"denom": "adv4tnt", "amount": "10000000000000000"}]'`).Scan(ctx, &feeTxs); err != nil || feeTxs != 14 {
			t.Fatalf("%d txs paid 0.01 NATIVE, want 14 (%v)", feeTxs, err)
		}
		allFees := new(big.Int).Add(fees[0], fees[1])
		day := tip.Format(time.DateOnly)
		_, body := s.get(t, "/perp/tokenomics/chain_revenue?start_date="+day+"&end_date="+day)
		want := fmt.Sprintf(`[{"labels":"%s 00:00:00","source":"trading_fees","amount":%s},{"labels":"%s 00:00:00","source":"tx_fees","amount":%s}]`,
			day, usdc(allFees), day, trim(txFees.FloatString(18)))
		if strings.TrimSpace(string(body)) != want {
			t.Errorf("chain revenue\n%s\nwant\n%s", body, want)
		}
		var v []map[string]any
		s.getJSON(t, "/perp/tokenomics/chain_revenue?start_date="+day+"&end_date="+day, &v)
	})

	t.Run("module accounts", func(t *testing.T) {
		// The node's bank balances at the last height (truth/bank_balances.json)
		// of the four treasury module accounts, in NATIVE (18 decimals), and in
		// USD at the price of market 11 (the rewards params' market).
		var bank struct {
			Balances map[string][]struct {
				Denom  string `json:"denom"`
				Amount string `json:"amount"`
			} `json:"balances"`
		}
		dydxtest.Truth(t, "bank_balances.json", &bank)
		p11 := dydxtest.MarketPrices(t)[11]
		price := new(big.Rat).SetFrac(bigInt(t, p11.Price), new(big.Int).Exp(big.NewInt(10), big.NewInt(-p11.Exponent), nil))
		wantNative, wantUSD := map[string]string{}, map[string]string{}
		nonzero := 0
		for module, col := range map[string]string{"community_treasury": "community_treasury", "community_vester": "community_treasury_vester",
			"rewards_treasury": "rewards_treasury", "rewards_vester": "rewards_treasury_vester"} {
			addr, err := cosmos.ModuleAddress("dydx", module)
			if err != nil {
				t.Fatal(err)
			}
			bal := new(big.Rat)
			for _, c := range bank.Balances[addr] {
				if c.Denom == "adv4tnt" {
					bal.SetFrac(bigInt(t, c.Amount), new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil))
					nonzero++
				}
			}
			wantNative[col] = trim(bal.FloatString(18))
			wantUSD[col] = trim(new(big.Rat).Mul(bal, price).FloatString(6))
		}
		// The localnet funds one of them (the others hold nothing: 0).
		if nonzero != 1 {
			t.Fatalf("%d of the 4 module accounts hold NATIVE in the truth, want 1", nonzero)
		}
		day := tip.Format(time.DateOnly)
		for unit, want := range map[string]map[string]string{"native": wantNative, "dollar": wantUSD} {
			var got []map[string]any
			s.getJSON(t, "/tokenomics/wallets/module_accounts?unit="+unit+"&start_date="+day+"&end_date="+day, &got)
			if len(got) != 1 {
				t.Fatalf("%s: %d rows", unit, len(got))
			}
			for col, w := range want {
				if render(got[0][col]) != w {
					t.Errorf("%s %s = %v, want %s", unit, col, got[0][col], w)
				}
			}
		}
	})

	t.Run("supply", func(t *testing.T) {
		// truth/total_supply.json: 10^27 adv4tnt (10^9 NATIVE) at the last
		// height, as at genesis; the localnet neither mints nor burns NATIVE.
		for _, c := range []struct{ metric, want string }{
			{"total_supply", "1000000000"}, {"max_supply", "1000000000"}, {"minted_supply", "0"}, {"burnt_supply", "0"},
		} {
			var got map[string]any
			s.getJSON(t, "/perp/transparency/supply?metric="+c.metric, &got)
			if len(got) != 1 || render(got[c.metric]) != c.want {
				t.Errorf("%s: %v, want %s", c.metric, got, c.want)
			}
		}
		var dbg map[string]any
		s.getJSON(t, "/perp/transparency/supply?metric=circulating_supply&mode=debug", &dbg)
		comps, _ := dbg["components"].(map[string]any)
		locked := new(big.Rat)
		for _, m := range report.TreasuryModules {
			v, ok := new(big.Rat).SetString(render(comps[m]))
			if !ok {
				t.Fatalf("component %s: %v", m, comps[m])
			}
			locked.Add(locked, v)
		}
		circ := new(big.Rat).Sub(big.NewRat(1_000_000_000, 1), locked)
		if locked.Sign() == 0 || render(dbg["circulating_supply"]) != trim(circ.FloatString(18)) {
			t.Errorf("circulating %v with locked %s, want %s", dbg["circulating_supply"], locked.FloatString(18), circ.FloatString(18))
		}
	})

	t.Run("validators", func(t *testing.T) {
		// truth/staking_validators.json: alice's validator holds 509,000
		// NATIVE at the last height (500,000 self-delegated in its gentx,
		// then the recording's delegations and unbonding), all of the
		// bonded pool (truth/staking_pool.json).
		var vals struct {
			Validators []struct {
				Operator string `json:"operator_address"`
				Tokens   string `json:"tokens"`
			} `json:"validators"`
		}
		dydxtest.Truth(t, "staking_validators.json", &vals)
		if len(vals.Validators) != 1 {
			t.Fatalf("%d validators in the truth, want 1", len(vals.Validators))
		}
		v := vals.Validators[0]
		tokens := trim(new(big.Rat).SetFrac(bigInt(t, v.Tokens), new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)).FloatString(18))
		if tokens != "509000" {
			t.Fatalf("truth tokens %s", tokens)
		}
		_, body := s.get(t, "/aux/validator_listings")
		if want := `[{"validator":"` + v.Operator + `","token_amount":509000}]`; strings.TrimSpace(string(body)) != want {
			t.Errorf("validator listings %s, want %s", body, want)
		}
		var l []map[string]any
		s.getJSON(t, "/aux/validator_listings", &l)
		day := tip.Format(time.DateOnly)
		_, body = s.get(t, "/staking/share_by_validator?validators="+v.Operator+",total&start_date="+day+"&end_date="+day)
		if want := `[{"labels":"` + day + ` 00:00:00","` + v.Operator + `":509000,"total":509000}]`; strings.TrimSpace(string(body)) != want {
			t.Errorf("share by validator %s, want %s", body, want)
		}
		var sv []map[string]any
		s.getJSON(t, "/staking/share_by_validator?start_date="+day+"&end_date="+day, &sv)
		if resp, body := s.get(t, "/staking/share_by_validator?validators=dydxvaloper1nope"); resp.StatusCode != 400 {
			t.Errorf("unknown validator: %d %s", resp.StatusCode, body)
		}
	})

	t.Run("staking", func(t *testing.T) {
		// The distribution module's rewards events (block_rewards, kind
		// rewards) in USDC and NATIVE, NATIVE at market 11's price, 509,000
		// NATIVE bonded, over the seconds from genesis to the last block.
		var sums struct {
			USDC   string `bun:"usdc"`
			Native string `bun:"native"`
		}
		if err := db.NewRaw(`SELECT coalesce(sum(amount) FILTER (WHERE denom LIKE 'ibc/%'), 0)::text AS usdc,
			coalesce(sum(amount) FILTER (WHERE denom = 'adv4tnt'), 0)::text AS native FROM block_rewards WHERE kind = 'rewards'`).Scan(ctx, &sums); err != nil {
			t.Fatal(err)
		}
		usdcR, _ := new(big.Rat).SetString(sums.USDC)
		nativeR, _ := new(big.Rat).SetString(sums.Native)
		usdcR.Quo(usdcR, big.NewRat(1_000_000, 1))
		nativeR.Quo(nativeR, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)))
		p11 := dydxtest.MarketPrices(t)[11]
		price := new(big.Rat).SetFrac(bigInt(t, p11.Price), new(big.Int).Exp(big.NewInt(10), big.NewInt(-p11.Exponent), nil))
		genesis := time.Date(2026, 11, 21, 21, 29, 4, 0, time.UTC) // README
		covered := int64(tip.Sub(genesis) / time.Second)
		rewards := new(big.Rat).Add(usdcR, new(big.Rat).Mul(nativeR, price))
		wantAPR := new(big.Rat).Quo(rewards, new(big.Rat).Mul(big.NewRat(509000, 1), price))
		wantAPR.Mul(wantAPR, big.NewRat(365*86400*100, covered))
		aprText := trim(wantAPR.FloatString(6))
		if usdcR.Sign() == 0 || nativeR.Sign() == 0 {
			t.Fatalf("the recording pays rewards in both: %s USDC, %s NATIVE", usdcR.FloatString(6), nativeR.FloatString(18))
		}
		var got map[string]any
		s.getJSON(t, "/perp/transparency/staking-apr?mode=debug", &got)
		comps, _ := got["components"].(map[string]any)
		if render(got["staking_apr"]) != aprText || render(comps["bonded_native"]) != "509000" ||
			render(comps["rewards_usdc_30d"]) != trim(usdcR.FloatString(6)) || render(comps["price_native"]) != trim(price.FloatString(18)) {
			t.Errorf("staking APR %v, want %s (bonded 509000, rewards %s USDC, price %s)", got, aprText, usdcR.FloatString(6), price.FloatString(18))
		}
		day := tip.Format(time.DateOnly)
		var supply []map[string]any
		s.getJSON(t, "/perp/tokenomics/staking_supply?start_date="+day+"&end_date="+day, &supply)
		// Protocol revenue: every fill's fees, and 14 txs' 0.01 NATIVE fees.
		revenue := new(big.Rat).SetFrac(new(big.Int).Add(fees[0], fees[1]), big.NewInt(1_000_000))
		revenue.Add(revenue, new(big.Rat).Mul(big.NewRat(14, 100), price))
		if len(supply) != 1 || render(supply[0]["stakingSupply"]) != "509000" || render(supply[0]["stakingApr"]) != aprText ||
			render(supply[0]["protocolRevenue"]) != trim(revenue.FloatString(18)) || render(supply[0]["historicUsers"]) != fmt.Sprint(len(want)) ||
			supply[0]["buybackFee"] != nil || supply[0]["buybackDeposit"] != nil {
			t.Errorf("staking supply %v (want APR %s, revenue %s, %d traders)", supply, aprText, revenue.FloatString(18), len(want))
		}
		var split []map[string]any
		s.getJSON(t, "/apr_split?start_date="+day+"&end_date="+day, &split)
		if len(split) != 1 || render(split[0]["1d_trailing_avg"]) != aprText || render(split[0]["30d_trailing_avg"]) != aprText {
			t.Errorf("apr split %v, want %s", split, aprText)
		}
	})

	// A reset watermark rebuilds the reports: the same answer, no fill twice.
	var before []map[string]any
	s.getJSON(t, "/perp/crm?limit=50", &before)
	if _, err := db.ExecContext(ctx, "UPDATE aggregator_jobs SET watermark = 100 WHERE starts_with(name, 'perp_')"); err != nil {
		t.Fatal(err)
	}
	run()
	var after []map[string]any
	s.getJSON(t, "/perp/crm?limit=50", &after)
	if b, a := fmt.Sprint(before), fmt.Sprint(after); a != b {
		t.Errorf("after a rebuild\n%s\nwant\n%s", a, b)
	}

	// A market missing from the catalog (as one listed after genesis would
	// be): what needs its units is 503, not a partial number; listings name
	// it by its id.
	if _, err := db.ExecContext(ctx, "DELETE FROM dydx_perpetuals WHERE perpetual_id = 1"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "UPDATE aggregator_jobs SET watermark = 0 WHERE starts_with(name, 'perp_')"); err != nil {
		t.Fatal(err)
	}
	run()
	ethLiquidations := false
	for _, m := range matches {
		ethLiquidations = ethLiquidations || (m.Liq && m.PerpetualID == 1)
	}
	for path, want := range map[string]int{"/trading/open_interest": 503, "/trading/open_interest?market=0": 200,
		"/trading/open_interest?market=ETH-USD": 400, "/liquidation/list": map[bool]int{true: 503, false: 200}[ethLiquidations]} {
		if resp, body := s.get(t, path); resp.StatusCode != want {
			t.Errorf("without perpetual 1 in the catalog, %s: %d %s, want %d", path, resp.StatusCode, body, want)
		}
	}
	// A perpetual whose price market is missing from the catalog cannot be
	// valued either: its open interest is 503, not a series of zeros.
	if _, err := db.ExecContext(ctx, "DELETE FROM dydx_markets WHERE market_id = (SELECT market_id FROM dydx_perpetuals WHERE perpetual_id = 2 LIMIT 1)"); err != nil {
		t.Fatal(err)
	}
	if resp, body := s.get(t, "/trading/open_interest?market=2"); resp.StatusCode != 503 {
		t.Errorf("open interest of a perpetual without its price market: %d %s, want 503", resp.StatusCode, body)
	}
	var listings []map[string]any
	s.getJSON(t, "/aux/market_listings", &listings)
	found := false
	for _, l := range listings {
		if l["key"] == "1" && render(l["query_key"]) == "1" && render(l["daily_volume"]) == usdc(volume[1]) {
			found = true
		}
	}
	if !found || len(listings) != 36 {
		t.Errorf("listings without perpetual 1 in the catalog: %d rows, perpetual 1 named by its id: %v", len(listings), found)
	}
}

// proposedOperationsHashes hashes txs[1] of every recorded block (the
// MsgProposedOperations tx from height 2 on), as CometBFT names txs:
// upper-case hex SHA-256 of the tx bytes.
func proposedOperationsHashes(t *testing.T) map[int64]string {
	t.Helper()
	zr := dydxtest.Gunzip(t, "blocks.jsonl.gz")
	out := map[int64]string{}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var b struct {
			Result struct {
				Block struct {
					Header struct {
						Height string `json:"height"`
					} `json:"header"`
					Data struct {
						Txs [][]byte `json:"txs"`
					} `json:"data"`
				} `json:"block"`
			} `json:"result"`
		}
		if err := json.Unmarshal(sc.Bytes(), &b); err != nil {
			t.Fatal(err)
		}
		h, _ := strconv.ParseInt(b.Result.Block.Header.Height, 10, 64)
		if txs := b.Result.Block.Data.Txs; h >= 2 && len(txs) > 1 {
			sum := sha256.Sum256(txs[1])
			out[h] = strings.ToUpper(hex.EncodeToString(sum[:]))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// render prints a decoded JSON value: numbers as written, arrays joined by
// commas.
func render(v any) string {
	switch x := v.(type) {
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = render(e)
		}
		return strings.Join(parts, ",")
	case nil:
		return "null"
	default:
		return fmt.Sprint(x)
	}
}
