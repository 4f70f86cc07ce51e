#!/usr/bin/env bash
# Raw records per second through the whole agent -> server path with acknowledgements (issue 4):
# the simulator at full speed (no pacing) sends RANKS x STEPS steps; the clock stops when the
# server has committed every record. Prints each run and the median of RUNS runs.
# usage: tests/bench/storage_ingest.sh [RANKS] [STEPS] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/lib.sh
RANKS=${1:-64}
STEPS=${2:-200}
RUNS=${3:-3}
rates=()
for run in $(seq "$RUNS"); do
    WORK=$(mktemp -d)
    start server "$BIN/rankscope-server" --data "$WORK/data" --http 127.0.0.1:0 \
        --listen tcp://127.0.0.1:0 --ready-file "$WORK/server.ready"
    wait_file "$WORK/server.ready"
    HTTP=http://$(field "$WORK/server.ready" http)
    start agent "$BIN/rankscope-agent" --server "$(field "$WORK/server.ready" listen)" \
        --socket "$WORK/agent.sock" --ready-file "$WORK/agent.ready"
    wait_file "$WORK/agent.ready"
    t0=$(date +%s.%N)
    "$BIN/rankscope-sim" --job ingest --ranks "$RANKS" --steps "$STEPS" --speed 0 \
        --agent "$WORK/agent.sock" --log-level warn >"$WORK/sim.json"
    want=$(python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(sum(s["sent"].values()), s["dropped_records"])' "$WORK/sim.json")
    read -r records dropped <<<"$want"
    for _ in $(seq 600); do
        got=$(curl -sf "$HTTP/v1/jobs/ingest/ranks" 2>/dev/null | python3 -c '
import json, sys
r = json.load(sys.stdin)["ranks"]
print(sum(x["kernels"] + x["collectives"] + x["memcpys"] + x["steps"] for x in r))' 2>/dev/null || echo 0)
        [ "$got" -ge $((records - dropped)) ] && break
        sleep 0.05
    done
    t1=$(date +%s.%N)
    rate=$(python3 -c "print(round(($got) / ($t1 - $t0)))")
    echo "run $run: $got records committed in $(python3 -c "print(round($t1 - $t0, 2))") s = $rate records/s ($dropped dropped by collectors)"
    rates+=("$rate")
    stop_all
    rm -rf "$WORK"
done
python3 -c "import statistics,sys; r=[int(x) for x in sys.argv[1:]]; print(f'raw records through agent -> server: median {statistics.median(r):.0f}/s (min {min(r)}, max {max(r)}, {len(r)} runs)')" "${rates[@]}"
