#!/usr/bin/env bash
# The server dies abruptly mid-stream — twice by kill -9 at arbitrary moments, once right after a
# commit and before its acknowledgements (the worst moment) — and restarts on the same data:
# every record the simulator produced is stored exactly once, and the batches committed but
# never acknowledged come back as duplicates.
. "$(dirname "$0")/common.sh"
PORT=$(free_port)
start_server_at "tcp://127.0.0.1:$PORT"
start_agent_at "tcp://127.0.0.1:$PORT"
"$BIN/rankscope-sim" --job crash --ranks 8 --steps 200 --speed 1 --agent "$WORK/agent.sock" \
    --log-level warn > "$WORK/sim.json" &
SIM=$!
sleep 1.2
kill -9 "$PID_server"; wait "$PID_server" 2>/dev/null
sleep 0.5
start_server_at "tcp://127.0.0.1:$PORT"
sleep 0.9
kill -9 "$PID_server"; wait "$PID_server" 2>/dev/null
start_server_at "tcp://127.0.0.1:$PORT" --fault-exit-after-commits 3
for _ in $(seq 100); do kill -0 "$PID_server" 2>/dev/null || break; sleep 0.05; done
check "the server exited right after its third commit" sh -c "! kill -0 $PID_server 2>/dev/null"
wait "$PID_server" 2>/dev/null
start_server_at "tcp://127.0.0.1:$PORT"
wait "$SIM"
wait_for_records crash "$WORK/sim.json"
check "after three crashes every record is stored exactly once" totals_match crash "$WORK/sim.json"
check "unacknowledged commits were resent and deduplicated" sh -c "curl -s '$HTTP/healthz' | python3 -c 'import json,sys; d=json.load(sys.stdin)[\"counters\"][\"batches_duplicate\"]; print(d); assert d >= 1'"
finish
