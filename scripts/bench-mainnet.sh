#!/usr/bin/env bash
# bench-mainnet.sh PROFILE DAYS: a mainnet-shaped chain of DAYS days
# (`chainlens-dev synth-node`, deterministic) through the real path —
# `chainlens index`, `aggregate`, `serve` — on a fresh database, measured:
#   ingest      blocks/s and events/s of `index --until` over all but the last
#               hour, the indexer's peak RSS, and COPY of the same rows into an
#               empty copy of each written table (the ceiling, same run);
#   storage     bytes per table (with indexes), per block and per day;
#   jobs        `aggregate --once` over the history (full build), then the
#               incremental run after the last hour is indexed; then a rebuild;
#   API         every endpoint of the profile's groups, uncached: service time
#               p50/p99 of 20 requests each, one at a time.
# Output: markdown for docs/PERFORMANCE.md, on stdout. Profiles: evm (an
# Ethereum with stablecoins: the stablecoins group), dydx (dYdX v4: the perp
# and perp lens groups), osmosis (Osmosis: the dex and dex lens groups).
#
#   scripts/bench-mainnet.sh evm 1
#   scripts/bench-mainnet.sh dydx 1
#   scripts/bench-mainnet.sh osmosis 1
#   KEEP_DB=1 ... keeps the database (its URL is printed)
#   RAW='{events: {exclude: [commission, rewards]}}' ... gives the chain raw
#               filters (README "Raw filters"): what a long history needs
#   QUICK=1 ... stops after the incremental run (no rebuild, no API)
set -euo pipefail
cd "$(dirname "$0")/.."
PROFILE=${1:-evm}
DAYS=${2:-1}
case "$PROFILE" in
evm) # 12 s blocks; ingest counts the ERC-20 transfers
	per_day=7200 hour=300 counted="transfers" count_sql="SELECT count(*) FROM erc20_transfers" groups="stablecoins" ;;
dydx) # 1 s blocks; ingest counts the ABCI events (and says how many fills)
	per_day=86400 hour=3600 counted="ABCI events" count_sql="SELECT count(*) FROM events" groups="perp perp_lens" ;;
osmosis) # 2 s blocks; ingest counts the ABCI events (and says how many swap hops)
	per_day=43200 hour=1800 counted="ABCI events" count_sql="SELECT count(*) FROM events" groups="dex dex_lens" ;;
*) echo "bench-mainnet.sh: profiles: evm, dydx, osmosis" >&2; exit 2 ;;
esac
. scripts/bench-common.sh
bench_begin "chainlens_bench_${PROFILE}_${DAYS}_$$"
BIN=bin/chainlens
DEV=bin/chainlens-dev
node_port=$(port)
api_port=$(port)
end=$(date -u +%Y-%m-%dT%H:%M:%SZ)
node() { # node START_HEIGHT: serve the chain revealed through START_HEIGHT (0: all)
	"$DEV" synth-node --profile "$PROFILE" --days "$DAYS" --end-time "$end" --listen "127.0.0.1:$node_port" --start-height "$1" 2>"$work/node.log" &
	node_pid=$!
	pids+=($node_pid)
	for _ in $(seq 300); do node_tip "$PROFILE" "$node_port" >/dev/null 2>&1 && return; sleep 0.1; done
	echo "bench-mainnet.sh: the synth node did not start" >&2; cat "$work/node.log" >&2; exit 1
}
{
	printf 'database: {url: "%s"}\nlog: {level: warn}\napi: {listen: "127.0.0.1:%s", cache_ttl: 0s}\nchains:\n' "$url" "$api_port"
	"$DEV" synth-node --profile "$PROFILE" --days "$DAYS" --end-time "$end" --listen "127.0.0.1:$node_port" --print-config |
		if [ -n "${RAW:-}" ]; then sed "s/}\$/, raw: $RAW}/"; else cat; fi
} > "$work/c.yaml"
cfg=(--config "$work/c.yaml")
"$BIN" migrate up "${cfg[@]}" >/dev/null
last=$(( DAYS * per_day ))
q() { psql -qtA -d "$url" -c "$1"; }
now() { date +%s.%N; }
elapsed() { python3 -c "print(f'{$2 - $1:.2f}')"; }

echo "## bench-mainnet: profile $PROFILE, $DAYS day(s) ($last blocks), $(nproc) cores${RAW:+, raw filters $RAW}"
echo
# Ingest: everything but the last hour.
node $(( last - hour ))
t0=$(now)
/usr/bin/time -f '%M' -o "$work/rss" "$BIN" index "${cfg[@]}" --until $(( last - hour )) 2>>"$work/index.log"
t1=$(now)
kill "$node_pid"; wait "$node_pid" 2>/dev/null || true
secs=$(elapsed "$t0" "$t1")
events=$(q "$count_sql")
rss=$(cat "$work/rss")
echo "### ingest"
echo
echo "| blocks | events ($counted) | seconds | blocks/s | events/s | indexer peak RSS |"
echo "|---|---|---|---|---|---|"
python3 -c "print(f'| {$last - $hour} | {$events} | {$secs} | {($last - $hour)/$secs:,.0f} | {$events/$secs:,.0f} | {$rss/1024:,.0f} MB |')"
echo
if [ "$PROFILE" = osmosis ]; then
	echo "Swap hops: $(q "SELECT count(*) FROM osmosis_swaps"), pools: $(q "SELECT count(*) FROM osmosis_pools"), positions created: $(q "SELECT count(*) FROM osmosis_cl_positions WHERE kind = 'create'")."
	echo
fi
if [ "$PROFILE" = dydx ]; then
	echo "Fills (taker sides): $(q "SELECT count(*) FROM dydx_fills WHERE role = 'taker'"), of which liquidations: $(q "SELECT count(*) FROM dydx_fills WHERE role = 'taker' AND is_liquidation")."
	echo
fi
# The ceiling: the same rows COPYed into empty copies of the written tables.
echo "| table | rows | COPY in s (ceiling) |"
echo "|---|---|---|"
copy_total=0
for t in $(q "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind IN ('r','p') AND NOT c.relispartition ORDER BY 1"); do
	rows=$(q "SELECT count(*) FROM \"$t\"")
	[ "$rows" -gt 1000 ] || continue
	q "COPY (SELECT * FROM \"$t\") TO '$work/$t.copy'" >/dev/null 2>&1 || psql -qtA -d "$url" -c "\\copy (SELECT * FROM \"$t\") TO '$work/$t.copy'" >/dev/null
	q "CREATE TABLE \"ceiling_$t\" (LIKE \"$t\" INCLUDING DEFAULTS INCLUDING INDEXES)" >/dev/null
	c0=$(now)
	psql -qtA -d "$url" -c "\\copy \"ceiling_$t\" FROM '$work/$t.copy'" >/dev/null
	c1=$(now)
	q "DROP TABLE \"ceiling_$t\"" >/dev/null
	rm -f "$work/$t.copy"
	echo "| $t | $rows | $(elapsed "$c0" "$c1") |"
	copy_total=$(python3 -c "print($copy_total + $c1 - $c0)")
done
python3 -c "print(f'\nIngest took {$secs / $copy_total:.1f}× the COPY of its rows ({$copy_total:.2f} s).\n')"

echo "### storage after $DAYS day(s)"
echo
echo "| table (with its partitions and indexes) | MB | bytes/block | MB/day |"
echo "|---|---|---|---|"
# Every level of partitions (the raw tables are partitioned by chain, then
# by height range): pg_partition_tree.
q "SELECT relname, bytes FROM (SELECT c.relname, (SELECT sum(pg_total_relation_size(relid)) FROM pg_partition_tree(c.oid)) AS bytes
   FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE n.nspname = 'public' AND c.relkind IN ('r','p') AND NOT c.relispartition) t WHERE bytes > 100000 ORDER BY 2 DESC" |
while IFS='|' read -r t bytes; do
	python3 -c "print(f'| $t | {$bytes/1e6:,.1f} | {$bytes/($last-$hour):,.0f} | {$bytes/1e6/$DAYS*($last/($last-$hour)):,.1f} |')"
done
echo

echo "### aggregator"
echo
# A run reads at most 20,000 blocks per chain: run until every job over the
# chain has reached the indexed height.
caught_up() {
	[ "$(q "SELECT count(*) FROM aggregator_jobs j, sync_state s WHERE s.chain_id = j.chain_id AND j.height < s.next_height - 1")" = 0 ] &&
	[ "$(q "SELECT count(*) FROM aggregator_jobs WHERE chain_id IS NOT NULL")" -gt 0 ]
}
aggregate_all() {
	"$BIN" aggregate "${cfg[@]}" --once >/dev/null
	for _ in $(seq 1000); do caught_up && return; "$BIN" aggregate "${cfg[@]}" --once >/dev/null; done
	echo "bench-mainnet.sh: the jobs did not catch up" >&2; exit 1
}
a0=$(now); aggregate_all; a1=$(now)
node 0
# The node regenerates the chain from its genesis up to the first height
# asked (about 1.3 ms a height: 13 minutes at 14 days of Osmosis); ask it
# once, waiting, before the indexer, whose attempts would time out first.
if [ "$PROFILE" != evm ]; then
	curl -sf --max-time 86400 "http://127.0.0.1:$node_port/block?height=$(( last - hour + 1 ))" >/dev/null
fi
"$BIN" index "${cfg[@]}" --until "$last" 2>>"$work/index.log"
i0=$(now); aggregate_all; i1=$(now)
echo "| run | seconds |"
echo "|---|---|"
echo "| full build over $DAYS day(s) less an hour | $(elapsed "$a0" "$a1") |"
echo "| incremental, after one more hour of blocks | $(elapsed "$i0" "$i1") |"
jobs=$(q "SELECT name, last_duration_ms, last_rows FROM aggregator_jobs WHERE chain_id IS NOT NULL ORDER BY last_duration_ms DESC")
if [ -z "${QUICK:-}" ]; then
	r0=$(now)
	q "UPDATE aggregator_jobs SET watermark = 0 WHERE chain_id IS NOT NULL" >/dev/null # a rebuild, as a version change starts one
	aggregate_all
	r1=$(now)
	echo "| rebuild of every job of the chain from its first block | $(elapsed "$r0" "$r1") |"
fi
echo
echo "Per job, its incremental run (aggregator_jobs.last_duration_ms):"
echo
echo "| job | ms | rows |"
echo "|---|---|---|"
echo "$jobs" | while IFS='|' read -r n ms rows; do echo "| $n | $ms | $rows |"; done
echo
if [ -n "${QUICK:-}" ]; then exit 0; fi # QUICK=1: no rebuild, no API

echo "### API, uncached (20 sequential requests per endpoint)"
echo
key=$("$BIN" keys create "${cfg[@]}" --name bench --scopes all 2>/dev/null)
"$BIN" serve "${cfg[@]}" 2>>"$work/serve.log" &
pids+=($!)
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$api_port/healthz" >/dev/null && break; sleep 0.1; done
base="http://127.0.0.1:$api_port"
echo "| endpoint | status | p50 ms | p99 ms |"
echo "|---|---|---|---|"
curl -sf "$base/openapi.json" > "$work/openapi.json"
paths=$(profile_paths "$groups" "$work/openapi.json")
for path in $paths; do
	code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $key" "$base$path")
	for _ in $(seq 20); do curl -s -o /dev/null -w '%{time_total}\n' -H "Authorization: Bearer $key" "$base$path"; done | sort -n > "$work/t"
	echo "| \`$path\` | $code | $(python3 -c "print(f'{float(open(\"$work/t\").read().split()[9])*1000:.1f}')") | $(python3 -c "print(f'{float(open(\"$work/t\").read().split()[19])*1000:.1f}')") |"
done
echo
if [ -n "${KEEP_DB:-}" ]; then echo "database kept: $url" >&2; fi
