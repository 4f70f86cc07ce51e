#!/usr/bin/env bash
# What the collector costs between kernel-tracing windows, step by step (issue 25): the
# launch-bound loop (tests/bench/launch_bench.cu) under CUPTI clients that stop at each step a
# client takes (tests/bench/cupti_floor.c FLOOR_STAGE: noop, version, subscribe, register, device,
# marker, flush, toggled, kernel) and under the collector between windows, $ROUNDS rounds, modes
# rotated, pinned to $CPUS, $N launches in $CHUNKS chunks per run (median chunk per launch).
# Extra modes: BETWEEN_VARIANTS="NAME:VAR=V VAR=V;..." the collector between windows with more
# settings; STAGES="..." the floor's stages to run (a stage named STAGE+lat: with latency
# timestamps set, FLOOR_LATENCY=1; latelat: kernel records with latency timestamps turned on
# 300 ms after start, FLOOR_LATENCY=2 — its exit line says how many kernels had a queue time;
# fwin: the flush stage with kernel records on from 200 to 1200 ms after start, FLOOR_WINDOW_MS,
# read in the second half's chunks);
# ALWAYS=0 leaves out `always`. Per run: wall time per launch (median chunk) and CPU time per
# launch of the launching thread and of the process (launch_bench.cu, getrusage). Leaves
# $OUT/between.jsonl and $OUT/between-summary.txt. Needs gpu-bundle/ and nvcc.
. "$(dirname "$0")/common.sh"
ROUNDS=${ROUNDS:-8} N=${N:-200000} CHUNKS=${CHUNKS:-20} CPUS=${CPUS:-2-3}
nvcc -O2 -o "$W/launch_bench" tests/bench/launch_bench.cu || { echo "no nvcc" >&2; exit 1; }
: >"$OUT/between.jsonl"
stages=${STAGES-noop version subscribe register device marker flush toggled kernel}
modes=(none $stages between)
[ "${ALWAYS:-1}" = 1 ] && modes+=(always)
declare -A extra
IFS=';' read -ra variants <<<"${BETWEEN_VARIANTS:-}"
for v in "${variants[@]}"; do
    [ -n "$v" ] || continue
    modes+=("${v%%:*}")
    extra[${v%%:*}]=${v#*:}
done
COLL=(CUDA_INJECTION64_PATH="$B/lib/librankscope.so" RANKSCOPE_AGENT_SOCKET="$W/none.sock")
BETWEEN=(RANKSCOPE_KERNELS=window RANKSCOPE_WINDOW_MS=100 RANKSCOPE_WINDOW_PERIOD_MS=86400000)
run_mode() { # MODE ROUND
    local mode=$1
    local -a env=(LD_LIBRARY_PATH="$CUPTI_DIR:${LD_LIBRARY_PATH:-}")
    case $mode in
    none) ;;
    always) env+=("${COLL[@]}" RANKSCOPE_KERNELS=always) ;;
    between) env+=("${COLL[@]}" "${BETWEEN[@]}") ;;
    *) if [ -n "${extra[$mode]:-}" ]; then
           read -ra more <<<"${extra[$mode]}"
           env+=("${COLL[@]}" "${BETWEEN[@]}" "${more[@]}")
       elif [ "$mode" = fwin ]; then
           env+=(CUDA_INJECTION64_PATH="$B/lib/bench/libcupti_floor.so" FLOOR_STAGE=flush
                 FLOOR_WINDOW_MS=200:1200)
       elif [ "$mode" = latelat ]; then
           env+=(CUDA_INJECTION64_PATH="$B/lib/bench/libcupti_floor.so" FLOOR_LATENCY=2)
       elif [ "${mode%+lat}" != "$mode" ]; then
           env+=(CUDA_INJECTION64_PATH="$B/lib/bench/libcupti_floor.so" FLOOR_STAGE="${mode%+lat}"
                 FLOOR_LATENCY=1)
       else
           env+=(CUDA_INJECTION64_PATH="$B/lib/bench/libcupti_floor.so" FLOOR_STAGE="$mode")
       fi ;;
    esac
    echo "== $mode $2" >>"$OUT/between-stderr.txt"
    r=$(env "${env[@]}" taskset -c "$CPUS" timeout 60 "$W/launch_bench" "$N" "$CHUNKS" 2>>"$OUT/between-stderr.txt")
    printf '{"mode":"%s","round":%d,"result":%s}\n' "$mode" "$2" "${r:-null}" >>"$OUT/between.jsonl"
}
for i in $(seq "$ROUNDS"); do
    [ -n "${DEADLINE:-}" ] && [ "$SECONDS" -ge "$DEADLINE" ] && break
    for k in "${!modes[@]}"; do
        run_mode "${modes[$(((k + i) % ${#modes[@]}))]}" "$i"
    done
done
python3 - "$OUT/between.jsonl" "${modes[@]}" <<'PY' | tee "$OUT/between-summary.txt"
import json, os, statistics, sys
sys.path.insert(0, os.path.join(os.getcwd(), "tests/gpu"))
from paired_stats import boot_ci, fmt_ci, median_ci
rows = [json.loads(l) for l in open(sys.argv[1])]
modes = sys.argv[2:]
for key, what in (("chunk_median_us", "wall us per launch (median chunk)"),
                  ("late_chunk_median_us", "wall us per launch (median chunk of the second half)"),
                  ("thread_cpu_us", "CPU us per launch, launching thread"),
                  ("proc_cpu_us", "CPU us per launch, whole process")):
    by = {}
    for r in rows:
        if r["result"] and key in r["result"]:
            by.setdefault(r["round"], {})[r["mode"]] = r["result"][key]
    print(f"== {what}: median of rounds; minus the same round's none: median, "
          "distribution-free 95% CI, bootstrap 95% CI, range")
    for m in modes:
        xs = [x[m] for x in by.values() if m in x]
        ds = [x[m] - x["none"] for x in by.values() if m in x and "none" in x]
        if xs and ds and m != "none":
            print(f"{m:12s} {statistics.median(xs):8.4f}   {statistics.median(ds):+.4f} "
                  f"{fmt_ci(median_ci(ds))} boot {fmt_ci(boot_ci(ds))} "
                  f"({min(ds):+.4f} .. {max(ds):+.4f}, {len(ds)} rounds)")
        elif xs:
            print(f"{m:12s} {statistics.median(xs):8.4f}")
PY
