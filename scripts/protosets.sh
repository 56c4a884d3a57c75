#!/usr/bin/env bash
# Rebuilds the protobuf descriptor sets shipped in the binary
# (chains/protoset/sets/*.binpb.gz) from the Go modules and versions that
# chains/protoset/sets/sets.json pins, and the .proto files under
# chains/protoset/proto. Needs the Go module proxy; `make run` and
# `make test` use the committed sets and need no network.
set -euo pipefail
cd "$(dirname "$0")/.."
go run ./cmd/chainlens-dev protosets --dir chains/protoset/sets "$@"
