#!/bin/sh
# Builds the dashboard into OUT (the Makefile's $(BUILD)/web/dist): `npm ci` in web/ when
# package-lock.json changed since the last one (pinned packages; the only step that needs the npm
# registry), then web/build.mjs (esbuild) bundles web/src into OUT/assets and copies index.html.
#   web/build.sh OUT
set -eu
out=$1
cd "$(dirname "$0")"
stamp=node_modules/.rankscope-lock.json
if ! cmp -s package-lock.json "$stamp"; then
    echo "dashboard: npm ci in web/ (echarts, esbuild; pinned by package-lock.json)"
    # no install scripts: esbuild's postinstall only checks its platform binary, found without it
    npm ci --ignore-scripts --no-audit --no-fund --loglevel=error
    cp package-lock.json "$stamp"
fi
echo "dashboard: bundling web/src into $out"
node build.mjs "$out"
