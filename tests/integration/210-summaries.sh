#!/usr/bin/env bash
# Agent summaries (rankscope-agent --summarize): the same simulated job (same seed) sent once
# through an agent that forwards every record and once through one that sends per-window kernel
# and copy totals and steps with the metrics it measured. The server's answers that rest on
# kernel totals (top, ranks), on step metrics (steps) and the straggler verdict are the same; the
# summarized job stores no kernel records and far fewer bytes.
. "$(dirname "$0")/common.sh"
start_server --evaluate-ms 200
run_job() { # JOB
    "$BIN/rankscope-sim" --job "$1" --ranks 4 --steps 120 --step-ms 500 --speed 0 --seed 7 \
        --slow-rank 1 --slowdown 0.2 --onset-step 0 --agent "$WORK/agent.sock" \
        --log-level warn >"$WORK/$1.sim.json"
}
start_agent
run_job raw
wait_for_records raw "$WORK/raw.sim.json"
check "raw job: every record stored" totals_match raw "$WORK/raw.sim.json"
stop "$PID_agent"
start_agent --summarize --summary-window-s 5
run_job sum
# the last windows and steps go out once the ranks have been quiet for 2 s
for _ in $(seq 100); do
    totals_match sum "$WORK/sum.sim.json" >/dev/null 2>&1 && break
    sleep 0.1
done
check "summarized job: kernel, collective, copy and step counts equal the records sent" \
    totals_match sum "$WORK/sum.sim.json"
check "summarized job: no kernel records, only windows; every step carries the agent's metrics" \
    sh -c "'$TOOLS/rs-store-dump' '$WORK/data' sum | python3 -c '
import json, sys
for r in json.load(sys.stdin)[\"ranks\"]:
    assert r[\"raw_kernels\"] == 0 and r[\"window_kernels\"] == r[\"kernels\"] > 0, r
    assert r[\"measured_steps\"] == r[\"steps\"] == 120, r'"
# let the evaluator settle both jobs (no data for 2 s), then compare
sleep 2.5
for j in raw sum; do
    curl -sf "$HTTP/v1/jobs/$j/top?limit=100" >"$WORK/$j.top"
    curl -sf "$HTTP/v1/jobs/$j/steps?last=200" >"$WORK/$j.steps"
    curl -sf "$HTTP/v1/jobs/$j/stragglers?since_ns=0" >"$WORK/$j.stragglers"
    curl -sf "$HTTP/v1/jobs/$j/ranks" >"$WORK/$j.ranks"
done
check "top: the same kernels, launches and GPU time" python3 -c '
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
ka = {k["name"]: (round(k["calls"], 6), round(k["ms"], 6)) for k in a["kernels"]}
kb = {k["name"]: (round(k["calls"], 6), round(k["ms"], 6)) for k in b["kernels"]}
assert ka == kb, set(ka.items()) ^ set(kb.items())
assert len(ka) > 10' "$WORK/raw.top" "$WORK/sum.top"
check "ranks: the same kernel and copy counts and times" python3 -c '
import json, sys
a, b = (json.load(open(p))["ranks"] for p in sys.argv[1:3])
keys = ("rank", "kernels", "kernel_ms", "collectives", "memcpys", "steps")
pa = [{k: r.get(k) for k in keys} for r in a]
pb = [{k: r.get(k) for k in keys} for r in b]
assert pa == pb, (pa, pb)' "$WORK/raw.ranks" "$WORK/sum.ranks"
check "steps: the agent measured the same metrics the server measures from kernels" python3 -c '
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
def metrics(j):
    return {r["rank"]: [{k: v for k, v in s.items() if k not in ("start_ns", "end_ns")}
                        for s in r["steps"]] for r in j["ranks"]}
ma, mb = metrics(a), metrics(b)
assert sum(len(v) for v in ma.values()) >= 4 * 100, "too few steps"
assert ma == mb, next((r, x, y) for r in ma for x, y in zip(ma[r], mb[r]) if x != y)' \
    "$WORK/raw.steps" "$WORK/sum.steps"
check "the straggler verdict is the same (rank 1, the same cause)" python3 -c '
import json, sys
a, b = (json.load(open(p))["stragglers"] for p in sys.argv[1:3])
assert [s["rank"] for s in a] == [s["rank"] for s in b] == [1], (a, b)
assert a[0]["cause"] == b[0]["cause"], (a[0]["cause"], b[0]["cause"])' \
    "$WORK/raw.stragglers" "$WORK/sum.stragglers"
# A summarized job streamed at its pace (20 ms steps, 6 s): its verdict is raised within a
# couple of seconds, before the agent's 5 s windows of those steps arrive (they go out once
# settled), so with cause "unknown"; the log says when the cause became known, and it is the
# answer's. (Seen once, in a clean-clone run on 2026-11-23: the first raise came with cause
# host_side and was cleared and raised again with the answer's cause 2 s later — the log then
# also ends on the answer's cause, which is what is checked. Not understood yet; see the issue
# note.)
"$BIN/rankscope-sim" --job live --ranks 4 --steps 300 --step-ms 20 --seed 7 --slow-rank 1 \
    --slowdown 0.2 --onset-step 0 --agent "$WORK/agent.sock" --log-level warn >"$WORK/live.sim.json"
# the cause the log gives for rank 1 last: of its last RS-STRAGGLER-RAISED or -CAUSE line
logged_cause() {
    sed -n 's/.*RS-STRAGGLER-RAISED job live: rank 1 .*, cause \([a-z_]*\), .*/\1/p;
            s/.*RS-STRAGGLER-CAUSE job live: rank 1: cause \([a-z_]*\) (was .*/\1/p' \
        "$WORK/server.log" | tail -n 1
}
for _ in $(seq 75); do
    final=$(curl -s "$HTTP/v1/jobs/live/stragglers" |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["stragglers"][0]["cause"])' 2>/dev/null)
    [ -n "$final" ] && [ "$final" != unknown ] && [ "$(logged_cause)" = "$final" ] && break
    sleep 0.2
done
check "streaming: raised, and the log ends on the answer's cause ($final) — by RS-STRAGGLER-CAUSE after a raise with cause unknown" python3 -c '
import re, sys
lines = [l for l in open(sys.argv[1]) if "job live: rank 1" in l]
print("".join(lines))
cause = None
for l in lines:
    m = re.search(r"RS-STRAGGLER-RAISED .*, cause ([a-z_]+), ", l) or \
        re.search(r"RS-STRAGGLER-CAUSE .*: cause ([a-z_]+) \(was unknown\)", l)
    if m:
        cause = m.group(1)
assert cause is not None, "never raised"
assert cause == sys.argv[2] != "unknown", (cause, sys.argv[2])' "$WORK/server.log" "$final"
stop "$PID_agent" # first: it sends what it still holds to the server, which is still up
stop_all
check "the store is consistent" "$BIN/rankscope-server" --check --data "$WORK/data"

# past the raw horizon the rollup coarsens the agent's 5 s windows into 60 s windows: the same
# answers from fewer windows
start_server --raw-retention-s 1 --maintenance-s 1
for _ in $(seq 40); do
    grep -q 'RS-ROLLUP rolled [0-9]* kernel and memcpy records ([0-9]* chunks) and [1-9][0-9]* agent windows' \
        "$WORK/server.log" && break
    sleep 0.5
done
check "the rollup coarsened the agent windows" grep -q \
    'RS-ROLLUP rolled [0-9]* kernel and memcpy records ([0-9]* chunks) and [1-9][0-9]* agent windows' \
    "$WORK/server.log"
curl -sf "$HTTP/v1/jobs/sum/top?limit=100" >"$WORK/coarse.top"
curl -sf "$HTTP/v1/jobs/sum/ranks" >"$WORK/coarse.ranks"
check "coarsened: top and ranks as before" python3 -c '
import json, sys
a, b, ra, rb = (json.load(open(p)) for p in sys.argv[1:5])
ka = {k["name"]: (round(k["calls"], 6), round(k["ms"], 6)) for k in a["kernels"]}
kb = {k["name"]: (round(k["calls"], 6), round(k["ms"], 6)) for k in b["kernels"]}
assert ka == kb, set(ka.items()) ^ set(kb.items())
assert ra == rb, (ra, rb)' "$WORK/sum.top" "$WORK/coarse.top" "$WORK/sum.ranks" "$WORK/coarse.ranks"
stop_all
check "coarsened: the store is consistent" "$BIN/rankscope-server" --check --data "$WORK/data"
finish
