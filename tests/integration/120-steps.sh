#!/usr/bin/env bash
# Per-step metrics end to end: a simulated host stall shows as host gap and idle time on that rank
# only; every rank runs at the job's pace; parameters are validated.
. "$(dirname "$0")/common.sh"
start_server
start_agent
"$BIN/rankscope-sim" --job stalls --ranks 4 --steps 50 --host-stall 1 --stall-ms 5 --speed 0 \
    --agent "$WORK/agent.sock" --log-level warn >"$WORK/sim.json"
wait_for_records stalls "$WORK/sim.json"
curl -s "$HTTP/v1/jobs/stalls/steps?last=20" >"$WORK/steps.json"
check "20 steps per rank, host gap of ~5 ms on rank 1 only" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
m = {r["rank"]: r["median"] for r in d["ranks"]}
assert all(len(r["steps"]) == 20 for r in d["ranks"])
assert 4.5 < m[1]["host_gap_ms"] < 5.5, m[1]
assert all(m[k]["host_gap_ms"] < 0.5 for k in (0, 2, 3)), m
assert all(abs(m[k]["step_ms"] - m[0]["step_ms"]) < 0.5 for k in m), "lockstep"
assert all(m[k]["comm_ms"] > m[1]["comm_ms"] for k in (0, 2, 3)), "the others wait in NCCL"' "$WORK/steps.json"
check "rankscope steps prints every rank" sh -c "[ \$('$BIN/rankscope' --server '$HTTP' steps stalls | grep -cE '^ +[0-9]+ +30 ') = 4 ]"
check "last=0 is 400" sh -c "[ \$(curl -s -o /dev/null -w '%{http_code}' '$HTTP/v1/jobs/stalls/steps?last=0') = 400 ]"
check "unknown job is 404" sh -c "[ \$(curl -s -o /dev/null -w '%{http_code}' '$HTTP/v1/jobs/nope/steps') = 404 ]"
finish
