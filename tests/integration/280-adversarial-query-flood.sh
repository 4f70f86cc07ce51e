#!/usr/bin/env bash
# Adversarial: a flood of heavy queries while agents ingest (issue 23 §3). Eight clients ask
# for the pprof of a 256-rank job back to back while four agent stand-ins (rs-load) send
# batches as fast as they are acknowledged. Before the query pool, ingest fell from ~900
# batches/s to ~0.4 for as long as the flood lasted (libuv's 4 threads were all in queries);
# now queries have their own threads, bounded per client and in total, and ingest its own.
# Checked, not assumed: under the flood ingest never stands still for 1 s (or twice as long as it
# did in the quiet phases, whichever is longer: every commit fsyncs, on a disk that may be shared)
# and keeps >= 5% of its quiet rate (the mean of the phases before and after) — the fault measured
# 0.4 batches/s (0.05%; issue 23 saw 0 for 20 s);
# /healthz answers within 1 s throughout. How much of its rate ingest keeps is a measurement of
# the machine as much as of the server (0.5 - 0.9 alone on the 2-core build machine, 0.20 in a CI
# run beside other work): docs/BENCHMARKS.md "Query flood vs ingest" reports it; this test guards
# the property, not the figure. Then the refusals: past query-max-per-client 429 with Retry-After
# and a JSON error; a query past query-timeout-ms 504, counted.
. "$(dirname "$0")/common.sh"
start_server --query-max-per-client=6
start_agent
"$BIN/rankscope-sim" --job big --ranks 256 --steps 60 --speed 0 --pc-sampling \
    --agent "$WORK/agent.sock" --log-level warn >"$WORK/big.json"
wait_for_records big "$WORK/big.json"
LOAD=()
for i in 1 2 3 4; do
    "$TOOLS/rs-load" "$LISTEN" 100000000 50 "$WORK/acked$i" 2>"$WORK/load$i.log" &
    LOAD+=($!)
done
PIDS+=("${LOAD[@]}")
sleep 1
python3 tests/integration/query_flood.py "$HTTP" big 8 4 "$WORK/flood.json" >"$WORK/flood.out" 2>&1
# A neighbour's burst inside the 4-s flood phase can still take most of 2 shared cores: a first
# measurement that fails is taken once more, both are printed, and the second is judged — a
# server whose queries starve ingest fails both.
# kept FLOOD.json: ingest under the flood kept moving and kept its share (prints the figures)
kept() {
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
quiet_stall = max(r["unloaded"]["before"]["stall_max_s"], r["unloaded"]["after"]["stall_max_s"])
bound = max(1.0, 2 * quiet_stall)
print("quiet %.0f batches/s, flood %.0f batches/s, ratio %.2f; longest stall %.2f s under the flood "
      "(bound %.2f s), %.2f s quiet" % (r["unloaded"]["batches_per_s"], r["loaded"]["batches_per_s"],
                                      r["ratio"], r["loaded"]["stall_max_s"], bound, quiet_stall))
sys.exit(not (r["ratio"] >= 0.05 and r["loaded"]["stall_max_s"] < bound))' "$1"
}
if ! kept "$WORK/flood.json" >/dev/null; then
    cp "$WORK/flood.json" "$WORK/flood-first.json"
    echo "first flood measurement: $(kept "$WORK/flood-first.json")" >&2; cat "$WORK/flood-first.json" >&2
    python3 tests/integration/query_flood.py "$HTTP" big 8 4 "$WORK/flood.json" >>"$WORK/flood.out" 2>&1
    echo "second flood measurement: $(kept "$WORK/flood.json")" >&2
fi
for p in "${LOAD[@]}"; do kill "$p"; wait "$p" 2>/dev/null; done
cat "$WORK/flood.json" >&2
check "the flood ran: queries answered 200 and ingest moved in every phase" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["statuses"].get("200", 0) >= 8, r["statuses"]
assert r["unloaded"]["before"]["batches_per_s"] > 20 and r["unloaded"]["after"]["batches_per_s"] > 20, r
print(r["statuses"])' "$WORK/flood.json"
check "ingest under 8 clients of pprof never stands still for 1 s and keeps >= 5% of its quiet rate (was 0.4 batches/s, 0.05%)" \
    kept "$WORK/flood.json"
check "/healthz answers within 1 s under the flood (every probe)" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
print("healthz max %.3f s, p50 %.4f s over %d probes" % (r["loaded"]["healthz_max_s"], r["loaded"]["healthz_p50_s"], r["loaded"]["healthz_probes"]))
assert r["loaded"]["healthz_max_s"] < 1.0 and r["loaded"]["healthz_probes"] >= 10' "$WORK/flood.json"
check "one client past query-max-per-client (6): 429, Retry-After, a JSON error, counted" python3 -c '
import http.client, json, sys, threading
host, port = sys.argv[1], int(sys.argv[2])
out = []
def ask():
    c = http.client.HTTPConnection(host, port, timeout=60)
    c.request("GET", "/v1/jobs/big/pprof")
    r = c.getresponse()
    out.append((r.status, r.getheader("Retry-After"), r.read()))
ts = [threading.Thread(target=ask) for _ in range(16)]
[t.start() for t in ts]
[t.join() for t in ts]
refused = [o for o in out if o[0] == 429]
assert refused and any(o[0] == 200 for o in out), [o[0] for o in out]
for st, ra, body in refused:
    assert ra == "1", ra
    e = json.loads(body)["error"]
    assert e["status"] == 429 and "query-max-per-client" in e["message"], e
c = http.client.HTTPConnection(host, port); c.request("GET", "/healthz")
n = json.loads(c.getresponse().read())["counters"]["queries_refused"]
assert n >= len(refused), (n, len(refused))
print(len(refused), "of 16 refused; queries_refused", n)' "$HTTP_HOST" "$HTTP_PORT"
stop "$PID_server"
start_server --query-timeout-ms=10 --query-threads=1
check "a query past query-timeout-ms (10 ms): 504 with a JSON error that says what to do, counted" sh -c "
    curl -s -o '$WORK/t.json' -w '%{http_code}' '$HTTP/v1/jobs/big/pprof' >'$WORK/t.code';
    cat '$WORK/t.code' '$WORK/t.json'; [ \$(cat '$WORK/t.code') = 504 ] &&
    grep -q 'query-timeout-ms' '$WORK/t.json' && grep -q 'since_ns' '$WORK/t.json' &&
    curl -s '$HTTP/metrics' | grep -q '^rankscope_queries_timed_out_total [1-9]'"
# 10 ms includes waking a thread at nice +10: a neighbour's burst can take that on 2 shared cores,
# so any of 5 tries answering will do (a deadline that refuses cheap reads fails all 5)
check "cheap queries still answer under that deadline" sh -c "
    for i in 1 2 3 4 5; do
        c=\$(curl -s -o /dev/null -w '%{http_code}' '$HTTP/v1/jobs'); echo \$c; [ \$c = 200 ] && exit 0
    done; exit 1"
finish
