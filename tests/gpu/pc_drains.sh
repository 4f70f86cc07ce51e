#!/usr/bin/env bash
# PC-sampling drains over a run (issue 3: "drains after the first mostly empty"): runs the 2-rank
# DDP job with RANKSCOPE_PC_SAMPLING=1 and RANKSCOPE_PC_DEBUG=1 as configured and under each
# RANKSCOPE_* setting in VARIANTS ("A=1;B=2 C=3"), and prints per job how many of the collector's
# GetData calls returned PCs, in order (from the debug lines), and the stall samples the server
# stored. Needs gpu-bundle/.
# usage: [STEPS=600] [VARIANTS="RANKSCOPE_PC_HW_BUFFER_MB=16"] tests/gpu/pc_drains.sh
. "$(dirname "$0")/common.sh"
STEPS=${STEPS:-600}
daemons_up
: >"$OUT/train-logs.txt"
IFS=';' read -ra variants <<<"${VARIANTS:-}"
settings=("" "${variants[@]}")
for k in "${!settings[@]}"; do
    (export RANKSCOPE_PC_DEBUG=1 ${settings[$k]}; train "pcd-$k" --collector --pc-sampling --steps "$STEPS")
    # one debug line per GetData call: "pc sampling: N PCs, M remaining"
    pcs=$(sed -n 's/.*pc sampling: \([0-9]*\) PCs.*/\1/p' "$W/pcd-$k.log" | paste -sd ' ')
    nonzero=$(sed -n 's/.*pc sampling: \([0-9]*\) PCs.*/\1/p' "$W/pcd-$k.log" | grep -vc '^0$')
    sleep 1
    samples=$(get "/v1/jobs/pcd-$k/stalls?limit=1" 2>/dev/null |
        python3 -c 'import json,sys; print(json.load(sys.stdin).get("samples"))' 2>/dev/null)
    echo "setting '${settings[$k]:-as shipped}': GetData calls with PCs $nonzero; PCs per call in order: $pcs; stall samples stored: $samples" |
        tee -a "$OUT/summary.txt"
done
daemons_down
