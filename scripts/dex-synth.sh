# dex-synth.sh, sourced by the scripts over the synthetic dex history
# (`chainlens bench dex-history`): its config and its URL sets.

# dex_config FILE DB_URL PORT writes the config of a server over the
# synthetic chain: no rate limit, the response cache as CACHE_TTL and
# CACHE_STALE say (off by default), the six priced assets.
dex_config() {
	cat > "$1" <<CFG
database: {url: "$2", max_conns: 20}
api: {listen: "127.0.0.1:$3", cache_ttl: ${CACHE_TTL:-0s}, cache_stale: ${CACHE_STALE:-0s}, rate_limit: {per_second: 1000000, burst: 1000000}, quota: {credits: 1000000000000}}
log: {level: error}
chains:
  - {id: synthosmosis, kind: osmosis, rpc: ["http://127.0.0.1:9"],
     assets: [{denom: uusdc, symbol: USDC, name: USD Coin, display: usdc, exponent: 6},
              {denom: uosmo, symbol: OSMO, name: Osmosis, display: osmo, exponent: 6, main: true},
              {denom: uatom, symbol: ATOM, name: Cosmos Hub, display: atom, exponent: 6},
              {denom: uweth, symbol: WETH, name: Wrapped Ether, display: weth, exponent: 6},
              {denom: uion, symbol: ION, name: Ion, display: ion, exponent: 6},
              {denom: utia, symbol: TIA, name: Celestia, display: tia, exponent: 6}]}
CFG
}

# dex_urls BASE PLAIN CHART writes the URL sets of the synthetic history
# to the files PLAIN (non-chart endpoints) and CHART, one "label url" per
# line.
dex_urls() {
	local base=$1 plain=$2 chart=$3
	day() { date -u -d "$1 days ago" +%Y-%m-%d; }
	{
		for a in uosmo uatom uweth uion utia uusdc; do
			echo "price $base/tokens/v2/real-time/$a/price"
			echo "token $base/tokens/v2/$a"
		done
		for d in 1 7 30 90 180; do
			echo "top_assets $base/trading/volume/top_assets_date_range?start_date=$(day $d)&end_date=$(day 0)"
		done
		for h in 1 6 24 168; do echo "top_assets_hours $base/trading/volume/top_assets_last_period_hours?hours=$h"; done
		for p in 1 2 3 4 5 6 7 8 9 10; do
			echo "pool_liquidity $base/pools/liquidity/$p/over_time?start_date=$(day 30)&end_date=$(day 0)"
		done
		echo "pool_fees $base/fees/v1/pools"
		echo "pool_listings $base/aux/pool_listings"
		echo "kpi_volume $base/kpi/cumulative_trading_volume"
		echo "kpi_revenue $base/kpi/cumulative_protocol_revenue"
		echo "chain_revenue $base/tokenomics/chain_revenue?start_date=$(day 90)&end_date=$(day 0)"
		echo "pairs_summary $base/pairs/v2/summary"
		echo "trading_metrics $base/trading_metrics"
	} > "$plain"
	{
		for a in uosmo uatom uweth uion utia; do
			for tf in 5 60 240 1440 10080; do echo "token_chart $base/tokens/v2/historical/$a/chart?tf=$tf"; done
		done
		for pair in "1 uosmo uusdc" "2 uatom uusdc" "3 uatom uosmo" "4 uweth uusdc" "6 utia uusdc" "9 uion uusdc"; do
			read -r p in out <<< "$pair"
			for r in 1d 7d 1mo 1y; do echo "pair_chart $base/pairs/v1/historical/$p/chart?asset_in=$in&asset_out=$out&range=$r"; done
		done
	} > "$chart"
}
