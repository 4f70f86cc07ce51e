#!/usr/bin/env bash
# GPU telemetry (issue 26) end to end with a stand-in NVML (tests/tools/fake_nvml.c) loaded by the
# real agent: readings reach the store under the ranks whose collectors reported each GPU's UUID;
# GET /v1/jobs/{job}/gpus, `rankscope gpus` and /metrics show them; a straggler whose GPU is
# power-capped (or logs ECC errors and XIDs) gets that as hardware evidence and its healthy peers
# get none; an NVML that is missing, fails to initialize, lacks functions, fails one query or
# hangs never stops the agent or delays the jobs' records.
. "$(dirname "$0")/common.sh"
FAKE=$ROOT/${BUILD:-build}/tests/tools/libfake_nvml.so
FAKE_OLD=$ROOT/${BUILD:-build}/tests/tools/libfake_nvml_old.so
uuid() { printf 'GPU-5a11%04x-0000-4000-8000-%012x' "$1" "$2"; } # the simulator's (seed, rank)
export FAKE_NVML_SCRIPT=$WORK/nvml.script
{
    echo "# 4 GPUs of seed 1; rank 2's held by its power cap 78% of the time, at 1,410 MHz"
    echo "gpu $(uuid 1 0)"
    echo "gpu $(uuid 1 1)"
    echo "gpu $(uuid 1 2) sm=1410 reasons=0x4 power_frac=0.78 power=699 temp=83"
    echo "gpu $(uuid 1 3)"
    echo "# seed 2: rank 1 logs uncorrected ECC errors (and an XID, below), its link trained at x8"
    echo "gpu $(uuid 2 0)"
    echo "gpu $(uuid 2 1) ecc_u_per_s=2 width=8"
    echo "gpu $(uuid 2 2)"
    echo "gpu $(uuid 2 3)"
    echo "# a GPU no rank uses, whose NVML answers what no hardware reaches: those fields are left"
    echo "# out of its readings (else the encoder would refuse the whole telemetry batch)"
    echo "gpu GPU-weird sm=70000 temp=999 util=250"
    echo "# one query fails on every GPU (GPU lost): only its field goes"
    echo "fail nvmlDeviceGetPcieReplayCounter 15"
} >"$FAKE_NVML_SCRIPT"
start_server --evaluate-ms 200
start_agent --nvml-library "$FAKE" --gpu-interval-ms 100 --gpu-send-s 1 \
    --metrics-file "$WORK/agent.prom" --metrics-s 1
sim() { # JOB SEED SLOW_RANK
    "$BIN/rankscope-sim" --job "$1" --seed "$2" --ranks 4 --steps 150 --step-ms 20 --speed 1 \
        --slow-rank "$3" --slowdown 0.1 --agent "$WORK/agent.sock" --log-level warn >"$WORK/$1.json"
}
sim capped 1 2
sim faulty 2 1 &
sleep 1.5 # the XID comes while the job runs (in its verdict's window)
echo "xid $(uuid 2 1) 79" >>"$FAKE_NVML_SCRIPT"
wait $!
wait_for_records capped "$WORK/capped.json"
wait_for_records faulty "$WORK/faulty.json"
sleep 2 # the readings of the jobs' last second (sent every second)
curl -s "$HTTP/v1/jobs/capped/gpus" >"$WORK/capped.gpus"
curl -s "$HTTP/v1/jobs/capped/stragglers" >"$WORK/capped.verdict"
curl -s "$HTTP/v1/jobs/faulty/stragglers" >"$WORK/faulty.verdict"

check "gpus: each rank's GPU under its UUID, rank 2 at 1,410 MHz capped, the failing query null" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
g = {x["rank"]: x for x in d["gpus"]}
assert sorted(g) == [0, 1, 2, 3], d
for r, x in g.items():
    assert x["gpu_uuid"] == "GPU-5a110001-0000-4000-8000-%012x" % r and x["samples"] >= 20, x
    assert x["links"]["pcie_replays"] is None and x["links"]["pcie_width"] == 16, x["links"]
    assert x["memory"]["total_mib"] == 81559 and x["power"]["limit_watts"] == 700, x
s = g[2]
assert s["clocks"]["sm_mhz"] == 1410 and s["clocks"]["sm_max_mhz"] == 1980, s["clocks"]
assert s["throttle_share"]["power_cap"] == 1.0, s["throttle_share"]
assert 0.7 < s["violation_share"]["power"] < 0.86, s["violation_share"]
assert s["temperature"]["max_c"] == 83 and s["power"]["watts"] == 699, s
h = g[0]
assert h["clocks"]["sm_mhz"] == 1980 and h["throttle_share"]["power_cap"] == 0, h
for x in g.values():  # busy is not efficient: the simulated GEMMs run on the FMA pipes
    k = x["kernels"]
    assert 0.3 < k["busy_share"] <= 1 and k["tensor_core_share"] == 0, k
assert h["violation_share"]["power"] == 0 and h["errors"]["xids"] == 0, h' "$WORK/capped.gpus"

check "verdict: rank 2 gpu_slow, its evidence the clock and the power cap against its peers" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
(v,) = d["stragglers"]
assert v["rank"] == 2 and v["cause"] == "gpu_slow", v
hw = v["hardware"]
assert hw["telemetry"] and hw["peers_with_telemetry"] == 3, hw
kinds = {(i["kind"], i["what"]): i for i in hw["items"]}
sm = kinds[("sm_clock", "sm_mhz")]
assert sm["value"] == 1410 and sm["peers"] == 1980, sm
assert sm["text"] == "SM clock 1,410 MHz vs peers\u0027 1,980", sm["text"]
cap = kinds[("throttle", "power_cap")]
assert 0.7 < cap["value"] < 0.86 and cap["peers"] == 0, cap
assert cap["text"].startswith("power cap active 7") and "of the window (peers\u0027 0%)" in cap["text"], cap
assert set(k for k, _ in kinds) == {"sm_clock", "throttle"}, kinds
assert "power and cooling" in hw["recommendation"], hw' "$WORK/capped.verdict"

check "verdict: the faulty GPU: ECC errors, the XID and the x8 link; a drain candidate" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
(v,) = d["stragglers"]
assert v["rank"] == 1, v
hw = v["hardware"]
kinds = {(i["kind"], i["what"]): i for i in hw["items"]}
assert kinds[("ecc", "ecc_uncorrected")]["value"] >= 2, kinds
assert kinds[("xid", "xids")]["text"].startswith("XID 79 (1 event"), kinds
assert kinds[("pcie", "pcie_width")]["text"] == "PCIe link x8 of x16 (peers\u0027 x16)", kinds
assert ("sm_clock", "sm_mhz") not in kinds, kinds
assert v["action"] == "drain-candidate" and "dcgmi diag" in hw["recommendation"], v' "$WORK/faulty.verdict"

"$BIN/rankscope" --server "$HTTP" gpus capped >"$WORK/gpus.txt" 2>&1
check "rankscope gpus: a line per rank, rank 2 capped" sh -c "
    grep -q '^rank *2 ' '$WORK/gpus.txt' && grep '^rank *2 ' '$WORK/gpus.txt' | grep -q '1,410/1,980 MHz' &&
    grep '^rank *2 ' '$WORK/gpus.txt' | grep -q 'power cap 100%' &&
    grep '^rank *0 ' '$WORK/gpus.txt' | grep -q '1,980/1,980 MHz'"
check "rankscope gpus --json is the API's answer" sh -c "
    '$BIN/rankscope' --server '$HTTP' gpus capped --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d[\"job\"] == \"capped\" and len(d[\"gpus\"]) == 4, d'"

curl -s "$HTTP/metrics" >"$WORK/server.prom"
check "/metrics: per-GPU gauges labelled job, rank, host and gpu_uuid" sh -c "
    grep -q '^rankscope_gpu_sm_clock_hertz{job=\"capped\",rank=\"2\",host=\"sim-node-000\",gpu_uuid=\"$(uuid 1 2)\"} 1410000000$' '$WORK/server.prom' &&
    grep -q '^rankscope_gpu_sm_clock_hertz{job=\"capped\",rank=\"0\",host=\"sim-node-000\",gpu_uuid=\"$(uuid 1 0)\"} 1980000000$' '$WORK/server.prom' &&
    grep -q '^rankscope_gpu_throttled{job=\"capped\",rank=\"2\",.*,reason=\"power_cap\"} 1$' '$WORK/server.prom'"
check "agent metrics: 9 GPUs sampled, the failing query counted, nothing missing" sh -c "
    grep -q '^rankscope_agent_gpus 9$' '$WORK/agent.prom' &&
    grep -q '^rankscope_agent_nvml_missing_functions 0$' '$WORK/agent.prom' &&
    awk '/^rankscope_agent_nvml_errors_total/ { exit !(\$2 > 0) }' '$WORK/agent.prom'"
check "fleet: the capped and the faulty GPU first, the straggler in 1 of their 1 jobs" python3 -c '
import json, sys, urllib.request
get = lambda p: json.load(urllib.request.urlopen(sys.argv[1] + p))
g = get("/v1/gpus")["gpus"]
top = {x["gpu_uuid"]: x for x in g[:2]}
assert set(top) == {sys.argv[2], sys.argv[3]}, g[:3]
for x in top.values():
    assert x["jobs"] == 1 and x["straggler_jobs"] == 1 and x["summary"] == "the straggler in 1 of its 1 jobs", x
    assert 1.05 < x["mean_slowdown"] < 1.15 and x["host"] == "sim-node-000", x
assert top[sys.argv[2]]["newest_reading"]["sm_clock_mhz"] == 1410, top
assert all(x["straggler_jobs"] == 0 for x in g[2:]) and len(g) == 8, g
(h,) = get("/v1/hosts")["hosts"]
assert h["host"] == "sim-node-000" and h["jobs"] == 2 and h["straggler_jobs"] == 2 and h["ranks"] == 8, h' \
    "$HTTP" "$(uuid 1 2)" "$(uuid 2 1)"
check "rankscope fleet says it for people" sh -c "
    '$BIN/rankscope' --server '$HTTP' fleet | grep -q '^$(uuid 1 2)  the straggler in 1 of its 1 jobs, ' &&
    '$BIN/rankscope' --server '$HTTP' fleet hosts | grep -q '^sim-node-000  the straggler in 2 of its 2 jobs'"
check "gpus: a bad window is refused" sh -c "
    [ \$(curl -s -o /dev/null -w '%{http_code}' '$HTTP/v1/jobs/capped/gpus?since_ns=5') = 400 ] &&
    [ \$(curl -s -o /dev/null -w '%{http_code}' '$HTTP/v1/jobs/nosuchjob/gpus') = 404 ]"

# Busy is not efficient: with PC sampling, the memory-bound share of each rank's stall samples; the
# simulated straggler's added time is sampled as waiting on memory (sim/stalls.h), so its share is
# above its peers'. A job whose agent summarizes (windows, no intervals) still gets busy and
# tensor-core figures, from summed kernel time: at least the union the raw records give.
pcsim() { # JOB
    "$BIN/rankscope-sim" --job "$1" --seed 3 --ranks 4 --steps 150 --step-ms 20 --speed 1 \
        --slow-rank 2 --slowdown 0.3 --pc-sampling --agent "$WORK/agent.sock" --log-level warn \
        >"$WORK/$1.json"
    wait_for_records "$1" "$WORK/$1.json"
    curl -s "$HTTP/v1/jobs/$1/gpus" >"$WORK/$1.gpus"
}
pcsim rawpc
stop "$PID_agent"
start_agent --nvml-library "$FAKE" --gpu-interval-ms 100 --gpu-send-s 1 --summarize \
    --summary-window-s 1
pcsim sumpc
check "memory-bound share: from the stall samples, the straggler's above its peers'" python3 -c '
import json, sys
g = {x["rank"]: x for x in json.load(open(sys.argv[1]))["gpus"]}
m = {r: x["memory_bound"] for r, x in g.items()}
for r, x in m.items():
    assert x["stall_samples"] > 1000 and x["why"] is None, x
    assert abs(x["share"] - x["memory_samples"] / x["stall_samples"]) < 1e-6, x
for r in (0, 1, 3):  # between the GEMM mix (12% memory) and the element-wise one (64%)
    assert 0.12 < m[r]["share"] < 0.64 and m[2]["share"] > m[r]["share"] + 0.05, m
assert all(x["kernels"]["busy_from"] == "intervals" and x["kernels_why"] is None for x in g.values()), g
(c,) = [x for x in json.load(open(sys.argv[2]))["gpus"] if x["rank"] == 0]
assert c["memory_bound"]["share"] is None and c["memory_bound"]["stall_samples"] == 0, c
assert "PC sampling" in c["memory_bound"]["why"], c' "$WORK/rawpc.gpus" "$WORK/capped.gpus"
check "a summarized job: busy and tensor-core shares from its windows, summed" python3 -c '
import json, sys
raw = {x["rank"]: x for x in json.load(open(sys.argv[1]))["gpus"]}
summ = {x["rank"]: x for x in json.load(open(sys.argv[2]))["gpus"]}
assert sorted(summ) == [0, 1, 2, 3], summ
for r, x in summ.items():
    k, kr = x["kernels"], raw[r]["kernels"]
    assert k is not None and x["kernels_why"] is None, x
    assert k["busy_from"] == "summed_windows" and k["tensor_core_share"] == 0, k
    assert kr["busy_share"] - 0.02 <= k["busy_share"] <= 1, (k, kr)
    assert x["memory_bound"]["share"] is not None, x' "$WORK/rawpc.gpus" "$WORK/sumpc.gpus"
"$BIN/rankscope" --server "$HTTP" gpus rawpc >"$WORK/gpus-pc.txt" 2>&1
check "rankscope gpus shows the memory-bound share beside busy and tensor cores" sh -c "
    grep '^rank *2 ' '$WORK/gpus-pc.txt' | grep -q 'kernels busy [0-9]*%, tensor cores 0% of kernel time, memory-bound [0-9]*% of stall samples'"

# A server from before telemetry (wire schema version 4 at most) refuses the telemetry batches: the
# agent says so once and stops sending them; the job's profile reaches that server whole.
start oldserver "$TOOLS/rankscope-server-v4" --data "$WORK/olddata" --http 127.0.0.1:0 \
    --listen tcp://127.0.0.1:0 --ready-file "$WORK/old.ready"
wait_file "$WORK/old.ready" || exit 1
stop "$PID_agent"
start_agent_at "$(field "$WORK/old.ready" listen)" --nvml-library "$FAKE" --gpu-interval-ms 100 \
    --gpu-send-s 1
"$BIN/rankscope-sim" --job tooold --ranks 4 --steps 150 --step-ms 20 --speed 1 \
    --agent "$WORK/agent.sock" --log-level warn >"$WORK/tooold.json"
sleep 1.5
HTTP_NEW=$HTTP
HTTP=http://$(field "$WORK/old.ready" http)
wait_for_records tooold "$WORK/tooold.json"
check "an older server: every profile record stored" totals_match tooold "$WORK/tooold.json"
HTTP=$HTTP_NEW
cp "$WORK/agent.log" "$WORK/tooold.agentlog"
check "an older server: telemetry refused, said once, then no longer sent" sh -c "
    [ \$(grep -c 'the server refused GPU telemetry' '$WORK/tooold.agentlog') = 1 ] &&
    [ \$(grep -c 'RS-AGENT-REJECTED' '$WORK/tooold.agentlog') -le 4 ]"
stop "$PID_oldserver"

# NVML that is not there, does not start, is old, or hangs: the agent goes on.
agent_with() { # NAME OPTIONS...: restart the agent, run a small job NAME through it
    local name=$1; shift
    stop "$PID_agent"
    start_agent "$@" --gpu-interval-ms 100 --gpu-send-s 1
    "$BIN/rankscope-sim" --job "$name" --ranks 2 --steps 40 --speed 0 --agent "$WORK/agent.sock" \
        --log-level warn >"$WORK/$name.json"
    wait_for_records "$name" "$WORK/$name.json"
    cp "$WORK/agent.log" "$WORK/$name.agentlog"
}
agent_with absent --nvml-library "$WORK/no-such-libnvidia-ml.so.1"
check "NVML absent: one line says so, every record still stored" sh -c "
    [ \$(grep -c 'RS-AGENT-NVML' '$WORK/absent.agentlog') = 1 ] &&
    grep -q 'no GPU telemetry: .*cannot be loaded' '$WORK/absent.agentlog'"
check "NVML absent: records" totals_match absent "$WORK/absent.json"
cp "$FAKE_NVML_SCRIPT" "$WORK/nvml.good"
echo "init_error 9" >>"$FAKE_NVML_SCRIPT"
agent_with noinit --nvml-library "$FAKE"
check "NVML fails to initialize: said once (with NVML's reason), records stored" sh -c "
    grep -q 'no GPU telemetry: .*does not initialize (nvmlInit: fake NVML error 9)' '$WORK/noinit.agentlog'"
check "NVML fails to initialize: records" totals_match noinit "$WORK/noinit.json"
cp "$WORK/nvml.good" "$FAKE_NVML_SCRIPT"
agent_with old --nvml-library "$FAKE_OLD" --metrics-file "$WORK/old.prom" --metrics-s 1
sleep 1.5
check "old NVML: renamed functions found by their old names, missing ones counted" sh -c "
    grep -q 'RS-AGENT-NVML GPU telemetry from .*: 9 GPUs every 100 ms (3 NVML functions missing)' '$WORK/old.agentlog' &&
    grep -q '^rankscope_agent_gpus 9$' '$WORK/old.prom'"
# the previous agent stopped first: its sampler, reading the script too, would be in a slow call
# and its stop would wait for it (up to 2 s) inside the timed interval
stop "$PID_agent"
PID_agent=
echo "sleep nvmlDeviceGetPowerUsage 3000" >>"$FAKE_NVML_SCRIPT"
start_ns=$(date +%s%N)
agent_with hung --nvml-library "$FAKE"
check "NVML hangs 3 s per call: the job's records arrive anyway, well before NVML answers twice" sh -c "
    [ \$(( ($(date +%s%N) - $start_ns) / 1000000 )) -lt 5500 ]"
check "NVML hangs: records" totals_match hung "$WORK/hung.json"

# Rollups: with the agent stopped (no more readings), the capped job's answer over a fixed range;
# then a server that keeps 1 s raw folds every reading of these idle jobs into 60 s windows, and
# the same range answers the same NVML figures from the windows.
stop "$PID_agent"
RANGE="since_ns=1&until_ns=$(python3 -c 'import time; print(time.time_ns() + 3600 * 10**9)')"
curl -s "$HTTP/v1/jobs/capped/gpus?$RANGE" >"$WORK/capped.raw.gpus"
stop "$PID_server"
start_server --raw-retention-s 1 --maintenance-s 1
for _ in $(seq 100); do grep -q RS-ROLLUP-GPU "$WORK/server.log" && break; sleep 0.1; done
sleep 1 # a second pass: nothing left raw
"$BIN/rankscope-server" --check --data "$WORK/data" >"$WORK/rollup.check"
check "rollup: every reading folded into GPU windows, none left raw, the store consistent" sh -c "
    grep -q RS-ROLLUP-GPU '$WORK/server.log' && grep -q '^check: consistent' '$WORK/rollup.check' &&
    grep -q '^check: GPU telemetry rollups: [0-9]* windows of [0-9]* readings' '$WORK/rollup.check' &&
    ! grep -q '^check: GPU telemetry: ' '$WORK/rollup.check'"
curl -s "$HTTP/v1/jobs/capped/gpus?$RANGE" >"$WORK/capped.rolled.gpus"
check "rollup: the same NVML figures from the windows as from the readings" python3 -c '
import json, sys
a, b = (json.load(open(p))["gpus"] for p in sys.argv[1:3])
assert len(a) == len(b) == 4, (a, b)
for x, y in zip(a, b):
    for k in ("kernels", "kernels_why", "memory_bound"):  # from kernel records: rolled up too
        x.pop(k), y.pop(k)
    assert x["samples"] >= 20 and x == y, (x, y)' "$WORK/capped.raw.gpus" "$WORK/capped.rolled.gpus"
finish
