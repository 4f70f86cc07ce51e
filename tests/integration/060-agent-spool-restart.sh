#!/usr/bin/env bash
# With the server down, the agent spools; it is killed -9, restarted on the same spool, and the
# server (started last) receives every record exactly once.
. "$(dirname "$0")/common.sh"
PORT=$(free_port)
start_agent_at "tcp://127.0.0.1:$PORT"
"$BIN/rankscope-sim" --job spooled --ranks 4 --steps 40 --speed 8 --agent "$WORK/agent.sock" \
    --log-level warn > "$WORK/sim.json"
sleep 0.6   # a few flush intervals: everything is in the spool now
check "batches are spooled while the server is down" sh -c "ls '$WORK/spool' | grep -q '\.batch$'"
kill -9 "$PID_agent"; wait "$PID_agent" 2>/dev/null
rm -f "$WORK/agent.ready"
start_agent_at "tcp://127.0.0.1:$PORT"
start_server_at "tcp://127.0.0.1:$PORT"
wait_for_records spooled "$WORK/sim.json"
check "spooled records survive kill -9 of the agent and arrive once" totals_match spooled "$WORK/sim.json"
for _ in $(seq 50); do ls "$WORK/spool" | grep -q '\.batch$' || break; sleep 0.1; done
check "acknowledged batches leave the spool" sh -c "! ls '$WORK/spool' | grep -q '\.batch$'"
finish
