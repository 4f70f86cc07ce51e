# Helpers for tests/gpu/ and tests/bench/ scripts on a GPU machine: server + agent from
# gpu-bundle/ (tests/gpu/bundle.sh), NVLink multicast off, torchrun with the collector injected.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
OUT=${OUT:-$ROOT/gpu-results}
mkdir -p "$OUT"
B=$ROOT/gpu-bundle
W=$(mktemp -d /tmp/rankscope-gpu.XXXXXX)
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
PIDS=()
CUPTI_DIR=$(dirname "$(find /usr/local/cuda* / -name 'libcupti.so.13*' -print -quit 2>/dev/null)")

daemons_up() {
    LD_LIBRARY_PATH=$B/lib "$B/bin/rankscope-server" --data "$W/data" --http 127.0.0.1:0 \
        --listen tcp://127.0.0.1:0 --ready-file "$W/server.ready" >"$W/server.log" 2>&1 &
    PIDS+=($!)
    for _ in $(seq 100); do [ -s "$W/server.ready" ] && break; sleep 0.1; done
    HTTP=http://$(sed -n 's/^http=//p' "$W/server.ready")
    LD_LIBRARY_PATH=$B/lib "$B/bin/rankscope-agent" \
        --server "$(sed -n 's/^listen=//p' "$W/server.ready")" --socket "$W/agent.sock" \
        --spool "$W/spool" --ready-file "$W/agent.ready" ${AGENT_OPTS:-} >"$W/agent.log" 2>&1 &
    PIDS+=($!)
    for _ in $(seq 100); do [ -s "$W/agent.ready" ] && break; sleep 0.1; done
}

daemons_down() {
    local p
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
    for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null; done
    PIDS=()
}

# AGENT_OPTS: more options for the agent of daemons_up (split on spaces).
# train JOB [--collector [--pc-sampling]] ARGS...: a 2-rank DDP job ($NPROC ranks when set) ($TRAIN_SCRIPT when set,
# e.g. tests/gpu/pp_train.py); its rank-0 JSON line goes to $W/JOB.result. The collector sends to $AGENT_SOCK when set (default: the agent of daemons_up).
# --pc-sampling turns PC sampling on (drained every $PC_DRAIN_MS, 1000; windows of $PC_WINDOW_MS
# every $PC_PERIOD_MS when set, else the collector's defaults). A job still running after
# $TRAIN_TIMEOUT seconds (300) is killed. Kernels are traced all the time (RANKSCOPE_KERNELS=always,
# the checks count them) unless RANKSCOPE_KERNELS says otherwise.
# get PATH: the server's answer (daemons_up) to GET PATH, on stdout.
get() { python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1]).read().decode())' "$HTTP$1"; }

train() {
    local job=$1 rc
    local -a vars=(RANKSCOPE_JOB_ID="$job" RANKSCOPE_AGENT_SOCKET="${AGENT_SOCK:-$W/agent.sock}"
                   LD_LIBRARY_PATH="$CUPTI_DIR:${LD_LIBRARY_PATH:-}" PYTHONUNBUFFERED=1
                   RANKSCOPE_KERNELS="${RANKSCOPE_KERNELS:-always}")
    shift
    if [ "${1:-}" = --collector ]; then
        vars+=(CUDA_INJECTION64_PATH="$B/lib/librankscope.so"
               NVTX_INJECTION64_PATH="$B/lib/librankscope.so")
        shift
        if [ "${1:-}" = --pc-sampling ]; then
            vars+=(RANKSCOPE_PC_SAMPLING=1 RANKSCOPE_PC_DRAIN_MS="${PC_DRAIN_MS:-1000}")
            [ -n "${PC_WINDOW_MS:-}" ] && vars+=(RANKSCOPE_PC_WINDOW_MS="$PC_WINDOW_MS")
            [ -n "${PC_PERIOD_MS:-}" ] && vars+=(RANKSCOPE_PC_PERIOD_MS="$PC_PERIOD_MS")
            shift
        fi
    fi
    env "${vars[@]}" timeout "${TRAIN_TIMEOUT:-300}" torchrun --standalone --nproc_per_node="${NPROC:-2}" \
        "${TRAIN_SCRIPT:-tests/gpu/ddp_train.py}" "$@" >"$W/$job.log" 2>&1
    rc=$?
    grep '^{' "$W/$job.log" | tail -1 >"$W/$job.result"
    echo "== $job (exit $rc)" >>"$OUT/train-logs.txt"
    grep -vE '^\s*$' "$W/$job.log" | tail -25 >>"$OUT/train-logs.txt"
    return $rc
}
