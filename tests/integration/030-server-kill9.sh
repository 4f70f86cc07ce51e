#!/usr/bin/env bash
# kill -9 of the server mid-stream, restart on the same data: every batch stored exactly once.
. "$(dirname "$0")/common.sh"
PORT=$(free_port)
start_server_at "tcp://127.0.0.1:$PORT"
start_agent_at "tcp://127.0.0.1:$PORT"
"$BIN/rankscope-sim" --job crash --ranks 8 --steps 150 --speed 1 --agent "$WORK/agent.sock" \
    --log-level warn > "$WORK/sim.json" &
SIM=$!
sleep 1.2
kill -9 "$PID_server"; wait "$PID_server" 2>/dev/null
sleep 0.7
start_server_at "tcp://127.0.0.1:$PORT"
sleep 0.8
kill -9 "$PID_server"; wait "$PID_server" 2>/dev/null
start_server_at "tcp://127.0.0.1:$PORT"
wait "$SIM"
wait_for_records crash "$WORK/sim.json"
check "after two kill -9 every record is stored exactly once" totals_match crash "$WORK/sim.json"
finish
