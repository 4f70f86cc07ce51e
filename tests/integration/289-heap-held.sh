#!/usr/bin/env bash
# Server memory under scans (issue 23 §3 "Heap growth", the soak's rising anonymous memory): what
# glibc keeps of what the server freed. Four clients ask a 2,000-rank job's heavy views (scans of
# every rank, answers of several MB, no answer cache) for several rounds, so the query threads,
# the loop and the pool free hundreds of MB of blocks of every size; then, idle, the server's
# anonymous memory (RssAnon) less what malloc has in use (/metrics heap_in_use_bytes) is what
# the arenas keep resident. With the server's malloc settings (--malloc-arena-max 4,
# --malloc-mmap-threshold-kb 1024: large blocks unmapped when freed, arenas' tops over 8 MiB
# returned) it stays under 48 MiB; with glibc's defaults (both 0: 16 arenas on 2 cores,
# thresholds that rise to 32 / 64 MiB) the same scans leave more, and the test says how much
# (the comparison is what shows the settings hold it: the test can fail).
. "$(dirname "$0")/common.sh"
HELD_MAX_MIB=48
start_server
"$TOOLS/rs-summary-load" "$LISTEN" 2000 20 20 8 5 8000 >"$WORK/load.json" 2>/dev/null
stop "$PID_server"

cat >"$WORK/scans.py" <<'PY'
"""scans.py URL ROUNDS: 4 clients, each asking every heavy view ROUNDS times."""
import sys, threading, urllib.request
url, rounds = sys.argv[1], int(sys.argv[2])
views = ["steps?last=100", "stragglers", "skew", "ranks", "heatmap?last=30", "steps?last=60"]
def client(k):
    for r in range(rounds):
        for i in range(len(views)):
            v = views[(i + k) % len(views)]
            urllib.request.urlopen("%s/v1/jobs/summary-bench/%s" % (url, v), timeout=120).read()
ts = [threading.Thread(target=client, args=(k,)) for k in range(4)]
[t.start() for t in ts]
[t.join() for t in ts]
PY
held() { # OUT [server options]: the server's resident free heap after the scans, MiB, into OUT
    local out=$1; shift
    start_server --answer-cache-mb 0 --evaluate-ms 0 --query-threads 4 "$@"
    python3 "$WORK/scans.py" "$HTTP" 3 || return 1
    sleep 1
    anon=$(awk '/^RssAnon/ {print int($2 / 1024)}' "/proc/$PID_server/status")
    in_use=$(curl -sf "$HTTP/metrics" | awk '/^rankscope_heap_in_use_bytes / {print int($2 / 1048576)}')
    echo "$((anon - in_use)) $anon $in_use" >"$out"
    stop "$PID_server"
}
held "$WORK/tuned"
held "$WORK/glibc" --malloc-arena-max 0 --malloc-mmap-threshold-kb 0
read -r tuned tuned_anon tuned_use <"$WORK/tuned"
read -r glibc glibc_anon glibc_use <"$WORK/glibc"
echo "# resident free heap after the scans, MiB (anonymous - in use): server settings $tuned ($tuned_anon - $tuned_use), glibc's defaults $glibc ($glibc_anon - $glibc_use)"
if [ "$tuned_use" = 0 ] && [ "$glibc_use" = 0 ]; then
    # not glibc's malloc (make asan: the sanitizer's allocator, which mallopt and mallinfo2 do
    # not reach): nothing to measure; the scans still ran under the sanitizer
    echo "# skipped: the server's malloc is not glibc's (mallinfo2 reports nothing)"
    finish
fi
check "with the server's malloc settings the arenas keep at most $HELD_MAX_MIB MiB resident after the scans (kept $tuned MiB: $tuned_anon anonymous, $tuned_use in use)" \
    test "$tuned" -le "$HELD_MAX_MIB"
check "glibc's defaults keep more after the same scans (the settings are what bound it: $glibc MiB against $tuned)" \
    test "$glibc" -gt "$tuned"
check "/metrics shows the heap (in use > 0)" test "$tuned_use" -gt 0
finish
