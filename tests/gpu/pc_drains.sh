#!/usr/bin/env bash
# PC-sampling drains over a run: runs the 2-rank DDP job with RANKSCOPE_PC_SAMPLING=1 and
# RANKSCOPE_PC_DEBUG=1 as configured and under each RANKSCOPE_* setting in VARIANTS
# ("A=1;B=2 C=3", e.g. "RANKSCOPE_PC_WINDOW_MS=500 RANKSCOPE_PC_PERIOD_MS=2000"), and prints per
# job: its exit status and median step time, how many of the collector's GetData calls returned
# PCs and how many each (in order, from the debug lines), the windows closed and how long the
# calls that opened (synchronize + cuptiPCSamplingStart) and closed them took (least – most), the stall samples the server stored, its stall records (one
# per kernel, pc offset, reason and send) and the records the collectors dropped. Needs
# gpu-bundle/.
# usage: [STEPS=600] [TRAIN_TIMEOUT=300] [VARIANTS="..."] tests/gpu/pc_drains.sh
. "$(dirname "$0")/common.sh"
STEPS=${STEPS:-600}
daemons_up
: >"$OUT/train-logs.txt"
IFS=';' read -ra variants <<<"${VARIANTS:-}"
settings=("" "${variants[@]}")
for k in "${!settings[@]}"; do
    (export RANKSCOPE_PC_DEBUG=1 ${settings[$k]}; train "pcd-$k" --collector --pc-sampling --steps "$STEPS")
    rc=$?
    log=$W/pcd-$k.log
    # one debug line per GetData call: "pc sampling: N PCs, M remaining"
    pcs=$(sed -n 's/.*pc sampling: \([0-9]*\) PCs.*/\1/p' "$log" | paste -sd ' ')
    nonzero=$(sed -n 's/.*pc sampling: \([0-9]*\) PCs.*/\1/p' "$log" | grep -vc '^0$')
    closed=$(grep -c 'window closed' "$log")
    span() { sed -n "s/.*$1 took \([0-9.]*\) ms.*/\1/p" "$log" | sort -g | sed -n '1p;$p' | paste -sd '-'; }
    start_ms=$(span cuptiPCSamplingStart)
    stop_ms=$(span cuptiPCSamplingStop)
    step=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["step_ms_median"])' \
        "$W/pcd-$k.result" 2>/dev/null)
    sleep 1
    samples=$(get "/v1/jobs/pcd-$k/stalls?limit=1" 2>/dev/null |
        python3 -c 'import json,sys; print(json.load(sys.stdin).get("samples"))' 2>/dev/null)
    # stall records stored (one per kernel, pc, reason and send) and records the collectors dropped
    records=$(get "/v1/jobs/pcd-$k/ranks" 2>/dev/null | python3 -c '
import json, sys
r = json.load(sys.stdin)
r = r.get("ranks", r) if isinstance(r, dict) else r
print(sum(x["stall_records"] for x in r), "stall records,", sum(x["dropped_records"] for x in r), "dropped")' 2>/dev/null)
    echo "setting '${settings[$k]:-as shipped}': exit $rc; step median ${step:-?} ms; windows closed $closed (opening ${start_ms:-–} ms, closing ${stop_ms:-–} ms); GetData calls with PCs $nonzero; PCs per call in order: $pcs; stall samples stored: $samples ($records)" |
        tee -a "$OUT/summary.txt"
done
daemons_down
