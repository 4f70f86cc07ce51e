#!/usr/bin/env bash
# Do driver-API records of the launch calls come when turned on after CUDA started (as a
# kernel-tracing window opens)? The launch loop (tests/bench/launch_bench.cu, $N launches) under
# CUPTI's floor with FLOOR_LAUNCH_API=1 (on at start), 2 (per call, 300 ms later, from another
# thread), 3 (the whole DRIVER kind, 300 ms later), 4 (on and off at start, then as 2); each
# prints "cupti-floor: N records (A of launch calls)". Needs gpu-bundle/ and nvcc.
. "$(dirname "$0")/common.sh"
N=${N:-300000}
nvcc -O2 -o "$W/launch_bench" tests/bench/launch_bench.cu || { echo "no nvcc" >&2; exit 1; }
for v in 1 2 3 4; do
    echo "FLOOR_LAUNCH_API=$v: $(LD_LIBRARY_PATH="$CUPTI_DIR" \
        CUDA_INJECTION64_PATH="$B/lib/bench/libcupti_floor.so" FLOOR_LAUNCH_API=$v \
        "$W/launch_bench" "$N" 10 2>&1 | tr '\n' ' ')"
done | tee "$OUT/late_api.txt"
