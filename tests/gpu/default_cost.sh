#!/usr/bin/env bash
# Issue 25's remaining GPU runs in one device call, sized by the GPUs there:
#   1. with 2 GPUs or more: tests/gpu/hang2.sh (hang verdicts on a real 2-rank job, the default
#      collector: CUPTI detached between windows);
#   2. rounds of the collector's defaults against no collector on the launch-bound LM, each
#      process on a GPU of its own and timing the same 60 s (one default window): 4 GPUs or more —
#      "none default none2 default2" (two pairs and an A/A pair a round), 2 or 3 — "none default",
#      1 — the two taking turns on the GPU (TURNS=1); rounds until DEADLINE seconds (450) from start.
# Everything lands in $OUT/default-cost.tar.gz (the device returns few files) with the reports'
# text on stdout; pool several calls' rounds with
#   python3 tests/gpu/default_report.py A/lm/detach.jsonl B/lm/detach.jsonl
# HANG2=true skips the hang run. Needs gpu-bundle/ (tests/gpu/bundle.sh). docs/BENCHMARKS.md "The
# default collector on 2 x H200".
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/gpu-results}
DEADLINE=${DEADLINE:-450}
R=$(mktemp -d /tmp/default-cost.XXXXXX)
n=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
echo "$n GPUs"
if [ "$n" -ge 2 ]; then
    OUT=$R/hang2 ${HANG2:-bash tests/gpu/hang2.sh} >"$R/hang2.log" 2>&1
    tail -3 "$R/hang2.log"
fi
left=$((DEADLINE - SECONDS - 90)) # the last round starts before this and takes ~80 s
if [ "$n" -ge 4 ]; then
    set -- KINDS="none default none2 default2" GPUS="0 1 2 3"
elif [ "$n" -ge 2 ]; then
    set -- KINDS="none default" GPUS="0 1"
else
    set -- KINDS="none default" GPUS="0" TURNS=1
fi
if [ "$left" -gt 0 ]; then
    env "$@" OUT="$R/lm" ALIGN=0 TIMED_S=60 LEAD=15 ROUNDS=100 DEADLINE="$left" \
        bash tests/gpu/detach.sh >"$R/lm.log" 2>&1
    tail -8 "$R/lm/default-summary.txt" 2>/dev/null || tail -20 "$R/lm.log"
fi
mkdir -p "$OUT"
tar czf "$OUT/default-cost.tar.gz" -C "$R" .
rm -rf "$R"
