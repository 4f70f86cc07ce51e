#!/usr/bin/env bash
# Server memory under a simulated cluster (issue 23 §3 "Heap growth"): AGENTS agents with
# RANKS_PER_AGENT simulated ranks each (rankscope-sim, --speed 1), for SECONDS, the server's
# RSS sampled every EVERY seconds, split into anonymous memory (the heap: what could leak) and
# file pages (the store's memory map, LMDB: the kernel's page cache, reclaimable, bounded by the
# store's size); prints "t_s rss anon file committed" lines, then the same once the load stopped
# (idle). Defaults are sized for a shared 2-core
# machine; the issue's run was 9,216 ranks for 5 minutes:
#   AGENTS=3 RANKS_PER_AGENT=3072 SECONDS_=300 tests/bench/heap_growth.sh
# Extra server options in SERVER_OPTS, agent options in AGENT_OPTS, sim options in SIM_OPTS.
set -u
cd "$(dirname "$0")/../.."
. tests/lib.sh
BIN=$PWD/${BUILD:-build}/bin
WORK=$(mktemp -d /tmp/rankscope-heap.XXXXXX)
trap 'stop_all; rm -rf "$WORK"' EXIT
AGENTS=${AGENTS:-1} RANKS_PER_AGENT=${RANKS_PER_AGENT:-1024} SECONDS_=${SECONDS_:-60}
EVERY=${EVERY:-5} IDLE=${IDLE:-20}
start server "$BIN/rankscope-server" --data "$WORK/data" --http 127.0.0.1:0 \
    --listen tcp://127.0.0.1:0 --ready-file "$WORK/server.ready" ${SERVER_OPTS:-}
wait_file "$WORK/server.ready" || exit 1
LISTEN=$(field "$WORK/server.ready" listen); HTTP=http://$(field "$WORK/server.ready" http)
for a in $(seq "$AGENTS"); do
    start "agent$a" "$BIN/rankscope-agent" --server "$LISTEN" --socket "$WORK/agent$a.sock" \
        --spool "$WORK/spool$a" --ready-file "$WORK/agent$a.ready" ${AGENT_OPTS:-}
    wait_file "$WORK/agent$a.ready" || exit 1
done
SIMS=()
for a in $(seq "$AGENTS"); do
    "$BIN/rankscope-sim" --job "heap$a" --ranks "$RANKS_PER_AGENT" --duration-s "$SECONDS_" \
        --speed 1 --agent "$WORK/agent$a.sock" --log-level warn ${SIM_OPTS:-} >"$WORK/sim$a.json" &
    SIMS+=($!)
done
PIDS+=("${SIMS[@]}")
sample() {
    local rss anon file committed
    rss=$(awk '/^VmRSS/ {print int($2/1024)}' "/proc/$PID_server/status")
    anon=$(awk '/^RssAnon/ {print int($2/1024)}' "/proc/$PID_server/status")
    file=$(awk '/^RssFile/ {print int($2/1024)}' "/proc/$PID_server/status")
    committed=$(curl -s "$HTTP/healthz" | python3 -c 'import json,sys; print(json.load(sys.stdin)["counters"]["batches_committed"])' 2>/dev/null)
    echo "$1 $rss $anon $file ${committed:-?}"
}
echo "# t_s rss_mib anon_mib file_mib batches_committed (load: $AGENTS x $RANKS_PER_AGENT ranks)"
t=0
while [ $t -le "$SECONDS_" ]; do sample $t; sleep "$EVERY"; t=$((t + EVERY)); done
for p in "${SIMS[@]}"; do kill "$p" 2>/dev/null; wait "$p"; done
echo "# idle"
for i in $(seq 0 "$EVERY" "$IDLE"); do sample "idle+$i"; sleep "$EVERY"; done
