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

# the same job through a summarizing agent: with no step marker its ranks send records (summaries
# start at a rank's first marker), so the server still infers and measures its steps
stop "$PID_agent"
start_agent --summarize
"$BIN/rankscope-sim" --job nomarksum --ranks 8 --steps 150 --speed 0 --no-step-markers \
    --slow-rank 5 --slowdown 0.1 --onset-step 40 --agent "$WORK/agent.sock" --log-level warn >"$WORK/sum.json"
wait_for_records nomarksum "$WORK/sum.json"
check "summarizing agent, no markers: kernel records, no windows" sh -c "'$TOOLS/rs-store-dump' '$WORK/data' nomarksum | python3 -c '
import json, sys
for r in json.load(sys.stdin)[\"ranks\"]:
    assert r[\"raw_kernels\"] == r[\"kernels\"] > 0 and r[\"window_kernels\"] == 0, r'"
check "summarizing agent, no markers: the same steps and verdict" python3 -c '
import json, sys, urllib.request
get = lambda j, what: json.load(urllib.request.urlopen(sys.argv[1] + "/v1/jobs/" + j + what))
a, b = get("nomark", "/steps?last=30"), get("nomarksum", "/steps?last=30")
assert b["steps_source"] == "inferred", b["steps_source"]
strip = lambda d: [[{k: v for k, v in s.items() if k not in ("start_ns", "end_ns")} for s in r["steps"]] for r in d["ranks"]]
assert strip(a) == strip(b)
(v,) = get("nomarksum", "/stragglers")["stragglers"]
assert v["rank"] == 5 and v["cause"] == "gpu_slow", v' "$HTTP"
finish
