#!/usr/bin/env bash
# CUPTI detached between kernel windows (issue 25; node-agent/collector/attach.h), on the
# launch-bound LM (tests/gpu/workloads/lm.py, one GPU). Each round starts three processes together
# on separate CPUs (their sets rotated every round), all timing the same $TIMED_S seconds
# (--start-at, --timed-s), so that the host's fast noise is common to them:
#   none      no collector
#   detach    the collector with windows of $W_MS every $P_MS (flush every $FLUSH_MS): CUPTI
#             detached between windows (the default since attach.h)
#   attached  the same with RANKSCOPE_DETACH=0: CUPTI attached between windows (the old default)
#   none2     no collector either: the A/A pair (detach_report.py places it by detach's timeline)
#   attachednl  the same without launch waits (RANKSCOPE_LAUNCH_WAIT=0: no latency timestamps)
# A process still running $HANG_S (40) seconds after its timed seconds ended is taken as hung: where
# its threads wait goes to $OUT/hang-KIND-ROUND.txt (kernel stacks; gdb's backtraces where there is
# gdb), then it is killed.
# Neither collector process has NVTX_INJECTION64_PATH (with it CUPTI stays attached for markers).
# Every step is timed (wall) and so is the CPU time of the launching thread while it launches
# (task-clock; instructions too where the machine counts them: perfcount.py). RANKSCOPE_DEBUG's
# timeline (when windows opened and closed, CUPTI detached and attached again) places each step;
# tests/gpu/detach_report.py compares them: between windows across processes, and inside the
# detach process the seconds CUPTI was attached after a window against those it was detached.
# DEFAULT_S=S adds one process with the collector's defaults timing S seconds (below).
# Leaves $OUT/detach.jsonl (one line per run), $OUT/detach-stderr.txt, $OUT/machine.txt,
# $OUT/detach-jobs.json (the server's job list: the records arrived). Needs gpu-bundle/.
. "$(dirname "$0")/common.sh"
ROUNDS=${ROUNDS:-5} TIMED_S=${TIMED_S:-40} LEAD=${LEAD:-16} DEADLINE=${DEADLINE:-480}
W_MS=${W_MS:-2000} P_MS=${P_MS:-8000} FLUSH_MS=${FLUSH_MS:-1000} WARMUP=${WARMUP:-40}
KINDS=${KINDS:-none detach attached}
SETS=(${CPU_SETS:-2-5 6-9 10-13})
taskset -cp 0-1 $$ >/dev/null
ASLR=()
command -v setarch >/dev/null && ASLR=(setarch "$(uname -m)" -R)
{
    date -u; uname -r; nproc
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv
    python3 -c 'import sys; sys.path.insert(0, "tests/gpu/workloads"); import perfcount
print("counters refused:", perfcount.Counters().why)'
} >"$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"
daemons_up
: >"$OUT/detach.jsonl"
: >"$OUT/detach-stderr.txt"
# stacks PID: each thread's name, kernel wait channel and stack, and gdb's backtraces if there is gdb
stacks() {
    local t
    for t in /proc/"$1"/task/*; do
        echo "== $(basename "$t") $(cat "$t/comm") wchan=$(cat "$t/wchan" 2>/dev/null)"
        cat "$t/stack" 2>/dev/null | head -12
    done
    command -v gdb >/dev/null && timeout 90 gdb -p "$1" -batch -ex "thread apply all bt 25" 2>&1 | grep -v '^\[New LWP'
}
# one KIND ROUND CPUS START: a process of lm.py; its JSON line and its stderr's collector lines
one() {
    local kind=$1 round=$2 cpus=$3 start=$4 err=$W/$1.err line=$W/$1.line r
    local -a env=(LD_LIBRARY_PATH="$CUPTI_DIR:${LD_LIBRARY_PATH:-}" PYTHONUNBUFFERED=1
                  OMP_NUM_THREADS=1 PYTHONHASHSEED=0)
    local -a coll=(CUDA_INJECTION64_PATH="$B/lib/librankscope.so" RANKSCOPE_DEBUG=1
                   RANKSCOPE_AGENT_SOCKET="$W/agent.sock" RANKSCOPE_JOB_ID="dt-$kind-$round"
                   RANKSCOPE_KERNELS=window RANKSCOPE_WINDOW_MS="$W_MS"
                   RANKSCOPE_WINDOW_PERIOD_MS="$P_MS" RANKSCOPE_FLUSH_MS="$FLUSH_MS")
    case $kind in
    none | none2) ;;
    detach | default) env+=("${coll[@]}") ;;
    attached) env+=("${coll[@]}" RANKSCOPE_DETACH=0) ;;
    attachednl) env+=("${coll[@]}" RANKSCOPE_DETACH=0 RANKSCOPE_LAUNCH_WAIT=0) ;;
    esac
    env -u NVTX_INJECTION64_PATH "${env[@]}" taskset -c "$cpus" "${ASLR[@]}" python3 \
        tests/gpu/workloads/lm.py --steps 100000 --warmup "$WARMUP" --start-at "$start" \
        --timed-s "$TIMED_S" --count-cpu >"$W/$kind.out" 2>"$err" &
    local p=$! limit=$((start + TIMED_S + ${HANG_S:-40}))
    while kill -0 "$p" 2>/dev/null; do
        if [ "$(date +%s)" -gt "$limit" ]; then # hung: where each thread waits, then gone
            stacks "$p" >"$OUT/hang-$kind-$round.txt" 2>&1
            kill -9 "$p"
            break
        fi
        sleep 1
    done
    wait "$p" 2>/dev/null
    r=$(grep '^{' "$W/$kind.out" | tail -1)
    { echo "== $kind $round cpus $cpus"; grep -v '^\s*$' "$err" | tail -12; } >>"$OUT/detach-stderr.txt"
    python3 - "$kind" "$round" "$cpus" "$err" "${r:-null}" >"$line" <<'EOF'
import json, sys
kind, rnd, cpus, err, result = sys.argv[1:6]
lines = [l.rstrip("\n") for l in open(err, errors="replace") if l.startswith("rankscope[")]
events = []
for l in lines:
    if "CUPTI timeline:" in l:
        t = l.split("CUPTI timeline:", 1)[1].split()
        events += [[t[i], float(t[i + 1])] for i in range(0, len(t) - 1, 2)]
print(json.dumps({"kind": kind, "round": int(rnd), "cpus": cpus, "events": events,
                  "collector": [l for l in lines if "timeline" not in l],
                  "result": json.loads(result)}))
EOF
}
read -ra kinds <<<"$KINDS"
for round in $(seq "$ROUNDS"); do
    [ "$SECONDS" -lt "$DEADLINE" ] || break
    start=$(($(date +%s) + LEAD))
    start=$((start + (P_MS / 1000 - start % (P_MS / 1000)) % (P_MS / 1000))) # timed from a window's start
    pids=()
    for k in "${!kinds[@]}"; do
        cpus=${SETS[$(((k + round) % ${#SETS[@]}))]}
        one "${kinds[$k]}" "$round" "$cpus" "$start" &
        pids+=($!)
    done
    wait "${pids[@]}"
    for k in "${kinds[@]}"; do cat "$W/$k.line" >>"$OUT/detach.jsonl"; done
    echo "round $round done at ${SECONDS}s" >&2
done
# DEFAULT_S=S: then one process with the collector's defaults (windows of 1 s every 60 s, flush
# every 250 ms) timing S seconds, a window among them: kind "default" in detach.jsonl
if [ "${DEFAULT_S:-0}" != 0 ]; then
    start=$(($(date +%s) + LEAD))
    W_MS=1000 P_MS=60000 FLUSH_MS=250 TIMED_S=$DEFAULT_S one default 1 "${SETS[0]}" "$start"
    cat "$W/default.line" >>"$OUT/detach.jsonl"
fi
get /v1/jobs >"$OUT/detach-jobs.json" 2>&1
daemons_down
python3 tests/gpu/detach_report.py "$OUT/detach.jsonl" --window-ms "$W_MS" --period-ms "$P_MS" |
    tee "$OUT/detach-summary.txt"
