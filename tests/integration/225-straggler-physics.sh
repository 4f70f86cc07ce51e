#!/usr/bin/env bash
# Straggler verdicts (issue 22) on traces this project's analysis did not design:
# tests/bench/ddp_tracegen.py builds DDP jobs from the physics (8 ranks, 64 steps; buckets during
# or back to back after backward; interference, noise, clock offsets) with a truth file, and
# `rankscope analyze` must name exactly the slow ranks: two slow ranks late together (one hides
# the other), a host stall without step markers (host_side), an intermittent rank (its own kind),
# and nothing — not even a suspect — for random spikes spread over the ranks.
. "$(dirname "$0")/common.sh"
GEN=$ROOT/tests/bench/ddp_tracegen.py

job() { # NAME GENERATOR-ARGS...
    local name=$1
    shift
    python3 "$GEN" -o "$WORK/$name" --ranks 8 --steps 64 --seed 3 -q "$@" &&
        "$BIN/rankscope" analyze --json --job "$name" "$WORK/$name"/ddp_rank*.json.gz \
            >"$WORK/$name.json" 2>"$WORK/$name.err"
}

# VERDICTS-FILE TRUTH-DIR KIND CAUSE: the named ranks are the truth's slow ranks, of that kind and
# cause (cause "-": any), and no suspect is a rank that is not slow
judged() {
    python3 - "$@" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["stragglers"]
truth = json.load(open(sys.argv[2] + "/truth.json"))
slow = {r for f in truth["faults"] if f.get("straggler_expected") for r in f["slow_ranks"]}
named = {v["rank"]: v for v in d["stragglers"]}
assert set(named) == slow, (sorted(named), sorted(slow), d["summary"], d["ranks"])
for v in named.values():
    assert v["kind"] == sys.argv[3], v
    assert sys.argv[4] == "-" or v["cause"] == sys.argv[4], v
assert {s["rank"] for s in d["suspects"]} <= slow, d["suspects"]
PY
}

job two --bucket-mode after --fault slow_gpu:ranks=2/6,factor=1.08,onset=8
check "two ranks 8% slow, buckets after backward: both named, gpu_slow" \
    judged "$WORK/two.json" "$WORK/two" straggler gpu_slow

job host --bucket-mode interleaved --no-step-markers --fault host_stall:ranks=5,stall_ms=5,onset=8
check "host stall of 5 ms without step markers (inferred steps): named, host_side" \
    judged "$WORK/host.json" "$WORK/host" straggler host_side
check "its steps are inferred" python3 -c '
import json, sys
assert json.load(open(sys.argv[1]))["stragglers"]["steps_source"] == "inferred"' "$WORK/host.json"

job inter --bucket-mode interleaved \
    --fault intermittent:ranks=4,factor=1.5,period=4,duty=0.25,onset=8
check "intermittent rank (slow 1 step in 4): a verdict of kind intermittent with its duty" \
    judged "$WORK/inter.json" "$WORK/inter" intermittent -
check "its duty is about 1/4" python3 -c '
import json, sys
v = json.load(open(sys.argv[1]))["stragglers"]["stragglers"][0]
assert 0.15 <= v["duty"] <= 0.35 and v["tail_slowdown"] > 1.2, v' "$WORK/inter.json"

job spikes --bucket-mode after --fault spikes:prob=0.03,factor=1.4
check "random spikes spread over the ranks: no verdict, no suspect" \
    judged "$WORK/spikes.json" "$WORK/spikes" straggler -

"$BIN/rankscope" analyze --job inter "$WORK/inter"/ddp_rank*.json.gz >"$WORK/inter.txt" 2>/dev/null
check "the CLI's table says intermittent" grep -q "intermittent: slow on" "$WORK/inter.txt"

finish
