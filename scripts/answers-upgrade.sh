#!/usr/bin/env bash
# answers-upgrade.sh REV: are the dex answers over a synthetic history the
# same before and after a change? The binary of REV (e.g. the commit before
# a refactoring) migrates a fresh database, writes DAYS days of synthetic
# dex history (`chainlens bench dex-history`), builds every report
# (`aggregate --once`) and answers the URL set of scripts/bench-dex.sh;
# then this checkout's binary upgrades the same database (`migrate up`),
# runs the aggregator once (jobs adopt the rows built before), answers
# again, rebuilds every job from scratch and answers a third time. Each
# answer is its status, X-Data-Height, X-Data-Time and body hash; any
# difference fails.
#
#   DAYS=365 scripts/answers-upgrade.sh cae4bd8
set -euo pipefail
cd "$(dirname "$0")/.."
REV=${1:?usage: answers-upgrade.sh REV}
DAYS=${DAYS:-365}
work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	git worktree remove --force "$work/src" >/dev/null 2>&1 || true
	if [ -n "${admin:-}" ]; then psql -q -d "$admin" -c "DROP DATABASE IF EXISTS \"$db\" WITH (FORCE)" >/dev/null 2>&1 || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

git worktree add --detach "$work/src" "$REV" >/dev/null 2>&1
(cd "$work/src" && go build -o "$work/before" ./cmd/chainlens)
go build -o "$work/after" ./cmd/chainlens

db="chainlens_answers_$$"
admin=$(scripts/db.sh ensure postgres)
url=$(scripts/db.sh ensure "$db")
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
. scripts/dex-synth.sh
dex_config "$work/c.yaml" "$url" "$port"
base="http://127.0.0.1:$port"
dex_urls "$base" "$work/plain.txt" "$work/chart.txt"

# answers BIN OUT: every URL's answer, one line each.
answers() {
	"$1" serve --config "$work/c.yaml" &
	local pid=$!
	for _ in $(seq 100); do curl -sf "$base/healthz" >/dev/null && break; sleep 0.1; done
	while read -r _ u; do
		curl -s -D "$work/h" -o "$work/b" -H "Authorization: Bearer $key" "$u"
		printf '%s %s %s %s %s\n' "$(head -1 "$work/h" | cut -d' ' -f2)" \
			"$(grep -i '^x-data-height:' "$work/h" | tr -d '\r' | cut -d' ' -f2)" \
			"$(grep -i '^x-data-time:' "$work/h" | tr -d '\r' | cut -d' ' -f2)" \
			"$(sha256sum < "$work/b" | cut -c1-16)" "${u#"$base"}"
	done < <(cat "$work/plain.txt" "$work/chart.txt") > "$2"
	kill "$pid"
	wait "$pid" 2>/dev/null || true
}

"$work/before" migrate up --config "$work/c.yaml" >/dev/null
"$work/before" bench dex-history --config "$work/c.yaml" --days "$DAYS" >&2
"$work/before" aggregate --config "$work/c.yaml" --once >/dev/null
key=$("$work/before" keys create --config "$work/c.yaml" --name answers --scopes all 2>/dev/null)
answers "$work/before" "$work/1-before.txt"

"$work/after" migrate up --config "$work/c.yaml" >/dev/null
"$work/after" aggregate --config "$work/c.yaml" --once >/dev/null
answers "$work/after" "$work/2-upgraded.txt"

psql -q -d "$url" -c "UPDATE aggregator_jobs SET version = 'rebuild'"
"$work/after" aggregate --config "$work/c.yaml" --once >/dev/null
answers "$work/after" "$work/3-rebuilt.txt"

echo "answers-upgrade: first answers (status, X-Data-Height, X-Data-Time, body hash, path):" >&2
head -3 "$work/1-before.txt" >&2
n=$(wc -l < "$work/1-before.txt")
ok=$(grep -c '^200 ' "$work/1-before.txt" || true)
status=0
for run in 2-upgraded 3-rebuilt; do
	if diff "$work/1-before.txt" "$work/$run.txt" >&2; then
		echo "answers-upgrade: $run: the $n answers ($ok of them 200) are identical to $REV's"
	else
		echo "answers-upgrade: $run: answers differ from $REV's (above)" >&2
		status=1
	fi
done
exit $status
