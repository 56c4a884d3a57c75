package dex_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cosmossdk.io/math"
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/api"
	"github.com/chainlens/chainlens/api/apikey"
	"github.com/chainlens/chainlens/api/dex"
	"github.com/chainlens/chainlens/api/route"
	"github.com/chainlens/chainlens/config"
	"github.com/chainlens/chainlens/internal/apitest"
	"github.com/chainlens/chainlens/internal/app"
	"github.com/chainlens/chainlens/internal/osmosistest"
	"github.com/chainlens/chainlens/internal/testdb"
)

type server struct {
	url, key string
}

// serve builds the API as `chainlens serve` does, with the clock fixed at now.
func serve(t *testing.T, db *bun.DB, chains []config.Chain, now time.Time) server {
	t.Helper()
	cfg, err := config.Parse([]byte("database: {url: postgres://postgres@127.0.0.1:5432/x}\n"), "", nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Chains = chains
	log := slog.New(slog.DiscardHandler)
	s, err := api.New(api.Options{Config: cfg.API, Ops: route.Table(), Handlers: app.Handlers(cfg, db), Auth: apikey.NewAuthenticator(db),
		Meter: apikey.NewMeter(db, log), Log: log, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler(cfg.API.Listen))
	t.Cleanup(srv.Close)
	key, _, err := apikey.Create(context.Background(), db, apikey.Spec{Name: t.Name(), Kind: apikey.Secret, Scopes: []string{"all"},
		QuotaCredits: 100000, QuotaPeriod: 24 * time.Hour, RatePerSec: 1000, RateBurst: 1000})
	if err != nil {
		t.Fatal(err)
	}
	return server{url: srv.URL, key: key}
}

func (s server) get(t *testing.T, path string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", s.url+path, nil)
	req.Header.Set("Authorization", "Bearer "+s.key)
	resp, err := (&http.Client{Transport: &http.Transport{DisableCompression: true}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp, strings.TrimSpace(string(body))
}

const (
	osmoRow  = `{"denom":"uosmo","name":"Osmosis","symbol":"OSMO","url":"https://example.test/osmo.png","usd_volume":21956.825307805597234465}`
	ionRow   = `{"denom":"uion","name":"","symbol":"","url":"","usd_volume":19757.46430111701378005}`
	atomRow  = `{"denom":"uatom","name":"Cosmos Hub","symbol":"ATOM","url":"","usd_volume":2542.042277485590742693}`
	usdcRow  = `{"denom":"uusdc","name":"USD Coin","symbol":"USDC","url":"https://example.test/usdc.png","usd_volume":1595.507910100587779897}`
	wethRow  = `{"denom":"uweth","name":"Wrapped Ether","symbol":"WETH","url":"","usd_volume":914.604361018091447981}`
	allAsset = "[" + osmoRow + "," + ionRow + "," + atomRow + "," + usdcRow + "," + wethRow + "]"
)

// TestEndpointsOnLocalnet indexes the recorded Osmosis localnet, runs the
// dex jobs once and calls every built endpoint over HTTP. The values are
// the ones aggregator/dex derives hop by hop from the swaps.
func TestEndpointsOnLocalnet(t *testing.T) {
	db, _ := testdb.New(t)
	ch := osmosistest.Index(t, db)
	cfg := &config.Config{Chains: []config.Chain{ch}}
	sched, err := aggregator.New(db, config.Aggregator{}, slog.New(slog.DiscardHandler), nil, app.Jobs(cfg)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := sched.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	s := serve(t, db, cfg.Chains, time.Date(2026, 11, 21, 22, 30, 0, 0, time.UTC))

	cases := []struct {
		name, path string
		status     int
		body       string // exact JSON, or a substring for problems
	}{
		{"top assets, date range", "/trading/volume/top_assets_date_range?start_date=2026-11-21&end_date=2026-11-21", 200, allAsset},
		{"top assets, limit", "/trading/volume/top_assets_date_range?start_date=2026-11-21T21:00:00Z&end_date=2026-11-21%2021:59:59&limit=2", 200,
			"[" + osmoRow + "," + ionRow + "]"},
		{"top assets, range after the hour", "/trading/volume/top_assets_date_range?start_date=2026-11-21T21:00:01Z&end_date=2026-11-22", 200, "[]"},
		{"top assets, bad range", "/trading/volume/top_assets_date_range?start_date=2026-11-22&end_date=2026-11-21", 400, "start_date"},
		{"last period, default 24 h", "/trading/volume/top_assets_last_period_hours", 200, allAsset},
		{"last period, 1 h overlaps 21:00", "/trading/volume/top_assets_last_period_hours?period=1&limit=1", 200, "[" + osmoRow + "]"},
		{"last period, bad period", "/trading/volume/top_assets_last_period_hours?period=0", 400, "period"},
		{"price by denom", "/tokens/v2/real-time/uosmo/price", 200, `{"denom":"uosmo","usd_price":1.81103865829427774}`},
		{"price by symbol, routed through OSMO", "/tokens/v2/real-time/ATOM/price", 200, `{"denom":"uatom","usd_price":17.145233255422220063}`},
		{"price of the anchor", "/tokens/v2/real-time/uusdc/price", 200, `{"denom":"uusdc","usd_price":1}`},
		{"price of an unknown asset", "/tokens/v2/real-time/ufoo/price", 404, "asset ufoo not found"},
		{"cumulative volume", "/kpi/cumulative_trading_volume?start_date=2026-11-20&end_date=2026-11-25", 200,
			`[{"labels":"2026-11-21 00:00:00","value":23383.222078763440492543}]`},
		{"cumulative volume, days before the data", "/kpi/cumulative_trading_volume?start_date=2026-11-01&end_date=2026-11-20", 200, "[]"},
		{"cumulative volume, default range", "/kpi/cumulative_trading_volume", 200,
			`[{"labels":"2026-11-21 00:00:00","value":23383.222078763440492543}]`},
		{"pool listings", "/aux/pool_listings", 200, "POOLS"},
		{"pool fees", "/fees/v1/pools", 200, "FEES"},
		{"pool liquidity over time", "/pools/liquidity/1/over_time", 200, "LIQ"},
		{"token data", "/tokens/v2/OSMO", 200, "TOKEN"},
		{"token data, all", "/tokens/v2/all", 200, "TOKENS"},
		{"token data, unknown", "/tokens/v2/ufoo", 404, "asset ufoo not found"},
		{"chain revenue", "/tokenomics/chain_revenue?start_date=2026-11-21&end_date=2026-11-21", 200, "REV"},
		{"chain revenue, other days", "/tokenomics/chain_revenue?start_date=2026-11-01&end_date=2026-11-20", 200, "[]"},
		{"cumulative protocol revenue", "/kpi/cumulative_protocol_revenue", 200, "CUMREV"},
		{"liquidity of an unknown pool", "/pools/liquidity/99/over_time", 404, "pool 99 not found"},
		{"liquidity of a bad pool id", "/pools/liquidity/x1/over_time", 400, "pool_id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, body := s.get(t, c.path)
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, c.status, body)
			}
			if c.status != 200 {
				if !strings.Contains(body, c.body) {
					t.Errorf("body %s, want it to contain %q", body, c.body)
				}
				return
			}
			if c.body == "POOLS" {
				checkPoolListings(t, body)
			} else if c.body == "FEES" {
				checkPoolFees(t, body)
			} else if c.body == "LIQ" {
				checkPoolLiquidity(t, db, body)
			} else if c.body == "TOKEN" || c.body == "TOKENS" {
				checkTokens(t, c.body, body)
			} else if c.body == "REV" || c.body == "CUMREV" {
				checkRevenue(t, db, c.body, body)
			} else if body != c.body {
				t.Errorf("body\n got %s\nwant %s", body, c.body)
			}
			validateAgainstOpenAPI(t, s, c.path, resp, body)
			if h := resp.Header.Get("X-Data-Height"); h != "299" {
				t.Errorf("X-Data-Height %q", h)
			}
			if h := resp.Header.Get("X-Data-Time"); h != "2026-11-21T21:32:53Z" {
				t.Errorf("X-Data-Time %q", h)
			}
		})
	}

	// Malformed and hostile values on indexed data: never a 5xx.
	for _, path := range []string{"/tokens/v2/real-time/%s/price", "/trading/volume/top_assets_date_range?start_date=%s&end_date=%[1]s&limit=%[1]s",
		"/trading/volume/top_assets_last_period_hours?period=%s&limit=%[1]s", "/kpi/cumulative_trading_volume?start_date=%s"} {
		for _, v := range []string{"' OR 1=1--", "%00", "ibc%2F498A", "..%2F..", "9999999999999999999", "-1", "1e309", "0001-01-01", "9999-12-31"} {
			if resp, body := s.get(t, fmt.Sprintf(path, v)); resp.StatusCode >= 500 {
				t.Errorf("%s with %q: %d %s", path, v, resp.StatusCode, body)
			}
		}
	}

	// Two hours later the last hour holds no swaps.
	later := serve(t, db, cfg.Chains, time.Date(2026, 11, 21, 23, 30, 0, 0, time.UTC))
	if resp, body := later.get(t, "/trading/volume/top_assets_last_period_hours?period=1"); resp.StatusCode != 200 || body != "[]" {
		t.Errorf("later: %d %s", resp.StatusCode, body)
	}
}

// TestWithoutDexChain answers 503 when no osmosis chain is configured, and
// when it is configured but not indexed yet.
func TestWithoutDexChain(t *testing.T) {
	db, _ := testdb.New(t)
	for name, chains := range map[string][]config.Chain{
		"none configured": nil,
		"not indexed":     {osmosistest.Chain("http://127.0.0.1:1")},
	} {
		t.Run(name, func(t *testing.T) {
			s := serve(t, db, chains, time.Now())
			for _, path := range []string{"/trading/volume/top_assets_date_range", "/trading/volume/top_assets_last_period_hours",
				"/tokens/v2/real-time/uosmo/price", "/kpi/cumulative_trading_volume", "/cl/v1/position/last/id/1", "/pools/depth/1/current",
				"/pools/depth/1/over_time?percent=2&start_date=2026-11-21", "/supply/v1/metrics", "/tokenomics/assets_in_chain"} {
				if resp, body := s.get(t, path); resp.StatusCode != 503 {
					t.Errorf("%s: %d %s", path, resp.StatusCode, body)
				}
			}
		})
	}
}

// validateAgainstOpenAPI checks a real answer against the server's own
// OpenAPI document (the route table's response schema).
func validateAgainstOpenAPI(t *testing.T, s server, path string, resp *http.Response, body string) {
	t.Helper()
	_, doc := s.get(t, "/openapi.json")
	apitest.Validate(t, []byte(doc), "GET", path, resp, []byte(body))
}

// checkPoolListings checks the pool listing against what is known
// independently: the five localnet pools (truth/pools.json), ordered by
// volume, whose volumes add up exactly to the total swap volume that the
// cumulative volume KPI reports (every hop is counted once in its pool).
func checkPoolListings(t *testing.T, body string) {
	t.Helper()
	var pools []struct {
		QueryKey    int64       `json:"query_key"`
		Name        string      `json:"name"`
		Type        string      `json:"type"`
		DailyVolume json.Number `json:"daily_volume"`
	}
	if err := json.Unmarshal([]byte(body), &pools); err != nil {
		t.Fatal(err)
	}
	if len(pools) != 5 {
		t.Fatalf("%d pools, want 5: %s", len(pools), body)
	}
	total := math.LegacyZeroDec()
	prev := math.LegacyDec{}
	for i, p := range pools {
		v, err := math.LegacyNewDecFromStr(p.DailyVolume.String())
		if err != nil {
			t.Fatalf("pool %d volume %q", p.QueryKey, p.DailyVolume)
		}
		if i > 0 && v.GT(prev) {
			t.Errorf("pools not ordered by volume: %s", body)
		}
		prev = v
		total = total.Add(v)
		if p.Name == "" || p.Type == "" {
			t.Errorf("pool %d lacks name or type", p.QueryKey)
		}
	}
	want, _ := math.LegacyNewDecFromStr("23383.222078763440492543")
	if !total.Sub(want).Abs().LTE(math.LegacyNewDecWithPrec(1, 17)) {
		t.Errorf("pool volumes add up to %s, want the total swap volume %s", total, want)
	}
}

// checkPoolFees checks the pools fees report against the pool listing's
// volumes (the same table) and each pool's swap fee rate from
// truth/pools.json: fees = volume × rate, exactly.
func checkPoolFees(t *testing.T, body string) {
	t.Helper()
	var rep struct {
		LastUpdateAt int64 `json:"last_update_at"`
		Data         []struct {
			PoolID       string      `json:"pool_id"`
			Volume24h    json.Number `json:"volume_24h"`
			Volume7d     json.Number `json:"volume_7d"`
			FeesSpent24h json.Number `json:"fees_spent_24h"`
			FeesSpent7d  json.Number `json:"fees_spent_7d"`
			FeesPct      string      `json:"fees_percentage"`
		} `json:"data"`
	}
	if err := json.Unmarshal([]byte(body), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.LastUpdateAt != time.Date(2026, 11, 21, 21, 32, 53, 0, time.UTC).Unix() || len(rep.Data) != 5 {
		t.Fatalf("report %s", body)
	}
	for _, p := range rep.Data {
		if p.Volume24h != p.Volume7d {
			t.Errorf("pool %s: all swaps are within 24 h, yet 24h %s != 7d %s", p.PoolID, p.Volume24h, p.Volume7d)
		}
		rate, err := math.LegacyNewDecFromStr(strings.TrimSuffix(p.FeesPct, "%"))
		if err != nil {
			t.Fatalf("pool %s fees_percentage %q", p.PoolID, p.FeesPct)
		}
		v, err1 := math.LegacyNewDecFromStr(p.Volume24h.String())
		f, err2 := math.LegacyNewDecFromStr(p.FeesSpent24h.String())
		if err1 != nil || err2 != nil {
			t.Fatalf("pool %s: volume %q fees %q", p.PoolID, p.Volume24h, p.FeesSpent24h)
		}
		if want := v.Mul(rate).QuoInt64(100); !want.Sub(f).Abs().LTE(math.LegacyNewDecWithPrec(1, 17)) {
			t.Errorf("pool %s: fees %s, want volume %s × %s = %s", p.PoolID, f, v, p.FeesPct, want)
		}
	}
	if rep.Data[0].PoolID != "1" || rep.Data[0].FeesPct != "0.3%" { // truth/pools.json: pool 1 swap_fee 0.003
		t.Errorf("pool 1: %+v", rep.Data[0])
	}
}

// checkPoolLiquidity: one day of history (every block is on 2026-11-21),
// with the value of osmosis_pool_liquidity_daily, which the aggregator's
// test checks against the node's own reserves.
func checkPoolLiquidity(t *testing.T, db *bun.DB, body string) {
	t.Helper()
	var want string
	if err := db.NewRaw("SELECT liquidity_usd::text FROM osmosis_pool_liquidity_daily WHERE pool_id = 1").Scan(context.Background(), &want); err != nil {
		t.Fatal(err)
	}
	d, err := math.LegacyNewDecFromStr(want)
	if err != nil || !d.IsPositive() {
		t.Fatalf("pool 1 liquidity %q", want)
	}
	if exp := `[{"timestamp":"2026-11-21 00:00:00","liquidity_usd":` + string(dex.Number(want)) + `}]`; body != exp {
		t.Errorf("body\n got %s\nwant %s", body, exp)
	}
}

// checkRevenue: the day's two sources as the dex_revenue job stored them
// (its own test values them independently), and their sum as the
// cumulative protocol revenue of that single day.
func checkRevenue(t *testing.T, db *bun.DB, which, body string) {
	t.Helper()
	var fees, taker string
	if err := db.NewRaw("SELECT (SELECT amount_usd::text FROM osmosis_revenue_daily WHERE source = 'tx_fees'), (SELECT amount_usd::text FROM osmosis_revenue_daily WHERE source = 'taker_fees')").
		Scan(context.Background(), &fees, &taker); err != nil {
		t.Fatal(err)
	}
	want := `[{"labels":"2026-11-21 00:00:00","source":"taker_fees","amount":` + string(dex.Number(taker)) +
		`},{"labels":"2026-11-21 00:00:00","source":"tx_fees","amount":` + string(dex.Number(fees)) + `}]`
	if which == "CUMREV" {
		sum := math.LegacyMustNewDecFromStr(fees).Add(math.LegacyMustNewDecFromStr(taker))
		want = `[{"labels":"2026-11-21 00:00:00","value":` + string(dex.Number(sum.String())) + `}]`
	}
	if body != want {
		t.Errorf("body\n got %s\nwant %s", body, want)
	}
}

// checkTokens: OSMO's price and volume as the price and volume endpoints
// give them, no change (nothing an hour or a day before), and liquidity =
// the node's own reserves of uosmo in every pool (truth/pool_total_liquidity.json)
// at the price.
func checkTokens(t *testing.T, which, body string) {
	t.Helper()
	var toks []map[string]any
	dec := json.NewDecoder(strings.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&toks); err != nil {
		t.Fatal(err)
	}
	if which == "TOKENS" {
		if len(toks) != 5 {
			t.Errorf("%d tokens, want 5", len(toks))
		}
		return
	}
	if len(toks) != 1 {
		t.Fatalf("tokens %s", body)
	}
	tok := toks[0]
	for k, want := range map[string]any{"denom": "uosmo", "symbol": "OSMO", "price": json.Number("1.81103865829427774"),
		"volume_24h": json.Number("21956.825307805597234465"), "price_1h_change": json.Number("0"), "price_24h_change": json.Number("0"),
		"volume_24h_change": json.Number("0"), "liquidity_24h_change": json.Number("0"), "exponent": json.Number("6"), "market_data_mcap": nil} {
		if tok[k] != want {
			t.Errorf("%s = %v, want %v", k, tok[k], want)
		}
	}
	var truth map[string]struct {
		Liquidity []struct{ Denom, Amount string } `json:"liquidity"`
	}
	raw, err := os.ReadFile(filepath.Join(osmosistest.Dir(), "truth", "pool_total_liquidity.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &truth); err != nil {
		t.Fatal(err)
	}
	amt := math.ZeroInt()
	for _, p := range truth {
		for _, a := range p.Liquidity {
			if a.Denom == "uosmo" {
				n, _ := math.NewIntFromString(a.Amount)
				amt = amt.Add(n)
			}
		}
	}
	want := math.LegacyNewDecFromInt(amt).Mul(math.LegacyMustNewDecFromStr("1.81103865829427774")).QuoInt64(1_000_000)
	got := math.LegacyMustNewDecFromStr(tok["liquidity"].(json.Number).String())
	if got.Sub(want).Abs().GT(math.LegacyNewDecWithPrec(1, 15)) {
		t.Errorf("liquidity %s, want %s", got, want)
	}
}
