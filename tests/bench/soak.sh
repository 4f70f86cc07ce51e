#!/usr/bin/env bash
# Soak (issue 23 "Validate"): RANKS simulated ranks of one job, summarizing as the agents of a
# large cluster do (tests/tools/rs-summary-load: one summary per rank per second, on schedule,
# AGENTS agents of 8 ranks each, every batch acknowledged after its commit), for SECONDS, with a
# concurrent REST query load (soak_queries.py: QUERY_CLIENTS clients over the job's views).
# Reports: the server's RSS every 10 s (anonymous = heap, file = the store's map), whether ingest
# kept pace (the loader's lag behind schedule: bounded = it did), every acknowledged batch stored
# (the loader's acknowledged batches are within the server's committed + duplicate, which exceed
# them by at most the batches in flight when the loader stopped, and the server's count = the
# batches `rankscope-server --check` counts in the store afterwards), and the queries' p50/p99 latency
# — one summary at the end (exit status 0 only when every acknowledged batch was stored and ingest
# kept pace).
# The issue's run: tests/bench/soak.sh 10000 600 (10,000 ranks for 10 minutes).
# WINDOWS 1 s windows per rank per request: 5 = agents that flush every 5 s (--flush-ms 5000
# --summary-window-s 1, what docs/configuration.md advises for large clusters).
# usage: tests/bench/soak.sh [RANKS] [SECONDS] [AGENTS] [QUERY_CLIENTS] [WINDOWS]
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/lib.sh
TOOLS=${BUILD:-build}/tests/tools
RANKS=${1:-10000} SECONDS_=${2:-600} AGENTS=${3:-250} QUERY_CLIENTS=${4:-4} WINDOWS=${5:-5}
WORK=$(mktemp -d /tmp/rankscope-soak.XXXXXX)
trap 'set +e; stop_all; rm -rf "$WORK"' EXIT  # set +e: stop_all's kill of a stopped pid fails
start server "$BIN/rankscope-server" --data "$WORK/data" --http 127.0.0.1:0 \
    --listen tcp://127.0.0.1:0 --ready-file "$WORK/server.ready" --ingest-contexts "$AGENTS" \
    ${SERVER_ARGS:-}
wait_file "$WORK/server.ready"
HTTP=http://$(field "$WORK/server.ready" http)
"$TOOLS/rs-summary-load" "$(field "$WORK/server.ready" listen)" "$RANKS" "$SECONDS_" "$AGENTS" 8 \
    "$WINDOWS" "$RANKS" >"$WORK/load.json" 2>"$WORK/load.progress" &
LOAD=$!
sleep 5
python3 tests/bench/soak_queries.py "$HTTP" summary-bench "$QUERY_CLIENTS" "$WORK/stop" \
    "$WORK/queries.json" &
QUERIES=$!
echo "# soak: $RANKS ranks, $SECONDS_ s, $AGENTS agents, $WINDOWS windows per request, $QUERY_CLIENTS query clients ($(nproc) cores, commit $(git rev-parse --short HEAD))"
echo "# t_s rss_mib anon_mib file_mib batches_committed"
t0=$(date +%s)
while kill -0 "$LOAD" 2>/dev/null; do
    echo "$(($(date +%s) - t0)) $(awk '/^VmRSS/ {printf "%d ", $2/1024} /^RssAnon/ {printf "%d ", $2/1024} /^RssFile/ {printf "%d ", $2/1024}' "/proc/$PID_server/status")$(curl -s "$HTTP/healthz" | python3 -c 'import json,sys; print(json.load(sys.stdin)["counters"]["batches_committed"])')" |
        tee -a "$WORK/rss.txt"
    # malloc's own view (/metrics, server/heap.h): in use vs freed but kept, MiB
    curl -s "$HTTP/metrics" | awk '/^rankscope_heap_in_use_bytes/ {u = $2} /^rankscope_heap_free_held_bytes/ {f = $2}
        END {if (u != "") printf "%d %d\n", u / 1048576, f / 1048576}' >>"$WORK/heap.txt"
    sleep 10
done
wait "$LOAD" || true
touch "$WORK/stop"
wait "$QUERIES" || true
tail -3 "$WORK/load.progress" | sed 's/^/# loader: /'
curl -s "$HTTP/healthz" >"$WORK/health.json"
curl -s "$HTTP/metrics" >"$WORK/metrics.txt"
stop "$PID_server"
"$BIN/rankscope-server" --check --data "$WORK/data" >"$WORK/check.out" 2>&1 || true
python3 - "$WORK/load.json" "$WORK/health.json" "$WORK/queries.json" "$WORK/check.out" "$AGENTS" \
    "$WORK/rss.txt" "$WORK/metrics.txt" "$WORK/heap.txt" <<'PY'
import json, re, sys
load = json.load(open(sys.argv[1]))
c = json.load(open(sys.argv[2]))["counters"]
q = json.load(open(sys.argv[3]))
m = re.search(r"(\d+) batches$", open(sys.argv[4]).read(), re.M)
stored = int(m.group(1)) if m else None
print("ingest: %d summaries in %.0f s = %.0f/s offered %d/s; behind schedule max %.1f s, at the end %.1f s"
      % (load["summaries"], load["seconds"], load["per_second"], load["offered"], load["max_lag_s"], load["final_lag_s"]))
print("acknowledged batches %d; server committed %d + duplicate %d; store --check counts %s; retries %d"
      % (load["batches"], c["batches_committed"], c["batches_duplicate"], stored, load["retries"]))
# The loader counts a batch once acknowledged within the run; the batches in flight when it
# stops (at most one per agent) are committed, uncounted. So: every acknowledged batch is in the
# server's count, at most AGENTS more are, and the store holds what the server committed.
extra = c["batches_committed"] - load["batches"]  # a duplicate is a resend of a committed one
ok = 0 <= extra <= int(sys.argv[5]) and stored == c["batches_committed"]
print("committed beyond the acknowledged: %d (in flight at the end; at most %s)" % (extra, sys.argv[5]))
print("every acknowledged batch stored:", "yes" if ok else "NO")
# Ingest keeps pace when the loader ends (nearly) on schedule: a backlog that grew would show as
# a final lag of the order of the run's length.
pace = load["final_lag_s"] <= 10
print("ingest kept pace:", "yes" if pace else "NO", "(behind schedule %.1f s at the end, at most 10 s allowed)" % load["final_lag_s"])
# The server's resident memory: the curve (anonymous = heap; the store's map is file-backed and
# reclaimable), and whether it still grew over the run's second half.
rows = [list(map(int, l.split())) for l in open(sys.argv[6]) if len(l.split()) == 5]
if rows:
    anon = [r[2] for r in rows]
    half = anon[len(anon) // 2:]
    print("server RSS MiB every ~10 s (total/anonymous): %s" % ", ".join("%d/%d" % (r[1], r[2]) for r in rows))
    print("server anonymous memory: max %d MiB, last %d MiB; second half of the run %+d MiB" % (max(anon), anon[-1], half[-1] - half[0]))
    # bounded = no trend after the warm-up (the first third: the job and its answers grow from
    # nothing). A single peak says little where the heap swings by hundreds of MiB as scans come
    # and go, and on a machine shared with other work; the trend of every sample does: the
    # Theil-Sen slope (the median of the slopes between every pair of samples — robust to swings
    # and outliers) over the last two thirds, times their span, must stay within 10% of their
    # median level (at least 32 MiB). The least-squares slope is printed beside it.
    ts = [r[0] for r in rows]
    k = len(anon) // 3
    t2, a2 = ts[k:], anon[k:]
    if len(a2) >= 6 and t2[-1] > t2[0]:
        pairs = sorted((a2[j] - a2[i]) / (t2[j] - t2[i]) for i in range(len(a2))
                       for j in range(i + 1, len(a2)) if t2[j] > t2[i])
        ts_slope = pairs[len(pairs) // 2]
        mt, ma = sum(t2) / len(t2), sum(a2) / len(a2)
        ls_slope = sum((t - mt) * (a - ma) for t, a in zip(t2, a2)) / sum((t - mt) ** 2 for t in t2)
        span, level = t2[-1] - t2[0], sorted(a2)[len(a2) // 2]
        grew = ts_slope * span
        print("server anonymous memory trend after the warm-up (t >= %d s): Theil-Sen %+.1f MiB/min "
              "(least squares %+.1f MiB/min), %+.0f MiB over %d s at a median of %d MiB"
              % (t2[0], ts_slope * 60, ls_slope * 60, grew, span, level))
        print("server anonymous memory bounded: %s (trend %+.0f MiB over the span, allowed %d MiB)"
              % ("yes" if grew <= max(0.1 * level, 32) else "NO", grew, max(0.1 * level, 32)))
    else:
        print("server anonymous memory bounded: run too short to tell (18 samples or more needed)")
heap = [l.split() for l in open(sys.argv[8]) if len(l.split()) == 2]
if heap:
    print("server malloc heap MiB every ~10 s (in use/freed but kept): %s" % ", ".join("%s/%s" % tuple(h) for h in heap))
    # Which side moves: what malloc has in use (live data and what scans hold while they run),
    # or the anonymous memory beyond it (freed memory the arenas keep resident, thread stacks).
    # Samples paired in order (each heap reading is taken right after its RSS reading).
    n = min(len(heap), len(rows))
    k = n // 3
    for name, v in (("in use", [int(h[0]) for h in heap[:n]]),
                    ("anonymous beyond in use", [r[2] - int(h[0]) for r, h in zip(rows, heap)])):
        t2, v2 = [r[0] for r in rows[k:n]], v[k:n]
        slopes = sorted((v2[j] - v2[i]) / (t2[j] - t2[i]) for i in range(len(v2))
                        for j in range(i + 1, len(v2)) if t2[j] > t2[i])
        if slopes:
            print("  heap %s after the warm-up: median %d MiB, low %d, high %d, Theil-Sen %+.1f MiB/min"
                  % (name, sorted(v2)[len(v2) // 2], min(v2), max(v2), slopes[len(slopes) // 2] * 60))
m = open(sys.argv[7]).read()
cache = dict(re.findall(r'answer_cache_lookups_total\{outcome="(\w+)"\} (\S+)', m))
if cache:
    print("answer cache: %s hits, %s joined a scan in flight, %s scans" % (cache.get("hit"), cache.get("joined"), cache.get("miss")))
if q["requests"]:
    print("REST queries (%d concurrent clients): %d, statuses %s, p50 %.3f s, p95 %.3f s, p99 %.3f s, max %.3f s" % (q.get("clients", 0), q["requests"], q["by_status"], q["p50_s"], q["p95_s"], q["p99_s"], q["max_s"]))
else:
    print("queries: none")
for p, v in q["per_endpoint_p99_s"].items():
    print("  p99 %-40s %-9s statuses %s" % (p, "%.3f s" % v if v is not None else "-",
                                             q.get("per_endpoint_status", {}).get(p)))
top = {k: int(float(v)) for k, v in re.findall(r'^rankscope_(top_from_\w+)_total (\S+)', m, re.M)}
if top:
    print("top answers: %d from the job's totals, %d from records" % (top.get("top_from_totals", 0), top.get("top_from_records", 0)))
budget = re.search(r'^rankscope_answers_over_budget_total (\S+)', m, re.M)
if budget:
    print("answers refused over answer-budget-mb: %d" % int(float(budget.group(1))))
sys.exit(0 if ok and pace else 1)
PY
