#!/usr/bin/env bash
# Trace files into a running server (`rankscope import`, POST /v1/import): committed once,
# deduplicated when imported again, analysed by the server like a live job. Export of a window to
# Perfetto/Chrome trace files (from a store, and from the server) and import back: the same
# per-rank totals. /metrics in Prometheus
# text format, with a straggler gauge labelled by job and rank only.
. "$(dirname "$0")/common.sh"
FIX=$ROOT/tests/fixtures/kineto-h200x2
start_server --evaluate-ms 200 --active-s 30
"$BIN/rankscope" --server "$HTTP" import "$FIX"/fixture_rank0slow_rank*.json.gz --json \
    >"$WORK/imp1.json" 2>"$WORK/imp1.err"
"$BIN/rankscope" --server "$HTTP" import "$FIX"/fixture_rank0slow_rank*.json.gz --json \
    >"$WORK/imp2.json" 2>"$WORK/imp2.err"
check "import commits each batch once; the same files again are duplicates" python3 -c '
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert a["job"] == "fixture_rank0slow" and a["batches_committed"] == 2 and a["batches_duplicate"] == 0, a
assert b["batches_committed"] == 0 and b["batches_duplicate"] == 2, b' "$WORK/imp1.json" \
    "$WORK/imp2.json"
check "the server has both ranks with every kernel" python3 -c '
import json, sys, urllib.request
d = json.load(urllib.request.urlopen(sys.argv[1] + "/v1/jobs/fixture_rank0slow/ranks"))
k = {r["rank"]: (r["kernels"], r["collectives"]) for r in d["ranks"]}
assert k == {0: (1080, 80), 1: (1020, 80)}, k' "$HTTP"
check "the server's verdict on the imported job (9-step windows): rank 0, extra_work" python3 -c '
import json, sys, urllib.request
d = json.load(urllib.request.urlopen(sys.argv[1] + "/v1/jobs/fixture_rank0slow/stragglers?window=9"))
(v,) = d["stragglers"]
assert v["rank"] == 0 and v["cause"] == "extra_work", v' "$HTTP"
"$BIN/rankscope" --server "$HTTP" stragglers fixture_rank0slow --window 9 >"$WORK/cli.txt" 2>&1
check "the CLI asks for short windows with --window" grep -q "cause: extra_work" "$WORK/cli.txt"
# import's suggested next command, as printed: windows fitted to the 19-step trace, a verdict
"$BIN/rankscope" --server "$HTTP" stragglers fixture_rank0slow >"$WORK/next.txt" 2>&1
rc=$?
check "after import, 'rankscope stragglers JOB' gives a verdict (windows fitted to the trace), exit 0" \
    bash -c '[ "$1" = 0 ] && grep -q "^rank 0$" "$2" && grep -q "cause: extra_work" "$2" &&
    grep -q "1 straggler(s) (windows of 9 steps: the job has 19 steps per rank" "$2"' _ "$rc" \
    "$WORK/next.txt"
"$BIN/rankscope" --server "$HTTP" import "$FIX"/fixture_baseline_rank0.json.gz --job lone \
    >/dev/null 2>&1
"$BIN/rankscope" --server "$HTTP" stragglers lone >"$WORK/lone.txt" 2>&1
rc=$?
check "a job with too little data (one rank) says 'not enough data' and exits 4" \
    bash -c '[ "$1" = 4 ] && grep -q "not enough data: 1 ranks" "$2"' _ "$rc" "$WORK/lone.txt"

# export -> import round trip, through a store kept by analyze
"$BIN/rankscope" analyze --data "$WORK/a" --job rt "$FIX"/fixture_rank0slow_rank*.json.gz \
    >/dev/null 2>&1
"$BIN/rankscope" export rt --data "$WORK/a" --out "$WORK/trace" >"$WORK/export.out" 2>&1
check "export writes one trace file per rank with distributedInfo and one shared base" python3 -c '
import json, sys
docs = [json.load(open(sys.argv[1] + "/rt_rank%d.json" % r)) for r in (0, 1)]
assert [d["distributedInfo"]["rank"] for d in docs] == [0, 1], [d["distributedInfo"] for d in docs]
assert all(d["distributedInfo"]["world_size"] == 2 for d in docs)
assert docs[0]["baseTimeNanoseconds"] == docs[1]["baseTimeNanoseconds"]
assert all(e["ph"] == "X" and e["ts"] >= 0 for d in docs for e in d["traceEvents"])' "$WORK/trace"
"$BIN/rankscope" analyze --data "$WORK/b" --job rt "$WORK/trace" >/dev/null 2>&1
"$TOOLS/rs-store-dump" "$WORK/a" rt >"$WORK/a.dump"
"$TOOLS/rs-store-dump" "$WORK/b" rt >"$WORK/b.dump"
check "round trip: the same per-rank counts and times of kernels, NCCL kernels and copies" python3 -c '
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert all(x["memcpys"] == 280 for x in a["ranks"]), a["ranks"]
for x, y in zip(a["ranks"], b["ranks"]):
    for key in ("rank", "kernels", "collectives", "memcpys"):
        assert x[key] == y[key], (key, x, y)
    for key in ("kernel_ms", "nccl_ms"):
        assert abs(x[key] - y[key]) < 1e-3, (key, x[key], y[key])
assert a["complete_instances"] == b["complete_instances"] == 80, (a, b)' "$WORK/a.dump" "$WORK/b.dump"
"$BIN/rankscope" export rt --data "$WORK/a" --out "$WORK/t2" --format svg >"$WORK/fmt.out" 2>&1
rc=$?
check "an unknown format is a usage error that lists the formats" bash -c '[ "$1" = 2 ] &&
    grep -q "unknown --format .svg. (perfetto, pprof, pprof-stalls, pprof-time)" "$2"' \
    _ "$rc" "$WORK/fmt.out"
check "pprof of an imported trace (no PC samples): GPU time, rank 0 spends more in the nn gemm" sh -c "
    '$BIN/rankscope' export rt --data '$WORK/a' --format pprof --out '$WORK/rt.pb.gz' >/dev/null 2>&1 &&
    python3 tests/integration/pprof_read.py '$WORK/rt.pb.gz' | python3 -c '
import json, sys
p = json.load(sys.stdin)
assert p[\"sample_types\"][1] == [\"gpu_time\", \"nanoseconds\"], p[\"sample_types\"]
def gemm_ns(rank):
    return sum(s[\"values\"][1] for s in p[\"samples\"] if s[\"labels\"][\"rank\"] == rank and \"gemm\" in s[\"stack\"][1] and \"_nn_\" in s[\"stack\"][1])
assert gemm_ns(0) > 1.2 * gemm_ns(1) > 0, (gemm_ns(0), gemm_ns(1))'"

check "perfetto export from the server (GET .../trace?rank=R) = the same files read from its store" sh -c "
    '$BIN/rankscope' --server '$HTTP' export fixture_rank0slow --format perfetto --out '$WORK/srv' >'$WORK/srv.out' &&
    grep -q '2 ranks' '$WORK/srv.out' &&
    '$BIN/rankscope' export fixture_rank0slow --data '$WORK/data' --out '$WORK/loc' >/dev/null &&
    cmp '$WORK/srv/fixture_rank0slow_rank0.json' '$WORK/loc/fixture_rank0slow_rank0.json' &&
    cmp '$WORK/srv/fixture_rank0slow_rank1.json' '$WORK/loc/fixture_rank0slow_rank1.json'"
check "trace needs a rank (400), an absent rank is 404" sh -c "
    curl -s '$HTTP/v1/jobs/fixture_rank0slow/trace' | grep -q 'trace needs rank=R' &&
    [ \$(curl -s -o /dev/null -w '%{http_code}' '$HTTP/v1/jobs/fixture_rank0slow/trace?rank=5') = 404 ]"

# /metrics, with a live straggler from the simulator
start_agent
"$BIN/rankscope-sim" --job live --ranks 4 --steps 200 --step-ms 20 --slow-rank 3 --slowdown 0.15 \
    --onset-step 20 --agent "$WORK/agent.sock" --log-level warn >"$WORK/sim.json"
for i in $(seq 50); do
    curl -s "$HTTP/metrics" >"$WORK/metrics.txt"
    grep -q 'rankscope_straggler_slowdown{job="live",rank="3"}' "$WORK/metrics.txt" && break
    sleep 0.2
done
check "/metrics: Prometheus text with counters, store totals and the straggler gauge" python3 -c '
import re, sys
text = open(sys.argv[1]).read()
series = {}
for line in text.splitlines():
    if line.startswith("#"):
        assert re.match(r"# (HELP|TYPE) rankscope_\w+ ", line), line
        continue
    m = re.match(r"(rankscope_\w+)(\{[^}]*\})? (\S+)$", line)
    assert m, line
    series[m.group(1) + (m.group(2) or "")] = float(m.group(3))
assert series["rankscope_jobs"] == 3 and series["rankscope_ranks"] == 7, series
assert series["rankscope_batches_duplicate_total"] >= 2 and series["rankscope_batches_committed_total"] >= 3
assert 1.1 < series["rankscope_straggler_slowdown{job=\"live\",rank=\"3\"}"] < 1.25, series
assert series["rankscope_stragglers_active"] >= 1
labels = [k for k in series if "{" in k]
assert all(re.fullmatch(r"rankscope_straggler_\w+\{job=\"[^\"]+\",rank=\"\d+\"\}", k) or
           re.fullmatch(r"rankscope_straggler_cause\{job=\"[^\"]+\",rank=\"\d+\",cause=\"(gpu_slow|extra_work|host_side|unknown)\",source=\"(rule|capture)\"\}", k) or
           re.fullmatch(r"rankscope_captures(_refused)?_total\{(state|reason)=\"[a-z]+\"\}", k) or
           re.fullmatch(r"rankscope_answer_cache_lookups_total\{outcome=\"(hit|joined|miss)\"\}", k)
           for k in labels), labels
assert [v for k, v in series.items() if k.startswith("rankscope_straggler_cause{job=\"live\",rank=\"3\",")] == [1], series' \
    "$WORK/metrics.txt"
finish
