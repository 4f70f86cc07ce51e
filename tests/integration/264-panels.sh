#!/usr/bin/env bash
# The dashboard's panels for GPU telemetry, advice and hangs (docs/dashboard.md), and the
# advisor's batch-size finding on live jobs (docs/analysis.md "Advice"), against a real server and
# agent: the agent reads the stand-in NVML (tests/tools/fake_nvml.c) scripted by the simulator —
# job "capped": 4 ranks, rank 2's GPU held by its power cap (its kernels 10% slower), every GPU
# 60,000 of 81,559 MiB used; job "roomy": 4 ranks whose host launches a kernel every 80 us
# (--launch-gap-us: the GPU idles between kernels) on GPUs with 12,000 MiB used. REST and CLI:
# roomy gets batch_size (factor floor(0.8 x 81,559 / 12,000) = 5, its idle x 4/5), capped is
# near full and says so, an imported trace has no telemetry and says so; ?rank=R. Then in
# Debian's chromium (tests/browser/panels.mjs, skipped and said so without chromium or
# puppeteer-core): the GPU panel marks rank 2 and its cited clock and throttle figures, the fleet
# page ranks rank 2's GPU first, the advice panel shows the API's top finding and the batch-size
# numbers, a job that hangs (rank 2 never arrives at its AllReduce) gets a banner naming rank 2
# with its host and GPU and a history entry once it clears, and markup in a host name runs
# nothing. On failure: a screenshot per failed check in $RS_TEST_OUT (default
# build/test-out/264-panels).
. "$(dirname "$0")/common.sh"
OUT=${RS_TEST_OUT:-$ROOT/${BUILD:-build}/test-out/264-panels}
export FAKE_NVML_SCRIPT=$WORK/nvml.script
"$BIN/rankscope-sim" --job capped --seed 1 --ranks 4 --slow-rank 2 --slowdown 0.1 \
    --nvml-script "$WORK/capped.nvml"
"$BIN/rankscope-sim" --job roomy --seed 3 --ranks 4 --nvml-script "$WORK/roomy.nvml"
{
    cat "$WORK/capped.nvml"
    sed 's/^\(gpu [^ ]*\)/\1 used=12000/' "$WORK/roomy.nvml"
} >"$FAKE_NVML_SCRIPT"
start_server --evaluate-ms 200 --hang-check-ms 200
start_agent --nvml-library "$TOOLS/libfake_nvml.so" --gpu-interval-ms 100 --gpu-send-s 1
"$BIN/rankscope-sim" --job capped --seed 1 --ranks 4 --steps 150 --step-ms 20 --speed 1 \
    --slow-rank 2 --slowdown 0.1 --agent "$WORK/agent.sock" --log-level warn >"$WORK/capped.json" &
CAPPED=$!
"$BIN/rankscope-sim" --job roomy --seed 3 --ranks 4 --steps 150 --step-ms 20 --speed 1 \
    --launch-gap-us 80 --agent "$WORK/agent.sock" --log-level warn >"$WORK/roomy.json"
wait "$CAPPED"
PAYLOAD='<img src=x onerror="window.__pwned=true;alert(1)">'
"$TOOLS/rs-nng-send" "$LISTEN" --valid evilhost 1 --host "$PAYLOAD" --kernel "$PAYLOAD" >"$WORK/evil.out" 2>&1
for j in capped roomy; do wait_for_records "$j" "$WORK/$j.json"; done
sleep 2 # the readings of the jobs' last second (sent every second)

curl -s "$HTTP/v1/jobs/roomy/advice" >"$WORK/roomy.advice"
curl -s "$HTTP/v1/jobs/roomy/steps?last=50" >"$WORK/roomy.steps"
check "roomy: batch_size with the GPUs' 12,000 of 81,559 MiB, factor 5, cost = the launch idle x 4/5" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
f = {x["kind"]: x for x in d["findings"]}
assert d["rank"] is None and "batch_size" in f, [x["kind"] for x in d["findings"]]
b, l = f["batch_size"], f["launch_bound"]
s = b["seen"]
assert s["memory_used_mib"] == 12000 and s["memory_total_mib"] == 81559 and s["batch_factor"] == 5, s
# no host syncs here: the idle is the launch_bound idle, on the same rank (the costliest of both)
assert b["rank"] == l["rank"] and abs(b["cost_ms"] - 0.8 * l["cost_ms"]) < 1e-3, (b, l)
assert abs(s["idle_share_pct"] - 100 * l["seen"]["idle_between_kernels_ms"] / b["step_ms"]) < 2, s
assert b["fix"].startswith("raise the batch per GPU") and "gradient accumulation" in b["fix"], b["fix"]
assert all(x["kind"] != "batch_size" for x in d["skipped"]), d["skipped"]' "$WORK/roomy.advice"
check "roomy: the idle is the simulator's: ~55 launches x 80 us per step (from /steps, not the advisor)" python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))
st = json.load(open(sys.argv[2]))
b = [x for x in a["findings"] if x["kind"] == "batch_size"][0]
idle = sorted(s["idle_ms"] - s["host_gap_ms"] for r in st["ranks"] for s in r["steps"])
med = idle[len(idle) // 2]
# the step metrics count copies as idle, the advisor does not: the advisor idle is at most this
assert 3.0 < med < 6.0, med
assert 0.8 * 0.7 * med < b["cost_ms"] <= 0.8 * med * 1.05, (b["cost_ms"], med)' "$WORK/roomy.advice" "$WORK/roomy.steps"
check "capped: no batch_size (60,000 of 81,559 MiB: twice does not fit), skipped with the numbers" python3 -c '
import json, sys, urllib.request
d = json.load(urllib.request.urlopen(sys.argv[1] + "/v1/jobs/capped/advice"))
assert all(x["kind"] != "batch_size" for x in d["findings"]), d["findings"]
(s,) = [x for x in d["skipped"] if x["kind"] == "batch_size"]
assert "memory near full: rank " in s["why"] and "used 60000 of 81559 MiB (74%)" in s["why"], s' "$HTTP"
check "?rank=1: that rank's findings only; ?rank=99 is 404; ?rank=x is 400" python3 -c '
import json, sys, urllib.request, urllib.error
d = json.load(urllib.request.urlopen(sys.argv[1] + "/v1/jobs/roomy/advice?rank=1"))
assert d["rank"] == 1 and d["ranks_with_steps"] == 1 and d["findings"], d
assert all(f["rank"] == 1 for f in d["findings"]), d["findings"]
assert "batch_size" in [f["kind"] for f in d["findings"]], d["findings"]
for q, want in (("rank=99", 404), ("rank=x", 400)):
    try:
        urllib.request.urlopen(sys.argv[1] + "/v1/jobs/roomy/advice?" + q)
        raise SystemExit(q + ": accepted")
    except urllib.error.HTTPError as e:
        assert e.code == want, (q, e.code)' "$HTTP"
"$BIN/rankscope" --server "$HTTP" advise roomy >"$WORK/advise.txt" 2>&1
check "rankscope advise roomy: the batch_size finding with its numbers" bash -c '
    grep -q "^[0-9]\. batch_size: GPU memory is free and the GPU idles" "$1" &&
    grep -q "batch_factor 5" "$1" && grep -q "memory_used_mib 12000" "$1"' _ "$WORK/advise.txt"
"$BIN/rankscope" --server "$HTTP" advise roomy --rank 2 >"$WORK/advise2.txt" 2>&1
check "rankscope advise roomy --rank 2: rank 2's findings only" bash -c '
    head -1 "$1" | grep -q "^rank 2'"'"'s findings: job roomy: advice over 50 steps of 1 rank" &&
    ! grep "costs up to" "$1" | grep -qv "on rank 2\b"' _ "$WORK/advise2.txt"
"$BIN/rankscope" analyze --json "$ROOT/tests/fixtures/advise-h100/advise_launch_bound.json.gz" \
    >"$WORK/analyze.json" 2>/dev/null
check "analyze of an imported trace: batch_size skipped, no telemetry (imported traces have none)" python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))["advice"]
(s,) = [x for x in a["skipped"] if x["kind"] == "batch_size"]
assert "no GPU memory telemetry" in s["why"] and "imported traces have none" in s["why"], s' "$WORK/analyze.json"

# ---- in the browser ----
if [ ! -x "${RS_CHROMIUM:-/usr/bin/chromium}" ] || ! command -v node >/dev/null ||
   [ ! -d tests/browser/node_modules/puppeteer-core ]; then
    echo "$SUITE: browser checks skipped: needs chromium (make test-deps) and puppeteer-core (make browser-tools)"
    finish
fi
if curl -s "$HTTP/" | grep -q "dashboard was not built"; then
    echo "$SUITE: browser checks skipped: this server was built without node/npm (see its / page)"
    finish
fi
# a job that hangs while the browser watches: rank 2 never arrives at step 20's AllReduce for 25 s
"$BIN/rankscope-sim" --job hung --ranks 4 --steps 40 --onset-step 20 --hang-rank 2 --hang-s 25 \
    --nccl-plugin --speed 0 --agent "$WORK/agent.sock" --log-level warn >"$WORK/hung.json" &
HUNG=$!
rm -rf "$OUT"
mkdir -p "$WORK/home" # chromium's settings and caches stay in $WORK
HOME=$WORK/home XDG_CONFIG_HOME=$WORK/home/.config XDG_CACHE_HOME=$WORK/home/.cache \
    timeout 200 node tests/browser/panels.mjs "$HTTP" "$OUT" >"$WORK/browser.out" 2>&1
rc=$?
kill "$HUNG" 2>/dev/null
wait "$HUNG" 2>/dev/null
browser_checks "$WORK/browser.out" "$rc" 9 "$OUT"
check "hangs: the history keeps the cleared hang (raised, cleared, rank 2 never arrived)" python3 -c '
import json, sys, urllib.request
d = json.load(urllib.request.urlopen(sys.argv[1] + "/v1/jobs/hung/hangs"))
assert d["hangs"] == [], d["hangs"]
(e,) = d["history"]
assert e["op"] == "AllReduce" and e["seq"] == 80 and e["never_arrived"] == [2] and e["waiting"] == 3, e
assert e["since_ns"] <= e["raised_ns"] < e["cleared_ns"], e
o = json.load(urllib.request.urlopen(sys.argv[1] + "/v1/jobs/capped/hangs"))
assert o["history"] == [], o' "$HTTP"
finish
