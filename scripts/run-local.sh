#!/usr/bin/env bash
# run-local.sh: the body of `make run`. Ensures Postgres, migrates, creates a
# dev API key, starts the local chains the config points at, then runs every
# chainlens role in the foreground until Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${BIN:-bin/chainlens}
DEV_BIN=${DEV_BIN:-bin/chainlens-dev}
CONFIG=${CONFIG:-config/local.yaml}

DATABASE_URL=$(scripts/db.sh ensure chainlens)
export DATABASE_URL

"$BIN" migrate up --config "$CONFIG" >&2

key=$("$BIN" keys create --config "$CONFIG" --name "dev-$(date +%s)" --scopes all 2>/dev/null)
listen=$(sed -n 's/^ *listen: *\([0-9.:]*\).*/\1/p' "$CONFIG" | head -1)
listen=${CHAINLENS_API_LISTEN:-${listen:-127.0.0.1:8080}}

pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
}
trap cleanup EXIT INT TERM

# Local chains: recorded real localnets served by replay nodes, and a live
# in-process cosmos-sdk devnet, on the ports config/local.yaml uses.
if [ -f scripts/local-chains.sh ]; then
	# shellcheck source=/dev/null
	. scripts/local-chains.sh
fi

cat >&2 <<MSG

chainlens is starting on http://$listen
  dev API key: $key
  try:  curl -s -H "Authorization: Bearer $key" http://$listen/openapi.json | head -c 300; echo
        curl -s http://$listen/readyz
        open http://$listen/docs
MSG

"$BIN" run --config "$CONFIG" &
pids+=($!)
wait "${pids[-1]}"
