# local-chains.sh: sourced by run-local.sh. Starts the local chains that
# config/local.yaml indexes: the recorded real localnets served by replay
# nodes (revealing the last 30 heights one every 2 s, so the
# chains look live) on 127.0.0.1:26657-26661.
# shellcheck shell=bash
start_replay() { # name port
	local dir="testdata/localnet/$1" first
	first=$(( $(zcat "$dir/blocks.jsonl.gz" | wc -l) - 30 ))
	"$DEV_BIN" replay-node --data "$dir" --listen "127.0.0.1:$2" --block-time 2s --start-height "$first" 2>>.data/replay-"$1".log &
	pids+=($!)
}
mkdir -p .data
start_replay osmosis 26657
start_replay dydx 26658
start_replay neutron 26659
start_replay xion 26660
start_replay cosmoshub 26661
# The recorded EVM devnet: blocks from 250 on are revealed one per second,
# with block times moved so that block 250 is now. The times differ from
# one start to the next (the hashes do not), so what was indexed of it
# before is dropped.
"$BIN" index --config "$CONFIG" --reset --chain binance-smart-chain-56 >&2
"$DEV_BIN" replay-node --data testdata/evm/recorded --listen 127.0.0.1:8545 --block-time 1s --start-height 250 --rebase-time 2>>.data/replay-evm.log &
pids+=($!)
# A live in-process cosmos-sdk chain with steady traffic. It starts from
# genesis every time, so what was indexed of the previous one is dropped.
"$BIN" index --config "$CONFIG" --reset --chain chainlens-devnet >&2
"$DEV_BIN" devnet --listen 127.0.0.1:26670 2>>.data/devnet.log &
pids+=($!)
