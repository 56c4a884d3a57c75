package dex_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cosmossdk.io/math"
	"github.com/uptrace/bun"

	"github.com/chainlens/chainlens/aggregator"
	"github.com/chainlens/chainlens/api"
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
	srv := apitest.Serve(t, db, &config.Config{API: apitest.DefaultAPI(t, false), Chains: chains}, now)
	return server{url: srv.URL, key: srv.Key}
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
	t.Parallel()
	db, _, cfg := aggregatedLocalnet(t)
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
		// A bucket belongs to the window when its start does: at 22:30 the
		// last hour (21:30-22:30) does not hold the 21:00 bucket, two do.
		{"last period, 1 h: the 21:00 bucket started before", "/trading/volume/top_assets_last_period_hours?period=1&limit=1", 200, "[]"},
		{"last period, 2 h hold 21:00", "/trading/volume/top_assets_last_period_hours?period=2&limit=1", 200, "[" + osmoRow + "]"},
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
		{"token chart, hourly, open bar left out", "/tokens/v2/historical/OSMO/chart", 200,
			`[{"time":1795294800,"open":1.672045227366185554,"close":1.81103865829427774,"high":1.832435014918613138,"low":1.672045227366185554,"volume":21956.825307805597234465}]`},
		{"token chart, daily bar still open", "/tokens/v2/historical/uatom/chart?tf=1440", 200, "[]"},
		{"token chart, daily bar with realtime", "/tokens/v2/historical/uatom/chart?tf=1440&realtime=true", 200,
			`[{"time":1795219200,"open":16.681356665597766691,"close":17.145233255422220063,"high":18.247657185379260812,"low":16.669277144722144816,"volume":2542.042277485590742693}]`},
		{"token chart, minutes of the anchor", "/tokens/v2/historical/uusdc/chart?tf=1", 200,
			`[{"time":1795296480,"open":1,"close":1,"high":1,"low":1,"volume":489.073420857459668781},{"time":1795296540,"open":1,"close":1,"high":1,"low":1,"volume":214.800767939736039595},{"time":1795296600,"open":1,"close":1,"high":1,"low":1,"volume":393.873669843021500903},{"time":1795296660,"open":1,"close":1,"high":1,"low":1,"volume":276.311070294655567037},{"time":1795296720,"open":1,"close":1,"high":1,"low":1,"volume":221.448981165715003581}]`},
		{"token chart, weekly", "/tokens/v2/historical/uion/chart?tf=10080&realtime=true", 200,
			`[{"time":1794787200,"open":3.347344987025339671,"close":4.153327807957258175,"high":4.991270146552424329,"low":3.347344987025339671,"volume":19757.46430111701378005}]`},
		{"token chart, unknown asset", "/tokens/v2/historical/ufoo/chart", 404, "ufoo symbol not found"},
		{"token chart, bad tf", "/tokens/v2/historical/uosmo/chart?tf=7", 400, "tf"},
		{"pair chart, 1d in 15 min bars", "/pairs/v1/historical/3/chart?asset_in=uatom&asset_out=uosmo&range=1d", 200,
			`[{"time":1795295700,"open":9.97661809176916078,"close":9.768229614190934875,"high":10.00726391743266673,"low":9.768229614190934875},{"time":1795296600,"open":9.7616042182631621,"close":9.46707193515704154,"high":9.7616042182631621,"low":9.46707193515704154}]`},
		{"pair chart, by symbol, reversed", "/pairs/v1/historical/3/chart?asset_in=OSMO&asset_out=atom&asset_type=symbol&range=1d", 200,
			`[{"time":1795295700,"open":0.100234367077257669,"close":0.102372695923039702,"high":0.102372695923039702,"low":0.099927413551869927},{"time":1795296600,"open":0.102442178318301606,"close":0.105629280821917808,"high":0.105629280821917808,"low":0.102442178318301606}]`},
		{"pair chart, last hour in minutes", "/pairs/v1/historical/1/chart?asset_in=uion&asset_out=uusdc&range=1h", 200,
			`[{"time":1795296600,"open":4.240680857719679876,"close":4.212104275470389795,"high":4.240680857719679876,"low":4.212104275470389795},{"time":1795296660,"open":4.207792356822678589,"close":4.186132601157782995,"high":4.207792356822678589,"low":4.186132601157782995},{"time":1795296720,"open":4.183082889057498756,"close":4.153327807957258175,"high":4.183082889057498756,"low":4.153327807957258175}]`},
		{"pair chart, default 7d", "/pairs/v1/historical/4/chart?asset_in=uweth&asset_out=uusdc", 200,
			`[{"time":1795294800,"open":1.287355556004026744,"close":1.281698821270455963,"high":1.287355556004026744,"low":1.278464661218824602}]`},
		{"pair chart, unknown pool", "/pairs/v1/historical/99/chart?asset_in=uatom&asset_out=uosmo", 404, "pool 99 not found"},
		{"pair chart, asset not in pool", "/pairs/v1/historical/3/chart?asset_in=uusdc&asset_out=uosmo", 404, "asset_in uusdc not found in pool 3"},
		{"pair chart, same asset twice", "/pairs/v1/historical/3/chart?asset_in=uatom&asset_out=ATOM&asset_type=symbol", 400, "must differ"},
		{"pair chart, bad range", "/pairs/v1/historical/3/chart?asset_in=uatom&asset_out=uosmo&range=2d", 400, "range"},
		{"pair chart, missing asset", "/pairs/v1/historical/3/chart?asset_in=uatom", 400, "asset_out"},
		// Pool 3's row checked by hand: price = 74752/7896 (its last hop, height 294);
		// 146284448uatom and 1422390163uosmo traded (its token_swapped events in
		// block_results); liquidity = truth/pools.json reserves 5544494494uatom and
		// 52595525090uosmo at the ATOM and OSMO prices; liquidity_atom = that / ATOM's price.
		{"pairs summary", "/pairs/v2/summary", 200, `{"last_update_at":1795296773,"data":[{"pool_address":"osmo19e2mf7cywkv7zaug6nk5f87d07fxrdgrladvymh2gwv5crvm3vnsuewhh7","pool_id":"1","base_name":"","base_symbol":"","base_address":"uion","quote_name":"Osmosis","quote_symbol":"OSMO","quote_address":"uosmo","price":2.351940633973080115,"base_volume_24h":989.715336,"quote_volume_24h":2621.259679,"volume_24h":4428.907419533805202298,"volume_7d":4428.907419533805202298,"liquidity":98637.88914931192898811,"liquidity_atom":5753.079452454662065153},{"pool_address":"osmo19e2mf7cywkv7zaug6nk5f87d07fxrdgrladvymh2gwv5crvm3vnsuewhh7","pool_id":"1","base_name":"","base_symbol":"","base_address":"uion","quote_name":"USD Coin","quote_symbol":"USDC","quote_address":"uusdc","price":4.153327807957258175,"base_volume_24h":121.828298,"quote_volume_24h":517.591962,"volume_24h":511.792409939751810097,"volume_7d":511.792409939751810097,"liquidity":98637.88914931192898811,"liquidity_atom":5753.079452454662065153},{"pool_address":"osmo19e2mf7cywkv7zaug6nk5f87d07fxrdgrladvymh2gwv5crvm3vnsuewhh7","pool_id":"1","base_name":"Osmosis","base_symbol":"OSMO","base_address":"uosmo","quote_name":"USD Coin","quote_symbol":"USDC","quote_address":"uusdc","price":1.81103865829427774,"base_volume_24h":93.360883,"quote_volume_24h":169.14211,"volume_24h":169.111139142744521819,"volume_7d":169.111139142744521819,"liquidity":98637.88914931192898811,"liquidity_atom":5753.079452454662065153},{"pool_address":"osmo18ddcsq4jzf33x9f3vplv9779uvjq6ypx3en3wt9sd93njmas7ykst6z34u","pool_id":"2","base_name":"Wrapped Ether","base_symbol":"WETH","base_address":"uweth","quote_name":"USD Coin","quote_symbol":"USDC","quote_address":"uusdc","price":1.615393772862984062,"base_volume_24h":193.563187,"quote_volume_24h":401.943363,"volume_24h":325.016535809626422565,"volume_7d":325.016535809626422565,"liquidity":448.674000645585420725,"liquidity_atom":26.169022839260073645},{"pool_address":"osmo1aft40l3naq7mc9da59yc7mr7p7s02jx5ks7u3ujc6mhtl4vle47snef2ha","pool_id":"3","base_name":"Cosmos Hub","base_symbol":"ATOM","base_address":"uatom","quote_name":"Osmosis","quote_symbol":"OSMO","quote_address":"uosmo","price":9.46707193515704154,"base_volume_24h":146.284448,"quote_volume_24h":1422.390163,"volume_24h":2542.042277485590742693,"volume_7d":2542.042277485590742693,"liquidity":190314.180574310816262158,"liquidity_atom":11100.121983707833904234},{"pool_address":"osmo1ad4r3uh5pdn5pgg5hnl6u5utfeqmpwstlvgvg2h2jdztrcnwkqgs3hs85z","pool_id":"4","base_name":"USD Coin","base_symbol":"USDC","base_address":"uusdc","quote_name":"Wrapped Ether","quote_symbol":"WETH","quote_address":"uweth","price":0.7802144961081979,"base_volume_24h":589.900088,"quote_volume_24h":459.761336,"volume_24h":589.587825208465025416,"volume_7d":589.587825208465025416,"liquidity":43245.674484269175518346,"liquidity_atom":2522.314735531091707612},{"pool_address":"osmo1pjkt93g9lhntcpxk6pn04xwa87gf23wpjghjudql5p7n2exujh7szrdvtc","pool_id":"5","base_name":"","base_symbol":"","base_address":"uion","quote_name":"Osmosis","quote_symbol":"OSMO","quote_address":"uosmo","price":2.491072006210778288,"base_volume_24h":3538.276562,"quote_volume_24h":8248.253806,"volume_24h":14816.764471643456767655,"volume_7d":14816.764471643456767655,"liquidity":16352.25155078376574091,"liquidity_atom":953.749144568349806157}]}`},
		{"pairs summary, paged", "/pairs/v2/summary?offset=2&limit=2", 200, `{"last_update_at":1795296773,"data":[{"pool_address":"osmo19e2mf7cywkv7zaug6nk5f87d07fxrdgrladvymh2gwv5crvm3vnsuewhh7","pool_id":"1","base_name":"Osmosis","base_symbol":"OSMO","base_address":"uosmo","quote_name":"USD Coin","quote_symbol":"USDC","quote_address":"uusdc","price":1.81103865829427774,"base_volume_24h":93.360883,"quote_volume_24h":169.14211,"volume_24h":169.111139142744521819,"volume_7d":169.111139142744521819,"liquidity":98637.88914931192898811,"liquidity_atom":5753.079452454662065153},{"pool_address":"osmo18ddcsq4jzf33x9f3vplv9779uvjq6ypx3en3wt9sd93njmas7ykst6z34u","pool_id":"2","base_name":"Wrapped Ether","base_symbol":"WETH","base_address":"uweth","quote_name":"USD Coin","quote_symbol":"USDC","quote_address":"uusdc","price":1.615393772862984062,"base_volume_24h":193.563187,"quote_volume_24h":401.943363,"volume_24h":325.016535809626422565,"volume_7d":325.016535809626422565,"liquidity":448.674000645585420725,"liquidity_atom":26.169022839260073645}]}`},
		{"pairs summary, bad limit", "/pairs/v2/summary?limit=0", 400, "limit"},
		// assets_in_chain = the five pools' liquidity of the pairs summary above;
		// 7 wallets sent swaps (aggregator/dex TestActivityOnLocalnet); the
		// cumulative and 24 h volumes = the cumulative volume KPI; growth rates
		// are those values per second of a day (nothing a day before), and
		// 7 / (30 × 86400) traders per second.
		{"trading metrics", "/trading_metrics", 200,
			`{"assets_in_chain":{"value":348998.669759321271930249,"growth_rate_seconds":4.039336455547699906},"traders_last_30_days":{"value":7,"growth_rate_seconds":0.00000270061728395},"cumulative_volume":{"value":23383.222078763440492543,"growth_rate_seconds":0.270639144430132413},"volume_24h":{"value":23383.222078763440492543,"growth_rate_seconds":0.270639144430132413}}`},
		// dave's (osmo1dwyz79...) staking and liquidity are checked movement by
		// movement in aggregator/dex TestActivityOnLocalnet; totals add up the three.
		{"whales", "/activity/active_whales", 200,
			`[{"wallet":"osmo16kaefa02pez2jkxsnwrqmsc4ap9jnaadnac95n","trading_volume_last_7_days":2244.622091277846699479,"lp_volume_last_7_days":177136.317481754546954676,"staking_volume_last_7_days":685.22776331402957387,"total_volume_last_7_days":180066.167336346423228025},{"wallet":"osmo19cntltr3qf7pcny7xeq4lm7cl64xn54hvswrdh","trading_volume_last_7_days":1713.700195178746891383,"lp_volume_last_7_days":128179.694819263924083671,"staking_volume_last_7_days":608.886838859427863865,"total_volume_last_7_days":130502.281853302098838919},{"wallet":"osmo1rlnwmr3j2hkgvsaf0ldere6u0ca8rdg7xvx0sk","trading_volume_last_7_days":2247.0807000455341904,"lp_volume_last_7_days":46960.463622227905017085,"staking_volume_last_7_days":1368.690153309533760212,"total_volume_last_7_days":50576.234475582972967697},{"wallet":"osmo17qdmjdumw4xawam4g46gtwzle5rd4zwyfqvvza","trading_volume_last_7_days":8319.130060926116204143,"lp_volume_last_7_days":0,"staking_volume_last_7_days":0,"total_volume_last_7_days":8319.130060926116204143},{"wallet":"osmo1dwyz79xpa3ax9aa2l8rc0lpqg9thd0kfsexefg","trading_volume_last_7_days":3907.618447468899756781,"lp_volume_last_7_days":3186.782224040890394179,"staking_volume_last_7_days":899.161098404826153825,"total_volume_last_7_days":7993.561769914616304785},{"wallet":"osmo10djef6v9uls3svdz3438m05l8hak33rlwhk90s","trading_volume_last_7_days":2687.191272550097084156,"lp_volume_last_7_days":1674.1680515142230488,"staking_volume_last_7_days":521.232725358348092852,"total_volume_last_7_days":4882.592049422668225808},{"wallet":"osmo1e3l0nsmyaquh8f30kyzmtek6j02d0swu3jpyvs","trading_volume_last_7_days":2255.912654976417005266,"lp_volume_last_7_days":1811.038656483239081706,"staking_volume_last_7_days":0,"total_volume_last_7_days":4066.951311459656086972}]`},
		// carol's add_to_position at height 20 (position 3 → 9) counts what
		// she added, 37,576,990 and 85,442,213 base units (the new position's
		// amounts minus the old one's), not the old position twice over.
		{"whales by staking, top 2", "/activity/active_whales?order=delegations_volume_last_7_days&limit=2", 200,
			`[{"wallet":"osmo1rlnwmr3j2hkgvsaf0ldere6u0ca8rdg7xvx0sk","trading_volume_last_7_days":2247.0807000455341904,"lp_volume_last_7_days":46960.463622227905017085,"staking_volume_last_7_days":1368.690153309533760212,"total_volume_last_7_days":50576.234475582972967697},{"wallet":"osmo1dwyz79xpa3ax9aa2l8rc0lpqg9thd0kfsexefg","trading_volume_last_7_days":3907.618447468899756781,"lp_volume_last_7_days":3186.782224040890394179,"staking_volume_last_7_days":899.161098404826153825,"total_volume_last_7_days":7993.561769914616304785}]`},
		{"whales by lp", "/activity/active_whales?order=lp_volume_last_7_days&limit=3", 200,
			`[{"wallet":"osmo16kaefa02pez2jkxsnwrqmsc4ap9jnaadnac95n","trading_volume_last_7_days":2244.622091277846699479,"lp_volume_last_7_days":177136.317481754546954676,"staking_volume_last_7_days":685.22776331402957387,"total_volume_last_7_days":180066.167336346423228025},{"wallet":"osmo19cntltr3qf7pcny7xeq4lm7cl64xn54hvswrdh","trading_volume_last_7_days":1713.700195178746891383,"lp_volume_last_7_days":128179.694819263924083671,"staking_volume_last_7_days":608.886838859427863865,"total_volume_last_7_days":130502.281853302098838919},{"wallet":"osmo1rlnwmr3j2hkgvsaf0ldere6u0ca8rdg7xvx0sk","trading_volume_last_7_days":2247.0807000455341904,"lp_volume_last_7_days":46960.463622227905017085,"staking_volume_last_7_days":1368.690153309533760212,"total_volume_last_7_days":50576.234475582972967697}]`},
		{"whales, bad order", "/activity/active_whales?order=volume", 400, "order"},
		// Pool 3's net = its creation and join minus its exit, as in
		// aggregator/dex TestActivityOnLocalnet; total = every pool.
		{"liquidity flow", "/liquidity/liquidity_flow?start_date=2026-11-20&end_date=2026-11-23&pool=3,total&pool=5", 200,
			`[{"labels":"2026-11-21 00:00:00","3":190380.239993032330960756,"total":350065.393654710998798481,"5":16650.547658983850295026}]`}, // from the first indexed day
		{"liquidity flow, after the reports", "/liquidity/liquidity_flow?start_date=2026-11-21T22:00:00Z&end_date=2026-11-25", 503, "before start_date"},
		{"cumulative volume, after the reports", "/kpi/cumulative_trading_volume?start_date=2026-11-21T22:00:00Z&end_date=2026-11-25", 503, "before start_date"},
		{"liquidity flow, in the future", "/liquidity/liquidity_flow?start_date=2026-11-22&end_date=2026-11-25", 400, "start_date puts the range's start after the present"},
		{"liquidity flow, default total", "/liquidity/liquidity_flow?start_date=2026-11-21", 200,
			`[{"labels":"2026-11-21 00:00:00","total":350065.393654710998798481}]`},
		{"liquidity flow, repeated pool", "/liquidity/liquidity_flow?start_date=2026-11-21&pool=%203%20,3,4", 200,
			`[{"labels":"2026-11-21 00:00:00","3":190380.239993032330960756,"4":43245.158195067464887809}]`},
		{"liquidity flow, unknown pool", "/liquidity/liquidity_flow?pool=99", 400, "pool"},
		// Σ pool volume × swap fee (truth/pools.json: pool 1 0.003, 2 0.0005, 3 0.002,
		// 4 0.001, 5 0.002) over the pool volumes of the pairs summary above:
		// 5109.810968616301534214 (pool 1's three pairs), 325.016535809626422565,
		// 2542.042277485590742693, 589.587825208465025416, 14816.764471643456767655
		// = 50.7991424972202778600365, rounded to 18 decimals.
		{"cumulative supply-side revenue", "/kpi/cumulative_supply_side_revenue?start_date=2026-11-20&end_date=2026-11-25", 200,
			`[{"labels":"2026-11-21 00:00:00","value":50.79914249722027786}]`},
		{"cumulative supply-side revenue, default range", "/kpi/cumulative_supply_side_revenue", 200,
			`[{"labels":"2026-11-21 00:00:00","value":50.79914249722027786}]`},
		{"cumulative supply-side revenue, before the data", "/kpi/cumulative_supply_side_revenue?start_date=2026-11-01&end_date=2026-11-20", 200, "[]"},
		{"cumulative supply-side revenue, bad range", "/kpi/cumulative_supply_side_revenue?start_date=2026-11-22&end_date=2026-11-21", 400, "start_date"},
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
		"/trading/volume/top_assets_last_period_hours?period=%s&limit=%[1]s", "/kpi/cumulative_trading_volume?start_date=%s",
		"/tokens/v2/historical/%s/chart?tf=%[1]s&realtime=%[1]s", "/pairs/v1/historical/%s/chart?asset_in=%[1]s&asset_out=%[1]s&range=%[1]s",
		"/pairs/v1/historical/3/chart?asset_in=%s&asset_out=uosmo&asset_type=symbol", "/pairs/v2/summary?limit=%s&offset=%[1]s",
		"/activity/active_whales?limit=%s&order=%[1]s", "/liquidity/liquidity_flow?pool=%s&start_date=%[1]s",
		"/kpi/cumulative_supply_side_revenue?start_date=%s&end_date=%[1]s"} {
		for _, v := range []string{"' OR 1=1--", "%00", "ibc%2F498A", "..%2F..", "9999999999999999999", "-1", "1e309", "0001-01-01", "9999-12-31"} {
			if resp, body := s.get(t, fmt.Sprintf(path, v)); resp.StatusCode >= 500 {
				t.Errorf("%s with %q: %d %s", path, v, resp.StatusCode, body)
			}
		}
	}

	// Two hours later the last hour holds no swaps.
	later := serve(t, db, cfg.Chains, time.Date(2026, 11, 21, 23, 30, 0, 0, time.UTC))
	// Eight days later the 7-day and 24-hour windows hold nothing.
	weekLater := serve(t, db, cfg.Chains, time.Date(2026, 11, 29, 0, 0, 0, 0, time.UTC))
	for path, want := range map[string]string{
		"/activity/active_whales": "[]",
		"/trading_metrics": `{"assets_in_chain":{"value":348998.669759321271930249,"growth_rate_seconds":0},` +
			`"traders_last_30_days":{"value":7,"growth_rate_seconds":0.00000270061728395},` +
			`"cumulative_volume":{"value":23383.222078763440492543,"growth_rate_seconds":0},"volume_24h":{"value":0,"growth_rate_seconds":0}}`,
	} {
		if resp, body := weekLater.get(t, path); resp.StatusCode != 200 || body != want {
			t.Errorf("a week later, %s: %d %s", path, resp.StatusCode, body)
		}
	}

	for _, path := range []string{"/trading/volume/top_assets_last_period_hours?period=1",
		"/pairs/v1/historical/3/chart?asset_in=uatom&asset_out=uosmo&range=1h"} {
		if resp, body := later.get(t, path); resp.StatusCode != 200 || body != "[]" {
			t.Errorf("later, %s: %d %s", path, resp.StatusCode, body)
		}
	}

	// A day and half an hour after the swaps' hour (21:00), the last 24
	// hours start at 21:30: the 21:00 bucket started before them.
	dayLater := serve(t, db, cfg.Chains, time.Date(2026, 11, 22, 21, 30, 0, 0, time.UTC))
	if resp, body := dayLater.get(t, "/trading/volume/top_assets_last_period_hours?period=24"); resp.StatusCode != 200 || body != "[]" {
		t.Errorf("a day later, last 24 hours: %d %s", resp.StatusCode, body)
	}
	// The week a day later still holds the swaps' day: summed from the
	// daily rows (the job's week ends the day before), the same ranking as
	// read from the job's week on the day itself.
	for _, path := range []string{"/activity/active_whales", "/activity/active_whales?order=trading_volume_last_7_days&limit=3",
		"/activity/active_whales?order=lp_volume_last_7_days", "/activity/active_whales?order=delegations_volume_last_7_days&limit=2"} {
		_, onTheDay := s.get(t, path)
		if resp, body := dayLater.get(t, path); resp.StatusCode != 200 || body != onTheDay || len(body) < 100 {
			t.Errorf("a day later, %s: %d %s\nwant %s", path, resp.StatusCode, body, onTheDay)
		}
	}
	var listings []struct {
		Volume json.Number `json:"daily_volume"`
	}
	if resp, body := dayLater.get(t, "/aux/pool_listings"); resp.StatusCode != 200 || json.Unmarshal([]byte(body), &listings) != nil || len(listings) == 0 {
		t.Fatalf("a day later, pool listings: %d %s", resp.StatusCode, body)
	}
	for _, l := range listings {
		if l.Volume != "0" {
			t.Errorf("a day later, a pool's daily volume %s, want 0", l.Volume)
		}
	}
}

// TestWithoutDexChain answers 503 when no osmosis chain is configured, and
// when it is configured but not indexed yet.
func TestWithoutDexChain(t *testing.T) {
	t.Parallel()
	db, _ := testdb.New(t)
	for name, chains := range map[string][]config.Chain{
		"none configured": nil,
		"not indexed":     {osmosistest.Chain("http://127.0.0.1:1")},
	} {
		t.Run(name, func(t *testing.T) {
			s := serve(t, db, chains, time.Now())
			for _, path := range []string{"/trading/volume/top_assets_date_range", "/trading/volume/top_assets_last_period_hours",
				"/tokens/v2/real-time/uosmo/price", "/kpi/cumulative_trading_volume", "/tokens/v2/historical/uosmo/chart",
				"/pairs/v1/historical/1/chart?asset_in=uosmo&asset_out=uion", "/pairs/v2/summary", "/trading_metrics",
				"/activity/active_whales", "/liquidity/liquidity_flow", "/kpi/cumulative_supply_side_revenue",
				"/cl/v1/position/last/id/1", "/pools/depth/1/current", "/pools/depth/1/over_time?percent=2&start_date=2026-11-21", "/supply/v1/metrics", "/tokenomics/assets_in_chain",
				"/stream/pool/v1/all", "/users/portfolio/current?address=osmo19cntltr3qf7pcny7xeq4lm7cl64xn54hvswrdh", "/users/portfolio/over_time?range=1d&address=osmo19cntltr3qf7pcny7xeq4lm7cl64xn54hvswrdh"} {
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
	if exp := `[{"timestamp":"2026-11-21 00:00:00","liquidity_usd":` + string(api.Number(want)) + `}]`; body != exp {
		t.Errorf("body\n got %s\nwant %s", body, exp)
	}
}

// checkRevenue: the day's three sources as the dex_revenue job stored them
// (its own test values them independently; protorev is the one backrun's
// 512318328 uosmo at OSMO's close 1.81103865829427774 = 927.828297360687703724),
// and their sum as the cumulative protocol revenue of that single day.
func checkRevenue(t *testing.T, db *bun.DB, which, body string) {
	t.Helper()
	var fees, taker string
	if err := db.NewRaw("SELECT (SELECT amount_usd::text FROM osmosis_revenue_daily WHERE source = 'tx_fees'), (SELECT amount_usd::text FROM osmosis_revenue_daily WHERE source = 'taker_fees')").
		Scan(context.Background(), &fees, &taker); err != nil {
		t.Fatal(err)
	}
	const protorev = "927.828297360687703724"
	want := `[{"labels":"2026-11-21 00:00:00","source":"protorev","amount":` + protorev +
		`},{"labels":"2026-11-21 00:00:00","source":"taker_fees","amount":` + string(api.Number(taker)) +
		`},{"labels":"2026-11-21 00:00:00","source":"tx_fees","amount":` + string(api.Number(fees)) + `}]`
	if which == "CUMREV" {
		sum := math.LegacyMustNewDecFromStr(fees).Add(math.LegacyMustNewDecFromStr(taker)).Add(math.LegacyMustNewDecFromStr(protorev))
		want = `[{"labels":"2026-11-21 00:00:00","value":` + string(api.Number(sum.String())) + `}]`
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

// aggregatedLocalnet is a database holding the recorded Osmosis localnet
// (indexed once per test server) with every job of its configuration run
// once.
func aggregatedLocalnet(t *testing.T) (*bun.DB, config.Chain, *config.Config) {
	t.Helper()
	db, ch := osmosistest.New(t)
	cfg := &config.Config{Chains: []config.Chain{ch}}
	runJobs(t, db, cfg)
	return db, ch, cfg
}

// runJobs runs every job of cfg's chains once, as `chainlens aggregate --once`.
func runJobs(t *testing.T, db *bun.DB, cfg *config.Config) {
	t.Helper()
	sched, err := aggregator.New(db, config.Aggregator{}, slog.New(slog.DiscardHandler), nil, app.Jobs(cfg)...)
	if err != nil {
		t.Fatal(err)
	}
	if err := sched.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestHourlyRowsNotBuiltAre503: while the dex_liquidity job's hourly rows
// are behind the reserves and prices (the job not yet run after them, or an
// upgrade's new version not yet built), the answers read from them are a
// 503 naming the job, not zeros; once the job has run they answer.
func TestHourlyRowsNotBuiltAre503(t *testing.T) {
	t.Parallel()
	db, _, cfg := aggregatedLocalnet(t)
	ctx := context.Background()
	if _, err := db.ExecContext(ctx, "DELETE FROM osmosis_pool_liquidity_hourly; DELETE FROM osmosis_asset_state_hourly"); err != nil {
		t.Fatal(err)
	}
	s := serve(t, db, cfg.Chains, time.Date(2026, 11, 21, 22, 30, 0, 0, time.UTC))
	for _, path := range []string{"/tokens/v2/all", "/tokens/v2/OSMO", "/trading_metrics", "/pairs/v2/summary", "/stream/pool/v1/all"} {
		resp, body := s.get(t, path)
		if resp.StatusCode != 503 || !strings.Contains(body, "being built (dex_liquidity)") {
			t.Errorf("%s: %d %s, want 503 naming dex_liquidity", path, resp.StatusCode, body)
		}
	}
	// A reset watermark rebuilds the job (and its hourly rows).
	if _, err := db.ExecContext(ctx, "UPDATE aggregator_jobs SET watermark = 0 WHERE name = 'dex_liquidity'"); err != nil {
		t.Fatal(err)
	}
	runJobs(t, db, cfg)
	for _, path := range []string{"/tokens/v2/ATOM", "/trading_metrics?again=1"} {
		if resp, body := s.get(t, path); resp.StatusCode != 200 {
			t.Errorf("%s after the job: %d %s", path, resp.StatusCode, body)
		}
	}
}

// TestAPRReportsNotBuiltAre503: the APR answers are a 503 naming the job
// while the daily pool rewards are missing next to the hours (an upgrade's
// rebuild of dex_pool_rewards not committed yet), and the positions' APRs
// while dex_cl_earnings has not run (a new job), not APRs without those
// earnings.
func TestAPRReportsNotBuiltAre503(t *testing.T) {
	t.Parallel()
	db, _, cfg := aggregatedLocalnet(t)
	ctx := context.Background()
	s := serve(t, db, cfg.Chains, time.Date(2026, 11, 21, 22, 30, 0, 0, time.UTC))
	if _, err := db.ExecContext(ctx, "DELETE FROM aggregator_jobs WHERE name = 'dex_cl_earnings'"); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/pools_apr_range", "/cl/v1/apr/rewards/5"} {
		resp, body := s.get(t, path)
		if resp.StatusCode != 503 || !strings.Contains(body, "dex_cl_earnings job has not run yet") {
			t.Errorf("%s: %d %s, want 503 naming dex_cl_earnings", path, resp.StatusCode, body)
		}
	}
	if _, err := db.ExecContext(ctx, "DELETE FROM osmosis_pool_rewards_daily"); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/pools_apr", "/v2/pools_apr_range"} {
		resp, body := s.get(t, path)
		if resp.StatusCode != 503 || !strings.Contains(body, "being built (dex_pool_rewards)") {
			t.Errorf("%s: %d %s, want 503 naming dex_pool_rewards", path, resp.StatusCode, body)
		}
	}
}
