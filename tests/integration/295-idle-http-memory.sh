#!/usr/bin/env bash
# Memory per idle HTTP connection (issue 23 §3): 1,000 keep-alive connections, each past one
# request, then idle, cost the server less than 30 MiB of resident memory (each held a 64 KiB read
# buffer of its own before: ~68 MiB; ~11 MiB now, docs/BENCHMARKS.md "Idle HTTP connections"),
# and the server answers others meanwhile. The 10,000-connection measurement:
# tests/bench/idle_conns.sh http.
. "$(dirname "$0")/common.sh"
start_server --http-max-connections 1100 --http-max-connections-per-peer 1100
rss() { awk '/^VmRSS/ {print $2}' "/proc/$PID_server/status"; }
curl -sf "$HTTP/healthz" >/dev/null
before=$(rss)
python3 tests/bench/idle_conns.py http 127.0.0.1 "$HTTP_PORT" 1000 "$WORK/c.json" "$WORK/stop" &
CLIENT=$!
for _ in $(seq 200); do [ -s "$WORK/c.json" ] && break; sleep 0.1; done
held=$(rss)
check "1,000 idle keep-alive connections, each answered once" \
    python3 -c "import json; c = json.load(open('$WORK/c.json')); assert c['answered'] == 1000, c"
if nm "$BIN/rankscope-server" 2>/dev/null | grep -q __asan_init; then
    echo "$SUITE: the memory bound is not checked under sanitizers (their allocator's redzones)"
else
    check "they cost the server under 30 MiB (before $before KiB, held $held KiB)" \
        [ $((held - before)) -lt 30720 ]
fi
check "the server answers another client meanwhile" curl -sf -m 2 "$HTTP/v1/jobs"
touch "$WORK/stop"
wait "$CLIENT"
finish
