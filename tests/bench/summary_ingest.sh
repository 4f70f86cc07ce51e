#!/usr/bin/env bash
# Sustained ingest of rank-window summaries with acknowledgements (issue 4): tests/tools/
# rs-summary-load stands in for the summarizing agents (rankscope-agent --summarize) of a
# RANKS-GPU job — 8 ranks per node, one request per node at a time, each summary 60 kernel totals,
# 2 copy totals, a measured step and 4 AllReduce records — against a fresh server with its
# evaluator on, for SECONDS per run. WINDOWS windows per rank in each request: 1 = every window
# sent on its own; 5 = agents that flush every 5 s with 1 s windows (--flush-ms 5000
# --summary-window-s 1). The loader runs on the same machine. Prints each run and the median of
# RUNS runs, and per run what the server did (requests per group commit, bytes written per
# summary, the store file's size, the newest evaluation's duration, and the CPU time of the
# writer thread "rs-writer" as a share of the run: the rest of its time it waits, mostly in the
# commit's fdatasync, or for batches), the loader's own CPU time as a share of one core, and the
# server's resident memory at the end: anonymous (its heap) and file-backed (the store's pages LMDB
# maps, reclaimable by the kernel). SERVER_ARGS adds server
# options (e.g. "--evaluate-ms 0" to measure without the evaluator). OFFERED=N sends N summaries
# per second on a schedule (a cluster of RANKS GPUs at N / RANKS Hz) instead of as fast as the
# server acknowledges, and prints how far behind schedule the loader fell in each 5 s interval:
# whether the server keeps up with such a cluster. CHECK=1 runs
# `rankscope-server --check` on each run's store afterwards and prints each database's bytes and
# how full its leaf pages are. Each run also prints how busy the store's one writer thread was in
# each 30 s (writing batches + tasks such as the evaluator's step summaries, server counters
# writer_batches_ns / writer_tasks_ns): near 100% it is the bottleneck.
# usage: [SERVER_ARGS=...] tests/bench/summary_ingest.sh [RANKS] [SECONDS] [RUNS] [WINDOWS] [AGENTS]
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/lib.sh
TOOLS=${BUILD:-build}/tests/tools
RANKS=${1:-20480}
SECONDS_PER_RUN=${2:-30}
RUNS=${3:-3}
WINDOWS=${4:-1}
AGENTS=${5:-256}
rates=()
for run in $(seq "$RUNS"); do
    WORK=$(mktemp -d)
    start server "$BIN/rankscope-server" --data "$WORK/data" --http 127.0.0.1:0 \
        --listen tcp://127.0.0.1:0 --ready-file "$WORK/server.ready" --ingest-contexts "$AGENTS" ${SERVER_ARGS:-}
    wait_file "$WORK/server.ready"
    # the evaluator's evaluations as they come: (seconds into the run, duration ms), from /healthz
    # every 2 s, in the background
    http=$(field "$WORK/server.ready" http)
    (t0=$(date +%s); last=0
     while [ -e "$WORK/server.ready" ]; do
         sleep 2
         curl -sf "http://$http/healthz" 2>/dev/null | python3 -c 'import json, sys
d = json.load(sys.stdin)
e, c = d["evaluator"], d["counters"]
if e["evaluations"] != int(sys.argv[1]):
    print(e["evaluations"], int(sys.argv[2]), e["last_duration_ms"])
with open(sys.argv[3], "a") as f:
    print(sys.argv[2], c["writer_batches_ns"], c["writer_tasks_ns"], file=f)' "$last" "$(( $(date +%s) - t0 ))" \
             "$WORK/writer" >>"$WORK/evaluations" 2>/dev/null || true
         last=$(tail -n 1 "$WORK/evaluations" 2>/dev/null | cut -d' ' -f1); last=${last:-0}
     done) &
    poller=$!
    # the loader's own CPU time (user + system, bash's `time`): it shares the cores with the server
    TIMEFORMAT='%U %S'
    { time "$TOOLS/rs-summary-load" "$(field "$WORK/server.ready" listen)" "$RANKS" \
        "$SECONDS_PER_RUN" "$AGENTS" 8 "$WINDOWS" "${OFFERED:-0}" >"$WORK/out" 2>"$WORK/progress"; } 2>"$WORK/loader-cpu"
    out=$(cat "$WORK/out")
    rate=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["per_second"])' "$out")
    echo "run $run: $out (5 s intervals: $(sed 's/.*: \([0-9]*\) summaries.*/\1/' "$WORK/progress" | paste -sd ' '))"
    if [ "${OFFERED:-0}" != 0 ]; then
        echo "  behind schedule per 5 s interval (s): $(sed 's/.*behind schedule \([0-9.]*\) s/\1/' "$WORK/progress" | paste -sd ' ')"
    fi
    # what the server did for it: group commits, bytes it wrote (write(2) family, /proc), the
    # store's file, the evaluator, and the writer thread's CPU time (utime + stime, in ticks)
    writer_ticks=$(for t in /proc/$PID_server/task/*; do
        if [ "$(cat "$t/comm")" = rs-writer ]; then awk '{print $14 + $15}' "$t/stat"; fi; done)
    curl -s "http://$(field "$WORK/server.ready" http)/healthz" |
        python3 -c 'import json, os, sys
d = json.load(sys.stdin)
c, e = d["counters"], d["evaluator"]
summaries = json.loads(sys.argv[1])["summaries"]
written = int([l.split()[1] for l in open(sys.argv[2]) if l.startswith("wchar:")][0])
per_commit = c["batches_committed"] / max(1, c["commits"])
seconds = json.loads(sys.argv[1])["seconds"]
writer_cpu = int(sys.argv[4] or 0) / os.sysconf("SC_CLK_TCK") / max(1e-9, seconds)
loader_cpu = sum(float(x) for x in open(sys.argv[5]).read().split()) / max(1e-9, seconds)
status = {l.split(":")[0]: l.split()[1] for l in open(sys.argv[6]) if l.startswith("Rss")}
print("  server: %.0f requests per commit, %.1f KiB written per summary, store file %.1f GiB, "
      "%d evaluations, the last %d ms; writer thread on CPU %.0f%% of the run; the loader %.0f%% "
      "of one core; the server resident at the end: %.2f GiB anonymous (heap), %.2f GiB of the "
      "mapped store" % (
      per_commit, written / max(1, summaries) / 1024, int(sys.argv[3]) / 2**30,
      e["evaluations"], e["last_duration_ms"], 100 * writer_cpu, 100 * loader_cpu,
      int(status["RssAnon"]) / 2**20, int(status["RssFile"]) / 2**20))' \
            "$out" "/proc/$PID_server/io" "$(stat -c %s "$WORK/data/data.mdb")" "${writer_ticks:-0}" \
            "$WORK/loader-cpu" "/proc/$PID_server/status"
    rates+=("${rate%.*}")
    kill "$poller" 2>/dev/null || true
    wait "$poller" 2>/dev/null || true
    if [ -s "$WORK/writer" ]; then # the writer thread's busy time per 30 s (counters.h)
        echo "  writer busy per 30 s (batches + tasks, % of the time): $(python3 -c 'import sys
rows = [tuple(map(int, l.split())) for l in open(sys.argv[1]) if len(l.split()) == 3]
out, prev = [], (0, 0, 0)
for t, b, k in rows:
    if t - prev[0] >= 30:
        dt = (t - prev[0]) * 1e9
        out.append("%d + %d" % (round(100 * (b - prev[1]) / dt), round(100 * (k - prev[2]) / dt)))
        prev = (t, b, k)
print(", ".join(out))' "$WORK/writer")"
    fi
    if [ -s "$WORK/evaluations" ]; then
        echo "  evaluations (s into the run: duration ms): $(awk '{printf "%s%d: %d", (NR > 1 ? ", " : ""), $2, $3}' "$WORK/evaluations")"
    fi
    stop_all
    if [ "${CHECK:-0}" = 1 ]; then # where the store's bytes are, and how full its pages are
        "$BIN/rankscope-server" --check --data "$WORK/data" | grep '^check: bytes per database' |
            sed 's/^check:/  store:/'
    fi
    rm -rf "$WORK"
done
python3 -c "import statistics,sys; r=[int(x) for x in sys.argv[1:]]; print(f'rank-window summaries ($RANKS ranks, $WINDOWS per rank per request): median {statistics.median(r):.0f}/s (min {min(r)}, max {max(r)}, {len(r)} runs of $SECONDS_PER_RUN s)')" "${rates[@]}"
