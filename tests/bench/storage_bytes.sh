#!/usr/bin/env bash
# Bytes per rank-step in the store (issue 4's product metric): a simulated job through the real
# agent -> server path, then the store's used size divided by ranks x steps.
# usage: tests/bench/storage_bytes.sh [RANKS] [STEPS]
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/lib.sh
RANKS=${1:-16}
STEPS=${2:-300}
WORK=$(mktemp -d)
trap 'stop_all; rm -rf "$WORK"' EXIT
start server "$BIN/rankscope-server" --data "$WORK/data" --http 127.0.0.1:0 \
    --listen tcp://127.0.0.1:0 --ready-file "$WORK/server.ready"
wait_file "$WORK/server.ready"
start agent "$BIN/rankscope-agent" --server "$(field "$WORK/server.ready" listen)" \
    --socket "$WORK/agent.sock" --ready-file "$WORK/agent.ready"
wait_file "$WORK/agent.ready"
"$BIN/rankscope-sim" --job bytes --ranks "$RANKS" --steps "$STEPS" --speed 0 \
    --agent "$WORK/agent.sock" --log-level warn >"$WORK/sim.json"
sleep 1
stop_all
"$BIN/rankscope-server" --check --data "$WORK/data" >"$WORK/check.out"
used=$(sed -n 's/^check: \([0-9]*\) bytes in use/\1/p' "$WORK/check.out")
grep '^check: bytes per database' "$WORK/check.out"
python3 - "$WORK/sim.json" "$used" "$RANKS" "$STEPS" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); used = int(sys.argv[2]); ranks, steps = int(sys.argv[3]), int(sys.argv[4])
records = sum(s["sent"].values())
print(f"storage bytes per rank-step: {used / (ranks * steps):.0f} "
      f"({used} bytes for {ranks} ranks x {steps} steps; {records / (ranks * steps):.0f} records per "
      f"rank-step, {s['dropped_records']} dropped)")
PY
