#!/usr/bin/env bash
# console-ui.sh - the operator console's vendored chart library
# (internal/console/assets/vendor): uPlot's distribution files from the npm
# package pinned in internal/console/ui/package-lock.json, embedded in the
# binary (no CDN, no network at run time). The console's own files
# (assets/index.html, app.js, app.css) are plain JS and CSS: no build step.
#
#   scripts/console-ui.sh           npm ci, then copy the files into assets/vendor
#   scripts/console-ui.sh --check   npm ci, then fail if assets/vendor differs from
#                                   what the lockfile installs (make test)
# Install scripts never run (--ignore-scripts). Output goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/../internal/console/ui"
files=(dist/uPlot.iife.min.js dist/uPlot.min.css LICENSE)
command -v npm >/dev/null || { echo "console-ui.sh: npm is missing (apt-get install nodejs npm)" >&2; exit 1; }
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2
version=$(node -p 'require("./node_modules/uplot/package.json").version')
if [[ ${1:-} == --check ]]; then
	for f in "${files[@]}"; do
		if ! cmp -s "node_modules/uplot/$f" "../assets/vendor/uplot/$(basename "$f")"; then
			echo "console-ui.sh: internal/console/assets/vendor/uplot/$(basename "$f") is not what package-lock.json installs: run scripts/console-ui.sh and commit" >&2
			exit 1
		fi
	done
	echo "console-ui.sh: assets match uplot $version" >&2
	exit 0
fi
mkdir -p ../assets/vendor/uplot
for f in "${files[@]}"; do
	cp "node_modules/uplot/$f" "../assets/vendor/uplot/$(basename "$f")"
done
echo "console-ui.sh: copied uplot $version into internal/console/assets/vendor/uplot" >&2
