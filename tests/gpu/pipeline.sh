#!/usr/bin/env bash
# PC-sampling windows in pipeline-parallel jobs: a window opens at a kernel launch after a context
# synchronize, which waits for NCCL point-to-point kernels that need the peer's matching launch.
# Runs the 2-stage 1F1B job (pp_train.py) with its exchanges batched (batch_isend_irecv) and
# ordered (separate isend/irecv), each without the collector, with it as shipped, and with
# PC-sampling windows of $PC_WINDOW_MS every $PC_PERIOD_MS (100 / 200: a window at almost every
# chance), and prints per job its exit status (124: killed after $TRAIN_TIMEOUT s, a hang), median
# step time and windows closed. Needs gpu-bundle/.
# usage: [STEPS=300] [TRAIN_TIMEOUT=120] [PC_WINDOW_MS=100] [PC_PERIOD_MS=200] tests/gpu/pipeline.sh
. "$(dirname "$0")/common.sh"
STEPS=${STEPS:-300}
export TRAIN_TIMEOUT=${TRAIN_TIMEOUT:-120} TRAIN_SCRIPT=tests/gpu/pp_train.py
export PC_WINDOW_MS=${PC_WINDOW_MS:-100} PC_PERIOD_MS=${PC_PERIOD_MS:-200}
daemons_up
: >"$OUT/train-logs.txt"
for p2p in batched ordered; do
    for mode in none collector windows; do
        job=pp-$p2p-$mode
        case $mode in
        none) train "$job" --steps "$STEPS" --p2p "$p2p" ;;
        collector) train "$job" --collector --steps "$STEPS" --p2p "$p2p" ;;
        windows) (export RANKSCOPE_PC_DEBUG=1
                  train "$job" --collector --pc-sampling --steps "$STEPS" --p2p "$p2p") ;;
        esac
        rc=$?
        step=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["step_ms_median"])' \
            "$W/$job.result" 2>/dev/null)
        closed=$(grep -c 'window closed' "$W/$job.log")
        echo "$job: exit $rc; step median ${step:-?} ms; windows closed $closed" | tee -a "$OUT/summary.txt"
    done
done
daemons_down
