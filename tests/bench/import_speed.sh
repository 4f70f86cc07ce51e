#!/usr/bin/env bash
# Import speed: the trace importer alone (rs-import-bench), `rankscope analyze` end to end (import
# into a temporary store + the report), and a plain `python3 json.load` of the same file as the
# floor, side by side, RUNS times each, on generated Kineto traces of SIZES MB (the real H200
# fixture's events repeated). Prints one line per run and the medians: MB/s and peak RSS.
# usage: tests/bench/import_speed.sh [RUNS] [SIZES_MB...]   (defaults: 3 runs, 100 and 520 MB)
set -euo pipefail
cd "$(dirname "$0")/../.."
BUILD=${BUILD:-build}
RUNS=${1:-3}
shift || true
SIZES=${*:-100 520}
WORK=$(mktemp -d /tmp/rankscope-import-bench.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
FIX=tests/fixtures/kineto-h200x2/fixture_rank0slow_rank0.json.gz

measure() { # label file command...: one JSON line {label, mb_per_s, max_rss_kb}
    local label=$1 file=$2; shift 2
    local size out
    size=$(stat -c %s "$file")
    out=$( { /usr/bin/time -f "%e %M" "$@" >/dev/null 2>"$WORK/cmd.err"; } 2>&1 | tail -1) || true
    tail -1 "$WORK/cmd.err" | grep -qE '^[0-9.]+ [0-9]+$' && out=$(tail -1 "$WORK/cmd.err")
    python3 -c 'import json,sys; s,kb=sys.argv[3].split(); print(json.dumps({"label":sys.argv[1],
"mb":round(int(sys.argv[2])/1e6), "seconds":float(s), "mb_per_s":round(int(sys.argv[2])/1e6/max(float(s),1e-3),1),
"max_rss_kb":int(kb)}))' "$label" "$size" "$out"
}

for mb in $SIZES; do
    python3 tests/bench/make_big_trace.py "$FIX" "$WORK/trace_rank0.json" "$mb" >&2
    for run in $(seq 1 "$RUNS"); do
        measure importer "$WORK/trace_rank0.json" "$BUILD/tests/tools/rs-import-bench" \
            "$WORK/trace_rank0.json"
        measure analyze "$WORK/trace_rank0.json" "$BUILD/bin/rankscope" analyze \
            "$WORK/trace_rank0.json"
        measure python-json.load "$WORK/trace_rank0.json" python3 -c \
            'import json,sys; json.load(open(sys.argv[1]))' "$WORK/trace_rank0.json"
    done | tee "$WORK/runs.jsonl"
    python3 - "$WORK/runs.jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
for label in dict.fromkeys(r["label"] for r in rows):
    rs = [r for r in rows if r["label"] == label]
    sp = [r["mb_per_s"] for r in rs]
    print("median %-18s %5d MB: %7.1f MB/s (%.1f-%.1f), peak RSS %8.1f MB, %d runs" % (
        label, rs[0]["mb"], statistics.median(sp), min(sp), max(sp),
        statistics.median(r["max_rss_kb"] for r in rs) / 1024, len(rs)))
PY
done
