#!/usr/bin/env bash
# Collector overhead on a GPU machine with 2 GPUs (see docs/BENCHMARKS.md):
#  1. the same 2-rank DDP job without the collector, with it, with it and PC sampling on
#     (RANKSCOPE_PC_SAMPLING=1, the whole run), and under torch.profiler, alternating, PAIRS
#     rounds; median step time ratios with their spread;
#  2. a launch-bound loop (one thread, 200,000 empty kernels) with and without the collector, and
#     with the collector under each RANKSCOPE_* setting in LAUNCH_VARIANTS ("A=1;B=2 C=3"), in
#     turn, LAUNCH_ROUNDS rounds (default PAIRS). A variant may name another build of the
#     collector: "CUDA_INJECTION64_PATH=gpu-bundle/lib/old/librankscope.so" compares two builds
#     in one run.
# DDP_PAIRS=0 skips part 1. Needs gpu-bundle/ (tests/gpu/bundle.sh). Writes $OUT/bench.jsonl and
# prints a summary.
. "$(dirname "$0")/../gpu/common.sh"
PAIRS=${PAIRS:-5}
STEPS=${STEPS:-60}
daemons_up
: >"$OUT/bench.jsonl"
IFS=';' read -ra launch_variants <<<"${LAUNCH_VARIANTS:-}"
for i in $(seq "${DDP_PAIRS:-$PAIRS}"); do
    for mode in none collector pcsampling profiler; do
        case $mode in
        none) train bench-none-$i --steps "$STEPS" ;;
        collector) train bench-collector-$i --collector --steps "$STEPS" ;;
        pcsampling) train bench-pcsampling-$i --collector --pc-sampling --steps "$STEPS" ;;
        profiler) train bench-profiler-$i --steps "$STEPS" --profiler ;;
        esac
        printf '{"kind":"ddp","mode":"%s","round":%d,"result":%s}\n' "$mode" "$i" \
            "$(cat "$W/bench-$mode-$i.result" 2>/dev/null || echo null)" >>"$OUT/bench.jsonl"
    done
done
if nvcc -O2 -o "$W/launch_bench" tests/bench/launch_bench.cu 2>>"$OUT/train-logs.txt"; then
    modes=(none collector)
    for k in "${!launch_variants[@]}"; do modes+=("collector ${launch_variants[$k]}"); done
    for i in $(seq "${LAUNCH_ROUNDS:-$PAIRS}"); do
        for mode in "${modes[@]}"; do
            if [ "$mode" != none ]; then
                r=$(env RANKSCOPE_JOB_ID=launch-bench RANKSCOPE_AGENT_SOCKET="$W/agent.sock" \
                    LD_LIBRARY_PATH="$CUPTI_DIR:${LD_LIBRARY_PATH:-}" \
                    CUDA_INJECTION64_PATH="$B/lib/librankscope.so" ${mode#collector} \
                    "$W/launch_bench" 200000)
            else
                r=$("$W/launch_bench" 200000)
            fi
            printf '{"kind":"launch","mode":"%s","round":%d,"result":%s}\n' "$mode" "$i" \
                "${r:-null}" >>"$OUT/bench.jsonl"
        done
    done
fi
sleep 1
LD_LIBRARY_PATH=$B/lib "$B/bin/rs-store-dump" "$W/data" launch-bench >"$W/launch-store.json" 2>&1
daemons_down
python3 tests/bench/overhead_report.py "$OUT/bench.jsonl" "$W/launch-store.json" | tee "$OUT/bench-summary.txt"
