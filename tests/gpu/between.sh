#!/usr/bin/env bash
# What the collector costs between kernel-tracing windows, step by step (issue 25): the
# launch-bound loop (tests/bench/launch_bench.cu) under CUPTI clients that stop at each step a
# client takes (tests/bench/cupti_floor.c FLOOR_STAGE: noop, version, subscribe, register, device,
# marker, flush, toggled, kernel) and under the collector between windows, $ROUNDS rounds, modes
# rotated, pinned to $CPUS, $N launches in $CHUNKS chunks per run (median chunk per launch).
# Extra modes: BETWEEN_VARIANTS="NAME:VAR=V VAR=V;..." the collector between windows with more
# settings. Leaves $OUT/between.jsonl and $OUT/between-summary.txt. Needs gpu-bundle/ and nvcc.
. "$(dirname "$0")/common.sh"
ROUNDS=${ROUNDS:-8} N=${N:-200000} CHUNKS=${CHUNKS:-20} CPUS=${CPUS:-2-3}
nvcc -O2 -o "$W/launch_bench" tests/bench/launch_bench.cu || { echo "no nvcc" >&2; exit 1; }
: >"$OUT/between.jsonl"
stages="noop version subscribe register device marker flush toggled kernel"
modes=(none $stages between always)
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
       else
           env+=(CUDA_INJECTION64_PATH="$B/lib/bench/libcupti_floor.so" FLOOR_STAGE="$mode")
       fi ;;
    esac
    r=$(env "${env[@]}" taskset -c "$CPUS" "$W/launch_bench" "$N" "$CHUNKS" 2>>"$OUT/between-stderr.txt")
    printf '{"mode":"%s","round":%d,"result":%s}\n' "$mode" "$2" "${r:-null}" >>"$OUT/between.jsonl"
}
for i in $(seq "$ROUNDS"); do
    for k in "${!modes[@]}"; do
        run_mode "${modes[$(((k + i) % ${#modes[@]}))]}" "$i"
    done
done
python3 - "$OUT/between.jsonl" "${modes[@]}" <<'PY' | tee "$OUT/between-summary.txt"
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
modes = sys.argv[2:]
by = {}
for r in rows:
    if r["result"]:
        by.setdefault(r["round"], {})[r["mode"]] = r["result"]["chunk_median_us"]
print("mode       us/launch (median chunk, median of rounds)  ratio to none: median (range)  "
      "minus none, us: median")
for m in modes:
    xs = [x[m] for x in by.values() if m in x]
    rs = sorted(x[m] / x["none"] for x in by.values() if m in x and "none" in x)
    ds = [x[m] - x["none"] for x in by.values() if m in x and "none" in x]
    if xs and rs:
        print(f"{m:10s} {statistics.median(xs):8.4f}   {statistics.median(rs):.4f} "
              f"({rs[0]:.4f} - {rs[-1]:.4f}, {len(rs)} rounds)   {statistics.median(ds):+.4f}")
PY
