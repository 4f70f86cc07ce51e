#!/usr/bin/env bash
# The NCCL skew's wait attribution (issue 22) on a trace this project's analysis did not design:
# tests/bench/ddp_tracegen.py, 8 ranks, DDP buckets launched back to back after the backward pass,
# rank 3's GPU 5% slower. Only the first collective of each step's group shows who was late, so
# rank 3 is last at about a third of the collectives — yet it caused nearly all of the waiting:
# `skew` must say so per rank (caused_ms, wait_share), the others near nothing.
. "$(dirname "$0")/common.sh"

python3 "$ROOT/tests/bench/ddp_tracegen.py" -o "$WORK/btb" --ranks 8 --steps 64 --seed 1 \
    --bucket-mode after -q --fault slow_gpu:ranks=3,factor=1.05,onset=0
"$BIN/rankscope" analyze --json --job btb "$WORK/btb"/ddp_rank*.json.gz >"$WORK/btb.json" \
    2>"$WORK/btb.err"
check "rank 3 last at under half the collectives, yet caused >= 90% of the waiting" python3 -c '
import json, sys
ranks = {r["rank"]: r for r in json.load(open(sys.argv[1]))["skew"]["ranks"]}
assert ranks[3]["last_frac"] < 0.5 and ranks[3]["wait_share"] >= 0.9, ranks[3]
assert all(r["wait_share"] < 0.02 for k, r in ranks.items() if k != 3), ranks
assert abs(sum(r["wait_share"] for r in ranks.values()) - 1) < 1e-6, ranks' "$WORK/btb.json"
finish
