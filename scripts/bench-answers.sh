#!/usr/bin/env bash
# bench-answers.sh PROFILE DATABASE_URL: every endpoint of the profile's
# groups answered uncached over an indexed and aggregated database (one kept
# by `KEEP_DB=1 scripts/bench-mainnet.sh PROFILE DAYS`): p50 and p99 service
# time of N sequential requests each (curl's total time). The endpoints
# without a required parameter come from the served OpenAPI document, as in
# bench-mainnet.sh; for the osmosis profile the parameterised ones too, their
# values taken from the data (the busiest concentrated and classic pools,
# the busiest trader and liquidity provider, the last position).
#
#   scripts/bench-answers.sh osmosis postgres://postgres@127.0.0.1:5432/DB?sslmode=disable
#   N=30 ... requests per endpoint (default 20)
#   BASE=/tmp/chainlens-old ... also serves that build on the same database
#       and times both, request by request in turn; the table then has both
#       and says whether the answers are the same (status and body, a
#       problem document's request id left out)
# Output: markdown on stdout. Profiles: evm, dydx, osmosis.
set -euo pipefail
cd "$(dirname "$0")/.."
PROFILE=${1:?profile: evm, dydx or osmosis}
URL=${2:?database URL}
N=${N:-20}
case "$PROFILE" in
evm) groups="stablecoins" ;;
dydx) groups="perp perp_lens" ;;
osmosis) groups="dex dex_lens" ;;
*) echo "bench-answers.sh: profiles: evm, dydx, osmosis" >&2; exit 2 ;;
esac
. scripts/bench-common.sh
go build -o bin/chainlens ./cmd/chainlens
go build -o bin/chainlens-dev ./cmd/chainlens-dev
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$work"' EXIT

config() { # config PORT: the profile's chain over URL, served on PORT, uncached
	printf 'database: {url: "%s"}\nlog: {level: warn}\napi: {listen: "127.0.0.1:%s", cache_ttl: 0s}\nchains:\n' "$URL" "$1"
	bin/chainlens-dev synth-node --profile "$PROFILE" --days 1 --listen 127.0.0.1:1 --print-config
}
serve() { # serve BINARY PORT
	config "$2" > "$work/c$2.yaml"
	"$1" serve --config "$work/c$2.yaml" 2>>"$work/serve$2.log" &
	pids+=($!)
	for _ in $(seq 100); do curl -sf "http://127.0.0.1:$2/healthz" >/dev/null && return; sleep 0.1; done
	echo "bench-answers.sh: $1 did not start" >&2; cat "$work/serve$2.log" >&2; exit 1
}
port_new=$(port)
serve bin/chainlens "$port_new"
key=$(bin/chainlens keys create --config "$work/c$port_new.yaml" --name "bench-answers-$$" --scopes all 2>/dev/null)
ports=("$port_new")
if [ -n "${BASE:-}" ]; then
	port_base=$(port)
	serve "$BASE" "$port_base"
	ports+=("$port_base")
fi

curl -sf "http://127.0.0.1:$port_new/openapi.json" > "$work/openapi.json"
profile_paths "$groups" "$work/openapi.json" > "$work/paths"
q() { psql -qtA -d "$URL" -c "$1"; }
if [ "$PROFILE" = osmosis ]; then
	chain=$(q "SELECT chain_id FROM sync_state LIMIT 1")
	busiest() { # busiest TYPE-CONDITION: the pool of that type with the most swap hops
		q "SELECT s.pool_id FROM osmosis_swaps s WHERE s.chain_id = '$chain' AND s.pool_id IN (
			SELECT pool_id FROM osmosis_known_pools WHERE chain_id = '$chain' AND $1) GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1"
	}
	cl=$(busiest "type = 'concentrated'")
	classic=$(busiest "type = 'balancer'")
	trader=$(q "SELECT sender FROM osmosis_swaps WHERE chain_id = '$chain' GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1")
	lp=$(q "SELECT sender FROM osmosis_cl_positions WHERE chain_id = '$chain' AND kind = 'create' GROUP BY 1 ORDER BY count(*) DESC, 1 LIMIT 1")
	position=$(q "SELECT position_id FROM osmosis_cl_positions WHERE chain_id = '$chain' AND kind = 'create' ORDER BY height DESC LIMIT 1")
	tick=$(q "SELECT tick FROM osmosis_cl_state_hourly WHERE chain_id = '$chain' AND pool_id = $cl ORDER BY hour DESC LIMIT 1")
	read -r d0 d1 < <(q "SELECT denoms[1] || ' ' || denoms[2] FROM osmosis_known_pools WHERE chain_id = '$chain' AND pool_id = $classic LIMIT 1")
	start=$(q "SELECT to_char(min(time) AT TIME ZONE 'UTC', 'YYYY-MM-DD') FROM blocks WHERE chain_id = '$chain' AND height = (SELECT min(height) FROM blocks WHERE chain_id = '$chain')")
	enc() { python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$1"; }
	cat >> "$work/paths" <<EOF
/tokens/v2/all
/tokens/v2/OSMO
/tokens/v2/real-time/OSMO/price
/tokens/v2/historical/OSMO/chart?tf=60
/tokens/v2/historical/OSMO/chart?tf=1440
/pairs/v1/historical/$classic/chart?asset_in=$(enc "$d0")&asset_out=$(enc "$d1")&range=7d
/pools/liquidity/$classic/over_time
/pools/depth/$classic/current?percent=10
/pools/depth/$cl/current?percent=10
/pools/depth/$cl/over_time?percent=10&start_date=$start
/pools_apr_range?pool=$cl
/cl/v1/apr/rewards/$cl
/cl/v2/apr/rewards/$cl?lower_tick=$(( tick - 100000 ))&upper_tick=$(( tick + 100000 ))
/cl/v1/position/last/id/$position
/stream/pool/v1/all?order_key=liquidity_change
/stream/pool/v1/all?order_key=volume_24h&limit=1000
/users/portfolio/current?address=$trader
/users/portfolio/over_time?address=$trader&range=7d
/users/portfolio/current?address=$lp
/lp/v1/rewards/estimation/$lp
/rewards/token/$trader
/rewards/token/$trader/uosmo
/users/limit_orders/history/closed?address=$trader
/ibc/v1/source/osmosis/destination/cosmoshub
EOF
fi

# once PORT PATH: one request: its status and seconds.
once() {
	curl -s -o /dev/null -w '%{http_code} %{time_total}\n' -H "Authorization: Bearer $key" "http://127.0.0.1:$1$2"
}
# pct FILE: the p50 and p99 of the seconds in FILE, in ms.
pct() { python3 -c "import math,sys; v=sorted(float(x)*1000 for x in open(sys.argv[1]).read().split()); print(f'{v[len(v)//2]:.1f} | {v[math.ceil(len(v)*0.99)-1]:.1f}')" "$1"; }
same() { # same PATH: whether both builds answer PATH alike
	for p in "${ports[@]}"; do
		curl -s -w '\n%{http_code}' -H "Authorization: Bearer $key" "http://127.0.0.1:$p$1" | sed -E 's/"request_id":"[^"]*"//' | md5sum
	done | uniq | wc -l
}
if [ -n "${BASE:-}" ]; then
	echo "| endpoint | status | p50 ms | p99 ms | base p50 | base p99 | same answer |"
	echo "|---|---|---|---|---|---|---|"
else
	echo "| endpoint | status | p50 ms | p99 ms |"
	echo "|---|---|---|---|"
fi
while read -r path; do
	[ -n "$path" ] || continue
	for p in "${ports[@]}"; do : > "$work/t.$p"; once "$p" "$path" >/dev/null; done # warm
	code=$(once "$port_new" "$path" | cut -d' ' -f1)
	for _ in $(seq "$N"); do
		for p in "${ports[@]}"; do once "$p" "$path" | cut -d' ' -f2 >> "$work/t.$p"; done
	done
	row="| \`$path\` | $code | $(pct "$work/t.$port_new")"
	if [ -n "${BASE:-}" ]; then
		if [ "$(same "$path")" = 1 ]; then s=yes; else s=NO; fi
		row="$row | $(pct "$work/t.$port_base") | $s"
	fi
	echo "$row |"
done < "$work/paths"
