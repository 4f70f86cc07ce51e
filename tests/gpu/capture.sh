#!/usr/bin/env bash
# Captures on demand with the real collector (issue 25 item 4, docs/collector.md "Captures"), on
# the launch-bound transformer LM (tests/gpu/workloads/lm.py), one GPU, server + agent from
# gpu-bundle/, the collector tracing kernels in windows that never come (RANKSCOPE_KERNELS=window,
# one window a day) so that kernels come only from captures:
#  1. function: PC sampling on at the start (windows of its own that never come either); once the
#     rank is heard from, POST /v1/jobs/{job}/capture {kernels, pc_sampling, 5 s}; the capture
#     must end done with both kinds, its records (kernels, stall samples) marked, the store holding
#     kernel records only from it; RANKSCOPE_DEBUG=1 gives what opening and closing cost.
#  2. cost: $PAIRS alternating pairs of one process each, pinned to CPUs $CPUS: no collector, and
#     the collector with a kernels capture of 60 s asked for as soon as the rank is heard from
#     (during --warmup 150), covering every timed step (checked: the capture's kernel count is at
#     least the timed steps' kernels). Ratio of median step times per pair: median and range.
# Leaves $OUT/capture-*.json, capture-pairs.jsonl, capture-summary.txt. Needs gpu-bundle/.
. "$(dirname "$0")/common.sh"
PAIRS=${PAIRS:-8} CPUS=${CPUS:-2-5} STEPS=${STEPS:-300}
LM=tests/gpu/workloads/lm.py
daemons_up
: >"$OUT/capture-stderr.txt"
collector_env() { # JOB [more VAR=value]
    local job=$1; shift
    echo RANKSCOPE_JOB_ID="$job" RANKSCOPE_AGENT_SOCKET="$W/agent.sock" \
        LD_LIBRARY_PATH="$CUPTI_DIR:${LD_LIBRARY_PATH:-}" RANKSCOPE_DEBUG=1 \
        CUDA_INJECTION64_PATH="$B/lib/librankscope.so" NVTX_INJECTION64_PATH="$B/lib/librankscope.so" \
        RANKSCOPE_KERNELS=window RANKSCOPE_WINDOW_MS=100 RANKSCOPE_WINDOW_PERIOD_MS=86400000 "$@"
}
# capture_when_heard JOB BODY: once rank 0 of JOB is known to the server, POSTs the capture;
# the answer in $W/JOB.post
capture_when_heard() {
    for _ in $(seq 600); do
        curl -sf "$HTTP/v1/jobs/$1/ranks" 2>/dev/null | grep -q '"rank": *0' && break
        sleep 0.05
    done
    curl -s -X POST -d "$2" "$HTTP/v1/jobs/$1/capture" >"$W/$1.post"
}

# ---- 1. function -----------------------------------------------------------------------------
job=cap-function
capture_when_heard $job '{"ranks":[0],"kinds":["kernels","pc_sampling"],"seconds":5}' &
WAITER=$!
env $(collector_env $job RANKSCOPE_PC_SAMPLING=1 RANKSCOPE_PC_WINDOW_MS=1000 \
        RANKSCOPE_PC_PERIOD_MS=86400000) \
    taskset -c "$CPUS" python3 $LM --steps 600 --warmup 100 --nvtx-steps \
    >"$OUT/capture-function-run.json" 2>>"$OUT/capture-stderr.txt"
wait $WAITER
sleep 2 # the last batches
cp "$W/$job.post" "$OUT/capture-function-post.json"
curl -s "$HTTP/v1/jobs/$job/captures" >"$OUT/capture-function.json"
curl -s "$HTTP/v1/jobs/$job/stalls?rank=0" >"$OUT/capture-function-stalls.json"
LD_LIBRARY_PATH=$B/lib "$B/bin/rs-store-dump" "$W/data" $job >"$OUT/capture-function-store.json"
grep -h "kernel windows\|PC sampling\|pc sampling\|capture" "$OUT/capture-stderr.txt" | head -20
python3 - "$OUT/capture-function.json" "$OUT/capture-function-store.json" "$OUT/capture-function-stalls.json" <<'EOF' |
import json, sys
(c,) = json.load(open(sys.argv[1]))["captures"]
store = json.load(open(sys.argv[2]))
print("function: state %s, ran %s, %.2f s from start to end, records %s, message %r" % (
    c["state"], c["ran_kinds"], (c["ended_ns"] - c["started_ns"]) / 1e9 if c["ended_ns"] and c["started_ns"] else -1,
    c["records"], c["message"]))
print("function: store kernels per rank:", {r["rank"]: r["kernels"] for r in store["ranks"]})
try:
    stalls = json.load(open(sys.argv[3]))
    print("function: /stalls?rank=0 answered keys", sorted(stalls)[:8], "text", json.dumps(stalls)[:400])
except (OSError, ValueError) as e:
    print("function: /stalls?rank=0 unreadable:", e)
EOF
tee "$OUT/capture-summary.txt"

# ---- 2. cost ---------------------------------------------------------------------------------
: >"$OUT/capture-pairs.jsonl"
for i in $(seq "$PAIRS"); do
    for mode in none capture; do
        [ $((i % 2)) = 0 ] && mode=$([ $mode = none ] && echo capture || echo none) # alternate
        job=cap-cost-$i
        if [ $mode = none ]; then
            r=$(taskset -c "$CPUS" python3 $LM --steps "$STEPS" --warmup 150 --nvtx-steps \
                2>>"$OUT/capture-stderr.txt")
            c=null
        else
            capture_when_heard $job '{"ranks":[0],"kinds":["kernels"],"seconds":60}' &
            WAITER=$!
            r=$(env $(collector_env $job) taskset -c "$CPUS" python3 $LM --steps "$STEPS" \
                --warmup 150 --nvtx-steps 2>>"$OUT/capture-stderr.txt")
            wait $WAITER
            sleep 1
            c=$(curl -s "$HTTP/v1/jobs/$job/captures")
        fi
        printf '{"pair":%d,"mode":"%s","result":%s,"captures":%s}\n' "$i" "$mode" \
            "${r:-null}" "${c:-null}" >>"$OUT/capture-pairs.jsonl"
    done
done
daemons_down
python3 - "$OUT/capture-pairs.jsonl" "$OUT/capture-function-run.json" <<'EOF' | tee -a "$OUT/capture-summary.txt"
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
pairs, covered = {}, []
for r in rows:
    if r["result"]:
        pairs.setdefault(r["pair"], {})[r["mode"]] = r["result"]["step_ms_median"]
    if r["mode"] == "capture" and r["captures"]:
        (c,) = r["captures"]["captures"] or [None]
        covered.append(c and c["records"]["kernels"])
ratios = sorted(p["capture"] / p["none"] for p in pairs.values() if len(p) == 2)
print("cost: median step ms, no collector %.3f, during a kernels capture %.3f" % (
    statistics.median(p["none"] for p in pairs.values() if "none" in p),
    statistics.median(p["capture"] for p in pairs.values() if "capture" in p)))
print("cost: ratio during a capture / no collector: median %.4f, range %.4f - %.4f (%d pairs)" % (
    statistics.median(ratios), ratios[0], ratios[-1], len(ratios)))
print("cost: kernel records per capture:", covered)
# the capture of each run ends when the process does (reported done at exit): it covered the
# timed steps when it ran at least as long as they did
spans = []
for r in rows:
    if r["mode"] == "capture" and r["captures"] and r["result"]:
        for c in r["captures"]["captures"]:
            if c["started_ns"] and c["ended_ns"]:
                spans.append(round((c["ended_ns"] - c["started_ns"]) / 1e9 - r["result"]["wall_s"], 2))
print("cost: capture span minus the timed loop's wall time, s (>= 0: it covered it):", spans)
EOF
grep -h "kernel windows" "$OUT/capture-stderr.txt" | sort | uniq -c | head -5 | tee -a "$OUT/capture-summary.txt"
