#!/usr/bin/env bash
# bench-dex.sh: dex endpoint latency at a fixed request rate over a year of
# synthetic hourly history. A fresh database gets `chainlens bench
# dex-history` (hourly blocks, 10 balancer pools, swaps), the real
# aggregator jobs build the report tables from it (`aggregate --once`,
# timed), and `chainlens bench http` sends RATE requests/s round-robin over
# the non-chart endpoints, then over the chart endpoints, with varied
# parameters and the response cache off (every request runs its queries).
# During the load the chain moves on: every BLOCK_EVERY seconds (default 2,
# a mainnet-like block time) the checkpoint of the synthetic chain commits,
# which announces a change of the chain as an indexer commit does, and the
# aggregator runs on its default schedule (every 30 s) beside the server.
#
#   RATE=500 DURATION=20s DAYS=365 scripts/bench-dex.sh
#   CACHE_TTL=1m CACHE_STALE=10s ... measures the shipped defaults (an answer is kept until a change
#   of its data is announced, at most 1 min; an outdated answer is sent while one background
#   request recomputes it, for 10 s)
set -euo pipefail
cd "$(dirname "$0")/.."
RATE=${RATE:-500}
DURATION=${DURATION:-20s}
DAYS=${DAYS:-365}
BIN=bin/chainlens
go build -o "$BIN" ./cmd/chainlens

work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	if [ -n "${admin:-}" ]; then psql -q -d "$admin" -c "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null 2>&1 || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

db="chainlens_bench_dex_$$"
admin=$(scripts/db.sh ensure postgres)
url=$(scripts/db.sh ensure "$db")
api_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
. scripts/dex-synth.sh
dex_config "$work/c.yaml" "$url" "$api_port"
"$BIN" migrate up --config "$work/c.yaml" >/dev/null
"$BIN" bench dex-history --config "$work/c.yaml" --days "$DAYS" >&2
t0=$(date +%s)
"$BIN" aggregate --config "$work/c.yaml" --once >/dev/null
echo "bench-dex: aggregate --once over $DAYS days took $(( $(date +%s) - t0 )) s" >&2
key=$("$BIN" keys create --config "$work/c.yaml" --name bench --scopes all 2>/dev/null)
"$BIN" serve --config "$work/c.yaml" &
pids+=($!)
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$api_port/healthz" >/dev/null && break; sleep 0.1; done
"$BIN" aggregate --config "$work/c.yaml" &
pids+=($!)
(
	while sleep "${BLOCK_EVERY:-2}"; do
		psql -q -d "$url" -c "UPDATE sync_state SET updated_at = now() WHERE chain_id = 'synthosmosis'" >/dev/null
	done
) &
pids+=($!)

base="http://127.0.0.1:$api_port"
dex_urls "$base" "$work/plain.txt" "$work/chart.txt"
# Every URL must answer 200 before it is measured.
while read -r label u; do
	code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $key" "$u")
	[ "$code" = 200 ] || { echo "bench-dex: $label $u answered $code" >&2; exit 1; }
done < <(cat "$work/plain.txt" "$work/chart.txt")
echo "## one request at a time, median of 5 (service time with the cache off; cache hits with it on)"
while read -r label u; do
	ts=$(for _ in 1 2 3 4 5; do curl -s -o /dev/null -w '%{time_total}\n' -H "Authorization: Bearer $key" "$u"; done | sort -n | sed -n 3p)
	printf '%-18s %7.2f ms  %s\n' "$label" "$(python3 -c "print($ts*1000)")" "${u#$base}"
done < <(cat "$work/plain.txt" "$work/chart.txt" | awk '!seen[$1]++')
echo "## non-chart endpoints at $RATE req/s for $DURATION"
"$BIN" bench http --rate "$RATE" --duration "$DURATION" --header "Authorization: Bearer $key" --urls "$work/plain.txt"
echo "## chart endpoints at $RATE req/s for $DURATION"
"$BIN" bench http --rate "$RATE" --duration "$DURATION" --header "Authorization: Bearer $key" --urls "$work/chart.txt"
echo "## response cache lookups over both runs (and the checks above)"
curl -s "$base/metrics" | grep '^chainlens_api_cache_lookups_total' || true
