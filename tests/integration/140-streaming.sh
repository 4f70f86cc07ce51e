#!/usr/bin/env bash
# Streaming straggler evaluation: the server re-evaluates running jobs on its own (every 200 ms
# here), raises a verdict soon after the fault's onset — with the time it knew (detected_ns) —
# clears it when the rank recovers, logs both, and lets a scheduler poll for changes (since_ns).
. "$(dirname "$0")/common.sh"
start_server --evaluate-ms 200 --active-s 30
start_agent
# paced like a real job (speed 1): 20 ms steps, rank 2 slow from step 60 to step 200
"$BIN/rankscope-sim" --job live --ranks 8 --steps 300 --step-ms 20 --slow-rank 2 --slowdown 0.15 \
    --onset-step 60 --recover-step 200 --agent "$WORK/agent.sock" --log-level warn >"$WORK/sim.json" &
SIM=$!
# poll like a scheduler while the job runs: keep the first answer that carries the verdict
for i in $(seq 100); do
    curl -s "$HTTP/v1/jobs/live/stragglers" >"$WORK/poll.json"
    grep -Eq '"detected_ns": ?[0-9]' "$WORK/poll.json" && cp "$WORK/poll.json" "$WORK/raised.json" && break
    sleep 0.1
done
wait $SIM
sleep 1.5 # the evaluations after the recovery
curl -s "$HTTP/v1/jobs/live/stragglers" >"$WORK/after.json"
check "raised while the job ran: rank 2, detected after the onset and within 10 s of it" python3 -c '
import json, sys
sim = json.load(open(sys.argv[1])); d = json.load(open(sys.argv[2]))
(v,) = d["stragglers"]
assert v["rank"] == 2 and v["cause"] == "gpu_slow", v
lag = (v["detected_ns"] - sim["onset_ns"]) / 1e9
print("time to detect: %.2f s" % lag)
assert 0 < lag < 10, lag
assert d["streaming"] is True and d["events_ns"] == v["detected_ns"], d' "$WORK/sim.json" "$WORK/raised.json"
check "cleared after the rank recovered, with both times" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["stragglers"] == [], d["stragglers"]
(c,) = d["cleared"]
assert c["rank"] == 2 and c["cleared_ns"] > c["detected_ns"] and d["events_ns"] == c["cleared_ns"], d' "$WORK/after.json"
check "since_ns = events_ns: nothing new" python3 -c '
import json, sys, urllib.request
url = sys.argv[1]
ev = json.load(urllib.request.urlopen(url))["events_ns"]
d = json.load(urllib.request.urlopen(url + "?since_ns=%d" % ev))
assert d["stragglers"] == [] and d["cleared"] == [], d' "$HTTP/v1/jobs/live/stragglers"
check "since_ns before the clear: the clear is listed" python3 -c '
import json, sys, urllib.request
c = json.load(open(sys.argv[2]))["cleared"][0]
d = json.load(urllib.request.urlopen(sys.argv[1] + "?since_ns=%d" % (c["cleared_ns"] - 1)))
assert [x["rank"] for x in d["cleared"]] == [2], d' "$HTTP/v1/jobs/live/stragglers" "$WORK/after.json"
check "the server logged the raise and the clear" sh -c "grep -q 'RS-STRAGGLER-RAISED job live: rank 2' '$WORK/server.log' && grep -q 'RS-STRAGGLER-CLEARED job live: rank 2' '$WORK/server.log'"
check "/healthz counts them" python3 -c '
import json, sys, urllib.request
e = json.load(urllib.request.urlopen(sys.argv[1]))["evaluator"]
assert e["stragglers_raised"] == 1 and e["stragglers_cleared"] == 1 and e["stragglers_active"] == 0, e
assert e["evaluations"] > 5 and e["errors"] == 0, e
# a small job takes milliseconds: the share limit (evaluator.h) leaves the period as set
assert 0 <= e["last_duration_ms"] < 1000, e' "$HTTP/healthz"
# the job sent at its own pace: every step was summarized while the windows reached it, so the
# catch-up had nothing to load (it once reloaded the steps up to the windows on every evaluation,
# a cost that grew with the job: tens of thousands of rank-steps here)
check "the catch-up loads (almost) nothing for a job sent at its pace" python3 -c '
import json, sys, urllib.request
e = json.load(urllib.request.urlopen(sys.argv[1]))["evaluator"]
print("catch-up rank-steps:", e["catchup_steps"], "in", e["evaluations"], "evaluations")
assert e["catchup_steps"] <= 8 * 30, e' "$HTTP/healthz"
check "since_ns must be a number" sh -c "[ \$(curl -s -o /dev/null -w '%{http_code}' '$HTTP/v1/jobs/live/stragglers?since_ns=x') = 400 ]"
finish
