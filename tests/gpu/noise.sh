#!/usr/bin/env bash
# The collector's cost with the noise measured first (issue 25 "Measure"; docs/BENCHMARKS.md
# "Noise first"). One process per run, the same fixed placement for every run: the workload on
# CPUs $CPUS (2-5), the server, the agent and the sampler on CPUs 0-1, address-space layout
# randomisation off (setarch -R) and PYTHONHASHSEED=0, OMP_NUM_THREADS=1; warm-up steps excluded;
# per run the median of the timed steps. tests/gpu/gpu_sampler.py reads the GPU's clocks and the
# CPUs' steal time all along (read only). Phases, in this order, each skipped once $DEADLINE
# seconds have passed (nothing started after it; pccap needs 45 s left):
#   probe  tests/gpu/pc_order (built here by nvcc, or carried as $PROBE): what CUPTI allows
#          between kernel activity and PC sampling (three scenarios)
#   lm     $ROUNDS_LM rounds of lm.py (launch-bound), modes $MODES_LM in an order rotated each
#          round: none, none2 (none again: the A/A pair), default (the collector's defaults;
#          whether a kernel window fell in the run is read from RANKSCOPE_DEBUG), always
#          (RANKSCOPE_KERNELS=always: every kernel traced, what a window or a capture costs),
#          floor (CUPTI's floor, libcupti_floor.so)
#   gpu    $ROUNDS_GPU rounds of gpubound.py, modes $MODES_GPU
#   pccap  a PC-sampling + kernels capture on lm.py with RANKSCOPE_PC_DEBUG=1 (tests/gpu/capture.sh
#          part 1, PAIRS=0)
#   lmpar  $PAIRS_PAR concurrent pairs on lm.py (see pairs() below): the host's noise common to both;
#          PAR_TIMED_S=S: each side times S seconds of steps (lm.py --timed-s), so that a window
#          schedule whose period divides S is in the timed seconds at its true share;
#          PAR_ALIGN_S=A PAR_ALIGN_OFF=O: the timed seconds start at a CLOCK_REALTIME second t
#          with t % A = O (with windows every A s, one falls A - O s into the timed seconds)
#   persist one lm.py process per kind in $PERSIST_KINDS (full: windows as set by default; nolat:
#          RANKSCOPE_LAUNCH_WAIT=0; nosync: RANKSCOPE_SYNC=0; lean: both), started just after a
#          window of $PER_W ms every $PER_P ms ended, timing 10 s before its first window, the
#          window, and after it: does a window's cost stay once it closed?
#   inproc one lm.py run of $INPROC_STEPS steps with windows of $INPROC_W ms every $INPROC_P ms:
#          steps inside windows against steps between them, in the same process
# Leaves $OUT/noise.jsonl (one line per run, step times included), $OUT/sampler.jsonl,
# $OUT/machine.txt, $OUT/probe.jsonl, $OUT/noise-summary.txt (tests/gpu/noise_report.py).
# Needs gpu-bundle/.
. "$(dirname "$0")/common.sh"
CPUS=${CPUS:-2-5} DEADLINE=${DEADLINE:-500}
ROUNDS_LM=${ROUNDS_LM:-8} ROUNDS_GPU=${ROUNDS_GPU:-5}
MODES_LM=${MODES_LM-none none2 default always}
MODES_GPU=${MODES_GPU-none none2 default}
STEPS_LM=${STEPS_LM:-150} WARMUP_LM=${WARMUP_LM:-40} STEPS_GPU=${STEPS_GPU:-100} WARMUP_GPU=${WARMUP_GPU:-20}
CPUS_A=${CPUS_A:-2-5} CPUS_B=${CPUS_B:-6-9} PAIRS_PAR=${PAIRS_PAR:-20} PAR_KINDS=${PAR_KINDS-none win winlean}
STEPS_PAR=${STEPS_PAR:-400} PAR_LEAD=${PAR_LEAD:-14} PAR_TIMED_S=${PAR_TIMED_S:-0}
PAR_ALIGN_S=${PAR_ALIGN_S:-0} PAR_ALIGN_OFF=${PAR_ALIGN_OFF:-0} PAR_W=${PAR_W:-2000} PAR_P=${PAR_P:-6000}
PERSIST_KINDS=${PERSIST_KINDS-full nolat nosync lean} PER_W=${PER_W:-2000} PER_P=${PER_P:-30000} PER_STEPS=${PER_STEPS:-1000}
INPROC_STEPS=${INPROC_STEPS:-1200} INPROC_W=${INPROC_W:-1000} INPROC_P=${INPROC_P:-3000}
PHASES=${PHASES:-probe lm gpu pccap inproc}
taskset -cp 0-1 $$ >/dev/null # daemons and sampler inherit CPUs 0-1
ASLR=()
command -v setarch >/dev/null && ASLR=(setarch "$(uname -m)" -R)
{
    date -u; uname -r; nproc; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,pstate --format=csv
    nvidia-smi topo -m 2>&1 | head -5; lscpu | grep -iE 'model name|numa|mhz|thread|socket'
    cat /sys/devices/system/cpu/cpu2/cpufreq/scaling_governor 2>&1 | head -1
    echo "aslr: ${ASLR[*]:-unavailable}; randomize_va_space=$(cat /proc/sys/kernel/randomize_va_space)"
} >"$OUT/machine.txt" 2>&1
python3 tests/gpu/gpu_sampler.py --cpus "$(python3 -c 'import sys
a, _, b = sys.argv[1].partition("-"); print(",".join(str(c) for c in range(int(a), int(b or a) + 1)))' "$CPUS")" \
    >"$OUT/sampler.jsonl" 2>"$OUT/sampler-stderr.txt" &
SAMPLER=$!
daemons_up
: >"$OUT/noise.jsonl"
: >"$OUT/noise-stderr.txt"
SEQ=0
left() { [ "$SECONDS" -lt "$DEADLINE" ]; }
# run WORKLOAD MODE ROUND [STEPS WARMUP [VAR=value...]]: one process, one line in noise.jsonl
run() {
    local wl=$1 mode=$2 round=$3 steps=$4 warm=$5 err=$W/run.err r win
    shift 5
    local -a env=(LD_LIBRARY_PATH="$CUPTI_DIR:${LD_LIBRARY_PATH:-}" PYTHONUNBUFFERED=1
                  OMP_NUM_THREADS=1 PYTHONHASHSEED=0)
    local -a coll=(CUDA_INJECTION64_PATH="$B/lib/librankscope.so"
                   NVTX_INJECTION64_PATH="$B/lib/librankscope.so" RANKSCOPE_DEBUG=1
                   RANKSCOPE_AGENT_SOCKET="$W/agent.sock" RANKSCOPE_JOB_ID="noise-$wl-$mode-$round")
    case $mode in
    none | none2 | par-none) ;;
    default) env+=("${coll[@]}") ;;
    always) env+=("${coll[@]}" RANKSCOPE_KERNELS=always) ;;
    floor | par-cupti) env+=(CUDA_INJECTION64_PATH="$B/lib/bench/libcupti_floor.so") ;;
    *) env+=("${coll[@]}") ;;
    esac
    SEQ=$((SEQ + 1))
    [ -n "${RUN_ERR:-}" ] && err=$RUN_ERR
    r=$(env "${env[@]}" "$@" taskset -c "${RUN_CPUS:-$CPUS}" "${ASLR[@]}" timeout 150 python3 \
        "tests/gpu/workloads/$wl.py" --steps "$steps" --warmup "$warm" --nvtx-steps \
        ${RUN_ARGS:-} 2>"$err" | grep '^{' | tail -1)
    win=$(sed -n 's/.*kernel windows: \([0-9]*\) opened.*/\1/p' "$err" | tail -1)
    { echo "== $wl $mode $round"; grep -v '^\s*$' "$err" | tail -4; } >>"$OUT/noise-stderr.txt"
    printf '{"seq":%d,"workload":"%s","mode":"%s","round":%d,"windows":%s,"pair":%s,"side":"%s","result":%s}\n' \
        "$SEQ" "$wl" "$mode" "$round" "${win:-null}" "${RUN_PAIR:-null}" "${RUN_SIDE:-}" \
        "${r:-null}" >>"${RUN_JSONL:-$OUT/noise.jsonl}"
}
# pairs N KIND...: concurrent pairs on lm.py — a run without the collector and a run of KIND
# (none: the A/A pair) started together on CPUs $CPUS_A and $CPUS_B (swapped every pair), their
# timed steps begun at the same second (--start-at), so that what slows the host slows both;
# KIND rotates over the list. win / winlean: windows of $PAR_W ms every $PAR_P ms (lean: without
# host synchronizations and queue times: RANKSCOPE_SYNC=0 RANKSCOPE_LAUNCH_WAIT=0); between /
# nolat / lean: the collector between windows (one window of 100 ms a day) as set by default,
# without kernels' queue times (RANKSCOPE_LAUNCH_WAIT=0), and without host synchronizations too;
# cupti: no collector, CUPTI's floor client stopped at stage $PAR_CUPTI_STAGE (flush: CUPTI
# initialised, buffers registered, device and marker records, a thread flushing every 250 ms —
# what CUPTI itself does between windows, without our code).
pairs() {
    local n=$1 i kind ca cb start
    shift
    local -a kinds=("$@")
    for i in $(seq "$n"); do
        left || return 0
        kind=${kinds[$(((i - 1) % ${#kinds[@]}))]}
        ca=$CPUS_A cb=$CPUS_B
        [ $((i % 2)) = 0 ] && ca=$CPUS_B cb=$CPUS_A
        start=$(($(date +%s) + PAR_LEAD))
        if [ "$PAR_ALIGN_S" != 0 ]; then
            start=$((start + ((PAR_ALIGN_OFF - start % PAR_ALIGN_S) % PAR_ALIGN_S + PAR_ALIGN_S) % PAR_ALIGN_S))
        fi
        local par_args="--start-at $start"
        [ "$PAR_TIMED_S" != 0 ] && par_args+=" --timed-s $PAR_TIMED_S"
        local -a more=()
        case $kind in
        win) more=(RANKSCOPE_KERNELS=window RANKSCOPE_WINDOW_MS="$PAR_W" RANKSCOPE_WINDOW_PERIOD_MS="$PAR_P") ;;
        winlean) more=(RANKSCOPE_KERNELS=window RANKSCOPE_WINDOW_MS="$PAR_W" RANKSCOPE_WINDOW_PERIOD_MS="$PAR_P"
                       RANKSCOPE_SYNC=0 RANKSCOPE_LAUNCH_WAIT=0) ;;
        between) more=(RANKSCOPE_KERNELS=window RANKSCOPE_WINDOW_MS=100 RANKSCOPE_WINDOW_PERIOD_MS=86400000) ;;
        nolat) more=(RANKSCOPE_KERNELS=window RANKSCOPE_WINDOW_MS=100 RANKSCOPE_WINDOW_PERIOD_MS=86400000
                     RANKSCOPE_LAUNCH_WAIT=0) ;;
        cupti) more=(FLOOR_STAGE="${PAR_CUPTI_STAGE:-flush}") ;;
        lean) more=(RANKSCOPE_KERNELS=window RANKSCOPE_WINDOW_MS=100 RANKSCOPE_WINDOW_PERIOD_MS=86400000
                    RANKSCOPE_LAUNCH_WAIT=0 RANKSCOPE_SYNC=0) ;;
        esac
        RUN_CPUS=$ca RUN_ARGS="$par_args" RUN_PAIR=$i RUN_SIDE=a RUN_ERR=$W/a.err RUN_JSONL=$W/a.jsonl \
            run lm none "$i" "$STEPS_PAR" "$WARMUP_LM" &
        local pa=$!
        RUN_CPUS=$cb RUN_ARGS="$par_args" RUN_PAIR=$i RUN_SIDE=b RUN_ERR=$W/b.err RUN_JSONL=$W/b.jsonl \
            run lm "par-$kind" "$i" "$STEPS_PAR" "$WARMUP_LM" "${more[@]}"
        wait $pa
        cat "$W/a.jsonl" "$W/b.jsonl" >>"$OUT/noise.jsonl"
        rm -f "$W/a.jsonl" "$W/b.jsonl"
    done
}
rounds() { # WORKLOAD ROUNDS STEPS WARMUP MODES...
    local wl=$1 n=$2 steps=$3 warm=$4 i k
    shift 4
    local -a modes=("$@")
    for i in $(seq "$n"); do
        for k in "${!modes[@]}"; do
            left || return 0
            run "$wl" "${modes[$(((k + i) % ${#modes[@]}))]}" "$i" "$steps" "$warm"
        done
    done
}
for phase in $PHASES; do
    left || break
    echo "phase $phase at ${SECONDS}s" >&2
    case $phase in
    probe)
        PROBE=${PROBE:-}
        if [ -z "$PROBE" ]; then
            nvcc -O2 -o "$W/pc_order" tests/gpu/pc_order.cu -lcupti -lcuda -L"$CUPTI_DIR" && PROBE=$W/pc_order
        fi
        for s in toggle pc_first pc_late; do
            LD_LIBRARY_PATH="$CUPTI_DIR:${LD_LIBRARY_PATH:-}" timeout 60 "$PROBE" $s >>"$OUT/probe.jsonl" \
                2>>"$OUT/probe-stderr.txt" || echo "{\"scenario\":\"$s\",\"exit\":$?}" >>"$OUT/probe.jsonl"
        done
        cat "$OUT/probe.jsonl" ;;
    lm) read -ra m <<<"$MODES_LM"; rounds lm "$ROUNDS_LM" "$STEPS_LM" "$WARMUP_LM" "${m[@]}" ;;
    gpu) read -ra m <<<"$MODES_GPU"; [ ${#m[@]} -gt 0 ] && rounds gpubound "$ROUNDS_GPU" "$STEPS_GPU" "$WARMUP_GPU" "${m[@]}" ;;
    lmpar) read -ra k <<<"$PAR_KINDS"; pairs "$PAIRS_PAR" "${k[@]}" ;;
    persist)
        for v in $PERSIST_KINDS; do
            left || break
            local_more=(RANKSCOPE_KERNELS=window RANKSCOPE_WINDOW_MS="$PER_W" RANKSCOPE_WINDOW_PERIOD_MS="$PER_P")
            case $v in
            nolat) local_more+=(RANKSCOPE_LAUNCH_WAIT=0) ;;
            nosync) local_more+=(RANKSCOPE_SYNC=0) ;;
            lean) local_more+=(RANKSCOPE_LAUNCH_WAIT=0 RANKSCOPE_SYNC=0) ;;
            esac
            # the process starts just after a window ends, its timed steps begin 10 s before
            # the next window (which is its first) and go on past it
            read -r wait_s b <<<"$(python3 -c 'import math, sys, time
P, W = float(sys.argv[1]) / 1e3, float(sys.argv[2]) / 1e3
now = time.time(); b = math.ceil((now + P - W - 0.5) / P) * P
print(max(0.0, b - P + W + 0.5 - now), int(b))' "$PER_P" "$PER_W")"
            sleep "$wait_s"
            RUN_ARGS="--start-at $((b - 10))" run lm "persist-$v" 1 "$PER_STEPS" "$WARMUP_LM" "${local_more[@]}"
        done ;;
    inproc) run lm inproc 1 "$INPROC_STEPS" "$WARMUP_LM" RANKSCOPE_KERNELS=window \
                RANKSCOPE_WINDOW_MS="$INPROC_W" RANKSCOPE_WINDOW_PERIOD_MS="$INPROC_P" ;;
    pccap) [ "$SECONDS" -lt $((DEADLINE - 45)) ] || continue
           daemons_down
           kill "$SAMPLER" 2>/dev/null
           PAIRS=0 RANKSCOPE_PC_DEBUG=1 timeout $((DEADLINE + 60 - SECONDS)) bash tests/gpu/capture.sh \
               >"$OUT/pccap.txt" 2>&1
           grep -h "pc sampling\|PC sampling" "$OUT/capture-stderr.txt" | sort | uniq -c | sort -rn | head -12 >>"$OUT/pccap.txt"
           daemons_up ;;
    esac
done
kill "$SAMPLER" 2>/dev/null
daemons_down
python3 tests/gpu/noise_report.py "$OUT/noise.jsonl" "$OUT/sampler.jsonl" --window-ms "$INPROC_W" \
    --par-window-ms "$PAR_W" --par-period-ms "$PAR_P" --persist-window-ms "$PER_W" \
    --persist-period-ms "$PER_P" \
    --period-ms "$INPROC_P" | tee "$OUT/noise-summary.txt"
[ -s "$OUT/pccap.txt" ] && tail -20 "$OUT/pccap.txt"
true
