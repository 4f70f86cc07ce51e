#!/usr/bin/env bash
# Server + agent + 16-rank sim on 127.0.0.1: every record arrives exactly once; CLI works.
. "$(dirname "$0")/common.sh"
start_server
start_agent
"$BIN/rankscope-sim" --job spine --ranks 16 --steps 60 --speed 4 --agent "$WORK/agent.sock" \
    --log-level warn > "$WORK/sim.json"
wait_for_records spine "$WORK/sim.json"
check "all records stored exactly once" totals_match spine "$WORK/sim.json"
check "no batch duplicated or rejected" health_is batches_rejected 0
check "rankscope jobs lists the job" sh -c "'$BIN/rankscope' --server '$HTTP' jobs | grep -q '^spine .* 16 *16'"
check "rankscope ranks shows 16 ranks" sh -c "[ \$('$BIN/rankscope' --server '$HTTP' ranks spine | grep -c sim-node) = 16 ]"
check "rankscope ranks --json is the API's JSON" sh -c "'$BIN/rankscope' --server '$HTTP' ranks spine --json | python3 -c 'import json,sys; assert len(json.load(sys.stdin)[\"ranks\"])==16'"
check "rankscope ranks of an unknown job exits 3" sh -c "'$BIN/rankscope' --server '$HTTP' ranks nope; [ \$? = 3 ]"
stop "$PID_agent"
check "the agent's exit line counts the frames it took (it said 0 once)" \
    grep -Eq 'RS-AGENT-EXIT collectors 0, frames [1-9][0-9]* \(rejected 0\)' "$WORK/agent.log"
check "rankscope reports an unreachable server" sh -c "! '$BIN/rankscope' --server http://127.0.0.1:1 jobs 2>&1 | grep -q never; '$BIN/rankscope' --server http://127.0.0.1:1 jobs 2>&1 | grep -q 'cannot reach'"
finish
