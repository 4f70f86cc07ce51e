#!/usr/bin/env bash
# Whole-job top from running totals (issue 23, the soak's 504s: top scanned every window of the
# job). The writer keeps each job's totals in the transaction of its batches and rollups
# (docs/storage.md job_top); a whole-job top reads them. From the outside, on the real binaries:
# - a summarizing agent's job, ingested while the server is killed with SIGKILL twice and
#   restarted (the agent resends what was not acknowledged), with rollups every second: the
#   whole-job answer (totals) equals the same answer built from the records (the scan that an
#   explicit until_ns asks for), for several limits, and the counters say which path answered;
# - the store passes --check after the kills.
# - per-job answer cache: while job A ingests, job B's kept answer stays a hit.
. "$(dirname "$0")/common.sh"
ROLLUP="--maintenance-s 1 --raw-retention-s 1 --rollup-window-s 2"
start_server $ROLLUP
start_agent --summarize --summary-window-s 1
# 400 steps of 20 ms at the job's pace: about 8 s of ingest
"$BIN/rankscope-sim" --job tot --ranks 8 --steps 400 --step-ms 20 --seed 3 \
    --agent "$WORK/agent.sock" --log-level warn >"$WORK/tot.sim.json" &
SIM=$!
# kill the server twice while the job streams in, and start it again on the same address
for k in 1 2; do
    sleep 2.5
    kill -9 "$PID_server"
    wait "$PID_server" 2>/dev/null
    start_server_at "$LISTEN" $ROLLUP
done
wait "$SIM"
check "the job was sent whole" python3 -c "
import json; s = json.load(open('$WORK/tot.sim.json')); assert s['dropped_records'] == 0, s"
for _ in $(seq 150); do
    totals_match tot "$WORK/tot.sim.json" >/dev/null 2>&1 && break
    sleep 0.2
done
check "every record stored once despite the kills" totals_match tot "$WORK/tot.sim.json"
sleep 2 # a rollup pass over the last windows
counter() { curl -s "$HTTP/healthz" | python3 -c "import json,sys; print(json.load(sys.stdin)['counters']['$1'])"; }
before=$(counter top_from_totals)
for limit in 3 10 1000; do
    curl -sf "$HTTP/v1/jobs/tot/top?limit=$limit" >"$WORK/totals.$limit.json"
    curl -sf "$HTTP/v1/jobs/tot/top?limit=$limit&until_ns=9000000000000000000" >"$WORK/scan.$limit.json"
    check "top limit=$limit: the totals' answer is the records' answer" python3 -c "
import json, sys
a, b = json.load(open('$WORK/totals.$limit.json')), json.load(open('$WORK/scan.$limit.json'))
assert len(a['kernels']) >= min($limit, 10), a
assert a == b, (a, b)"
done
check "the whole-job answers came from the totals (3), the ranged ones from records" \
    [ $(($(counter top_from_totals) - before)) = 3 ]
check "rollups ran during the test (the totals followed them)" \
    python3 -c "import sys; assert int(sys.argv[1]) > 0" "$(counter agent_windows_coarsened)"
stop "$PID_server"
check "the store is consistent after two SIGKILLs" "$BIN/rankscope-server" --check --data "$WORK/data"
finish
