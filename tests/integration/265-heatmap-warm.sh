#!/usr/bin/env bash
# The whole-job heatmap is read in the background after a start (server/heatmap_warm.h): a server
# restarted on a store whose job received data recently reads that job's heatmap into its cache
# before anyone asks (rankscope_heatmap_warmed_total), and its answer is the one a server that did
# not warm gives; --heatmap-warm-s=0 warms nothing, and a job older than --heatmap-warm-s is left
# alone; an import warms the job it went into; while the server runs, a live job is warmed every
# --heatmap-warm-every-s without anyone asking. What is measured (the first open's time after a
# restart, before and after) is in docs/BENCHMARKS.md "Dashboard", not here.
. "$(dirname "$0")/common.sh"
restart() { # [options]
    kill "$PID_server"
    wait "$PID_server" 2>/dev/null
    start_server "$@"
}
metric_is() { # NAME VALUE: /metrics says so within 10 s
    local i
    for i in $(seq 100); do
        [ "$(curl -s "$HTTP/metrics" | sed -n "s/^rankscope_$1 //p")" = "$2" ] && return 0
        sleep 0.1
    done
    echo "rankscope_$1 is $(curl -s "$HTTP/metrics" | sed -n "s/^rankscope_$1 //p"), wanted $2"
    return 1
}
metric_at_least() { # NAME VALUE: /metrics says at least that within 10 s
    local i v
    for i in $(seq 100); do
        v=$(curl -s "$HTTP/metrics" | sed -n "s/^rankscope_$1 //p")
        [ -n "$v" ] && [ "$v" -ge "$2" ] && return 0
        sleep 0.1
    done
    echo "rankscope_$1 is $v, wanted at least $2"
    return 1
}
heatmap() { curl -s "$HTTP/v1/jobs/warm/heatmap?metric=compute_ms&columns=200"; }
same_heatmap() { # FILE FILE: the same cells, columns and ranks
    python3 -c '
import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
for k in ("ranks", "columns", "values", "first_step", "last_step", "steps_per_column"):
    assert a[k] == b[k], k
assert a["exact_rank_steps"] + a["stored_rank_steps"] == 16 * 300, a["stored_rank_steps"]' "$@"
}

export RANKSCOPE_SERVER_HEATMAP_WARM_EVERY_S=0 # the counts below are of starts and imports only

start_server
start_agent
"$BIN/rankscope-sim" --job warm --ranks 16 --steps 300 --speed 0 --slow-rank 5 --slowdown 0.1 \
    --onset-step 100 --agent "$WORK/agent.sock" --log-level warn >"$WORK/warm.json"
wait_for_records warm "$WORK/warm.json"
sleep 3 # the evaluator stores the steps' summaries (what the heatmap's older steps come from)

restart --heatmap-warm-s 0
sleep 2
check "--heatmap-warm-s 0: nothing warmed after a start" metric_is heatmap_warmed_total 0
heatmap >"$WORK/cold.json"

restart
check "after a start, the job that received data recently is warmed in the background" \
    metric_is heatmap_warmed_total 1
check "... and nothing is left queued, nothing failed" bash -c '
    m=$(curl -s "$1/metrics")
    grep -qx "rankscope_heatmap_warm_queued 0" <<<"$m" && grep -qx "rankscope_heatmap_warm_failed_total 0" <<<"$m"' _ "$HTTP"
check "its log says so, with the job" grep -q "RS-HEATMAP-WARM.*job warm: whole-job heatmap cached" "$WORK/server.log"
heatmap >"$WORK/warm1.json"
check "the warmed answer is the one the server that did not warm gave" same_heatmap "$WORK/cold.json" "$WORK/warm1.json"
check "rank 5 is still the slow one from step 100 in it" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for i, c in enumerate(d["columns"]):
    if c["first_step"] >= 100:
        assert c["max_rank"] == 5, (i, c)' "$WORK/warm1.json"

sleep 2
restart --heatmap-warm-s 1
sleep 2
check "a job whose data is older than --heatmap-warm-s is not warmed" metric_is heatmap_warmed_total 0

"$BIN/rankscope" --server "$HTTP" import "$ROOT/tests/fixtures/kineto-h200x2/fixture_rank0slow_rank0.json.gz" \
    "$ROOT/tests/fixtures/kineto-h200x2/fixture_rank0slow_rank1.json.gz" --job imported >"$WORK/import.out" 2>&1
check "an import warms the job it went into (once per batch committed)" metric_at_least heatmap_warmed_total 1
check "... whose heatmap then answers" bash -c '
    curl -sf "$1/v1/jobs/imported/heatmap?metric=compute_ms&columns=200" | grep -q "\"ranks\":\[0,1\]"' _ "$HTTP"

restart --heatmap-warm-s 0 --heatmap-warm-every-s 1
kill "$PID_agent" # the restarted server listens on another port
wait "$PID_agent" 2>/dev/null
start_agent
"$BIN/rankscope-sim" --job live --ranks 8 --steps 200 --speed 0 --agent "$WORK/agent.sock" \
    --log-level warn >"$WORK/live.json"
wait_for_records live "$WORK/live.json"
check "a job that received data while the server ran is warmed within --heatmap-warm-every-s, unasked" \
    metric_at_least heatmap_warmed_total 1
check "... its log names the job" grep -q "RS-HEATMAP-WARM.*job live: whole-job heatmap cached" "$WORK/server.log"
finish
