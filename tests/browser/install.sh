#!/bin/sh
# Installs puppeteer-core for the dashboard's browser test (tests/integration/260-dashboard.sh)
# with `npm ci` from tests/browser/package-lock.json into tests/browser/node_modules (git-ignored),
# again only when the lock file changed. The browser is Debian's chromium (make test-deps).
set -eu
cd "$(dirname "$0")"
stamp=node_modules/.rankscope-lock.json
if [ -d node_modules/puppeteer-core ] && cmp -s package-lock.json "$stamp"; then
    exit 0
fi
if ! command -v npm >/dev/null; then
    echo "browser-tools: npm not found; the dashboard's browser test will be skipped" >&2
    exit 0
fi
echo "browser-tools: npm ci in tests/browser (puppeteer-core, pinned by package-lock.json)"
# no install scripts: puppeteer-core has none that matter (it never downloads a browser)
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
cp package-lock.json "$stamp"
