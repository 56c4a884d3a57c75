#!/usr/bin/env bash
# sdk.sh - build and unit-test the JavaScript SDK in sdk/js (used by `make test`
# before the Go tests, whose sdk/js end-to-end test loads the built bundle
# sdk/js/dist/engage.js into headless Chromium).
#
# Installs what is missing with apt-get (Debian): node and npm, and chromium
# (the browser the end-to-end test runs). Then: npm ci, npm run build,
# npm test (node --test). Set CHAINLENS_SDK_NO_INSTALL=1 to only check that
# the tools are there. All output goes to stderr.
set -euo pipefail

SCRIPT_DIR=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd)
SDK_DIR=$(dirname -- "$SCRIPT_DIR")/sdk/js
readonly SCRIPT_DIR SDK_DIR

log() { printf 'sdk.sh: %s\n' "$*" >&2; }
die() {
	log "error: $*"
	exit 1
}

# apt_install PKG... installs Debian packages (as root, or through sudo).
apt_updated=0
apt_install() {
	[[ ${CHAINLENS_SDK_NO_INSTALL:-0} == 1 ]] && die "missing: $* (CHAINLENS_SDK_NO_INSTALL=1)"
	command -v apt-get >/dev/null || die "missing: $*; install them (no apt-get here)"
	local sudo=()
	if [[ $(id -u) != 0 ]]; then
		command -v sudo >/dev/null || die "missing: $*; run as root or install them"
		sudo=(sudo -n)
	fi
	if [[ $apt_updated == 0 ]]; then
		log "apt-get update"
		"${sudo[@]}" apt-get update -qq >&2
		apt_updated=1
	fi
	log "apt-get install -y $*"
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "$@" >&2
}

need=()
command -v node >/dev/null || need+=(nodejs)
command -v npm >/dev/null || need+=(npm)
[[ -x ${CHROMIUM:-/usr/bin/chromium} ]] || need+=(chromium)
if ((${#need[@]} > 0)); then
	apt_install "${need[@]}"
fi

cd "$SDK_DIR"
log "node $(node --version), npm $(npm --version 2>/dev/null)"
# npm writes progress and warnings on stderr; keep stdout clean for callers.
npm ci --no-audit --no-fund >&2
npm run --silent build >&2
npm test >&2
log "built $SDK_DIR/dist/engage.js"
