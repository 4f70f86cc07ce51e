#!/usr/bin/env bash
# NCCL wait skew end to end: a simulated GPU straggler is the last arriver at (nearly) every
# collective, in the REST API and the CLI; parameters are validated.
. "$(dirname "$0")/common.sh"
start_server
start_agent
"$BIN/rankscope-sim" --job skewed --ranks 8 --steps 60 --slow-rank 2 --slowdown 0.1 --speed 0 \
    --agent "$WORK/agent.sock" --log-level warn >"$WORK/sim.json"
wait_for_records skewed "$WORK/sim.json"
curl -s "$HTTP/v1/jobs/skewed/skew" >"$WORK/skew.json"
check "all 240 AllReduce instances matched on 8 ranks" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["instances"] == 240 and d["unmatched_instances"] == 0, d["instances"]
assert len(d["ranks"]) == 8 and all(r["instances"] == 240 for r in d["ranks"])' "$WORK/skew.json"
check "rank 2 is the last arriver at >= 90% and waits least" python3 -c '
import json, sys
r = {x["rank"]: x for x in json.load(open(sys.argv[1]))["ranks"]}
assert r[2]["last_frac"] >= 0.9, r[2]
assert all(r[2]["wait_ms"] < r[k]["wait_ms"] for k in r if k != 2)' "$WORK/skew.json"
check "the window is named: the whole job, the span of its instances within the simulated run" python3 -c '
import json, sys, urllib.request
sim = json.load(open(sys.argv[2]))
d = json.load(open(sys.argv[1]))
w = d["window"]
t0, t1 = sim["start_ns"], sim["start_ns"] + sim["sim_seconds"] * 1e9
assert w["whole_job"] is True and t0 <= w["since_ns"] < w["until_ns"] <= t1 + 1e6, (w, t0, t1)
# 60 steps of ~34 ms: the first AllReduce starts in step 0, the last ends in step 59
assert w["until_ns"] - w["since_ns"] > 0.9 * (t1 - t0), (w, t0, t1)
h = json.load(urllib.request.urlopen(sys.argv[3] + "/v1/jobs/skewed/skew?since_ns=%d" % w["since_ns"]))
assert h["window"]["whole_job"] is False and h["instances"] == 240, h["window"]' \
    "$WORK/skew.json" "$WORK/sim.json" "$HTTP"
check "rankscope skew says its window" sh -c "'$BIN/rankscope' --server '$HTTP' skew skewed | grep -q '^window: the whole job, '"
check "rankscope skew names rank 2" sh -c "'$BIN/rankscope' --server '$HTTP' skew skewed | grep -q '^rank 2 arrives last'"
check "a window after the run holds no instance" sh -c "curl -s '$HTTP/v1/jobs/skewed/skew?since_ns=18446744073709551000' | grep -q '\"instances\":0'"
check "bad parameter is 400" sh -c "[ \$(curl -s -o /dev/null -w '%{http_code}' '$HTTP/v1/jobs/skewed/skew?since_ns=abc') = 400 ]"
check "unknown parameter is 400" sh -c "[ \$(curl -s -o /dev/null -w '%{http_code}' '$HTTP/v1/jobs/skewed/skew?foo=1') = 400 ]"
check "unknown job is 404" sh -c "[ \$(curl -s -o /dev/null -w '%{http_code}' '$HTTP/v1/jobs/nope/skew') = 404 ]"
finish
