#!/usr/bin/env bash
# Saves the straggler answers of a build, normalized, to compare two builds for unchanged behaviour:
#   BUILD=build-old bash tests/tools/verdict-snapshot.sh OUT_OLD
#   BUILD=build bash tests/tools/verdict-snapshot.sh OUT_NEW; diff -r OUT_OLD OUT_NEW
# What it saves: `rankscope analyze --json` on the kineto fixtures; GET /v1/jobs/J/stragglers (also
# ?until_step=, ?window=) and /v1/jobs/J/stalls for simulated jobs with fixed seeds (--speed 0); and
# the server's RS-STRAGGLER-* log lines of its streaming evaluations (a server restarted on the
# loaded store, so that its first evaluation sees every step). Times of the run are normalized:
# data times (*_ns) become offsets from the simulator's start; server-clock times (detected_ns,
# cleared_ns, events_ns; analyze: received_ns, import seconds) become "T" (null stays null); log lines
# lose their timestamp.
set -u
OUT=$(realpath -m "${1:?usage: verdict-snapshot.sh OUT_DIR}")
. "$(dirname "$0")/../integration/common.sh"
mkdir -p "$OUT"
normalize() { # [JOB]: stdin JSON -> stdout, times of the run normalized (key order kept)
    python3 -c '
import json, sys
start = json.load(open(sys.argv[1]))["start_ns"] if len(sys.argv) > 1 else 1 << 64
SERVER = {"detected_ns", "cleared_ns", "events_ns", "received_ns", "seconds"}  # clocks of the run
def walk(x):
    if isinstance(x, dict):
        return {k: ("T" if k in SERVER and v is not None else
                    v - start if k.endswith("_ns") and isinstance(v, int) and v >= start else walk(v))
                for k, v in x.items()}
    if isinstance(x, list):
        return [walk(v) for v in x]
    return x
print(json.dumps(walk(json.load(sys.stdin)), indent=1))' ${1:+"$WORK/$1.sim"}
}
FIX=tests/fixtures/kineto-h200x2
for f in baseline rank0slow; do
    "$BIN/rankscope" analyze --json "$FIX"/fixture_${f}_rank*.json.gz >"$WORK/analyze.json" 2>/dev/null
    echo "exit $?" >"$OUT/analyze-$f.exit"
    normalize <"$WORK/analyze.json" >"$OUT/analyze-$f.json"
done

start_server --evaluate-ms 0
start_agent
sim() { "$BIN/rankscope-sim" --speed 0 --agent "$WORK/agent.sock" --log-level warn "$@"; }
sim --job gpu --ranks 8 --steps 150 --seed 11 --slow-rank 3 --slowdown 0.1 --onset-step 40 >"$WORK/gpu.sim"
sim --job host --ranks 8 --steps 150 --seed 12 --host-stall 6 --stall-ms 5 --onset-step 40 >"$WORK/host.sim"
sim --job recover --ranks 8 --steps 200 --seed 13 --slow-rank 2 --slowdown 0.15 --onset-step 30 \
    --recover-step 120 >"$WORK/recover.sim"
sim --job clean --ranks 8 --steps 150 --seed 7 >"$WORK/clean.sim"
sim --job short --ranks 2 --steps 20 --seed 3 --slow-rank 1 --slowdown 0.2 >"$WORK/short.sim"
sim --job tiny --ranks 2 --steps 6 --seed 4 >"$WORK/tiny.sim"
sim --job pcs --ranks 4 --steps 100 --seed 5 --pc-sampling --slow-rank 3 --slowdown 0.1 >"$WORK/pcs.sim"
JOBS="gpu host recover clean short tiny pcs"
for j in $JOBS; do wait_for_records "$j" "$WORK/$j.sim"; done
# a server on the same store that evaluates every 300 ms: its first evaluation sees every step
stop "$PID_server"
start_server --evaluate-ms 300
sleep 2

for j in $JOBS; do
    for q in "" "until_step=35" "until_step=99" "until_step=160" "window=20" "until_step=99&window=20"; do
        curl -s "$HTTP/v1/jobs/$j/stragglers?$q" | normalize "$j" >"$OUT/stragglers-$j-${q:-newest}.json"
    done
done
curl -s "$HTTP/v1/jobs/pcs/stalls" | normalize pcs >"$OUT/stalls-pcs.json"
stop_all
grep -o 'RS-STRAGGLER-.*' "$WORK/server.log" >"$OUT/server-log.txt"
echo "verdict-snapshot: $(ls "$OUT" | wc -l) files in $OUT"
