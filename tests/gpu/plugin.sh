#!/usr/bin/env bash
# The NCCL profiler plugin on one GPU (a world-size-1 communicator, tests/gpu/nccl_plugin.py),
# next to a server and an agent from gpu-bundle/ (tests/gpu/bundle.sh):
#   1. records: every grouped send/recv of the job stored with NCCL's communicator hash, an exact
#      sequence and GPU times; the job's collector lines (RANKSCOPE_DEBUG) and NCCL's own
#      (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,PROFILE: which plugin it loaded);
#   2. cost per operation: the same loop with the plugin and without (collector injected both
#      times, NCCL_PROFILER_PLUGIN set or not), $PAIRS alternating pairs, $OPS operations each;
#   3. a hang: a send/recv queued behind torch.cuda._sleep($HANG_S s) on its stream, with
#      RANKSCOPE_HANG_MS=$HANG_MS: the rank's condition polled from the server every 0.5 s
#      (in_flight, then cleared) and the collector's stderr line, time-stamped.
#   4. with PAIRS_PAR=N (and PAR_ONLY=1: this part alone): N concurrent pairs — two processes of
#      $OPS_PAR operations started together, their timed loops begun at the same second
#      (START_AT), on CPUs $CPUS_A and $CPUS_B (swapped every pair), side a without the plugin,
#      side b with it (kind on) or without (kind off: the A/A pair), kinds rotated over $PAR_KINDS
#      ("on on off"); per pair b - a of the wall and of the calling thread's CPU time per
#      operation, and b / a of the wall; medians with a distribution-free and a bootstrap 95%
#      interval (paired_stats.py), per kind.
# Leaves $OUT/plugin-summary.txt, $OUT/plugin-results.tar.gz (and $OUT/plugin-pairs.jsonl,
# $OUT/plugin-pairs.txt with PAIRS_PAR).
. "$(dirname "$0")/common.sh"
OPS=${OPS:-2000} PAIRS=${PAIRS:-4} HANG_S=${HANG_S:-8} HANG_MS=${HANG_MS:-2000}
PAIRS_PAR=${PAIRS_PAR:-0} OPS_PAR=${OPS_PAR:-100000} PAR_KINDS=${PAR_KINDS-on on off}
CPUS_A=${CPUS_A:-2-5} CPUS_B=${CPUS_B:-6-9} PAR_LEAD=${PAR_LEAD:-12}
R=$W/plugin
mkdir -p "$R"
SO=$B/lib/librankscope.so
stamp() { while IFS= read -r l; do printf '%s %s\n' "$(date +%s.%N)" "$l"; done; }
job() { # NAME PLUGIN(0/1) HANG_S [extra env...]
    local name=$1 plugin=$2 hang=$3
    shift 3
    local -a vars=(RANKSCOPE_JOB_ID="$name" RANKSCOPE_AGENT_SOCKET="$W/agent.sock" RANKSCOPE_DEBUG=1
                   RANKSCOPE_HANG_MS="$HANG_MS" CUDA_INJECTION64_PATH="$SO"
                   LD_LIBRARY_PATH="$CUPTI_DIR:${LD_LIBRARY_PATH:-}" PYTHONUNBUFFERED=1 "$@")
    [ "$plugin" = 1 ] && vars+=(NCCL_PROFILER_PLUGIN="$SO")
    [ -n "${START_AT:-}" ] && vars+=(START_AT="$START_AT")
    local -a pin=()
    [ -n "${PIN:-}" ] && pin=(taskset -c "$PIN")
    env "${vars[@]}" "${pin[@]}" timeout 120 python3 tests/gpu/nccl_plugin.py "$OPS" "$hang" "$HTTP" "$name" \
        >"$R/$name.json" 2> >(stamp >"$R/$name.err")
    echo "$name exit $?" >>"$R/exits.txt"
}
{ nvidia-smi -L; python3 -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())'; } >"$R/env.txt" 2>&1
daemons_up
# par_pairs: the concurrent pairs of part 4
par_pairs() {
    local i kind ca cb start
    local -a kinds
    read -ra kinds <<<"$PAR_KINDS"
    : >"$OUT/plugin-pairs.jsonl"
    for i in $(seq "$PAIRS_PAR"); do
        [ -n "${DEADLINE:-}" ] && [ "$SECONDS" -ge "$DEADLINE" ] && break
        kind=${kinds[$(((i - 1) % ${#kinds[@]}))]}
        ca=$CPUS_A cb=$CPUS_B
        [ $((i % 2)) = 0 ] && ca=$CPUS_B cb=$CPUS_A
        start=$(($(date +%s) + PAR_LEAD))
        OPS=$OPS_PAR START_AT=$start PIN=$ca job "par-$i-a" 0 0 &
        local pa=$!
        OPS=$OPS_PAR START_AT=$start PIN=$cb job "par-$i-b" "$([ "$kind" = on ] && echo 1 || echo 0)" 0
        wait $pa
        printf '{"pair":%d,"kind":"%s","a":%s,"b":%s}\n' "$i" "$kind" \
            "$(tail -1 "$R/par-$i-a.json" 2>/dev/null | grep '^{' || echo null)" \
            "$(tail -1 "$R/par-$i-b.json" 2>/dev/null | grep '^{' || echo null)" >>"$OUT/plugin-pairs.jsonl"
    done
    python3 - "$OUT/plugin-pairs.jsonl" <<'PY' | tee "$OUT/plugin-pairs.txt"
import json, os, statistics as st, sys
sys.path.insert(0, os.path.join(os.getcwd(), "tests/gpu"))
from paired_stats import boot_ci, fmt_ci, median_ci
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
for kind in sorted({r["kind"] for r in rows}):
    ok = [r for r in rows if r["kind"] == kind and r["a"] and r["b"]]
    print(f"== b ({'plugin' if kind == 'on' else 'no plugin'}) against a (no plugin): {len(ok)} pairs")
    for key, how in (("wall_us_per_op", "diff"), ("thread_cpu_us_per_op", "diff"), ("wall_us_per_op", "ratio")):
        xs = [r["b"][key] - r["a"][key] if how == "diff" else r["b"][key] / r["a"][key] for r in ok]
        if xs:
            print(f"  {key:22s} {how:5s} median {st.median(xs):+.4f} {fmt_ci(median_ci(xs))} boot "
                  f"{fmt_ci(boot_ci(xs))} (range {min(xs):+.4f} .. {max(xs):+.4f}); a: median "
                  f"{st.median(r['a'][key] for r in ok):.3f}, b: {st.median(r['b'][key] for r in ok):.3f}")
PY
}
if [ "$PAIRS_PAR" -gt 0 ] 2>/dev/null; then
    par_pairs
fi
if [ "${PAR_ONLY:-0}" = 1 ]; then
    daemons_down
    tar czf "$OUT/plugin-results.tar.gz" -C "$W" plugin
    rm -rf "$W"
    exit 0
fi
job plugin-records 1 0 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,PROFILE
for i in $(seq "$PAIRS"); do
    job "cost-on-$i" 1 0
    job "cost-off-$i" 0 0
done
job plugin-hang 1 "$HANG_S"
sleep 2
for j in plugin-records plugin-hang; do
    LD_LIBRARY_PATH=$B/lib "$B/bin/rs-store-dump" "$W/data" "$j" collectives >"$R/$j.colls" 2>&1
    LD_LIBRARY_PATH=$B/lib "$B/bin/rs-store-dump" "$W/data" "$j" >"$R/$j.store" 2>&1
done
daemons_down
cp "$W/server.log" "$W/agent.log" "$R/" 2>/dev/null
python3 - "$R" "$OPS" >"$OUT/plugin-summary.txt" <<'EOF'
import glob, json, os, statistics, sys
R, OPS = sys.argv[1], int(sys.argv[2])
def load(p):
    try:
        return json.loads(open(p).read().strip().splitlines()[-1])
    except Exception as e:
        return {"error": str(e)}
rec = load(f"{R}/plugin-records.json")
colls = [json.loads(l) for l in open(f"{R}/plugin-records.colls") if l.startswith("{")]
exact = [c for c in colls if c["seq_exact"]]
timed = [c for c in exact if c["dur_ns"] > 0]
print("records job:", {k: rec.get(k) for k in ("nccl_version", "ops", "wall_us_per_op", "data_ok")})
print(f"collective records stored: {len(colls)}, seq_exact: {len(exact)}, with GPU duration: {len(timed)}"
      f" (expected {OPS + 50} grouped send/recv; send and recv to self share a key)")
if timed:
    d = sorted(c["dur_ns"] for c in timed)
    print(f"GPU duration ns: min {d[0]} median {d[len(d)//2]} max {d[-1]}; comms {sorted({c['comm'] for c in exact})}")
    seqs = sorted(c["seq"] & 0xffffffff for c in exact)
    print(f"p2p sequence numbers: {seqs[:3]} ... {seqs[-3:]}, distinct {len(set(seqs))}")
on = [load(f)["wall_us_per_op"] for f in sorted(glob.glob(f"{R}/cost-on-*.json")) if "wall_us_per_op" in load(f)]
off = [load(f)["wall_us_per_op"] for f in sorted(glob.glob(f"{R}/cost-off-*.json")) if "wall_us_per_op" in load(f)]
if on and off:
    diffs = [a - b for a, b in zip(on, off)]
    print(f"cost per grouped send/recv (us, wall, {OPS} ops/run): plugin {['%.2f' % x for x in on]}"
          f" no plugin {['%.2f' % x for x in off]}; paired differences {['%.2f' % x for x in diffs]},"
          f" median {statistics.median(diffs):.2f}")
h = load(f"{R}/plugin-hang.json")
hang = h.get("hang", {})
print("hang:", hang)
first_in = next((p for p in h.get("polls", []) if isinstance(p[1], list) and "in_flight" in p[1]), None)
cleared = None
if first_in:
    cleared = next((p for p in h["polls"] if p[0] > first_in[0] and isinstance(p[1], list) and "in_flight" not in p[1]), None)
print("server: first in_flight poll:", first_in)
print("server: first poll cleared after:", cleared)
if first_in and hang.get("enqueued_at"):
    print(f"in_flight seen {first_in[0] - hang['enqueued_at']:.2f} s after the enqueue; completed "
          f"{hang['completed_at'] - hang['enqueued_at']:.2f} s after it;"
          f" cleared seen {cleared[0] - hang['completed_at']:.2f} s after completion" if cleared else "")
for f in ("plugin-records.err", "plugin-hang.err"):
    lines = [l.rstrip() for l in open(f"{R}/{f}") if "rankscope" in l or "PROFILER" in l.upper() or "Profiler" in l]
    print(f"--- {f}:"); print("\n".join(lines[:25]))
print(open(f"{R}/exits.txt").read())
EOF
tar czf "$OUT/plugin-results.tar.gz" -C "$W" plugin
cat "$OUT/plugin-summary.txt"
rm -rf "$W"
