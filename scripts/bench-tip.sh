#!/usr/bin/env bash
# bench-tip.sh PROFILE [SECONDS]: tip following. A generated mainnet-shaped
# chain (`chainlens-dev synth-node`) reveals one height per block time from
# an hour in; `chainlens run` (indexer, aggregator every 30 s, API) follows
# it while a client asks the profile's endpoints, uncached, ~10 a second.
# Every second the lag (revealed height − indexed height) is sampled; after
# the first catch-up, SECONDS (default 180) of samples give the lag's
# p50/p99/max, and the aggregator jobs' reach behind the tip.
# With RATE, the API keeps its shipped response cache and `chainlens bench
# http` asks every endpoint of the profile's groups that needs no
# parameter, round-robin, RATE requests a second (open loop) for the
# SECONDS measured, while blocks commit at the chain's block time: the
# cache's service times as data changes under it.
# Output: markdown on stdout. Profiles: dydx (1 s blocks), evm (12 s),
# osmosis (2 s).
#
#   scripts/bench-tip.sh dydx 180
#   scripts/bench-tip.sh osmosis 180
#   RATE=500 scripts/bench-tip.sh dydx 60
set -euo pipefail
cd "$(dirname "$0")/.."
PROFILE=${1:-dydx}
SECONDS_MEASURED=${2:-180}
case "$PROFILE" in
dydx) block_time=1s start=3600 groups="perp perp_lens" paths="/aux/market_listings /trading/trades_count /perp/transparency/supply /trading/open_interest" ;;
evm) block_time=12s start=300 groups="stablecoins" paths="/stablecoins/volume-per-token /stablecoins/whale-alerts" ;;
osmosis) block_time=2s start=1800 groups="dex dex_lens" paths="/trading_metrics /pairs/v2/summary /tokens/v2/all /activity/active_whales" ;;
*) echo "bench-tip.sh: profiles: dydx, evm, osmosis" >&2; exit 2 ;;
esac
. scripts/bench-common.sh
KEEP_DB='' # the tip database is always dropped
bench_begin "chainlens_tip_${PROFILE}_$$"
node_port=$(port)
api_port=$(port)
node_args=(--profile "$PROFILE" --days 1 --end-time "$(date -u +%Y-%m-%dT%H:%M:%SZ)" --listen "127.0.0.1:$node_port")
{
	cache=", cache_ttl: 0s"
	# The shipped cache; the key's rate limit and quota out of the way.
	if [ -n "${RATE:-}" ]; then cache=", rate_limit: {per_second: 1000000, burst: 1000000}, quota: {credits: 1000000000000}"; fi
	printf 'database: {url: "%s"}\nlog: {level: warn}\napi: {listen: "127.0.0.1:%s"%s}\nchains:\n' "$url" "$api_port" "$cache"
	bin/chainlens-dev synth-node "${node_args[@]}" --print-config
} > "$work/c.yaml"
cfg=(--config "$work/c.yaml")
bin/chainlens migrate up "${cfg[@]}" >/dev/null
bin/chainlens-dev synth-node "${node_args[@]}" --start-height "$start" --block-time "$block_time" 2>"$work/node.log" &
pids+=($!)
tip() { node_tip "$PROFILE" "$node_port"; }
for _ in $(seq 300); do tip >/dev/null 2>&1 && break; sleep 0.1; done
key=$(bin/chainlens keys create "${cfg[@]}" --name tip --scopes all 2>/dev/null)
bin/chainlens run "${cfg[@]}" 2>"$work/run.log" &
pids+=($!)
indexed() { psql -qtA -d "$url" -c "SELECT coalesce(max(next_height) - 1, 0) FROM sync_state"; }
# Catch up the first hour.
for _ in $(seq 600); do
	t=$(tip); i=$(indexed)
	[ "$i" -ge $((t - 2)) ] && break
	sleep 1
done
if [ -n "${RATE:-}" ]; then
	# Every endpoint of the groups at RATE requests a second, cached, once
	# the jobs' first round has built what they answer from (until then
	# they answer 503 "not indexed yet").
	curl -sf "http://127.0.0.1:$api_port/openapi.json" > "$work/openapi.json"
	profile_paths "$groups" "$work/openapi.json" | while read -r p; do echo "$p http://127.0.0.1:$api_port$p"; done > "$work/urls"
	for _ in $(seq 120); do
		waiting=0
		while read -r _ u; do
			if curl -s -H "Authorization: Bearer $key" "$u" | grep -q '/problems/not-indexed'; then waiting=1; break; fi
		done < "$work/urls"
		[ "$waiting" = 0 ] && break
		sleep 1
	done
	bin/chainlens bench http --rate "$RATE" --duration "${SECONDS_MEASURED}s" --header "Authorization: Bearer $key" \
		--urls "$work/urls" > "$work/http" 2>&1 &
	pids+=($!)
	client=$!
else
	# The API client: a few endpoints in turn, uncached, ~10 a second.
	(
		while true; do
			for p in $paths; do curl -s -o /dev/null -H "Authorization: Bearer $key" "http://127.0.0.1:$api_port$p"; sleep 0.1; done
		done
	) &
	pids+=($!)
fi
: > "$work/lag"
for _ in $(seq "$SECONDS_MEASURED"); do
	echo $(( $(tip) - $(indexed) )) >> "$work/lag"
	sleep 1
done
behind=$(psql -qtA -d "$url" -c "SELECT max(s.next_height - 1 - j.height) FROM aggregator_jobs j JOIN sync_state s ON s.chain_id = j.chain_id")
if [ -n "${RATE:-}" ]; then wait "$client" || true; fi
echo "## bench-tip: profile $PROFILE, block time $block_time, $SECONDS_MEASURED s of samples, $(nproc) cores${RATE:+, $RATE req/s cached}"
echo
python3 - "$work/lag" "$behind" <<'EOF'
import sys
lags = sorted(int(x) for x in open(sys.argv[1]).read().split())
n = len(lags)
print("| samples | lag p50 (heights) | lag p99 | lag max | jobs' furthest reach behind the indexed tip at the end |")
print("|---|---|---|---|---|")
print(f"| {n} | {lags[n // 2]} | {lags[min(n - 1, n * 99 // 100)]} | {lags[-1]} | {sys.argv[2]} heights |")
EOF
if [ -n "${RATE:-}" ]; then
	echo
	echo "\`chainlens bench http\` at $RATE req/s over $(wc -l < "$work/urls") endpoints (cached), while the chain moved:"
	echo
	echo '```'
	cat "$work/http"
	echo '```'
	# What the failing endpoints answered, and the jobs' last errors.
	while read -r label u; do
		code=$(curl -s -o "$work/body" -w '%{http_code}' -H "Authorization: Bearer $key" "$u")
		if [ "$code" != 200 ]; then echo "- \`$label\`: $code $(head -c 200 "$work/body")"; fi
	done < "$work/urls"
	psql -qtA -d "$url" -c "SELECT '- job ' || name || ': ' || left(last_error, 200) FROM aggregator_jobs WHERE last_error IS NOT NULL"
fi
