#!/usr/bin/env bash
# Installs the linters that tests/integration/006-lint.sh runs, from committed pins: Redocly CLI
# with `npm ci` from tests/tools/lint/package-lock.json into tests/tools/lint/node_modules
# (git-ignored). make test calls it; it installs again only when the lock file changed, so
# make test needs no network after the first run. promtool is Debian's (package prometheus).
set -eu
cd "$(dirname "$0")/lint"
stamp=node_modules/.rankscope-lock.json
if [ -x node_modules/.bin/redocly ] && cmp -s package-lock.json "$stamp"; then
    exit 0
fi
if ! command -v npm >/dev/null; then
    echo "lint-tools: npm not found; install Node.js and npm" \
         "(Debian 12: apt-get install nodejs npm)" >&2
    exit 1
fi
echo "lint-tools: npm ci in tests/tools/lint (Redocly CLI, pinned by package-lock.json)"
# No install scripts: the only one in the tree is core-js's postinstall banner.
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
cp package-lock.json "$stamp"
