#!/usr/bin/env bash
# Hang verdicts and exact matching end to end, with the real server, agent and CLI: a simulated
# job whose collectors send as the NCCL profiler plugin does (--nccl-plugin: NCCL's exact
# sequence numbers), then hangs at step 20 — rank 2 never arrives at its AllReduce, the others
# report it in flight (the collector's in-flight condition) for 6 s — and then completes. While it
# hangs: the REST verdict (communicator, op, seq, since, waiting ranks, rank 2 never arrived with
# host and GPU), `rankscope hangs`, /metrics, the server's log; after: cleared everywhere.
. "$(dirname "$0")/common.sh"
start_server --hang-check-ms 200
start_agent
"$BIN/rankscope-sim" --job hung --ranks 4 --steps 40 --onset-step 20 --hang-rank 2 --hang-s 6 \
    --nccl-plugin --speed 0 --agent "$WORK/agent.sock" --log-level warn >"$WORK/hung.json" &
SIM=$!
for _ in $(seq 100); do
    curl -sf "$HTTP/v1/jobs/hung/hangs" >"$WORK/during.json" 2>/dev/null &&
        grep -q '"seq"' "$WORK/during.json" && break
    sleep 0.1
done
for _ in $(seq 40); do # the watch's tick (200 ms) after the verdict appeared
    grep -q RS-HANG-RAISED "$WORK/server.log" && break
    sleep 0.1
done
"$BIN/rankscope" --server "$HTTP" hangs hung >"$WORK/cli.txt" 2>&1
curl -sf "$HTTP/metrics" >"$WORK/metrics-during.txt"
cp "$WORK/server.log" "$WORK/server-during.txt"
wait "$SIM"
echo "sim exit $?" >"$WORK/sim.exit"
for _ in $(seq 50); do
    curl -sf "$HTTP/v1/jobs/hung/hangs" >"$WORK/after.json" && grep -q '"hangs": \[\]\|"hangs":\[\]' "$WORK/after.json" && break
    sleep 0.1
done
sleep 0.5
check "the simulator ran to the hang and through it" grep -q "sim exit 0" "$WORK/sim.exit"
check "REST: one hang verdict with the communicator, AllReduce and its seq, 3 waiting, rank 2 never arrived" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
(h,) = d["hangs"]
assert d["job"] == "hung" and d["malformed_statuses"] == 0, d
assert h["op"] == "AllReduce" and h["comm"].startswith("0x") and len(h["comm"]) == 18, h
assert h["seq"] == 20 * 4, h  # four AllReduce buckets per simulated step
assert [w["rank"] for w in h["waiting"]] == [0, 1, 3] and all(w["gpu_started"] for w in h["waiting"]), h
(a,) = h["never_arrived"]
assert a["rank"] == 2 and a["host"] == "sim-node-000" and a["gpu_uuid"].startswith("GPU-5a11"), a
assert h["comm_size"] == 4 and h["never_arrived_unknown"] == 0 and h["since_ns"] > 0, h' "$WORK/during.json"
check "CLI: rankscope hangs names the op, the waiting ranks and the one that never arrived" bash -c '
grep -q "HANG  AllReduce seq 80 on communicator 0x" "$1" && grep -q "never arrived:" "$1" &&
grep -q "rank     2  host sim-node-000" "$1"' _ "$WORK/cli.txt"
check "/metrics: hangs_active 1, one raised" bash -c '
grep -q "^rankscope_hangs_active 1$" "$1" && grep -q "^rankscope_hangs_raised_total 1$" "$1"' _ "$WORK/metrics-during.txt"
check "server log: RS-HANG-RAISED once, with waiting ranks and rank 2 never arrived" bash -c '
[ "$(grep -c RS-HANG-RAISED "$1")" = 1 ] &&
grep RS-HANG-RAISED "$1" | grep -q "AllReduce seq 80 .*waiting: 0 (sim-node-000 GPU-.*never arrived: 2 (sim-node-000"' _ "$WORK/server-during.txt"
check "cleared when it completed: REST empty, RS-HANG-CLEARED logged, hangs_active 0" bash -c '
grep -q "\"hangs\": *\[\]" "$1" && grep -q RS-HANG-CLEARED "$2" &&
curl -sf "$3/metrics" | grep -q "^rankscope_hangs_active 0$"' _ "$WORK/after.json" "$WORK/server.log" "$HTTP"
check "exact matching: every stored AllReduce instance complete on all 4 ranks, seq_exact" python3 -c '
import json, subprocess, sys
out = subprocess.run([sys.argv[1], sys.argv[2], "hung", "collectives"], capture_output=True, text=True).stdout
recs = [json.loads(l) for l in out.splitlines()]
assert recs and all(r["seq_exact"] for r in recs), len(recs)
from collections import Counter
c = Counter((r["comm"], r["op"], r["seq"]) for r in recs)
assert len(c) == 20 * 4 and set(c.values()) == {4}, (len(c), set(c.values()))' "$TOOLS/rs-store-dump" "$WORK/data"
check "unknown job: 404" bash -c '[ "$(curl -s -o /dev/null -w "%{http_code}" "$1/v1/jobs/nope/hangs")" = 404 ]' _ "$HTTP"
finish
