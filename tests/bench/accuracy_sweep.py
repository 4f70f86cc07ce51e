"""Straggler accuracy sweep with the simulator (issue 5), batch mode.

For each setting (ranks x fault x seed) a simulated job runs through agent and server; the
verdicts of GET /v1/jobs/{job}/stragglers are compared with the injected fault. Reports recall,
precision and false verdicts per setting, and the cause the verdicts named. Jobs are simulated as
fast as the agent takes them (--max-rate records/s; none may be dropped). Time-to-detect in
streaming mode: tests/bench/detect_latency.py.

usage: python3 tests/bench/accuracy_sweep.py [--ranks 2,8,32] [--seeds 3] [--steps 150]
                                             [--max-rate 400000] [--layouts interleaved,after]
                                             [--markers yes,no] [--faults "gpu 3%,host 5 ms"]
--layouts after: the simulator's --buckets-after (AllReduce buckets back to back after the
backward pass); --markers no: --no-step-markers (the server infers steps). The since error is
|since_step - the onset step| of the verdicts naming the slow rank.
"""
import argparse
import itertools
import json
import os
import subprocess
import sys
import time

from rsbench import Daemons

p = argparse.ArgumentParser()
p.add_argument("--ranks", default="2,8,32")
p.add_argument("--seeds", type=int, default=3)
p.add_argument("--steps", type=int, default=150)
p.add_argument("--max-rate", type=int, default=400000)
p.add_argument("--build", default=os.environ.get("BUILD", "build"))
p.add_argument("--layouts", default="interleaved")
p.add_argument("--markers", default="yes")
p.add_argument("--faults", default="")
a = p.parse_args()
BIN = os.path.join(a.build, "bin")
FAULTS = [("none", []), ("gpu 2%", ["--slowdown", "0.02"]), ("gpu 3%", ["--slowdown", "0.03"]),
          ("gpu 5%", ["--slowdown", "0.05"]), ("gpu 10%", ["--slowdown", "0.10"]),
          ("gpu 30%", ["--slowdown", "0.30"]), ("host 5 ms", ["--stall-ms", "5"])]

if a.faults:
    FAULTS = [f for f in FAULTS if f[0] in a.faults.split(",")]
daemons = Daemons(BIN, ["--evaluate-ms", "0"], "rankscope-sweep.")
get = daemons.get

rows = []
try:
    for layout, markers, n in itertools.product(a.layouts.split(","), a.markers.split(","),
                                                [int(x) for x in a.ranks.split(",")]):
        for name, args in FAULTS:
            tp = fp = fn = 0
            causes = {}
            since_err = []
            for seed in range(1, a.seeds + 1):
                bad = (seed * 7) % n
                job = (f"sweep-{n}-{name.replace(' ', '').replace('%', 'pct')}-{seed}-{layout}"
                       f"-{markers}")
                extra = (["--buckets-after"] if layout == "after" else []) + \
                    (["--no-step-markers"] if markers == "no" else [])
                fault = []
                if name.startswith("gpu"):
                    fault = ["--slow-rank", str(bad)] + args
                elif name.startswith("host"):
                    fault = ["--host-stall", str(bad)] + args
                out = subprocess.run(
                    [f"{BIN}/rankscope-sim", "--job", job, "--ranks", str(n), "--steps",
                     str(a.steps), "--speed", "0", "--seed", str(seed), "--onset-step",
                     str(a.steps // 3), "--agent", daemons.socket, "--log-level", "warn",
                     "--max-rate", str(a.max_rate)]
                    + fault + extra, check=True, capture_output=True, text=True).stdout
                if json.loads(out)["dropped_records"]:
                    print(f"warning: {job}: the simulator dropped "
                          f"{json.loads(out)['dropped_records']} records (lower --max-rate)")
                want = json.loads(out)["sent"]["steps"]
                prev = None
                for _ in range(200):  # until every step record is stored
                    try:
                        ranks = get(f"/v1/jobs/{job}/ranks")["ranks"]
                        if want and sum(r["steps"] for r in ranks) >= want:
                            break
                        # without step records: until the ranks' records stop changing
                        if not want and ranks == prev and len(ranks) == n:
                            break
                        prev = ranks
                    except Exception:
                        pass
                    time.sleep(0.05 if want else 0.5)
                verdicts = get(f"/v1/jobs/{job}/stragglers")["stragglers"]
                flagged = {v["rank"]: v["cause"] for v in verdicts}
                if fault:
                    if bad in flagged:
                        since = [v["since_step"] for v in verdicts if v["rank"] == bad][0]
                        since_err.append(abs(since - a.steps // 3))
                        tp += 1
                        causes[flagged[bad]] = causes.get(flagged[bad], 0) + 1
                    else:
                        fn += 1
                fp += sum(1 for r in flagged if not fault or r != bad)
            recall = tp / (tp + fn) if tp + fn else None
            precision = tp / (tp + fp) if tp + fp else None
            rows.append((n, name, a.seeds, recall, precision, fp, causes))
            print(f"{layout:11s} markers {markers:3s} ranks {n:4d}  {name:10s}  recall "
                  f"{'-' if recall is None else f'{recall:.2f}':>4}"
                  f"  precision {'-' if precision is None else f'{precision:.2f}':>4}"
                  f"  false verdicts {fp}  causes {causes}  since error (steps, max) "
                  f"{max(since_err) if since_err else '-'}", flush=True)
finally:
    daemons.stop()
fault_free_fp = sum(r[5] for r in rows if r[1] == "none")
print(f"summary: false verdicts on fault-free runs: {fault_free_fp}; "
      f"recall for slowdowns >= 5%: "
      f"{min((r[3] for r in rows if r[1] in ('gpu 5%', 'gpu 10%', 'gpu 30%')), default=0):.2f} (min)")
