#!/usr/bin/env bash
# The fleet history and the GPU map survive server restarts (issue 26): a GPU that was the
# straggler of two jobs is still "the straggler in 2 of its 3 jobs" in `rankscope fleet` and
# GET /v1/gpus after the server was killed with SIGKILL once and stopped once between its jobs,
# and the NVML readings its agent sends right after a restart — before any collector has sent
# again — are filed under the ranks that last reported each GPU, none dropped. --check covers the
# GPU map and the verdicts; deleting a job removes its verdicts (and its ranks' GPU map entries).
. "$(dirname "$0")/common.sh"
FAKE=$ROOT/${BUILD:-build}/tests/tools/libfake_nvml.so
export FAKE_NVML_SCRIPT=$WORK/nvml.script # the four GPUs of seed 1, rank 2's power-capped
"$BIN/rankscope-sim" --job script --seed 1 --ranks 4 --slow-rank 2 --slowdown 0.1 \
    --nvml-script "$FAKE_NVML_SCRIPT" --agent /dev/null
PORT=$(free_port)
restart() { # --kill9|--term EVALUATE_MS (0: no evaluation, so only the stored history counts)
    if [ "$1" = --kill9 ]; then kill -9 "$PID_server"; else kill "$PID_server"; fi
    wait "$PID_server" 2>/dev/null
    start_server_at "tcp://127.0.0.1:$PORT" --evaluate-ms "$2"
}
sim() { # JOB SLOW_RANK: 4 ranks of seed 1 (the same four GPUs every time)
    "$BIN/rankscope-sim" --job "$1" --seed 1 --ranks 4 --steps 150 --step-ms 20 --speed 1 \
        --slow-rank "$2" --slowdown 0.1 --agent "$WORK/agent.sock" --log-level warn >"$WORK/$1.json"
    wait_for_records "$1" "$WORK/$1.json"
}
# fleet_row UUID: "jobs straggler_jobs straggler_verdicts" of that GPU in GET /v1/gpus
fleet_row() {
    curl -s "$HTTP/v1/gpus" | python3 -c '
import json, sys
print(*next(([x["jobs"], x["straggler_jobs"], x["straggler_verdicts"]]
             for x in json.load(sys.stdin)["gpus"] if x["gpu_uuid"] == sys.argv[1]), ["none"]))' "$1"
}
wait_fleet() { # UUID "jobs straggler_jobs straggler_verdicts"
    local i
    for i in $(seq 100); do [ "$(fleet_row "$1")" = "$2" ] && return 0; sleep 0.1; done
    echo "fleet row of $1: $(fleet_row "$1"), wanted $2"
    return 1
}
SLOW=GPU-5a110001-0000-4000-8000-000000000002 # the simulator's (seed 1, rank 2)
start_server_at "tcp://127.0.0.1:$PORT" --evaluate-ms 200
start_agent_at "tcp://127.0.0.1:$PORT" --nvml-library "$FAKE" --gpu-interval-ms 100 --gpu-send-s 1

sim job1 2
check "job1: its straggler's verdict is in the fleet history" wait_fleet "$SLOW" "1 1 1"
restart --kill9 0
check "after kill -9 (no evaluation since): the verdict is still there" wait_fleet "$SLOW" "1 1 1"
restart --term 200
sleep 1 # evaluations raise job1's verdict again: the same one goes on, no second is counted
check "evaluated again after the restart: still one verdict" wait_fleet "$SLOW" "1 1 1"

sim job2 2
check "job2: the same GPU the straggler again" wait_fleet "$SLOW" "2 2 2"
sleep 1.5 # the readings of job2's last second
restart --term 200
T0=$(python3 -c 'import time; print(time.time_ns())')
# the agent keeps sampling its GPUs: readings with no collector sending; asked until each rank has
# 10 (about 3 s; the agent's redial after the restart backs off up to 2 s), for up to 15 s
for _ in $(seq 30); do
    sleep 0.5
    curl -s "$HTTP/v1/jobs/job2/gpus?since_ns=$T0&until_ns=$(python3 -c 'import time; print(time.time_ns())')" \
        >"$WORK/after.gpus"
    python3 -c '
import json, sys
g = json.load(open(sys.argv[1]))["gpus"]
sys.exit(not (len(g) == 4 and all(x["samples"] >= 10 for x in g)))' "$WORK/after.gpus" 2>/dev/null && break
done
check "after a restart, readings are filed under job2's ranks at once (none unattributed, none lost)" sh -c "
python3 -c '
import json, sys
g = {x[\"rank\"]: x for x in json.load(open(sys.argv[1]))[\"gpus\"]}
assert sorted(g) == [0, 1, 2, 3], g
for r, x in g.items():
    assert x[\"samples\"] >= 10 and x[\"gpu_uuid\"] == \"GPU-5a110001-0000-4000-8000-%012x\" % r, x
assert g[2][\"clocks\"][\"sm_mhz\"] == 1800, g[2]
for r, x in g.items(): # from the restart on (sampled every 100 ms, at the agent), none lost
    assert x[\"first_ns\"] - $T0 < 1.5e9, (r, x[\"first_ns\"] - $T0)
    assert x[\"samples\"] >= 0.5 * ((x[\"last_ns\"] - x[\"first_ns\"]) / 1e8 + 1), (r, x)' '$WORK/after.gpus' &&
curl -s '$HTTP/metrics' | grep -q '^rankscope_gpu_samples_unattributed_total 0$'"
check "after a clean restart: 2 of 2" wait_fleet "$SLOW" "2 2 2"

sim job3 -1 # no straggler
check "job3 (no straggler): 2 of 3" wait_fleet "$SLOW" "3 2 2"
restart --kill9 0
check "after another kill -9: still 2 of 3, the others 0 of 3" python3 -c '
import json, sys, urllib.request
d = json.load(urllib.request.urlopen(sys.argv[1] + "/v1/gpus"))
g = {x["gpu_uuid"]: x for x in d["gpus"]}
s = g[sys.argv[2]]
assert s["summary"] == "the straggler in 2 of its 3 jobs" and s["straggler_verdicts"] == 2, s
assert 1.05 < s["mean_slowdown"] < 1.15 and d["gpus"][0]["gpu_uuid"] == sys.argv[2], d
assert all(x["straggler_jobs"] == 0 and x["jobs"] == 3 for u, x in g.items() if u != sys.argv[2]), g
(h,) = json.load(urllib.request.urlopen(sys.argv[1] + "/v1/hosts"))["hosts"]
assert h["jobs"] == 3 and h["straggler_jobs"] == 2, h' "$HTTP" "$SLOW"
check "rankscope fleet says it after the restart" sh -c "
    '$BIN/rankscope' --server '$HTTP' fleet | grep -q '^$SLOW  the straggler in 2 of its 3 jobs, '"
check "--check: consistent, counting the GPU map and the verdicts" sh -c "
    '$BIN/rankscope-server' --check --data '$WORK/data' >'$WORK/check1.txt' &&
    grep -q '^check: GPU map: 4 GPUs; verdict history: 2 verdicts$' '$WORK/check1.txt'"

"$BIN/rankscope" --server "$HTTP" delete job1 >/dev/null 2>&1
check "deleting job1 removes its verdict: 1 of 2" wait_fleet "$SLOW" "2 1 1"
"$BIN/rankscope" --server "$HTTP" delete job3 >/dev/null 2>&1
check "deleting job3, whose ranks held the GPU map: 1 of 1, the map empty, still consistent" sh -c "
    $(declare -f fleet_row wait_fleet); HTTP='$HTTP'; wait_fleet '$SLOW' '1 1 1' &&
    '$BIN/rankscope-server' --check --data '$WORK/data' >'$WORK/check2.txt' &&
    grep -q '^check: GPU map: 0 GPUs; verdict history: 1 verdicts$' '$WORK/check2.txt'"
finish
