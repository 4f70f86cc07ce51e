#!/usr/bin/env bash
# With the server down, the agent spools; it is killed -9, restarted on the same spool, and the
# server (started last) receives every record exactly once.
. "$(dirname "$0")/common.sh"
PORT=$(free_port)
start_agent_at "tcp://127.0.0.1:$PORT"
"$BIN/rankscope-sim" --job spooled --ranks 4 --steps 40 --speed 8 --agent "$WORK/agent.sock" \
    --log-level warn > "$WORK/sim.json"
# everything in the spool: its batch files stop changing (the agent flushes every 250 ms; up to 10 s)
prev=-1 same=0
for _ in $(seq 33); do
    n=$(ls "$WORK/spool" | grep -c '\.batch$')
    if [ "$n" -gt 0 ] && [ "$n" = "$prev" ]; then same=$((same + 1)); [ $same -ge 3 ] && break; else same=0; fi
    prev=$n
    sleep 0.3
done
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
