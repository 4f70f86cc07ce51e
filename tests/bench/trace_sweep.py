#!/usr/bin/env python3
"""Straggler accuracy of `rankscope analyze` on traces it did not design (issue 22).

For each setting (ranks x fault x bucket layout x step markers x seed) tests/bench/ddp_tracegen.py
writes a job's PyTorch-profiler traces and truth.json from the physics of DDP; `rankscope analyze
--json` judges them; the verdicts are scored against the truth:
  recall      slow ranks named / slow ranks expected (faults with straggler_expected)
  false       verdicts naming a rank that is not slow (every fault, fault-free and spikes too)
  cause       named slow ranks whose cause is the expected one
  onset error |verdict onset - true onset| in steps (with markers: ProfilerStep numbers)
Prints one row per setting (sums over seeds) and writes the rows as JSON with --json-out.

usage: python3 tests/bench/trace_sweep.py [--ranks 8,32] [--seeds 3] [--steps 60]
           [--faults none,gpu5,gpu10,...] [--layouts interleaved,after] [--markers yes,no]
           [--build build] [--work /tmp/rs-sweep] [--json-out FILE]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# name -> generator --fault arguments ({r}: the slow rank(s), {o}: onset step)
FAULTS = {
    "none": [],
    "gpu3": ["slow_gpu:ranks={r},factor=1.03,onset={o}"],
    "gpu5": ["slow_gpu:ranks={r},factor=1.05,onset={o}"],
    "gpu10": ["slow_gpu:ranks={r},factor=1.10,onset={o}"],
    "ramp10": ["ramp:ranks={r},factor=1.10,ramp=10,onset={o}"],
    "two-slow": ["slow_gpu:ranks={r2},factor=1.08,onset={o}"],
    "extra": ["extra_work:ranks={r},extra_ms=3,n=3,onset={o}"],
    "host5": ["host_stall:ranks={r},stall_ms=5,onset={o}"],
    "intermittent": ["intermittent:ranks={r},factor=1.5,period=4,duty=0.25,onset={o}"],
    "spikes": ["spikes:prob=0.02,factor=1.4"],
}


def run_setting(a, ranks, fault, layout, markers, seed):
    out = os.path.join(a.work, "job")
    shutil.rmtree(out, ignore_errors=True)
    slow = ranks // 2 - 1 if ranks > 2 else 1
    onset = a.steps // 8  # the rule needs its 2 newest windows (30 steps each) slow
    fault_args = []
    for f in FAULTS[fault]:
        fault_args += ["--fault", f.format(r=slow, r2="%d/%d" % (slow, ranks - 1), o=onset)]
    gen = [sys.executable, os.path.join(HERE, "ddp_tracegen.py"), "-o", out, "--ranks", str(ranks),
           "--steps", str(a.steps), "--seed", str(seed), "--bucket-mode", layout, "-q"]
    if markers == "no":
        gen.append("--no-step-markers")
    subprocess.run(gen + fault_args, check=True)
    truth = json.load(open(os.path.join(out, "truth.json")))
    t0 = time.time()
    p = subprocess.run([os.path.join(a.build, "bin", "rankscope"), "analyze", "--json",
                        "--job", "sweep", out], capture_output=True, text=True)
    seconds = time.time() - t0
    if p.returncode != 0:
        return {"error": p.stderr.strip()[-300:]}
    d = json.loads(p.stdout)
    verdicts = d["stragglers"].get("stragglers", [])
    expected, causes, onsets = set(), {}, {}
    for f in truth["faults"]:
        if f.get("straggler_expected"):
            for r in f["slow_ranks"]:
                expected.add(r)
                causes[r] = f["expected_cause"]
                onsets[r] = f["onset_profiler_step"] if markers == "yes" else f["onset_step"]
    named = {v["rank"]: v for v in verdicts}
    hits = expected & set(named)
    onset_err = []
    for r in hits:
        o = (named[r].get("onset") or {}).get("step")
        if o is None:
            o = named[r].get("since_step")
        if o is not None and r in onsets:
            onset_err.append(abs(o - onsets[r]))
    return {
        "expected": len(expected), "named": len(hits),
        "false": len(set(named) - expected),
        "cause_right": sum(1 for r in hits if named[r].get("cause") == causes[r]),
        "onset_err": onset_err, "seconds": seconds,
        "enough_data": d["stragglers"].get("enough_data", True),
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--ranks", default="8,32")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--faults", default=",".join(FAULTS))
    p.add_argument("--layouts", default="interleaved,after")
    p.add_argument("--markers", default="yes,no")
    p.add_argument("--build", default=os.environ.get("BUILD", os.path.join(ROOT, "build")))
    p.add_argument("--work", default="/tmp/rs-sweep")
    p.add_argument("--json-out")
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    rows = []
    print("| ranks | fault | buckets | markers | recall | false verdicts | cause right | "
          "onset error (steps, max) | analyze s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for ranks in [int(x) for x in a.ranks.split(",")]:
        for fault in a.faults.split(","):
            for layout in a.layouts.split(","):
                for markers in a.markers.split(","):
                    agg = {"expected": 0, "named": 0, "false": 0, "cause_right": 0,
                           "onset_err": [], "seconds": 0.0, "errors": 0}
                    for seed in range(1, a.seeds + 1):
                        r = run_setting(a, ranks, fault, layout, markers, seed)
                        if "error" in r:
                            agg["errors"] += 1
                            print("  error: %s" % r["error"], file=sys.stderr)
                            continue
                        for k in ("expected", "named", "false", "cause_right", "seconds"):
                            agg[k] += r[k]
                        agg["onset_err"] += r["onset_err"]
                    row = dict(ranks=ranks, fault=fault, layout=layout, markers=markers,
                               seeds=a.seeds, **agg)
                    rows.append(row)
                    recall = ("%d/%d" % (agg["named"], agg["expected"])) if agg["expected"] else "-"
                    cause = ("%d/%d" % (agg["cause_right"], agg["named"])) if agg["named"] else "-"
                    onset = ("%d" % max(agg["onset_err"])) if agg["onset_err"] else "-"
                    print("| %d | %s | %s | %s | %s | %d | %s | %s | %.1f |%s" % (
                        ranks, fault, layout, markers, recall, agg["false"], cause, onset,
                        agg["seconds"] / max(1, a.seeds - agg["errors"]),
                        " %d errors" % agg["errors"] if agg["errors"] else ""), flush=True)
    if a.json_out:
        json.dump(rows, open(a.json_out, "w"), indent=1)
    shutil.rmtree(a.work, ignore_errors=True)


if __name__ == "__main__":
    main()
