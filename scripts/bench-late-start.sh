#!/usr/bin/env bash
# Late start of the generated Osmosis (devchain/synthosmosis) at height
# START, twice: on a node that reads stores at their latest state whatever
# the height (cosmos-sdk <= 0.53, as real Osmosis nodes: the positions are
# refused, the pools' ticks are read instead) and on one that reads them at
# the height (the positions are read). Indexes START..START+100 with the
# state at START-1 imported, runs the jobs, prints each run's import log
# lines and time, and compares the concentrated-liquidity state and ticks
# the two give (they must be equal).
#
#   scripts/bench-late-start.sh [START]        (default 40000; 1 day long)
#
# Needs the Postgres of scripts/db.sh; databases lsb_latest and lsb_honest
# are dropped and created.
set -euo pipefail
cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.."
START=${1:-40000}
[[ $START =~ ^[1-9][0-9]*$ ]] && ((START < 43000)) || { echo "START must be a height of the 1-day chain (1..42999)" >&2; exit 2; }
PG=$(scripts/db.sh ensure postgres)
BASE=${PG%%\?*}
BASE=${BASE%/*}
go build -o bin/chainlens ./cmd/chainlens
go build -o bin/chainlens-dev ./cmd/chainlens-dev
DIR=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$DIR"' EXIT
NODE=(bin/chainlens-dev synth-node --profile osmosis --days 1 --end-time 2026-11-28T00:00:00Z --listen 127.0.0.1:27001)
for mode in latest honest; do
	flag=()
	[[ $mode == latest ]] && flag=(--latest-store-reads)
	"${NODE[@]}" "${flag[@]}" >"$DIR/node-$mode.log" 2>&1 &
	node=$!
	for _ in $(seq 120); do curl -sf http://127.0.0.1:27001/health >/dev/null && break; sleep 1; done
	psql "$PG" -qc "DROP DATABASE IF EXISTS lsb_$mode" -c "CREATE DATABASE lsb_$mode"
	entry=$("${NODE[@]}" --print-config | sed "s/bech32_prefix: osmo,/bech32_prefix: osmo, start_height: $START,/")
	printf 'database: {url: "%s/lsb_%s?sslmode=disable"}\nlog: {level: info}\nchains:\n%s\n' "$BASE" "$mode" "$entry" >"$DIR/c-$mode.yaml"
	bin/chainlens migrate up --config "$DIR/c-$mode.yaml" >/dev/null
	echo "== $mode: index $START..$((START + 100))"
	/usr/bin/time -f "index: %e s, %M KB" bin/chainlens index --until $((START + 100)) --config "$DIR/c-$mode.yaml" 2>&1 |
		grep -E 'staged|serves no chain state|index:' | sed -E 's/.*"time":"([^"]*)".*"msg":"([^"]*)".*"query":"([^"]*)".*"rows":([0-9]+).*/\1 \2 \3 rows=\4/'
	bin/chainlens aggregate --once --config "$DIR/c-$mode.yaml" >/dev/null 2>&1
	kill $node
	wait $node 2>/dev/null || true
done
echo "== concentrated-liquidity state and ticks (count, md5) on each"
for mode in latest honest; do
	psql "$BASE/lsb_$mode?sslmode=disable" -Atc \
		"SELECT '$mode state ' || count(*) || ' ' || md5(string_agg(concat_ws(' ', pool_id, hour, sqrt_price, tick, liquidity), ',' ORDER BY pool_id, hour)) FROM osmosis_cl_state_hourly" \
		-c "SELECT '$mode ticks ' || count(*) || ' ' || md5(string_agg(concat_ws(' ', pool_id, hour, tick, liquidity_net, liquidity_gross), ',' ORDER BY pool_id, hour, tick)) FROM osmosis_cl_tick_changes"
done
