#!/usr/bin/env bash
# The dashboard's job overview for a 1,024-rank job (docs/BENCHMARKS.md "Dashboard"): a server fed
# by rs-summary-load (1,024 ranks of one job, one summary per rank per 1 s window, each with its
# step and measured metrics, as summarizing agents send them) for LOAD_S seconds, then RUNS fresh
# chromium contexts open the overview (tests/bench/dashboard_overview.mjs): time to first render,
# bytes transferred; and the heatmap endpoint's own time with curl.
#   tests/bench/dashboard_overview.sh [LOAD_S] [RUNS]     (make all test-build browser-tools first)
# RS_BENCH_DATA=DIR keeps the store in DIR: loaded when DIR does not exist yet, used as it is when
# it does (the load takes LOAD_S seconds; the measurements can then be repeated on the same job,
# each after a server start: the first heatmap answer is then the first open after a restart).
# RANKSCOPE_SERVER_HEATMAP_WARM_S=0 turns the server's background warm-up off (the old cold start).
# The machine's load average is printed before, between and after, and with each run.
set -euo pipefail
cd "$(dirname "$0")/../.."
LOAD_S=${1:-420}
RUNS=${2:-5}
BIN=${BUILD:-build}/bin
W=$(mktemp -d "${TMPDIR:-/tmp}/rs-dash-bench.XXXXXX")
trap 'kill $SERVER 2>/dev/null; wait $SERVER 2>/dev/null; rm -rf "$W"' EXIT
DATA=${RS_BENCH_DATA:-$W/data}
LOADED=$([ -d "$DATA" ] && echo yes || echo no)
T_START=$(date +%s%N)
"$BIN/rankscope-server" --data "$DATA" --http 127.0.0.1:0 --listen tcp://127.0.0.1:0 \
    --ready-file "$W/ready" --log-level warn >"$W/server.log" 2>&1 &
SERVER=$!
for _ in $(seq 100); do [ -s "$W/ready" ] && break; sleep 0.1; done
LISTEN=$(sed -n 's/^listen=//p' "$W/ready")
HTTP=http://$(sed -n 's/^http=//p' "$W/ready")
[ "$LOADED" = yes ] || "${BUILD:-build}/tests/tools/rs-summary-load" "$LISTEN" 1024 "$LOAD_S" 4 8 5 2>/dev/null
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
curl -s "$HTTP/v1/jobs" | python3 -c '
import json, sys
(j,) = json.load(sys.stdin)["jobs"]
print("job %s: %d ranks, %.0f s of 1 s windows" % (j["job"], j["ranks_seen"], j["span_s"]))'
if [ "$LOADED" = yes ] && [ "${RANKSCOPE_SERVER_HEATMAP_WARM_S:-3600}" != 0 ]; then
    # a restart on a stored job: the server reads its whole-job heatmap in the background
    # (--heatmap-warm-s, server/heatmap_warm.h) — how long until it has, from the ready file
    for _ in $(seq 1200); do
        n=$(curl -s "$HTTP/metrics" | sed -n 's/^rankscope_heatmap_warmed_total //p')
        [ "${n:-0}" -ge 1 ] && break
        sleep 0.1
    done
    echo "background heatmap warm-up done $(( ($(date +%s%N) - T_START) / 1000000 )) ms after the server started (rankscope_heatmap_warmed_total ${n:-0})"
fi
sleep 5 # the evaluator's first pass over the job
# the whole job: the first answer after a start reads every stored step (and fills the server's
# cache of them), the next ones only what is new; gzip as a browser asks for it
for i in 1 2 3 4; do
    curl -s -o /dev/null -H "Accept-Encoding: gzip" \
        -w "heatmap endpoint (whole job, gzip): %{time_total} s, %{size_download} bytes\n" \
        "$HTTP/v1/jobs/summary-bench/heatmap?metric=compute_ms&columns=200"
done
curl -s -o /dev/null -w "the same without gzip: %{time_total} s, %{size_download} bytes\n" \
    "$HTTP/v1/jobs/summary-bench/heatmap?metric=compute_ms&columns=200"
curl -s -o /dev/null -H "Accept-Encoding: gzip" \
    -w "stragglers (gzip): %{time_total} s, %{size_download} bytes\n" "$HTTP/v1/jobs/summary-bench/stragglers"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
mkdir -p "$W/home" # chromium's crash-report settings and dconf cache, not in the real HOME
HOME=$W/home XDG_CONFIG_HOME=$W/home/.config XDG_CACHE_HOME=$W/home/.cache \
    node tests/bench/dashboard_overview.mjs "$HTTP" summary-bench "$RUNS"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
