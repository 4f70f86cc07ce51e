#!/usr/bin/env bash
# Launch waits against a known host-side idle (issue 25 item 5): single-GPU jobs of
# tests/gpu/workloads/lm.py with the collector, a server and an agent, NVTX step ranges:
#   lw-sleep    (kernels traced always) the host sleeps $SLEEP_MS after each step's synchronize (an input-bound loop):
#               the GPU waits at least that long per step for its next launch
#   lw-bound    (always) no sleep: launch-bound, the GPU idle between short kernels
#   lw-window   as lw-sleep with kernels traced in windows ($WIN_MS every $PERIOD_MS): the time
#               between windows is not traced and must not count as waiting
# Per job: the workload's own figures (step wall time, measured sleep) and the server's top
# (launch_wait ms and gpu_busy_ms per step) over the timed steps (since_ns/until_ns from the
# workload's t0_ns/t1_ns) and over the whole run. A sound accounting has, per timed step,
#   sleep <= launch wait  and  launch wait + GPU busy <= step wall time + sleep (+ jitter).
# Leaves $OUT/launch_waits.json and prints the table; gpu-bundle/ needed.
. "$(dirname "$0")/common.sh"
STEPS=${STEPS:-150} SLEEP_MS=${SLEEP_MS:-20} WIN_MS=${WIN_MS:-500} PERIOD_MS=${PERIOD_MS:-2000}
daemons_up
lm() { # JOB [VAR=V...] -- ARGS...
    local job=$1
    local -a vars=(RANKSCOPE_JOB_ID="$job" RANKSCOPE_AGENT_SOCKET="$W/agent.sock" RANKSCOPE_DEBUG=1
                   LD_LIBRARY_PATH="$CUPTI_DIR:${LD_LIBRARY_PATH:-}" PYTHONUNBUFFERED=1
                   CUDA_INJECTION64_PATH="$B/lib/librankscope.so"
                   NVTX_INJECTION64_PATH="$B/lib/librankscope.so")
    shift
    while [ "$1" != -- ]; do vars+=("$1"); shift; done
    shift
    env "${vars[@]}" timeout 300 python3 tests/gpu/workloads/lm.py --nvtx-steps "$@" \
        >"$W/$job.out" 2>"$W/$job.err"
    echo "== $job (exit $?)" >>"$OUT/launch_waits-logs.txt"
    tail -5 "$W/$job.err" >>"$OUT/launch_waits-logs.txt"
}
lm lw-sleep RANKSCOPE_KERNELS=always -- --steps "$STEPS" --host-sleep-ms "$SLEEP_MS"
lm lw-bound RANKSCOPE_KERNELS=always -- --steps "$STEPS"
lm lw-window RANKSCOPE_KERNELS=window RANKSCOPE_WINDOW_MS="$WIN_MS" \
   RANKSCOPE_WINDOW_PERIOD_MS="$PERIOD_MS" -- --steps $((STEPS * 3)) --host-sleep-ms "$SLEEP_MS"
sleep 2 # the agent's last flush and the server's commit
for job in lw-sleep lw-bound lw-window; do
    get "/v1/jobs/$job/top" >"$W/$job.whole" 2>/dev/null || echo '{}' >"$W/$job.whole"
    range=$(grep '^{' "$W/$job.out" | tail -1 |
            python3 -c 'import json, sys; d = json.load(sys.stdin); print("since_ns=%d&until_ns=%d" % (d["t0_ns"], d["t1_ns"]))' 2>/dev/null)
    get "/v1/jobs/$job/top?$range" >"$W/$job.top" 2>/dev/null || echo '{}' >"$W/$job.top"
done
daemons_down
python3 - "$W" "$OUT/launch_waits.json" <<'PY'
import json, statistics, sys
w, out = sys.argv[1], sys.argv[2]
res = {}
print("job                    steps  step wall ms  sleep ms  | unit      launch wait ms  calls  gpu busy ms  wait+busy-wall-sleep")
rows = [(j, s) for j in ["lw-sleep", "lw-bound", "lw-window"] for s in ["top", "whole"]]
for job, part in rows:
    try:
        run = json.loads([l for l in open(f"{w}/{job}.out") if l.startswith("{")][-1])
    except (IndexError, OSError, ValueError):
        run = {}
    top = json.load(open(f"{w}/{job}.{part}"))
    lw = top.get("launch_wait") or {}
    scope = top.get("scope") or {}
    wall = statistics.fmean(run["step_ms"]) if run.get("step_ms") else float("nan")
    sleep = run.get("host_sleep_ms_sum", 0) / max(run.get("steps", 1), 1)
    busy = top.get("gpu_busy_ms") or float("nan")
    lwm = lw.get("ms", float("nan"))
    res[f"{job}.{part}"] = {"run": {k: v for k, v in run.items() if k != "step_ms"}, "step_wall_ms": wall,
                "sleep_ms": sleep, "top": top}
    print(f"{job + ('' if part == 'top' else ' (whole run)'):22s} {run.get('steps', 0):5d}  {wall:12.3f}  {sleep:8.3f}  | "
          f"{scope.get('unit', '?'):9s} {lwm:14.3f}  {lw.get('calls', float('nan')):5.2f}  "
          f"{busy:11.3f}  {lwm + busy - wall - sleep:+.3f}")
json.dump(res, open(out, "w"), indent=1)
PY
grep -h "launch waits\|kernel windows\|converted" "$OUT/launch_waits-logs.txt" || true
