#!/usr/bin/env bash
# Collector overhead on a GPU machine with 2 GPUs (see docs/BENCHMARKS.md):
#  1. the same 2-rank DDP job without the collector, with it, with it and PC sampling on
#     (RANKSCOPE_PC_SAMPLING=1, in the collector's windows), and under torch.profiler, alternating,
#     PAIRS rounds; median (and mean) step time ratios with their spread;
#  2. a launch-bound loop (one thread, 200,000 empty kernels) with and without the collector, and
#     with the collector under each RANKSCOPE_* setting in LAUNCH_VARIANTS ("A=1;B=2 C=3"), in
#     turn, LAUNCH_ROUNDS rounds (default PAIRS). A variant may name another build of the
#     collector: "CUDA_INJECTION64_PATH=gpu-bundle/lib/old/librankscope.so" compares two builds
#     in one run. LAUNCH_N (200000) launches per run, timed in LAUNCH_CHUNKS chunks (1; see
#     launch_bench.cu); LAUNCH_CPUS="8-11" pins every run of the loop to those CPUs (taskset).
# MODES picks part 1's modes ("none pcsampling"); DDP_VARIANTS ("A=1;B=2 C=3") adds the collector
# under each setting to part 1's rounds; PC_WINDOW_MS / PC_PERIOD_MS set the PC-sampling
# windows (tests/gpu/common.sh). DDP_PAIRS=0 skips part 1. Needs gpu-bundle/ (tests/gpu/bundle.sh).
# Writes $OUT/bench.jsonl and prints a summary.
. "$(dirname "$0")/../gpu/common.sh"
PAIRS=${PAIRS:-5}
STEPS=${STEPS:-60}
daemons_up
: >"$OUT/bench.jsonl"
IFS=';' read -ra launch_variants <<<"${LAUNCH_VARIANTS:-}"
IFS=';' read -ra ddp_variants <<<"${DDP_VARIANTS:-}"
read -ra ddp_modes <<<"${MODES:-none collector pcsampling profiler}"
for k in "${!ddp_variants[@]}"; do ddp_modes+=("collector ${ddp_variants[$k]}"); done
for i in $(seq "${DDP_PAIRS:-$PAIRS}"); do
    for m in "${!ddp_modes[@]}"; do
        mode=${ddp_modes[$m]} job=bench-$m-$i
        case $mode in
        none) train "$job" --steps "$STEPS" ;;
        collector) train "$job" --collector --steps "$STEPS" ;;
        pcsampling) train "$job" --collector --pc-sampling --steps "$STEPS" ;;
        profiler) train "$job" --steps "$STEPS" --profiler ;;
        "collector "*) (export ${mode#collector }; train "$job" --collector --steps "$STEPS") ;;
        esac
        printf '{"kind":"ddp","mode":"%s","round":%d,"result":%s}\n' "$mode" "$i" \
            "$(cat "$W/$job.result" 2>/dev/null || echo null)" >>"$OUT/bench.jsonl"
    done
done
if nvcc -O2 -o "$W/launch_bench" tests/bench/launch_bench.cu 2>>"$OUT/train-logs.txt"; then
    modes=(none collector)
    for k in "${!launch_variants[@]}"; do modes+=("collector ${launch_variants[$k]}"); done
    for i in $(seq "${LAUNCH_ROUNDS:-$PAIRS}"); do
        for mode in "${modes[@]}"; do
            pin=()
            [ -n "${LAUNCH_CPUS:-}" ] && pin=(taskset -c "$LAUNCH_CPUS")
            if [ "$mode" != none ]; then
                r=$(env RANKSCOPE_JOB_ID=launch-bench RANKSCOPE_AGENT_SOCKET="$W/agent.sock" \
                    LD_LIBRARY_PATH="$CUPTI_DIR:${LD_LIBRARY_PATH:-}" \
                    CUDA_INJECTION64_PATH="$B/lib/librankscope.so" ${mode#collector} \
                    "${pin[@]}" "$W/launch_bench" "${LAUNCH_N:-200000}" "${LAUNCH_CHUNKS:-1}")
            else
                r=$("${pin[@]}" "$W/launch_bench" "${LAUNCH_N:-200000}" "${LAUNCH_CHUNKS:-1}")
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
