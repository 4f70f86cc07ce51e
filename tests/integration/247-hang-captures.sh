#!/usr/bin/env bash
# Hang-triggered captures end to end (issue 25: "when it suspects a straggler or a hang it captures
# the suspect and a healthy peer"), with the real server, agent and CLI and the simulator as the
# collectors: kernels only while a capture runs (--kernels-in-captures, as a collector tracing in
# rare windows), NCCL's exact sequence numbers (--nccl-plugin). At step 20 rank 2 never arrives at
# its AllReduce; the others report it in flight for 12 s. A hung rank's collector still answers
# (its flush thread runs while the training thread is stuck), so the hang watch's capture of the
# rank that never arrived and of a waiting rank runs during the hang, and its evidence reaches the
# hang verdict: rank 2 gave its GPU no work while traced (stuck on the host), rank 0 waits inside
# the collective — in REST and `rankscope hangs`. Job busy hangs the same way at the same time,
# but its rank 2 keeps its GPU busy with other kernels (--hang-busy): its capture says late, not
# stuck. The evaluator runs too (its straggler captures are paced apart from the hang's).
. "$(dirname "$0")/common.sh"
start_server --hang-check-ms 200 --evaluate-ms 500 --auto-capture-s 2 --capture-timeout-s 6
start_agent
hang() { # JOB [options]: a 4-rank job whose rank 2 never arrives at step 20's AllReduce
    local job=$1; shift
    exec "$BIN/rankscope-sim" --job "$job" --ranks 4 --steps 40 --onset-step 20 --hang-rank 2 \
        --hang-s 12 --nccl-plugin --kernels-in-captures --speed 0 --agent "$WORK/agent.sock" \
        --log-level warn "$@" >"$WORK/$job.json"
}
hang hung &
SIM=$!
hang busy --hang-busy &
BUSY=$!
# until both captures of each hang are done (or 30 s)
both_done() {
    curl -sf "$HTTP/v1/jobs/$1/hangs" >"$WORK/$1-during.json" 2>/dev/null && python3 -c '
import json, sys
(h,) = json.load(open(sys.argv[1]))["hangs"]
sys.exit(0 if len(h["captures"]) == 2 and all(c["state"] == "done" for c in h["captures"]) else 1)' \
        "$WORK/$1-during.json" 2>/dev/null
}
for _ in $(seq 300); do
    both_done hung && both_done busy && break
    sleep 0.1
done
"$BIN/rankscope" --server "$HTTP" hangs hung >"$WORK/cli.txt" 2>&1
"$BIN/rankscope" --server "$HTTP" hangs busy >"$WORK/busy-cli.txt" 2>&1
cp "$WORK/server.log" "$WORK/server-during.txt"
wait "$SIM"
echo "sim exit $?" >"$WORK/sim.exit"
wait "$BUSY"
echo "sim exit $?" >>"$WORK/sim.exit"
check "the simulators ran to the hang and through it" bash -c '[ "$(grep -c "sim exit 0" "$1")" = 2 ]' _ "$WORK/sim.exit"
check "the hang watch asked for a capture of rank 2 (never arrived) and waiting rank 0, logged and audited" bash -c '
grep -q "RS-CAPTURE-AUTO job hung: capture [0-9]* of rank 2 (and [0-9]* of healthy peer 0) for 2 s: hang: AllReduce seq 80 in flight" "$1" &&
grep -q "RS-AUDIT who=evaluator .*action=capture job=hung ranks=2 first_rank=2 kinds=kernels,pc_sampling seconds=2 result=202" "$1"' _ "$WORK/server-during.txt"
check "REST: the hang verdict carries both captures, done during the hang, with what each says" python3 -c '
import json, sys
(h,) = json.load(open(sys.argv[1]))["hangs"]
cs = {c["role"]: c for c in h["captures"]}
assert set(cs) == {"never_arrived", "waiting"}, h["captures"]
a, w = cs["never_arrived"], cs["waiting"]
assert a["rank"] == 2 and w["rank"] == 0, (a, w)
for c in (a, w):
    assert c["who"] == "evaluator" and c["state"] == "done" and "hang: AllReduce seq 80" in c["reason"], c
    assert c["requested_ns"] >= h["since_ns"] and c["started_ns"] < c["ended_ns"], c
    assert 1.5e9 < c["ended_ns"] - c["started_ns"] < 4e9, c  # its 2 s, to a flush
    assert "kernels" in c["ran_kinds"] and c["records"]["kernels"] == 0, c  # nobody computes in a hang
assert a["reading"].startswith("no kernel in the") and "stuck on the host" in a["reading"], a
assert "waits inside the collective" in w["reading"], w' "$WORK/hung-during.json"
check "CLI: rankscope hangs shows the captures and their readings" bash -c '
grep -q "capture [0-9]* of rank 2 (never arrived), done: no kernel in the .* stuck on the host" "$1" &&
grep -q "capture [0-9]* of rank 0 (waiting), done: no kernel finished in the .* waits inside the collective" "$1"' _ "$WORK/cli.txt"
check "the captured ranks' collectors started and ended their captures (the hung one too)" python3 -c '
import json, sys
for f in sys.argv[1:]:
    d = json.load(open(f))
    assert d["captures"]["started"] >= 2 and d["captures"]["done"] >= 2 and d["captures"]["failed"] == 0, d["captures"]' "$WORK/hung.json" "$WORK/busy.json"
for _ in $(seq 50); do grep -q RS-HANG-CLEARED "$WORK/server.log" && break; sleep 0.1; done
check "job busy: its rank 2 ran kernels while traced and never arrived: late with other work, not stuck" python3 -c '
import json, sys
(h,) = json.load(open(sys.argv[1]))["hangs"]
cs = {c["role"]: c for c in h["captures"]}
a, w = cs["never_arrived"], cs["waiting"]
assert a["rank"] == 2 and a["state"] == "done" and a["records"]["kernels"] >= 200, a  # 5 ms kernels for 2 s
assert a["reading"].startswith("ran %d kernels in the" % a["records"]["kernels"]) and "not stuck" in a["reading"], a
assert w["rank"] == 0 and w["records"]["kernels"] == 0 and "waits inside the collective" in w["reading"], w' "$WORK/busy-during.json"
check "CLI of job busy: the reading of rank 2" grep -q "capture [0-9]* of rank 2 (never arrived), done: ran [0-9]* kernels in the .* not stuck" "$WORK/busy-cli.txt"
check "cleared when it completed" grep -q "RS-HANG-CLEARED job hung: AllReduce seq 80" "$WORK/server.log"
finish
