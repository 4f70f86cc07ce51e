#!/usr/bin/env bash
# The dashboard (docs/dashboard.md): its files served from the binary with their security headers
# and ETags; GET /v1/jobs/{job}/heatmap against the simulator's truth (rank 5's GPU 10% slow from
# step 100); then every view in Debian's chromium, headless, driven by tests/browser/dashboard.mjs
# (puppeteer-core): banner, heatmap colours, click, deep links, icicle, timeline download, live
# refresh, markup in kernel and host names, the token prompt. The browser part is skipped, and says
# so, where chromium or puppeteer-core is missing. On failure: a screenshot per failed check in
# $RS_TEST_OUT (default build/test-out/260-dashboard).
. "$(dirname "$0")/common.sh"
OUT=${RS_TEST_OUT:-$ROOT/${BUILD:-build}/test-out/260-dashboard}
start_server
start_agent
"$BIN/rankscope-sim" --job tour --ranks 16 --steps 300 --speed 0 --slow-rank 5 --slowdown 0.1 \
    --onset-step 100 --agent "$WORK/agent.sock" --log-level warn >"$WORK/tour.json"
"$BIN/rankscope-sim" --job pc --ranks 4 --steps 60 --speed 0 --slow-rank 2 --pc-sampling \
    --agent "$WORK/agent.sock" --log-level warn >"$WORK/pc.json"
for j in tour pc; do wait_for_records "$j" "$WORK/$j.json"; done

headers() { curl -s -D - -o "$WORK/body" "$@" "$HTTP/" | tr -d '\r'; }
headers >"$WORK/h"
check "GET / is the dashboard page: 200, text/html, an ETag" bash -c '
    grep -q "^HTTP/1.1 200" "$1" && grep -qi "^Content-Type: text/html; charset=utf-8" "$1" &&
    grep -qi "^ETag: \"" "$1" && grep -q "<title>rankscope</title>" "$2"' _ "$WORK/h" "$WORK/body"
check "its CSP allows only its own scripts (no inline script or style), nosniff, no framing" bash -c '
    csp=$(sed -n "s/^Content-Security-Policy: //Ip" "$1")
    case $csp in *"default-src '"'"'self'"'"'"*) ;; *) exit 1 ;; esac
    case $csp in *unsafe*) exit 1 ;; esac
    case $csp in *"script-src '"'"'self'"'"';"*) ;; *) exit 1 ;; esac
    case $csp in *"frame-ancestors '"'"'none'"'"'"*) ;; *) exit 1 ;; esac
    grep -qi "^X-Content-Type-Options: nosniff" "$1" && grep -qi "^X-Frame-Options: DENY" "$1"' _ "$WORK/h"
check "the page has no inline script: every <script> loads /assets/" bash -c '
    [ "$(grep -c "<script" "$1")" = "$(grep -c "<script defer src=\"/assets/" "$1")" ]' _ "$WORK/body"
check "If-None-Match with its ETag: 304 without a body, still with the CSP" bash -c '
    tag=$(sed -n "s/^ETag: //Ip" "$1")
    curl -s -D "$2.h" -o "$2.b" -H "If-None-Match: $tag" "$3/" &&
    grep -q "^HTTP/1.1 304" "$2.h" && [ ! -s "$2.b" ] && grep -qi "^Content-Security-Policy:" "$2.h"' \
    _ "$WORK/h" "$WORK/r304" "$HTTP"
check "/assets/app.js is JavaScript, /assets/style.css CSS (or the not-built page links none)" bash -c '
    if grep -q "dashboard was not built" "$2"; then exit 0; fi
    curl -s -D - -o /dev/null "$1/assets/app.js" | tr -d "\r" | grep -qi "^Content-Type: text/javascript" &&
    curl -s -D - -o /dev/null "$1/assets/style.css" | tr -d "\r" | grep -qi "^Content-Type: text/css"' \
    _ "$HTTP" "$WORK/body"
check "gzip: assets and a large API answer compressed for Accept-Encoding: gzip (gunzip = the plain bytes, a -gz ETag that revalidates, Vary); plain without it or with gzip;q=0" bash -c '
    for path in /index.html /assets/app.js "/v1/jobs/tour/heatmap?columns=2000&last=300"; do
        curl -s -D "$2.ph" -o "$2.plain" "$1$path" &&
        curl -s -D "$2.zh" -o "$2.gz" -H "Accept-Encoding: gzip, br" "$1$path" &&
        curl -s -D "$2.qh" -o "$2.q0" -H "Accept-Encoding: gzip;q=0, *" "$1$path" || exit 1
        tr -d "\r" <"$2.zh" | grep -qi "^Content-Encoding: gzip$" || { echo "$path: not compressed"; exit 1; }
        tr -d "\r" <"$2.zh" | grep -qi "^Vary: Accept-Encoding$" || { echo "$path: no Vary"; exit 1; }
        ! grep -qi "^Content-Encoding" "$2.ph" "$2.qh" || { echo "$path: compressed unasked"; exit 1; }
        gunzip -c "$2.gz" | cmp -s - "$2.plain" || { echo "$path: gunzip differs"; exit 1; }
        cmp -s "$2.q0" "$2.plain" || exit 1
        [ "$(wc -c <"$2.gz")" -lt "$(wc -c <"$2.plain")" ] || { echo "$path: no smaller"; exit 1; }
        tag=$(tr -d "\r" <"$2.zh" | sed -n "s/^ETag: //Ip")
        case $tag in *-gz\") ;; *) echo "$path: ETag $tag"; exit 1 ;; esac
        [ "$(curl -s -o /dev/null -w "%{http_code}" -H "Accept-Encoding: gzip" -H "If-None-Match: $tag" "$1$path")" = 304 ] || exit 1
    done
    [ "$(curl -s -o /dev/null -w "%{size_download}" -H "Accept-Encoding: gzip" "$1/healthz")" -gt 0 ] &&
    ! curl -s -D - -o /dev/null -H "Accept-Encoding: gzip" "$1/v1/jobs/tour/heatmap?columns=1&metric=step_ms&last=1" | grep -qi "^Content-Encoding"' \
    _ "$HTTP" "$WORK/gz"
check "an unknown asset is 404 JSON; POST / is 405; /assets/../healthz is not a way out" bash -c '
    [ "$(curl -s -o "$2" -w "%{http_code}" "$1/assets/nope.js")" = 404 ] && grep -q "\"status\":404" "$2" &&
    [ "$(curl -s -o /dev/null -w "%{http_code}" -X POST "$1/")" = 405 ] &&
    [ "$(curl -s --path-as-is -o /dev/null -w "%{http_code}" "$1/assets/../v1/jobs")" != 200 ] &&
    [ "$(curl -s --path-as-is -o /dev/null -w "%{http_code}" "$1/assets/%2e%2e/v1/jobs")" != 200 ]' \
    _ "$HTTP" "$WORK/e"
check "without node (DASHBOARD=off) make says so and embeds the how-to-build page, which compiles" bash -c '
    make -n --no-print-directory DASHBOARD=off BUILD="$1/b" "$1/b/gen/web_assets.c" >"$1/make.out" 2>&1 &&
    grep -q "^dashboard: DASHBOARD=off: rankscope-server will serve a page saying how to build" "$1/make.out" &&
    grep -q "scripts/embed_assets.sh web/fallback" "$1/make.out" &&
    scripts/embed_assets.sh web/fallback >"$1/fallback.c" && cc -std=c11 -Wall -Werror -I. -c "$1/fallback.c" -o "$1/fallback.o" &&
    grep -q "\"/index.html\", \"text/html; charset=utf-8\"" "$1/fallback.c"' _ "$WORK"

curl -s "$HTTP/v1/jobs/tour/heatmap?metric=compute_ms&columns=50" >"$WORK/hm.json"
check "heatmap: the whole job, 16 ranks x 50 columns of 6 steps, steps 0..299, each column's median and slowest, every rank-step once" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["metric"] == "compute_ms" and d["steps_source"] == "markers", d["metric"]
assert (d["first_step"], d["last_step"], d["steps_per_column"]) == (0, 299, 6), d
# the whole job: the newest 30 steps of each rank loaded in full, the older ones from what the
# store holds per step (through the server cache); every rank-step counted once
assert d["window"] == "all" and d["last_steps"] == 30, (d["window"], d["last_steps"])
assert d["exact_rank_steps"] + d["stored_rank_steps"] == 16 * 300 and d["rank_steps_without_metrics"] == 0, d
assert d["ranks"] == list(range(16)) and len(d["columns"]) == 50, (d["ranks"], len(d["columns"]))
assert all(len(row) == 50 and None not in row for row in d["values"])
c = d["columns"][0]
assert (c["first_step"], c["last_step"]) == (0, 5) and c["start_ns"] > 0, c' "$WORK/hm.json"
check "heatmap: rank 5 is ~10% above the median from step 100 (the sim's truth), a peer is not" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for i, c in enumerate(d["columns"]):
    r5, r2 = d["values"][5][i] / c["median_ms"], d["values"][2][i] / c["median_ms"]
    assert abs(r2 - 1) < 0.03, (i, r2)
    if c["first_step"] >= 100:
        assert 1.07 < r5 < 1.13 and c["max_rank"] == 5 and c["max_ms"] == d["values"][5][i], (i, r5, c)
    elif c["last_step"] < 100:
        assert abs(r5 - 1) < 0.03, (i, r5)' "$WORK/hm.json"
check "heatmap: one column per step when columns >= steps; last=N keeps the newest N; from_step..to_step bins that window" python3 -c '
import json, sys, urllib.request
get = lambda q: json.load(urllib.request.urlopen(sys.argv[1] + "/v1/jobs/tour/heatmap?" + q))
d = get("columns=2000")
assert d["steps_per_column"] == 1 and len(d["columns"]) == 300 and d["metric"] == "step_ms", d["steps_per_column"]
# rank-steps by hand: the mean of a column is the mean of its steps (/steps gives every step)
s = json.load(urllib.request.urlopen(sys.argv[1] + "/v1/jobs/tour/steps?last=300"))
r3 = [x["idle_ms"] for x in s["ranks"][3]["steps"]]
h = get("metric=idle_ms&columns=7")
per = h["steps_per_column"]
assert per == 43 and len(h["columns"]) == 7, per
for i in range(7):
    want = sum(r3[i * per:(i + 1) * per]) / len(r3[i * per:(i + 1) * per])
    assert abs(h["values"][3][i] - want) < 6e-4, (i, h["values"][3][i], want)  # rounded to the us
n = get("last=40&columns=4")
assert (n["first_step"], n["last_step"], n["steps_per_column"]) == (260, 299, 10), n
# a window of steps: 50..149 in 10 columns of 10, each the mean of its steps
w = get("metric=idle_ms&from_step=50&to_step=149&columns=10")
assert (w["first_step"], w["last_step"], w["steps_per_column"], w["window"]) == (50, 149, 10, "all"), w
for i in range(10):
    want = sum(r3[50 + i * 10:60 + i * 10]) / 10
    assert abs(w["values"][3][i] - want) < 6e-4, (i, w["values"][3][i], want)
assert w["exact_rank_steps"] + w["stored_rank_steps"] == 16 * 100, w' "$HTTP"
check "heatmap refuses a bad metric, 0 or too many columns, from_step after to_step, an unknown job" bash -c '
    code() { curl -s -o "$2" -w "%{http_code}" "$1/v1/jobs/$3"; }
    [ "$(code "$1" "$2" "tour/heatmap?metric=steps")" = 400 ] && grep -q "not one of step_ms" "$2" &&
    [ "$(code "$1" "$2" "tour/heatmap?columns=0")" = 400 ] &&
    [ "$(code "$1" "$2" "tour/heatmap?columns=2001")" = 400 ] &&
    [ "$(code "$1" "$2" "tour/heatmap?from_step=10&to_step=9")" = 400 ] && grep -q "from_step must not be after" "$2" &&
    [ "$(code "$1" "$2" "tour/heatmap?to_step=-1")" = 400 ] &&
    [ "$(code "$1" "$2" "tour/heatmap?metric=%3Cimg%3E")" = 400 ] && ! grep -q "<img>" "$2" &&
    [ "$(code "$1" "$2" "nope/heatmap")" = 404 ]' _ "$HTTP" "$WORK/e"

# ---- in the browser ----
if [ ! -x "${RS_CHROMIUM:-/usr/bin/chromium}" ] || ! command -v node >/dev/null ||
   [ ! -d tests/browser/node_modules/puppeteer-core ]; then
    echo "$SUITE: browser checks skipped: needs chromium (make test-deps) and puppeteer-core (make browser-tools)"
    finish
fi
if grep -q "dashboard was not built" "$WORK/body"; then
    echo "$SUITE: browser checks skipped: this server was built without node/npm (see its / page)"
    finish
fi
# markup where names come from outside: kernel names of an imported trace, a host and kernel name
# on the wire
PAYLOAD='<img src=x onerror="window.__pwned=true;alert(1)">'
python3 - "$ROOT/tests/fixtures/kineto-h200x2" "$WORK" "$PAYLOAD" <<'PY'
import collections, gzip, json, sys
src, work, payload = sys.argv[1:]
for r in (0, 1):
    d = json.load(gzip.open("%s/fixture_rank0slow_rank%d.json.gz" % (src, r)))
    names = collections.Counter(e["name"] for e in d["traceEvents"] if e.get("cat") == "kernel")
    (a, _), (b, _) = names.most_common(2)  # the top kernels: shown in every view
    evil = {a: payload, b: "<script>window.__pwned=true;alert(2)</script>"}
    for e in d["traceEvents"]:
        if e.get("cat") == "kernel" and e["name"] in evil:
            e["name"] = evil[e["name"]]
    json.dump(d, open("%s/evil_rank%d.json" % (work, r), "w"))
PY
"$BIN/rankscope" --server "$HTTP" import "$WORK/evil_rank0.json" "$WORK/evil_rank1.json" --job evil \
    >"$WORK/evil.out" 2>&1
"$TOOLS/rs-nng-send" "$LISTEN" --valid evilhost 1 --host "$PAYLOAD" --kernel "$PAYLOAD" >"$WORK/evilhost.out" 2>&1
check "the hostile names are stored (the import and the batch were accepted)" bash -c '
    curl -sf "$1/v1/jobs/evilhost/ranks" | grep -q "onerror" &&
    curl -sf "$1/v1/jobs/evil/top?limit=50" | grep -q "onerror"' _ "$HTTP"
# a second server that needs tokens (h-auth): the dashboard's files are public, the API is not
"$BIN/rankscope-server" --new-token viewer --role read >"$WORK/viewer.new"
grep '^rst_' "$WORK/viewer.new" >"$WORK/viewer.token"
grep '^viewer read sha256:' "$WORK/viewer.new" >"$WORK/tokens"
chmod 600 "$WORK/tokens" "$WORK/viewer.token"
start auth_server "$BIN/rankscope-server" --data "$WORK/auth-data" --http 127.0.0.1:0 \
    --listen tcp://127.0.0.1:0 --ready-file "$WORK/auth.ready" --token-file "$WORK/tokens"
wait_file "$WORK/auth.ready" || exit 1
AUTH_HTTP=http://$(field "$WORK/auth.ready" http)
check "with a token file: /, /assets/app.js without a token (200), /v1/jobs 401, with the token 200" bash -c '
    [ "$(curl -s -o /dev/null -w "%{http_code}" "$1/")" = 200 ] &&
    [ "$(curl -s -o /dev/null -w "%{http_code}" "$1/assets/app.js")" = 200 ] &&
    [ "$(curl -s -o /dev/null -w "%{http_code}" "$1/v1/jobs")" = 401 ] &&
    [ "$(curl -s -o /dev/null -w "%{http_code}" -H "Authorization: Bearer $(cat "$2")" "$1/v1/jobs")" = 200 ]' \
    _ "$AUTH_HTTP" "$WORK/viewer.token"
# a job running while the browser watches it (up to 51 s of 34 ms steps; stopped when the browser is done)
"$BIN/rankscope-sim" --job live --ranks 4 --steps 1500 --speed 1 --agent "$WORK/agent.sock" \
    --log-level warn >"$WORK/live.json" &
LIVE_SIM=$!
sleep 3
rm -rf "$OUT"
# chromium writes its crash-report settings and dconf cache under HOME: keep them in $WORK
mkdir -p "$WORK/home"
HOME=$WORK/home XDG_CONFIG_HOME=$WORK/home/.config XDG_CACHE_HOME=$WORK/home/.cache \
    RS_TOKEN=$(cat "$WORK/viewer.token") \
    timeout 240 node tests/browser/dashboard.mjs "$HTTP" "$OUT" "$AUTH_HTTP" >"$WORK/browser.out" 2>&1
rc=$?
kill "$LIVE_SIM" 2>/dev/null
wait "$LIVE_SIM" 2>/dev/null
browser_checks "$WORK/browser.out" "$rc" 15 "$OUT"
finish
