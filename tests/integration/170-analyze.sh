#!/usr/bin/env bash
# `rankscope analyze` on real PyTorch profiler traces from 2 x H200 (tests/fixtures/kineto-h200x2):
# no server; no straggler in the fault-free job, rank 0 with extra GPU work in the other; every
# GPU event of the traces imported; bad input gives a clear error and the documented exit code.
. "$(dirname "$0")/common.sh"
FIX=$ROOT/tests/fixtures/kineto-h200x2

"$BIN/rankscope" analyze "$FIX"/fixture_baseline_rank*.json.gz >"$WORK/base.txt" 2>"$WORK/base.err"
check "baseline: exit 0, both files imported, no straggler" bash -c '
grep -q "imported .*fixture_baseline_rank0.json.gz: rank 0" "$1.err" &&
grep -q "imported .*fixture_baseline_rank1.json.gz: rank 1" "$1.err" &&
grep -q "job fixture_baseline: no straggler" "$1.txt"' _ "$WORK/base"

"$BIN/rankscope" analyze "$FIX" --json >"$WORK/all.json" 2>"$WORK/all.err"
check "a directory of two jobs' files with the same ranks is refused (exit 1, names both files)" \
    grep -q "are both rank 0" "$WORK/all.err"

"$BIN/rankscope" analyze --json "$FIX"/fixture_rank0slow_rank*.json.gz >"$WORK/slow.json" \
    2>"$WORK/slow.err"
check "rank0slow: every GPU event imported (counted independently with python)" python3 -c '
import gzip, json, sys
files = json.load(open(sys.argv[1]))["files"]
for f in files:
    ev = json.load(gzip.open(f["path"]))["traceEvents"]
    gpu = [e for e in ev if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    nccl = [e for e in gpu if e["cat"] == "kernel" and e["name"].startswith("nccl")]
    assert f["kernels"] + f["collectives"] + f["memcpys"] == len(gpu), (f, len(gpu))
    assert f["collectives"] == len(nccl) == 80, f
    assert f["rejected_events"] == 0 and f["world_size"] == 2, f
assert sorted(f["rank"] for f in files) == [0, 1]' "$WORK/slow.json"
check "rank0slow top: GPU time summed and GPU busy (union per rank) = the traces' kernels, counted with python" python3 -c '
import gzip, json, sys
d = json.load(open(sys.argv[1]))
top, scope = d["top"], d["top"]["scope"]
t0, t1, total, busy = None, None, 0.0, 0.0
for f in d["files"]:
    ev = json.load(gzip.open(f["path"]))["traceEvents"]
    gpu = [(e["ts"], e["ts"] + e["dur"]) for e in ev if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    t0 = min([t0] + [a for a, b in gpu] if t0 is not None else [a for a, b in gpu])
    t1 = max([t1] + [b for a, b in gpu] if t1 is not None else [b for a, b in gpu])
    runs = sorted((e["ts"], e["ts"] + e["dur"]) for e in ev if e.get("ph") == "X" and e.get("cat") == "kernel")
    total += sum(b - a for a, b in runs)
    cs, ce = runs[0]
    for a, b in runs[1:]:
        if a > ce:
            busy += ce - cs
            cs, ce = a, b
        else:
            ce = max(ce, b)
    busy += ce - cs
# per second of the span of every GPU record (us), times the ranks: the mean rank
per = (t1 - t0) / 1e6 * 2
assert scope["unit"] == "per_second" and scope["rank_steps"] == 0 and scope["inferred_rank_steps"] == 38, scope
assert abs((scope["until_ns"] - scope["since_ns"]) / 1e3 - (t1 - t0)) < 2, (scope, t1 - t0)
assert abs(top["total_ms"] - total / 1e3 / per) < 1e-3 * top["total_ms"], (top["total_ms"], total / 1e3 / per)
assert abs(top["gpu_busy_ms"] - busy / 1e3 / per) < 1e-3 * top["gpu_busy_ms"], (top["gpu_busy_ms"], busy / 1e3 / per)
assert top["total_ms"] > 1000 > top["gpu_busy_ms"], top  # streams overlap: the sum exceeds wall time, the union does not
assert top["launch_wait"] is None and top["host_sync"] == [], top' "$WORK/slow.json"
check "rank0slow: rank 0 is the straggler, cause extra_work, with its impact" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert d["job"] == "fixture_rank0slow", d["job"]
(v,) = d["stragglers"]["stragglers"]
assert v["rank"] == 0 and v["cause"] == "extra_work", v
assert 0.10 < v["slowdown"] - 1 < 0.30, v["slowdown"]
assert v["impact_s"] > 0.05 and v["last_frac"] > 0.9, v
assert any("gemm" in e.get("kernel", "") for e in v["evidence"]), v["evidence"]' "$WORK/slow.json"
check "rank0slow: NCCL skew — rank 0 last at every AllReduce, rank 1 waits" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["skew"]
assert d["instances"] == 80 and d["unmatched_instances"] == 0, d
r = {x["rank"]: x for x in d["ranks"]}
assert r[0]["last_frac"] == 1.0 and r[1]["wait_ms"] > 100 * max(r[0]["wait_ms"], 0.01), r' \
    "$WORK/slow.json"
check "rank0slow: steps inferred from the NCCL pattern (4 AllReduces per step)" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["steps"]
assert d["steps_source"] == "inferred", d["steps_source"]
for r in d["ranks"]:
    assert r["inferred_period"] == 4 and len(r["steps"]) >= 18, r
    assert 38 < r["median"]["step_ms"] < 48, r["median"]' "$WORK/slow.json"

"$BIN/rankscope" analyze --data "$WORK/kept" --job kept "$FIX"/fixture_rank0slow_rank*.json.gz \
    >"$WORK/kept1.txt" 2>&1
"$BIN/rankscope" analyze --data "$WORK/kept" --job kept "$FIX"/fixture_rank0slow_rank*.json.gz \
    --json >"$WORK/kept2.json" 2>"$WORK/kept2.err"
check "the report's top says what its rank-steps count (the steps table shows 19 inferred per rank)" \
    grep -q "no step markers (38 rank-steps inferred from NCCL, not used to divide): per second" \
    "$WORK/kept1.txt"
check "straggler evidence: no '+0.00 ms per step' lines, no signed zero" bash -c '
grep -q "cause: extra_work" "$1" && grep -q "ms per step" "$1" &&
! grep -E "[+-]0\.00 ms per step" "$1" && ! grep -E "(^|[^0-9.])[+-]0\.0+([^0-9]|$)" "$1"' _ "$WORK/kept1.txt"
check "--data keeps the store; importing the same files again adds nothing" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
k = {r["rank"]: r for r in d["ranks"]["ranks"]}
assert k[0]["kernels"] == 1080 and k[1]["kernels"] == 1020, k' "$WORK/kept2.json"
check "the kept store passes rankscope-server --check" "$BIN/rankscope-server" --data "$WORK/kept" --check

printf '{"traceEvents": [{"ph": "X",, }]}' >"$WORK/broken_rank0.json"
"$BIN/rankscope" analyze "$WORK/broken_rank0.json" >"$WORK/broken.out" 2>&1
rc=$?
check "malformed trace: exit 1, file and byte offset in the error" bash -c '
[ "$1" = 1 ] && grep -q "broken_rank0.json: expected a member name at byte 28" "$2"' _ "$rc" \
    "$WORK/broken.out"
"$BIN/rankscope" analyze "$WORK/nothing*.json" >"$WORK/none.out" 2>&1
rc=$?
check "no such files: exit 2 with the argument named" bash -c '
[ "$1" = 2 ] && grep -q "nothing\*.json: no trace files" "$2"' _ "$rc" "$WORK/none.out"
"$BIN/rankscope" analyze --rank 0 "$FIX"/fixture_baseline_rank*.json.gz >"$WORK/rank.out" 2>&1
rc=$?
check "--rank with several files: exit 2" bash -c '[ "$1" = 2 ] && grep -q "one trace file" "$2"' \
    _ "$rc" "$WORK/rank.out"
# A 20-rank job as a shell-expanded glob (more arguments than the CLI once took), made from one real
# rank's trace with distributedInfo rewritten per rank.
python3 - "$FIX/fixture_baseline_rank0.json.gz" "$WORK/r20" <<'PY'
import gzip, json, os, sys
d = json.load(gzip.open(sys.argv[1]))
os.makedirs(sys.argv[2])
for r in range(20):
    d["distributedInfo"].update(rank=r, world_size=20)
    json.dump(d, open(os.path.join(sys.argv[2], "big_rank%d.json" % r), "w"))
open(os.path.join(sys.argv[2], "config.json"), "w").write('{"lr": 0.1}')
PY
"$BIN/rankscope" analyze --json "$WORK"/r20/big_rank*.json >"$WORK/r20.json" 2>"$WORK/r20.err"
check "20 files as 20 arguments: all imported as 20 ranks" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert sorted(f["rank"] for f in d["files"]) == list(range(20)), d["files"]
assert len(d["ranks"]["ranks"]) == 20' "$WORK/r20.json"
"$BIN/rankscope" analyze --json "$WORK/r20" >"$WORK/r20d.json" 2>"$WORK/r20d.err"
check "a directory with a JSON file that is no trace: skipped with a warning, the rest imported" \
    bash -c 'grep -q "warning: skipped .*config.json: not a trace" "$1.err" &&
    python3 -c "import json,sys; assert len(json.load(open(sys.argv[1]))[\"files\"]) == 20" "$1.json"' \
    _ "$WORK/r20d"
"$BIN/rankscope" analyze "$WORK/r20/config.json" >"$WORK/cfg.out" 2>&1
rc=$?
check "a lone file that is no trace: exit 1, said" bash -c '
[ "$1" = 1 ] && grep -q "config.json: not a trace: no traceEvents array" "$2"' _ "$rc" "$WORK/cfg.out"

# One GPU, no distributedInfo, no rank in the name: rank 0 of a one-rank job.
python3 -c '
import gzip, json, sys
d = json.load(gzip.open(sys.argv[1]))
del d["distributedInfo"]
json.dump(d, open(sys.argv[2], "w"))' "$FIX/fixture_baseline_rank0.json.gz" "$WORK/single.json"
"$BIN/rankscope" analyze --json "$WORK/single.json" >"$WORK/single.out" 2>"$WORK/single.err"
rc=$?
check "a lone trace without distributedInfo is rank 0 of a one-rank job (said, exit 0)" bash -c '
[ "$1" = 0 ] && grep -q "says no rank .* taken as rank 0 of a one-rank job" "$2.err" &&
python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
(f,) = d[\"files\"]
assert f[\"rank\"] == 0 and f[\"world_size\"] == 1 and f[\"rank_assumed\"], f
assert f[\"kernels\"] > 0 and len(d[\"ranks\"][\"ranks\"]) == 1, d[\"ranks\"]" "$2.out"' \
    _ "$rc" "$WORK/single"
cp "$WORK/single.json" "$WORK/single2.json"
"$BIN/rankscope" analyze "$WORK/single.json" "$WORK/single2.json" >"$WORK/two.out" 2>&1
rc=$?
check "two traces that say no rank are still refused (which is which?)" bash -c '
[ "$1" = 1 ] && grep -q "does not say its rank" "$2"' _ "$rc" "$WORK/two.out"
# Names from a trace reach the terminal escaped: a kernel named with an escape sequence and a
# newline cannot clear the screen or fake a line of the report (--json keeps them, JSON-escaped).
python3 -c '
import gzip, json, sys
d = json.load(gzip.open(sys.argv[1]))
for e in d["traceEvents"]:
    if e.get("cat") == "kernel" and not e["name"].startswith("nccl"):
        e["name"] = "\x1b[2J\x1b]0;owned\x07evil\nrank 9 is a straggler"
json.dump(d, open(sys.argv[2], "w"))' "$FIX/fixture_baseline_rank0.json.gz" "$WORK/evil_rank0.json"
"$BIN/rankscope" analyze "$WORK/evil_rank0.json" >"$WORK/evil.txt" 2>&1
"$BIN/rankscope" analyze --json "$WORK/evil_rank0.json" >"$WORK/evil.json" 2>/dev/null
check "hostile kernel names are shown escaped in tables, kept as they are in --json" bash -c '
! grep -q $'"'"'\x1b'"'"' "$1.txt" && ! grep -q $'"'"'\x07'"'"' "$1.txt" &&
grep -q "\\\\x1b\[2J\\\\x1b\]0;owned\\\\x07evil\\\\x0arank 9 is a straggler" "$1.txt" &&
! grep -q "^rank 9 is a straggler" "$1.txt" &&
python3 -c "
import json, sys
d = json.load(open(sys.argv[1]))
assert any(k[\"name\"].startswith(\"\x1b[2J\") for k in d[\"top\"][\"kernels\"]), d[\"top\"][\"kernels\"][:2]" "$1.json"' \
    _ "$WORK/evil"
# A trace file's name reaches the terminal escaped too (analyze's progress and summary lines).
mkdir -p "$WORK/evil-name"
cp "$FIX/fixture_baseline_rank0.json.gz" "$WORK/evil-name/"$'ev\x1b[31mil\nRS-FAKE'"_rank0.json.gz"
"$BIN/rankscope" analyze "$WORK"/evil-name/*.json.gz >/dev/null 2>"$WORK/evil-name.err"
check "a hostile file name is shown escaped on stderr, on one line" bash -c '
! grep -q $'"'"'\x1b'"'"' "$1" && grep -q "ev\\\\x1b\[31mil\\\\x0aRS-FAKE_rank0.json.gz: rank 0" "$1" &&
! grep -q "^RS-FAKE" "$1"' _ "$WORK/evil-name.err"
# killed while importing (the second trace is a FIFO this shell holds open and never writes:
# analyze waits in its read, its temporary store long open): nothing is left in TMPDIR
mkdir -p "$WORK/tmpdir" && mkfifo "$WORK/stuck.json"
exec 3<>"$WORK/stuck.json"
TMPDIR=$WORK/tmpdir "$BIN/rankscope" analyze "$FIX"/fixture_baseline_rank0.json.gz "$WORK/stuck.json" \
    >/dev/null 2>&1 &
STUCK=$!
# waits until analyze sits in read(2) on the FIFO (/proc/PID/syscall: number 0, then the fd), by
# then its store is open and gone from TMPDIR; this shell is its parent, so it may look
reading() {
    local i nr fd
    for i in $(seq 300); do
        read -r nr fd _ <"/proc/$STUCK/syscall" 2>/dev/null
        [ "$nr" = 0 ] && [ "$(readlink "/proc/$STUCK/fd/$((fd))")" = "$WORK/stuck.json" ] && return 0
        sleep 0.1
    done
    return 1
}
reading
R=$?
check "analyze killed with its temporary store open leaves nothing in TMPDIR" sh -c "
    [ $R = 0 ] && kill -9 $STUCK && sleep 0.2 && [ -z \"\$(ls -A '$WORK/tmpdir')\" ]"
wait $STUCK 2>/dev/null
exec 3>&-
finish
