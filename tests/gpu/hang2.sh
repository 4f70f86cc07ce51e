#!/usr/bin/env bash
# Hang verdicts on a real 2-rank NCCL job (two GPUs; issue 25's hang detection, which one GPU cannot
# show: docs/collector.md "Hangs"): tests/gpu/hang2.py under torchrun with the collector
# (CUDA_INJECTION64_PATH) and its NCCL profiler plugin (NCCL_PROFILER_PLUGIN), the default kernel
# windows with CUPTI detached between them (no NVTX_INJECTION64_PATH, which would keep it
# attached; NVTX=1 sets it as the first run of 2026-11-28 did), RANKSCOPE_HANG_MS=$HANG_MS, next
# to a server and an agent from gpu-bundle/. Rank 1 holds
# one AllReduce for $HANG_S s twice: its GPU busy (torch.cuda._sleep queued before it) and its host
# asleep before the call. Rank 0 polls the server's hangs and /metrics every 0.25 s.
# Then: the job's stored collectives (rs-store-dump: seq_exact, GPU times on both ranks, instances
# matched by (comm, op, seq)), `rankscope hangs JOB`, the server's RS-HANG-* log lines, and
# tests/gpu/hang2_report.py's checks: `hang2: N passed, N failed`.
# Leaves $OUT/hang2-summary.txt, $OUT/hang2.json (rank 0's line), $OUT/hang2-results.tar.gz.
. "$(dirname "$0")/common.sh"
HANG_S=${HANG_S:-8} HANG_MS=${HANG_MS:-2000}
R=$W/hang2
mkdir -p "$R"
daemons_up
job=hang2
export NCCL_PROFILER_PLUGIN=$B/lib/librankscope.so RANKSCOPE_HANG_MS=$HANG_MS RANKSCOPE_DEBUG=1
collector=()
if [ "${NVTX:-0}" = 1 ]; then
    collector=(--collector) # train() sets CUDA_INJECTION64_PATH and NVTX_INJECTION64_PATH
else
    export CUDA_INJECTION64_PATH=$B/lib/librankscope.so
    unset NVTX_INJECTION64_PATH
fi
RANKSCOPE_KERNELS=window TRAIN_SCRIPT=tests/gpu/hang2.py NPROC=2 TRAIN_TIMEOUT=180 \
    train "$job" "${collector[@]}" "$HTTP" "$job" "$HANG_S"
echo "torchrun exit $?" >"$R/exit.txt"
cp "$W/$job.result" "$OUT/hang2.json"
cp "$W/$job.log" "$R/job.log"
sleep 2
LD_LIBRARY_PATH=$B/lib "$B/bin/rs-store-dump" "$W/data" "$job" collectives >"$R/collectives.jsonl" 2>&1
LD_LIBRARY_PATH=$B/lib "$B/bin/rankscope" --server "$HTTP" hangs "$job" >"$R/cli-hangs.txt" 2>&1
get "/v1/jobs/$job/hangs" >"$R/hangs-final.json" 2>&1
get /metrics | grep '^rankscope_hangs' >"$R/metrics.txt" 2>&1
daemons_down
cp "$W/server.log" "$W/agent.log" "$R/"
python3 tests/gpu/hang2_report.py "$OUT/hang2.json" "$R" --hang-s "$HANG_S" --hang-ms "$HANG_MS" |
    tee "$OUT/hang2-summary.txt"
tar czf "$OUT/hang2-results.tar.gz" -C "$W" hang2
rm -rf "$W"
