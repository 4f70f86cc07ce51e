#!/usr/bin/env bash
# Bytes per rank-step in the store (issue 4's product metric): a simulated job through the real
# agent -> server path, then the store's used size divided by ranks x steps — first with every
# record raw, then at steady state for old data: the server restarted on the same store with
# rollups after 1 s (--raw-retention-s 1, default 60 s windows), once the rollup is done. Rollups
# stop at the newest summarized step, aligned down to a window: the last window or so of the
# job stays raw, a share that shrinks with the job's length.
# KERNEL_SPLIT cuts each of the template's 51 compute kernels into that many launches (20: 1,020
# kernels per step, the size of step the storage goal names); STEP_MS is the simulated step time
# (1000: 60 steps per 60 s window); SPEED paces the simulator (simulated seconds per second, 50
# by default): the server's evaluator then summarizes the steps as they settle, as in a real job
# (as fast as possible, it sees only the newest steps, and rollups keep the records of steps
# without a summary).
# AGENT_ARGS (environment) go to the agent: AGENT_ARGS=--summarize measures agent summaries
# (per-window totals instead of kernel records; the rollup coarsens their 5 s windows).
# usage: [AGENT_ARGS=...] tests/bench/storage_bytes.sh [RANKS] [STEPS] [KERNEL_SPLIT] [STEP_MS] [SPEED]
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/lib.sh
RANKS=${1:-16}
STEPS=${2:-1000}
KERNEL_SPLIT=${3:-1}
STEP_MS=${4:-34}
SPEED=${5:-50}
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
serve() {
    rm -f "$WORK/server.ready"
    start server "$BIN/rankscope-server" --data "$WORK/data" --http 127.0.0.1:0 \
        --listen tcp://127.0.0.1:0 --ready-file "$WORK/server.ready" "$@"
    wait_file "$WORK/server.ready"
}
# Waits until the counter stops changing between two readings $1 s apart (at most 60 readings).
until_stable() {
    local last=-1 n=0 i
    for i in $(seq 60); do
        sleep "$1"
        n=$(counter "$2")
        [ "$n" -gt 0 ] && [ "$n" = "$last" ] && break
        last=$n
    done
    echo "$n"
}
counter() {
    curl -s "http://$(field "$WORK/server.ready" http)/healthz" |
        python3 -c "import json,sys; print(json.load(sys.stdin)['counters']['$1'])"
}
report() { # label
    # data = the databases' pages (what new data cannot reuse: LMDB reuses freed pages, the file
    # does not shrink), and the file of a compacted copy
    "$BIN/rankscope-server" --check --data "$WORK/data" >"$WORK/check.out"
    rm -rf "$WORK/compact"
    "$BIN/rankscope-server" --data "$WORK/data" --compact-to "$WORK/compact" >/dev/null
    grep '^check: bytes per database' "$WORK/check.out"
    python3 - "$WORK/sim.json" "$WORK/check.out" "$(stat -c %s "$WORK/compact/data.mdb")" \
        "$RANKS" "$STEPS" "$1" <<'PY'
import json, re, sys
s = json.load(open(sys.argv[1]))
line = [l for l in open(sys.argv[2]) if l.startswith("check: bytes per database")][0]
data = sum(int(n) for n in re.findall(r" (\d+)", line))
compacted = int(sys.argv[3]); rank_steps = int(sys.argv[4]) * int(sys.argv[5])
records = sum(s["sent"].values())
print(f"storage bytes per rank-step ({sys.argv[6]}): {data / rank_steps:.0f} of data, "
      f"{compacted / rank_steps:.0f} compacted ({data} / {compacted} bytes for {rank_steps} "
      f"rank-steps; {records / rank_steps:.0f} records per rank-step, "
      f"{s['dropped_records']} dropped)")
PY
}
serve --raw-retention-s 0
start agent "$BIN/rankscope-agent" --server "$(field "$WORK/server.ready" listen)" \
    --socket "$WORK/agent.sock" --ready-file "$WORK/agent.ready" ${AGENT_ARGS:-}
wait_file "$WORK/agent.ready"
"$BIN/rankscope-sim" --job bytes --ranks "$RANKS" --steps "$STEPS" --speed "$SPEED" --kernel-split "$KERNEL_SPLIT" \
    --step-ms "$STEP_MS" \
    --agent "$WORK/agent.sock" --log-level warn >"$WORK/sim.json"
# the evaluator summarizes settled steps (rollups never pass the newest summarized one): wait
# until it has stored all it will
until_stable 5 step_summaries_stored >/dev/null
stop_all
report "as sent${AGENT_ARGS:+ (agent $AGENT_ARGS)}"
serve --raw-retention-s 1 --maintenance-s 1
if [[ "${AGENT_ARGS:-}" == *--summarize* ]]; then
    echo "coarsened $(until_stable 1.5 agent_windows_coarsened) agent windows"
else
    n=$(until_stable 1.5 records_rolled_up)
    records=$(python3 -c 'import json,sys; s = json.load(open(sys.argv[1]))["sent"]; print(s["kernels"] + s["memcpys"])' "$WORK/sim.json")
    echo "rolled up $n of $records kernel and memcpy records"
fi
stop_all
report "kernels and copies rolled up into 60 s windows"
