#!/usr/bin/env bash
# Whole-job top from running totals (issue 23, the soak's 504s: top scanned every window of the
# job). The writer keeps each job's totals in the transaction of its batches and rollups
# (docs/storage.md job_top); a whole-job top reads them. From the outside, on the real binaries:
# - a summarizing agent's job, ingested while the server is killed with SIGKILL twice and
#   restarted (the agent resends what was not acknowledged), with rollups every second: the
#   whole-job answer (totals) equals the same answer built from the records (the scan that an
#   explicit until_ns asks for), for several limits, and the counters say which path answered;
# - the store passes --check after the kills.
# - per-job answer cache (answers_generation, rs_writer_job_generation): while job "live"
#   ingests, the kept answers of the idle job "tot" stay hits and say the same; live's are
#   scanned again.
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

# Per-job answer cache: job "tot" is idle; while job "live" ingests (and the evaluator stores its
# step summaries), tot's kept answers stay valid — hits, no new scan — and live's own answer is
# scanned again after its commits. tot must be quiet first: default maintenance's first pass
# commits at the start, for every job, and after the restart the evaluator stores tot's last step
# summaries once they settle, seconds in (an evaluation every 2 s; this failed 4 of 5 runs on a
# quiet machine with a fixed 2.5-s wait) — so wait until tot's answer stays a hit across two
# evaluations.
# (a kept answer's age limit, 10 s from its scan, is not what this part checks, and the part takes
# about 9 s from the kept answer's scan: a minute)
start_server_at "$LISTEN" --answer-cache-max-age-ms 60000
lookups() { # "hit miss" from /metrics
    curl -s "$HTTP/metrics" | python3 -c '
import re, sys
t = sys.stdin.read()
print(*[int(float(re.search(r"answer_cache_lookups_total\{outcome=\"%s\"\} (\S+)" % o, t).group(1))) for o in ("hit", "miss")])'
}
quiet=no
for _ in $(seq 8); do
    curl -sf "$HTTP/v1/jobs/tot/top?limit=10" >/dev/null
    read -r _ m0 < <(lookups)
    sleep 4.5
    curl -sf "$HTTP/v1/jobs/tot/top?limit=10" >/dev/null
    read -r _ m1 < <(lookups)
    [ "$m1" = "$m0" ] && quiet=yes && break
done
check "job tot is quiet (its answer kept across two evaluations) before live starts" [ $quiet = yes ]
curl -sf "$HTTP/v1/jobs/tot/top?limit=10" >"$WORK/b0.json"
curl -sf "$HTTP/v1/jobs/tot/skew" >/dev/null
read -r hit0 miss0 < <(lookups)
batches0=$(counter batches_committed)
"$BIN/rankscope-sim" --job live --ranks 8 --steps 250 --step-ms 20 --seed 4 \
    --agent "$WORK/agent.sock" --log-level warn >"$WORK/live.sim.json" &
SIM=$!
asked=0
for _ in $(seq 8); do
    sleep 0.5
    curl -sf "$HTTP/v1/jobs/tot/top?limit=10" >"$WORK/b.json" && asked=$((asked + 1))
    curl -sf "$HTTP/v1/jobs/tot/skew" >/dev/null && asked=$((asked + 1))
    cmp -s "$WORK/b0.json" "$WORK/b.json" || echo "tot's top changed" >>"$WORK/b.changed"
done
read -r hit1 miss1 < <(lookups)
batches1=$(counter batches_committed)
check "job live ingested meanwhile ($batches0 -> $batches1 batches)" [ "$batches1" -gt "$batches0" ]
check "job tot's $asked answers while live ingested: all from the cache (hits $hit0 -> $hit1, scans $miss0 -> $miss1)" \
    [ "$asked" = 16 -a $((hit1 - hit0)) = 16 -a "$miss1" = "$miss0" ]
check "... and the same answer" [ ! -e "$WORK/b.changed" ]
wait "$SIM"
curl -sf "$HTTP/v1/jobs/live/top?limit=10" >/dev/null
read -r hit2 miss2 < <(lookups)
check "job live's own answer is a scan (its data changed)" [ "$miss2" = $((miss1 + 1)) ]
finish
