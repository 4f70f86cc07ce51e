"""Reads (never sets) the GPU's clocks and the CPUs' steal time while a measurement runs, so
that the spread of step times can be laid against them (tests/gpu/noise.sh). One JSON line every
--period-ms to stdout: t_ns (CLOCK_REALTIME), the SM and memory clocks (MHz), power (W),
utilization (%), temperature (C), NVML's active clock-event reasons (bit mask), and per CPU in
--cpus the steal and busy jiffies since start. Ends on SIGTERM."""
import argparse
import json
import signal
import sys
import time

import pynvml

p = argparse.ArgumentParser(description=__doc__)
p.add_argument("--period-ms", type=float, default=100)
p.add_argument("--cpus", default="", help="comma-separated CPU numbers whose steal to read")
args = p.parse_args()
cpus = [int(c) for c in args.cpus.split(",") if c]
stop = False


def on_term(*_):
    global stop
    stop = True


signal.signal(signal.SIGTERM, on_term)


def cpu_times():
    out = {}
    for line in open("/proc/stat"):
        f = line.split()
        if f[0].startswith("cpu") and f[0] != "cpu" and int(f[0][3:]) in cpus:
            v = [int(x) for x in f[1:]]
            # user nice system idle iowait irq softirq steal
            out[int(f[0][3:])] = {"busy": v[0] + v[1] + v[2] + v[5] + v[6], "steal": v[7]}
    return out


pynvml.nvmlInit()
h = pynvml.nvmlDeviceGetHandleByIndex(0)
base = cpu_times()
while not stop:
    t = time.time_ns()
    row = {"t_ns": t}
    try:
        row["sm_mhz"] = pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM)
        row["mem_mhz"] = pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_MEM)
        row["power_w"] = pynvml.nvmlDeviceGetPowerUsage(h) / 1000
        row["util"] = pynvml.nvmlDeviceGetUtilizationRates(h).gpu
        row["temp_c"] = pynvml.nvmlDeviceGetTemperature(h, pynvml.NVML_TEMPERATURE_GPU)
        row["reasons"] = pynvml.nvmlDeviceGetCurrentClocksEventReasons(h)
    except pynvml.NVMLError as e:
        row["error"] = str(e)
    now = cpu_times()
    row["cpu"] = {c: {k: now[c][k] - base[c][k] for k in now[c]} for c in now}
    print(json.dumps(row), flush=True)
    time.sleep(args.period_ms / 1000)
