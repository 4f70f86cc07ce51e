#!/usr/bin/env bash
# make demo: server + agent + a 16-rank simulated job with one GPU straggler on loopback; prints the
# jobs and the per-rank summary, then stops everything it started.
set -euo pipefail
cd "$(dirname "$0")/.."
. tests/lib.sh
WORK=$(mktemp -d /tmp/rankscope-demo.XXXXXX)
trap 'stop_all; rm -rf "$WORK"' EXIT
SECONDS=0

echo "== starting rankscope-server and rankscope-agent (data in $WORK)"
start server "$BIN/rankscope-server" --data "$WORK/data" --http 127.0.0.1:0 \
    --listen tcp://127.0.0.1:0 --ready-file "$WORK/server.ready"
wait_file "$WORK/server.ready"
HTTP=http://$(field "$WORK/server.ready" http)
# GPU telemetry without GPUs: the simulator describes its job's GPUs (rank 5's held by its power
# cap) for the stand-in NVML of the tests, which the agent loads instead of the driver's
"$BIN/rankscope-sim" --job demo --ranks 16 --slow-rank 5 --slowdown 0.10 \
    --nvml-script "$WORK/nvml.script"
export FAKE_NVML_SCRIPT=$WORK/nvml.script
start agent "$BIN/rankscope-agent" --server "$(field "$WORK/server.ready" listen)" \
    --socket "$WORK/agent.sock" --spool "$WORK/spool" --ready-file "$WORK/agent.ready" \
    --nvml-library "$PWD/${BUILD:-build}/tests/tools/libfake_nvml.so" --gpu-send-s 1
wait_file "$WORK/agent.ready"

echo "== simulating job 'demo': 16 ranks, 300 steps, rank 5 has a GPU 10% slower from step 100;"
echo "   collectives as the NCCL profiler plugin sends them (exact communicator hash and sequence)"
"$BIN/rankscope-sim" --job demo --ranks 16 --steps 300 --slow-rank 5 --slowdown 0.10 \
    --onset-step 100 --pc-sampling --nccl-plugin --agent "$WORK/agent.sock" --log-level warn \
    > "$WORK/sim.json"
echo "   sent: $(cat "$WORK/sim.json")"

want=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["sent"]["steps"])' "$WORK/sim.json")
for _ in $(seq 100); do   # wait until the agent's last batch is committed
    got=$("$BIN/rankscope" --server "$HTTP" ranks demo --json 2>/dev/null |
          python3 -c 'import json,sys; print(sum(r["steps"] for r in json.load(sys.stdin)["ranks"]))' 2>/dev/null || echo 0)
    [ "$got" = "$want" ] && break
    sleep 0.1
done

echo
echo "== rankscope jobs"
"$BIN/rankscope" --server "$HTTP" jobs
echo
echo "== rankscope ranks demo"
"$BIN/rankscope" --server "$HTTP" ranks demo
echo
echo "== rankscope skew demo"
"$BIN/rankscope" --server "$HTTP" skew demo
echo
echo "== rankscope top demo --limit 5"
"$BIN/rankscope" --server "$HTTP" top demo --limit 5
echo
echo "== rankscope stalls demo --limit 3   (synthetic PC samples from the simulator)"
"$BIN/rankscope" --server "$HTTP" stalls demo --limit 3
echo
echo "== what the server noticed on its own while the job ran (its log)"
grep -h "RS-STRAGGLER" "$WORK/server.log" || echo "   (nothing raised)"
echo
echo "== rankscope gpus demo   (NVML telemetry; here from the stand-in NVML the simulator scripted)"
sleep 1.5 # the readings of the job's last second
"$BIN/rankscope" --server "$HTTP" gpus demo
echo
echo "== rankscope stragglers demo"
"$BIN/rankscope" --server "$HTTP" stragglers demo
echo
echo "== rankscope hangs demo   (NCCL operations in flight past their limit)"
"$BIN/rankscope" --server "$HTTP" hangs demo
stop_all
echo; echo "demo finished in ${SECONDS} s"
