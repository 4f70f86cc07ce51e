#!/usr/bin/env bash
# The collector's tiers on a launch-bound loop (tests/bench/launch_bench.cu: one thread, empty
# kernels back to back, ~400 per ms on an H100), $ROUNDS rounds, the modes in a rotated order each
# round, pinned to CPUs $CPUS, one process per run:
#   none      no collector
#   floor     CUPTI's floor (tests/bench/cupti_floor.c: kernel records, nothing done with them)
#   always    the collector as today (RANKSCOPE_KERNELS=always, the default)
#   between   RANKSCOPE_KERNELS=window outside any window (a window of 100 ms a day): the cost of
#             the collector between windows (devices, NVTX markers, the flush thread)
#   cycling   RANKSCOPE_KERNELS=window with windows of 500 ms every 2 s over a ~5 s run: windows
#             opening and closing while the loop runs (their count and cost from RANKSCOPE_DEBUG)
# Per mode: the per-launch time of each run, the ratio to the same round's none, median and range.
# Leaves $OUT/tiers.jsonl and $OUT/tiers-summary.txt. Needs gpu-bundle/ and nvcc.
. "$(dirname "$0")/common.sh"
ROUNDS=${ROUNDS:-8} N=${N:-400000} CPUS=${CPUS:-2-3}
nvcc -O2 -o "$W/launch_bench" tests/bench/launch_bench.cu || { echo "no nvcc" >&2; exit 1; }
daemons_up
: >"$OUT/tiers.jsonl"
: >"$OUT/tiers-stderr.txt"
modes=(none floor always between cycling)
run_mode() { # MODE ROUND
    local mode=$1 n=$N
    local -a env=(RANKSCOPE_JOB_ID="tiers-$1" RANKSCOPE_AGENT_SOCKET="$W/agent.sock"
                  LD_LIBRARY_PATH="$CUPTI_DIR:${LD_LIBRARY_PATH:-}" RANKSCOPE_DEBUG=1)
    case $mode in
    none) env=() ;;
    floor) env+=(CUDA_INJECTION64_PATH="$B/lib/bench/libcupti_floor.so") ;;
    always) env+=(CUDA_INJECTION64_PATH="$B/lib/librankscope.so") ;;
    between) env+=(CUDA_INJECTION64_PATH="$B/lib/librankscope.so" RANKSCOPE_KERNELS=window
                   RANKSCOPE_WINDOW_MS=100 RANKSCOPE_WINDOW_PERIOD_MS=86400000) ;;
    cycling) n=$((N * 5))
             env+=(CUDA_INJECTION64_PATH="$B/lib/librankscope.so" RANKSCOPE_KERNELS=window
                   RANKSCOPE_WINDOW_MS=500 RANKSCOPE_WINDOW_PERIOD_MS=2000) ;;
    esac
    r=$(env "${env[@]}" taskset -c "$CPUS" "$W/launch_bench" "$n" 1 2>>"$OUT/tiers-stderr.txt")
    printf '{"mode":"%s","round":%d,"result":%s}\n' "$mode" "$2" "${r:-null}" >>"$OUT/tiers.jsonl"
}
for i in $(seq "$ROUNDS"); do
    for k in "${!modes[@]}"; do
        run_mode "${modes[$(((k + i) % ${#modes[@]}))]}" "$i"
    done
done
daemons_down
python3 - "$OUT/tiers.jsonl" <<'EOF' | tee "$OUT/tiers-summary.txt"
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
by = {}
for r in rows:
    if r["result"]:
        by.setdefault(r["round"], {})[r["mode"]] = r["result"]["per_launch_us"]
modes = ["floor", "always", "between", "cycling"]
print("per-launch us, median over rounds:", {m: round(statistics.median(
    [x[m] for x in by.values() if m in x]), 4) for m in ["none"] + modes})
for m in modes:
    ratios = sorted(x[m] / x["none"] for x in by.values() if m in x and "none" in x)
    if ratios:
        print(f"{m:8s} ratio to none: median {statistics.median(ratios):.4f}, range "
              f"{ratios[0]:.4f} - {ratios[-1]:.4f} ({len(ratios)} rounds)")
EOF
grep -h "kernel windows" "$OUT/tiers-stderr.txt" | head -3 | tee -a "$OUT/tiers-summary.txt"
