#!/usr/bin/env bash
# GPU telemetry on a real GPU (issue 26), any number of GPUs: (1) one reading of each GPU through
# the agent's NVML code (rs-nvml-read, after 200 timed readings) against `nvidia-smi -q -x` taken
# right after (nvml_compare.py); (2) the agent sampling every second beside a 1-rank training job
# with the collector: the readings filed under the job's rank (GET /v1/jobs/{job}/gpus,
# `rankscope gpus`, the /metrics gauges), and the sampling thread's CPU time per GPU reading from
# the agent's counters. Reads only: no GPU setting is changed. Writes $OUT/nvml-summary.txt last.
. "$(dirname "$0")/common.sh"
export LD_LIBRARY_PATH=$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -1; } \
    >"$OUT/nvml-env.txt" 2>&1
"$B/bin/rs-nvml-read" libnvidia-ml.so.1 200 >"$W/read.json" 2>>"$OUT/nvml-env.txt"
nvidia-smi -q -x >"$W/smi.xml"
nvidia-smi -q >"$OUT/nvidia-smi-q.txt"
cp "$W/read.json" "$OUT/nvml-read.json"
python3 tests/gpu/nvml_compare.py "$W/read.json" "$W/smi.xml" >"$OUT/nvml-summary.txt" 2>&1
AGENT_OPTS="--gpu-interval-ms 1000 --gpu-send-s 1 --metrics-file $W/agent.prom --metrics-s 1"
daemons_up
start=$(date +%s%N)
NPROC=1 TRAIN_TIMEOUT=90 train gpu-nvml --collector --steps "${STEPS:-2000}" --nvtx-steps
echo "info    training job exit $? after $(( ($(date +%s%N) - start) / 1000000 )) ms" >>"$OUT/nvml-summary.txt"
sleep 3 # the last readings (sent every second) and the agent's counters (rewritten every second)
get /v1/jobs/gpu-nvml/gpus >"$W/gpus.json" 2>&1
LD_LIBRARY_PATH=$B/lib "$B/bin/rankscope" --server "$HTTP" gpus gpu-nvml >"$W/gpus.txt" 2>&1
get /metrics | grep '^rankscope_gpu_' >"$W/metrics.txt" 2>&1
cp "$W/agent.prom" "$W/agent-metrics.txt"
daemons_down
python3 - "$W/gpus.json" "$W/agent.prom" >>"$OUT/nvml-summary.txt" <<'PY'
import json, sys
g = json.load(open(sys.argv[1]))["gpus"]
m = {l.split()[0]: float(l.split()[1]) for l in open(sys.argv[2]) if l[0] != "#"}
for x in g:
    print("info    job gpu-nvml rank %d on %s: %d readings, SM %s/%s MHz, %s W, %s C, util %s%%" % (
        x["rank"], x["gpu_uuid"], x["samples"], x["clocks"]["sm_mhz"], x["clocks"]["sm_max_mhz"],
        x["power"]["watts"], x["temperature"]["max_c"], x["utilization"]["gpu_pct"]))
ok = len(g) == 1 and g[0]["samples"] > 0 and g[0]["gpu_uuid"].startswith("GPU-")
print("%s  the job's rank has the readings of its GPU" % ("agree " if ok else "DIFFER"))
n, cpu = m["rankscope_agent_gpu_samples_total"], m["rankscope_agent_gpu_sampling_cpu_seconds_total"] * 1e9
print("info    agent: %d GPUs, %d readings, sampling thread %.1f ms CPU: %.1f us CPU per GPU "
      "reading = %.4f%% of one core per GPU at 1 reading/s; %d NVML errors, %d unsupported, "
      "%d functions missing" % (m["rankscope_agent_gpus"], n, cpu / 1e6, cpu / 1e3 / max(n, 1),
      cpu / 1e9 / max(n, 1) * 100, m["rankscope_agent_nvml_errors_total"],
      m["rankscope_agent_nvml_unsupported_total"], m["rankscope_agent_nvml_missing_functions"]))
PY
tar -C "$W" -czf "$OUT/nvml-results.tar.gz" gpus.json gpus.txt metrics.txt agent-metrics.txt \
    agent.log server.log gpu-nvml.log 2>/dev/null
cat "$OUT/nvml-summary.txt"
