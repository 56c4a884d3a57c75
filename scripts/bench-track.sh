#!/usr/bin/env bash
# bench-track.sh: durable POST /track events/s and latency of a real
# `chainlens serve`, compared in the same run with the raw Postgres insert
# ceiling of the same row (pgbench: one INSERT of a tracked_events row per
# transaction, the same number of connections). Both on loopback; wrk and
# pgbench from Debian packages (installed when missing and running as root).
#
#   CONNS=64 DURATION=10s scripts/bench-track.sh
#
# Every wrk request is a distinct event (unique messageId), so each 200 is
# one committed row; the script checks the row count against wrk's count.
set -euo pipefail
cd "$(dirname "$0")/.."
DURATION=${DURATION:-10s}
CONNS=${CONNS:-64}
BIN=bin/chainlens

if ! command -v wrk >/dev/null; then
	[ "$(id -u)" = 0 ] || { echo "bench-track: wrk missing (apt-get install wrk)" >&2; exit 1; }
	apt-get install -y -qq wrk >/dev/null
fi
command -v pgbench >/dev/null || { echo "bench-track: pgbench missing (Debian postgresql-client)" >&2; exit 1; }
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

db="chainlens_bench_track_$$"
admin=$(scripts/db.sh ensure postgres)
url=$(scripts/db.sh ensure "$db")
api_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$work/c.yaml" <<CFG
database: {url: "$url"}
api: {listen: "127.0.0.1:$api_port", rate_limit: {per_second: 1000000, burst: 1000000}, quota: {credits: 1000000000000}}
log: {level: error}
CFG
"$BIN" migrate up --config "$work/c.yaml" >/dev/null
key=$("$BIN" keys create --config "$work/c.yaml" --name bench --scopes engagement 2>/dev/null)
if [ -n "${GRAPH:-}" ]; then
	# Attribution at scale beside the load: 10,000 campaigns (an event goal
	# each, 100 event names), 1,000,000 wallets that each saw one campaign, an
	# identity graph of 1,000,000 anonymous ids, and the aggregator running
	# (every second) while /track takes the load; each event is a wallet's
	# goal event, so it converts.
	psql -q -d "$url" <<'SQL'
INSERT INTO audiences (id, name, kind) VALUES (1, 'everyone', 'global');
INSERT INTO campaigns (id, owner, name, start_date, end_date, attribution_window_s)
 SELECT g, 'o', 'c' || g, now() - interval '30 days', now() + interval '30 days', 86400 * 30 FROM generate_series(1, 10000) g;
INSERT INTO campaign_audiences (campaign_id, audience_id) SELECT g, 1 FROM generate_series(1, 10000) g;
INSERT INTO campaign_goals (campaign_id, kind, event_name) SELECT g, 'event', 'goal_' || (g % 100) FROM generate_series(1, 10000) g;
INSERT INTO impressions (campaign_id, audience_id, position_id, address, address_norm, shown_at)
 SELECT 1 + w % 10000, 1, 'p', lpad(to_hex(w), 40, '0'), lpad(to_hex(w), 40, '0'), now() - interval '1 day' FROM generate_series(1, 1000000) w;
INSERT INTO identity_links (anonymous_id, identity_norm, first_seen, last_seen)
 SELECT 'anon-' || w, lpad(to_hex(w), 40, '0'), now() - interval '2 days', now() - interval '2 days' FROM generate_series(1, 1000000) w;
SELECT setval('campaigns_id_seq', 10000); SELECT setval('audiences_id_seq', 1);
VACUUM (ANALYZE);
CHECKPOINT; -- the load starts with the setup's writes on disk, not flushed during it
SQL
	if [ "${AGGREGATE:-1}" != 0 ]; then # AGGREGATE=0: the state only, no job beside the load
		cat >> "$work/c.yaml" <<CFG
aggregator: {schedule: "@every 1s"}
CFG
		"$BIN" aggregate --config "$work/c.yaml" &
		pids+=($!)
	fi
fi
"$BIN" serve --config "$work/c.yaml" ${SERVE_FLAGS:-} &
server_pid=$!
pids+=($server_pid)
for _ in $(seq 50); do curl -sf "http://127.0.0.1:$api_port/healthz" >/dev/null && break; sleep 0.1; done

cat > "$work/track.lua" <<LUA
local counter = 0
local threads = {}
function setup(thread)
  thread:set("tid", #threads + 1)
  table.insert(threads, thread)
end
function init(args)
  wrk.method = "POST"
  wrk.headers["Authorization"] = "Bearer $key"
  wrk.headers["Content-Type"] = "application/json"
end
function request()
  counter = counter + 1
  local body
  if "${GRAPH:-}" ~= "" then
    -- wallet w's goal event: w saw campaign 1 + w % 10000, whose goal is goal_((1 + w % 10000) % 100)
    local w = (tid * 7919 + counter * 104729) % 1000000 + 1
    body = string.format('{"name":"goal_%d","identity":{"type":"address","id":"0x%040x"},"meta":{"messageId":"m-%d-%d"},"attributes":{"amount_usd":12.5},"timestamp":%d}',
      (1 + w % 10000) % 100, w, tid, counter, os.time() * 1000)
  else
    body = string.format('{"name":"trade_made","identity":{"type":"address","id":"osmo1w%d"},"meta":{"messageId":"m-%d-%d"},"attributes":{"amount_usd":12.5},"timestamp":%d}',
      counter, tid, counter, os.time() * 1000)
  end
  return wrk.format(nil, "/track", nil, body)
end
LUA
# CPU time per event, steadier than events/s on a shared machine: the
# server's (utime+stime of its process) and the whole machine's (busy
# jiffies of /proc/stat: server, Postgres and wrk together). Steal (time the
# hypervisor gave to other guests while ours wanted to run) is reported on
# its own: it is not work done here, and it is what makes a slow day slow.
proc_cpu() { awk '{print $14 + $15}' "/proc/$server_pid/stat"; }
machine_busy() { awk '/^cpu / {print $2 + $3 + $4 + $7 + $8}' /proc/stat; }
machine_steal() { awk '/^cpu / {print $9}' /proc/stat; }
machine_all() { awk '/^cpu / {s = 0; for (i = 2; i <= 9; i++) s += $i; print s}' /proc/stat; }
srv0=$(proc_cpu); busy0=$(machine_busy); steal0=$(machine_steal); all0=$(machine_all)
out=$(wrk -t2 -c"$CONNS" -d"$DURATION" --latency -s "$work/track.lua" "http://127.0.0.1:$api_port")
srv1=$(proc_cpu); busy1=$(machine_busy); steal1=$(machine_steal); all1=$(machine_all)
track_rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
track_p50=$(awk '/^ +50%/ {print $2}' <<<"$out")
track_p99=$(awk '/^ +99%/ {print $2}' <<<"$out")
non2xx=$(awk '/Non-2xx/ {print $NF}' <<<"$out")
sleep 1
rows=$(psql -qtA -d "$url" -c "SELECT count(*) FROM tracked_events")
reqs=$(awk '/requests in/ {print $1}' <<<"$out")
batches=$(curl -s "http://127.0.0.1:$api_port/metrics" | awk '/^chainlens_engagement_event_batch_size_count/ {print $2}')

# The same row, inserted one per transaction by pgbench at the same concurrency.
cat > "$work/insert.sql" <<'SQL'
INSERT INTO tracked_events (id, key_id, source, name, identity_type, identity_id, identity_norm, attributes, meta, timestamp, dedupe_key)
VALUES ('evt_' || gen_random_uuid(), 1, 'track', 'trade_made', 'address', 'osmo1w', '', '{"amount_usd":12.5}', '{"messageId":"m"}', now(), 'm');
SQL
secs=${DURATION%s}
pg_tps=$(pgbench -n -c "$CONNS" -j 2 -T "$secs" -f "$work/insert.sql" "$url" 2>/dev/null | awk '/^tps/ {print $3}')
ratio=$(python3 -c "print(f'{$track_rps/$pg_tps:.2f}')")
hz=$(getconf CLK_TCK)
cpu_per_event=$(python3 -c "print(f'server {($srv1-$srv0)*1e6/$hz/$reqs:.0f} µs, machine {($busy1-$busy0)*1e6/$hz/$reqs:.0f} µs; steal {100*($steal1-$steal0)/max(1,$all1-$all0):.0f} % of the cores')")
echo "bench-track: CPU per event: $cpu_per_event" >&2
echo "bench-track: $reqs requests, ${non2xx:-0} non-2xx, $rows rows stored after the run, ${batches:-?} batches" >&2
if [ -n "${GRAPH:-}" ] && [ "${AGGREGATE:-1}" != 0 ]; then
	sleep 3
	attributed=$(psql -qtA -d "$url" -c "SELECT count(*) FILTER (WHERE attributed_at IS NOT NULL) || ' attributed, ' || count(*) FILTER (WHERE attributed_at IS NULL) || ' waiting, ' || (SELECT count(*) FROM conversions) || ' conversions' FROM tracked_events")
	echo "bench-track: 3 s after the load: $attributed" >&2
fi
echo "| connections | /track events/s | p50 | p99 | pgbench INSERT tx/s | ratio |"
echo "|---|---|---|---|---|---|"
echo "| $CONNS | $track_rps | $track_p50 | $track_p99 | $pg_tps | $ratio |"
