#!/usr/bin/env bash
# The collector's cost on the single-GPU workloads (issue 25 "Measure"): tests/gpu/workloads/lm.py
# (launch-bound transformer LM, ~47 kernels per ms on an H100) and gpubound.py (few long kernels),
# $ROUNDS rounds, one process per run, modes in a rotated order each round, pinned to CPUs $CPUS (2),
# a server and an agent running:
#   none      no collector
#   floor     CUPTI's floor (tests/bench/cupti_floor.c: kernel records, nothing done with them)
#   always    the collector, RANKSCOPE_KERNELS=always (kernels traced all the time)
#   default   the collector with its defaults (kernels traced in windows of RANKSCOPE_WINDOW_MS every
#             RANKSCOPE_WINDOW_PERIOD_MS; whether a window fell in a run is in the debug lines)
#   between   RANKSCOPE_KERNELS=window with one 100 ms window a day: the collector between windows
#   version   (lm only) a CUPTI client that only loads CUPTI (FLOOR_STAGE=version)
# MODES_LM / MODES_GPU pick the modes (empty: that workload not run); STEPS_LM / STEPS_GPU the
# timed steps. Per run the median
# step and the 10th percentile (host wall time per step, the host waiting for the GPU at each
# step's end); per mode the ratio to the same round's none: median and range. OMP_NUM_THREADS=1
# (no CPU thread pool competing for the pinned CPUs). Leaves $OUT/overhead.jsonl (written as it
# goes) and $OUT/overhead-summary.txt. Needs gpu-bundle/.
. "$(dirname "$0")/common.sh"
ROUNDS=${ROUNDS:-8} CPUS=${CPUS:-2}
MODES_LM=${MODES_LM-none floor always default between version}
MODES_GPU=${MODES_GPU-none floor always default}
STEPS_LM=${STEPS_LM:-150} STEPS_GPU=${STEPS_GPU:-100}
daemons_up
: >"$OUT/overhead.jsonl"
run_one() { # WORKLOAD MODE ROUND
    local wl=$1 mode=$2 steps
    local -a env=(LD_LIBRARY_PATH="$CUPTI_DIR:${LD_LIBRARY_PATH:-}" PYTHONUNBUFFERED=1
                  OMP_NUM_THREADS=1)
    local -a coll=(CUDA_INJECTION64_PATH="$B/lib/librankscope.so"
                   NVTX_INJECTION64_PATH="$B/lib/librankscope.so" RANKSCOPE_DEBUG=1
                   RANKSCOPE_AGENT_SOCKET="$W/agent.sock" RANKSCOPE_JOB_ID="ovh-$wl-$mode")
    case $mode in
    none) ;;
    floor) env+=(CUDA_INJECTION64_PATH="$B/lib/bench/libcupti_floor.so") ;;
    version) env+=(CUDA_INJECTION64_PATH="$B/lib/bench/libcupti_floor.so" FLOOR_STAGE=version) ;;
    always) env+=("${coll[@]}" RANKSCOPE_KERNELS=always) ;;
    default) env+=("${coll[@]}") ;;
    between) env+=("${coll[@]}" RANKSCOPE_KERNELS=window RANKSCOPE_WINDOW_MS=100
                   RANKSCOPE_WINDOW_PERIOD_MS=86400000) ;;
    esac
    [ "$wl" = lm ] && steps=$STEPS_LM || steps=$STEPS_GPU
    r=$(env "${env[@]}" taskset -c "$CPUS" timeout 120 python3 "tests/gpu/workloads/$wl.py" \
        --steps "$steps" --nvtx-steps 2>>"$OUT/overhead-stderr.txt" | grep '^{' | tail -1 |
        python3 -c 'import json, sys; d = json.load(sys.stdin); t = sorted(d.pop("step_ms")); d["step_ms_p10"] = t[len(t) // 10]; print(json.dumps(d))' \
        2>/dev/null)
    printf '{"workload":"%s","mode":"%s","round":%d,"result":%s}\n' "$wl" "$mode" "$3" \
        "${r:-null}" >>"$OUT/overhead.jsonl"
}
for wl in lm gpubound; do
    [ "$wl" = lm ] && read -ra modes <<<"$MODES_LM" || read -ra modes <<<"$MODES_GPU"
    for i in $(seq "$ROUNDS"); do
        for k in "${!modes[@]}"; do
            run_one "$wl" "${modes[$(((k + i) % ${#modes[@]}))]}" "$i"
        done
    done
done
daemons_down
python3 - "$OUT/overhead.jsonl" <<'PY' | tee "$OUT/overhead-summary.txt"
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for wl, stat in [(w, s) for w in ["lm", "gpubound"] for s in ["step_ms_median", "step_ms_p10"]]:
    by, modes = {}, []
    for r in rows:
        if r["workload"] == wl and r["result"]:
            by.setdefault(r["round"], {})[r["mode"]] = r["result"][stat]
            if r["mode"] not in modes:
                modes.append(r["mode"])
    if not by:
        continue
    print(f"{wl} {stat} (median of rounds); ratio to the same round's none: median (range)")
    for m in modes:
        xs = [x[m] for x in by.values() if m in x]
        rs = sorted(x[m] / x["none"] for x in by.values() if m in x and "none" in x)
        print(f"  {m:8s} {statistics.median(xs):8.3f} ms" + (
            f"   {statistics.median(rs):.4f} ({rs[0]:.4f} - {rs[-1]:.4f}, {len(rs)} rounds)"
            if rs and m != "none" else ""))
PY
grep -h "kernel windows" "$OUT/overhead-stderr.txt" | sort | uniq -c | head -5
