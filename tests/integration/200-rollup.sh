#!/usr/bin/env bash
# Rollups: a simulated job stored raw, then the server restarted on the same store with rollups
# after 1 s: the kernel and memcpy records of every summarized step are rolled up into windows (those of the
# last steps, which never settled, stay raw), and the answers that rest on kernel
# totals (top, the pprof time profile) and on step summaries (steps, stragglers) are the same as
# before; the store is consistent and smaller.
. "$(dirname "$0")/common.sh"
start_server --raw-retention-s 0
start_agent
# 700 steps of 1 s sent at once: more than the evaluator's windows reach (120 steps), so it has
# to catch up on the older ones; the last ~2 s, which it settles only once the job is quiet, are
# 2 steps
"$BIN/rankscope-sim" --job rj --ranks 4 --steps 700 --step-ms 1000 --speed 0 --slow-rank 2 \
    --slowdown 0.2 --onset-step 0 --agent "$WORK/agent.sock" --log-level warn >"$WORK/sim.json"
wait_for_records rj "$WORK/sim.json"
# the evaluator stores a summary of every settled step: wait for all of them
for _ in $(seq 150); do
    n=$(curl -s "$HTTP/healthz" | python3 -c 'import json,sys; print(json.load(sys.stdin)["counters"]["step_summaries_stored"])')
    [ "$n" -ge 2792 ] && break # 4 ranks x 700 steps, the newest ones may stay unsettled
    sleep 0.2
done
check "the evaluator caught up: every older step summarized ($n of 2,800)" test "$n" -ge 2792
snapshot() {
    curl -sf "$HTTP/v1/jobs/rj/top?limit=100" >"$WORK/$1.top" &&
        curl -sf "$HTTP/v1/jobs/rj/steps?last=100" >"$WORK/$1.steps" &&
        curl -sf "$HTTP/v1/jobs/rj/stragglers?since_ns=0" >"$WORK/$1.stragglers" &&
        "$BIN/rankscope" --server "$HTTP" export rj --format pprof-time --out "$WORK/$1.pb.gz" >/dev/null &&
        python3 tests/integration/pprof_read.py "$WORK/$1.pb.gz" >"$WORK/$1.pprof.json"
}
check "answers before the rollup" snapshot raw
stop_all
"$BIN/rankscope-server" --check --data "$WORK/data" >"$WORK/check-raw.out"

start_server --raw-retention-s 1 --rollup-window-s 1 --maintenance-s 1
kernels=$(python3 -c 'import json,sys; s = json.load(open(sys.argv[1]))["sent"]; print(s["kernels"] + s["memcpys"])' "$WORK/sim.json")
rolled() { curl -s "$HTTP/healthz" | python3 -c 'import json,sys; print(json.load(sys.stdin)["counters"]["records_rolled_up"])'; }
# until two maintenance ticks roll up nothing more (the evaluator may settle the last steps first)
last=-1
for _ in $(seq 30); do
    sleep 1.5
    n=$(rolled)
    [ "$n" -gt 0 ] && [ "$n" = "$last" ] && break
    last=$n
done
check "the kernel and memcpy records of summarized steps are rolled up; the rest stays raw" sh -c "
    n=\$(curl -s '$HTTP/healthz' | python3 -c 'import json,sys; print(json.load(sys.stdin)[\"counters\"][\"records_rolled_up\"])')
    echo rolled \$n of $kernels; [ \$n -ge \$(($kernels * 95 / 100)) ] && [ \$n -le $kernels ] &&
    grep -q 'RS-ROLLUP rolled [0-9]* kernel and memcpy records' '$WORK/server.log'"
check "answers after the rollup" snapshot rolled
check "top: the same kernels, launches and GPU time per step" python3 -c '
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
ka = {k["name"]: (round(k["calls"], 9), round(k["ms"], 9)) for k in a["kernels"]}
kb = {k["name"]: (round(k["calls"], 9), round(k["ms"], 9)) for k in b["kernels"]}
assert ka == kb, (ka, kb)
assert a["total_ms"] == b["total_ms"] and a["scope"]["rank_steps"] == b["scope"]["rank_steps"]' \
    "$WORK/raw.top" "$WORK/rolled.top"
check "pprof time profile: the same launches and nanoseconds per rank and kernel or copy" python3 -c '
import json, sys
def per_stack(p):
    out = {}
    for s in json.load(open(p))["samples"]:
        k = tuple(s["stack"])
        out[k] = [x + y for x, y in zip(out.get(k, [0, 0]), s["values"])]
    return out
a, b = per_stack(sys.argv[1]), per_stack(sys.argv[2])
assert a == b, set(a.items()) ^ set(b.items())' "$WORK/raw.pprof.json" "$WORK/rolled.pprof.json"
check "steps and the straggler verdict are unchanged (they rest on step summaries)" python3 -c '
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert a["ranks"] == b["ranks"], "steps differ"
sa, sb = (json.load(open(p)) for p in sys.argv[3:5])
assert [s["rank"] for s in sa["stragglers"]] == [s["rank"] for s in sb["stragglers"]] == [2], (sa, sb)' \
    "$WORK/raw.steps" "$WORK/rolled.steps" "$WORK/raw.stragglers" "$WORK/rolled.stragglers"
stop_all
"$BIN/rankscope-server" --check --data "$WORK/data" >"$WORK/check-rolled.out"
# (series also holds the memcpy records, which stay raw, and the last steps' kernels)
check "the store is consistent, its kernel series replaced by smaller windows" python3 -c '
import re, sys
def dbs(p):
    t = open(p).read()
    assert "check: consistent" in t, t
    return {k: int(v) for k, v in re.findall(r"(\w+) (\d+)", t.split("bytes per database:")[1].split("\n")[0])}
a, b = dbs(sys.argv[1]), dbs(sys.argv[2])
print("series", a["series"], "->", b["series"], "kwin", a["kwin"], "->", b["kwin"])
assert b["kwin"] > 0 and b["series"] + b["kwin"] < a["series"] / 2, (a, b)' \
    "$WORK/check-raw.out" "$WORK/check-rolled.out"
finish
