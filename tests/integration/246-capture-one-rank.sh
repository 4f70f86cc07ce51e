#!/usr/bin/env bash
# A capture on one rank and the straggler rule (issue 25; docs/analysis.md "Steps traced on some
# ranks"), with the real server, agent and the simulator as the collectors: kernel records only
# while a capture runs (--kernels-in-captures, as a collector between rare windows) and the NCCL
# plugin's collectives always. Rank 2's GPU is 30% slow: without kernels the rule names it by its
# longer host gap (host_side). An operator captures rank 0 — a healthy rank, alone — for 6 s: its
# steps then show kernels that no peer has in the same seconds. The rule must not compare them
# with its peers' untraced steps (that read rank 0 as a rank running 1.5x and more, and its kernels
# as extra work): while the capture runs and after it, rank 0 stays at ~1x, no verdict names it, and
# rank 2 stays named, about as slow as before, with no extra_work cause.
. "$(dirname "$0")/common.sh"

start_server --evaluate-ms 500 --auto-capture=false
start_agent
"$BIN/rankscope-sim" --job one --ranks 4 --duration-s 24 --step-ms 50 --kernels-in-captures \
    --nccl-plugin --slow-rank 2 --slowdown 0.3 --agent "$WORK/agent.sock" --log-level warn \
    >"$WORK/sim.json" &
SIM=$!
stragglers() { curl -sf "$HTTP/v1/jobs/one/stragglers"; }
for _ in $(seq 150); do # rank 2 named before any capture
    stragglers >"$WORK/before.json" 2>/dev/null && python3 -c '
import json, sys
sys.exit(0 if [v for v in json.load(open(sys.argv[1]))["stragglers"] if v["rank"] == 2] else 1)' \
        "$WORK/before.json" && break
    sleep 0.1
done
check "before the capture: rank 2 named, rank 0 not, no kernels anywhere" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert [v["rank"] for v in d["stragglers"]] == [2], d["stragglers"]
r = {x["rank"]: x["slowdown"] for x in d["ranks"]}
assert r[2] > 1.1 and r[0] < 1.05, r' "$WORK/before.json"

code=$(curl -s -o "$WORK/posted.json" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
    --data-binary '{"ranks":[0],"kinds":["kernels"],"seconds":6}' "$HTTP/v1/jobs/one/capture")
check "POST a 6 s kernels capture of rank 0 alone: 202" [ "$code" = 202 ]
ID=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["captures"][0]["id"])' "$WORK/posted.json")
state() {
    curl -sf "$HTTP/v1/jobs/one/captures" | python3 -c '
import json, sys
print([c["state"] for c in json.load(sys.stdin)["captures"] if c["id"] == int(sys.argv[1])][0])' "$1"
}
for _ in $(seq 100); do [ "$(state "$ID")" = running ] && break; sleep 0.1; done
# the rule's answers while the capture runs (every 0.5 s), then after it ended
: >"$WORK/during.jsonl"
for _ in $(seq 14); do
    [ "$(state "$ID")" = running ] || break
    stragglers | tr -d '\n' >>"$WORK/during.jsonl"
    echo >>"$WORK/during.jsonl"
    sleep 0.5
done
for _ in $(seq 100); do [ "$(state "$ID")" = done ] && break; sleep 0.1; done
sleep 2 # the capture's last records are stored, its steps evaluated
stragglers >"$WORK/after.json"
check "the capture ran and brought rank 0's kernels (none of the other ranks')" bash -c '
curl -sf "$1/v1/jobs/one/captures" | python3 -c "
import json, sys
(c,) = json.load(sys.stdin)[\"captures\"]
assert c[\"state\"] == \"done\" and c[\"rank\"] == 0 and c[\"records\"][\"kernels\"] > 100, c"' _ "$HTTP"
check "while the capture ran (>= 3 answers): rank 0 ~1x and never named, rank 2 named as slow as before, never extra_work" python3 -c '
import json, sys
before = {x["rank"]: x["slowdown"] for x in json.load(open(sys.argv[1]))["ranks"]}
answers = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
assert len(answers) >= 3, len(answers)
for d in answers:
    r = {x["rank"]: x["slowdown"] for x in d["ranks"]}
    named = {v["rank"]: v for v in d["stragglers"]}
    assert r[0] < 1.05 and 0 not in named, (r, list(named))
    assert 2 in named and abs(r[2] / before[2] - 1) < 0.1, (r, before)
    assert all(v["cause"] != "extra_work" for v in named.values()), [v["cause"] for v in named.values()]' \
    "$WORK/before.json" "$WORK/during.jsonl"
check "after it: the same" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
r = {x["rank"]: x["slowdown"] for x in d["ranks"]}
assert r[0] < 1.05 and [v["rank"] for v in d["stragglers"]] == [2], (r, d["stragglers"])
assert d["stragglers"][0]["cause"] != "extra_work", d["stragglers"][0]' "$WORK/after.json"
check "the evaluator raised no verdict on rank 0" bash -c '! grep -q "RS-STRAGGLER-RAISED job one: rank 0" "$1"' _ "$WORK/server.log"
wait "$SIM"
finish
