#!/usr/bin/env bash
# Captures kept across a server restart (issue 25, docs/collector.md "Captures"), with the real
# server, agent and the simulator as the collectors: one capture done, one running (20 s) and one
# still requested (its agent down) when the server dies by kill -9. After the restart GET
# .../captures lists all three with their ranks, kinds, times, who asked and why and the records
# received; the done one as it was, the two in flight expired with a reason; --check accepts the
# store and counts them; a capture asked for after the restart gets a new, larger id and runs;
# deleting the job deletes its captures, in memory and in the store (after another restart too).
. "$(dirname "$0")/common.sh"

start_server --capture-timeout-s 30
start_agent
"$BIN/rankscope-sim" --job keep --ranks 4 --duration-s 40 --step-ms 50 --kernels-in-captures \
    --agent "$WORK/agent.sock" --log-level warn >"$WORK/keep.json" 2>/dev/null &
SIM=$!
post() { # post JOB BODY: the status code; the answer in $WORK/answer
    curl -s -o "$WORK/answer" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
        --data-binary "$2" "$HTTP/v1/jobs/$1/capture"
}
first_id() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["captures"][0]["id"])' "$WORK/answer"; }
state_of() { # JOB ID: the capture's state
    curl -sf "$HTTP/v1/jobs/$1/captures" | python3 -c '
import json, sys
print([c["state"] for c in json.load(sys.stdin)["captures"] if c["id"] == int(sys.argv[1])][0])' "$2" 2>/dev/null
}
wait_state() { # JOB ID STATE SECONDS
    for _ in $(seq $(($4 * 10))); do [ "$(state_of "$1" "$2")" = "$3" ] && return 0; sleep 0.1; done
    return 1
}
for _ in $(seq 100); do curl -sf "$HTTP/v1/jobs/keep/ranks" | grep -q '"rank": *3' && break; sleep 0.1; done

post keep '{"ranks":[1],"kinds":["kernels"],"seconds":2}' >/dev/null
DONE=$(first_id)
check "a capture of rank 1 ran and ended done" wait_state keep "$DONE" done 15
post keep '{"ranks":[2],"kinds":["kernels","pc_sampling"],"seconds":20}' >/dev/null
RUN=$(first_id)
check "a capture of rank 2 for 20 s is running" wait_state keep "$RUN" running 10
stop "$PID_agent"
code=$(post keep '{"ranks":[3],"kinds":["kernels"],"seconds":5}')
REQ=$(first_id)
check "with the agent down, a capture of rank 3 is accepted and waits" sh -c "[ $code = 202 ]"
stored_check "captures on demand: 3 kept" # the table's changes reach the store every 0.5 s
curl -sf "$HTTP/v1/jobs/keep/captures" >"$WORK/before.json"
kill -9 "$PID_server"
wait "$PID_server" 2>/dev/null
check "the store after kill -9 passes --check, which counts the 3 captures" bash -c '
"$1" --check --data "$2" >"$3" && grep -q "captures on demand: 3 kept" "$3"' _ "$BIN/rankscope-server" "$WORK/data" "$WORK/check1.txt"
start_server --capture-timeout-s 30
curl -sf "$HTTP/v1/jobs/keep/captures" >"$WORK/after.json"
check "after the restart: the three captures, as they were, the two in flight expired with a reason" python3 -c '
import json, sys
before = {c["id"]: c for c in json.load(open(sys.argv[1]))["captures"]}
after = {c["id"]: c for c in json.load(open(sys.argv[2]))["captures"]}
done, run, req = (int(x) for x in sys.argv[3:6])
assert set(after) == {done, run, req} == set(before), (sorted(after), sorted(before))
for i in after:  # who asked, why, what and when: kept
    for k in ("job", "rank", "kinds", "seconds", "requested_ns", "delivered_ns", "started_ns", "who", "reason"):
        assert after[i][k] == before[i][k], (i, k, before[i][k], after[i][k])
assert after[done] == before[done] and after[done]["state"] == "done" and after[done]["records"]["kernels"] > 0, after[done]
r = after[run]
assert before[run]["state"] == "running" and r["state"] == "expired" and "server restarted while it ran" in r["message"], r
assert r["records"]["batches"] >= before[run]["records"]["batches"] > 0 and r["ended_ns"] > r["started_ns"], r
q = after[req]
assert before[req]["state"] == "requested" and q["state"] == "expired" and "before its collector reported it started" in q["message"], q
assert q["started_ns"] is None and q["ended_ns"] > q["requested_ns"], q' \
    "$WORK/before.json" "$WORK/after.json" "$DONE" "$RUN" "$REQ"
check "RS-CAPTURE-LOAD says how many were read back" grep -q "RS-CAPTURE-LOAD 3 captures read back" "$WORK/server.log"
start_agent
for _ in $(seq 100); do # the ranks are heard from again
    code=$(post keep '{"ranks":[0],"kinds":["kernels"],"seconds":1}')
    [ "$code" = 202 ] && break
    sleep 0.1
done
NEW=$(first_id)
check "a capture asked for after the restart: 202, an id above the old ones, and it runs to done" bash -c "
    [ $code = 202 ] && [ $NEW -gt $REQ ] && [ $NEW -gt $RUN ]" 
check "... done" wait_state keep "$NEW" done 15
sleep 1
stop "$PID_agent"
kill "$SIM" 2>/dev/null
wait "$SIM" 2>/dev/null
code=$(curl -s -o /dev/null -w '%{http_code}' -X DELETE "$HTTP/v1/jobs/keep")
gone() { # no captures of job keep: 404 (no such job)
    [ "$(curl -s -o "$WORK/gone.json" -w '%{http_code}' "$HTTP/v1/jobs/keep/captures")" = 404 ] ||
        grep -q '"captures": *\[\]' "$WORK/gone.json"
}
check "deleting the job: 200, and its captures are gone" bash -c "[ $code = 200 ]" && check "... gone" gone
stop "$PID_server"
check "... from the store too: --check passes with none kept" bash -c '
"$1" --check --data "$2" >"$3" && ! grep -q "captures on demand" "$3"' _ "$BIN/rankscope-server" "$WORK/data" "$WORK/check2.txt"
start_server
check "... and after another restart" gone
finish
