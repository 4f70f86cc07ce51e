"""Time to detect a straggler in streaming mode (issue 5: <= 10 s), with the server's defaults.

For each setting (ranks x fault x seed x step time) a simulated job runs in real time (--speed 1)
through agent and server; the fault starts at step 60. A scheduler-like poller asks
GET /v1/jobs/{job}/stragglers every 250 ms; the time to detect is the verdict's detected_ns (when
the server's continuous evaluation first raised it) minus the fault's onset (the simulator's
onset_ns). False verdicts (any other rank) are counted.

usage: python3 tests/bench/detect_latency.py [--ranks 8,32,128] [--seeds 3] [--step-ms 34]
"""
import argparse
import json
import os
import statistics
import subprocess
import time

from rsbench import Daemons

p = argparse.ArgumentParser()
p.add_argument("--ranks", default="8,32,128")
p.add_argument("--seeds", type=int, default=3)
p.add_argument("--step-ms", default="34")
p.add_argument("--after", type=int, default=150, help="steps simulated after the onset")
p.add_argument("--build", default=os.environ.get("BUILD", "build"))
a = p.parse_args()
BIN = os.path.join(a.build, "bin")
ONSET = 60
FAULTS = [("gpu 5%", ["--slowdown", "0.05"]), ("gpu 10%", ["--slowdown", "0.10"]),
          ("gpu 30%", ["--slowdown", "0.30"]), ("host 5 ms", ["--stall-ms", "5"])]

daemons = Daemons(BIN, [], "rankscope-detect.")
get = daemons.get

rows = []
try:
    for step_ms in [float(x) for x in a.step_ms.split(",")]:
        for n in [int(x) for x in a.ranks.split(",")]:
            for name, args in FAULTS:
                lags, steps_lag, missed, false = [], [], 0, 0
                for seed in range(1, a.seeds + 1):
                    bad = (seed * 7) % n
                    job = f"detect-{n}-{int(step_ms)}-{name.replace(' ', '').replace('%', '')}-{seed}"
                    fault = (["--slow-rank", str(bad)] if name.startswith("gpu")
                             else ["--host-stall", str(bad)]) + args
                    sim = subprocess.Popen(
                        [f"{BIN}/rankscope-sim", "--job", job, "--ranks", str(n), "--steps",
                         str(ONSET + a.after), "--step-ms", str(step_ms), "--speed", "1",
                         "--seed", str(seed), "--onset-step", str(ONSET), "--agent",
                         daemons.socket, "--log-level", "warn"] + fault,
                        stdout=subprocess.PIPE, text=True)
                    detected, ended = None, None
                    while detected is None:
                        if ended is None and sim.poll() is not None:
                            ended = time.time()  # the server's evaluations go on a little
                        done = ended is not None and time.time() - ended > 5
                        try:
                            d = get(f"/v1/jobs/{job}/stragglers")
                            for v in d["stragglers"]:
                                if v["rank"] != bad:
                                    false += 1
                                elif v.get("detected_ns"):
                                    detected = v["detected_ns"]
                        except Exception:
                            pass
                        if done:
                            break
                        time.sleep(0.25)
                    out = json.loads(sim.communicate()[0])
                    if detected is None:
                        missed += 1
                        continue
                    lag = (detected - out["onset_ns"]) / 1e9
                    lags.append(lag)
                    steps_lag.append(lag * 1000 / step_ms)
                row = (step_ms, n, name, lags, steps_lag, missed, false)
                rows.append(row)
                med = f"{statistics.median(lags):.1f}" if lags else "-"
                mx = f"{max(lags):.1f}" if lags else "-"
                print(f"step {step_ms:5.0f} ms  ranks {n:4d}  {name:9s}  detected {len(lags)}/"
                      f"{a.seeds}  time to detect median {med} s, max {mx} s "
                      f"(~{statistics.median(steps_lag) if steps_lag else 0:.0f} steps)"
                      f"  false verdicts {false}", flush=True)
finally:
    daemons.stop()
all_lags = [x for r in rows for x in r[3]]
if all_lags:
    print(f"summary: {len(all_lags)} detections, time to detect median "
          f"{statistics.median(all_lags):.1f} s, max {max(all_lags):.1f} s; missed "
          f"{sum(r[5] for r in rows)}; false verdicts {sum(r[6] for r in rows)}")
