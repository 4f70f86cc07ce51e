#!/usr/bin/env bash
# librankscope.so lives inside someone else's process (issue 3): it must export only the entry
# points the CUDA driver, NVTX and NCCL (its profiler plugin) look up, load with nothing of ours beside it, and do nothing when
# switched off. Built wherever CUPTI's headers are (CUDA_HOME); where they are not, the collector
# is skipped by the build and so is this test (it says so).
. "$(dirname "$0")/common.sh"
SO=$ROOT/${BUILD:-build}/lib/librankscope.so
if [ ! -f "$SO" ]; then
    echo "$SUITE: skipped: $SO not built (no CUPTI headers; set CUDA_HOME)"
    echo "$SUITE: 0 passed, 0 failed"
    exit 0
fi
check "exports exactly InitializeInjection, InitializeInjectionNvtx2, ncclProfiler_v5 and _v6 (nm -D)" bash -c '
got=$(nm -D --defined-only "$1" | awk "\$2 ~ /^[TDBRVW]$/ {print \$3}" | sort | paste -sd " ")
[ "$got" = "InitializeInjection InitializeInjectionNvtx2 ncclProfiler_v5 ncclProfiler_v6" ] || { echo "exports: $got"; exit 1; }' _ "$SO"
check "every library it needs resolves (ldd)" bash -c '! ldd "$1" | grep "not found"' _ "$SO"
# The kill switch: InitializeInjection returns success to the driver and touches nothing (no
# CUPTI call, no log line, no socket). A sanitizer build of the library needs its runtime loaded
# first into python (not ours to check for leaks).
ASAN_RT=$(ldd "$SO" | awk '/libasan/ {print $3}')
check "RANKSCOPE_DISABLE=1: InitializeInjection returns 1, says nothing" bash -c '
out=$(LD_PRELOAD="$3" ASAN_OPTIONS=detect_leaks=0 RANKSCOPE_DISABLE=1 RANKSCOPE_AGENT_SOCKET="$2/none.sock" python3 -c "
import ctypes, sys
print(ctypes.CDLL(sys.argv[1]).InitializeInjection())" "$1" 2>&1)
[ "$out" = 1 ] && [ ! -e "$2/none.sock" ] || { echo "got: $out"; exit 1; }' _ "$SO" "$WORK" "$ASAN_RT"
finish
