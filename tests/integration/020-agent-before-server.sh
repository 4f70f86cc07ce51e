#!/usr/bin/env bash
# The agent and the job start before the server exists; everything arrives once it does.
. "$(dirname "$0")/common.sh"
PORT=$(free_port)
start_agent_at "tcp://127.0.0.1:$PORT"
"$BIN/rankscope-sim" --job early --ranks 4 --steps 40 --speed 8 --agent "$WORK/agent.sock" \
    --log-level warn > "$WORK/sim.json"
sleep 0.5
start_server_at "tcp://127.0.0.1:$PORT"
wait_for_records early "$WORK/sim.json"
check "records sent before the server existed are stored once" totals_match early "$WORK/sim.json"
finish
