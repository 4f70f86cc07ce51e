#!/usr/bin/env bash
# Two ranks (issue 22): a GPU that became 3% slower at step 10 among 2 ranks, on traces this
# project's analysis did not design (tests/bench/ddp_tracegen.py: interference, per-GPU speed
# spread, noise). Seed 2 with interleaved buckets is the hard case: its slowed rank measures only
# 1.05% slower than its peer (the peer's GPU is faster, and its compute stretches under the longer
# NCCL kernels), less than two healthy GPUs can differ — named by its rise at the onset; the same
# job without the fault, and jobs whose healthy pair differs the most of 30 seeds (seed 16, buckets
# after backward: 1.6%), get no verdict and no suspect.
. "$(dirname "$0")/common.sh"
GEN=$ROOT/tests/bench/ddp_tracegen.py

job() { # NAME SEED LAYOUT [GENERATOR-ARGS...]
    local name=$1 seed=$2 layout=$3
    shift 3
    python3 "$GEN" -o "$WORK/$name" --ranks 2 --steps 80 --seed "$seed" --bucket-mode "$layout" \
        -q "$@" &&
        "$BIN/rankscope" analyze --json --job "$name" "$WORK/$name"/ddp_rank*.json.gz \
            >"$WORK/$name.json" 2>"$WORK/$name.err"
}

# VERDICTS-FILE NAMED-RANKS ("" for none): exactly those ranks named, and no suspect
judged() {
    python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["stragglers"]
named = sorted(v["rank"] for v in d["stragglers"])
want = [int(x) for x in sys.argv[2].split()]
assert named == want, (named, want, d["summary"], d["ranks"])
assert not d["suspects"] or want, d["suspects"]
for v in d["stragglers"]:
    assert v["cause"] == "gpu_slow" and v["kind"] == "straggler", v
PY
}

job slow 2 interleaved --fault slow_gpu:ranks=1,factor=1.03,onset=10
check "3% slower GPU from step 10, measured ~1% against its peer: rank 1 named, gpu_slow" \
    judged "$WORK/slow.json" "1"
check "its verdict starts at the onset (ProfilerStep 15 = step 10) within a few steps" python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))["stragglers"]["stragglers"][0]
assert abs(v["since_step"] - 15) <= 3 and v["slowdown"] < 1.018, v' "$WORK/slow.json"
job clean 2 interleaved
check "the same pair without the fault: nothing" judged "$WORK/clean.json" ""
job spread 16 after
check "the healthy pair 1.6% apart (buckets after backward): nothing" \
    judged "$WORK/spread.json" ""
finish
