#!/usr/bin/env bash
# bench-cluster.sh: API throughput with one and with two `chainlens serve`
# processes, each reading from its own streaming replica of a
# scripts/cluster.sh cluster, compared in the same run with nginx serving
# the same JSON as a static file (one worker, then two). Prints where the
# CPU time went in each run: the API processes, each Postgres server, wrk.
#
#   CACHE=0|1 CONNS=32 DURATION=10s scripts/bench-cluster.sh [PATH_AND_QUERY]
#
# CACHE=0 (default) turns the response cache off: every request is read
# from a replica. The Osmosis localnet recording is indexed through
# pgbouncer first and every aggregator job run once.
set -euo pipefail
cd "$(dirname "$0")/.."
ENDPOINT=${1:-"/trading/volume/top_assets_date_range?start_date=2026-11-21&end_date=2026-11-22"}
DURATION=${DURATION:-10s}
CONNS=${CONNS:-32}
CACHE=${CACHE:-0}
BIN=bin/chainlens

for tool in wrk nginx; do
	if ! command -v "$tool" >/dev/null; then
		[ "$(id -u)" = 0 ] || { echo "bench-cluster: $tool missing (apt-get install wrk nginx-light)" >&2; exit 1; }
		apt-get install -y -qq wrk nginx-light >/dev/null
	fi
done
go build -o "$BIN" ./cmd/chainlens
go build -o bin/chainlens-dev ./cmd/chainlens-dev

work=$(mktemp -d)
chmod 755 "$work"
export CHAINLENS_CLUSTER_DIR=$work/cluster CHAINLENS_CLUSTER_PORT=${CHAINLENS_CLUSTER_PORT:-56600}
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	for f in "$work"/nginx*.pid; do [ -f "$f" ] && kill "$(cat "$f")" 2>/dev/null || true; done
	wait 2>/dev/null || true
	scripts/cluster.sh down 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT

eval "$(scripts/cluster.sh db)"
read -r replica1 replica2 <<<"$READ_URLS"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
node_port=$(free_port)
bin/chainlens-dev replay-node --data testdata/localnet/osmosis --listen "127.0.0.1:$node_port" 2>/dev/null &
pids+=($!)
config() { # file listen read_url
	cat >"$1" <<CFG
database: {url: "$POOLER_URL", session_url: "$PRIMARY_URL", read_urls: ["$3"]}
api: {listen: "$2", cache_ttl: $([ "$CACHE" = 1 ] && echo 1m || echo 0s), rate_limit: {per_second: 1000000, burst: 1000000}, quota: {credits: 1000000000000}}
log: {level: error}
chains:
  - {id: localosmosis, kind: osmosis, rpc: ["http://127.0.0.1:$node_port"],
     assets: [{denom: uusdc, symbol: USDC, name: USD Coin, display: usdc, exponent: 6},
              {denom: uosmo, symbol: OSMO, name: Osmosis, display: osmo, exponent: 6, main: true}]}
CFG
}
port_a=$(free_port) port_b=$(free_port)
config "$work/a.yaml" "127.0.0.1:$port_a" "$replica1"
config "$work/b.yaml" "127.0.0.1:$port_b" "$replica2"
sleep 0.5
"$BIN" migrate up --config "$work/a.yaml" >/dev/null
"$BIN" index --config "$work/a.yaml" --until 299
"$BIN" aggregate --config "$work/a.yaml" --once >/dev/null
key=$("$BIN" keys create --config "$work/a.yaml" --name bench --scopes all 2>/dev/null)
"$BIN" serve --config "$work/a.yaml" &
serve_a=$!
pids+=($serve_a)
"$BIN" serve --config "$work/b.yaml" &
serve_b=$!
pids+=($serve_b)
for port in "$port_a" "$port_b"; do
	for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/readyz" | grep -q '"reads":"replicas"' && break; sleep 0.1; done
done

mkdir -p "$work/www"
curl -sf -H "Authorization: Bearer $key" "http://127.0.0.1:$port_a$ENDPOINT" >"$work/www/report.json"
echo "bench-cluster: $(wc -c <"$work/www/report.json") bytes from $ENDPOINT, cache $([ "$CACHE" = 1 ] && echo on || echo off)" >&2
nginx_start() { # workers port
	cat >"$work/nginx$1.conf" <<NGX
worker_processes $1;
pid $work/nginx$1.pid;
error_log $work/nginx$1.err;
events { worker_connections 1024; }
http {
  access_log off;
  default_type application/json;
  server { listen 127.0.0.1:$2; root $work/www; }
}
NGX
	nginx -c "$work/nginx$1.conf"
}
nginx1=$(free_port) nginx2=$(free_port)
nginx_start 1 "$nginx1"
nginx_start 2 "$nginx2"

# cpu_ticks PID...: the user+system clock ticks of these processes so far.
cpu_ticks() {
	local p t=0
	for p in "$@"; do
		[ -r "/proc/$p/stat" ] && t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat")))
	done
	echo "$t"
}
node_pids() { pgrep -f "$CHAINLENS_CLUSTER_DIR/node$1/data" | tr '\n' ' '; pgrep -f "postgres: node$1: " | tr '\n' ' '; }
groups() { # what to account CPU to, one "name pids..." per line
	echo "api-a $serve_a"
	echo "api-b $serve_b"
	echo "primary $(node_pids 0)"
	echo "replica1 $(node_pids 1)"
	echo "replica2 $(node_pids 2)"
}
wrk_run() { # conns url... (one wrk per url, at once); prints "rps p99_of_first"
	local conns=$1 i=0 out threads
	shift
	threads=$((2 / $#)) # two wrk threads in all
	for u in "$@"; do
		wrk -t"$threads" -c"$conns" -d"$DURATION" --latency -H "Authorization: Bearer $key" "$u" >"$work/wrk$i.out" &
		i=$((i + 1))
	done
	wait_wrk
	out=$(cat "$work"/wrk*.out | awk '/Requests\/sec/ {rps += $2} /^ +99%/ && !p {p99 = $2; p = 1} END {printf "%.0f %s", rps, p99}')
	rm -f "$work"/wrk*.out
	echo "$out"
}
# machine_ticks: all, busy and idle clock ticks of the machine so far.
machine_ticks() { head -1 /proc/stat | awk '{b = $2 + $3 + $4 + $7 + $8 + $9; i = $5 + $6; print b + i, b, i}'; }
wait_wrk() { while pgrep -x wrk >/dev/null; do sleep 0.2; done; }
measure() { # label conns url...: a table row and where the CPU went
	local label=$1 before=() after=() names=() i=0 line rps p99 total=0 shares=''
	shift
	while read -r name rest; do
		names+=("$name")
		# shellcheck disable=SC2086
		before+=("$(cpu_ticks $rest)")
	done < <(groups)
	local t0 t0_busy t0_idle t1 t1_busy t1_idle
	read -r t0 t0_busy t0_idle < <(machine_ticks)
	read -r rps p99 < <(wrk_run "$@")
	read -r t1 t1_busy t1_idle < <(machine_ticks)
	while read -r name rest; do
		# shellcheck disable=SC2086
		after+=("$(cpu_ticks $rest)")
	done < <(groups)
	total=$((t1 - t0))
	local accounted=0
	for i in "${!names[@]}"; do
		local d=$((after[i] - before[i]))
		accounted=$((accounted + d))
		((d > 0)) && shares+="${names[i]} $((100 * d / total))% "
	done
	# wrk (which exits before it could be read) and everything else.
	shares+="wrk+rest $((100 * (t1_busy - t0_busy - accounted) / total))% idle $((100 * (t1_idle - t0_idle) / total))%"
	echo "| $label | $rps | $p99 | $shares |"
	echo "$rps" >"$work/last.rps"
}

echo "| run | req/s | p99 | share of the machine's CPU time |"
echo "|---|---|---|---|"
measure "nginx, 1 worker" "$CONNS" "http://127.0.0.1:$nginx1/report.json"
n1=$(cat "$work/last.rps")
measure "nginx, 2 workers" "$CONNS" "http://127.0.0.1:$nginx2/report.json"
n2=$(cat "$work/last.rps")
measure "one API process (replica 1)" "$CONNS" "http://127.0.0.1:$port_a$ENDPOINT"
a1=$(cat "$work/last.rps")
measure "two API processes (replicas 1 and 2)" "$((CONNS / 2))" "http://127.0.0.1:$port_a$ENDPOINT" "http://127.0.0.1:$port_b$ENDPOINT"
a2=$(cat "$work/last.rps")
python3 -c "print(f'ratios: one API process {$a1/$n1:.2f}× nginx (1 worker); two API processes {$a2/$n2:.2f}× nginx (2 workers); two vs one {$a2/$a1:.2f}×')"
