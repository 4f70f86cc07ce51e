#!/usr/bin/env bash
# Installs the linters that tests/integration/006-lint.sh runs, from committed pins: Redocly CLI
# with `npm ci` from tests/tools/lint/package-lock.json into tests/tools/lint/node_modules
# (git-ignored). make test calls it; it installs again only when the lock file changed, so
# make test needs no network after the first run. promtool is Debian 12's (package prometheus),
# taken out of the package into tests/tools/lint/bin/ when none is on PATH — installing the
# package would also start a Prometheus server on :9090 on a systemd machine.
set -eu
cd "$(dirname "$0")/lint"

if ! command -v promtool >/dev/null && [ ! -x bin/promtool ]; then
    echo "lint-tools: promtool from Debian's prometheus package, into tests/tools/lint/bin"
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    (cd "$tmp" && apt-get download prometheus >"$tmp/apt.log" 2>&1) || {
        echo "lint-tools: apt-get download prometheus failed (package lists missing? apt-get update as root):" >&2
        tail -5 "$tmp/apt.log" >&2
        exit 1
    }
    dpkg-deb -x "$tmp"/prometheus_*.deb "$tmp/x"
    mkdir -p bin
    cp "$tmp/x/usr/bin/promtool" bin/promtool.new && mv bin/promtool.new bin/promtool
fi
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
