#!/usr/bin/env bash
# What a kernel window costs the launch-bound LM while it is open and after it closed, paired
# against runs without the collector (issue 25; docs/BENCHMARKS.md "After a window"). One lm.py
# process per run, alternating arms, the same placement for every run (workload on $CPUS, server
# and agent on CPUs 0-1, setarch -R, PYTHONHASHSEED=0, OMP_NUM_THREADS=1). Each run is launched
# $LEAD s before a window of $WIN_MS ms that opens at a multiple of $PERIOD_MS ms on the wall clock (the
# collector's schedule; the period is longer than a run, so that run has that window only) and times its
# steps from $BEFORE s before the window to $AFTER s after it (--timed-s): before, inside, after,
# in one process. Arms, in the order of $ARMS (repeated until $DEADLINE s have passed):
#   none   no collector (timed on the same schedule)
#   def    the collector's defaults with windows of $WIN_MS every $PERIOD_MS ms
#   sync1  def with RANKSCOPE_SYNC=1 (the SYNCHRONIZATION kind in the window: the old default)
#   lean   def with RANKSCOPE_LAUNCH_WAIT=0 (no latency timestamps)
# Leaves $OUT/after.jsonl (one line per run) and $OUT/after-summary.txt (after_report.py).
# Needs gpu-bundle/ (tests/gpu/bundle.sh); WORKLOAD=other.py replaces lm.py (a dry run without a GPU).
. "$(dirname "$0")/common.sh"
CPUS=${CPUS:-2-5} DEADLINE=${DEADLINE:-200}
WIN_MS=${WIN_MS:-2000} PERIOD_MS=${PERIOD_MS:-26000} LEAD=${LEAD:-15} BEFORE=${BEFORE:-3} AFTER=${AFTER:-7}
ARMS=${ARMS-none def sync1 def none none def sync1 def none}
taskset -cp 0-1 $$ >/dev/null
ASLR=()
command -v setarch >/dev/null && ASLR=(setarch "$(uname -m)" -R)
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv 2>&1; nproc; } >"$OUT/machine.txt"
daemons_up
: >"$OUT/after.jsonl"
: >"$OUT/after-stderr.txt"
WL=${WORKLOAD:-tests/gpu/workloads/lm.py}
seq=0
for arm in $ARMS; do
    # the window this run measures: the first multiple of P at least LEAD s from now
    read -r wait_s win_ns <<<"$(python3 -c 'import math, sys, time
P, lead = float(sys.argv[1]) / 1e3, float(sys.argv[2])
now = time.time(); t = math.ceil((now + lead) / P) * P
print(round(t - lead - now, 3), int(t * 1e9))' "$PERIOD_MS" "$LEAD")"
    [ $((SECONDS + ${wait_s%.*} + LEAD + WIN_MS / 1000 + AFTER + 2)) -lt "$DEADLINE" ] || break
    sleep "$wait_s"
    seq=$((seq + 1))
    env=(LD_LIBRARY_PATH="$CUPTI_DIR:${LD_LIBRARY_PATH:-}" PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1 PYTHONHASHSEED=0)
    coll=(CUDA_INJECTION64_PATH="$B/lib/librankscope.so" NVTX_INJECTION64_PATH="$B/lib/librankscope.so"
          RANKSCOPE_DEBUG=1 RANKSCOPE_AGENT_SOCKET="$W/agent.sock" RANKSCOPE_JOB_ID="after-$arm-$seq"
          RANKSCOPE_KERNELS=window RANKSCOPE_WINDOW_MS="$WIN_MS" RANKSCOPE_WINDOW_PERIOD_MS="$PERIOD_MS")
    case $arm in
    none) ;;
    def) env+=("${coll[@]}") ;;
    sync1) env+=("${coll[@]}" RANKSCOPE_SYNC=1) ;;
    lean) env+=("${coll[@]}" RANKSCOPE_LAUNCH_WAIT=0) ;;
    esac
    start=$(python3 -c 'import sys; print(int(sys.argv[1]) / 1e9 - float(sys.argv[2]))' "$win_ns" "$BEFORE")
    r=$(env "${env[@]}" taskset -c "$CPUS" "${ASLR[@]}" timeout $((LEAD + AFTER + 20)) python3 "$WL" \
        --steps 100000 --warmup 40 --nvtx-steps --start-at "$start" \
        --timed-s "$((BEFORE + WIN_MS / 1000 + AFTER))" 2>"$W/run.err" | grep '^{' | tail -1)
    { echo "== $seq $arm"; grep -v '^\s*$' "$W/run.err" | tail -4; } >>"$OUT/after-stderr.txt"
    win=$(sed -n 's/.*kernel windows: \([0-9]*\) opened.*/\1/p' "$W/run.err" | tail -1)
    printf '{"seq":%d,"arm":"%s","window_ns":%s,"window_ms":%s,"windows":%s,"result":%s}\n' \
        "$seq" "$arm" "$win_ns" "$WIN_MS" "${win:-null}" "${r:-null}" >>"$OUT/after.jsonl"
    echo "run $seq $arm at ${SECONDS}s: windows ${win:-?}" >&2
done
daemons_down
python3 tests/gpu/after_report.py "$OUT/after.jsonl" --before-s "$BEFORE" | tee "$OUT/after-summary.txt"
