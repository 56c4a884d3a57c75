# bench-common.sh: sourced by the bench scripts that run a generated chain
# (bench-mainnet.sh, bench-tip.sh) from the project root.

# bench_begin DB: builds bin/chainlens and bin/chainlens-dev, makes a work
# folder ($work), a fresh database DB ($url) and a trap that stops every
# process in $pids and drops DB (kept with KEEP_DB=1) at exit.
bench_begin() {
	go build -o bin/chainlens ./cmd/chainlens
	go build -o bin/chainlens-dev ./cmd/chainlens-dev
	work=$(mktemp -d)
	pids=()
	db=$1
	admin=$(scripts/db.sh ensure postgres)
	trap bench_end EXIT
	url=$(scripts/db.sh ensure "$db")
}

bench_end() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	if [ -z "${KEEP_DB:-}" ]; then psql -q -d "$admin" -c "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null 2>&1 || true; fi
	rm -rf "$work"
}

# port: a free loopback port.
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# node_tip PROFILE PORT: the tip height a synth node of PROFILE serves on
# PORT; fails while the node is not up.
node_tip() {
	if [ "$1" = evm ]; then
		curl -sf -X POST -H 'Content-Type: application/json' -d '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}' \
			"http://127.0.0.1:$2" | python3 -c 'import json,sys; print(int(json.load(sys.stdin)["result"], 16))'
	else
		curl -sf "http://127.0.0.1:$2/status" | python3 -c 'import json,sys; print(json.load(sys.stdin)["result"]["sync_info"]["latest_block_height"])'
	fi
}

# profile_paths GROUPS OPENAPI: every GET operation of the groups (names
# separated by spaces) in the OpenAPI document file OPENAPI that needs no
# parameter, and for the stablecoins the chart windows of an hour.
profile_paths() {
	python3 - "$1" "$2" <<'PY'
import json, sys
groups = sys.argv[1].split()
doc = json.load(open(sys.argv[2]))
for path, item in doc['paths'].items():
    op = item.get('get')
    if op and op['tags'][0] in groups and '{' not in path and not any(p.get('required') for p in op.get('parameters', [])):
        print(path)
if 'stablecoins' in groups:
    for p in ('issuing', 'active-senders', 'volume-by-category'):
        print(f'/stablecoins/{p}/over-time?time_range=24h&time_agg=1h')
PY
}
