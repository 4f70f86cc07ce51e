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
# Kinds default and default2: the collector with its defaults (nothing set but the agent's socket,
# the job and RANKSCOPE_DEBUG). GPUS="0 1 2 3": each process on a GPU of its own (kind k of round r
# on GPUS[k XOR c mod n], n a power of two, c counting the cycles of kind sets below: kinds 2i and 2i+1 share a NUMA node's pair of GPUs when
# GPUs 2i and 2i+1 do, and every kind visits every GPU), on 4 CPUs of that GPU's own (its PCI
# device's local_cpulist; CPU_SETS is not used) — no GPU time-sliced between the processes.
# KINDS="none default/none none2": sets of kinds separated by "/", used in turn, round by round.
# TURNS=1: the processes of a round take turns on the same CPUs (the first kind's set), in slices
# of SLICE_MS (250) ms passed round through named pipes (lm.py --turns), the first turn going to
# each kind in turn round by round: the cores' own noise (another tenant, the hypervisor) is then
# common to the kinds compared, which separate CPUs (or GPUs) do not give.
# ALIGN=0: the timed seconds start LEAD s after launch, not at a period's start.
# WORKLOAD=gpubound: tests/gpu/workloads/gpubound.py instead of lm.py.
# tests/gpu/default_report.py detach.jsonl compares the default kinds with the none kinds.
# Leaves $OUT/detach.jsonl (one line per run), $OUT/detach-stderr.txt, $OUT/machine.txt,
# $OUT/detach-jobs.json (the server's job list: the records arrived). Needs gpu-bundle/.
. "$(dirname "$0")/common.sh"
ROUNDS=${ROUNDS:-5} TIMED_S=${TIMED_S:-40} LEAD=${LEAD:-16} DEADLINE=${DEADLINE:-480}
W_MS=${W_MS:-2000} P_MS=${P_MS:-8000} FLUSH_MS=${FLUSH_MS:-1000} WARMUP=${WARMUP:-40}
KINDS=${KINDS:-none detach attached}
SETS=(${CPU_SETS:-2-5 6-9 10-13})
WORKLOAD=${WORKLOAD:-lm} ALIGN=${ALIGN:-1}
read -ra GPU_LIST <<<"${GPUS:-}"
declare -A GPU_CPUS=() GPU_OF=() TURN_OF=()
if [ ${#GPU_LIST[@]} -gt 0 ]; then
    n=${#GPU_LIST[@]}
    if [ $((n & (n - 1))) != 0 ]; then
        echo "GPUS: give a power of two of them (the kinds' GPUs are k XOR c)" >&2
        exit 2
    fi
    IFS=/ read -ra sets <<<"$KINDS"
    for set in "${sets[@]}"; do
        read -ra ks <<<"$set"
        if [ ${#ks[@]} -gt "$n" ] && [ "${TURNS:-0}" != 1 ]; then
            echo "KINDS: \"$set\" has more kinds than GPUS has GPUs (they would share one; TURNS=1 takes turns)" >&2
            exit 2
        fi
    done
    export CUDA_DEVICE_ORDER=PCI_BUS_ID # CUDA's numbers are then nvidia-smi's
fi
for g in "${GPU_LIST[@]}"; do # 4 CPUs near GPU g, none shared with another GPU's set (skip 0-1)
    bus=$(nvidia-smi -i "$g" --query-gpu=pci.bus_id --format=csv,noheader | tr 'A-F' 'a-f')
    GPU_CPUS[$g]=$(python3 - "/sys/bus/pci/devices/${bus#0000}/local_cpulist" "${GPU_CPUS[*]:-}" <<'PY'
import os, sys
def expand(text):
    out = []
    for part in text.replace(",", " ").split():
        a, _, b = part.partition("-")
        out += range(int(a), int(b or a) + 1)
    return out
try:
    local = expand(open(sys.argv[1]).read())
except OSError:
    local = list(range(2, 64))
taken = set(expand(sys.argv[2]))
free = [c for c in local if c > 1 and c not in taken]
if len(free) < 4:  # no list, or too few CPUs near the GPU: any others
    free += [c for c in range(2, os.cpu_count()) if c not in taken and c not in free]
print(",".join(map(str, free[:4])))
PY
)
done
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
    [ -n "${GPU_OF[$kind]:-}" ] && env+=(CUDA_VISIBLE_DEVICES="${GPU_OF[$kind]}")
    case $kind in
    none | none2) ;;
    default | default2)
        env+=(CUDA_INJECTION64_PATH="$B/lib/librankscope.so" RANKSCOPE_DEBUG=1
              RANKSCOPE_AGENT_SOCKET="$W/agent.sock" RANKSCOPE_JOB_ID="dt-$kind-$round") ;;
    detach) env+=("${coll[@]}") ;;
    attached) env+=("${coll[@]}" RANKSCOPE_DETACH=0) ;;
    attachednl) env+=("${coll[@]}" RANKSCOPE_DETACH=0 RANKSCOPE_LAUNCH_WAIT=0) ;;
    esac
    env -u NVTX_INJECTION64_PATH "${env[@]}" taskset -c "$cpus" "${ASLR[@]}" python3 \
        "tests/gpu/workloads/$WORKLOAD.py" --steps 100000 --warmup "$WARMUP" --start-at "$start" \
        --timed-s "$TIMED_S" --count-cpu ${TURN_OF[$kind]:-} >"$W/$kind.out" 2>"$err" &
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
    grep '^{' "$W/$kind.out" | tail -1 >"$W/$kind.result" # (a long run's line outgrows an argument)
    { echo "== $kind $round cpus $cpus gpu ${GPU_OF[$kind]:-}"; grep -v '^\s*$' "$err" | tail -12; } >>"$OUT/detach-stderr.txt"
    python3 - "$kind" "$round" "$cpus" "$err" "$W/$kind.result" "${GPU_OF[$kind]:-}" >"$line" <<'EOF'
import json, sys
kind, rnd, cpus, err, result_file, gpu = sys.argv[1:7]
result = open(result_file).read().strip() or "null"
lines = [l.rstrip("\n") for l in open(err, errors="replace") if l.startswith("rankscope[")]
events = []
for l in lines:
    if "CUPTI timeline:" in l:
        t = l.split("CUPTI timeline:", 1)[1].split()
        events += [[t[i], float(t[i + 1])] for i in range(0, len(t) - 1, 2)]
print(json.dumps({"kind": kind, "round": int(rnd), "cpus": cpus, "gpu": gpu, "events": events,
                  "collector": [l for l in lines if "timeline" not in l],
                  "result": json.loads(result)}))
EOF
}
IFS=/ read -ra kind_sets <<<"$KINDS"
for round in $(seq "$ROUNDS"); do
    [ "$SECONDS" -lt "$DEADLINE" ] || break
    read -ra kinds <<<"${kind_sets[$(((round - 1) % ${#kind_sets[@]}))]}"
    flip=$(((round - 1) / ${#kind_sets[@]})) # the GPUs change hands once every set has run
    start=$(($(date +%s) + LEAD))
    [ "$ALIGN" = 1 ] && # timed from a window's start
        start=$((start + (P_MS / 1000 - start % (P_MS / 1000)) % (P_MS / 1000)))
    pids=()
    GPU_OF=() TURN_OF=()
    for k in "${!kinds[@]}"; do
        cpus=${SETS[$(((k + round) % ${#SETS[@]}))]}
        if [ ${#GPU_LIST[@]} -gt 0 ]; then
            GPU_OF[${kinds[$k]}]=${GPU_LIST[$(((k ^ flip) % ${#GPU_LIST[@]}))]}
            cpus=${GPU_CPUS[${GPU_OF[${kinds[$k]}]}]}
        fi
        if [ "${TURNS:-0}" = 1 ]; then # one CPU set, pipes in a ring
            [ "$k" = 0 ] && turn_cpus=$cpus
            cpus=$turn_cpus
            n=${#kinds[@]}
            rm -f "$W/turn.$k" && mkfifo "$W/turn.$k"
            TURN_OF[${kinds[$k]}]="--turns $W/turn.$k,$W/turn.$(((k + 1) % n)) --slice-ms ${SLICE_MS:-250}"
            [ "$k" = $(((round - 1) % n)) ] && TURN_OF[${kinds[$k]}]+=" --turn-first"
        fi
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
case " ${KINDS//\// } " in
*" default "*) python3 tests/gpu/default_report.py "$OUT/detach.jsonl" | tee "$OUT/default-summary.txt" ;;
esac
