#!/usr/bin/env bash
# On the GPU machine (CPU only), from the folder tests/gpu/sweep_pack.sh filled: checks that the
# binaries run, then runs tests/bench/detect_latency.py (streaming, on 3 cores) beside the
# straggler accuracy sweep of tests/bench/trace_sweep.py (one setting per process, xargs -P over
# the other cores, biggest first: a run cut short keeps every job it finished in the .jsonl).
# Results in $OUT. usage: bash dev-acc/sweep_run.sh [SECONDS for the sweep, default 420]
# JOBS=FILE runs the settings listed there (one trace_sweep.py argument line each) instead of the
# grid below; DETECT=0 leaves the streaming run out.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
limit=${1:-420}
out=${OUT:-/tmp/sweep-out}
mkdir -p "$out"
export LD_LIBRARY_PATH="$here/lib" PYTHONUNBUFFERED=1
cd "$here"
nproc; python3 --version
command -v taskset >/dev/null || taskset() { shift 2; "$@"; }
# 3 cores for the streaming run, the others for the sweep (on a small machine: all for both)
if [ "$(nproc)" -ge 8 ]; then
    cores_d=0-2 cores_s=3-$(( $(nproc) - 1 )) par=$(( $(nproc) - 3 ))
else
    cores_d=0-$(( $(nproc) - 1 )) cores_s=$cores_d par=$(nproc)
fi
# the binary works here: a 2-rank job judged
python3 tests/bench/ddp_tracegen.py -o /tmp/smoke --ranks 2 --steps 64 --seed 1 -q \
    --fault slow_gpu:ranks=1,factor=1.1,onset=8 &&
    bin/rankscope analyze --json --job smoke /tmp/smoke/ddp_rank*.json.gz 2>/dev/null |
    python3 -c "import json,sys; d=json.load(sys.stdin); print('smoke verdicts', [v['rank'] for v in d['stragglers']['stragglers']])" ||
    { ldd bin/rankscope; exit 1; }

[ "${DETECT:-1}" = 0 ] && { echo "detect: not run (DETECT=0)" >"$out/detect.txt"; DETECT_RANKS=; }
[ -n "${DETECT_RANKS-x}" ] && (cd tests/bench && timeout "$limit" taskset -c $cores_d python3 detect_latency.py --ranks ${DETECT_RANKS:-8,32,128} \
    --seeds 3 --step-ms 34 --build "$here" >"$out/detect.txt" 2>&1) &
detect=$!
[ -n "${JOBS:-}" ] && cp "$JOBS" /tmp/sweep-jobs.given

jobs=/tmp/sweep-jobs.txt
: >"$jobs"
all=none,gpu3,gpu5,gpu10,ramp10,two-slow,5pct-slow,extra,host5,intermittent,spikes
job() { # ranks steps seed fault layout markers [variant]
    echo "--ranks $1 --steps $2 --first-seed $3 --seeds 1 --faults $4 --layouts $5 --markers $6 --variants ${7:-default}" >>"$jobs"
}
for s in 1 2; do for f in none 5pct-slow; do job 1024 64 $s $f after yes; done; done
for s in 1 2; do
    for r in 128 32; do for f in ${all//,/ }; do for l in after interleaved; do for m in yes no; do
        job $r $([ $r = 128 ] && echo 64 || echo 80) $s $f $l $m
    done; done; done; done
done
for s in 1 2 3; do for r in 8 2; do
    for f in ${all//,/ } gpu2 slowlink; do for l in after interleaved; do for m in yes no; do
        job $r 80 $s $f $l $m
    done; done; done
    for f in none gpu2 gpu3 gpu5 two-slow spikes slowlink; do for l in after interleaved; do
        for v in noisy short; do job $r 80 $s $f $l yes $v; done
    done; done
done; done
[ -n "${JOBS:-}" ] && cp /tmp/sweep-jobs.given "$jobs"
[ -n "${SWEEP_TAIL:-}" ] && tail -n "$SWEEP_TAIL" "$jobs" >"$jobs.n" && mv "$jobs.n" "$jobs"
wc -l <"$jobs"
t0=$(date +%s)
timeout "$limit" taskset -c $cores_s xargs -P $par -L 1 sh -c \
    'python3 tests/bench/trace_sweep.py --build "'"$here"'" --work /tmp/sweep-work --jsonl "'"$out"'/sweep.jsonl" "$@" >/dev/null 2>>"'"$out"'/sweep-errors.txt"' _ <"$jobs"
echo "sweep: $(wc -l <"$out/sweep.jsonl") of $(wc -l <"$jobs") jobs in $(( $(date +%s) - t0 )) s"
wait $detect
python3 tests/bench/trace_sweep.py --report "$out/sweep.jsonl" >"$out/sweep-table.md"
tail -3 "$out/detect.txt"
