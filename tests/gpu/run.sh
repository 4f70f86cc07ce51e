#!/usr/bin/env bash
# GPU tests of the collector on a machine with 2 GPUs (nvidia-h200-x2). Needs gpu-bundle/
# (tests/gpu/bundle.sh, built on a Debian 12 machine). Writes $OUT/summary.txt and
# $OUT/results.tar.gz (few files: the device tool returns only so many) holding dumps.jsonl,
# train-logs.txt, daemon-logs.txt, env.txt, the server's answers checked (*.json), and exports of
# two jobs (gpu-pcsampling.pb.gz, gpu-straggler-time.pb.gz, gpu-straggler-trace/) to read back
# with other tools; prints the summary last.
. "$(dirname "$0")/common.sh"
R=$W/results
mkdir -p "$R"
{
    nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1
    python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version(), "gpus", torch.cuda.device_count())'
    echo "libcupti: $CUPTI_DIR"; grep -E '^(NAME|VERSION)=' /etc/os-release; ldd --version | head -1
} >"$R/env.txt" 2>&1
daemons_up
: >"$R/train-logs.txt"
export RANKSCOPE_DEBUG=1 # each process says at exit what it converted (launch waits: late ones...)
train gpu-baseline --collector --steps 60 --nvtx-steps
train gpu-straggler --collector --steps 60 --extra-work-rank 0 --nvtx-steps
train gpu-hoststall --collector --steps 60 --host-stall-rank 1 --nvtx-steps
train gpu-fork --collector --steps 40 --workers 2
train gpu-profiler --collector --steps 40 --profiler
train gpu-profiler-alone --steps 40 --profiler      # torch.profiler without us: the reference
train gpu-disabled-check --steps 5   # no collector: must leave no data
# steps marked with record_function under emit_nvtx(): "train_step, op_id = N" ranges
RANKSCOPE_STEP_RANGE=train_step train gpu-recfn --collector --steps 30 --record-function-steps
# PC sampling on a job whose rank 0 does extra GPU work
PC_WINDOW_MS=500 PC_PERIOD_MS=2000 train gpu-pcsampling --collector --pc-sampling --steps 400 --extra-work-rank 0 --nvtx-steps
sleep 2 # the last flushes (collector exit, agent 250 ms, commit)
get "/v1/jobs/gpu-pcsampling/stalls?limit=5" >"$R/pc-stalls.json" 2>>"$R/train-logs.txt"
get /v1/jobs/gpu-straggler/stragglers >"$R/straggler-verdict.json" 2>>"$R/train-logs.txt"
get /v1/jobs/gpu-baseline/stragglers >"$R/baseline-verdict.json" 2>>"$R/train-logs.txt"
get "/v1/jobs/gpu-baseline/top?limit=30" >"$R/baseline-top.json" 2>>"$R/train-logs.txt"
get /v1/jobs/gpu-hoststall/stragglers >"$R/hoststall-verdict.json" 2>>"$R/train-logs.txt"
get "/v1/jobs/gpu-hoststall/top?rank=1&limit=1" >"$R/hoststall-top1.json" 2>>"$R/train-logs.txt"
get "/v1/jobs/gpu-hoststall/top?rank=0&limit=1" >"$R/hoststall-top0.json" 2>>"$R/train-logs.txt"
# exports of real data, read back on the build machine (go tool pprof, HTA, rankscope analyze)
cli() { LD_LIBRARY_PATH=$B/lib "$B/bin/rankscope" --server "$HTTP" "$@"; }
cli export gpu-pcsampling --format pprof --out "$R/gpu-pcsampling.pb.gz" >>"$R/train-logs.txt" 2>&1
cli export gpu-straggler --format pprof --out "$R/gpu-straggler-time.pb.gz" >>"$R/train-logs.txt" 2>&1
cli export gpu-straggler --format perfetto --out "$R/gpu-straggler-trace" >>"$R/train-logs.txt" 2>&1
: >"$R/dumps.jsonl"
for job in gpu-baseline gpu-straggler gpu-hoststall gpu-fork gpu-profiler gpu-profiler-alone gpu-disabled-check \
           gpu-pcsampling gpu-recfn; do
    printf '{"job":"%s","result":%s,"store":%s}\n' "$job" "$(cat "$W/$job.result" 2>/dev/null || echo null)" \
        "$(LD_LIBRARY_PATH=$B/lib "$B/bin/rs-store-dump" "$W/data" "$job" 2>/dev/null || echo null)" \
        >>"$R/dumps.jsonl"
done
daemons_down
cat "$W/server.log" "$W/agent.log" >"$R/daemon-logs.txt"
python3 tests/gpu/check.py "$R/dumps.jsonl" "$R/pc-stalls.json" "$R/straggler-verdict.json" \
    "$R/baseline-verdict.json" "$R/baseline-top.json" "$R/hoststall-verdict.json" \
    "$R/hoststall-top1.json" "$R/hoststall-top0.json" >"$OUT/summary.txt"
rc=$?
# each collector's counts at exit (RANKSCOPE_DEBUG): launch waits, late records, forced settles
for f in "$W"/*.log; do
    grep -h 'rankscope\[[0-9]*\]: \(launch waits\|converted\)' "$f" | sed "s|^|$(basename "$f" .log): |"
done >"$R/collector-counts.txt"
grep 'launch waits' "$R/collector-counts.txt" | sed 's/^/info  /' >>"$OUT/summary.txt"
tar czf "$OUT/results.tar.gz" -C "$R" .
cat "$OUT/summary.txt"
exit $rc
