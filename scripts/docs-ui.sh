#!/usr/bin/env bash
# docs-ui.sh - the interactive API reference's assets (api/docsui/assets):
# Swagger UI's distribution files from the npm package pinned in
# api/docsui/package-lock.json, embedded in the binary (no CDN, no network
# at run time).
#
#   scripts/docs-ui.sh           npm ci, then copy the files into assets/
#   scripts/docs-ui.sh --check   npm ci, then fail if assets/ differs from
#                                what the lockfile installs (make test)
# Install scripts never run (--ignore-scripts). Output goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/../api/docsui"
files=(swagger-ui-bundle.js swagger-ui-bundle.js.LICENSE.txt swagger-ui.css LICENSE NOTICE)
command -v npm >/dev/null || { echo "docs-ui.sh: npm is missing (apt-get install nodejs npm)" >&2; exit 1; }
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2
if [[ ${1:-} == --check ]]; then
	for f in "${files[@]}"; do
		if ! cmp -s "node_modules/swagger-ui-dist/$f" "assets/$f"; then
			echo "docs-ui.sh: api/docsui/assets/$f is not what package-lock.json installs: run scripts/docs-ui.sh and commit" >&2
			exit 1
		fi
	done
	echo "docs-ui.sh: assets match swagger-ui-dist $(node -p 'require("./node_modules/swagger-ui-dist/package.json").version')" >&2
	exit 0
fi
mkdir -p assets
for f in "${files[@]}"; do
	cp "node_modules/swagger-ui-dist/$f" "assets/$f"
done
echo "docs-ui.sh: copied swagger-ui-dist $(node -p 'require("./node_modules/swagger-ui-dist/package.json").version') into api/docsui/assets" >&2
