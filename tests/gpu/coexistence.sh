#!/usr/bin/env bash
# torch.profiler and the collector in one process (issue 3's coexistence goal: torch.profiler keeps
# >= 90% of its GPU events). Runs the 2-rank DDP job under torch.profiler RUNS times per variant —
# without the collector (the reference), with it as configured, and with each RANKSCOPE_* setting
# given in VARIANTS (e.g. "RANKSCOPE_BUFFER_KB=64 RANKSCOPE_FLUSH_MS=50") — and prints per run the
# GPU events torch.profiler kept and the "unknown buffer" errors Kineto logged (a CUPTI buffer of
# ours handed to its callback: Kineto drops it, with the records in it), and how many ranks' collectors
# logged the hand-over (activity.h: they stop before Kineto takes CUPTI). Needs gpu-bundle/.
# usage: [RUNS=3] [VARIANTS="A=1 B=2;C=3"] tests/gpu/coexistence.sh
. "$(dirname "$0")/common.sh"
RUNS=${RUNS:-3}
daemons_up
: >"$OUT/train-logs.txt"
report() { # JOB LABEL
    local events unknown handed
    events=$(python3 -c 'import json,sys; print((json.loads(open(sys.argv[1]).read() or "{}").get("profiler_gpu_events")))' "$W/$1.result" 2>/dev/null)
    unknown=$(grep -c "unknown buffer" "$W/$1.log")
    handed=$(grep -c "handed CUPTI over" "$W/$1.log")
    echo "$2 run $3: torch.profiler GPU events $events, Kineto 'unknown buffer' errors $unknown, collector hand-overs $handed" | tee -a "$OUT/summary.txt"
    grep -m3 -e "unknown buffer" -e "rankscope" "$W/$1.log" >>"$OUT/train-logs.txt"
}
for i in $(seq "$RUNS"); do
    train "coexist-alone-$i" --steps 40 --profiler
    report "coexist-alone-$i" "without the collector" "$i"
    train "coexist-default-$i" --collector --steps 40 --profiler
    report "coexist-default-$i" "collector, defaults" "$i"
    IFS=';' read -ra variants <<<"${VARIANTS:-}"
    for k in "${!variants[@]}"; do
        (export ${variants[$k]}; train "coexist-v$k-$i" --collector --steps 40 --profiler)
        report "coexist-v$k-$i" "collector, ${variants[$k]}" "$i"
    done
done
daemons_down
