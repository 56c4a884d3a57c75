#!/usr/bin/env bash
# bench-api.sh: requests/s and p99 latency of one report endpoint served by
# chainlens, compared in the same run with nginx serving the same JSON as a
# static file. Both on loopback, measured with wrk (Debian packages wrk and
# nginx-light; installed when missing and running as root).
#
#   scripts/bench-api.sh [PATH_AND_QUERY]
#
# It indexes the recorded Osmosis localnet through a replay node into a
# fresh database, runs every aggregator job once, and serves it.
set -euo pipefail
cd "$(dirname "$0")/.."
ENDPOINT=${1:-"/trading/volume/top_assets_date_range?start_date=2026-11-21&end_date=2026-11-22"}
DURATION=${DURATION:-10s}
CONNS=${CONNS:-32}
BIN=bin/chainlens

for tool in wrk nginx; do
	if ! command -v "$tool" >/dev/null; then
		[ "$(id -u)" = 0 ] || { echo "bench-api: $tool missing (apt-get install wrk nginx-light)" >&2; exit 1; }
		apt-get install -y -qq wrk nginx-light >/dev/null
	fi
done
go build -o "$BIN" ./cmd/chainlens
go build -o bin/chainlens-dev ./cmd/chainlens-dev

work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	[ -f "$work/nginx.pid" ] && kill "$(cat "$work/nginx.pid")" 2>/dev/null || true
	wait 2>/dev/null || true
	if [ -n "${admin:-}" ]; then psql -q -d "$admin" -c "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null 2>&1 || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

db="chainlens_bench_$$"
admin=$(scripts/db.sh ensure postgres)
url=$(scripts/db.sh ensure "$db")
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
node_port=$(free_port); api_port=$(free_port); nginx_port=$(free_port)

bin/chainlens-dev replay-node --data testdata/localnet/osmosis --listen "127.0.0.1:$node_port" 2>/dev/null &
pids+=($!)
cat > "$work/c.yaml" <<CFG
database: {url: "$url"}
api: {listen: "127.0.0.1:$api_port", rate_limit: {per_second: 1000000, burst: 1000000}, quota: {credits: 1000000000000}}
log: {level: error}
chains:
  - {id: localosmosis, kind: osmosis, rpc: ["http://127.0.0.1:$node_port"],
     assets: [{denom: uusdc, symbol: USDC, name: USD Coin, display: usdc, exponent: 6},
              {denom: uosmo, symbol: OSMO, name: Osmosis, display: osmo, exponent: 6, main: true}]}
CFG
sleep 0.5
"$BIN" migrate up --config "$work/c.yaml" >/dev/null
"$BIN" index --config "$work/c.yaml" --until 299
"$BIN" aggregate --config "$work/c.yaml" --once >/dev/null
key=$("$BIN" keys create --config "$work/c.yaml" --name bench --scopes all 2>/dev/null)
"$BIN" serve --config "$work/c.yaml" &
pids+=($!)
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$api_port/healthz" >/dev/null && break; sleep 0.1; done

mkdir -p "$work/www"
curl -sf -H "Authorization: Bearer $key" "http://127.0.0.1:$api_port$ENDPOINT" > "$work/www/report.json"
echo "bench-api: $(wc -c < "$work/www/report.json") bytes from $ENDPOINT" >&2
cat > "$work/nginx.conf" <<NGX
worker_processes 1;
pid $work/nginx.pid;
error_log $work/nginx.err;
events { worker_connections 1024; }
http {
  access_log off;
  default_type application/json;
  server { listen 127.0.0.1:$nginx_port; root $work/www; }
}
NGX
nginx -c "$work/nginx.conf"

run_wrk() { # url [header]
	wrk -t2 -c"$CONNS" -d"$DURATION" --latency ${2:+-H "$2"} "$1" | awk '
		/Requests\/sec/ {rps=$2}
		/^ +99%/ {p99=$2}
		END {print rps, p99}'
}
read -r api_rps api_p99 < <(run_wrk "http://127.0.0.1:$api_port$ENDPOINT" "Authorization: Bearer $key")
read -r ngx_rps ngx_p99 < <(run_wrk "http://127.0.0.1:$nginx_port/report.json")
ratio=$(python3 -c "print(f'{$api_rps/$ngx_rps:.2f}')")
echo "| endpoint | chainlens req/s | chainlens p99 | nginx static req/s | nginx p99 | ratio |"
echo "|---|---|---|---|---|---|"
echo "| \`$ENDPOINT\` | $api_rps | $api_p99 | $ngx_rps | $ngx_p99 | $ratio |"
