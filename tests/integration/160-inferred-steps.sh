#!/usr/bin/env bash
# A job that marks no steps (no NVTX ranges): the server infers its steps from the periodic
# pattern of its NCCL collectives, and the straggler verdict still names the slow rank and why.
. "$(dirname "$0")/common.sh"
start_server
start_agent
"$BIN/rankscope-sim" --job nomark --ranks 8 --steps 150 --speed 0 --no-step-markers \
    --slow-rank 5 --slowdown 0.1 --onset-step 40 --agent "$WORK/agent.sock" --log-level warn >"$WORK/sim.json"
wait_for_records nomark "$WORK/sim.json"
check "no step records were stored" python3 -c '
import json, sys, urllib.request
r = json.load(urllib.request.urlopen(sys.argv[1] + "/v1/jobs/nomark/ranks"))["ranks"]
assert all(x["steps"] == 0 for x in r), r' "$HTTP"
check "steps inferred: 4 AllReduces per step, numbered as the job counts them, ~34 ms each" python3 -c '
import json, sys, urllib.request
d = json.load(urllib.request.urlopen(sys.argv[1] + "/v1/jobs/nomark/steps?last=30"))
assert d["steps_source"] == "inferred", d["steps_source"]
for r in d["ranks"]:
    assert r["inferred_period"] == 4, r["inferred_period"]
    assert r["steps"][-1]["step"] == 149, r["steps"][-1]
    assert 30 < r["median"]["step_ms"] < 45, r["median"]' "$HTTP"
check "the straggler verdict on inferred steps: rank 5, gpu_slow" python3 -c '
import json, sys, urllib.request
d = json.load(urllib.request.urlopen(sys.argv[1] + "/v1/jobs/nomark/stragglers"))
assert d["steps_source"] == "inferred", d
(v,) = d["stragglers"]
assert v["rank"] == 5 and v["cause"] == "gpu_slow" and 0.07 < v["slowdown"] - 1 < 0.13, v' "$HTTP"
finish
